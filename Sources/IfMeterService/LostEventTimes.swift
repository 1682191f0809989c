/// When link events were lost (`events-lost`), so every figure whose period contains such a
/// moment is labelled: the loss cannot be pinned on one interface, since the links it hid are
/// the ones nobody saw.
///
/// A tenant flooding link events can make the daemon lose them on every read, so losses are
/// kept as runs: a loss within ``window`` of a run's start joins that run (and is not stored as
/// an event of its own), and past ``capacity`` runs the two oldest merge. A run covers every
/// moment from its first loss until ``window`` after it (or until the next run, or the later
/// run merged into it): a period is labelled when it overlaps a run, so a label may be given
/// where no loss was, never withheld where one was.
public struct LostEventTimes: Hashable, Sendable {
    /// Losses from `start` until before `end`, `count` of them.
    public struct Run: Hashable, Sendable {
        public var start: Double
        public var end: Double
        public var count: Int
    }

    /// How long after its first loss a run takes further losses in (and labels periods).
    public static let window = 60.0
    /// Runs kept; one more merges the two oldest.
    public static let capacity = 10_000

    /// Oldest first, none overlapping.
    public private(set) var runs: [Run] = []
    /// Losses before each run: `count(from:to:)` is two binary searches and a subtraction.
    private var before: [Int] = []
    /// Every loss recorded.
    public private(set) var total = 0

    /// Losses at `times` (stored events, each a run's first loss), in any order.
    public init(_ times: [Double] = []) {
        for time in times.sorted() { record(time) }
    }

    /// Records a loss at `time`; true when it begins a run (store it as an event), false when
    /// it joined one.
    @discardableResult
    public mutating func record(_ time: Double) -> Bool {
        total += 1
        let next = firstIndex { $0.start > time }
        if next > 0, time < runs[next - 1].end {
            runs[next - 1].count += 1
            recount(from: next)
            return false
        }
        let end = min(time + Self.window, next < runs.count ? runs[next].start : .infinity)
        runs.insert(Run(start: time, end: end, count: 1), at: next)
        before.insert(0, at: next)
        if runs.count > Self.capacity {
            runs[1] = Run(start: runs[0].start, end: runs[1].end, count: runs[0].count + runs[1].count)
            runs.removeFirst()
            before.removeFirst()
            recount(from: 0)
        } else {
            recount(from: next)
        }
        return true
    }

    /// Losses in runs overlapping `[from, to)`.
    public func count(from: Double, to: Double) -> Int {
        let first = firstIndex { $0.end > from }
        let last = firstIndex { $0.start >= to }
        guard first < last else { return 0 }
        return before[last - 1] + runs[last - 1].count - before[first]
    }

    /// The first run satisfying `predicate`, which is false then true along the runs.
    private func firstIndex(where predicate: (Run) -> Bool) -> Int {
        var low = 0, high = runs.count
        while low < high {
            let middle = (low + high) / 2
            if predicate(runs[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    private mutating func recount(from index: Int) {
        var sum = index > 0 ? before[index - 1] + runs[index - 1].count : 0
        for position in index..<runs.count {
            before[position] = sum
            sum += runs[position].count
        }
    }
}
