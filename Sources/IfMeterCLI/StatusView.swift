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
        if let store = status.store {
            table.add(["database", store.path])
            table.add(["last save", store.lastSaveAt.map { session.time.second($0) } ?? "not yet"])
            table.add(["store", store.healthy ? "healthy" : "saves failing: \(store.error ?? "unknown error"); counting goes on in memory"])
        }
        return table.render()
    }
}
