#if canImport(Glibc)
import Glibc
#endif

/// One configured override: interfaces whose name matches `pattern` (a shell glob, as in
/// `veth*` or `wwan[0-9]`) get `action` instead of the classifier's guess.
///
/// Rules are checked in the order given and the first match wins, before any detection.
public struct ClassRule: Hashable, Sendable, CustomStringConvertible {
    public enum Action: Hashable, Sendable {
        case assign(InterfaceClass)
        case ignore
    }

    public var pattern: String
    public var action: Action

    public init(pattern: String, action: Action) {
        self.pattern = pattern
        self.action = action
    }

    /// Parses the config form `PATTERN = CLASS` or `PATTERN = ignore`.
    public init(parsing text: String) throws(ClassRuleError) {
        let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw .missingEquals(text) }
        let pattern = parts[0].trimmingWhitespace()
        let target = parts[1].trimmingWhitespace()
        guard !pattern.isEmpty else { throw .emptyPattern(text) }
        if target == "ignore" {
            self.init(pattern: pattern, action: .ignore)
        } else if let interfaceClass = InterfaceClass(rawValue: target) {
            self.init(pattern: pattern, action: .assign(interfaceClass))
        } else {
            throw .unknownClass(target)
        }
    }

    public func matches(_ interfaceName: String) -> Bool {
        fnmatch(pattern, interfaceName, 0) == 0
    }

    public var description: String {
        switch action {
        case .assign(let interfaceClass): "\(pattern) = \(interfaceClass.rawValue)"
        case .ignore: "\(pattern) = ignore"
        }
    }
}

public enum ClassRuleError: Error, Hashable, Sendable, CustomStringConvertible {
    case missingEquals(String)
    case emptyPattern(String)
    case unknownClass(String)

    public var description: String {
        switch self {
        case .missingEquals(let text):
            "classification rule \"\(text)\" is not of the form PATTERN = CLASS"
        case .emptyPattern(let text):
            "classification rule \"\(text)\" has an empty interface pattern"
        case .unknownClass(let name):
            "unknown interface class \"\(name)\" (expected one of: "
                + InterfaceClass.allCases.map(\.rawValue).joined(separator: ", ") + ", ignore)"
        }
    }
}
