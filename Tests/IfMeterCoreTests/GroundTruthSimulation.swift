import IfMeterCore
import IfMeterTestSupport
import Testing

/// A simulated kernel and daemon lifecycle driving the real ``Meter``.
///
/// The simulation knows every byte it generated. Its expected totals come from that traffic
/// and from the contract's documented losses, decided by what happened in the simulated world
/// (a reset, a deletion whose message lacks rx, a deletion nobody announced, a name first seen
/// at daemon start), never from counter arithmetic or from the meter's output. What the meter
/// produced counts only once "saved": a crash throws away everything since the last save, as a
/// store that commits totals and meter state in one transaction would.
struct GroundTruthSimulation {
    struct SimLink {
        var ifindex: Int32
        var name: String
        var counters = Traffic.zero
        var is32Bit = false
        /// Its delete message reports rx 0, like a veth whose peer went first.
        var vethLike = false
        /// The meter tracks this ifindex (it was told, and has not forgotten in a crash).
        var known = false
        /// The name the meter attributes this link's traffic to.
        var meterName = ""
        /// Traffic generated since the meter last took this link's counters.
        var unapplied = Traffic.zero
        var generatedSinceSave = Traffic.zero
    }

    struct Saved {
        var truth: [String: Traffic]
        var history: Set<String>
        var links: [Int32: SimLink]
        var state: MeterState
    }

    var random: SplitMix64
    var links: [Int32: SimLink] = [:]
    var nextIfindex: Int32 = 2
    var bootID = "boot-0"
    var boots = 0
    var wall = 1_800_000_000.0
    var sinceBoot = 10.0
    var meter: Meter
    var truth: [String: Traffic] = [:]
    var history: Set<String> = []
    var saved: Saved
    var pending = MeterOutput()
    var committed = MeterOutput()
    var dropEvents = 0
    var resyncDue = false
    var counts: [String: Int] = [:]
    let names = (0..<24).map { "if\($0)" }

    init(seed: UInt64) {
        random = SplitMix64(state: seed)
        meter = Meter(bootID: bootID)
        saved = Saved(truth: [:], history: [], links: [:], state: meter.exportState())
    }

    var instant: MeterInstant { MeterInstant(wall: wall, sinceBootNanoseconds: UInt64(sinceBoot * 1e9)) }

    mutating func tick() {
        let seconds = Double(Int.random(in: 1...30, using: &random))
        wall += seconds
        sinceBoot += seconds
    }

    func kernelLink(_ link: SimLink) -> Link {
        let c = reported(link)
        return Link(ifindex: link.ifindex, name: link.name, kind: link.vethLike ? "veth" : "tun",
                    arpType: ARPHRD.none,
                    counters: LinkCounters(rxBytes: c.rxBytes, txBytes: c.txBytes,
                                           rxPackets: c.rxPackets, txPackets: c.txPackets),
                    countersAre32Bit: link.is32Bit)
    }

    /// What the kernel reports: 32-bit sources wrap.
    func reported(_ link: SimLink) -> Traffic {
        link.is32Bit ? link.counters.combined(with: .zero) { a, _ in a % CounterStep.wrapModulus } : link.counters
    }

    mutating func record(_ output: MeterOutput) { pending += output }

    mutating func credit(_ name: String, _ traffic: Traffic) { truth[name, default: .zero] += traffic }

    /// The meter took this link's counters: everything unapplied goes to the name it knows.
    mutating func applied(_ ifindex: Int32) {
        guard var link = links[ifindex], link.known else { return }
        credit(link.meterName, link.unapplied)
        link.unapplied = .zero
        links[ifindex] = link
    }

    /// A link unknown to the meter is counted from zero under its current name.
    mutating func countedFromZero(_ ifindex: Int32) {
        guard var link = links[ifindex] else { return }
        credit(link.name, link.unapplied)
        link.unapplied = .zero
        link.known = true
        link.meterName = link.name
        history.insert(link.name)
        links[ifindex] = link
    }

    mutating func freeName() -> String? {
        let used = Set(links.values.map(\.name))
        return names.filter { !used.contains($0) }.randomElement(using: &random)
    }

    mutating func createLink(is32Bit: Bool = false, initial: Traffic = .zero) -> Int32 {
        let ifindex = nextIfindex
        nextIfindex += 1
        var link = SimLink(ifindex: ifindex, name: freeName()!, counters: initial, is32Bit: is32Bit,
                           vethLike: Bool.random(using: &random))
        link.unapplied = initial
        links[ifindex] = link
        return ifindex
    }

    // MARK: World actions

    mutating func traffic() {
        guard let ifindex = links.keys.randomElement(using: &random) else { return }
        let bytes = UInt64.random(in: 1...(links[ifindex]!.is32Bit ? 50_000_000 : 500_000_000), using: &random)
        let rxShare = UInt64.random(in: 0...bytes, using: &random)
        let chunk = Traffic(rxBytes: rxShare, txBytes: bytes - rxShare,
                            rxPackets: rxShare / UInt64.random(in: 64...1500, using: &random) + (rxShare > 0 ? 1 : 0),
                            txPackets: (bytes - rxShare) / 700 + (bytes > rxShare ? 1 : 0))
        links[ifindex]!.counters += chunk
        links[ifindex]!.unapplied += chunk
        links[ifindex]!.generatedSinceSave += chunk
    }

    mutating func poll() {
        tick()
        let readings = links.values.map { CounterReading(ifindex: $0.ifindex, counters: LinkCounters(
            rxBytes: reported($0).rxBytes, txBytes: reported($0).txBytes,
            rxPackets: reported($0).rxPackets, txPackets: reported($0).txPackets)) }
        record(meter.apply(sample: readings, at: instant))
        for ifindex in links.keys { applied(ifindex) }
    }

    /// Delivers an event, unless the socket is "overflowing": then it is lost, and once the
    /// burst is over the meter resyncs from a full dump.
    mutating func deliver(_ event: LinkEvent) -> Bool {
        guard dropEvents == 0 else {
            dropEvents -= 1
            resyncDue = dropEvents == 0
            return false
        }
        tick()
        record(meter.apply(event, at: instant))
        return true
    }

    mutating func create() {
        guard freeName() != nil else { return }
        let ifindex = createLink()
        if deliver(.newOrChanged(kernelLink(links[ifindex]!))) { countedFromZero(ifindex) }
    }

    mutating func delete() {
        guard let ifindex = links.values.filter({ !$0.is32Bit }).map(\.ifindex).randomElement(using: &random)
        else { return }
        var message = kernelLink(links[ifindex]!)
        if links[ifindex]!.vethLike {
            message.counters!.rxBytes = 0
            message.counters!.rxPackets = 0
        }
        let link = links[ifindex]!
        let delivered = deliver(.deleted(message))
        if delivered && link.known {
            var counted = link.unapplied
            if link.vethLike { (counted.rxBytes, counted.rxPackets) = (0, 0) }
            credit(link.meterName, counted)
        }
        links[ifindex] = nil
        counts["deleted", default: 0] += 1
    }

    mutating func rename() {
        guard let ifindex = links.values.filter({ !$0.is32Bit }).map(\.ifindex).randomElement(using: &random),
              let name = freeName() else { return }
        links[ifindex]!.name = name
        if deliver(.newOrChanged(kernelLink(links[ifindex]!))) {
            if links[ifindex]!.known {
                applied(ifindex)
                links[ifindex]!.meterName = name
                history.insert(name)
            } else {
                countedFromZero(ifindex)
            }
        }
        counts["renamed", default: 0] += 1
    }

    /// A driver reset, caught by the very next poll and saved with it. Only on a link whose
    /// counters the meter last saw above zero: a reset from zero to zero is invisible.
    mutating func driverReset() {
        guard let ifindex = links.values.filter({ !$0.is32Bit && $0.known && $0.counters != $0.unapplied })
            .map(\.ifindex).randomElement(using: &random), dropEvents == 0 else { return }
        links[ifindex]!.counters = .zero
        links[ifindex]!.unapplied = .zero  // lost with the kernel's counters
        poll()
        save()
        counts["reset", default: 0] += 1
    }

    mutating func resync() {
        tick()
        record(meter.resync(links: links.values.map(kernelLink), at: instant))
        for ifindex in links.keys.sorted() {
            if links[ifindex]!.known {
                applied(ifindex)
                links[ifindex]!.meterName = links[ifindex]!.name
                history.insert(links[ifindex]!.name)
            } else {
                countedFromZero(ifindex)
            }
        }
        counts["resync", default: 0] += 1
    }

    mutating func save() {
        committed += pending
        pending = MeterOutput()
        for ifindex in links.keys { links[ifindex]!.generatedSinceSave = .zero }
        saved = Saved(truth: truth, history: history, links: links, state: meter.exportState())
    }

    /// The world while the daemon is down: traffic, renames, deletions and creations nobody
    /// announces.
    mutating func downtime() {
        for _ in 0..<Int.random(in: 0...6, using: &random) {
            tick()
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6: traffic()
            case 6:
                if let ifindex = links.values.filter({ !$0.is32Bit }).map(\.ifindex).randomElement(using: &random),
                   let name = freeName() { links[ifindex]!.name = name }
            case 7:
                if let ifindex = links.values.filter({ !$0.is32Bit }).map(\.ifindex).randomElement(using: &random) {
                    links[ifindex] = nil
                }
            default:
                if freeName() != nil { _ = createLink() }
            }
        }
    }

    /// Start on the restored state: resume, count from zero, or baseline, per link.
    mutating func start() {
        tick()
        record(meter.start(links: links.values.map(kernelLink), at: instant))
        for ifindex in links.keys.sorted() {
            let link = links[ifindex]!
            if link.known {
                applied(ifindex)
                links[ifindex]!.meterName = link.name
                history.insert(link.name)
            } else if history.contains(link.name) {
                countedFromZero(ifindex)
            } else {
                links[ifindex]!.unapplied = .zero  // the baseline: before ifmeter's time
                links[ifindex]!.known = true
                links[ifindex]!.meterName = link.name
                history.insert(link.name)
            }
        }
    }

    mutating func gracefulRestart() {
        poll()
        save()
        restartFromSave(counting: "restart")
    }

    /// The daemon is down for a while, then a new one starts from the last save.
    mutating func restartFromSave(counting kind: String) {
        downtime()
        meter = Meter(bootID: bootID, restoring: saved.state)
        start()
        counts[kind, default: 0] += 1
    }

    /// SIGKILL: everything since the last save is gone from the store and the meter, while the
    /// kernel's counters still hold it.
    mutating func crash() {
        guard dropEvents == 0 else { return }
        pending = MeterOutput()
        truth = saved.truth
        history = saved.history
        for ifindex in links.keys {
            var link = links[ifindex]!
            if let before = saved.links[ifindex], before.known {
                link.known = true
                link.meterName = before.meterName
                link.unapplied = before.unapplied + link.generatedSinceSave
            } else {
                link.known = false
                link.unapplied = link.counters
            }
            links[ifindex] = link
        }
        restartFromSave(counting: "crash")
    }

    mutating func reboot() {
        guard dropEvents == 0 else { return }
        poll()
        save()
        boots += 1
        bootID = "boot-\(boots)"
        sinceBoot = 5
        for old in links.values.sorted(by: { $0.ifindex < $1.ifindex }) {
            links[old.ifindex] = nil
            let ifindex = nextIfindex
            nextIfindex += 1
            var link = old
            link.ifindex = ifindex
            link.counters = .zero
            link.unapplied = .zero
            link.known = false
            links[ifindex] = link
        }
        restartFromSave(counting: "reboot")
    }

    /// Keeps 32-bit links within one wrap between readings and between saves.
    mutating func keep32BitReadable() {
        let limit: UInt64 = 1_000_000_000
        if links.values.contains(where: { $0.is32Bit && ($0.unapplied.rxBytes > limit || $0.unapplied.txBytes > limit) }) {
            poll()
        }
        if links.values.contains(where: { $0.is32Bit && ($0.generatedSinceSave.rxBytes > limit || $0.generatedSinceSave.txBytes > limit) }) {
            save()
        }
    }

    mutating func run(steps: Int) {
        for _ in 0..<6 {
            _ = createLink(initial: Traffic(rxBytes: .random(in: 0...1 << 40, using: &random),
                                            txBytes: .random(in: 0...1 << 40, using: &random),
                                            rxPackets: .random(in: 1...1 << 30, using: &random),
                                            txPackets: .random(in: 1...1 << 30, using: &random)))
        }
        _ = createLink(is32Bit: true, initial: Traffic(rxBytes: (1 << 32) - 100_000, txBytes: (1 << 32) - 5,
                                                        rxPackets: (1 << 32) - 3, txPackets: 7))
        start()
        for _ in 0..<steps {
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<45: traffic()
            case 45..<65: poll()
            case 65..<68: rename()
            case 68..<71: delete()
            case 71..<75: create()
            case 75..<77: driverReset()
            case 77..<85: if dropEvents == 0 { save() }
            case 85..<88: if dropEvents == 0 { gracefulRestart() }
            case 88..<91: crash()
            case 91..<92: reboot()
            case 92..<94: if dropEvents == 0 { dropEvents = Int.random(in: 1...4, using: &random) }
            default: traffic()
            }
            if resyncDue {
                resyncDue = false
                resync()
            }
            keep32BitReadable()
        }
        if dropEvents > 0 {
            dropEvents = 0
            resync()
        }
        poll()
        save()
    }

    var committedTotals: [String: Traffic] {
        committed.deltas.reduce(into: [:]) { $0[$1.name, default: .zero] += $1.traffic }
            .filter { !$0.value.isZero }
    }
}
