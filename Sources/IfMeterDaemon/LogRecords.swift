import IfMeterCore
import IfMeterStore
import IfMeterWire

/// One estimate-log line per interface per save window (docs/LOG.md).
struct EstimateRecord: Encodable {
    var type = "estimate"
    var interface: String
    var `class`: String?
    var start: Double
    var end: Double
    var rxBytes: UInt64
    var txBytes: UInt64
    var rxPackets: UInt64
    var txPackets: UInt64
    var continuity: Continuity
    var epoch: Epoch
    var labels: [String]

    init(name: String, classification: Classification?, start: Double, end: Double, tally: BucketTally, epoch: Epoch, eventsLost: Int) {
        interface = name
        self.class = classification?.label
        self.start = start
        self.end = end
        (rxBytes, txBytes) = (tally.traffic.rxBytes, tally.traffic.txBytes)
        (rxPackets, txPackets) = (tally.traffic.rxPackets, tally.traffic.txPackets)
        continuity = Continuity(since: nil, resets: tally.resets, gaps: tally.gaps, implausibleDropped: tally.implausible,
                                eventsLost: eventsLost)
        self.epoch = epoch
        labels = tally.labels(tunnel: classification?.isTunnel ?? false, eventsLost: eventsLost).map(\.rawValue)
    }

    enum CodingKeys: String, CodingKey {
        case type, interface, `class`, start, end, rxBytes = "rx_bytes", txBytes = "tx_bytes"
        case rxPackets = "rx_packets", txPackets = "tx_packets", continuity, epoch, labels
    }
}

/// One estimate-log line per counter event.
struct EventRecord: Encodable {
    var type = "event"
    var event: CounterEvent

    init(_ event: CounterEvent) {
        self.event = event
    }

    func encode(to encoder: any Encoder) throws {
        try event.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
    }

    enum CodingKeys: String, CodingKey { case type }
}
