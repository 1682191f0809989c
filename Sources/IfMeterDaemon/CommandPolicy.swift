import IfMeterWire

/// What a request may cost the daemon, as the server admits it (``UIDShares``): the server
/// knows no commands, only this.
struct RequestCost: OptionSet, Hashable, Sendable {
    let rawValue: UInt8

    /// Its answer grows with the interfaces or rows asked for (megabytes at thousands of
    /// interfaces), rather than staying a few hundred bytes.
    static let largeAnswer = RequestCost(rawValue: 1)
    /// It is answered from another thread than the loop's: the store's, or one that builds
    /// the answer from a copy of the meter's state.
    static let offLoop = RequestCost(rawValue: 2)
}

/// Every command's place in the daemon, in one table: who may run it and what it costs. The
/// admin check, the server's admission and the hold on a client answered off the loop all
/// read it, so none of them can disagree with another.
struct CommandPolicy: Hashable, Sendable {
    /// Only root, ifmeterd's user and `admin_group` (it changes state).
    var adminOnly = false
    var cost: RequestCost = []

    static func of(_ command: Command) -> CommandPolicy {
        switch command {
        case .status, .sample, .watch: CommandPolicy()
        case .metrics: CommandPolicy(cost: .largeAnswer)
        case .interfaces, .usage, .query, .events: CommandPolicy(cost: [.largeAnswer, .offLoop])
        case .reload: CommandPolicy(adminOnly: true)
        case .forget: CommandPolicy(adminOnly: true, cost: .offLoop)
        case .importHistory: CommandPolicy(adminOnly: true, cost: [.largeAnswer, .offLoop])
        }
    }

    /// The cost of a request line as parsed: nothing for one naming no known command (it is
    /// answered at once with an error).
    static func cost(of request: Request) -> RequestCost {
        request.cmd.flatMap(Command.init(rawValue:)).map { of($0).cost } ?? []
    }
}
