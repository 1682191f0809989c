import IfMeterHTTP
import IfMeterPlatform
import IfMeterCore
import IfMeterKernel
import IfMeterMetrics
import IfMeterService
import IfMeterWire

/// The metrics the daemon serves, over HTTP (`/metrics`, routed here by ``WebEndpoint``) and as
/// the `metrics` command: the exposition cache, and the daemon's own sample and save durations.
final class MetricsEndpoint {
    /// What the daemon's figures are now, for an exposition.
    struct Figures {
        var snapshot: MeterSnapshot?
        var plans: [PlanFigures]
        var percentiles: [PercentileFigures]
        var keepAbsentSeconds: Double
        /// Every scope subject's figures (docs/SCOPES.md).
        var scopes: [InterfaceFigures] = []
    }

    private var sampleDurations = Histogram(bounds: Histogram.sampleBounds)
    private var saveDurations = Histogram(bounds: Histogram.saveBounds)
    private var reloads: UInt64 = 0
    private var cache: ExpositionCache!

    /// Reads the daemon's figures from `state`: when they were last sampled (cheap: for every
    /// scrape), and everything an exposition shows.
    init(loop: EventLoop, state daemon: DaemonState) {
        cache = ExpositionCache(
            loop: loop, state: { [unowned self] in
                ExpositionState(sampledAt: daemon.metering?.service.summary.sampledAt?.wall, saves: self.saveDurations.count,
                                reloads: self.reloads)
            },
            input: { [unowned self] process in
                let now = SystemClock.now().wall
                let figures = daemon.metricsFigures
                var input = MetricsInput(
                    snapshot: figures.snapshot, now: now, keepAbsentSeconds: figures.keepAbsentSeconds,
                    sampleDurations: self.sampleDurations, saveDurations: self.saveDurations, version: IfMeterVersion.string,
                    process: process ? ProcessStats.read(startTime: daemon.startedAt) : nil)
                input.plans = figures.plans
                input.percentiles = figures.percentiles
                input.scopes = figures.scopes
                return input
            })
    }

    /// Expositions are rendered on this thread once the daemon runs.
    func renderOn(_ answers: AnswerWorker) {
        cache.answers = answers
    }

    /// A sample's readings are applied: its duration, and the expositions rendered again;
    /// `done` runs once they show it.
    func sampled(seconds: Double, then done: @escaping () -> Void) {
        sampleDurations.observe(seconds)
        cache.refresh(then: done)
    }

    /// A reload took effect: the expositions are rendered again at once, so nothing it hides
    /// (`network_names = hidden`) is served a moment longer than it has to be.
    func reloaded() {
        reloads += 1
        cache.discardRendered()
        cache.refresh()
    }

    /// A save ended after `seconds`: the expositions show it.
    func saved(seconds: Double) {
        saveDurations.observe(seconds)
        cache.refresh()
    }

    /// The `metrics` command's answer: the exposition `/metrics` serves, as text.
    func metrics(_ request: MetricsRequest.Checked) -> MetricsResult {
        let format: ExpositionFormat = request.format == .openmetrics ? .openMetrics : .prometheus
        let bytes = cache.exposition(ExpositionKey(format: format, gzip: false, process: request.process)).body
        return MetricsResult(contentType: format.contentType, text: String(decoding: bytes, as: UTF8.self))
    }

    /// `GET` or `HEAD /metrics`: the exposition its `Accept` asks for, gzip when asked.
    func answer(_ request: HTTPServer.Request) -> HTTPServer.Answer {
        let format = ExpositionFormat(accept: request.accept)
        let gzip = ContentCoding.acceptsGzip(request.acceptEncoding)
        let rendered = cache.exposition(ExpositionKey(format: format, gzip: gzip, process: true))
        return .init(status: 200, contentType: format.contentType, encoding: rendered.gzipped ? "gzip" : nil, body: rendered.body)
    }
}
