/// A user's application, `app:UID/NAME` (`app:1000/firefox`, `app:1000/session`,
/// `app:1000/container/web` for a rootless container): traffic counted per cgroup of the
/// user's slice (docs/APPS.md), another view of the interfaces' bytes. The uid is the one
/// systemd's `user-UID.slice` names; NAME has ``AppName``'s grammar.
public struct AppKind: SubjectKind {
    public init() {}
    public var prefix: String? { "app" }
    public var form: String { "app:UID/NAME" }
    public var noun: String { "application" }
    public var plural: String { "applications" }
    public var section: SubjectSection { .apps }
    public var baseLabels: [EstimateLabel] { EstimateLabel.cgroupCounted }
    public var planSelector: PlanSelectorKey { .key("app") }

    public func accepts(_ name: Substring) -> Bool {
        guard let parts = Self.split(name) else { return false }
        return AppName.isValid(parts.name)
    }

    /// `app="firefox"` and `uid="1000"`: a sum by user needs no parsing of the name.
    public func metricLabels(_ name: Substring) -> [(key: String, value: String)] {
        guard let parts = Self.split(name) else { return [("app", String(name))] }
        return [("app", String(parts.name)), ("uid", String(parts.uid))]
    }

    /// A name's uid and application, from `UID/NAME`; nil unless UID is a uid written as
    /// systemd writes it (decimal, no leading zero, below 4294967295).
    public static func split(_ name: Substring) -> (uid: UInt32, name: Substring)? {
        guard let slash = name.firstIndex(of: "/") else { return nil }
        let digits = name[..<slash]
        guard let uid = uid(digits.utf8) else { return nil }
        return (uid, name[name.index(after: slash)...])
    }

    /// The uid `digits` write, if they write one as systemd does.
    public static func uid(_ digits: some Collection<UInt8>) -> UInt32? {
        guard let first = digits.first, digits.count <= 10, first != UInt8(ascii: "0") || digits.count == 1,
              digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let value = digits.reduce(UInt64(0)) { $0 * 10 + UInt64($1 - 0x30) }
        return value < UInt64(UInt32.max) ? UInt32(value) : nil
    }
}
