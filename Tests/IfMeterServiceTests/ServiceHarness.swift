import IfMeterApps
import IfMeterCore
import IfMeterHistory
@testable import IfMeterService
@testable import IfMeterStore
import IfMeterTestSupport

/// Time in seconds after a fixed origin, wall and boot clocks moving together unless told.
func at(_ seconds: Double, wallOffset: Double = 0) -> MeterInstant {
    MeterInstant(wall: 1_800_000_000 + seconds + wallOffset, sinceBootNanoseconds: UInt64(seconds * 1e9))
}

func traffic(_ rx: UInt64, _ tx: UInt64, _ rxPackets: UInt64 = 0, _ txPackets: UInt64 = 0) -> Traffic {
    Traffic(rxBytes: rx, txBytes: tx, rxPackets: rxPackets, txPackets: txPackets)
}

func link(_ name: String, _ ifindex: Int32, _ counters: Traffic, kind: String = "", tunFlags: UInt32? = nil) -> Link {
    Link(ifindex: ifindex, name: name, kind: kind, arpType: ARPHRD.ether,
         counters: LinkCounters(rxBytes: counters.rxBytes, txBytes: counters.txBytes,
                                rxPackets: counters.rxPackets, txPackets: counters.txPackets),
         sysfs: SysfsFacts(tunFlags: tunFlags, hasDevice: kind.isEmpty))
}

func reading(_ ifindex: Int32, _ counters: Traffic) -> CounterReading {
    CounterReading(ifindex: ifindex, counters: LinkCounters(
        rxBytes: counters.rxBytes, txBytes: counters.txBytes,
        rxPackets: counters.rxPackets, txPackets: counters.txPackets))
}

/// The service with a real store in a temporary directory, as the daemon runs it: restarts
/// load what the last save wrote.
final class ServiceHarness {
    let directory: TemporaryDirectory
    /// Implicitly unwrapped only so a restart can close the old store before opening the new.
    var store: Store!
    var service: MeterService
    var events: [CounterEvent] = []
    var logs: [LogWindow] = []
    /// When set, saves fail with this error instead of writing.
    var failSaves: SaveFailure?

    init(bootID: String = "boot-1", configuration: ServiceConfiguration = ServiceConfiguration()) throws {
        directory = try TemporaryDirectory()
        store = try Store(path: directory.database)
        service = MeterService(bootID: bootID, configuration: configuration, history: try store.loader.history(),
                               at: at(0).wall)
    }

    func start(_ links: [Link], at instant: MeterInstant, unparseable: Int = 0, scopes: ScopeCounts? = nil) {
        events += service.start(links: links, unparseable: unparseable, scopes: scopes, at: instant).events
    }

    func ingest(_ observations: [LinkObservation] = [], readings: [CounterReading]? = nil, apps: AppRead? = nil,
                scopes: ScopeCounts? = nil, at instant: MeterInstant) {
        events += service.ingest(linkEvents: observations, readings: readings, apps: apps, scopes: scopes, at: instant).events
    }

    @discardableResult
    func save(at instant: MeterInstant) -> SaveOutcome {
        let store: Store = self.store
        let failure = failSaves
        let outcome = service.save(at: instant.wall) { batch in
            if let failure { throw failure }
            let records = batch.presentRecords
            try store.writer.save(&batch.writes, recording: records)
        }
        logs.append(outcome.log)
        return outcome
    }

    /// Stops (nothing more is saved) and starts again from the database, as a new process would.
    func restart(bootID: String = "boot-1", at instant: MeterInstant,
                 configuration: ServiceConfiguration = ServiceConfiguration()) throws {
        store = nil
        store = try Store(path: directory.database)
        service = MeterService(bootID: bootID, configuration: configuration, history: try store.loader.history(),
                               at: instant.wall)
    }

    func figures(_ name: String) -> InterfaceFigures? {
        service.snapshot().interfaces.first { $0.name == name }
    }

    func total(_ name: String) -> Traffic { figures(name)?.total.traffic ?? .zero }

    /// What the database says a name's all-time total is.
    func storedTotal(_ name: String) throws -> Traffic { try store.queries.total(name)?.tally.traffic ?? .zero }

    /// Every estimate-log window's traffic for a name, summed.
    func logged(_ name: String) -> Traffic {
        logs.flatMap(\.estimates).filter { $0.name == name }.reduce(.zero) { $0 + $1.tally.traffic }
    }
}

let diskFull = SaveFailure(StoreError(kind: .full, path: "/test/ifmeter.db", operation: "save to", message: "database or disk is full"))
