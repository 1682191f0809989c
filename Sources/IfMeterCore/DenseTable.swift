/// Per-link state keyed by ``LinkKey`` (namespace and ifindex), stored densely.
public typealias SlotTable<Value> = DenseTable<LinkKey, Value>

/// Values stored densely: in one array, with their keys in another and an index of 4 bytes a
/// slot from key to position. A `Dictionary` of 4000 links keeps 8192 slots of the whole key
/// and value (its capacity is a power of two above 4/3 of the count), and a `[LinkKey: Int32]`
/// index 12 bytes a slot; this keeps one key and value per entry and a slot table of positions,
/// 8 bytes an entry at 4000 (docs/BENCHMARKS.md). For state held per link or per name.
///
/// Shaped like the dictionaries it replaces (subscript by key, nil removes, `keys`, `values`,
/// iteration as `(key, value)` pairs); the order is not meaningful (a removal moves the last
/// value into the gap), so readers that need one sort by key.
public struct DenseTable<Key: Hashable, Value> {
    /// Open addressing with linear probing over a power-of-two table: each slot holds the
    /// position of its key in ``keys`` plus one, 0 when empty. Keys are hashed with the
    /// process's seeded `Hasher`, as a `Dictionary` would.
    private var slots: [Int32] = []
    public private(set) var keys: [Key] = []
    public private(set) var values: [Value] = []

    public init() {}

    /// The table of `values`, each under `key(value)`; a later value with the same key wins.
    public init(_ values: some Sequence<Value>, key: (Value) -> Key) {
        reserveCapacity(values.underestimatedCount)
        for value in values { self[key(value)] = value }
    }

    /// The table of a dictionary's (or any sequence's) pairs; a later pair with the same key wins.
    public init(_ pairs: some Sequence<(key: Key, value: Value)>) {
        reserveCapacity(pairs.underestimatedCount)
        for (key, value) in pairs { self[key] = value }
    }

    /// The table of `values` when their keys are unique: the table shares the array's storage
    /// instead of copying it (a full dump of thousands of links is megabytes). Otherwise as
    /// ``init(_:key:)``, a later value winning.
    public init(adopting values: [Value], key: (Value) -> Key) {
        keys = values.map(key)
        slots = Array(repeating: 0, count: Self.slotCount(for: keys.count))
        for position in keys.indices {
            let (slot, found) = find(keys[position])
            guard !found else {
                self = DenseTable(values, key: key)
                return
            }
            slots[slot] = Int32(position + 1)
        }
        self.values = values
    }

    /// Room for `count` values without growing the index or the arrays.
    public mutating func reserveCapacity(_ count: Int) {
        keys.reserveCapacity(count)
        values.reserveCapacity(count)
        if Self.slotCount(for: count) > slots.count { rebuildSlots(count: Self.slotCount(for: count)) }
    }

    /// The smallest power of two of at least 16 slots that holds `count` keys at most 3/4 full.
    private static func slotCount(for count: Int) -> Int {
        var slots = 16
        while slots / 4 * 3 < count { slots *= 2 }
        return slots
    }

    private func home(of key: Key) -> Int { key.hashValue & (slots.count - 1) }

    /// The slot holding `key`, or the empty slot where it would go.
    private func find(_ key: Key) -> (slot: Int, found: Bool) {
        let mask = slots.count - 1
        var slot = home(of: key)
        while true {
            let entry = slots[slot]
            if entry == 0 { return (slot, false) }
            if keys[Int(entry) - 1] == key { return (slot, true) }
            slot = (slot + 1) & mask
        }
    }

    private func position(ofPresent key: Key) -> Int? {
        guard !slots.isEmpty else { return nil }
        let (slot, found) = find(key)
        return found ? Int(slots[slot]) - 1 : nil
    }

    private mutating func rebuildSlots(count: Int) {
        slots = Array(repeating: 0, count: count)
        for position in keys.indices { slots[find(keys[position]).slot] = Int32(position + 1) }
    }

    /// Appends `value` under `key`, which is not in the table; its position.
    private mutating func insert(_ key: Key, _ value: Value) -> Int {
        if Self.slotCount(for: keys.count + 1) > slots.count { rebuildSlots(count: Self.slotCount(for: keys.count + 1)) }
        let position = keys.count
        slots[find(key).slot] = Int32(position + 1)
        keys.append(key)
        values.append(value)
        return position
    }

    /// Empties `slot` without breaking a probe run through it: each later key of the run that
    /// could live in the hole moves back into it (backward-shift deletion).
    private mutating func vacate(_ slot: Int) {
        let mask = slots.count - 1
        var hole = slot
        var next = (hole + 1) & mask
        while slots[next] != 0 {
            let home = home(of: keys[Int(slots[next]) - 1])
            if (next &- home) & mask >= (next &- hole) & mask {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = 0
    }

    public var count: Int { values.count }
    public var isEmpty: Bool { values.isEmpty }

    public subscript(key: Key) -> Value? {
        get { position(ofPresent: key).map { values[$0] } }
        set {
            if let newValue {
                if let position = position(ofPresent: key) {
                    values[position] = newValue
                } else {
                    _ = insert(key, newValue)
                }
            } else {
                _ = removeValue(forKey: key)
            }
        }
    }

    /// The value under `key`, inserting `defaultValue` first when there is none; modified in place.
    public subscript(key: Key, default defaultValue: @autoclosure () -> Value) -> Value {
        get { self[key] ?? defaultValue() }
        _modify {
            let position = position(ofPresent: key) ?? insert(key, defaultValue())
            yield &values[position]
        }
    }

    /// Where `key`'s value is in ``values``, valid until the next insertion or removal: for work
    /// that reads and changes it in place through ``subscript(position:)``.
    public func position(of key: Key) -> Int? {
        position(ofPresent: key)
    }

    /// The value at `position` (from ``position(of:)``), modified in place.
    public subscript(position position: Int) -> Value {
        get { values[position] }
        _modify { yield &values[position] }
    }

    /// Modifies the value under `key` in place, if there is one.
    public mutating func update(_ key: Key, _ body: (inout Value) -> Void) {
        guard let position = position(ofPresent: key) else { return }
        body(&values[position])
    }

    @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        guard !slots.isEmpty else { return nil }
        let (slot, found) = find(key)
        guard found else { return nil }
        let position = Int(slots[slot]) - 1
        vacate(slot)
        let removed = values[position]
        let last = values.count - 1
        if position != last {
            slots[find(keys[last]).slot] = Int32(position + 1)
            values[position] = values[last]
            keys[position] = keys[last]
        }
        values.removeLast()
        keys.removeLast()
        return removed
    }

    /// The same pairs as a dictionary.
    public var dictionary: [Key: Value] { Dictionary(uniqueKeysWithValues: zip(keys, values)) }

    /// The same keys with each value transformed.
    public func mapValues<T>(_ transform: (Value) throws -> T) rethrows -> DenseTable<Key, T> {
        var mapped = DenseTable<Key, T>()
        mapped.slots = slots
        mapped.keys = keys
        mapped.values = try values.map(transform)
        return mapped
    }
}

extension DenseTable: Sequence {
    public func makeIterator() -> some IteratorProtocol<(key: Key, value: Value)> {
        zip(keys, values).lazy.map { (key: $0, value: $1) }.makeIterator()
    }

    public var underestimatedCount: Int { values.count }
}

extension DenseTable: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (Key, Value)...) {
        self.init(elements.lazy.map { (key: $0.0, value: $0.1) })
    }
}

extension DenseTable: Sendable where Key: Sendable, Value: Sendable {}

extension DenseTable: Equatable where Value: Equatable {
    /// Equal when they hold the same values under the same keys, in whatever order.
    public static func == (lhs: DenseTable, rhs: DenseTable) -> Bool {
        lhs.count == rhs.count && lhs.keys.allSatisfy { lhs[$0] == rhs[$0] }
    }
}

extension DenseTable: Hashable where Value: Hashable {
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
