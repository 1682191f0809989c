// swift-tools-version:6.0
import PackageDescription

/// Set by the Makefile and the scripts that build with `--static-swift-stdlib` (see `ifmeter`).
let staticClient = Context.environment["IFMETER_STATIC_CLIENT"] == "1"

let package = Package(
    name: "ifmeter",
    products: [
        .executable(name: "ifmeterd", targets: ["ifmeterd"]),
        .executable(name: "ifmeter", targets: ["ifmeter"]),
        .executable(name: "ifmeter-bench", targets: ["ifmeter-bench"]),
    ],
    targets: [
        // Debian's libnl-3 / libnl-route-3, found through pkg-config.
        .systemLibrary(
            name: "CLibNL",
            pkgConfig: "libnl-route-3.0",
            providers: [.apt(["libnl-3-dev", "libnl-route-3-dev"])]
        ),
        // Debian's libsystemd: sd-event (the daemon's loop), sd_notify, sd_listen_fds.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // Debian's libsqlite3.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // Debian's zlib, for the save journal's checksums.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // The kernel-facing C: netlink dumps, link events, getifaddrs. No policy.
        .target(
            name: "CLinkStats",
            dependencies: ["CLibNL"],
            cSettings: [.define("_GNU_SOURCE")]
        ),
        // Debian's libbpf (libbpf-dev): loads, attaches and pins BPF objects. Only CAppCounters.
        .systemLibrary(name: "CLibBPF", pkgConfig: "libbpf", providers: [.apt(["libbpf-dev"])]),
        // The application counter's C: its BPF program (bpf/, compiled for the BPF target by
        // the AppCountersObject plugin, never for the host) and its loader and reader over
        // libbpf. No policy.
        .target(
            name: "CAppCounters",
            dependencies: ["CLibBPF"],
            exclude: ["bpf"],
            cSettings: [.define("_GNU_SOURCE")]
        ),
        // Compiles bpf/app_counters.bpf.c with the toolchain's clang and embeds the object in
        // the target it is applied to (IfMeterKernel), as a Swift string.
        .plugin(name: "AppCountersObject", capability: .buildTool()),
        // The metrics endpoint: libmicrohttpd on the daemon's loop, a TCP listener, gzip (zlib).
        .target(
            name: "CMetricsHTTP", cSettings: [.define("_GNU_SOURCE")],
            linkerSettings: [.linkedLibrary("microhttpd"), .linkedLibrary("z")]),
        // accept4 and peer credentials for the daemon's server, which Swift's Glibc hides.
        .target(name: "CPeerSocket", cSettings: [.define("_GNU_SOURCE")]),
        // glibc's malloc tuning (one arena, trimming), which Swift's Glibc does not import.
        .target(name: "CMemory", cSettings: [.define("_GNU_SOURCE")]),
        // The kernel's NTP state (adjtimex), which Swift's Glibc does not import.
        .target(name: "CClock", cSettings: [.define("_GNU_SOURCE")]),
        // Compact sorted-key JSON straight to bytes, for responses, log records and stored events.
        .target(name: "IfMeterJSON"),
        // Model, classifier, meter and labels. Pure Swift: no sockets, no SQLite.
        .target(name: "IfMeterCore"),
        // Kernel sources turned into IfMeterCore values; the only importer of CLinkStats and of
        // CAppCounters, whose BPF object it carries (the AppCountersObject plugin).
        .target(
            name: "IfMeterKernel", dependencies: ["IfMeterCore", "CLinkStats", "CAppCounters", "CClock"],
            plugins: ["AppCountersObject"]),
        // Data plans as configured, their periods, what fired in one, and which names count
        // toward which plan. Pure.
        .target(name: "IfMeterPlans", dependencies: ["IfMeterCore"]),
        // History as values, which the service fills and the store keeps: pending writes,
        // interface records, what a start loads, how history is bucketed and kept. Pure.
        .target(name: "IfMeterHistory", dependencies: ["IfMeterCore", "IfMeterPlans"]),
        // Who owns the namespace behind a host-side link, and the rewriting that counts it as theirs.
        .target(name: "IfMeterOwners", dependencies: ["IfMeterCore", "IfMeterKernel", "IfMeterJSON"]),
        // Applications: the counting program's reads turned into deltas, cgroups named as
        // people know them, each link's remainder. Pure.
        .target(name: "IfMeterApps", dependencies: ["IfMeterCore"]),
        // History in SQLite: buckets, totals, epochs and meter state, events, retention.
        .target(name: "IfMeterStore", dependencies: ["IfMeterCore", "IfMeterHistory", "IfMeterPlans", "IfMeterJSON", "IfMeterWire", "CSQLite", "CZlib"]),
        // The one owner of what is counted now: meter, link table, classification, pending
        // writes, totals, the estimate log's window. Pure: no sockets, files, clock or SQLite.
        .target(name: "IfMeterService", dependencies: ["IfMeterCore", "IfMeterHistory", "IfMeterPlans", "IfMeterApps"]),
        // The Prometheus / OpenMetrics exposition of a MeterSnapshot: pure text, no I/O.
        .target(name: "IfMeterMetrics", dependencies: ["IfMeterService", "IfMeterHistory", "IfMeterPlans", "IfMeterCore"]),
        // The socket protocol: request and response types, error codes, line framing.
        .target(name: "IfMeterWire", dependencies: ["IfMeterCore", "IfMeterJSON"]),
        // The daemon's platform: the sd-event loop, threads that own one resource each and hand
        // results back to the loop, the journal, systemd's sockets, the daemon's typed errors.
        .target(name: "IfMeterPlatform", dependencies: ["IfMeterCore", "CSystemd", "CMemory"]),
        // The socket server: accept, peer credentials and admission, framing, output budgets per
        // uid. It knows no commands, only the cost its policy gives each request.
        .target(name: "IfMeterServer", dependencies: ["IfMeterPlatform", "IfMeterWire", "IfMeterCore", "CPeerSocket", "CSystemd"]),
        // `/metrics` over HTTP: libmicrohttpd on the loop, per-address admission, gzip.
        .target(name: "IfMeterHTTP", dependencies: ["IfMeterPlatform", "IfMeterCore", "CMetricsHTTP", "CSystemd"]),
        // Which network each NetworkManager device is on, from its D-Bus signals over sd-bus on the loop.
        .target(name: "IfMeterNetworkManager", dependencies: ["IfMeterCore", "IfMeterPlatform", "CSystemd"]),
        // The socket API's commands as a value over a metering context: a request and its peer
        // in, how to answer it out. No socket, loop or lock: tested and fuzzed with values.
        .target(
            name: "IfMeterRequests",
            dependencies: ["IfMeterCore", "IfMeterHistory", "IfMeterPlans", "IfMeterService", "IfMeterStore", "IfMeterWire", "IfMeterJSON"]),
        // Composition: command line, config, probe, event loop, server, systemd.
        .target(
            name: "IfMeterDaemon",
            dependencies: ["IfMeterCore", "IfMeterKernel", "IfMeterOwners", "IfMeterApps", "IfMeterService", "IfMeterHistory", "IfMeterPlans", "IfMeterStore", "IfMeterWire", "IfMeterJSON", "IfMeterMetrics", "IfMeterRequests", "IfMeterPlatform", "IfMeterServer", "IfMeterHTTP", "IfMeterPage", "IfMeterPresentation", "IfMeterNetworkManager", "CSystemd", "CMemory"]),
        .executableTarget(name: "ifmeterd", dependencies: ["IfMeterDaemon"]),
        // How figures are written for people, by the client and the daemon's page alike: byte
        // units, times in the daemon's zone, period names, the SVG bar chart.
        .target(name: "IfMeterPresentation", dependencies: ["IfMeterCore", "IfMeterWire"]),
        // The daemon's pages: HTML and SVG from the answers the HTTP API gives, with their own
        // style sheet and script; nothing fetched from elsewhere.
        .target(name: "IfMeterPage", dependencies: ["IfMeterCore", "IfMeterWire", "IfMeterPresentation"]),
        // The client: views, live rates, the estimate log, quota checks, charts.
        .target(name: "IfMeterCLI", dependencies: ["IfMeterCore", "IfMeterWire", "IfMeterJSON", "IfMeterPresentation"]),
        // The client that `make install` and `make deb` build is one static executable: no
        // dynamic loader, no symbol lookups, so a view starts in less time than a static-stdlib
        // "hello" (docs/BENCHMARKS.md). It loads no library of its own; glibc's NSS is never
        // asked (no user or host lookups). `-static-executable` links only together with
        // `--static-swift-stdlib`, so it is asked for by IFMETER_STATIC_CLIENT=1 beside that
        // flag, and a plain `swift build -c release` builds an ordinary executable.
        .executableTarget(
            name: "ifmeter", dependencies: ["IfMeterCLI"],
            linkerSettings: staticClient ? [.unsafeFlags(["-static-executable"], .when(configuration: .release))] : []),
        // The benchmark's floor: a raw RTM_GETSTATS dump on a plain netlink socket.
        .target(name: "CBenchFloor", cSettings: [.define("_GNU_SOURCE")]),
        // `make bench`: sample cost against a raw C RTM_GETSTATS dump of the same links.
        .executableTarget(
            name: "ifmeter-bench", dependencies: ["IfMeterCore", "IfMeterKernel", "IfMeterOwners", "IfMeterHistory", "IfMeterPlans", "IfMeterPlatform", "IfMeterService", "IfMeterStore", "IfMeterWire", "CBenchFloor", "CSQLite"]),
        // The fuzz targets' bodies: run under libFuzzer by `make fuzz` (scripts/fuzz), and over
        // the committed corpora by FuzzReplayTests. Never linked into a product.
        .target(
            name: "IfMeterFuzzTargets",
            dependencies: ["IfMeterDaemon", "IfMeterRequests", "IfMeterHTTP", "IfMeterPlatform", "IfMeterMetrics", "IfMeterCLI", "IfMeterService", "IfMeterHistory", "IfMeterPlans", "IfMeterStore", "IfMeterWire", "IfMeterJSON", "IfMeterCore", "IfMeterKernel", "IfMeterOwners", "IfMeterNetworkManager", "IfMeterApps", "CLinkStats"],
            path: "Fuzz/Targets"),
        .testTarget(name: "FuzzReplayTests", dependencies: ["IfMeterFuzzTargets", "IfMeterTestSupport"]),
        // Network namespaces, processes and fixtures for the tests; never linked into a product.
        .target(name: "IfMeterTestSupport", path: "Tests/IfMeterTestSupport"),
        .testTarget(name: "IfMeterMetricsTests", dependencies: ["IfMeterMetrics", "IfMeterApps", "IfMeterService", "IfMeterHistory", "IfMeterPlans", "IfMeterCore", "IfMeterTestSupport"]),
        .testTarget(name: "IfMeterServiceTests", dependencies: ["IfMeterService", "IfMeterApps", "IfMeterHistory", "IfMeterPlans", "IfMeterStore", "IfMeterCore", "IfMeterTestSupport"]),
        .testTarget(name: "IfMeterOwnersTests", dependencies: ["IfMeterOwners", "IfMeterApps", "IfMeterCore", "IfMeterTestSupport"]),
        .testTarget(name: "IfMeterAppsTests", dependencies: ["IfMeterApps", "IfMeterCore", "IfMeterTestSupport"]),
        .testTarget(name: "IfMeterCoreTests", dependencies: ["IfMeterCore", "IfMeterTestSupport"]),
        .testTarget(name: "IfMeterPlansTests", dependencies: ["IfMeterPlans", "IfMeterCore", "IfMeterTestSupport"]),
        .testTarget(name: "IfMeterHistoryTests", dependencies: ["IfMeterHistory", "IfMeterCore", "IfMeterTestSupport"]),
        .testTarget(name: "IfMeterNetworkManagerTests", dependencies: ["IfMeterNetworkManager", "IfMeterPlatform", "IfMeterCore", "IfMeterTestSupport"]),
        .testTarget(
            name: "IfMeterKernelTests",
            dependencies: ["IfMeterKernel", "IfMeterService", "IfMeterHistory", "IfMeterPlans", "IfMeterCore", "IfMeterTestSupport", "CLinkStats"]),
        .testTarget(
            name: "IfMeterStoreTests",
            dependencies: ["IfMeterStore", "IfMeterHistory", "IfMeterPlans", "IfMeterCore", "IfMeterTestSupport", "store-crash-writer"]),
        // A child process for the crash test: saves in a loop until SIGKILLed.
        .executableTarget(
            name: "store-crash-writer", dependencies: ["IfMeterStore", "IfMeterHistory", "IfMeterPlans", "IfMeterCore"],
            path: "Tests/StoreCrashWriter"),
        .testTarget(name: "IfMeterDaemonTests", dependencies: ["IfMeterDaemon", "IfMeterRequests", "IfMeterServer", "IfMeterHTTP", "IfMeterPlatform", "IfMeterCore", "IfMeterHistory", "IfMeterPlans", "IfMeterStore", "IfMeterWire", "IfMeterService", "IfMeterTestSupport"]),
        .testTarget(
            name: "IfMeterServerTests",
            dependencies: ["IfMeterServer", "IfMeterHTTP", "IfMeterPlatform", "IfMeterRequests", "IfMeterWire", "IfMeterCore", "IfMeterTestSupport"]),
        .testTarget(
            name: "IfMeterRequestsTests",
            dependencies: ["IfMeterRequests", "IfMeterService", "IfMeterHistory", "IfMeterPlans", "IfMeterStore", "IfMeterWire", "IfMeterJSON", "IfMeterCore",
                           "IfMeterMetrics", "IfMeterPage", "IfMeterPresentation", "IfMeterTestSupport"]),
        .testTarget(name: "IfMeterCLITests", dependencies: ["IfMeterCLI", "IfMeterPresentation", "IfMeterCore", "IfMeterWire", "IfMeterJSON", "IfMeterTestSupport"], exclude: ["Golden"]),
        .testTarget(name: "IfMeterJSONTests", dependencies: ["IfMeterJSON", "IfMeterTestSupport"]),
        .testTarget(name: "IfMeterPageTests", dependencies: ["IfMeterPage", "IfMeterPresentation", "IfMeterWire", "IfMeterCore", "IfMeterTestSupport"]),
        .testTarget(name: "IfMeterWireTests", dependencies: ["IfMeterWire", "IfMeterJSON", "IfMeterCore", "IfMeterTestSupport"], exclude: ["Golden"]),
        // Writes a known history (a reset, a DST change) through the real meter and store.
        .executableTarget(
            name: "history-seeder", dependencies: ["IfMeterStore", "IfMeterHistory", "IfMeterPlans", "IfMeterCore"],
            path: "Tests/HistorySeeder"),
        .testTarget(
            name: "EndToEndTests", dependencies: ["ifmeterd", "ifmeter", "history-seeder", "IfMeterTestSupport", "IfMeterCLI"],
            exclude: ["Golden", "Rules"]),
    ],
    swiftLanguageModes: [.v6]
)
