import IfMeterCore
import IfMeterWire

/// What a network is called for people, by the client and the page alike.
public enum NetworkName {
    /// Its connection's name, and its SSID where that differs (an SSID is up to 32 bytes of
    /// anything); a mobile connection's operator and APN. Control characters, and an SSID's
    /// bytes that are not UTF-8, as `\xNN`. Still to be escaped for where it goes.
    public static func display(_ network: NetworkResult) -> String {
        let name = printable(network.name)
        let mobile = [network.operatorName.map(printable), network.apn.map { "APN " + printable($0) }].compactMap { $0 }
        guard !mobile.isEmpty || network.ssid != nil else { return name }
        guard let ssid = network.ssid else { return "\(name) (\(mobile.joined(separator: ", ")))" }
        let text = String(validating: ssid, as: UTF8.self).map(printable) ?? printable(bytes: ssid)
        return text == name ? text : "\(name) (SSID \(text))"
    }

    /// `text` with every control character (C0, DEL, C1: a line feed would split a table's
    /// row, an ESC start a terminal sequence) as `\xNN`.
    public static func printable(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                out += "\\x" + Hex.encode([UInt8(scalar.value)])
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Bytes that are not UTF-8: printable ASCII as it is, every other byte as `\xNN`.
    static func printable(bytes: [UInt8]) -> String {
        var out = ""
        for byte in bytes {
            out += (0x20..<0x7F).contains(byte) ? String(Character(Unicode.Scalar(byte))) : "\\x" + Hex.encode([byte])
        }
        return out
    }
}
