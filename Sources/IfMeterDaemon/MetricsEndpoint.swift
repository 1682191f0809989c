import IfMeterHTTP
import IfMeterPlatform
import IfMeterCore
import IfMeterKernel
import IfMeterMetrics
import IfMeterService
import IfMeterWire

/// The metrics the daemon serves, over HTTP (`/metrics`) and as the `metrics` command: the
/// listener, the exposition cache, and the daemon's own sample and save durations.
final class MetricsEndpoint {
    /// What the daemon's figures are now, for an exposition.
    struct Figures {
        var snapshot: MeterSnapshot?
        var plans: [PlanFigures]
        var keepAbsentSeconds: Double
    }

    /// `/metrics` over HTTP, when configured or passed by systemd.
    private var server: MetricsServer?
    private var sampleDurations = Histogram(bounds: Histogram.sampleBounds)
    private var saveDurations = Histogram(bounds: Histogram.saveBounds)
    private var cache: ExpositionCache!

    /// Starts `/metrics` on `fd` when there is one (systemd's socket, or one the daemon bound).
    /// - Parameters:
    ///   - sampledAt: when the figures were last sampled (cheap: read for every scrape).
    ///   - figures: everything an exposition shows, as of now.
    init(listening fd: Int32?, loop: EventLoop, startedAt: Double, sampledAt: @escaping () -> Double?,
         figures: @escaping () -> Figures) throws(PlatformError) {
        cache = ExpositionCache(
            loop: loop, state: { [unowned self] in ExpositionState(sampledAt: sampledAt(), saves: self.saveDurations.count) },
            input: { [unowned self] process in
                let now = SystemClock.now().wall
                let figures = figures()
                var input = MetricsInput(
                    snapshot: figures.snapshot, now: now, keepAbsentSeconds: figures.keepAbsentSeconds,
                    sampleDurations: self.sampleDurations, saveDurations: self.saveDurations, version: IfMeterVersion.string,
                    process: process ? ProcessStats.read(startTime: startedAt) : nil)
                input.plans = figures.plans
                return input
            })
        guard let fd else { return }
        server = try MetricsServer(listening: fd, loop: loop) { [unowned self] request in self.answer(request) }
    }

    /// The port `/metrics` is served on, if it is.
    var port: UInt16? { server?.port }

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

    /// A save ended after `seconds`: the expositions show it.
    func saved(seconds: Double) {
        saveDurations.observe(seconds)
        cache.refresh()
    }

    /// The `metrics` command's answer: the exposition `/metrics` serves, as text.
    func metrics(_ request: MetricsRequest) -> MetricsResult {
        let format: ExpositionFormat = request.format == .openmetrics ? .openMetrics : .prometheus
        let bytes = cache.exposition(ExpositionKey(format: format, gzip: false, process: request.process)).body
        return MetricsResult(contentType: format.contentType, text: String(decoding: bytes, as: UTF8.self))
    }

    /// One HTTP request: `GET` or `HEAD /metrics`, gzip when asked; 404 and 405 otherwise.
    private func answer(_ request: MetricsServer.Request) -> MetricsServer.Answer {
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
        let rendered = cache.exposition(ExpositionKey(format: format, gzip: gzip, process: true))
        return .init(status: 200, contentType: format.contentType, encoding: rendered.gzipped ? "gzip" : nil, body: rendered.body)
    }
}
