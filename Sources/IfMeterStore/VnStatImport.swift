import IfMeterCore
import IfMeterHistory

/// What importing one vnStat interface did (or, dry, would do).
public struct ImportReport: Hashable, Sendable {
    public var name: String
    /// New buckets by resolution.
    public var buckets: [Resolution: Int] = [:]
    /// Buckets an earlier import already brought.
    public var alreadyImported = 0
    /// Buckets left out because ifmeter counted that period itself (the overlap rule).
    public var overlapSkipped = 0
    /// What the all-time total gained; zero when an earlier import already added it.
    public var total = Traffic.zero
    /// When both meters counted this interface: ifmeter from `from`, vnStat until `to`.
    public var overlap: (from: Double, to: Double)?

    public static func == (lhs: ImportReport, rhs: ImportReport) -> Bool {
        lhs.name == rhs.name && lhs.buckets == rhs.buckets && lhs.alreadyImported == rhs.alreadyImported
            && lhs.overlapSkipped == rhs.overlapSkipped && lhs.total == rhs.total
            && lhs.overlap?.from == rhs.overlap?.from && lhs.overlap?.to == rhs.overlap?.to
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// Brings vnStat's history into the store (`ifmeter import`).
public struct VnStatImport {
    let connection: SQLiteConnection
    let statements: Statements
    let configuration: HistoryConfiguration
    let path: String

    /// Where imports are remembered, per source: a bucket or total imported once is never
    /// imported again.
    static let vnStatSource = "vnstat"
    /// The marker that keeps ifmeter's own first sight of a name across imports (an import
    /// moves the name's first-seen time back to vnStat's creation).
    static let ownFirstSight = "ifmeter-first-seen"
    /// The marker of how a name's vnStat dates were read: start 1 as UTC, 0 as local time.
    /// Read the other way, every row would start elsewhere and be imported a second time.
    static let datesRead = "dates-read-as-utc"

    /// Brings vnStat's history into the store, in one transaction (nothing when `dryRun`).
    ///
    /// Rules (docs/CLI.md, "import"): each vnStat resolution goes to the same resolution, into
    /// the ifmeter bucket containing its start; the all-time total adds vnStat's `rxtotal` and
    /// `txtotal`. Traffic vnStat counted before ifmeter first saw the name is added; where both
    /// counted (vnStat's last update is after ifmeter's first sight), ifmeter's own count wins:
    /// vnStat's buckets that end after ifmeter's first sight are left out, and the total gains
    /// vnStat's total less the traffic of those of its finest rows. Imported figures are
    /// labelled `imported-vnstat`.
    public func vnStat(_ database: VnStatDatabase, dryRun: Bool) throws(StoreError) -> [ImportReport] {
        try connection.transaction("import into", commit: !dryRun) { () throws(StoreError) -> [ImportReport] in
            try database.interfaces.map { interface throws(StoreError) in try importInterface(interface, utc: database.utc) }
        }
    }

    private func importInterface(_ interface: VnStatDatabase.Interface, utc: Bool) throws(StoreError) -> ImportReport {
        var report = ImportReport(name: interface.name)
        let dates = statements.importedStart.bind([.text(Self.vnStatSource), .text(interface.name), .text(Self.datesRead)])
        if try dates.step(), (dates.int64(0) == 1) != utc {
            throw StoreError(kind: .other, path: path, operation: "import into", message: """
                \(InterfaceName.printable(interface.name)) was imported before with vnStat's dates read as \(utc ? "local time" : "UTC"); \
                reading them as \(utc ? "UTC (--utc)" : "local time") now would import its history a second time. \
                Import \(utc ? "without" : "with") --utc, as the first time; nothing was imported
                """)
        }
        _ = try recordImport(interface.name, Self.datesRead, utc ? 1 : 0, 0, 0)
        let ownFirstSight = try firstSightBeforeImports(interface.name)
        let firstSight = ownFirstSight.map(Double.init)
        if let firstSight, interface.updated > firstSight { report.overlap = (firstSight, interface.updated) }
        var skippedFinest = Traffic.zero
        let finest = Resolution.allCases.first { !(interface.rows[$0] ?? []).isEmpty }
        for resolution in Resolution.allCases {
            for row in interface.rows[resolution] ?? [] {
                let start = configuration.calendar.start(of: resolution, containing: row.start,
                                                         monthStartDay: configuration.monthStartDay(for: interface.name))
                let end = configuration.calendar.end(of: resolution, startingAt: row.start,
                                                     monthStartDay: configuration.monthStartDay(for: interface.name))
                if report.overlap != nil, let firstSight, Double(end) > firstSight {
                    report.overlapSkipped += 1
                    if resolution == finest { skippedFinest = skippedFinest + Traffic(rxBytes: row.rx, txBytes: row.tx) }
                    continue
                }
                guard try recordImport(interface.name, resolution.rawValue, row.start, row.rx, row.tx) else {
                    report.alreadyImported += 1
                    continue
                }
                report.buckets[resolution, default: 0] += 1
                try statements.importBucket.run([.text(interface.name), .text(resolution.rawValue), .int(start),
                                                 .uint(row.rx), .uint(row.tx)])
            }
        }
        let total = Traffic(rxBytes: interface.rxTotal &- min(interface.rxTotal, skippedFinest.rxBytes),
                            txBytes: interface.txTotal &- min(interface.txTotal, skippedFinest.txBytes))
        if try recordImport(interface.name, "total", 0, total.rxBytes, total.txBytes) {
            report.total = total
            try statements.importTotal.run([.text(interface.name), .uint(total.rxBytes), .uint(total.txBytes)])
        }
        if ownFirstSight == nil || ownFirstSight.map({ Double($0) > interface.created }) == true {
            // ifmeter's own first sight is kept for the next import's overlap check.
            _ = try recordImport(interface.name, Self.ownFirstSight, ownFirstSight ?? Int64(interface.updated.rounded(.up)), 0, 0)
        }
        try statements.importInterface.run([.text(interface.name), .double(interface.created), .double(interface.updated)])
        return report
    }

    /// ifmeter's own first sight of `name`: kept by the first import, else the interface's
    /// first-seen time; nil for a name ifmeter never saw.
    private func firstSightBeforeImports(_ name: String) throws(StoreError) -> Int64? {
        let marker = statements.importedStart.bind([.text(Self.vnStatSource), .text(name), .text(Self.ownFirstSight)])
        if try marker.step() { return marker.int64(0) }
        let seen = statements.firstSeen.bind([.text(name)])
        guard try seen.step() else { return nil }
        return Int64(try seen.time(0).rounded(.down))
    }

    /// Remembers one imported row; false when it was imported before.
    private func recordImport(_ name: String, _ resolution: String, _ start: Int64, _ rx: UInt64, _ tx: UInt64) throws(StoreError) -> Bool {
        try statements.recordImport.run([.text(Self.vnStatSource), .text(name), .text(resolution), .int(start), .uint(rx), .uint(tx)])
        return connection.changes > 0
    }
}

extension VnStatImport {
    /// The statements an import uses, prepared at open.
    struct Statements {
        let importBucket, importTotal, importInterface, recordImport, importedStart, firstSeen: Statement

        init(_ connection: SQLiteConnection) throws(StoreError) {
            // vnStat imports (VnStatImport): added to what the bucket or total holds, marked imported.
            importBucket = try connection.prepare("""
                INSERT INTO buckets (name, resolution, start, rx_bytes, tx_bytes, imported) VALUES (?1, ?2, ?3, ?4, ?5, 1)
                ON CONFLICT (name, resolution, start) DO UPDATE SET rx_bytes = ifm_add(rx_bytes, excluded.rx_bytes),
                    tx_bytes = ifm_add(tx_bytes, excluded.tx_bytes), imported = 1
                """, "import into")
            importTotal = try connection.prepare("""
                INSERT INTO totals (name, rx_bytes, tx_bytes, imported) VALUES (?1, ?2, ?3, 1)
                ON CONFLICT (name) DO UPDATE SET rx_bytes = ifm_add(rx_bytes, excluded.rx_bytes),
                    tx_bytes = ifm_add(tx_bytes, excluded.tx_bytes), imported = 1
                """, "import into")
            importInterface = try connection.prepare("""
                INSERT INTO interfaces (name, kind, mac, first_seen, last_seen) VALUES (?1, '', '', ?2, ?3)
                ON CONFLICT (name) DO UPDATE SET first_seen = excluded.first_seen
                WHERE excluded.first_seen < first_seen
                """, "import into")
            recordImport = try connection.prepare("""
                INSERT OR IGNORE INTO imports (source, name, resolution, start, rx_bytes, tx_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                """, "import into")
            importedStart = try connection.prepare(
                "SELECT start FROM imports WHERE source = ?1 AND name = ?2 AND resolution = ?3", "import into")
            firstSeen = try connection.prepare("SELECT first_seen FROM interfaces WHERE name = ?1", "import into")
        }
    }
}
