import IfMeterCore
import IfMeterService
import IfMeterWire

/// `interfaces` and the `watch` stream's rates: current figures, from the service's snapshot.
extension RequestHandlers {
    static func interfaces(of service: MeterService?) -> InterfacesResult {
        let figures = service?.snapshot().interfaces ?? []
        return InterfacesResult(interfaces: figures.map(InterfaceResult.init), footnote: EstimateLabel.footnote)
    }

    /// The rates a `watch` line carries, as of the last sample.
    public func rates() -> RatesResult {
        guard let service = context.service else { return RatesResult(at: 0, interfaces: []) }
        return RatesResult(at: service.summary.sampledAt?.wall ?? 0,
                           interfaces: service.rates().map { RatesResult.Entry(name: $0.name, rate: RateResult($0.rate)) })
    }
}

extension RateResult {
    init(_ rate: Rate) {
        self.init(rxBytesPerSecond: rate.rxBytesPerSecond, txBytesPerSecond: rate.txBytesPerSecond,
                  smoothedRxBytesPerSecond: rate.smoothedRxBytesPerSecond,
                  smoothedTxBytesPerSecond: rate.smoothedTxBytesPerSecond)
    }
}

extension InterfaceResult where Fields == InterfaceFields {
    /// The answer for one name, present or absent: the one place its fields and labels are set.
    init(_ figures: InterfaceFigures) {
        let present = figures.present
        var fields = InterfaceFields(
            name: figures.name, ifindex: present?.ifindex, class: figures.interfaceClass,
            classReason: figures.classReason, kind: figures.kind,
            operstate: present.map(\.operState.rawValue) ?? "absent",
            epoch: present.flatMap { present in present.counted.map { EpochResult(
                EpochFields(bootID: $0.epoch.bootID, ifindex: present.ifindex, generation: $0.epoch.generation,
                            since: $0.epoch.since), traffic: $0.last) } },
            rate: present?.rate.map(RateResult.init),
            continuity: figures.total.continuity(since: figures.since, eventsLost: figures.eventsLost),
            labels: figures.labels.map(\.rawValue), lastSeen: figures.lastSeen,
            owner: present?.owner.map(OwnerResult.init))
        fields.alias = figures.alias
        self.init(fields, traffic: figures.total.traffic)
    }
}

extension InterfaceFigures: SelectableInterface {
    public var selectionName: String { name }
    public var selectionClass: String { interfaceClass }
    public var isUp: Bool { present?.operState == .up }
    public var isAbsent: Bool { present == nil }
    public var carriedTraffic: Bool { total.traffic.rxBytes != 0 || total.traffic.txBytes != 0 }
}
