/// What kind of network an interface reaches, which decides how its figures may be read
/// (a tunnel's bytes are counted again on the link beneath it; loopback is never traffic).
public enum InterfaceClass: String, Hashable, Sendable, CaseIterable {
    case loopback, wifi, cellular, tunnel, virtual, ethernet, other
}

/// The classifier's answer for one interface, with the evidence that decided it.
public enum Classification: Hashable, Sendable {
    case classified(InterfaceClass, reason: String)
    /// A configuration rule says ifmeter must not meter this interface.
    case ignored(reason: String)

    /// The reason, as reported in `class_reason`.
    public var reason: String {
        switch self {
        case .classified(_, let reason), .ignored(let reason): reason
        }
    }

    /// Tunnels count traffic that is counted again on the link beneath them.
    public var isTunnel: Bool {
        if case .classified(.tunnel, _) = self { return true }
        return false
    }

    /// The class name as reported in `class`: one of ``InterfaceClass`` or `ignored`.
    public var label: String {
        switch self {
        case .classified(let interfaceClass, _): interfaceClass.rawValue
        case .ignored: "ignored"
        }
    }
}

/// What history is about: one interface name, every interface of a class summed, or the
/// names listed summed (`-i eth0+eth1`), bucket by bucket as a class is.
public enum UsageSubject: Hashable, Sendable {
    case interface(String)
    case interfaceClass(InterfaceClass)
    case merged([String])

    /// How a merge is written where one name would be: its members joined by `+`.
    public static func mergedName(_ members: [String]) -> String { members.joined(separator: "+") }
}
