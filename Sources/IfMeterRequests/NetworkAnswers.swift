import IfMeterCore
import IfMeterService
import IfMeterWire

extension NetworkResult {
    /// A network's figures as answered.
    init(_ figures: NetworkFigures) {
        let network = figures.record?.network
        self.init(
            subject: figures.subject, uuid: network?.uuid, name: network?.id ?? "unknown",
            ssidHex: network?.ssid.map(Hex.encode), type: network?.type ?? "unknown",
            metered: network?.metered.rawValue ?? Metered.unknown.rawValue, apn: network?.apn,
            operatorName: network?.operatorName, interface: figures.interface, firstSeen: figures.record?.firstSeen,
            lastSeen: figures.interface == nil ? figures.record?.lastSeen : nil,
            rxBytes: figures.total.traffic.rxBytes, txBytes: figures.total.traffic.txBytes,
            labels: figures.labels.map(\.rawValue))
    }
}

extension RequestHandlers {
    /// The `networks` part of a `query` answer: each of `subjects` that is a network, in order.
    static func networks(of service: MeterService, subjects: [String]) -> [NetworkResult] {
        let figures = Dictionary(service.networkFigures().map { ($0.subject, $0) }) { first, _ in first }
        return subjects.compactMap { figures[$0].map(NetworkResult.init) }
    }
}
