import Foundation
import IfMeterJSON
import IfMeterTestSupport
import Testing

/// JSONWriter's numbers and strings against a reference: Foundation's JSONEncoder with sorted
/// keys and unescaped slashes, which is what the wire's bytes were first defined by.
@Suite("JSONWriter", .ownThread, .timeLimit(.minutes(3)))
struct JSONWriterTests {
    struct Sample: Encodable {
        var big: UInt64 = .max
        var count = -42
        var doubles: [Double] = [0.125, 1e-7, 1e21, 123456789.123, 1_774_944_000.5, 1_774_944_000, 0.1, 5e-324, 1.7976931348623157e308]
        var flag = true
        var negative: Int64 = .min
        var small: Int32 = 7
        var text: String
    }

    static func written(_ sample: Sample) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.key("big"); w.number(sample.big)
        w.key("count"); w.number(sample.count)
        w.key("doubles")
        w.beginArray()
        for value in sample.doubles { w.number(value) }
        w.endArray()
        w.key("flag"); w.bool(sample.flag)
        w.key("negative"); w.number(sample.negative)
        w.key("small"); w.number(sample.small)
        w.key("text"); w.string(sample.text)
        w.endObject()
        return String(decoding: w.bytes, as: UTF8.self)
    }

    static func foundation(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test("byte for byte what the reference encoder writes", arguments: [
        "plain", "quote \" backslash \\ slash /", "line\nbreak\ttab\rreturn", "control \u{01}\u{1F}",
        "unicode é 日本 🚀", "",
    ])
    func sameAsReference(text: String) throws {
        let sample = Sample(text: text)
        #expect(Self.written(sample) == (try Self.foundation(sample)))
    }

    @Test("a key that is data is escaped as a string is")
    func textKeys() throws {
        var w = JSONWriter()
        w.beginObject()
        w.key(text: "a\"b/é\n"); w.number(1)
        w.endObject()
        #expect(String(decoding: w.bytes, as: UTF8.self) == (try Self.foundation(["a\"b/é\n": 1])))
    }

    @Test("numbers that JSON cannot hold are null, never a crash")
    func nonFinite() {
        var w = JSONWriter()
        w.beginArray()
        for value in [Double.nan, .infinity, -.infinity, 0.1] { w.number(value) }
        w.endArray()
        #expect(String(decoding: w.bytes, as: UTF8.self) == "[null,null,null,0.1]")
    }

    @Test("integers of every width, as decimal")
    func decimals() {
        for number: UInt64 in [0, 9, 10, 99, 100, 12345678901234567890, .max] {
            var one = JSONWriter()
            one.number(number)
            #expect(String(decoding: one.bytes, as: UTF8.self) == String(number))
        }
    }
}
