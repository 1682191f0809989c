/// The protocol's commands (docs/PROTOCOL.md): one definition for the daemon's dispatch and
/// the client's requests, so neither spells a command name itself.
public enum Command: String, Hashable, Sendable, CaseIterable {
    case status, interfaces, usage, events, sample, watch
    /// Every table a view needs, for many names and periods, in one answer.
    case query
    /// Every data plan's figures now (docs/PLANS.md).
    case plans
    /// The Prometheus exposition `/metrics` serves, as text (`ifmeter metrics`).
    case metrics
    /// Admin only (root, ifmeterd's user, `admin_group`).
    case reload, forget
    /// Admin only: brings another meter's history into the store (`ifmeter import vnstat`).
    case importHistory = "import"

}
