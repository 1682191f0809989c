import CAppCounters
import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// The programs' `local_prefixes` trie and its `scope_ready` flag, open writable through their
/// pins, which the daemon's user owns (docs/SCOPES.md). The daemon is their only writer.
/// Not for two threads at once.
public final class LocalPrefixMap {
    public let pinDirectory: String
    private var maps = ifmeter_scope_maps()

    /// What one ``write(_:)`` changed.
    public struct Change: Equatable, Sendable {
        public var added: Int
        public var removed: Int

        public init(added: Int, removed: Int) {
            self.added = added
            self.removed = removed
        }
    }

    public init(pinDirectory: String) throws(KernelError) {
        self.pinDirectory = pinDirectory
        let result = ifmeter_scopes_open(pinDirectory, 1, &maps)
        guard result == 0 else {
            throw KernelError(call: "open local_prefixes in \(pinDirectory) for writing", errno: -result,
                              detail: ScopeCounterMaps.hint(-result))
        }
    }

    deinit { ifmeter_scopes_close(&maps) }

    /// The largest number of prefixes the map holds.
    public var capacity: Int { Int(maps.prefixes_max_entries) }

    /// Every prefix the map holds now.
    public func read() throws(KernelError) -> Set<LocalPrefix> {
        var keys = [ifmeter_prefix_key](repeating: ifmeter_prefix_key(), count: capacity)
        let count = keys.withUnsafeMutableBufferPointer { ifmeter_prefixes_read(&maps, $0.baseAddress, $0.count) }
        guard count >= 0 else { throw KernelError(call: "read local_prefixes in \(pinDirectory)", errno: -count) }
        var prefixes = Set<LocalPrefix>()
        for key in keys.prefix(Int(count)) {
            let bytes = withUnsafeBytes(of: key.addr) { Array($0) }
            // 16 bytes and a length ≤ 128, or the kernel would not hold it; checked all the same.
            if let prefix = LocalPrefix(bytes: bytes, length: Int(key.prefixlen)) { prefixes.insert(prefix) }
        }
        return prefixes
    }

    /// Makes the map hold `prefixes`, each once, as a difference from what it holds (adds before
    /// removals, so no address held in both is ever outside for an instant), then sets
    /// `scope_ready` to 1: from then on the programs classify.
    @discardableResult
    public func write(_ prefixes: Set<LocalPrefix>) throws(KernelError) -> Change {
        guard prefixes.count <= capacity else {
            throw KernelError(call: "write \(prefixes.count) local prefixes in \(pinDirectory)", errno: E2BIG,
                              detail: "the map holds at most \(capacity)")
        }
        let held = try read()
        for prefix in prefixes.subtracting(held) {
            var key = Self.key(prefix)
            let result = ifmeter_prefixes_add(&maps, &key)
            guard result == 0 else { throw KernelError(call: "add \(prefix) to local_prefixes", errno: -result) }
        }
        let stale = held.subtracting(prefixes)
        for prefix in stale {
            var key = Self.key(prefix)
            let result = ifmeter_prefixes_remove(&maps, &key)
            guard result == 0 else { throw KernelError(call: "remove \(prefix) from local_prefixes", errno: -result) }
        }
        try setReady(true)
        return Change(added: prefixes.subtracting(held).count, removed: stale.count)
    }

    /// Whether the programs classify (`scope_ready`); before the first write, every packet is
    /// unknown.
    public func isReady() throws(KernelError) -> Bool {
        var value: UInt32 = 0
        let result = ifmeter_scopes_get_ready(&maps, &value)
        guard result == 0 else { throw KernelError(call: "read scope_ready", errno: -result) }
        return value != 0
    }

    /// For tests, and a daemon that knows its prefixes are wrong: unknown again until written.
    public func setReady(_ ready: Bool) throws(KernelError) {
        let result = ifmeter_scopes_set_ready(&maps, ready ? 1 : 0)
        guard result == 0 else { throw KernelError(call: "write scope_ready", errno: -result) }
    }

    static func key(_ prefix: LocalPrefix) -> ifmeter_prefix_key {
        var key = ifmeter_prefix_key()
        key.prefixlen = UInt32(prefix.length)
        withUnsafeMutableBytes(of: &key.addr) { raw in
            for (index, byte) in prefix.address.prefix(16).enumerated() { raw[index] = byte }
        }
        return key
    }
}
