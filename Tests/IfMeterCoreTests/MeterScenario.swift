import IfMeterCore

/// Builders for meter scenarios: time in seconds after a fixed epoch, links by name and index.
enum Scenario {
    static let wallOrigin = 1_800_000_000.0

    static func at(_ seconds: Double, wallOffset: Double = 0) -> MeterInstant {
        MeterInstant(wall: wallOrigin + seconds + wallOffset, sinceBootNanoseconds: UInt64(seconds * 1e9))
    }

    static func traffic(_ rxBytes: UInt64, _ txBytes: UInt64, _ rxPackets: UInt64 = 0,
                        _ txPackets: UInt64 = 0) -> Traffic {
        Traffic(rxBytes: rxBytes, txBytes: txBytes, rxPackets: rxPackets, txPackets: txPackets)
    }

    static func link(_ name: String, _ ifindex: Int32, _ counters: Traffic, kind: String = "",
                     is32Bit: Bool = false, speed: UInt64? = nil, parent: Int32? = nil) -> Link {
        Link(ifindex: ifindex, name: name, kind: kind, arpType: ARPHRD.ether, parent: parent,
             counters: LinkCounters(rxBytes: counters.rxBytes, txBytes: counters.txBytes,
                                    rxPackets: counters.rxPackets, txPackets: counters.txPackets),
             countersAre32Bit: is32Bit, speedBitsPerSecond: speed)
    }

    static func reading(_ ifindex: Int32, _ counters: Traffic) -> CounterReading {
        CounterReading(ifindex: ifindex, counters: LinkCounters(
            rxBytes: counters.rxBytes, txBytes: counters.txBytes,
            rxPackets: counters.rxPackets, txPackets: counters.txPackets))
    }
}

/// One input to a scenario.
enum MeterStep: Sendable {
    case start([Link], at: MeterInstant)
    case sample([CounterReading], at: MeterInstant)
    case event(LinkEvent, at: MeterInstant)
    case resync([Link], at: MeterInstant)
    /// Export the state, stop, and build a new meter from it (on a new boot id if given).
    case restart(bootID: String?)
}

/// Runs steps through meters as the daemon would, collecting every delta and event.
struct ScenarioRun {
    var meter: Meter
    var deltas: [MeterDelta] = []
    var events: [CounterEvent] = []

    init(bootID: String = "boot-1", configuration: MeterConfiguration = MeterConfiguration(),
         knownNames: [String: Double] = [:]) {
        meter = Meter(bootID: bootID, configuration: configuration, knownNames: knownNames)
    }

    mutating func run(_ steps: [MeterStep]) {
        for step in steps {
            let output: MeterOutput
            switch step {
            case .start(let links, let instant): output = meter.start(links: links, at: instant)
            case .sample(let readings, let instant): output = meter.apply(sample: readings, at: instant)
            case .event(let event, let instant): output = meter.apply(event, at: instant)
            case .resync(let links, let instant): output = meter.resync(links: links, at: instant)
            case .restart(let bootID):
                let state = meter.exportState()
                meter = Meter(bootID: bootID ?? meter.bootID, configuration: meter.configuration,
                              restoring: state)
                continue
            }
            deltas += output.deltas
            events += output.events
        }
    }

    var totals: [String: Traffic] {
        deltas.reduce(into: [:]) { $0[$1.name, default: .zero] += $1.traffic }
    }
}
