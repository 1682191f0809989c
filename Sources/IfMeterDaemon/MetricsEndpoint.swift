import CMemory
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

    /// The exposition `key` asks for. A render grows with the interfaces (tens of
    /// milliseconds at thousands; docs/BENCHMARKS.md), so it is made on the answers' thread after
    /// each sample and save for every exposition asked for lately (``refreshExpositions(then:)``),
    /// and served from memory to every scrape and `metrics` request until the next one: a
    /// scrape costs the loop a copy. A scrape that comes while the render of a new state is
    /// out gets the one before (at most one sample or save old). Only the first ask of a
    /// key, with nothing to serve yet, is rendered on the loop.
    func exposition(_ key: ExpositionKey) -> Expositions.Rendered {
        let state = expositionState
        expositions.askedAt[key] = loop.now
        if let rendered = expositions.latest[key] {
            if rendered.state != state { refreshExpositions() }
            return rendered
        }
        let rendered = Self.render(metricsInput(process: key.process), key, state: state, generation: expositions.generation)
        expositions.latest[key] = rendered
        return rendered
    }

    /// What the figures are as of now.
    var expositionState: ExpositionState {
        ExpositionState(sampledAt: metering?.service.summary.sampledAt?.wall, saves: saveDurations.count)
    }

    /// Renders, on the answers' thread, every exposition asked for in the last ten minutes that
    /// is not of the figures' current state, then runs `done` on the loop (at once if none).
    func refreshExpositions(then done: @escaping () -> Void = {}) {
        let now = loop.now
        expositions.askedAt = expositions.askedAt.filter { now &- $0.value < Expositions.keptWarmMicroseconds }
        let state = expositionState
        let keys = expositions.askedAt.keys.filter { expositions.latest[$0]?.state != state }
        guard let answers = metering?.answers, !keys.isEmpty else { return done() }
        if expositions.refreshing == state { return expositions.waiting.append(done) }
        expositions.refreshing = state
        expositions.waiting.append(done)
        expositions.generation += 1
        let generation = expositions.generation
        let jobs = keys.map { key in
            (key: key, input: metricsInput(process: key.process), expectedBytes: expositions.latest[key]?.body.count ?? 0)
        }
        answers.run({ _ in
            jobs.map { Self.render($0.input, $0.key, state: state, generation: generation, expectedBytes: $0.expectedBytes) }
        }, then: { [unowned self, keys] (rendered: [Expositions.Rendered]) in
            for (key, body) in zip(keys, rendered) where (self.expositions.latest[key]?.generation ?? 0) <= generation {
                self.expositions.latest[key] = body
            }
            // A render's smaller allocations, and the body it replaced, leave pages in the heap
            // until something trims it, as a sample's do.
            _ = ifm_malloc_trim()
            guard self.expositions.refreshing == state else { return }
            self.expositions.refreshing = nil
            let waiting = self.expositions.waiting
            self.expositions.waiting = []
            for done in waiting { done() }
        })
    }

    /// One exposition's bytes, gzipped when its key says so; runs on any thread.
    static func render(_ input: MetricsInput, _ key: ExpositionKey, state: ExpositionState, generation: UInt64,
                       expectedBytes: Int = 0) -> Expositions.Rendered {
        // Straight into the compressor when gzip is asked: the plain text of thousands of
        // interfaces is megabytes, its gzip a tenth.
        if key.gzip, let gzip = GzipStream() {
            var writer = ExpositionWriter(format: key.format) { gzip.add($0) }
            MetricsExposition.write(input, to: &writer)
            if let compressed = gzip.finish() {
                return Expositions.Rendered(body: compressed, gzipped: true, state: state, generation: generation)
            }
        }
        return Expositions.Rendered(
            body: MetricsExposition.render(input, format: key.format, expectedBytes: expectedBytes), gzipped: false,
            state: state, generation: generation)
    }
}

/// The expositions made so far, the latest of each key, and which keys are asked for.
struct Expositions {
    struct Rendered: Sendable {
        var body: [UInt8]
        var gzipped: Bool
        /// The figures it shows.
        var state: ExpositionState
        /// Which refresh made it: a later one's result is never replaced by an earlier one's.
        var generation: UInt64
    }

    /// A key not asked for in this long is no longer rendered after each sample (Prometheus
    /// scrapes every minute or more often).
    static let keptWarmMicroseconds: UInt64 = 600_000_000

    var latest: [ExpositionKey: Rendered] = [:]
    /// When each key was last asked for (loop µs).
    var askedAt: [ExpositionKey: UInt64] = [:]
    /// The state a refresh is out for, and what waits for it.
    var refreshing: ExpositionState?
    var waiting: [() -> Void] = []
    var generation: UInt64 = 0
}

/// Which exposition: its format, whether gzipped, whether with the process's own figures.
struct ExpositionKey: Hashable {
    var format: ExpositionFormat
    var gzip: Bool
    var process: Bool
}

/// What the figures of an exposition are as of: the last sample and the saves so far.
struct ExpositionState: Equatable, Sendable {
    var sampledAt: Double?
    var saves: UInt64
}
