import IfMeterPlans
import IfMeterCore
import IfMeterHistory

/// Reads what the meter service starts from: the meter's resumable state, every name's total
/// and record, the plans' watch and the networks, as last saved.
public struct HistoryLoader {
    let statements: Statements
    let queries: StoreQueries
    let appRows: AppCounterRows

    /// Everything the meter service starts from: the meter state, every name's total and
    /// record, and when link events were lost.
    public func history() throws(StoreError) -> ServiceHistory {
        let meter = try meter()
        let totals = try queries.totals()
        var history = ServiceHistory(
            meterState: meter.state, knownNames: meter.knownNames, totals: totals.mapValues(\.tally),
            interfaces: try queries.interfaces(), eventsLost: try queries.lostEventTimes(limit: 100_000),
            planStates: try planStates(), networks: try networks(), apps: try appRows.read(), scopes: try appRows.scopes.read(),
            aliases: try queries.aliases())
        history.scopeSubjects = totals.filter { $0.key.hasPrefix("scope:") }.mapValues(\.since)
        return history
    }

    /// What the meter needs at start: the saved state (nil if there is none) and every name with
    /// history, with when its counting began.
    public func meter() throws(StoreError) -> (state: MeterState?, knownNames: [String: Double]) {
        var names: [String: Double] = [:]
        let namesQuery = statements.allNames.bind([])
        while try namesQuery.step() {
            names[namesQuery.text(0) ?? ""] = try namesQuery.time(1)
        }
        let meta = statements.meterValues.bind([])
        var values: [String: String] = [:]
        while try meta.step() {
            values[meta.text(0) ?? ""] = meta.text(1)
        }
        guard let bootID = values["boot_id"] else { return (nil, names) }
        var interfaces: [TrackedInterface] = []
        let epochs = statements.openEpochs.bind([])
        while try epochs.step() {
            let ifindex = try epochs.int32(1)
            interfaces.append(TrackedInterface(
                name: epochs.text(3) ?? "", namespace: try epochs.namespace(14), ifindex: ifindex, kind: epochs.text(4) ?? "",
                epoch: Epoch(bootID: epochs.text(0) ?? "", ifindex: ifindex,
                             generation: Int(epochs.int64(2)), since: try epochs.time(5)),
                last: Traffic(rxBytes: epochs.uint64(6), txBytes: epochs.uint64(7),
                              rxPackets: epochs.uint64(8), txPackets: epochs.uint64(9)),
                lastInstant: MeterInstant(wall: try epochs.time(10), sinceBootNanoseconds: epochs.uint64(11)),
                countersAre32Bit: epochs.int64(12) != 0,
                speedBitsPerSecond: epochs.isNull(13) ? nil : epochs.uint64(13)))
        }
        // A last_wall outside 1970…9999 (hand-edited) is as good as none: the meter resumes
        // without a clock check rather than trapping on the difference.
        func instant(_ wallKey: String, _ bootKey: String) -> MeterInstant? {
            values[wallKey].flatMap(Double.init).flatMap { Statement.acceptedTimes.contains($0) ? $0 : nil }.flatMap { wall in
                values[bootKey].flatMap(UInt64.init).map { MeterInstant(wall: wall, sinceBootNanoseconds: $0) }
            }
        }
        let state = MeterState(bootID: bootID, interfaces: interfaces, firstSeen: DenseTable(names),
                               lastInstant: instant("last_wall", "last_boot_ns"),
                               clockAnchor: instant("clock_anchor_wall", "clock_anchor_boot_ns"))
        return (state, names)
    }

    /// Each plan's watch as last saved; a row that does not read (edited by hand) is left out,
    /// so that plan starts its watch afresh.
    public func planStates() throws(StoreError) -> [String: PlanState] {
        let query = statements.planStates.bind([])
        var states: [String: PlanState] = [:]
        while try query.step() {
            guard let name = query.text(0), let fingerprint = query.text(1),
                  let fired = query.text(3).flatMap(PlanState.fired(parsing:)) else { continue }
            states[name] = PlanState(fingerprint: fingerprint, periodStart: query.int64(2), fired: fired)
        }
        return states
    }

    /// Every network as last saved. A row that does not read (edited by hand: no UUID, an SSID
    /// that is not hex or longer than 32 bytes) is left out, and its traffic stays under its subject.
    public func networks() throws(StoreError) -> [NetworkRecord] {
        let query = statements.networks.bind([])
        var records: [NetworkRecord] = []
        while try query.step() {
            guard let uuid = query.text(0), Network.isUUID(uuid), let id = query.text(1), let type = query.text(2),
                  let metered = query.text(4).flatMap(Metered.init(rawValue:)) else { continue }
            let ssid = query.text(3).map(Hex.decode)
            if let ssid, ssid == nil || ssid!.count > 32 { continue }
            records.append(NetworkRecord(
                network: Network(uuid: uuid, id: id, type: type, ssid: ssid ?? nil, metered: metered,
                                 apn: query.text(5), operatorName: query.text(6)),
                firstSeen: query.double(9), lastSeen: query.double(10), interface: query.text(7), active: query.int64(8) != 0))
        }
        return records
    }
}

extension HistoryLoader {
    /// The statements a load uses, prepared at open.
    struct Statements {
        let allNames, meterValues, openEpochs, planStates, networks: Statement

        init(_ connection: SQLiteConnection) throws(StoreError) {
            planStates = try connection.prepare("SELECT name, fingerprint, period_start, fired FROM plans", "read")
            networks = try connection.prepare("""
                SELECT uuid, id, type, ssid_hex, metered, apn, operator, interface, active, first_seen, last_seen
                FROM networks ORDER BY uuid
                """, "read")
            allNames = try connection.prepare("SELECT name, first_seen FROM interfaces", "read")
            meterValues = try connection.prepare("SELECT key, value FROM meter", "read")
            openEpochs = try connection.prepare("""
                SELECT boot_id, ifindex, generation, name, kind, since, last_rx_bytes, last_tx_bytes,
                       last_rx_packets, last_tx_packets, last_wall, last_boot_ns, counters_32bit, speed_bps, namespace
                FROM epochs WHERE open = 1 ORDER BY namespace, ifindex
                """, "read")
        }
    }
}
