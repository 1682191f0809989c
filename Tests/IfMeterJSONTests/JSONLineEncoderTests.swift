import Foundation
import IfMeterJSON
import Testing

@Suite("JSONLineEncoder")
struct JSONLineEncoderTests {
    struct Inner: Codable, Equatable {
        var name: String
        var values: [UInt64]
        var maybe: Double?
    }

    struct Sample: Codable, Equatable {
        var text: String
        var count: Int
        var big: UInt64
        var negative: Int64
        var small: Int32
        var whole: Double
        var fraction: Double
        var flag: Bool
        var missing: String?
        var inner: Inner
        var list: [Inner]
        var map: [String: Int]
        var nested: [[String]]

        enum CodingKeys: String, CodingKey {
            case text, count, big, negative, small, whole, fraction, flag, missing, inner, list, map, nested
            case snakeCase = "snake_case"
        }

        init(text: String) {
            self.text = text
            count = -42
            big = .max
            negative = .min
            small = 7
            whole = 1_774_944_000
            fraction = 0.125
            flag = true
            missing = nil
            inner = Inner(name: "eth0", values: [1, 2, 3], maybe: 2.5)
            list = [Inner(name: "a", values: [], maybe: nil), Inner(name: "b/c", values: [0], maybe: 1774785600.5)]
            map = ["zeta": 1, "alpha": 2, "Beta": 3, "_under": 4]
            nested = [[], ["x"]]
        }

        init(from decoder: any Decoder) throws { fatalError("not needed") }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(text, forKey: .text)
            try container.encode(count, forKey: .count)
            try container.encode(big, forKey: .big)
            try container.encode(negative, forKey: .negative)
            try container.encode(small, forKey: .small)
            try container.encode(whole, forKey: .whole)
            try container.encode(fraction, forKey: .fraction)
            try container.encode(flag, forKey: .flag)
            try container.encodeIfPresent(missing, forKey: .missing)
            try container.encode(inner, forKey: .inner)
            try container.encode(list, forKey: .list)
            try container.encode(map, forKey: .map)
            try container.encode(nested, forKey: .nested)
            try container.encode("under_score sorts before letters", forKey: .snakeCase)
        }
    }

    static func foundation<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func ours<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try JSONLineEncoder().encode(value), as: UTF8.self)
    }

    @Test("byte for byte what Foundation's JSONEncoder writes with sorted keys", arguments: [
        "plain", "quote \" backslash \\ slash /", "line\nbreak\ttab\rreturn", "control \u{01}\u{1F}",
        "unicode é 日本 🚀", "",
    ])
    func sameAsFoundation(text: String) throws {
        let sample = Sample(text: text)
        #expect(try Self.ours(sample) == (try Self.foundation(sample)))
    }

    @Test("top-level scalars and arrays, and a type adding keys to its container twice")
    func shapes() throws {
        #expect(try Self.ours(5) == "5")
        #expect(try Self.ours("x") == #""x""#)
        #expect(try Self.ours([1.5, 2]) == "[1.5,2]")
        #expect(try Self.ours([String: [Int]]()) == "{}")
        struct Twice: Encodable {
            func encode(to encoder: any Encoder) throws {
                var first = encoder.container(keyedBy: Key.self)
                try first.encode(1, forKey: .b)
                var second = encoder.container(keyedBy: Key.self)
                try second.encode(2, forKey: .a)
            }
            enum Key: CodingKey { case a, b }
        }
        #expect(try Self.ours(Twice()) == #"{"a":2,"b":1}"#)
    }

    @Test("numbers that JSON cannot hold are null, never a crash")
    func nonFinite() throws {
        #expect(try Self.ours([Double.nan, .infinity, -.infinity, 0.1]) == "[null,null,null,0.1]")
    }
}
