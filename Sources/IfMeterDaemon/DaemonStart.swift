import IfMeterPlatform
import IfMeterServer
import IfMeterCore
import IfMeterKernel
import IfMeterOwners
import IfMeterHistory
import IfMeterStore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// What the daemon's start decides from its configuration and the host, before and while it
/// loads: trusted directories, the server's limits, the store's load, the feeds of other
/// namespaces, and how to name the client.
extension Daemon {
    /// The real path of a directory the daemon writes in, once ``DirectoryTrust`` found nobody
    /// else can write there: 73 when it cannot be checked, 78 when another user could.
    static func trusted(_ path: String, role: String) throws(PlatformError) -> String {
        do {
            return try DirectoryTrust.check(path, role: role, program: "ifmeterd")
        } catch {
            throw PlatformError(error.kind == .unchecked ? .cannotCreate : .configuration, error.message)
        }
    }

    static func limits(_ config: DaemonConfig) -> Server.Limits {
        Server.Limits(
            maxLineLength: config.maxLineLength,
            admission: Admission.Limits(maxClients: config.maxClients, maxClientsPerUID: config.maxClientsPerUID,
                                        adminReserved: config.adminReservedClients),
            clientBuffer: config.clientBuffer,
            unreadPerUID: Self.unreadAnswersPerUID(clientBuffer: config.clientBuffer),
            idleTimeout: .seconds(config.idleTimeout))
    }

    /// Unread answers one uid's connections may hold (``UIDShares``): 16 × `client_buffer`
    /// (16 MiB by default), room for several `interfaces` answers of thousands of links.
    static func unreadAnswersPerUID(clientBuffer: Int) -> Int {
        16 * clientBuffer
    }

    /// Opens and loads the store. A database another program holds (a backup, the sqlite3
    /// shell) is waited for as long as it is held, each try for SQLite's busy timeout, and said
    /// once: exiting after one try would leave the service to systemd's restart limit, and the
    /// daemon answers `ready: false` meanwhile, and stops at once on SIGTERM. Another ifmeterd
    /// on the database is no reason to wait: that fails at once (``StoreLock``).
    static func load(path: String, configuration: HistoryConfiguration, lock: StoreLock?) -> Result<(Store, ServiceHistory), StoreError> {
        var waiting = false
        while true {
            let result = Result { () throws(StoreError) in
                let store = try Store(path: path, configuration: configuration, lock: lock)
                var history = try store.loader.history()
                history.journal = openJournal(of: store)
                return (store, history)
            }
            guard case .failure(let error) = result, case .locked(byPID: nil) = error.kind else { return result }
            if !waiting {
                Diagnostics.notice("database \(path) is held by another program (\(error.message)); waiting until it is let go")
                waiting = true
            }
        }
    }

    /// The save journal's records after the database's last save (docs/CONFIG.md,
    /// `fold_interval`). A journal that cannot be opened costs only writes: every save is then a
    /// full one, and the journal of the daemon says so.
    private static func openJournal(of store: Store) -> [JournalRecord] {
        do {
            let reading = try store.openJournal()
            if let note = reading.note { Diagnostics.warning("save journal \(note)") }
            if !reading.records.isEmpty {
                Diagnostics.notice("counting again the \(reading.records.count) save(s) journalled after the database's last fold")
            }
            return reading.records
        } catch {
            Diagnostics.warning("\(error); every save is a full one")
            return []
        }
    }

    /// The reader of the application counter's maps (docs/APPS.md); nil with `apps = no`, or
    /// with no cgroup2 hierarchy, which is said once.
    static func appReader(_ config: DaemonConfig, names: [UInt64: String]) -> AppReader? {
        guard config.apps else { return nil }
        do {
            return AppReader(pinDirectory: config.appsPins, cgroupRoot: try Cgroup2.mountPoint(), names: names,
                             podman: PodmanContainerNames(rootStorage: config.podmanStorage))
        } catch {
            Diagnostics.warning("applications are not counted: \(error)")
            return nil
        }
    }

    /// A feed for each namespace `meter_inside` names, numbered from 1 in the order named; one
    /// that cannot be joined (no such namespace, no `CAP_SYS_ADMIN`) is said and left out, and
    /// the rest is metered as before.
    static func insideFeeds(_ names: [String]) -> [LinkFeed] {
        names.enumerated().compactMap { index, name in
            do {
                return try LinkFeed.inside(namespaceFile: "/run/netns/\(name)", namespace: NamespaceID(rawValue: UInt32(index + 1)),
                                           prefix: SubjectName.owned(.netns, name) + "/")
            } catch {
                Diagnostics.error("meter_inside: \(error); namespace \(name) is not metered (docs/NAMESPACES.md: "
                    + "under systemd it needs docs/examples/meter-inside.conf)")
                return nil
            }
        }
    }

    /// The longest a save or query waits for another program's database lock.
    static let busyWaitMilliseconds: Int32 = 100

    /// `ifmeter` beside this binary when it is there (a build directory), else by name.
    static var clientCommand: String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return "ifmeter" }
        let client = parentDirectory(String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)) + "/ifmeter"
        return access(client, X_OK) == 0 ? client : "ifmeter"
    }

    static func parentDirectory(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func baseName(_ path: String) -> String {
        path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    }
}

/// The background load's result, handed to the loop thread through a pipe.
final class LoadOutcome: @unchecked Sendable {
    var result: Result<(Store, ServiceHistory), StoreError>?
    /// Kept here, where the loading thread's reference keeps them open for its write even when
    /// the loop's watch of them failed.
    private var readEnd: FileDescriptor?
    private var writeEnd: FileDescriptor?

    init(readEnd: Int32, writeEnd: Int32) {
        self.readEnd = FileDescriptor(adopting: readEnd)
        self.writeEnd = FileDescriptor(adopting: writeEnd)
    }

    /// Once the loop has heard from the pipe.
    func closePipe() {
        readEnd.take()?.close()
        writeEnd.take()?.close()
    }
}
