import IfMeterCore
@testable import IfMeterRequests
import IfMeterHistory
import IfMeterService
@testable import IfMeterStore
import IfMeterTestSupport
@testable import IfMeterWire
import Testing

/// A query's answer sent in parts while the rest is read: the same bytes as the answer whole,
/// only for tables that cannot pass the row budget, and a failure after the first part tears
/// the line instead of ending it with anything a reader could take for the whole answer.
@Suite("Query answers in parts", .ownThread, .timeLimit(.minutes(3)))
struct QueryJobTests {
    /// `count` names with two days of hourly traffic each.
    static func store(in directory: TemporaryDirectory, names count: Int) throws -> (Store, [String]) {
        var configuration = HistoryConfiguration()
        configuration.calendar = BucketCalendar(zone: .utc)
        let store = try Store(path: directory.database, configuration: configuration)
        var pending = PendingWrites()
        var output = MeterOutput()
        let names = (0..<count).map { "veth\($0)" }
        let epoch = Epoch(bootID: "b", ifindex: 2, generation: 1, since: 0)
        for (index, name) in names.enumerated() {
            for hour in stride(from: 0, to: 48, by: 6) {
                output.deltas.append(MeterDelta(name: name, ifindex: Int32(2 + index), epoch: epoch,
                                                traffic: Traffic(rxBytes: UInt64(1000 * index + hour), txBytes: UInt64(hour)),
                                                at: 1_790_000_000 + Double(hour) * 3600))
            }
        }
        pending.add(output, calendar: store.configuration.calendar, monthStartDay: { _ in 1 })
        try store.writer.save(&pending)
        return (store, names)
    }

    static func job(_ names: [String], _ tables: [UsageTable]) -> QueryJob {
        let context = UsageContext(tunnels: [], lostEvents: LostEvents(), known: Set(names), now: 1_790_200_000)
        let head = QueryResult(status: nil, subjects: names.map { QuerySubject(name: $0, class: "virtual") }, interfaces: nil,
                               usage: [], footnote: EstimateLabel.footnote)
        return QueryJob(head: head, subjects: names.map { .interface($0) }, tables: tables, asked: nil, context: context)
    }

    /// The summary's tables: at most two days and two months each, and the total.
    static let summaryTables = [UsageTable(period: .day, from: 1_789_900_000, projection: true, last: 2),
                                UsageTable(period: .month, projection: true, last: 2), UsageTable(period: .total)]

    @Test("the parts and the rest are the whole answer's bytes, in more than one part")
    func partsMakeTheWhole() throws {
        let directory = try TemporaryDirectory()
        let (store, names) = try Self.store(in: directory, names: 3 * QueryJob.run + 7)
        let job = Self.job(names, Self.summaryTables)
        #expect(job.streams)
        var parts: [[UInt8]] = []
        guard case .rest(let rest) = job.line(id: .number(3), store, handOver: { parts.append($0) }) else {
            Issue.record("the answer did not end")
            return
        }
        let whole = LineEncoder.success(try job.result(store), id: .number(3))
        #expect(parts.count >= 2, "handed over in \(parts.count) parts")
        #expect(parts.allSatisfy { !$0.contains(UInt8(ascii: "\n")) })
        #expect(parts.joined() + rest == whole)
        let read = try ResponseLine(Array(whole.dropLast())).result(as: QueryResult.self)
        #expect(read.usage.count == 3 * names.count)
        #expect(read.usage.last?.interface == names.last)
    }

    @Test("tables without a bound on their rows are answered whole, since they may pass the budget",
          arguments: [[UsageTable(period: .hour)], [UsageTable(period: .day, from: 0)],
                      [UsageTable(period: .hour, last: UsageAnswers.maximumRows / 2 + 1), UsageTable(period: .total)]])
    func unboundedIsWhole(tables: [UsageTable]) throws {
        #expect(!Self.job(["a", "b"], tables).streams)
    }

    @Test("a failure after a part went out tears the line; before any part, it is the error line")
    func failureTears() throws {
        let directory = try TemporaryDirectory()
        let (store, names) = try Self.store(in: directory, names: 2 * QueryJob.run)
        let job = Self.job(names, Self.summaryTables)
        // The store breaks once the first part is out: the next run's reads fail.
        var parts = 0
        let ending = job.line(id: .number(4), store) { _ in
            parts += 1
            if parts == 1 { try? store.connection.execute("DROP TABLE buckets", "break the store") }
        }
        guard case .torn(let error) = ending else {
            Issue.record("a failure after a part ended the line: \(ending)")
            return
        }
        #expect(error.code == .storeError)
        #expect(error.id == .number(4))
        // Broken before it begins: an error line, nothing handed over.
        var before = 0
        guard case .rest(let line) = job.line(id: .number(5), store, handOver: { _ in before += 1 }) else {
            Issue.record("a failure before any part tore the line")
            return
        }
        #expect(before == 0)
        #expect(try ResponseLine(Array(line.dropLast())).error?.code == .storeError)
    }
}
