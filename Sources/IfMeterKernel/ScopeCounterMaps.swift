import CAppCounters
import IfMeterCore
#if canImport(Glibc)
import Glibc
#endif

/// The interface scope programs' map (`link_scopes`, docs/SCOPES.md), open read-only through
/// its pin: each covered interface's frames by scope, counted by tcx programs that
/// `ifmeterd --attach-link` attached. Reading needs read permission on the pin, no capability.
/// Not for two threads at once.
public final class ScopeCounterMaps {
    public let pinDirectory: String
    private var maps = ifmeter_scope_maps()
    private var buffer: [ifmeter_scope_entry] = []

    public init(pinDirectory: String) throws(KernelError) {
        self.pinDirectory = pinDirectory
        let result = ifmeter_scopes_open(pinDirectory, 0, &maps)
        guard result == 0 else {
            throw KernelError(call: "open link_scopes in \(pinDirectory)", errno: -result,
                              detail: ScopeCounterMaps.hint(-result))
        }
    }

    deinit { ifmeter_scopes_close(&maps) }

    /// link_scopes' kernel id: another id at the same pin is another map, counting from zero.
    public var mapID: UInt32 { maps.scopes_id }

    /// Every entry, cumulative since the map was made. A scope value this release does not know
    /// is counted as unknown.
    public func read() throws(KernelError) -> ScopeCounts {
        let capacity = Int(maps.scopes_max_entries)
        if buffer.count < capacity { buffer = .init(repeating: ifmeter_scope_entry(), count: capacity) }
        let count = buffer.withUnsafeMutableBufferPointer { ifmeter_scopes_read(&maps, $0.baseAddress, $0.count) }
        guard count >= 0 else { throw KernelError(call: "read link_scopes in \(pinDirectory)", errno: -count) }
        var counters: [ScopeCounterKey: Traffic] = [:]
        counters.reserveCapacity(Int(count))
        for entry in buffer.prefix(Int(count)) {
            let key = ScopeCounterKey(ifindex: Int32(bitPattern: entry.key.ifindex),
                                      scope: TrafficScope(rawValue: entry.key.scope) ?? .unknown)
            let value = entry.value
            counters[key, default: .zero] = counters[key, default: .zero] + Traffic(
                rxBytes: value.rx_bytes, txBytes: value.tx_bytes, rxPackets: value.rx_packets, txPackets: value.tx_packets)
        }
        return ScopeCounts(mapID: mapID, counters: counters)
    }

    static func hint(_ errno: Int32) -> String? {
        switch errno {
        case EACCES, EPERM: "the pins are not this user's; attach with it as their owner"
        case ENOENT: "the counter is not attached there (ifmeterd --attach-apps)"
        case EPROTO: "the pins hold maps of another layout; run ifmeterd --attach-apps"
        default: nil
        }
    }
}
