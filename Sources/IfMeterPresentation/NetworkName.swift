import IfMeterCore
import IfMeterWire

/// What a network is called for people, by the client and the page alike.
public enum NetworkName {
    /// Its connection's name, and its SSID where that differs, bytes that are not UTF-8 as
    /// `\xNN` (an SSID is up to 32 bytes of anything); a mobile connection's operator and APN.
    /// Still to be escaped for where it goes.
    public static func display(_ network: NetworkResult) -> String {
        let mobile = [network.operatorName, network.apn.map { "APN " + $0 }].compactMap { $0 }
        guard !mobile.isEmpty || network.ssid != nil else { return network.name }
        guard let ssid = network.ssid else { return "\(network.name) (\(mobile.joined(separator: ", ")))" }
        var text = ""
        if let valid = String(validating: ssid, as: UTF8.self) {
            text = valid
        } else {
            for byte in ssid { text += byte < 0x80 ? String(Character(Unicode.Scalar(byte))) : "\\x" + Hex.encode([byte]) }
        }
        return text == network.name ? text : "\(network.name) (SSID \(text))"
    }
}
