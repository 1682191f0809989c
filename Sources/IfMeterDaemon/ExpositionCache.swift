import CMemory
import IfMeterHTTP
import IfMeterMetrics
import IfMeterPlatform

/// The metrics endpoint's expositions, rendered once per sample or save and served from
/// memory. A render grows with the interfaces (tens of milliseconds at thousands;
/// docs/BENCHMARKS.md), so it is made on the answers' thread after each sample and save for
/// every exposition asked for lately (``refresh(then:)``), and served to every scrape
/// and `metrics` request until the next one: a scrape costs the loop a copy. A scrape that
/// comes while the render of a new state is out gets the one before (at most one sample or save
/// old). Only the first ask of a key, with nothing to serve yet, is rendered on the loop.
final class ExpositionCache {
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
    static let keptWarm: Duration = .seconds(600)

    private let loop: EventLoop
    /// What the figures are as of now.
    private let state: () -> ExpositionState
    /// Everything an exposition is made from, as of now (with the process's own figures or not).
    private let input: (_ process: Bool) -> MetricsInput
    private var latest: [ExpositionKey: Rendered] = [:]
    /// When each key was last asked for (loop µs).
    private var askedAt: [ExpositionKey: UInt64] = [:]
    /// The state a refresh is out for, and what waits for it.
    private var refreshing: ExpositionState?
    private var waiting: [() -> Void] = []
    private var generation: UInt64 = 0
    /// The answers' thread, once the daemon runs.
    var answers: AnswerWorker?

    init(loop: EventLoop, state: @escaping () -> ExpositionState, input: @escaping (_ process: Bool) -> MetricsInput) {
        self.loop = loop
        self.state = state
        self.input = input
    }

    /// The exposition `key` asks for: the latest rendered, a refresh begun if it is behind.
    func exposition(_ key: ExpositionKey) -> Rendered {
        let now = state()
        askedAt[key] = loop.now
        if let rendered = latest[key] {
            if rendered.state != now { refresh() }
            return rendered
        }
        let rendered = Self.render(input(key.process), key, state: now, generation: generation)
        latest[key] = rendered
        return rendered
    }

    /// Forgets every rendered exposition: the next scrape waits for one of the figures as they
    /// are now, never served one made before (a reload that hides names).
    func discardRendered() {
        latest = [:]
    }

    /// Renders on the answers' thread (none before the daemon runs) every exposition asked for
    /// in the last ten minutes that is not of the figures' current state, then runs `done` on
    /// the loop (at once if none).
    func refresh(then done: @escaping () -> Void = {}) {
        let now = loop.now
        askedAt = askedAt.filter { now &- $0.value < EventLoop.microseconds(Self.keptWarm) }
        let state = state()
        let keys = askedAt.keys.filter { latest[$0]?.state != state }
        guard let answers, !keys.isEmpty else { return done() }
        if refreshing == state { return waiting.append(done) }
        refreshing = state
        waiting.append(done)
        generation += 1
        let generation = generation
        let jobs = keys.map { key in (key: key, input: input(key.process), expectedBytes: latest[key]?.body.count ?? 0) }
        answers.run({ _ in
            jobs.map { Self.render($0.input, $0.key, state: state, generation: generation, expectedBytes: $0.expectedBytes) }
        }, then: { [unowned self, keys] (rendered: [Rendered]) in
            for (key, body) in zip(keys, rendered) where (latest[key]?.generation ?? 0) <= generation {
                latest[key] = body
            }
            // A render's smaller allocations, and the body it replaced, leave pages in the heap
            // until something trims it, as a sample's do.
            _ = ifm_malloc_trim()
            guard refreshing == state else { return }
            refreshing = nil
            let done = waiting
            waiting = []
            for each in done { each() }
        })
    }

    /// One exposition's bytes, gzipped when its key says so; runs on any thread.
    static func render(_ input: MetricsInput, _ key: ExpositionKey, state: ExpositionState, generation: UInt64,
                       expectedBytes: Int = 0) -> Rendered {
        // Straight into the compressor when gzip is asked: the plain text of thousands of
        // interfaces is megabytes, its gzip a tenth.
        if key.gzip, let gzip = GzipStream() {
            var writer = ExpositionWriter(format: key.format) { gzip.add($0) }
            MetricsExposition.write(input, to: &writer)
            if let compressed = gzip.finish() {
                return Rendered(body: compressed, gzipped: true, state: state, generation: generation)
            }
        }
        return Rendered(body: MetricsExposition.render(input, format: key.format, expectedBytes: expectedBytes), gzipped: false,
                        state: state, generation: generation)
    }
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
    /// Reloads of the configuration: one may change what is shown (`network_names = hidden`).
    var reloads: UInt64 = 0
}
