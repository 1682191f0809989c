/// When link events were lost (`events-lost`), so every figure whose period contains such a
/// moment is labelled: the loss cannot be pinned on one interface, since the links it hid are
/// the ones nobody saw.
public struct LostEventTimes: Hashable, Sendable {
    /// Sorted, oldest first.
    public private(set) var times: [Double] = []

    public init(_ times: [Double] = []) {
        self.times = times.sorted()
    }

    public mutating func record(_ time: Double) {
        times.insert(time, at: times.firstIndex { $0 > time } ?? times.endIndex)
    }

    /// How many fall in `[from, to)`.
    public func count(from: Double, to: Double) -> Int {
        times.lazy.filter { $0 >= from && $0 < to }.count
    }
}
