import IfMeterCore
import IfMeterHistory
import IfMeterKernel
import IfMeterOwners
import IfMeterService
#if canImport(Glibc)
import Glibc
#endif

/// What attributing host-side veths to their namespaces' owners, and libvirt taps to their
/// virtual machines, costs a sample, in one run (run where scripts/bench made containers: veths
/// whose peers are each in a bound namespace of its own, each named as a Kubernetes pod by a CNI
/// result as containerd's CRI writes one; the taps and the domains' status files are made here). Two services step through the same samples, each the real `RTM_GETSTATS` dump of the
/// namespace and the ingest of every link busy (every counter moved), a save every other sample:
/// one takes the links as they are, the other through ``Attribution`` (each link renamed to its
/// owner's subject and its counters turned round). Then the look a new container costs with all
/// the others present: a veth into one more namespace, from its link event to its owner.
func containerBenchmark(rounds: Int = 200) throws {
    let socket = try NetlinkSocket()
    var vms = try VirtualMachines(domains: 100)
    defer { vms.remove() }
    let pods = try CNIPods()
    defer { pods.remove() }
    let links = try socket.dumpLinks()
    let hostSides = links.filter { $0.peerNamespaceID != nil || Attribution.isTap($0) }
    guard hostSides.count >= 10 + vms.domains else {
        throw BenchmarkError("run it where scripts/bench made containers: \(hostSides.count) host-side veths and taps here")
    }
    let directory = try OwnerDirectory(paths: OwnerPaths(namedNamespaces: ["/run/netns"], podmanStorage: "/nonexistent",
                                                         dockerRoot: "/nonexistent", proc: "/nonexistent", libvirtQemu: vms.state,
                                                         cniResults: pods.results))
    // A new namespace no CNI result names is named as `attribute_owners = all` names it.
    var attribution = Attribution(scope: .all)
    let lookStarted = nanoseconds()
    let attributed = attribution.start(links, at: ContainerRun.instant(0).wall, lookUp: directory.lookUp)
    let fullLook = nanoseconds() - lookStarted
    let owned = attributed.filter { $0.owner != nil }.count
    guard owned == hostSides.count else { throw BenchmarkError("\(owned) of \(hostSides.count) host sides attributed") }
    let podsNamed = attributed.filter { $0.owner?.kind == .kubernetes }.count
    guard podsNamed == hostSides.count - vms.domains else {
        throw BenchmarkError("\(podsNamed) of \(hostSides.count - vms.domains) containers named as pods")
    }

    var plain = ContainerRun(links: links, attribution: nil)
    var withOwners = ContainerRun(links: attributed, attribution: attribution)
    let dump = { () throws -> [CounterReading] in try socket.dumpCounters() }
    for round in 1...rounds {
        if round % 2 == 0 {
            try plain.step(round, dump: dump)
            try withOwners.step(round, dump: dump)
        } else {
            try withOwners.step(round, dump: dump)
            try plain.step(round, dump: dump)
        }
    }
    try ContainerRun.check(plain, withOwners, hostSides: hostSides, rounds: rounds)
    let base = median(plain.samples)
    let differences = zip(withOwners.samples, plain.samples).map { Int64(bitPattern: $0 &- $1) }.sorted()
    let added = Double(differences[differences.count / 2])
    let start = try newContainerLook(socket: socket, directory: directory, attribution: &attribution)
    let vm = try vms.newVMLook(directory: directory)
    print("containers: \(hostSides.count - vms.domains) pods' host sides (named by CNI results of \(pods.bytes) bytes) and \(vms.domains) VMs' taps among \(links.count) links, "
        + "\(rounds) samples, each a dump "
        + "and the ingest of every link busy: sample median \(Int(base / 1000)) µs without attribution; attribution adds "
        + "\(Int(added / 1000)) µs (median of the differences by round) = \(ratio(base + added, base)), of which turning "
        + "the readings round \(Int(median(withOwners.applies) / 1000)) µs; "
        + "naming all \(hostSides.count) at start \(fullLook / 1_000_000) ms (reading \(vms.domains) status files of \(vms.bytes) bytes); "
        + "a new container named at the first sample after its link event, that look \(start / 1000) µs; a new VM's tap, "
        + "by a look of \(vm / 1000) µs")
}

/// `domains` running virtual machines as libvirt leaves them for the daemon: a tap each in the
/// benchmark's namespace (`vnetN`, the guest's MAC behind `fe`) and a live status file each (as
/// libvirtd 9.0 writes one, with 150 capability flags) in a directory of the benchmark's.
private struct VirtualMachines {
    let domains: Int
    let state = "/tmp/ifmbench-\(getpid())-libvirt"
    private(set) var bytes = 0

    init(domains: Int) throws {
        self.domains = domains
        guard mkdir(state, 0o700) == 0 else { throw BenchmarkError("could not make \(state)") }
        let taps = (0..<domains).map { "tuntap add dev vnet\($0) mode tap\nlink set dev vnet\($0) address fe:\(Self.mac($0))\n" }
        guard let file = fopen(state + "/taps", "w"), fputs(taps.joined(), file) >= 0, fclose(file) == 0,
              system("ip -batch \(state)/taps") == 0 else {
            remove()
            throw BenchmarkError("could not make \(domains) taps")
        }
        for index in 0..<domains { try write(index) }
    }

    func remove() {
        _ = system("for i in $(seq 0 \(domains - 1)); do ip link del vnet$i 2>/dev/null; done; rm -rf \(state)")
    }

    static func hex(_ value: Int, _ digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    static func mac(_ index: Int) -> String { "54:00:00:\(hex(index >> 8, 2)):\(hex(index & 0xff, 2))" }

    static func uuid(_ index: Int) -> String { "ae25cd81-9c70-4c91-9c74-" + hex(index, 12) }

    private mutating func write(_ index: Int) throws {
        let flags = (0..<150).map { "    <flag name='capability-\($0)'/>\n" }.joined()
        var text = "<domstatus state='running' reason='booted' pid='\(1000 + index)'>\n  <qemuCaps>\n\(flags)  </qemuCaps>\n"
        text += "  <domain type='kvm' id='\(index + 1)'>\n    <name>vm\(index)</name>\n    <uuid>\(Self.uuid(index))</uuid>\n"
        text += "    <devices>\n      <interface type='bridge'><mac address='52:\(Self.mac(index))'/><source bridge='br0'/>"
        text += "<target dev='vnet\(index)'/><model type='virtio'/><alias name='net0'/></interface>\n    </devices>\n"
        text += "  </domain>\n</domstatus>\n"
        guard let file = fopen("\(state)/vm\(index).xml", "w"), fputs(text, file) >= 0, fclose(file) == 0 else {
            throw BenchmarkError("could not write \(state)/vm\(index).xml")
        }
        bytes = text.utf8.count
    }

    /// One more VM's status file, and the look that names its tap (the others' files read
    /// already). Nanoseconds of the look.
    mutating func newVMLook(directory: OwnerDirectory) throws -> UInt64 {
        try write(domains)
        let tap = [Int32(1): TapSight(name: "vnet\(domains)", address: "fe:" + Self.mac(domains))]
        let started = nanoseconds()
        let found = directory.lookUp(taps: tap)
        let elapsed = nanoseconds() - started
        guard found[1] == .found(FoundOwner(.libvirt, name: "vm\(domains)", id: Self.uuid(domains), nic: 1)) else {
            throw BenchmarkError("the new VM's tap was not named: \(found)")
        }
        return elapsed
    }
}

/// A CNI result as containerd's CRI writes one (through libcni) for each namespace bound under
/// /run/netns, naming it the pod `bench/NAME`, in a directory of the benchmark's.
private struct CNIPods {
    let results = "/tmp/ifmbench-\(getpid())-cni"
    private(set) var bytes = 0

    init() throws {
        guard mkdir(results, 0o700) == 0 else { throw BenchmarkError("could not make \(results)") }
        for (index, name) in SysfsReader.listDirectory("/run/netns").sorted().enumerated() {
            let text = """
                {"kind":"cniCacheV1","containerId":"\(VirtualMachines.hex(index, 64))","config":"\(String(repeating: "e30", count: 200))=",\
                "ifName":"eth0","networkName":"podnet","cniArgs":[["K8S_POD_NAMESPACE","bench"],["K8S_POD_NAME","\(name)"],\
                ["K8S_POD_UID","\(VirtualMachines.uuid(index))"],["K8S_POD_INFRA_CONTAINER_ID","\(VirtualMachines.hex(index, 64))"],\
                ["IgnoreUnknown","1"]],"result":{"cniVersion":"1.0.0","interfaces":[{"name":"cni0","mac":"6a:1f:0e:4d:2c:11"},\
                {"name":"veth\(VirtualMachines.hex(index, 8))","mac":"7e:22:90:13:ab:cd"},\
                {"name":"eth0","mac":"92:15:8e:00:11:22","sandbox":"/var/run/netns/\(name)"}],\
                "ips":[{"interface":2,"address":"10.244.\(index >> 8).\(index & 0xff)/16","gateway":"10.244.0.1"}]}}
                """
            guard let file = fopen("\(results)/podnet-\(VirtualMachines.hex(index, 64))-eth0", "w"), fputs(text, file) >= 0,
                  fclose(file) == 0 else {
                remove()
                throw BenchmarkError("could not write a CNI result in \(results)")
            }
            bytes = text.utf8.count
        }
    }

    func remove() { _ = system("rm -rf \(results)") }
}

/// One more namespace and a veth into it, as a runtime starting a container: the link event
/// read, the link waiting, and the look at the next sample that names it. Nanoseconds of the look.
private func newContainerLook(socket: NetlinkSocket, directory: OwnerDirectory, attribution: inout Attribution) throws -> UInt64 {
    let name = "ifmbench-\(getpid())-new"
    let events = try LinkEventSocket()
    guard system("ip netns add \(name) && ip link add hnew type veth peer name eth0 netns \(name)") == 0 else {
        throw BenchmarkError("could not add a namespace and a veth")
    }
    defer { _ = system("ip netns delete \(name)") }
    var seen: [LinkObservation] = []
    while !seen.contains(where: { if case .event(.newOrChanged(let link)) = $0 { link.name == "hnew" } else { false } }) {
        seen += try events.readEvents().observations
    }
    guard attribution.apply(seen, at: ContainerRun.instant(1).wall).allSatisfy({ $0.link?.name != "hnew" }),
          !attribution.isSettled else { throw BenchmarkError("the new host side did not wait for its owner") }
    let started = nanoseconds()
    let settled = attribution.settle(directory.lookUp(attribution.unsettled), at: ContainerRun.instant(1).wall)
    let elapsed = nanoseconds() - started
    guard settled.contains(where: { $0.link?.name == "netns:\(name)" }) else {
        throw BenchmarkError("the new container was not named at the next sample: \(settled)")
    }
    return elapsed
}

private extension LinkObservation {
    var link: Link? {
        if case .event(let event) = self { event.link } else { nil }
    }
}

/// One service and its samples, with or without attribution, in nanoseconds.
private struct ContainerRun {
    var service: MeterService
    var attribution: Attribution?
    var samples: [UInt64] = []
    /// The attribution's own part of each sample.
    var applies: [UInt64] = []
    let ifindexes: [Int32]

    static func instant(_ round: Int) -> MeterInstant {
        MeterInstant(wall: 1_800_000_000 + Double(round) * 30, sinceBootNanoseconds: UInt64(round) * 30_000_000_000)
    }

    init(links: [Link], attribution: Attribution?) {
        self.attribution = attribution
        ifindexes = links.map(\.ifindex)
        var configuration = ServiceConfiguration()
        configuration.store.calendar = BucketCalendar(zone: .utc)
        service = MeterService(bootID: "bench", configuration: configuration, history: ServiceHistory(), at: 1_800_000_000)
        let zeroed = links.map { link in
            var link = link
            link.counters = LinkCounters()
            return link
        }
        _ = service.start(links: zeroed, unparseable: 0, at: Self.instant(0))
    }

    mutating func step(_ round: Int, dump: () throws -> [CounterReading]) throws {
        let bytes = UInt64(round) * 1_000_000
        let started = nanoseconds()
        _ = try dump()
        // Busy links: the dump's counters of links without traffic would let the meter skip work.
        var readings = ifindexes.map { ifindex in
            CounterReading(ifindex: ifindex, counters: LinkCounters(rxBytes: bytes, txBytes: bytes / 2,
                                                                    rxPackets: UInt64(round) * 700, txPackets: UInt64(round) * 350))
        }
        if attribution != nil {
            let applying = nanoseconds()
            readings = attribution!.apply(readings: readings)
            applies.append(nanoseconds() - applying)
        }
        _ = service.ingest(linkEvents: [], readings: readings, at: Self.instant(round))
        samples.append(nanoseconds() - started)
        if round % 2 == 0 {
            let batch = service.beginSave(at: Self.instant(round).wall)
            _ = service.finishSave(batch, error: nil)
        }
    }

    /// Both sides counted the same traffic a user would see: each container's subject has what
    /// its host side carried, turned round.
    static func check(_ plain: ContainerRun, _ owned: ContainerRun, hostSides: [Link], rounds: Int) throws {
        let plainFigures = Dictionary(plain.service.snapshot().interfaces.map { ($0.name, $0.total.traffic) }) { a, _ in a }
        let ownedFigures = owned.service.snapshot().interfaces.filter { $0.present?.owner != nil }
        guard ownedFigures.count == hostSides.count else {
            throw BenchmarkError("\(ownedFigures.count) owners' subjects for \(hostSides.count) host sides")
        }
        for figures in ownedFigures {
            guard let alias = figures.present?.owner?.alias, let host = plainFigures[alias],
                  figures.total.traffic.rxBytes == host.txBytes, figures.total.traffic.txBytes == host.rxBytes,
                  host.rxBytes == UInt64(rounds) * 1_000_000 else {
                throw BenchmarkError("\(figures.name) did not count its host side's traffic turned round")
            }
        }
    }
}
