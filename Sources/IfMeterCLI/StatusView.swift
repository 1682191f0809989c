import IfMeterWire

/// `status`: the daemon's own state.
enum StatusView {
    static func render(_ status: StatusResult, _ session: Session) -> String {
        var table = Table([.left, .left])
        table.add(["ifmeterd", "\(status.version), pid \(status.pid), up since \(session.time.second(status.startedAt))"])
        table.add(["socket", status.socket])
        if let metrics = status.metrics { table.add(["metrics", "http://\(metrics)/metrics"]) }
        table.add(["sampling", "every \(status.interval) s from \(status.source ?? "—"), saving every \(status.saveInterval) s"])
        table.add(["last sample", status.lastSampleAt.map { session.time.second($0) } ?? "—"])
        table.add(["interfaces", status.interfaces.map(String.init) ?? "—"])
        table.add(["buckets cut in", status.timeZone == "utc" ? "UTC" : "local time (\(session.time.format(session.now, "%Z")))"])
        if let clock = status.clock {
            table.add(["wall clock", clock.trusted ? "believed"
                : "doubted since \(clock.doubtedSince.map { session.time.second($0) } ?? "—"): \(clock.detail ?? "")"])
        }
        if let apps = status.apps {
            table.add(["applications", apps.counting ? "counted: \(apps.detail)" : "not counted: \(apps.detail)"])
        }
        if let scopes = status.scopes { table.add(["local/internet", Self.scopes(scopes)]) }
        if let store = status.store {
            table.add(["database", store.path])
            table.add(["last save", store.lastSaveAt.map { session.time.second($0) } ?? "not yet"])
            table.add(["store", store.healthy ? "healthy" : "saves failing: \(store.error ?? "unknown error"); counting goes on in memory"])
        }
        return table.render()
    }

    /// Whether traffic is split by scope, where, and what stands in the way (docs/SCOPES.md).
    static func scopes(_ scopes: ScopesHealth) -> String {
        guard scopes.counting else { return "not split: \(scopes.detail)" }
        var parts = ["split on \(scopes.covered.isEmpty ? "no link yet" : scopes.covered.joined(separator: ", "))"]
        if !scopes.uncovered.isEmpty { parts.append("not covered: \(scopes.uncovered.joined(separator: ", "))") }
        parts.append(scopes.prefixes.map { "\($0) local prefixes" } ?? "local prefixes not written yet")
        if let error = scopes.prefixError { parts.append("prefixes: \(error)") }
        if let error = scopes.attachError { parts.append("attach: \(error)") }
        return parts.joined(separator: "; ")
    }
}

/// `status`.
struct StatusCommand: Subcommand {
    static let name = "status"
    static let summary = "the daemon's state"
    static let usage = "ifmeter status"
    static let about = "The daemon's version, sampling, last sample and save, whether the wall clock is believed, whether applications are counted and traffic split into local and internet, and database health."
    static let options: [OptionSpec] = []

    init(_ parsed: ParsedArguments) {}

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let session = try Session(socketCandidates: context.socketCandidates)
        context.write(session.status) { StatusView.render($0, session) }
        return 0
    }
}
