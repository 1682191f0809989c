/// The protocol's commands (docs/PROTOCOL.md): one definition for the daemon's dispatch and
/// the client's requests, so neither spells a command name itself.
public enum Command: String, Hashable, Sendable, CaseIterable {
    case status, interfaces, usage, events, sample, watch
    /// Every table a view needs, for many names and periods, in one answer.
    case query
    /// The Prometheus exposition `/metrics` serves, as text (`ifmeter metrics`).
    case metrics
    /// Admin only (root, ifmeterd's user, `admin_group`).
    case reload, forget
    /// Admin only: brings another meter's history into the store (`ifmeter import vnstat`).
    case importHistory = "import"

    /// Whether it changes state, and so needs an admin peer.
    public var isAdmin: Bool { self == .reload || self == .forget || self == .importHistory }

    /// Whether its answer grows with the interfaces or rows asked for (megabytes at thousands
    /// of interfaces), rather than staying a few hundred bytes.
    public var mayAnswerLarge: Bool {
        switch self {
        case .interfaces, .usage, .query, .events, .metrics, .importHistory: true
        case .status, .sample, .watch, .reload, .forget: false
        }
    }

    /// Whether the daemon answers it from another thread than its loop's: the store's, or
    /// (`interfaces`) one that builds the answer from a copy of the meter's state.
    public var isAnsweredOffLoop: Bool {
        switch self {
        case .usage, .query, .events, .importHistory, .forget, .interfaces: true
        case .status, .sample, .watch, .metrics, .reload: false
        }
    }
}
