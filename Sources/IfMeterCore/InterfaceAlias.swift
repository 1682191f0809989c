/// An interface's alias, a name for people (`alias[enp3s0f1] = Home uplink` in the config, or
/// `ifmeter alias`): shown beside the name wherever the name is shown, and taken by `-i` in
/// its place. It is hostile input like a name: checked where it enters, escaped wherever
/// it is written.
public enum InterfaceAlias {
    /// The longest alias, in bytes of UTF-8.
    public static let maximumBytes = 64

    /// What is wrong with `text` as an alias, or nil: empty, longer than ``maximumBytes``,
    /// white space at either end, a character that is not printable (a control character, a
    /// format character such as a bidirectional override, a line or paragraph separator, a
    /// private-use or unassigned code point), or `,` or `+`, which separate names in `-i`.
    public static func problem(_ text: String) -> String? {
        guard let first = text.unicodeScalars.first, let last = text.unicodeScalars.last else {
            return "an alias cannot be empty"
        }
        guard text.utf8.count <= maximumBytes else {
            return "an alias is at most \(maximumBytes) bytes of UTF-8, got \(text.utf8.count)"
        }
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned:
                return "an alias is printable text; U+\(Self.hex(scalar.value)) is not printable"
            default:
                if scalar == "," || scalar == "+" { return "an alias cannot hold \"\(scalar)\": -i uses it between names" }
            }
        }
        guard !first.properties.isWhitespace && !last.properties.isWhitespace else {
            return "an alias cannot begin or end with white space"
        }
        return nil
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// Every interface's alias: those the config gives, which win, and those `ifmeter alias` set
/// (kept in the database). An alias is one name's: two names never share one.
public struct InterfaceAliases: Hashable, Sendable {
    /// Name → alias, from the config file (the admin's): these win.
    public private(set) var configured: [String: String]
    /// Name → alias, set with `ifmeter alias` and kept in the database.
    public private(set) var stored: [String: String]
    /// Alias → name, of the aliases in force.
    private var byAlias: [String: String] = [:]

    public init(configured: [String: String] = [:], stored: [String: String] = [:]) {
        (self.configured, self.stored) = (configured, stored)
        rebuild()
    }

    /// The alias in force for `name`: the config's, else the one set with `ifmeter alias`.
    public func alias(of name: String) -> String? { configured[name] ?? stored[name] }

    /// Every name with an alias in force, and its alias.
    public var inForce: [String: String] { stored.merging(configured) { _, configured in configured } }

    /// The name `word` stands for in `-i`: a name ifmeter knows is itself (an alias never hides
    /// an interface); otherwise, the name whose alias it is, if one is; otherwise `word`.
    public func name(for word: String, isKnown: (String) -> Bool) -> String {
        guard let name = byAlias[word], !isKnown(word) else { return word }
        return name
    }

    /// The name that has `alias` in force, if one has.
    public func owner(of alias: String) -> String? { byAlias[alias] }

    public mutating func replaceConfigured(_ aliases: [String: String]) {
        configured = aliases
        rebuild()
    }

    /// Sets (or with nil, removes) the stored alias of `name`.
    public mutating func store(_ alias: String?, for name: String) {
        stored[name] = alias
        rebuild()
    }

    /// The config's aliases first, then stored ones whose name the config does not give one and
    /// whose alias it does not use.
    private mutating func rebuild() {
        var byAlias: [String: String] = [:]
        for (name, alias) in configured { byAlias[alias] = name }
        for (name, alias) in stored.sorted(by: { $0.key < $1.key })
        where configured[name] == nil && byAlias[alias] == nil {
            byAlias[alias] = name
        }
        self.byAlias = byAlias
    }
}
