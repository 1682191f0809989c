/// The one grammar for every value a person writes: in ifmeterd.conf, a plan, `check`,
/// `notify` and what the journal says. Each kind is read the same way wherever it appears
/// (docs/CONFIG.md, "Values"); callers check the range, and say which key or option it was.
public enum ValueGrammar {
    /// Why a value was refused: what was expected, with examples.
    public struct Refusal: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// A size in bytes: a number (decimals allowed), spaces allowed before the unit, the unit
    /// in any case. No unit or `B` is bytes; `K`, `M`, `G`, `T`, `P`, `E` alone or with `iB`
    /// are powers of 1024 (`20G` = `20GiB`); with `B` alone they are powers of 1000
    /// (`20GB` = 20·10⁹). Rounded to whole bytes; at most 2⁶⁴ − 1.
    public static func size(_ text: String) throws(Refusal) -> UInt64 {
        guard let (number, unit) = split(text), let multiplier = sizeMultiplier(unit),
              let bytes = whole(number * multiplier) else {
            throw Refusal(description: "expected a size such as 20GiB, 500 MB, 1.5T or 4096 (G and GiB are 2^30 bytes, GB is 10^9), got \"\(text)\"")
        }
        return bytes
    }

    /// A share as a fraction: `80%`, `80 %`, `112.5` (the `%` may be left out) is 0.8, 0.8, 1.125.
    public static func percent(_ text: String) throws(Refusal) -> Double {
        guard let (number, unit) = split(text), unit.isEmpty || unit == "%" else {
            throw Refusal(description: "expected a percentage such as 80% or 112.5%, got \"\(text)\"")
        }
        return number / 100
    }

    /// A duration in whole seconds: a whole number with `s`, `m`, `h`, `d` or `w` (lower case:
    /// `M` would read as months), spaces allowed before the unit; no unit is seconds.
    public static func duration(_ text: String) throws(Refusal) -> Int64 {
        let units: [String: Int64] = ["": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400]
        guard let (digits, unit) = splitText(text, lowercased: false), !digits.contains("."), let multiplier = units[unit],
              let number = Int64(digits), number <= Int64.max / multiplier else {
            throw Refusal(description: "expected a duration such as 30, 90s, 15m, 48h, 62d or 2w, got \"\(text)\"")
        }
        return number * multiplier
    }

    /// A rate in bytes per second: a size per second (`50MB`, `50 MB/s`, `12.5MiB/s`) or bits
    /// per second with `bit`, `bit/s` or `bps` after the prefix (`100Mbit`, `1 Gbit/s`,
    /// `100mbps`; SI, `Kibit` and `Mibit` IEC). Rounded down to whole bytes.
    public static func rate(_ text: String) throws(Refusal) -> UInt64 {
        let refusal = Refusal(description: "expected a rate such as 100Mbit, 1 Gbit/s, 50MB/s or 125000 (bytes per second), got \"\(text)\"")
        guard let (number, written) = split(text) else { throw refusal }
        var unit = written.hasSuffix("/s") ? String(written.dropLast(2)) : written
        var bits = false
        for suffix in ["bps", "bit"] where unit.hasSuffix(suffix) {
            unit = String(unit.dropLast(suffix.count))
            bits = true
            break
        }
        // A bit prefix is SI unless it says `i` (`Mibit`), as `MB` and `MiB` are.
        let multiplier = bits ? sizeMultiplier(unit + "b").map { $0 / 8 } : sizeMultiplier(unit)
        guard let multiplier, let bytes = whole((number * multiplier).rounded(.down)) else { throw refusal }
        return bytes
    }

    /// A share as people read it: `80%`, `112.5%`, `0.1%`: to a tenth, without a trailing `.0`,
    /// cut down, never rounded up: a share just under the limit never reads `100%`. (The
    /// nudge keeps `0.29`, stored as 0.28999…, at `29%`.)
    public static func percentText(_ share: Double) -> String {
        guard share.isFinite else { return "—" }
        // Bounded, so no share (a plan of 1 byte used petabytes over) traps the conversion.
        let tenths = Swift.max(-1e17, Swift.min(1e17, (share * 1000 + 1e-6).rounded(.down)))
        return tenths.truncatingRemainder(dividingBy: 10) == 0 ? "\(Int(tenths / 10))%" : "\(tenths / 10)%"
    }

    // MARK: Pieces

    /// The number and the unit after it (lower-cased, spaces between them dropped); nil unless
    /// the number is plain digits with at most one point (no sign, exponent, `inf` or `nan`).
    private static func split(_ text: String) -> (Double, String)? {
        guard let (digits, unit) = splitText(text), let number = Double(digits), number.isFinite else { return nil }
        return (number, unit)
    }

    private static func splitText(_ text: String, lowercased: Bool = true) -> (String, String)? {
        let trimmed = text.trimmingSpaces()
        let digits = trimmed.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        guard !digits.isEmpty, digits.filter({ $0 == "." }).count <= 1, digits.contains(where: \.isNumber) else { return nil }
        let written = trimmed.dropFirst(digits.count).trimmingSpaces()
        let unit = lowercased ? written.lowercased() : written
        guard !unit.contains(" ") && !unit.contains("\t") else { return nil }
        return (String(digits), unit)
    }

    /// Bytes per unit of size, or nil for a unit that is not one.
    private static func sizeMultiplier(_ unit: String) -> Double? {
        if unit.isEmpty || unit == "b" { return 1 }
        let prefixes: [Character] = ["k", "m", "g", "t", "p", "e"]
        guard let first = unit.first, let power = prefixes.firstIndex(of: first) else { return nil }
        let base: Double
        switch unit.dropFirst() {
        case "", "i", "ib": base = 1024
        case "b": base = 1000
        default: return nil
        }
        var multiplier = 1.0
        for _ in 0...power { multiplier *= base }
        return multiplier
    }

    /// `value` rounded to a whole number, if it fits in 64 bits.
    private static func whole(_ value: Double) -> UInt64? {
        let rounded = value.rounded()
        return rounded >= 0 && rounded < 0x1p64 ? UInt64(rounded) : nil
    }
}
