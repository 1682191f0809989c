/// How byte counts and rates are written: IEC (KiB, MiB; the default) or SI (kB, MB), and
/// rates in bytes or bits per second.
public struct Units: Hashable, Sendable {
    public enum Base: Hashable, Sendable { case iec, si }

    public var base: Base
    public var bits: Bool

    public init(base: Base = .iec, bits: Bool = false) {
        self.base = base
        self.bits = bits
    }

    private var step: Double { base == .iec ? 1024 : 1000 }

    private func prefixes(bits: Bool) -> [String] {
        switch (base, bits) {
        case (.iec, false): ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
        case (.si, false): ["B", "kB", "MB", "GB", "TB", "PB", "EB"]
        case (.iec, true): ["bit", "Kibit", "Mibit", "Gibit", "Tibit", "Pibit", "Eibit"]
        case (.si, true): ["bit", "kbit", "Mbit", "Gbit", "Tbit", "Pbit", "Ebit"]
        }
    }

    /// `1.50 GiB`; whole bytes below one unit step (`512 B`).
    public func bytes(_ value: UInt64) -> String {
        scaled(Double(value), units: prefixes(bits: false))
    }

    /// A rate in bytes per second, written per `bits`: `1.20 MiB/s` or `10.07 Mibit/s`.
    public func rate(_ bytesPerSecond: Double) -> String {
        let value = bits ? bytesPerSecond * 8 : bytesPerSecond
        return scaled(value, units: prefixes(bits: bits)) + "/s"
    }

    private func scaled(_ value: Double, units: [String]) -> String {
        var amount = value
        var index = 0
        while amount >= step && index < units.count - 1 {
            amount /= step
            index += 1
        }
        if index == 0 { return "\(Int(amount.rounded())) \(units[0])" }
        return "\(fixed(amount, decimals: 2)) \(units[index])"
    }
}

/// `value` with exactly `decimals` digits after the point, rounded half away from zero.
public func fixed(_ value: Double, decimals: Int) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = Int64((abs(value) * scale).rounded())
    let whole = scaled / Int64(scale)
    var text = (value < 0 && scaled != 0 ? "-" : "") + String(whole)
    if decimals > 0 {
        let fraction = String(scaled % Int64(scale))
        text += "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }
    return text
}
