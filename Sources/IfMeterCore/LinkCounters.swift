/// One interface's cumulative kernel counters at one instant.
///
/// These are the kernel's own numbers, counted from the moment the interface was created (or
/// its driver last reset them); turning them into totals that survive resets is the meter's job.
public struct LinkCounters: Hashable, Sendable {
    public var rxBytes: UInt64
    public var txBytes: UInt64
    public var rxPackets: UInt64
    public var txPackets: UInt64
    public var rxErrors: UInt64
    public var txErrors: UInt64
    public var rxDropped: UInt64
    public var txDropped: UInt64

    public init(
        rxBytes: UInt64 = 0, txBytes: UInt64 = 0, rxPackets: UInt64 = 0, txPackets: UInt64 = 0,
        rxErrors: UInt64 = 0, txErrors: UInt64 = 0, rxDropped: UInt64 = 0, txDropped: UInt64 = 0
    ) {
        self.rxBytes = rxBytes
        self.txBytes = txBytes
        self.rxPackets = rxPackets
        self.txPackets = txPackets
        self.rxErrors = rxErrors
        self.txErrors = txErrors
        self.rxDropped = rxDropped
        self.txDropped = txDropped
    }

    /// The same counters seen from the other end of a veth: what one end sent, the other
    /// received. A host-side veth's counters turned round are its container's.
    public var turnedRound: LinkCounters {
        LinkCounters(rxBytes: txBytes, txBytes: rxBytes, rxPackets: txPackets, txPackets: rxPackets,
                     rxErrors: txErrors, txErrors: rxErrors, rxDropped: txDropped, txDropped: rxDropped)
    }
}

/// One row of a counters-only sample: the counters of the link with this ifindex.
public struct CounterReading: Hashable, Sendable {
    public var namespace: NamespaceID
    public var ifindex: Int32
    public var counters: LinkCounters

    public init(namespace: NamespaceID = .own, ifindex: Int32, counters: LinkCounters) {
        self.namespace = namespace
        self.ifindex = ifindex
        self.counters = counters
    }

    /// The link these counters are of.
    public var key: LinkKey { LinkKey(namespace, ifindex: ifindex) }
}
