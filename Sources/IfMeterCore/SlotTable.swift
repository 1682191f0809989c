/// Per-link state keyed by ``LinkKey`` (namespace and ifindex), stored densely: the values in
/// one array, a small index from key to position. A `Dictionary` of 4000 links keeps 8192 slots of the whole value
/// (its capacity is a power of two above 4/3 of the count); this keeps one value per link and
/// 8 bytes of index per slot, which is most of what the daemon holds per link.
///
/// Shaped like the dictionaries it replaces (subscript by key, nil removes, `keys`, `values`,
/// iteration as `(key, value)` pairs); the order is not meaningful (a removal moves the last
/// value into the gap), so readers that need one sort by key.
public struct SlotTable<Value> {
    private var positions: [LinkKey: Int32] = [:]
    public private(set) var keys: [LinkKey] = []
    public private(set) var values: [Value] = []

    public init() {}

    /// The table of `values`, each under `key(value)`; a later value with the same key wins.
    public init(_ values: some Sequence<Value>, key: (Value) -> LinkKey) {
        keys.reserveCapacity(values.underestimatedCount)
        self.values.reserveCapacity(values.underestimatedCount)
        positions.reserveCapacity(values.underestimatedCount)
        for value in values { self[key(value)] = value }
    }

    /// The table of `values` when their keys are unique: the table shares the array's storage
    /// instead of copying it (a full dump of thousands of links is megabytes). Otherwise as
    /// ``init(_:key:)``, a later value winning.
    public init(adopting values: [Value], key: (Value) -> LinkKey) {
        let keys = values.map(key)
        var positions: [LinkKey: Int32] = [:]
        positions.reserveCapacity(keys.count)
        for (position, key) in keys.enumerated() { positions[key] = Int32(position) }
        guard positions.count == keys.count else {
            self = SlotTable(values, key: key)
            return
        }
        self.positions = positions
        self.keys = keys
        self.values = values
    }

    public var count: Int { values.count }
    public var isEmpty: Bool { values.isEmpty }

    public subscript(key: LinkKey) -> Value? {
        get { positions[key].map { values[Int($0)] } }
        set {
            if let newValue {
                if let position = positions[key] {
                    values[Int(position)] = newValue
                } else {
                    positions[key] = Int32(values.count)
                    keys.append(key)
                    values.append(newValue)
                }
            } else {
                _ = removeValue(forKey: key)
            }
        }
    }

    /// The value under `key`, inserting `defaultValue` first when there is none; modified in place.
    public subscript(key: LinkKey, default defaultValue: @autoclosure () -> Value) -> Value {
        get { self[key] ?? defaultValue() }
        _modify {
            let position: Int
            if let found = positions[key] {
                position = Int(found)
            } else {
                position = values.count
                positions[key] = Int32(position)
                keys.append(key)
                values.append(defaultValue())
            }
            yield &values[position]
        }
    }

    /// Where `key`'s value is in ``values``, valid until the next insertion or removal: for work
    /// that reads and changes it in place through ``subscript(position:)``.
    public func position(of key: LinkKey) -> Int? {
        positions[key].map(Int.init)
    }

    /// The value at `position` (from ``position(of:)``), modified in place.
    public subscript(position position: Int) -> Value {
        get { values[position] }
        _modify { yield &values[position] }
    }

    /// Modifies the value under `key` in place, if there is one.
    public mutating func update(_ key: LinkKey, _ body: (inout Value) -> Void) {
        guard let position = positions[key] else { return }
        body(&values[Int(position)])
    }

    @discardableResult
    public mutating func removeValue(forKey key: LinkKey) -> Value? {
        guard let position = positions.removeValue(forKey: key).map(Int.init) else { return nil }
        let removed = values[position]
        let last = values.count - 1
        if position != last {
            values[position] = values[last]
            keys[position] = keys[last]
            positions[keys[position]] = Int32(position)
        }
        values.removeLast()
        keys.removeLast()
        return removed
    }

    /// The same keys with each value transformed.
    public func mapValues<T>(_ transform: (Value) throws -> T) rethrows -> SlotTable<T> {
        var mapped = SlotTable<T>()
        mapped.positions = positions
        mapped.keys = keys
        mapped.values = try values.map(transform)
        return mapped
    }
}

extension SlotTable: Sequence {
    public func makeIterator() -> some IteratorProtocol<(key: LinkKey, value: Value)> {
        zip(keys, values).lazy.map { (key: $0, value: $1) }.makeIterator()
    }

    public var underestimatedCount: Int { values.count }
}

extension SlotTable: Sendable where Value: Sendable {}

extension SlotTable: Equatable where Value: Equatable {
    /// Equal when they hold the same values under the same keys, in whatever order.
    public static func == (lhs: SlotTable, rhs: SlotTable) -> Bool {
        lhs.count == rhs.count && lhs.keys.allSatisfy { lhs[$0] == rhs[$0] }
    }
}

extension SlotTable: Hashable where Value: Hashable {
    public func hash(into hasher: inout Hasher) {
        // Order-independent, like Dictionary's: a sum of each entry's own hash.
        var sum = 0
        for (key, value) in self {
            var entry = Hasher()
            entry.combine(key)
            entry.combine(value)
            sum &+= entry.finalize()
        }
        hasher.combine(count)
        hasher.combine(sum)
    }
}
