import IfMeterCore

/// A figure's own fields with its traffic beside them as `rx_bytes`, `tx_bytes`, `rx_packets`
/// and `tx_packets` (flattened into the same object, ``TrafficFields``): the one encoding of
/// traffic in every answer and estimate-log line. Fields and traffic read as members of the
/// figure (`row.start`, `row.rxBytes`).
@dynamicMemberLookup
public struct WithTraffic<Fields: Hashable & Sendable>: Hashable, Sendable {
    public var fields: Fields
    public var traffic: Traffic

    public init(_ fields: Fields, traffic: Traffic) {
        self.fields = fields
        self.traffic = traffic
    }

    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<Fields, Value>) -> Value {
        get { fields[keyPath: keyPath] }
        set { fields[keyPath: keyPath] = newValue }
    }

    public subscript<Value>(dynamicMember keyPath: KeyPath<Traffic, Value>) -> Value {
        traffic[keyPath: keyPath]
    }
}
