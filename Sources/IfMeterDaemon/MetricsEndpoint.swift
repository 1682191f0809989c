import CMetricsHTTP
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
    func startMetrics(passed: Int32?) throws(DaemonError) {
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
        MetricsInput(
            snapshot: metering?.service.snapshot(), now: SystemClock.now().wall,
            keepAbsentSeconds: Double(config.metricsKeepAbsent), sampleDurations: sampleDurations,
            saveDurations: saveDurations, version: IfMeterVersion.string,
            process: process ? ProcessStats.read(startTime: startedAt) : nil)
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
        let (body, gzipped) = exposition(ExpositionKey(format: format, gzip: gzip, process: true))
        return .init(status: 200, contentType: format.contentType, encoding: gzipped ? "gzip" : nil, body: body)
    }

    /// The exposition `key` asks for, rendered at most once per state of the figures: a
    /// render grows with the interfaces and runs on the loop (docs/BENCHMARKS.md), so scrapes and `metrics`
    /// requests between two samples (or saves) are served the bytes already made, and a
    /// stream of them costs the loop a copy each, not a render. The process's own figures
    /// (CPU, memory) are as of that render.
    func exposition(_ key: ExpositionKey) -> (body: [UInt8], gzipped: Bool) {
        let state = ExpositionState(sampledAt: metering?.service.summary.sampledAt?.wall, saves: saveDurations.count)
        if renderedExpositions.state != state { renderedExpositions = (state, [:]) }
        if let rendered = renderedExpositions.bodies[key] { return rendered }
        let input = metricsInput(process: key.process)
        var rendered = (body: MetricsExposition.render(input, format: key.format), gzipped: false)
        if key.gzip, let gzip = GzipStream() {
            var writer = ExpositionWriter(format: key.format) { gzip.add($0) }
            MetricsExposition.write(input, to: &writer)
            if let compressed = gzip.finish() { rendered = (compressed, true) }
        }
        renderedExpositions.bodies[key] = rendered
        return rendered
    }
}

/// Which exposition: its format, whether gzipped, whether with the process's own figures.
struct ExpositionKey: Hashable {
    var format: ExpositionFormat
    var gzip: Bool
    var process: Bool
}

/// What the figures of an exposition are as of: the last sample and the saves so far.
struct ExpositionState: Equatable {
    var sampledAt: Double?
    var saves: UInt64
}
