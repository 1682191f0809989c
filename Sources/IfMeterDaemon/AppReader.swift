import IfMeterApps
import IfMeterCore
import IfMeterKernel
import IfMeterOwners
import IfMeterPlatform
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// Reads the application counter's pinned maps for a sample, on the kernel's thread, and names
/// the cgroups in them (docs/APPS.md): what the daemon hands the service as an ``AppRead``.
///
/// - The maps are opened when first read, and again when the pin is another file than the one
///   opened (detached and attached again: new maps) or a read fails; while they cannot be,
///   ``state`` says why, once.
/// - A cgroup id first read is named in the same read: a walk of the hierarchy finds its path
///   and ``CgroupNaming`` names it. One gone already (a user removed it and kept its socket) is
///   named by its ancestor two levels down (`user-UID.slice`), which the program kept with its
///   entry: still that user's. An id neither names is never named: its traffic is its link's
///   `#unnamed` remainder. No entry is ever left out of a read, so the sums always meet.
/// - A named cgroup no complete walk finds (one every ``goneSpacing``) is gone: its entries are
///   taken from the map, counted once more as finals, and their room is free for others.
///
/// Not for two threads at once: the sampler uses it on its dump's thread only.
final class AppReader: @unchecked Sendable {
    enum State: Equatable {
        /// Not read yet.
        case unread
        /// Read: the maps' id and size.
        case counting(mapID: UInt32, maxEntries: Int)
        /// The maps could not be opened or read; why.
        case unavailable(String)
    }

    let pinDirectory: String
    let tree: CgroupTree
    private let naming: CgroupNaming
    private let podman: PodmanContainerNames
    private var maps: AppCounterMaps?
    private(set) var state = State.unread
    /// How many entries the last read found.
    private var entries = 0
    /// Each named cgroup id's subject.
    private var names: [UInt64: String]
    /// Ids a complete walk did not find before they were named: counted in their remainders.
    private var unnameable: Set<UInt64> = []
    private var lastWalk: UInt64?
    /// Boot-clock nanoseconds between walks that look for gone cgroups when none is new.
    var goneSpacing: UInt64 = 60_000_000_000
    /// The counts pin the maps were opened from (device and inode): another file there is
    /// another program's maps.
    private var openedPin: (dev: UInt64, ino: UInt64)?

    /// - Parameter podman: Podman's containers' names, a rootless one's from its user's own
    ///   storage (Docker's are not looked up: their short ids stand in).
    init(pinDirectory: String, cgroupRoot: String, names: [UInt64: String], podman: PodmanContainerNames = PodmanContainerNames()) {
        self.pinDirectory = pinDirectory
        let tree = CgroupTree(root: cgroupRoot)
        self.tree = tree
        naming = CgroupNaming(containerName: { container in
            container.runtime == .podman ? podman.name(id: container.id, uid: container.uid) : nil
        }, firstCommand: { tree.firstCommand(inCgroup: $0) })
        self.names = names
        self.podman = podman
    }

    /// One read at boot-clock time `now`: nil when the maps cannot be read (``state`` says why).
    func read(now: UInt64) -> AppRead? {
        do {
            let maps = try openMaps()
            let dump = try maps.read()
            state = .counting(mapID: dump.mapID, maxEntries: dump.maxEntries)
            entries = dump.entries.count
            return try counted(dump, maps: maps, now: now)
        } catch {
            self.maps = nil
            let reason = "\(error)"
            if state != .unavailable(reason) {
                Diagnostics.warning("applications are not counted: \(reason)")
            }
            state = .unavailable(reason)
            return nil
        }
    }

    /// What `status` says of it.
    var health: AppsHealth {
        switch state {
        case .unread: AppsHealth(counting: false, detail: "not read yet")
        case .counting(let mapID, let maxEntries):
            AppsHealth(counting: true, detail: "map \(mapID) pinned in \(pinDirectory): \(entries) of \(maxEntries) entries")
        case .unavailable(let reason): AppsHealth(counting: false, detail: reason)
        }
    }

    private func openMaps() throws(KernelError) -> AppCounterMaps {
        let pin = pinDirectory + "/app_counts"
        var info = stat()
        guard stat(pin, &info) == 0 else {
            maps = nil
            throw KernelError(call: "stat \(pin)", errno: errno, detail: "the application counter is not attached there")
        }
        let identity = (dev: UInt64(info.st_dev), ino: UInt64(info.st_ino))
        if let maps, let openedPin, openedPin == identity { return maps }
        let opened = try AppCounterMaps(pinDirectory: pinDirectory, writable: true)
        maps = opened
        openedPin = identity
        return opened
    }

    private func counted(_ dump: AppCounterDump, maps: AppCounterMaps, now: UInt64) throws(KernelError) -> AppRead {
        // One lookup an entry in the steady state: its id's name.
        var unknown = Set<UInt64>()
        for entry in dump.entries where names[entry.cgroupID] == nil && !unnameable.contains(entry.cgroupID) {
            unknown.insert(entry.cgroupID)
        }
        var newNames: [UInt64: String] = [:]
        var finals: [AppCounterKey: Traffic] = [:]
        let due = lastWalk.map { now &- $0 >= goneSpacing } ?? true
        if !unknown.isEmpty || (due && !dump.entries.isEmpty) {
            lastWalk = now
            // A cgroup gone before it was named is named by its ancestor, if that is still there
            // (a user's slice): its traffic is still that user's.
            var ancestors: [UInt64: UInt64] = [:]
            if !unknown.isEmpty {
                for entry in dump.entries where entry.ancestorID != 0 && unknown.contains(entry.cgroupID) {
                    ancestors[entry.cgroupID] = entry.ancestorID
                }
            }
            let walk = try? tree.walk(wanting: unknown.union(ancestors.values))
            // Each user's container list is read at most once for all the ids named now.
            podman.newRound()
            for id in unknown {
                guard let path = walk?.paths[id] ?? ancestors[id].flatMap({ walk?.paths[$0] }) else { continue }
                let subject = naming.subject(ofPath: path).name
                names[id] = subject
                newNames[id] = subject
            }
            // Not found now, never named: counted as its link's unnamed traffic from the first byte.
            unnameable.formUnion(unknown.subtracting(newNames.keys))
            if let walk, walk.complete {
                for entry in dump.entries where !walk.live.contains(entry.cgroupID) {
                    if let taken = try maps.take(cgroupID: entry.cgroupID, ifindex: entry.ifindex, scope: entry.scope) {
                        finals[AppCounterKey(cgroupID: entry.cgroupID, ifindex: entry.ifindex, scope: entry.scope)] = Traffic(taken)
                    }
                }
            }
        }
        var counters: [AppCount] = []
        counters.reserveCapacity(dump.entries.count + dump.overflow.count)
        for entry in dump.entries {
            let key = AppCounterKey(cgroupID: entry.cgroupID, ifindex: entry.ifindex, scope: entry.scope)
            // Taken just now: counted as a final.
            if !finals.isEmpty, finals[key] != nil { continue }
            counters.append(AppCount(key: key, traffic: Traffic(entry.traffic)))
        }
        for (ifindex, traffic) in dump.overflow {
            counters.append(AppCount(key: .overflow(ifindex: ifindex), traffic: Traffic(traffic)))
        }
        // Names and marks of ids no longer in the map are not needed again; a map holds at
        // least an entry an id, so only more names than entries means some are stale.
        if names.count > dump.entries.count || unnameable.count > dump.entries.count {
            let ids = Set(dump.entries.map(\.cgroupID))
            names = names.filter { ids.contains($0.key) }
            unnameable.formIntersection(ids)
        }
        return AppRead(counts: AppCounts(mapID: dump.mapID, counters: counters, finals: finals, lost: Traffic(dump.lost)),
                       names: newNames)
    }
}

extension Traffic {
    init(_ traffic: AppTraffic) {
        self.init(rxBytes: traffic.rxBytes, txBytes: traffic.txBytes, rxPackets: traffic.rxPackets,
                  txPackets: traffic.txPackets)
    }
}
