import IfMeterJSON
import IfMeterTestSupport
import Testing

@Suite("JSONReader and JSONWriter", .ownThread, .timeLimit(.minutes(3)))
struct JSONReaderTests {
    /// Reads any value back into the same shape, to compare.
    indirect enum Value: Equatable {
        case null, bool(Bool), number(String), string(String), array([Value]), object([String: Value])

        init(reading r: inout JSONReader) throws {
            switch try r.peek() {
            case UInt8(ascii: "{"):
                var members: [String: Value] = [:]
                try r.readObject { r, key in members[key] = try Value(reading: &r) }
                self = .object(members)
            case UInt8(ascii: "["):
                var items: [Value] = []
                try r.readArray { items.append(try Value(reading: &$0)) }
                self = .array(items)
            case UInt8(ascii: "\""): self = .string(try r.readString())
            case UInt8(ascii: "n"): _ = try r.readNull(); self = .null
            case UInt8(ascii: "t"), UInt8(ascii: "f"): self = .bool(try r.readBool())
            default: self = .number(String(try r.readDouble()))
            }
        }
    }

    static let sample = #"{"a":[1,2.5,-3,{"b":"x\"y\\z\n\u00e9\ud83d\ude00/"}],"c":null,"d":true,"e":false,"f":{},"g":[]}"#

    static func parse(_ text: String, chunk: Int) throws -> Value {
        var bytes = Array(text.utf8)[...]
        var reader = JSONReader(more: {
            guard !bytes.isEmpty else { return nil }
            defer { bytes = bytes.dropFirst(chunk) }
            return Array(bytes.prefix(chunk))
        })
        return try Value(reading: &reader)
    }

    @Test("the same value whatever size the chunks it arrives in")
    func splitAnywhere() throws {
        let whole = try Self.parse(Self.sample, chunk: 1 << 20)
        guard case .object(let members) = whole, case .array(let items) = members["a"],
              case .object(let inner) = items[3] else {
            Issue.record("unexpected shape \(whole)")
            return
        }
        #expect(inner["b"] == .string("x\"y\\z\né😀/"))
        #expect(members["c"] == .null && members["d"] == .bool(true) && members["f"] == .object([:]))
        for chunk in 1...12 {
            #expect(try Self.parse(Self.sample, chunk: chunk) == whole, "chunks of \(chunk)")
        }
    }

    @Test("a huge answer in 1-byte-to-64-KiB chunks: every element read, nothing held twice")
    func huge() throws {
        var writer = JSONWriter()
        writer.beginArray()
        for index in 0..<200_000 {
            writer.beginObject()
            writer.key("name"); writer.string("veth\(index)")
            writer.key("rx_bytes"); writer.number(UInt64.max - UInt64(index))
            writer.endObject()
        }
        writer.endArray()
        let bytes = writer.bytes + [UInt8(ascii: "\n")]
        var offset = 0
        var size = 1
        var reader = JSONReader(more: {
            guard offset < bytes.count else { return nil }
            defer { offset += size; size = size % 65536 + 997 }
            return Array(bytes[offset..<min(bytes.count, offset + size)])
        })
        var count = 0
        var last: UInt64 = 0
        try reader.readArray { r in
            try r.readObject { r, key in
                if key == "rx_bytes" { last = try r.readUInt64() } else { _ = try r.readString() }
            }
            count += 1
        }
        #expect(try reader.readLineEnd())
        #expect(count == 200_000)
        #expect(last == UInt64.max - 199_999)
    }

    @Test("malformed input is an error with an offset, never a crash", arguments: [
        "", "{", "[1,", #"{"a" 1}"#, #"{"a":}"#, "[1 2]", #""abc"#, #""\x""#, #""\ud800x""#, "tru", "nul",
        "[" + String(repeating: "[", count: 100) + String(repeating: "]", count: 101), "\"a\u{01}\"", "1e999",
        "--1", #"{"a":1,}"#, "[1]]",
    ])
    func malformed(_ text: String) {
        var reader = JSONReader(Array(text.utf8))
        // A value, then only white space to the end: what the daemon and the client ask of a
        // line. Either part must refuse each of these by itself.
        #expect(throws: JSONReadError.self) {
            _ = try Value(reading: &reader)
            _ = try reader.readLineEnd()
        }
    }

    /// Long strings read lately are handed out again when they repeat: only when every byte is
    /// the same, whatever else came between, escapes and non-ASCII included.
    @Test("repeated long strings read as themselves, near misses as theirs")
    func recentStrings() throws {
        let footnote = String(repeating: "Estimates from interface counters. ", count: 4)
        let near = String(footnote.dropLast()) + "!"
        let others = (0..<12).map { "interface-counters-\($0)" }
        let values = [footnote, "includes-overhead", near, footnote] + others
            + [footnote, "includes-overhead", "includes-overheaé", near, "a\"quoted\" long string here", "a\"quoted\" long string here"]
        var writer = JSONWriter()
        writer.strings(values)
        for chunk in [1, 7, 4096] {
            var offset = 0
            let bytes = writer.bytes
            var reader = JSONReader(more: {
                guard offset < bytes.count else { return nil }
                defer { offset += chunk }
                return Array(bytes[offset..<min(bytes.count, offset + chunk)])
            })
            #expect(try reader.readStrings() == values, "in chunks of \(chunk)")
        }
    }

    @Test("integers keep all 64 bits; a number out of range is refused")
    func integers() throws {
        var reader = JSONReader(Array("[18446744073709551615,-9223372036854775808,18446744073709551616]".utf8))
        var values: [String] = []
        #expect(throws: JSONReadError.self) {
            try reader.readArray { r in
                values.append(values.count == 1 ? String(try r.readInt64()) : String(try r.readUInt64()))
            }
        }
        #expect(values == ["18446744073709551615", "-9223372036854775808"])
    }

    /// A number each reader takes, as the reader of that type reads it (or its error's start).
    static let numbers: [(text: String, double: String, int64: String, uint64: String)] = [
        ("0", "0.0", "0", "0"),
        ("-0", "-0.0", "0", "0"),
        ("-1", "-1.0", "-1", "expected an unsigned integer, got -1"),
        ("9007199254740991", "9007199254740991.0", "9007199254740991", "9007199254740991"),
        ("9007199254740992", "9007199254740992.0", "9007199254740992", "9007199254740992"),
        ("-9007199254740993", "-9007199254740992.0", "-9007199254740993", "expected an unsigned integer, got -9007199254740993"),
        ("9223372036854775808", "9.223372036854776e+18", "expected an integer, got 9223372036854775808", "9223372036854775808"),
        ("-9223372036854775809", "-9.223372036854776e+18", "expected an integer, got -9223372036854775809", "expected an unsigned integer, got -9223372036854775809"),
        ("18446744073709551616", "1.8446744073709552e+19", "expected an integer, got 18446744073709551616", "expected an unsigned integer, got 18446744073709551616"),
        ("1.5", "1.5", "expected an integer, got 1.5", "expected an unsigned integer, got 1.5"),
        ("1e3", "1000.0", "expected an integer, got 1e3", "expected an unsigned integer, got 1e3"),
        ("012", "not a JSON number", "not a JSON number", "not a JSON number"),
    ]

    @Test("a number the fast path for integers cannot take is read whole the slow way: its value, or the error naming it", arguments: numbers)
    func numberPaths(number: (text: String, double: String, int64: String, uint64: String)) {
        func outcome(_ read: (inout JSONReader) throws -> String) -> String {
            // In an array, so that what follows the number is read too: nothing may be left half-read.
            var reader = JSONReader(Array("[\(number.text),7]".utf8))
            var values: [String] = []
            do {
                try reader.readArray { r in values.append(values.isEmpty ? try read(&r) : String(try r.readInt())) }
            } catch let error as JSONReadError {
                return error.message
            } catch {
                return "\(error)"
            }
            return values == [values.first ?? "", "7"] ? values[0] : "left \(values)"
        }
        #expect(outcome { String(try $0.readDouble()) } .hasPrefix(number.double))
        #expect(outcome { String(try $0.readInt64()) } .hasPrefix(number.int64))
        #expect(outcome { String(try $0.readUInt64()) } .hasPrefix(number.uint64))
    }
}
