import CAppCounters
import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// One entry's counters: bytes are IP packets' lengths, with no link-layer header.
public struct AppTraffic: Hashable, Sendable {
    public var rxBytes: UInt64
    public var rxPackets: UInt64
    public var txBytes: UInt64
    public var txPackets: UInt64

    public init(rxBytes: UInt64 = 0, rxPackets: UInt64 = 0, txBytes: UInt64 = 0, txPackets: UInt64 = 0) {
        self.rxBytes = rxBytes
        self.rxPackets = rxPackets
        self.txBytes = txBytes
        self.txPackets = txPackets
    }

    init(_ value: ifmeter_apps_value) {
        self.init(rxBytes: value.rx_bytes, rxPackets: value.rx_packets,
                  txBytes: value.tx_bytes, txPackets: value.tx_packets)
    }
}

/// The traffic of one cgroup's sockets through one interface (of the socket's namespace), of
/// one scope.
public struct AppCounterEntry: Hashable, Sendable {
    /// The socket's cgroup: its directory's inode number (`Cgroup2.id(ofDirectory:)`).
    public var cgroupID: UInt64
    public var ifindex: Int32
    /// Where the packets' far ends were (docs/SCOPES.md); unknown before the daemon wrote the
    /// local prefixes, and for a scope value this release does not know.
    public var scope: TrafficScope
    public var traffic: AppTraffic
    /// The cgroup's ancestor two levels below the root (`/user.slice/user-UID.slice`) when the
    /// entry was made; 0 for a shallower cgroup.
    public var ancestorID: UInt64

    public init(cgroupID: UInt64, ifindex: Int32, scope: TrafficScope = .unknown, traffic: AppTraffic,
                ancestorID: UInt64 = 0) {
        self.cgroupID = cgroupID
        self.ifindex = ifindex
        self.scope = scope
        self.traffic = traffic
        self.ancestorID = ancestorID
    }
}

/// Everything the maps held at one read. Counters only grow while `mapID` stays the same; a new
/// `mapID` is a map attached anew, whose counters started at 0.
public struct AppCounterDump: Hashable, Sendable {
    /// app_counts' kernel id.
    public var mapID: UInt32
    /// app_counts' size: when `entries` holds this many, new cgroups go to `overflow`.
    public var maxEntries: Int
    public var entries: [AppCounterEntry]
    /// Traffic of cgroups that found app_counts full, by ifindex.
    public var overflow: [Int32: AppTraffic]
    /// Traffic neither map had room for.
    public var lost: AppTraffic
}

/// The application counter's pinned maps, open (BPF_OBJ_GET). Reading needs read permission on
/// the pins, `take` write permission (`AppCounterProgram.attach`'s `owner`); no capability.
/// Not for two threads at once.
public final class AppCounterMaps {
    public let pinDirectory: String
    private var maps = ifmeter_apps_maps()
    private var buffer: [ifmeter_apps_entry] = []

    /// Opens the maps pinned in `pinDirectory`, read-only unless `writable` (for `take`).
    public init(pinDirectory: String, writable: Bool = false) throws(KernelError) {
        self.pinDirectory = pinDirectory
        let result = ifmeter_apps_open(pinDirectory, writable ? 1 : 0, &maps)
        guard result == 0 else {
            let hint: String? = switch -result {
            case EACCES, EPERM: "the pins are not this user's; attach with it as their owner"
            case ENOENT: "the application counter is not attached there"
            case EPROTO: "the pins hold maps of another layout (or an older release's); run ifmeterd --attach-apps"
            default: nil
            }
            throw KernelError(call: "open the application counter's maps in \(pinDirectory)",
                              errno: -result, detail: hint)
        }
    }

    deinit { ifmeter_apps_close(&maps) }

    /// app_counts' kernel id: another id at the same pins is another map.
    public var mapID: UInt32 { maps.counts_id }
    public var maxEntries: Int { Int(maps.counts_max_entries) }

    /// Every entry of the three maps.
    public func read() throws(KernelError) -> AppCounterDump {
        if buffer.count < maxEntries { buffer = .init(repeating: ifmeter_apps_entry(), count: maxEntries) }
        let count = buffer.withUnsafeMutableBufferPointer { ifmeter_apps_read_counts(&maps, $0.baseAddress, $0.count) }
        let read = try check(count, "read app_counts")
        let entries = buffer.withUnsafeBufferPointer { buffer in
            buffer.prefix(read).map { entry in
                AppCounterEntry(cgroupID: entry.key.cgroup_id, ifindex: Int32(bitPattern: entry.key.ifindex),
                                scope: TrafficScope(rawValue: entry.key.scope) ?? .unknown,
                                traffic: AppTraffic(entry.value), ancestorID: entry.value.ancestor_id)
            }
        }
        var overflowBuffer = [ifmeter_apps_overflow_entry](repeating: .init(), count: Int(maps.overflow_max_entries))
        let overflowCount = overflowBuffer.withUnsafeMutableBufferPointer {
            ifmeter_apps_read_overflow(&maps, $0.baseAddress, $0.count)
        }
        var overflow: [Int32: AppTraffic] = [:]
        for entry in overflowBuffer.prefix(try check(overflowCount, "read app_overflow")) {
            overflow[Int32(bitPattern: entry.ifindex)] = AppTraffic(entry.value)
        }
        var lost = ifmeter_apps_value()
        _ = try check(ifmeter_apps_read_lost(&maps, &lost), "read app_lost")
        return AppCounterDump(mapID: mapID, maxEntries: maxEntries, entries: entries, overflow: overflow,
                              lost: AppTraffic(lost))
    }

    /// Reads and deletes the entry of `cgroupID` on `ifindex` in one step, so no packet is
    /// counted between the read and the deletion and then lost; nil when there is none. For
    /// the entries of cgroups that are gone: a packet of such a cgroup's last sockets that a
    /// CPU was counting at that instant may still be added to the deleted entry, and is lost.
    public func take(cgroupID: UInt64, ifindex: Int32, scope: TrafficScope = .unknown) throws(KernelError) -> AppTraffic? {
        var value = ifmeter_apps_value()
        let result = ifmeter_apps_take(&maps, cgroupID, UInt32(bitPattern: ifindex), scope.rawValue, &value)
        if result == -ENOENT { return nil }
        _ = try check(result, "take app_counts' entry of cgroup \(cgroupID) on ifindex \(ifindex)")
        return AppTraffic(value)
    }

    private func check(_ result: Int32, _ call: String) throws(KernelError) -> Int {
        guard result >= 0 else {
            throw KernelError(call: "\(call) in \(pinDirectory)", errno: -result,
                              detail: -result == EPERM ? "open the maps writable, as their owner" : nil)
        }
        return Int(result)
    }
}
