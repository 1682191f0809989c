import IfMeterHTTP
import IfMeterPlatform
import IfMeterServer
import IfMeterCore
import IfMeterKernel
import IfMeterMetrics
import IfMeterWire

/// The metrics the daemon serves: over HTTP (`/metrics`) and as the `metrics` command.
extension Daemon {
    /// Starts `/metrics` on systemd's socket, else on `--metrics-listen` or `metrics_listen`.
    func startMetrics(passed: Int32?) throws(PlatformError) {
        let fd: Int32
        if let passed {
            fd = passed
        } else if let address = options.metricsListen ?? config.metricsListen {
            fd = try MetricsServer.listen(on: address)
        } else {
            return
        }
        metricsServer = try MetricsServer(listening: fd, loop: loop) { [unowned self] request in
            self.answer(request)
        }
    }

    /// Everything an exposition is made from, as of now.
    func metricsInput(process: Bool) -> MetricsInput {
        let now = SystemClock.now().wall
        var input = MetricsInput(
            snapshot: metering?.service.snapshot(), now: now,
            keepAbsentSeconds: Double(config.metricsKeepAbsent), sampleDurations: sampleDurations,
            saveDurations: saveDurations, version: IfMeterVersion.string,
            process: process ? ProcessStats.read(startTime: startedAt) : nil)
        input.plans = metering?.service.planFigures(at: now) ?? []
        return input
    }

    /// One HTTP request: `GET` or `HEAD /metrics`, gzip when asked; 404 and 405 otherwise.
    func answer(_ request: MetricsServer.Request) -> MetricsServer.Answer {
        let text = "text/plain; charset=utf-8"
        guard request.method == "GET" || request.method == "HEAD" else {
            return .init(status: 405, contentType: text, allow: "GET, HEAD",
                         body: Array("only GET and HEAD are served here\n".utf8))
        }
        guard request.path == "/metrics" else {
            return .init(status: 404, contentType: text, body: Array("not found: ifmeterd serves /metrics\n".utf8))
        }
        let format = ExpositionFormat(accept: request.accept)
        let gzip = ContentCoding.acceptsGzip(request.acceptEncoding)
        let rendered = exposition(ExpositionKey(format: format, gzip: gzip, process: true))
        return .init(status: 200, contentType: format.contentType, encoding: rendered.gzipped ? "gzip" : nil, body: rendered.body)
    }

    /// The exposition `key` asks for, from the cache (``ExpositionCache/exposition(_:)``).
    func exposition(_ key: ExpositionKey) -> ExpositionCache.Rendered {
        expositions.exposition(key)
    }

    /// Renders again, off the loop, every exposition asked for lately that no longer shows the
    /// figures now; `done` runs once they do.
    func refreshExpositions(then done: @escaping () -> Void = {}) {
        expositions.refresh(then: done)
    }

    /// What the figures are as of now.
    var expositionState: ExpositionState {
        ExpositionState(sampledAt: metering?.service.summary.sampledAt?.wall, saves: saveDurations.count)
    }
}
