import IfMeterCore
import IfMeterJSON
import IfMeterStore
import IfMeterWire

/// A `query`'s work on the store's thread, checked and chosen on the loop: its answer whole
/// (the page, a table without a bound on its rows), or written and handed over in parts while
/// the rest is read, so that a reader of thousands of interfaces' tables reads the first while
/// the daemon reads the next.
struct QueryJob: Sendable {
    /// The answer but its tables.
    var head: QueryResult
    var subjects: [UsageSubject]
    var tables: [UsageTable]
    /// The names the request gave, each checked to be known.
    var asked: [String]?
    var context: UsageContext

    /// Subjects read and written together: a part of about 400 kB of JSON at three tables each.
    static let run = 256
    /// A part is handed over once this many bytes are written.
    static let partBytes = 1 << 16

    /// The whole result.
    func result(_ store: Store) throws -> QueryResult {
        try checkNames(store)
        var result = head
        result.usage = try UsageAnswers.tables(subjects, tables, store: store, context: context)
        return result
    }

    /// Whether the answer may go out in parts: only when no table can pass the answer's row
    /// budget after its first part went out (each table keeps at most `last` or `top` rows, or
    /// is a total). An answer refused for its size is refused whole, before any part.
    var streams: Bool {
        var rowsEach = 0
        for table in tables {
            if table.period == .total {
                rowsEach += 1
            } else if let bound = table.last ?? table.top {
                rowsEach += max(1, bound)
            } else {
                return false
            }
        }
        return rowsEach * subjects.count <= UsageAnswers.maximumRows
    }

    /// The answer's line, its first bytes handed to `handOver` as they are written. What fails
    /// before anything was handed over is answered as an error line; after, the line cannot be
    /// finished (``StreamedLine/torn``).
    func line(id: RequestID?, _ store: Store, handOver: ([UInt8]) -> Void) -> StreamedLine {
        var handedOver = false
        do {
            try checkNames(store)
            var reader = try UsageReader(tables, for: subjects, store: store, context: context)
            let line = try LineEncoder.success(id: id, capacity: 2 * Self.partBytes) { w in
                try head.write(to: &w) { w in
                    var start = 0
                    while start < subjects.count {
                        let end = min(start + Self.run, subjects.count)
                        for table in try reader.tables(subjects[start..<end]) { table.write(to: &w) }
                        start = end
                        if w.bytes.count >= Self.partBytes {
                            handOver(w.take())
                            handedOver = true
                        }
                    }
                }
            }
            return .rest(line)
        } catch {
            let failure = WireError(answering: error, id: id)
            return handedOver ? .torn(failure) : .rest(LineEncoder.failure(failure))
        }
    }

    func checkNames(_ store: Store) throws {
        if let asked, let unknown = try UsageAnswers.unknown(asked, store: store, context: context).first {
            throw RequestHandlers.unknownInterface(unknown)
        }
    }
}
