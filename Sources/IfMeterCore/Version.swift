/// The ifmeter release, reported by `--version` and the socket API.
public enum IfMeterVersion {
    public static let string = "0.1.0"
}
