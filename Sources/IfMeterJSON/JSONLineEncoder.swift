/// Encodes `Encodable` values as compact JSON with sorted keys and unescaped slashes, straight
/// into bytes. It replaces FoundationEssentials' `JSONEncoder` on the daemon's hot paths
/// (every response and estimate-log record): that one builds a tree of boxed values first,
/// and answering `interfaces` for 1000 links spent almost all its time there.
///
/// Numbers: integers as they are; a `Double` that holds a whole number below 2⁵³ without a
/// fraction (`1774944000`), any other finite one in Swift's shortest round-trip form. A
/// non-finite double has no JSON form and is written `null` ("not known"), never a crash.
public struct JSONLineEncoder: Sendable {
    public init() {}

    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let root = Node.Box()
        try value.encode(to: NodeEncoder(box: root, codingPath: []))
        var out: [UInt8] = []
        out.reserveCapacity(256)
        root.node.write(to: &out)
        return out
    }
}

/// The value being built. Objects keep their keys unsorted until written.
indirect enum Node {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([Slot])
    case object([(String, Slot)])

    /// A member or element: finished when it is a scalar, filled later when it is a container.
    enum Slot {
        case done(Node)
        case later(Box)

        var node: Node {
            switch self {
            case .done(let node): node
            case .later(let box): box.node
            }
        }
    }

    /// A slot a container fills in later (a nested container, or a value encoded by a child encoder).
    final class Box {
        var node: Node = .null
    }

    func write(to out: inout [UInt8]) {
        switch self {
        case .null: out += "null".utf8
        case .bool(let value): out += (value ? "true" : "false").utf8
        case .number(let text): out += text.utf8
        case .string(let text): Self.writeString(text, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                item.node.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            // Sorted by UTF-8 bytes, as Foundation's `.sortedKeys` orders ASCII keys; a key
            // written twice keeps its last value, as in Foundation.
            let sorted = members.indices.sorted {
                let (a, b) = (members[$0].0, members[$1].0)
                return a == b ? $0 < $1 : a.utf8.lexicographicallyPrecedes(b.utf8)
            }
            var first = true
            for (position, index) in sorted.enumerated() {
                if position + 1 < sorted.count && members[sorted[position + 1]].0 == members[index].0 { continue }
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                Self.writeString(members[index].0, to: &out)
                out.append(UInt8(ascii: ":"))
                members[index].1.node.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func writeString(_ text: String, to out: inout [UInt8]) {
        JSONWriter.appendString(text, to: &out)
    }

    static func number(_ value: Double) -> Node {
        guard value.isFinite else { return .null }
        if value == value.rounded(.towardZero) && abs(value) < 9_007_199_254_740_992 {
            return .number(String(Int64(value)))
        }
        return .number(value.description)
    }
}

private struct NodeEncoder: Encoder {
    let box: Node.Box
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        // A type may ask for its keyed container more than once (a subclass, a wrapper): keep the members.
        if case .object = box.node {} else { box.node = .object([]) }
        return KeyedEncodingContainer(KeyedContainer<Key>(box: box, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = box.node {} else { box.node = .array([]) }
        return UnkeyedContainer(box: box, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleContainer(box: box, codingPath: codingPath)
    }
}

/// Scalars every container turns into nodes the same way.
private protocol NodeWriting {
    var codingPath: [any CodingKey] { get }
}

extension NodeWriting {
    /// `path` is built only for a value that needs an encoder of its own.
    func node<T: Encodable>(_ value: T, at path: @autoclosure () -> [any CodingKey]) throws -> Node {
        switch value {
        case let string as String: return .string(string)
        case let bool as Bool: return .bool(bool)
        case let double as Double: return Node.number(double)
        case let float as Float: return Node.number(Double(float))
        case let int as Int: return .number(String(int))
        case let int as Int8: return .number(String(int))
        case let int as Int16: return .number(String(int))
        case let int as Int32: return .number(String(int))
        case let int as Int64: return .number(String(int))
        case let uint as UInt: return .number(String(uint))
        case let uint as UInt8: return .number(String(uint))
        case let uint as UInt16: return .number(String(uint))
        case let uint as UInt32: return .number(String(uint))
        case let uint as UInt64: return .number(String(uint))
        default:
            let box = Node.Box()
            try value.encode(to: NodeEncoder(box: box, codingPath: path()))
            return box.node
        }
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol, NodeWriting {
    let box: Node.Box
    let codingPath: [any CodingKey]

    private func append(_ key: Key, _ node: Node) {
        append(key, .done(node))
    }

    private func append(_ key: Key, _ slot: Node.Slot) {
        guard case .object(var members) = box.node else { return }
        box.node = .null  // leave the array uniquely referenced while it grows
        members.append((key.stringValue, slot))
        box.node = .object(members)
    }

    mutating func encodeNil(forKey key: Key) throws { append(key, .null) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        append(key, try node(value, at: codingPath + [key]))
    }

    // The common scalars directly, without a dynamic cast each.
    mutating func encode(_ value: String, forKey key: Key) throws { append(key, .string(value)) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { append(key, .bool(value)) }
    mutating func encode(_ value: Double, forKey key: Key) throws { append(key, Node.number(value)) }
    mutating func encode(_ value: Int, forKey key: Key) throws { append(key, .number(String(value))) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { append(key, .number(String(value))) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { append(key, .number(String(value))) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { append(key, .number(String(value))) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey> {
        let member = Node.Box()
        member.node = .object([])
        append(key, .later(member))
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(box: member, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let member = Node.Box()
        member.node = .array([])
        append(key, .later(member))
        return UnkeyedContainer(box: member, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { superEncoder(forKey: Key(stringValue: "super")!) }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let member = Node.Box()
        append(key, .later(member))
        return NodeEncoder(box: member, codingPath: codingPath + [key])
    }
}

private struct IndexKey: CodingKey {
    var stringValue: String { String(intValue ?? 0) }
    var intValue: Int?
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer, NodeWriting {
    let box: Node.Box
    let codingPath: [any CodingKey]

    var count: Int {
        if case .array(let items) = box.node { return items.count }
        return 0
    }

    private func append(_ slot: Node.Slot) {
        guard case .array(var items) = box.node else { return }
        box.node = .null
        items.append(slot)
        box.node = .array(items)
    }

    mutating func encodeNil() throws {
        append(.done(.null))
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        append(.done(try node(value, at: codingPath + [IndexKey(count)])))
    }

    mutating func encode(_ value: String) throws { append(.done(.string(value))) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let member = Node.Box()
        member.node = .object([])
        let path = codingPath + [IndexKey(count)]
        append(.later(member))
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(box: member, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let member = Node.Box()
        member.node = .array([])
        let path = codingPath + [IndexKey(count)]
        append(.later(member))
        return UnkeyedContainer(box: member, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let member = Node.Box()
        let path = codingPath + [IndexKey(count)]
        append(.later(member))
        return NodeEncoder(box: member, codingPath: path)
    }
}

private struct SingleContainer: SingleValueEncodingContainer, NodeWriting {
    let box: Node.Box
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { box.node = .null }

    mutating func encode<T: Encodable>(_ value: T) throws {
        box.node = try node(value, at: codingPath)
    }
}
