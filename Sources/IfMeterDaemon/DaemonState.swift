import IfMeterHTTP
import IfMeterPlatform
import IfMeterServer
import IfMeterCore
import IfMeterKernel
import IfMeterMetrics
import IfMeterPresentation
import IfMeterRequests
import IfMeterService
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// What the daemon's roles read of it as it runs: its lifecycle, its configuration and the
/// facts of its start. Made first and handed to each role as it is made (``DaemonRequests``,
/// ``MetricsEndpoint``, ``WebEndpoint``, ``Reloader``); the start, stop and reload paths change
/// it, the roles read it when they answer.
final class DaemonState {
    let options: DaemonOptions
    let paths: Paths
    let startedAt: Double
    /// The configuration in force: the start's, then each good reload's.
    var config: DaemonConfig
    /// Set by the start and stop paths.
    var lifecycle: Daemon.Lifecycle
    /// This host's name, which the HTTP listener answers besides `localhost` and addresses.
    let hostName: String
    /// The `Host` headers the HTTP listener answers: the host's names, addresses and
    /// `http_allowed_hosts` as in force.
    private(set) var allowedHosts: HostAllowList
    /// The HTTP listener's port, once it listens.
    var httpPort: UInt16?
    /// The timers the running daemon keeps: a sample and a save each interval.
    var sampleTimer: EventSource?
    var saveTimer: EventSource?
    var percentileTimer: EventSource?
    /// This month's 95th percentiles of the uplinks, as last worked out (``DaemonRequests/refreshPercentiles()``).
    var percentiles: PercentileResult?

    init(options: DaemonOptions, paths: Paths, config: DaemonConfig, lifecycle: Daemon.Lifecycle) {
        (self.options, self.paths, self.config, self.lifecycle) = (options, paths, config, lifecycle)
        startedAt = SystemClock.now().wall
        var name = [CChar](repeating: 0, count: 256)
        hostName = gethostname(&name, name.count - 1) == 0
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "this host"
        allowedHosts = Self.allowList(hostName: hostName, configured: config.httpAllowedHosts)
    }

    /// The metering state, when running.
    var metering: Metering? {
        if case .running(let metering) = lifecycle { return metering }
        return nil
    }

    /// The sampling interval in force: the command line's, else the config's.
    var interval: UInt64 { options.interval ?? config.interval }

    /// Times as the daemon cuts its buckets.
    var time: TimeText { TimeText(utc: config.timeZone == .utc) }

    /// Takes `fresh` into force: what the roles read of it from now on.
    func configure(_ fresh: DaemonConfig) {
        config = fresh
        allowedHosts = Self.allowList(hostName: hostName, configured: fresh.httpAllowedHosts)
    }

    private static func allowList(hostName: String, configured: [String]) -> HostAllowList {
        // The config's entries were checked when it was read; a host name that is no DNS name
        // is left out.
        (try? HostAllowList(hostName: hostName, configured: configured)) ?? (try! HostAllowList(hostName: nil))
    }

    /// What `/metrics` shows now.
    var metricsFigures: MetricsEndpoint.Figures {
        let service = metering?.service
        // A wall clock that jumped ahead would make every absent series look expired: while it
        // is doubted, none is dropped.
        let keepAbsent = service?.clock.isTrusted == false ? Double.infinity : Double(config.metricsKeepAbsent)
        let percentiles = (self.percentiles?.subjects ?? []).compactMap { entry in
            entry.name.map { PercentileFigures(interface: $0, interfaceClass: entry.class, figure: entry.figure) }
        }
        let snapshot = service?.snapshot()
        // Taken from the same snapshot: a scope's series beside its subject's.
        let scopes = service.flatMap { service in snapshot.map { ScopeSubjects.figures(service, in: $0) } } ?? []
        return MetricsEndpoint.Figures(snapshot: snapshot, plans: service?.planFigures(at: SystemClock.now().wall) ?? [],
                                       percentiles: percentiles, keepAbsentSeconds: keepAbsent, scopes: scopes)
    }

    /// The `status` answer: the daemon's own facts beside the service's summary.
    func status() -> StatusResult {
        let metering = metering
        let summary = metering?.service.summary
        let running = summary != nil
        return StatusResult(
            ready: running, version: IfMeterVersion.string, pid: getpid(), startedAt: startedAt,
            interval: interval, saveInterval: config.saveInterval,
            lastSampleAt: summary?.sampledAt?.wall, source: running ? "netlink" : nil,
            interfaces: summary?.presentLinks,
            store: summary.map { StoreHealth(path: paths.database, healthy: $0.saveError == nil,
                                             lastSaveAt: $0.lastSaveAt, error: $0.saveError?.description,
                                             lastJournalAt: metering?.lastJournalAt) },
            socket: paths.socket, timeZone: running ? (config.timeZone == .utc ? "utc" : "local") : nil,
            linkEvents: metering.map { metering in
                let own = metering.sampler.feeds.own
                return LinkEventsHealth(origin: own.events.origin, receiveBuffer: own.events.receiveBufferSize,
                                        peers: own.peers.map { PeerEventsHealth(origin: $0.origin, receiveBuffer: $0.receiveBufferSize,
                                                                                 losses: own.peerLosses) })
            },
            metrics: httpPort.map { port in
                (options.metricsListen ?? config.metricsListen).map { MetricsAddress(host: $0.host, port: port).description }
                    ?? ":\(port)"
            }, apps: metering?.appsHealth, clock: running ? metering?.clockHealth : nil,
            scopes: Daemon.scopesHealth(metering, config: config))
    }
}

/// `reload` and SIGHUP: the config file read again; on any error the running configuration
/// stays. Made with everything a reload changes.
final class Reloader {
    private let state: DaemonState
    private let server: Server
    private let metrics: MetricsEndpoint
    private let loop: EventLoop

    init(state: DaemonState, server: Server, metrics: MetricsEndpoint, loop: EventLoop) {
        (self.state, self.server, self.metrics, self.loop) = (state, server, metrics, loop)
    }

    /// Returns the error, if any, for the `reload` command.
    func reload(trigger: String) -> ConfigError? {
        Daemon.notify("RELOADING=1")
        defer { Daemon.notify("READY=1") }
        state.metering?.reopenLog()
        let fresh: DaemonConfig
        do {
            fresh = try DaemonConfig.load(path: state.paths.config, required: state.paths.configRequired)
        } catch {
            Diagnostics.error("\(trigger): \(error); keeping the running configuration")
            return error
        }
        state.configure(fresh)
        server.limits = Daemon.limits(fresh)
        if let metering = state.metering {
            metering.limitLog(maxSize: fresh.logMaxSize, keep: fresh.logFiles)
            metering.retentionOwners = fresh.retention.owners
            metering.foldInterval = fresh.foldInterval
            let configuration = fresh.historyConfiguration
            metering.worker.run({ store in store.configuration = configuration }, then: { _ in })
            metering.service.reconfigure(fresh.serviceConfiguration)
            metering.watchPlans()
            Daemon.reconfigureScopes(metering, config: fresh)
            state.sampleTimer?.setInterval(.seconds(state.interval), now: loop.now)
            state.saveTimer?.setInterval(.seconds(fresh.saveInterval), now: loop.now)
        }
        metrics.reloaded()
        Diagnostics.notice("\(trigger): configuration reloaded from \(state.paths.config)")
        return nil
    }
}
