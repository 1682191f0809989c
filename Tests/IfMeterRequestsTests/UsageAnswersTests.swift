import IfMeterCore
@testable import IfMeterRequests
import IfMeterHistory
import IfMeterService
@testable import IfMeterStore
import IfMeterTestSupport
@testable import IfMeterWire
import Testing

/// Usage tables for many subjects from a real store: what each spec keeps, and the bound on
/// what one answer may hold.
@Suite("Usage answers", .ownThread, .timeLimit(.minutes(3)))
struct UsageAnswersTests {
    /// Three names with ten hourly buckets each; the busiest hour of `eth1` is its fourth.
    static func store(in directory: TemporaryDirectory) throws -> Store {
        var configuration = HistoryConfiguration()
        configuration.calendar = BucketCalendar(zone: .utc)
        let store = try Store(path: directory.database, configuration: configuration)
        var pending = PendingWrites()
        var output = MeterOutput()
        let epoch = Epoch(bootID: "b", ifindex: 2, generation: 1, since: 0)
        for (index, name) in ["eth0", "eth1", "eth2"].enumerated() {
            for hour in 0..<10 {
                let bytes = UInt64(100 * (index + 1) + (name == "eth1" && hour == 3 ? 10_000 : hour))
                output.deltas.append(MeterDelta(name: name, ifindex: Int32(2 + index), epoch: epoch,
                                                traffic: Traffic(rxBytes: bytes), at: 1_790_000_000 + Double(hour) * 3600))
            }
        }
        pending.add(output, calendar: store.configuration.calendar, monthStartDay: { _ in 1 })
        try store.writer.save(&pending)
        return store
    }

    static let context = UsageContext(tunnels: [], lostEvents: LostEvents(), known: ["eth0", "eth1", "eth2"], now: 1_790_100_000)
    static let subjects: [UsageSubject] = [.interface("eth0"), .interface("eth1"), .interface("eth2")]

    @Test("last keeps each subject's newest rows, top its busiest first; tables come subject by subject")
    func lastAndTop() throws {
        let directory = try TemporaryDirectory()
        let store = try Self.store(in: directory)
        let last = UsageTable(period: .hour, last: 2)
        let top = UsageTable(period: .hour, top: 1)
        let tables = try UsageAnswers.tables(Self.subjects, [last, top], store: store, context: Self.context)
        #expect(tables.map(\.interface) == ["eth0", "eth0", "eth1", "eth1", "eth2", "eth2"])
        #expect(tables[0].rows.map(\.rxBytes) == [108, 109])
        #expect(tables[3].rows.map(\.rxBytes) == [10_200])
        #expect(tables[5].rows.map(\.rxBytes) == [309])
        #expect(throws: WireError.self) { _ = try UsageTable(period: "hour", from: nil, to: nil, projection: nil, last: 1, top: 1) }
    }

    @Test("an answer that would pass the row budget is refused with what to ask instead")
    func budget() throws {
        let directory = try TemporaryDirectory()
        let store = try Self.store(in: directory)
        let every = UsageTable(period: .hour)
        #expect(try UsageAnswers.tables(Self.subjects, [every], store: store, context: Self.context, maximumRows: 30)
            .map(\.rows.count) == [10, 10, 10])
        let error = try #require(throws: WireError.self) {
            _ = try UsageAnswers.tables(Self.subjects, [every], store: store, context: Self.context, maximumRows: 29)
        }
        #expect(error.code == .badRequest && error.message.contains("last, top"))
        let last = UsageTable(period: .hour, last: 9)
        #expect(try UsageAnswers.tables(Self.subjects, [last], store: store, context: Self.context, maximumRows: 29)
            .map(\.rows.count) == [9, 9, 9])
    }

    /// Each was once answered beyond the budget: the store's read counted a name once, and
    /// totals and class sums not at all.
    @Test("the budget counts what is answered: a name asked again, totals, a class's sum, an empty table")
    func budgetCountsAnswered() throws {
        let directory = try TemporaryDirectory()
        let store = try Self.store(in: directory)
        let every = UsageTable(period: .hour)
        let repeated = Array(repeating: UsageSubject.interface("eth0"), count: 3)
        #expect(try UsageAnswers.tables(repeated, [every], store: store, context: Self.context, maximumRows: 30).count == 3)
        #expect(throws: WireError.self) { _ = try UsageAnswers.tables(repeated, [every], store: store, context: Self.context, maximumRows: 29) }
        let total = UsageTable(period: .total)
        let many = Array(repeating: UsageSubject.interface("eth1"), count: 20)
        #expect(try UsageAnswers.tables(many, [total], store: store, context: Self.context, maximumRows: 20).count == 20)
        #expect(throws: WireError.self) { _ = try UsageAnswers.tables(many, [total], store: store, context: Self.context, maximumRows: 19) }
        let classes = Array(repeating: UsageSubject.interfaceClass(.ethernet), count: 5)
        #expect(throws: WireError.self) { _ = try UsageAnswers.tables(classes, [total, every], store: store, context: Self.context, maximumRows: 9) }
        let unknown = (0..<40).map { UsageSubject.interface("none\($0)") }
        #expect(throws: WireError.self) { _ = try UsageAnswers.tables(unknown, [every], store: store, context: Self.context, maximumRows: 39) }
    }
}
