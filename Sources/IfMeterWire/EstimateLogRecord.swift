import IfMeterCore

/// One line of the estimate log (docs/LOG.md, file name ``Paths/estimateLogName``): written by
/// ifmeterd at each save, read by `ifmeter log`. The `type` field tells the two apart.
public enum EstimateLogRecord: Codable, Hashable, Sendable {
    /// One name's traffic in a save window.
    case estimate(WindowRecord)
    /// A counter event, with the fields the socket's events have.
    case event(CounterEvent)

    /// One name's traffic in a save window, labelled.
    public typealias WindowRecord = WithTraffic<WindowFields>

    public struct WindowFields: Codable, Hashable, Sendable {
        public var interface: String
        public var `class`: String?
        public var start: Double
        public var end: Double
        public var continuity: Continuity
        public var epoch: Epoch
        public var labels: [String]
    }

    private enum TypeKey: String, CodingKey { case type }

    /// The `type` field's value.
    public var type: String {
        switch self {
        case .estimate: "estimate"
        case .event: "event"
        }
    }

    /// The interface it is about; nil for an event about the host (a reboot, a clock jump).
    public var interface: String? {
        switch self {
        case .estimate(let window): window.interface
        case .event(let event): event.interface
        }
    }

    /// When it happened: an estimate's window start, an event's time.
    public var time: Double {
        switch self {
        case .estimate(let window): window.start
        case .event(let event): event.at
        }
    }

    public init(from decoder: any Decoder) throws {
        let type = try decoder.container(keyedBy: TypeKey.self).decode(String.self, forKey: .type)
        switch type {
        case "estimate": self = .estimate(try WindowRecord(from: decoder))
        case "event": self = .event(try CounterEvent(from: decoder))
        default:
            throw DecodingError.dataCorrupted(.init(codingPath: [TypeKey.type], debugDescription: "unknown record type \(type)"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .estimate(let window): try window.encode(to: encoder)
        case .event(let event): try event.encode(to: encoder)
        }
        var container = encoder.container(keyedBy: TypeKey.self)
        try container.encode(type, forKey: .type)
    }
}

extension EstimateLogRecord.WindowRecord where Fields == EstimateLogRecord.WindowFields {
    public init(interface: String, class: String?, start: Double, end: Double, tally: BucketTally, epoch: Epoch,
                labels: [EstimateLabel], eventsLost: Int) {
        self.init(EstimateLogRecord.WindowFields(
            interface: interface, class: `class`, start: start, end: end,
            continuity: tally.continuity(eventsLost: eventsLost), epoch: epoch, labels: labels.map(\.rawValue)),
                  traffic: tally.traffic)
    }
}
