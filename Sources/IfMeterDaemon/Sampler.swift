import CMemory
import CSystemd
import IfMeterApps
import IfMeterCore
import IfMeterKernel
import IfMeterOwners
import IfMeterPlatform
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// Reads the kernel for the meter, on the loop and the kernel's thread: link events as they
/// come, a sample's queued events and counters, and the owners of links waiting for one. What
/// it read goes to ``deliver``, attributed (docs/NAMESPACES.md); it ingests nothing itself.
///
/// A sample asked for while one is out is taken after it (it must be fresh); the events queued
/// before a sample's counters are read come first, and link events are not read while its dump
/// is out, so the meter sees them in the kernel's order (docs/METER.md, "Order").
final class Sampler {
    /// What was read, and why, for the daemon to ingest.
    struct Read {
        enum Cause {
            /// A periodic or requested sample: events, then counters.
            case sample
            /// Link events as they arrived.
            case linkEvents
            /// Owners found for links that waited.
            case look
        }

        var cause: Cause
        var linkEvents: [LinkObservation]
        var readings: [CounterReading]?
        /// The applications' counts, read just after a sample's counters (docs/APPS.md).
        var apps: AppRead?
        /// With a sample: whether the applications' counts could be read, or why not.
        var appsHealth: AppsHealth?
        /// The interfaces' scope counters, read right after the applications' (docs/SCOPES.md);
        /// nil when not read (not a sample, `apps = no`, or the map cannot be read).
        var scopes: ScopeCounts? = nil
        var at: MeterInstant
    }

    let feeds: LinkFeeds
    /// Takes the counters dump (and a sample's look) off the loop.
    private let dumper: KernelWorker
    private let loop: EventLoop
    /// Host-side links counted as their namespaces' owners', and who finds the owners; nil
    /// with `attribute_owners = no`.
    private var attribution: Attribution
    private let owners: OwnerDirectory?
    /// Each feed's link-event socket's source, in the feeds' order: off while a counters dump is out.
    private var linkEventSources: [EventSource] = []
    /// A counters dump is out; what to do once its readings are applied.
    private var sampling: [() -> Void]?
    /// A sample was asked for while one was out: another follows it.
    private var sampleAgain: [() -> Void]?
    /// A look for waiting links' owners is due or out (``lookSoon(after:)``).
    private var lookPending: EventSource?
    private var looking = false

    /// How soon a look follows one that left links waiting: four a second while a runtime sets
    /// a container up.
    static let lookSpacing: Duration = .milliseconds(250)

    /// Reads the applications' counts with each sample; nil with `apps = no`. Used on the
    /// dump's thread only.
    let apps: AppReader?
    /// Reads the interfaces' scope counters with each sample; nil with `apps = no`. Used on the
    /// dump's thread only.
    let scopes: ScopeReader?

    /// Ingests what was read (set by the daemon before the first read).
    var deliver: (Read) -> Void = { _ in }
    /// After a sample's readings were delivered: how long it took, and who waited for it.
    var sampled: (_ seconds: Double, _ waiting: [() -> Void]) -> Void = { _, waiting in for done in waiting { done() } }

    init(feeds: LinkFeeds, attribution: Attribution, owners: OwnerDirectory?, apps: AppReader?,
         scopes: ScopeReader? = nil, loop: EventLoop) throws(PlatformError) {
        self.feeds = feeds
        self.apps = apps
        self.scopes = scopes
        self.attribution = attribution
        self.owners = owners
        self.loop = loop
        dumper = try KernelWorker(feeds, named: "ifmeterd-dump", loop: loop)
    }

    /// Starts reading each feed's link events as they arrive.
    func watchLinkEvents() throws(PlatformError) {
        for feed in feeds.feeds {
            linkEventSources.append(try loop.watch(fd: feed.events.fileDescriptor, events: UInt32(EPOLLIN.rawValue)) {
                [unowned self] _ in self.readLinkEvents(from: feed)
            })
            if let peers = feed.peers {
                let source = try loop.watch(fd: peers.fileDescriptor, events: UInt32(EPOLLIN.rawValue)) {
                    [unowned self] _ in self.readLinkEvents(from: feed)
                }
                // Tenants can keep it readable: the loop's own work, and root's requests, go first.
                source.setUnimportant()
                linkEventSources.append(source)
            }
        }
    }

    /// A periodic or requested sample: every queued link event now, then the counters dump on
    /// the kernel's thread, while the loop answers others. `then` runs once the readings are
    /// delivered.
    func sample(then done: @escaping () -> Void = {}) {
        guard sampling == nil else {
            sampleAgain = (sampleAgain ?? []) + [done]
            return
        }
        let started = Stopwatch()
        let now = SystemClock.now()
        let events: [LinkObservation]
        do {
            events = try feeds.readQueuedEvents()
        } catch {
            Diagnostics.error("sample failed: \(error)")
            return done()
        }
        sampling = [done]
        for source in linkEventSources { source.setEnabled(false) }
        // This sample's events first, so the look (a few milliseconds at hundreds of
        // containers) covers the links they added; it runs beside the dump, off the loop.
        let attributedEvents = attributed(events, nil, at: now.wall).events
        let look = self.look()
        let apps = self.apps, scopes = self.scopes
        dumper.run({ feeds in
            // The links first, then the applications: a packet going out is counted by the
            // program before its link counts it, and one coming in on its way to its socket,
            // so read in this order the applications never fall behind their links (but for a
            // packet still queued for its socket); where they run ahead, the difference waits
            // as the link's debt and the next sample settles it (docs/APPS.md, "Exact").
            let dump = Result { () throws(KernelError) in try feeds.dumpCounters() }
            let appRead = apps?.read(now: now.sinceBootNanoseconds)
            // After the applications: the tcx programs count a packet before (egress) or
            // after (ingress) its link does, as the cgroup programs do (docs/SCOPES.md).
            let scopeRead = scopes?.read()
            return (dump, look?(), appRead, apps?.health, scopeRead)
        }, then: { [unowned self] (result: Result<[CounterReading], KernelError>, lookups: OwnerLookups?, appRead: AppRead?,
                                   appsHealth: AppsHealth?, scopeRead: ScopeCounts?) in
            for source in linkEventSources { source.setEnabled(true) }
            let readings: [CounterReading]?
            do {
                readings = try result.get()
            } catch {
                Diagnostics.error("sample failed: \(error)")
                readings = nil
            }
            let seen = attributed([], readings, at: now.wall, lookups: lookups)
            deliver(Read(cause: .sample, linkEvents: attributedEvents + seen.events, readings: seen.readings,
                         apps: readings == nil ? nil : appRead, appsHealth: appsHealth,
                         scopes: readings == nil ? nil : scopeRead, at: now))
            // The sample's smaller allocations (under the mmap threshold) leave their pages in
            // the heap until something trims it, and saves are a minute apart; a trim costs
            // little beside a sample (docs/BENCHMARKS.md).
            _ = ifm_malloc_trim()
            let waiting = sampling ?? []
            sampling = nil
            sampled(started.seconds, waiting)
            if let again = sampleAgain {
                sampleAgain = nil
                sample { for done in again { done() } }
            } else {
                lookSoon(after: Self.lookSpacing)
            }
        })
    }

    /// The last sample, taken on the loop at once: a dump still out is applied first, and no
    /// other follows.
    func sampleFinally() {
        sampleAgain = nil
        dumper.drain()
        do {
            let now = SystemClock.now()
            let read = try feeds.sample()
            let appRead = apps?.read(now: now.sinceBootNanoseconds)
            let scopeRead = scopes?.read()
            let applied = attributed(read.linkEvents, read.readings, at: now.wall)
            let seen = attributed([], nil, at: now.wall, lookups: look()?())
            deliver(Read(cause: .sample, linkEvents: applied.events + seen.events, readings: applied.readings,
                         apps: appRead, appsHealth: apps?.health, scopes: scopeRead, at: now))
        } catch {
            Diagnostics.error("sample failed: \(error)")
        }
    }

    /// Links wait for their owners: a look on the kernel's thread after `delay`,
    /// not only at the next sample, so that a container living less than an interval is named
    /// too. While its runtime is still setting the container up, looks follow every quarter of
    /// a second until the grace runs out. A sample out meanwhile takes its own look.
    func lookSoon(after delay: Duration = .zero) {
        guard lookPending == nil, !looking, !attribution.unsettled.isEmpty else { return }
        lookPending = try? loop.after(delay) { [unowned self] in
            lookPending = nil
            guard sampling == nil, let look = look() else { return }
            looking = true
            dumper.run({ _ in look() }, then: { [unowned self] lookups in
                looking = false
                guard sampling == nil else { return }
                let now = SystemClock.now()
                let seen = attributed([], nil, at: now.wall, lookups: lookups)
                if !seen.events.isEmpty { deliver(Read(cause: .look, linkEvents: seen.events, at: now)) }
                lookSoon(after: Self.lookSpacing)
            })
        }
    }

    /// A feed's event socket is readable: one bounded read, so a burst is taken over several turns.
    private func readLinkEvents(from feed: LinkFeed) {
        do {
            let now = SystemClock.now()
            let seen = attributed(try feed.readEvents(), nil, at: now.wall)
            // Nothing for the meter (another namespace's deletions, or nothing at all): a tenant
            // churning links wakes the loop for each message, and an ingest would follow each.
            guard !seen.events.isEmpty else { return }
            deliver(Read(cause: .linkEvents, linkEvents: seen.events, at: now))
            lookSoon()
        } catch {
            Diagnostics.error("reading link events failed: \(error)")
        }
    }

    /// What the feeds read, as the meter should see it: attributed links renamed and turned
    /// round, waiting ones left out; then what `lookups` settles (the owners of the links
    /// that waited when the look began), after the events.
    private func attributed(_ events: [LinkObservation], _ readings: [CounterReading]?, at wall: Double,
                            lookups: OwnerLookups? = nil) -> (events: [LinkObservation], readings: [CounterReading]?) {
        guard owners != nil else { return (events, readings) }
        var events = attribution.apply(events, at: wall)
        let readings = readings.map { attribution.apply(readings: $0) }
        if let lookups { events += attribution.settle(lookups, at: wall) }
        return (events, readings)
    }

    /// The look a sample takes for the links waiting now, to run wherever the sample's dump
    /// runs; nil when none waits.
    private func look() -> (@Sendable () -> OwnerLookups)? {
        guard let owners, !attribution.isSettled else { return nil }
        let unsettled = attribution.unsettled
        return { owners.lookUp(unsettled) }
    }
}
