import IfMeterCore
import IfMeterTestSupport
import Testing

/// The one grammar of sizes, percentages, durations and rates (docs/CONFIG.md, "Values"):
/// every spelling people write, and the ones refused.
@Suite("Value grammar", .ownThread, .timeLimit(.minutes(1)))
struct ValueGrammarTests {
    static let sizeCases: [(String, UInt64)] = [
        ("4096", 4096), ("0", 0), ("512B", 512), ("512 b", 512),
        ("10G", 10 << 30), ("10g", 10 << 30), ("10GiB", 10 << 30), ("10gib", 10 << 30), ("10 GiB", 10 << 30),
        ("10Gi", 10 << 30), ("10GB", 10_000_000_000), ("10gb", 10_000_000_000), ("20 gb", 20_000_000_000),
        ("1.5M", 1_572_864), ("1.5 MiB", 1_572_864), ("2kb", 2000), ("2K", 2048), ("7TiB", 7 << 40),
        ("1.5T", 3 << 39), ("1P", 1 << 50), ("1EiB", 1 << 60), ("  64 KiB  ", 65536), ("0.5KiB", 512),
        ("1.0009K", 1025), ("15EiB", 15 << 60),
    ]

    @Test("sizes: any case, IEC unless the unit says B alone, decimals, spaces", arguments: sizeCases)
    func sizes(text: String, bytes: UInt64) throws {
        #expect(try ValueGrammar.size(text) == bytes)
    }

    @Test("not sizes", arguments: [
        "", " ", "GiB", "10 apples", "-5G", "+5G", "1e30", "1e3", "nan", "inf", "0x10", "1.2.3G", "10 G iB", "10GiBs",
        "16EiB", "20000000000000000000", "10Mbit", "10%", ".", "5 5",
    ])
    func notSizes(text: String) {
        #expect(throws: ValueGrammar.Refusal.self, "\(text)") { try ValueGrammar.size(text) }
    }

    @Test("percentages, with or without %, decimals, a space before %", arguments: [
        ("80%", 0.8), ("80", 0.8), ("80 %", 0.8), ("112.5%", 1.125), ("0%", 0), ("1000%", 10), (" 5% ", 0.05),
    ])
    func percentages(text: String, share: Double) throws {
        #expect(try ValueGrammar.percent(text) == share)
    }

    @Test("not percentages", arguments: ["", "%", "-5%", "80%%", "eighty", "1e2%", "80 percent", "nan%"])
    func notPercentages(text: String) {
        #expect(throws: ValueGrammar.Refusal.self, "\(text)") { try ValueGrammar.percent(text) }
    }

    @Test("one way to write a share, in the journal, notify and plans alike", arguments: [
        (0.8, "80%"), (0.125, "12.5%"), (1.125, "112.5%"), (1, "100%"), (2.5, "250%"), (0.001, "0.1%"), (0.99949, "99.9%"),
        (0.9996, "99.9%"), (0.99999, "99.9%"), (0.0, "0%"), (0.29, "29%"), (0.3333333333, "33.3%"), (0.0005, "0%"),
        (1.8e16, "10000000000000000%"), (.infinity, "—"), (.nan, "—"),
    ])
    func percentText(share: Double, text: String) {
        #expect(ValueGrammar.percentText(share) == text)
    }

    @Test("durations: seconds unless a lower-case unit says otherwise", arguments: [
        ("30", Int64(30)), ("90s", 90), ("15m", 900), ("48h", 172_800), ("62d", 5_356_800), ("2w", 1_209_600),
        ("15 m", 900), ("0", 0), (" 5s ", 5),
    ])
    func durations(text: String, seconds: Int64) throws {
        #expect(try ValueGrammar.duration(text) == seconds)
    }

    @Test("not durations", arguments: ["", "s", "15M", "1.5h", "-5s", "15min", "1y", "9223372036854775807d", "5 s s"])
    func notDurations(text: String) {
        #expect(throws: ValueGrammar.Refusal.self, "\(text)") { try ValueGrammar.duration(text) }
    }

    @Test("rates: bytes per second as sizes, bits per second with bit or bps", arguments: [
        ("125000", UInt64(125_000)), ("100Mbit", 12_500_000), ("100 mbit", 12_500_000), ("1Gbit/s", 125_000_000),
        ("1 Gbit/s", 125_000_000), ("100Mbps", 12_500_000), ("8bit", 1), ("50MB", 50_000_000), ("50MB/s", 50_000_000),
        ("12.5MiB/s", 13_107_200), ("1Mibit", 131_072), ("10M/s", 10_485_760), ("0", 0), ("1kbit", 125),
    ])
    func rates(text: String, bytesPerSecond: UInt64) throws {
        #expect(try ValueGrammar.rate(text) == bytesPerSecond)
    }

    @Test("not rates", arguments: ["", "fast", "-1Mbit", "100Xbit", "1e9bit", "100Mbit/h", "bit"])
    func notRates(text: String) {
        #expect(throws: ValueGrammar.Refusal.self, "\(text)") { try ValueGrammar.rate(text) }
    }

    @Test("a refusal says what was expected and what was given")
    func refusal() {
        #expect {
            try ValueGrammar.size("20 apples")
        } throws: { error in
            "\(error)".contains("expected a size such as 20GiB") && "\(error)".contains("\"20 apples\"")
        }
    }
}
