import IfMeterCore

/// What one journal append holds (docs/CONFIG.md, `fold_interval`): the meter's deltas since the last append and where each counted epoch got to, so that a daemon
/// killed between two folds into the buckets resumes exactly from the last append. Between
/// folds nothing but traffic is journalled: any event, record or state makes the next save a
/// full one.
///
/// Encoded compactly (LEB128 integers, IEEE doubles), because it is written every
/// `save_interval`; read back from a file a crash may have cut or anyone with the state
/// directory may have edited, so decoding checks every length and count.
public struct JournalRecord: Hashable, Sendable {
    /// Where an epoch got to: its raw counters last applied, and when.
    public struct Progress: Hashable, Sendable {
        public var namespace: NamespaceID
        public var ifindex: Int32
        public var generation: Int
        public var last: Traffic
        public var lastInstant: MeterInstant

        public init(namespace: NamespaceID, ifindex: Int32, generation: Int, last: Traffic, lastInstant: MeterInstant) {
            (self.namespace, self.ifindex, self.generation, self.last, self.lastInstant) = (namespace, ifindex, generation, last, lastInstant)
        }
    }

    /// The boot every delta's and progress's epoch belongs to.
    public var bootID: String
    public var deltas: [MeterDelta]
    public var progress: [Progress]
    public var lastInstant: MeterInstant?
    public var clockAnchor: MeterInstant?

    public init(bootID: String, deltas: [MeterDelta], progress: [Progress], lastInstant: MeterInstant?, clockAnchor: MeterInstant?) {
        (self.bootID, self.deltas, self.progress, self.lastInstant, self.clockAnchor) = (bootID, deltas, progress, lastInstant, clockAnchor)
    }

    /// Longest name or boot id a record holds: a subject's name is far shorter.
    public static let maximumNameBytes = 1024
    static let version: UInt8 = 1
    /// A delta's flags byte with this bit, or a progress's instant marker of this value: its
    /// time is the record's ``lastInstant`` (no meter flag uses the bit).
    static let atLastInstant: UInt8 = 0x80

    /// Why bytes are not a record.
    public struct DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The record's bytes.
    public func encoded() -> [UInt8] {
        var out = JournalBytes()
        out.byte(Self.version)
        out.string(bootID)
        out.instant(lastInstant)
        out.instant(clockAnchor)
        out.unsigned(UInt64(deltas.count))
        for delta in deltas {
            out.string(delta.name)
            out.unsigned(UInt64(delta.namespace.rawValue))
            out.signed(Int64(delta.ifindex))
            out.signed(Int64(delta.epoch.ifindex))
            out.unsigned(UInt64(delta.epoch.generation))
            out.double(delta.epoch.since)
            out.traffic(delta.traffic)
            // Most deltas are the last sample's: its time is the record's, said once.
            if let lastInstant, delta.at == lastInstant.wall {
                out.byte(delta.flags.rawValue | Self.atLastInstant)
            } else {
                out.byte(delta.flags.rawValue)
                out.double(delta.at)
            }
        }
        out.unsigned(UInt64(progress.count))
        for entry in progress {
            out.unsigned(UInt64(entry.namespace.rawValue))
            out.signed(Int64(entry.ifindex))
            out.unsigned(UInt64(entry.generation))
            out.traffic(entry.last)
            if entry.lastInstant == lastInstant {
                out.byte(Self.atLastInstant)
            } else {
                out.instant(entry.lastInstant)
            }
        }
        return out.bytes
    }

    /// Reads ``encoded()``'s bytes, all of them; anything else is a ``DecodingError``.
    public init(decoding bytes: ArraySlice<UInt8>) throws(DecodingError) {
        var input = JournalReader(bytes)
        guard try input.byte() == Self.version else { throw DecodingError(description: "unknown record version") }
        bootID = try input.string()
        lastInstant = try input.optionalInstant()
        clockAnchor = try input.optionalInstant()
        // Each delta takes at least 18 bytes, each progress 8: a count past that is a lie.
        let deltaCount = try input.count(minimumBytesEach: 18)
        deltas = []
        deltas.reserveCapacity(deltaCount)
        for _ in 0..<deltaCount {
            let name = try input.string()
            let namespace = NamespaceID(rawValue: try input.narrow(try input.unsigned(), as: UInt32.self))
            let ifindex = try input.narrow(try input.signed(), as: Int32.self)
            let epochIfindex = try input.narrow(try input.signed(), as: Int32.self)
            let generation = try input.narrow(try input.unsigned(), as: Int.self)
            let since = try input.double()
            let traffic = try input.traffic()
            let flagsByte = try input.byte()
            let at: Double
            if flagsByte & Self.atLastInstant != 0 {
                guard let lastInstant else { throw DecodingError(description: "a delta at a record's instant it does not have") }
                at = lastInstant.wall
            } else {
                at = try input.double()
            }
            let flags = MeterDelta.Flags(rawValue: flagsByte & ~Self.atLastInstant)
            deltas.append(MeterDelta(name: name, namespace: namespace, ifindex: ifindex,
                                     epoch: Epoch(bootID: bootID, ifindex: epochIfindex, generation: generation, since: since),
                                     traffic: traffic, at: at, flags: flags))
        }
        let progressCount = try input.count(minimumBytesEach: 8)
        progress = []
        progress.reserveCapacity(progressCount)
        for _ in 0..<progressCount {
            let namespace = NamespaceID(rawValue: try input.narrow(try input.unsigned(), as: UInt32.self))
            let ifindex = try input.narrow(try input.signed(), as: Int32.self)
            let generation = try input.narrow(try input.unsigned(), as: Int.self)
            let last = try input.traffic()
            let instant: MeterInstant
            if try input.peek() == Self.atLastInstant {
                _ = try input.byte()
                guard let lastInstant else { throw DecodingError(description: "an epoch at a record's instant it does not have") }
                instant = lastInstant
            } else {
                guard let read = try input.optionalInstant() else { throw DecodingError(description: "an epoch without its instant") }
                instant = read
            }
            progress.append(Progress(namespace: namespace, ifindex: ifindex, generation: generation, last: last, lastInstant: instant))
        }
        guard input.isAtEnd else { throw DecodingError(description: "bytes after the record") }
    }
}

/// Builds a record's bytes.
struct JournalBytes {
    var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    /// LEB128.
    mutating func unsigned(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// Zigzag, then LEB128.
    mutating func signed(_ value: Int64) { unsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    mutating func double(_ value: Double) {
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// A name of at most ``JournalRecord/maximumNameBytes`` (the service journals no other).
    mutating func string(_ value: String) {
        unsigned(UInt64(value.utf8.count))
        bytes.append(contentsOf: value.utf8)
    }

    mutating func traffic(_ value: Traffic) {
        for counter in [value.rxBytes, value.txBytes, value.rxPackets, value.txPackets] { unsigned(counter) }
    }

    mutating func instant(_ value: MeterInstant?) {
        guard let value else { return byte(0) }
        byte(1)
        double(value.wall)
        unsigned(value.sinceBootNanoseconds)
    }
}

/// Reads a record's bytes, never past their end.
struct JournalReader {
    private let bytes: ArraySlice<UInt8>
    private var index: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    var isAtEnd: Bool { index == bytes.endIndex }

    private static func fail(_ what: String) -> JournalRecord.DecodingError { JournalRecord.DecodingError(description: what) }

    func peek() throws(JournalRecord.DecodingError) -> UInt8 {
        guard index < bytes.endIndex else { throw Self.fail("cut short") }
        return bytes[index]
    }

    mutating func byte() throws(JournalRecord.DecodingError) -> UInt8 {
        guard index < bytes.endIndex else { throw Self.fail("cut short") }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func unsigned() throws(JournalRecord.DecodingError) -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: UInt64(0), through: 63, by: 7) {
            let next = try byte()
            let bits = UInt64(next & 0x7F)
            // The tenth byte may hold one bit only.
            guard shift < 63 || bits <= 1 else { throw Self.fail("an integer past 64 bits") }
            value |= bits << shift
            if next & 0x80 == 0 { return value }
        }
        throw Self.fail("an integer past 64 bits")
    }

    mutating func signed() throws(JournalRecord.DecodingError) -> Int64 {
        let raw = try unsigned()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    mutating func narrow<T: FixedWidthInteger>(_ value: some FixedWidthInteger, as: T.Type) throws(JournalRecord.DecodingError) -> T {
        guard let narrowed = T(exactly: value) else { throw Self.fail("a value out of range") }
        return narrowed
    }

    mutating func double() throws(JournalRecord.DecodingError) -> Double {
        guard bytes.endIndex - index >= 8 else { throw Self.fail("cut short") }
        var bits: UInt64 = 0
        for offset in 0..<8 { bits |= UInt64(bytes[index + offset]) << (8 * UInt64(offset)) }
        index += 8
        let value = Double(bitPattern: bits)
        guard value.isFinite else { throw Self.fail("a time that is not a number") }
        return value
    }

    mutating func string() throws(JournalRecord.DecodingError) -> String {
        let length = try unsigned()
        guard length <= UInt64(JournalRecord.maximumNameBytes), UInt64(bytes.endIndex - index) >= length else {
            throw Self.fail("a name too long or cut short")
        }
        let end = index + Int(length)
        defer { index = end }
        guard let text = String(validating: bytes[index..<end], as: UTF8.self) else { throw Self.fail("a name that is not UTF-8") }
        return text
    }

    mutating func traffic() throws(JournalRecord.DecodingError) -> Traffic {
        Traffic(rxBytes: try unsigned(), txBytes: try unsigned(), rxPackets: try unsigned(), txPackets: try unsigned())
    }

    mutating func optionalInstant() throws(JournalRecord.DecodingError) -> MeterInstant? {
        switch try byte() {
        case 0: return nil
        case 1: return MeterInstant(wall: try double(), sinceBootNanoseconds: try unsigned())
        default: throw Self.fail("an instant's marker is neither 0 nor 1")
        }
    }

    /// A count of items that each take at least `minimumBytesEach`, checked against what is left.
    mutating func count(minimumBytesEach: Int) throws(JournalRecord.DecodingError) -> Int {
        let value = try unsigned()
        guard value <= UInt64(bytes.endIndex - index) / UInt64(minimumBytesEach) else { throw Self.fail("a count past the record's end") }
        return Int(value)
    }
}
