import IfMeterCore
import Testing
import IfMeterTestSupport

@Suite("SlotTable", .ownThread, .timeLimit(.minutes(3)))
struct SlotTableTests {
    @Test("behaves as the dictionary it replaces through inserts, updates and removals in any order")
    func againstDictionary() {
        var table = SlotTable<Int>()
        var dictionary: [LinkKey: Int] = [:]
        let seed = TestSeed("SlotTable against Dictionary")
        var generator = seed.generator
        for step in 0..<5000 {
            // Two namespaces sharing ifindexes: the same ifindex in each is two keys.
            let key = LinkKey(NamespaceID(rawValue: UInt32.random(in: 0..<2, using: &generator)),
                              ifindex: Int32.random(in: 0..<200, using: &generator))
            switch Int.random(in: 0..<5, using: &generator) {
            case 0: (table[key], dictionary[key]) = (nil, nil)
            case 1: #expect(table.removeValue(forKey: key) == dictionary.removeValue(forKey: key))
            case 2:
                table[key, default: 0] += step
                dictionary[key, default: 0] += step
            case 3:
                table.update(key) { $0 -= 1 }
                dictionary[key]? -= 1
            default:
                if let position = table.position(of: key) {
                    #expect(table.keys[position] == key, "\(seed)")
                    table[position: position] *= 3
                }
                dictionary[key]? *= 3
            }
            #expect(table.count == dictionary.count, "\(seed)")
            #expect(table[key] == dictionary[key], "\(seed)")
        }
        #expect(Dictionary(uniqueKeysWithValues: table.map { ($0.key, $0.value) }) == dictionary, "\(seed)")
        #expect(Set(table.keys) == Set(dictionary.keys), "\(seed)")
        #expect(SlotTable(dictionary) == table, "\(seed)")
        #expect(table.values.sorted() == dictionary.values.sorted(), "\(seed)")
        let doubled = table.mapValues { $0 * 2 }
        #expect(table.keys.allSatisfy { doubled[$0] == table[$0].map { $0 * 2 } }, "\(seed)")
    }

    @Test("finds every key through growth and removals that shift its probe run, at thousands of links")
    func thousands() {
        let seed = TestSeed("SlotTable thousands")
        var generator = seed.generator
        let keys = (0..<6000).map { LinkKey(NamespaceID(rawValue: UInt32($0 % 3)), ifindex: Int32($0 / 3 + 1)) }
        var table = SlotTable<Int>()
        for (order, key) in keys.enumerated() { table[key] = order }
        var present = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($0.element, $0.offset) })
        for key in keys.shuffled(using: &generator).prefix(4500) {
            #expect(table.removeValue(forKey: key) == present.removeValue(forKey: key), "\(seed)")
        }
        #expect(table.count == present.count)
        for key in keys { #expect(table[key] == present[key], "\(seed) \(key)") }
        for (position, key) in table.keys.enumerated() { #expect(table.position(of: key) == position) }
    }

    @Test("equal and hashed alike whatever the order its entries came in")
    func orderFree() {
        let forward = SlotTable([1, 2, 3].map(Int32.init), key: { LinkKey(ifindex: $0) })
        var backward = SlotTable<Int32>()
        for key: Int32 in [3, 2, 1] { backward[LinkKey(ifindex: key)] = key }
        #expect(forward == backward)
        #expect(forward.hashValue == backward.hashValue)
        backward[LinkKey(ifindex: 2)] = 9
        #expect(forward != backward)
    }

    @Test("adopting an array gives the table built value by value, duplicate keys included",
          arguments: [[Int32](), [5, 1, 9, 2], [5, 1, 5, 2, 1]])
    func adopting(keys: [Int32]) {
        let values = keys.enumerated().map { (key: LinkKey(ifindex: $0.element), order: $0.offset) }
        let adopted = SlotTable(adopting: values, key: \.key)
        let built = SlotTable(values, key: \.key)
        #expect(adopted.count == Set(keys).count)
        #expect(adopted.keys.map { adopted[$0]!.order } == adopted.keys.map { built[$0]!.order })
        for key in Set(keys) {
            #expect(adopted[LinkKey(ifindex: key)]?.order == keys.lastIndex(of: key))
        }
        var changed = adopted
        if let first = keys.first.map({ LinkKey(ifindex: $0) }) {
            changed[first] = nil
            #expect(changed[first] == nil && changed.count == adopted.count - 1)
            #expect(adopted[first] != nil)
        }
    }
}
