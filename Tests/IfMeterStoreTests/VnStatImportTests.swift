import IfMeterCore
@testable import IfMeterHistory
@testable import IfMeterStore
import IfMeterTestSupport
import Testing

@Suite("vnStat import rules", .ownThread, .timeLimit(.minutes(3)))
struct VnStatImportRuleTests {
    let day = 86_400.0
    let origin = 1_800_000_000.0 - 1_800_000_000.0.truncatingRemainder(dividingBy: 86_400)

    /// A store that first saw `eth0` at `firstSeen` and counted 1000 rx that day.
    func store(firstSeen: Double) throws -> (TemporaryDirectory, Store) {
        let directory = try TemporaryDirectory()
        var configuration = HistoryConfiguration()
        configuration.calendar = BucketCalendar(zone: .utc)
        let store = try Store(path: directory.database, configuration: configuration)
        var meter = Meter(bootID: "b")
        var pending = PendingWrites()
        _ = meter.start(links: [link("eth0", 2, .zero)], at: MeterInstant(wall: firstSeen, sinceBootNanoseconds: 1))
        pending.add(meter.apply(sample: [reading(2, Traffic(rxBytes: 1000))], at: MeterInstant(wall: firstSeen + 60, sinceBootNanoseconds: 61_000_000_000)),
                    calendar: configuration.calendar, monthStartDay: { _ in 1 })
        pending.note(InterfaceRecord(name: "eth0", interfaceClass: "ethernet", kind: "", mac: "", lastSeen: firstSeen + 60))
        pending.setMeterState(meter.exportState())
        try store.writer.save(&pending)
        return (directory, store)
    }

    /// vnStat's eth0: a day before ifmeter's, and the day ifmeter began (500 before, 300 after).
    func vnstat(updated: Double) -> VnStatDatabase.Interface {
        VnStatDatabase.Interface(
            name: "eth0", created: origin - 2 * day, updated: updated, rxTotal: 9000, txTotal: 900,
            rows: [.day: [(Int64(origin - day), 8000, 800), (Int64(origin), 1000, 100)],
                   .hour: [(Int64(origin - day), 8000, 800), (Int64(origin + 3600), 500, 50), (Int64(origin + 7200 + 3600), 500, 50)]])
    }

    @Test("a name imported with dates read as UTC is refused when imported again as local time, and nothing is added")
    func datesReadOneWay() throws {
        let (directory, store) = try store(firstSeen: origin + 6 * 3600)
        var database = VnStatDatabase.empty()
        database.interfaces = [vnstat(updated: origin + 5 * 3600)]
        database.utc = true
        _ = try store.imports.vnStat(database, dryRun: false)
        let before = try store.queries.total("eth0")?.tally.traffic
        database.utc = false
        #expect {
            _ = try store.imports.vnStat(database, dryRun: false)
        } throws: { error in
            "\(error)".contains("read as UTC") && "\(error)".contains("Import with --utc")
        }
        #expect(try store.queries.total("eth0")?.tally.traffic == before)
        database.utc = true
        let again = try store.imports.vnStat(database, dryRun: false)
        #expect(!again.isEmpty && again.allSatisfy { $0.buckets.isEmpty }, "the same way again reads the interfaces and adds nothing")
        withExtendedLifetime(directory) {}
    }

    @Test("vnStat stopped before ifmeter began: everything adds, the day holds both meters' traffic")
    func noOverlap() throws {
        let (directory, store) = try store(firstSeen: origin + 6 * 3600)
        var database = VnStatDatabase.empty()
        database.interfaces = [vnstat(updated: origin + 5 * 3600)]
        let report = try #require(try store.imports.vnStat(database, dryRun: false).first)
        #expect(report.overlap == nil && report.overlapSkipped == 0 && report.total == Traffic(rxBytes: 9000, txBytes: 900))
        let days = try store.queries.usage(.interface("eth0"), resolution: .day)
        #expect(days.map(\.tally.traffic.rxBytes) == [8000, 1000 + 1000])
        #expect(days.allSatisfy { $0.tally.imported })
        #expect(try store.queries.total("eth0")?.tally.traffic.rxBytes == 1000 + 9000)
        let again = try #require(try store.imports.vnStat(database, dryRun: false).first)
        #expect(again.buckets.isEmpty && again.alreadyImported == 5 && again.total == .zero)
        #expect(try store.queries.total("eth0")?.tally.traffic.rxBytes == 1000 + 9000)
        withExtendedLifetime(directory) {}
    }

    @Test("both counted: ifmeter's own count wins from its first sight; the total loses vnStat's overlapping finest rows")
    func overlap() throws {
        let firstSight = origin + 2 * 3600
        let (directory, store) = try store(firstSeen: firstSight)
        var database = VnStatDatabase.empty()
        database.interfaces = [vnstat(updated: origin + 4 * 3600)]
        let report = try #require(try store.imports.vnStat(database, dryRun: false).first)
        #expect(report.overlap?.from == firstSight)
        // The day containing the first sight and the hour after it end after it: left out.
        #expect(report.overlapSkipped == 2)
        #expect(report.buckets == [.day: 1, .hour: 2])
        #expect(report.total == Traffic(rxBytes: 9000 - 500, txBytes: 900 - 50))
        let days = try store.queries.usage(.interface("eth0"), resolution: .day)
        #expect(days.map(\.tally.traffic.rxBytes) == [8000, 1000])
        withExtendedLifetime(directory) {}
    }

    @Test("forget deletes what was imported too: a later import brings it back")
    func forgetThenImport() throws {
        let (directory, store) = try store(firstSeen: origin + 6 * 3600)
        var database = VnStatDatabase.empty()
        database.interfaces = [vnstat(updated: origin + 5 * 3600)]
        _ = try store.imports.vnStat(database, dryRun: false)
        #expect(try store.retention.forget("eth0"))
        #expect(try store.queries.total("eth0") == nil)
        let again = try #require(try store.imports.vnStat(database, dryRun: false).first)
        #expect(again.buckets.values.reduce(0, +) == 5 && again.total == Traffic(rxBytes: 9000, txBytes: 900))
        withExtendedLifetime(directory) {}
    }

    @Test("a name holding a NUL byte is that name, not the one before the NUL: nothing of eth0 is answered or forgotten for it")
    func nameWithNUL() throws {
        let (directory, store) = try store(firstSeen: origin + 6 * 3600)
        var database = VnStatDatabase.empty()
        database.interfaces = [vnstat(updated: origin + 5 * 3600)]
        _ = try store.imports.vnStat(database, dryRun: false)
        let before = try #require(try store.queries.total("eth0")?.tally.traffic)
        #expect(try store.queries.total("eth0\0x") == nil)
        #expect(try store.retention.forget("eth0\0x") == false)
        #expect(try store.queries.total("eth0")?.tally.traffic == before)
        withExtendedLifetime(directory) {}
    }

    @Test("a dry run reports and changes nothing")
    func dryRun() throws {
        let (directory, store) = try store(firstSeen: origin + 6 * 3600)
        var database = VnStatDatabase.empty()
        database.interfaces = [vnstat(updated: origin + 5 * 3600)]
        let report = try #require(try store.imports.vnStat(database, dryRun: true).first)
        #expect(report.buckets.values.reduce(0, +) == 5)
        #expect(try store.queries.total("eth0")?.tally.traffic.rxBytes == 1000)
        #expect(try store.queries.total("eth0")?.tally.imported == false)
        withExtendedLifetime(directory) {}
    }
}
