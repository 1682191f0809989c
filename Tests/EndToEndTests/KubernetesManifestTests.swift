import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// YAML files as JSON values, read by Debian's python3-yaml: Swift has no YAML parser.
/// `/usr/bin/python3` by its path: another python3 may come first on PATH, without the module.
enum YAMLFiles {
    static let python = "/usr/bin/python3"
    static var available: Bool { (try? Command.run([python, "-c", "import yaml"]))?.status == 0 }
    static let skipReason: Comment = "no PyYAML for /usr/bin/python3 (Debian package python3-yaml; scripts/install-deps --test installs it)"

    /// Each file's documents (empty ones left out), in one run of python.
    static func read(_ paths: [String]) throws -> [[[String: Any]]] {
        let script = "import json, sys, yaml\n"
            + "json.dump([[d for d in yaml.safe_load_all(open(p)) if d is not None] for p in sys.argv[1:]], sys.stdout)"
        let output = try Command.check([python, "-c", script] + paths)
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[[String: Any]]])
    }
}

/// packaging/kubernetes/ (#49): ifmeterd.yaml (its Namespace, ConfigMap and DaemonSet) and
/// podmonitor.yaml, and what they must say, each a check that names what is wrong.
struct KubernetesManifests {
    var documents: [[String: Any]]
    var podMonitor: [String: Any]

    /// What systemd/ifmeterd.service grants, which the pod may have too and no more.
    struct Unit {
        /// Without `CAP_`, as Kubernetes names them.
        var capabilities: Set<String>
        var memoryMax: UInt64

        static func shipped() throws -> Unit {
            let text = try String(contentsOfFile: Daemon.packageRoot + "/systemd/ifmeterd.service", encoding: .utf8)
            func value(_ key: String) throws -> String {
                try #require(text.split(separator: "\n").first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) },
                             "no \(key)= in systemd/ifmeterd.service")
            }
            func names(_ key: String) throws -> Set<String> {
                Set(try value(key).split(separator: " ").map { $0.hasPrefix("CAP_") ? String($0.dropFirst(4)) : String($0) })
            }
            let bounding = try names("CapabilityBoundingSet"), ambient = try names("AmbientCapabilities")
            #expect(bounding == ambient, "the unit's bounding set and ambient set differ: which does the pod match?")
            return Unit(capabilities: bounding, memoryMax: try #require(KubernetesManifests.bytes(try value("MemoryMax"))))
        }
    }

    /// `768M` (systemd: powers of 1024) or `768Mi` (Kubernetes), in bytes.
    static func bytes(_ text: String) -> UInt64? {
        let units: [(String, UInt64)] = [("Ki", 1 << 10), ("Mi", 1 << 20), ("Gi", 1 << 30), ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            return UInt64(text.dropLast(suffix.count)).map { $0 * factor }
        }
        return UInt64(text)
    }

    /// `KEY = VALUE` lines of an ifmeterd.conf (docs/CONFIG.md), comments left out.
    static func configuration(_ text: String) -> [String: String] {
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let content = line.prefix { $0 != "#" }
            guard let equals = content.firstIndex(of: "=") else { continue }
            values[content[..<equals].trimmingCharacters(in: .whitespaces)] = content[content.index(after: equals)...]
                .trimmingCharacters(in: .whitespaces)
        }
        return values
    }

    static func object(_ value: Any?) -> [String: Any] { value as? [String: Any] ?? [:] }
    static func objects(_ value: Any?) -> [[String: Any]] { value as? [[String: Any]] ?? [] }

    var daemonSet: [String: Any]? {
        let found = documents.filter { $0["kind"] as? String == "DaemonSet" }
        return found.count == 1 ? found[0] : nil
    }

    var podSpec: [String: Any] { Self.object(Self.object(Self.object(daemonSet?["spec"])["template"])["spec"]) }
    var podLabels: [String: String] {
        Self.object(Self.object(Self.object(Self.object(daemonSet?["spec"])["template"])["metadata"])["labels"]) as? [String: String] ?? [:]
    }
    var container: [String: Any] { Self.objects(podSpec["containers"]).first ?? [:] }

    /// The value after `flag` on the container's command line.
    func argument(_ flag: String) -> String? {
        let arguments = (container["command"] as? [String] ?? []) + (container["args"] as? [String] ?? [])
        guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }

    /// The ConfigMap's ifmeterd.conf the container reads: the one mounted at `--config`'s directory.
    var configurationText: String? {
        guard let path = argument("--config") else { return nil }
        let directory = (path as NSString).deletingLastPathComponent, file = (path as NSString).lastPathComponent
        guard let mount = Self.objects(container["volumeMounts"]).first(where: { $0["mountPath"] as? String == directory }),
              let volume = Self.objects(podSpec["volumes"]).first(where: { $0["name"] as? String == mount["name"] as? String }),
              let name = Self.object(volume["configMap"])["name"] as? String,
              let map = documents.first(where: { $0["kind"] as? String == "ConfigMap" && Self.object($0["metadata"])["name"] as? String == name })
        else { return nil }
        return Self.object(map["data"])[file] as? String
    }

    /// The port `metrics_listen` names (`:10951`, `ADDR:PORT`, or an address alone for 10951).
    var listenPort: Int? {
        guard let text = configurationText, let listen = Self.configuration(text)["metrics_listen"] else { return nil }
        guard let colon = listen.lastIndex(of: ":"), !listen.hasSuffix("]") else { return 10951 }
        return Int(listen[listen.index(after: colon)...])
    }

    /// A probe's or endpoint's port, a number or the name of one of the container's ports.
    func port(_ value: Any?) -> Int? {
        if let number = value as? Int { return number }
        let named = Self.objects(container["ports"]).first { $0["name"] as? String == value as? String }
        return named?["containerPort"] as? Int
    }

    /// Everything wrong, each said with why it matters; empty when all is as it must be.
    func problems(unit: Unit) -> [String] {
        var problems: [String] = []
        func check(_ condition: Bool, _ problem: @autoclosure () -> String) { if !condition { problems.append(problem()) } }
        guard let daemonSet else { return ["not exactly one DaemonSet in ifmeterd.yaml: one ifmeterd a node"] }
        check(daemonSet["apiVersion"] as? String == "apps/v1", "the DaemonSet is not apps/v1")
        let namespace = Self.object(daemonSet["metadata"])["namespace"] as? String ?? ""
        check(documents.contains { $0["kind"] as? String == "Namespace" && Self.object($0["metadata"])["name"] as? String == namespace },
              "no Namespace \(namespace) in ifmeterd.yaml for the DaemonSet")
        let selector = Self.object(Self.object(Self.object(daemonSet["spec"])["selector"])["matchLabels"]) as? [String: String] ?? [:]
        check(!selector.isEmpty && selector.allSatisfy { podLabels[$0.key] == $0.value }, "the DaemonSet's selector \(selector) does not select its pods \(podLabels)")

        // The node's network, not a namespace of its own; no host processes.
        check(podSpec["hostNetwork"] as? Bool == true, "hostNetwork is not true: ifmeterd would count the pod's own links, not the node's")
        check(podSpec["hostPID"] as? Bool != true, "hostPID: ifmeterd names pods from libcni's cache, not from the node's processes")
        check(Self.objects(podSpec["containers"]).count == 1, "not one container")

        // Privileges: the unit's capabilities as root, nothing else.
        let security = Self.object(container["securityContext"])
        let capabilities = Self.object(security["capabilities"])
        let added = capabilities["add"] as? [String] ?? []
        check(Set(added) == unit.capabilities && added.count == unit.capabilities.count,
              "capabilities add \(added), not exactly the unit's \(unit.capabilities.sorted())")
        check(capabilities["drop"] as? [String] == ["ALL"], "capabilities drop \(capabilities["drop"] ?? "nothing"), not [ALL]")
        check(security["allowPrivilegeEscalation"] as? Bool == false, "allowPrivilegeEscalation is not false")
        check(security["readOnlyRootFilesystem"] as? Bool == true, "readOnlyRootFilesystem is not true")
        check(security["privileged"] as? Bool != true, "privileged")
        let user = security["runAsUser"] as? Int ?? Self.object(podSpec["securityContext"])["runAsUser"] as? Int
        check(user == 0, "runAsUser \(user.map(String.init) ?? "unset"), not 0: Kubernetes sets no ambient capabilities, so a "
              + "user other than root loses the added ones at exec (and an unset one is the image's)")
        let seccomp = Self.object(security["seccompProfile"])["type"] as? String
            ?? Self.object(Self.object(podSpec["securityContext"])["seccompProfile"])["type"] as? String
        check(seccomp == "RuntimeDefault", "seccompProfile \(seccomp ?? "unset"), not RuntimeDefault")
        let memory = (Self.object(Self.object(container["resources"])["limits"])["memory"] as? String).flatMap(Self.bytes)
        check(memory == unit.memoryMax, "memory limit \(memory.map(String.init) ?? "none"), not the unit's MemoryMax= (\(unit.memoryMax) bytes)")

        // Mounts: read-only but the state directory; every path ifmeterd writes is on a writable one.
        guard let state = argument("--state-dir"), let log = argument("--log-dir"), let socket = argument("--socket"),
              argument("--config") != nil else {
            return problems + ["the command line does not name --config, --state-dir, --log-dir and --socket"]
        }
        let volumes = Dictionary(Self.objects(podSpec["volumes"]).map { ($0["name"] as? String ?? "", $0) }) { first, _ in first }
        let mounts = Self.objects(container["volumeMounts"])
        for mount in mounts {
            let path = mount["mountPath"] as? String ?? "", readOnly = mount["readOnly"] as? Bool == true
            guard let volume = volumes[mount["name"] as? String ?? ""] else {
                problems.append("\(path) mounts no volume of the pod's")
                continue
            }
            if let host = Self.object(volume["hostPath"])["path"] as? String {
                if path == state {
                    check(!readOnly, "the state directory \(path) is mounted read-only: ifmeterd keeps its database there")
                } else {
                    check(readOnly, "the node's \(host) is mounted writable at \(path): only the state directory may be")
                }
            } else if volume["configMap"] != nil {
                check(readOnly, "the ConfigMap is mounted writable at \(path)")
            } else {
                check(volume["emptyDir"] != nil, "\(path) mounts a volume that is no hostPath, ConfigMap or emptyDir")
            }
        }
        let environment = Self.objects(container["env"]).first { $0["name"] as? String == "IFMETER_SOCKET" }?["value"] as? String
        check(environment == socket, "IFMETER_SOCKET is \(environment ?? "unset"), not --socket \(socket): `kubectl exec POD -- ifmeter` would not find it")
        let stateVolume = mounts.first { $0["mountPath"] as? String == state }.flatMap { volumes[$0["name"] as? String ?? ""] }
        check(stateVolume?["hostPath"] != nil, "the state directory \(state) is not on the node (hostPath): its history would go with the pod")
        /// The mount `path` is on, if any: the deepest that holds it.
        func mount(holding path: String) -> [String: Any]? {
            mounts.filter { mount in
                let at = mount["mountPath"] as? String ?? ""
                return path == at || path.hasPrefix(at.hasSuffix("/") ? at : at + "/")
            }.max { ($0["mountPath"] as? String ?? "").count < ($1["mountPath"] as? String ?? "").count }
        }
        for (what, path) in [("state directory", state), ("log directory", log), ("socket's directory", (socket as NSString).deletingLastPathComponent),
                             ("temporary directory", "/tmp")] {
            let holding = mount(holding: path)
            check(holding != nil && holding?["readOnly"] as? Bool != true,
                  "the \(what) \(path) is on no writable mount, and the root filesystem is read-only")
            // Kubernetes makes an emptyDir 0777, which DirectoryTrust refuses for what ifmeterd writes.
            check(what == "temporary directory" || volumes[holding?["name"] as? String ?? ""]?["emptyDir"] == nil,
                  "the \(what) \(path) is on an emptyDir, writable by everyone (0777): ifmeterd refuses it")
        }
        // What names pods: libcni's cache where the configuration says, and the bound namespaces, new ones too.
        let configuration = configurationText.map(Self.configuration)
        check(configuration != nil, "no ConfigMap mounted where --config names ifmeterd.conf")
        let results = (configuration?["cni_cache_dir"] ?? "/var/lib/cni") + "/results"
        let resultsMount = mounts.first { $0["mountPath"] as? String == results }
        check(resultsMount.flatMap { Self.object(volumes[$0["name"] as? String ?? ""]?["hostPath"])["path"] as? String } == results,
              "libcni's cache \(results) (cni_cache_dir) is not the node's \(results) in the pod")
        let netns = mounts.first { $0["mountPath"] as? String == "/run/netns" }
        check(netns.flatMap { Self.object(volumes[$0["name"] as? String ?? ""]?["hostPath"])["path"] as? String } == "/run/netns",
              "the node's /run/netns is not at /run/netns in the pod: pods' namespaces would not be found")
        check(netns?["mountPropagation"] as? String == "HostToContainer",
              "/run/netns without mountPropagation HostToContainer: the namespaces of pods started later stay unseen")

        // The port metrics_listen names, and the probes on it.
        guard let listen = listenPort else { return problems + ["no metrics_listen in the ConfigMap's ifmeterd.conf: no /metrics, no page"] }
        let ports = Self.objects(container["ports"])
        let served = ports.first { $0["containerPort"] as? Int == listen }
        check(served != nil, "no containerPort \(listen), the port metrics_listen names")
        let portName = served?["name"] as? String ?? ""
        check(!portName.isEmpty && portName.count <= 15, "the port \(listen) has no name (of at most 15 characters) to scrape it by")
        check(served?["hostPort"] == nil || served?["hostPort"] as? Int == listen, "hostPort differs from containerPort on the host's network")
        for probe in ["livenessProbe", "readinessProbe"] {
            let get = Self.object(container[probe])["httpGet"] as? [String: Any]
            check(get != nil, "the \(probe) is not an HTTP GET")
            check(port(get?["port"]) == listen, "the \(probe) is not on port \(listen), where ifmeterd serves HTTP")
            check((get?["path"] as? String)?.hasPrefix("/") == true, "the \(probe) has no path")
            check((get?["scheme"] as? String ?? "HTTP") == "HTTP", "the \(probe) is not plain HTTP")
        }

        // The PodMonitor: these pods, the named port, /metrics, without ifmeterd's own pod labels.
        check(podMonitor["kind"] as? String == "PodMonitor" && podMonitor["apiVersion"] as? String == "monitoring.coreos.com/v1",
              "podmonitor.yaml is no monitoring.coreos.com/v1 PodMonitor")
        let spec = Self.object(podMonitor["spec"])
        let picks = Self.object(Self.object(spec["selector"])["matchLabels"]) as? [String: String] ?? [:]
        check(!picks.isEmpty && picks.allSatisfy { podLabels[$0.key] == $0.value }, "the PodMonitor's selector \(picks) does not select the pods \(podLabels)")
        let names = Self.object(spec["namespaceSelector"])["matchNames"] as? [String]
        check(names?.contains(namespace) ?? (Self.object(podMonitor["metadata"])["namespace"] as? String == namespace),
              "the PodMonitor looks for pods outside the namespace \(namespace)")
        let endpoint = Self.objects(spec["podMetricsEndpoints"]).first { $0["port"] as? String == served?["name"] as? String }
        check(endpoint != nil && served?["name"] != nil, "no podMetricsEndpoint scrapes the port named \(served?["name"] ?? "?")")
        check(endpoint?["path"] as? String == "/metrics", "the PodMonitor scrapes \(endpoint?["path"] ?? "no path"), not /metrics")
        let dropped = Self.objects(endpoint?["relabelings"]).filter { $0["action"] as? String == "labeldrop" }.compactMap { $0["regex"] as? String }
        for label in ["namespace", "pod", "container"] {
            // Prometheus anchors a relabeling's regex at both ends.
            check(dropped.contains { pattern in (try? Regex(pattern)).map { label.wholeMatch(of: $0) != nil } ?? false },
                  "the scraped pod's \(label) label is kept: ifmeter's own \(label) labels would become exported_\(label)")
        }
        return problems
    }
}

@Suite("The Kubernetes manifests", .enabled(if: YAMLFiles.available, YAMLFiles.skipReason), .ownThread, .timeLimit(.minutes(3)))
struct KubernetesManifestTests {
    static let directory = Daemon.packageRoot + "/packaging/kubernetes"
    static let files = ["ifmeterd.yaml", "podmonitor.yaml"]

    /// The manifests as parsed from `directory` (the shipped ones, or a broken copy).
    static func manifests(in directory: String = directory) throws -> KubernetesManifests {
        let parsed = try YAMLFiles.read(files.map { directory + "/" + $0 })
        return KubernetesManifests(documents: parsed[0], podMonitor: try #require(parsed[1].first))
    }

    @Test("the DaemonSet has hostNetwork, the unit's capabilities as root, read-only mounts but its state, the port the ConfigMap listens on and probes there; the PodMonitor scrapes its pods' /metrics")
    func shipped() throws {
        let problems = try Self.manifests().problems(unit: try .shipped())
        #expect(problems == [], "\(problems.joined(separator: "\n"))")
    }

    /// Each check, seen to fail: a copy with one thing broken is refused for that thing.
    static let breakages: [(file: String, from: String, to: String, expected: String)] = [
        ("ifmeterd.yaml", "kind: DaemonSet", "kind: Deployment", "DaemonSet"),
        ("ifmeterd.yaml", "hostNetwork: true", "hostNetwork: false", "hostNetwork"),
        ("ifmeterd.yaml", "hostPID: false", "hostPID: true", "hostPID"),
        ("ifmeterd.yaml", "add: [DAC_READ_SEARCH, NET_BROADCAST]", "add: [DAC_READ_SEARCH, NET_BROADCAST, SYS_PTRACE]", "capabilities add"),
        ("ifmeterd.yaml", "add: [DAC_READ_SEARCH, NET_BROADCAST]", "add: [DAC_READ_SEARCH]", "capabilities add"),
        ("ifmeterd.yaml", "drop: [ALL]", "drop: [NET_RAW]", "capabilities drop"),
        ("ifmeterd.yaml", "allowPrivilegeEscalation: false", "allowPrivilegeEscalation: true", "allowPrivilegeEscalation"),
        ("ifmeterd.yaml", "readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false", "readOnlyRootFilesystem"),
        ("ifmeterd.yaml", "runAsUser: 0", "runAsUser: 65534", "runAsUser"),
        ("ifmeterd.yaml", "privileged: false", "privileged: true", "privileged"),
        ("ifmeterd.yaml", "            seccompProfile:\n              type: RuntimeDefault", "            seccompProfile:\n              type: Unconfined",
         "seccompProfile"),
        ("ifmeterd.yaml", "memory: 768Mi", "memory: 1Gi", "MemoryMax"),
        ("ifmeterd.yaml", "mountPath: /var/lib/cni/results\n              readOnly: true", "mountPath: /var/lib/cni/results", "mounted writable"),
        ("ifmeterd.yaml", "mountPath: /etc/ifmeter\n              readOnly: true", "mountPath: /etc/ifmeter", "ConfigMap is mounted writable"),
        ("ifmeterd.yaml", "mountPath: /var/lib/ifmeter\n", "mountPath: /var/lib/ifmeter\n              readOnly: true\n", "state directory /var/lib/ifmeter is mounted read-only"),
        ("ifmeterd.yaml", "            - --log-dir\n            - /var/lib/ifmeter/log", "            - --log-dir\n            - /var/log/ifmeter", "log directory"),
        ("ifmeterd.yaml", "            - /var/lib/ifmeter/ifmeterd.sock", "            - /tmp/ifmeterd.sock", "on an emptyDir"),
        ("ifmeterd.yaml", "              value: /var/lib/ifmeter/ifmeterd.sock", "              value: /run/ifmeter/ifmeterd.sock", "IFMETER_SOCKET"),
        ("ifmeterd.yaml", "mountPropagation: HostToContainer", "mountPropagation: None", "HostToContainer"),
        ("ifmeterd.yaml", "cni_cache_dir = /var/lib/cni", "cni_cache_dir = /var/lib/cni-node", "libcni's cache"),
        ("ifmeterd.yaml", "metrics_listen = :10951", "metrics_listen = :9100", "containerPort 9100"),
        ("ifmeterd.yaml", "containerPort: 10951", "containerPort: 9100", "containerPort 10951"),
        ("ifmeterd.yaml", "path: /api/v1/status\n              port: http", "path: /api/v1/status\n              port: 8080", "livenessProbe is not on port"),
        ("ifmeterd.yaml", "            httpGet:\n              path: /api/v1/plans\n              port: http",
         "            tcpSocket:\n              port: http", "readinessProbe is not an HTTP GET"),
        ("podmonitor.yaml", "      app.kubernetes.io/component: ifmeterd", "      app.kubernetes.io/component: exporter", "selector"),
        ("podmonitor.yaml", "    - port: http", "    - port: metrics", "no podMetricsEndpoint"),
        ("podmonitor.yaml", "      path: /metrics", "      path: /", "not /metrics"),
        ("podmonitor.yaml", "regex: namespace|pod|container", "regex: namespace|container", "pod label is kept"),
    ]

    @Test("each check fails on a copy that breaks what it checks", arguments: 0..<breakages.count)
    func broken(_ index: Int) throws {
        let breakage = Self.breakages[index]
        let copy = try TemporaryDirectory()
        for file in Self.files {
            var text = try String(contentsOfFile: Self.directory + "/" + file, encoding: .utf8)
            if file == breakage.file {
                #expect(text.components(separatedBy: breakage.from).count == 2, "\(breakage.from) is not in \(file) once: the breakage is stale")
                text = text.replacingOccurrences(of: breakage.from, with: breakage.to)
            }
            try text.write(toFile: copy.path + "/" + file, atomically: true, encoding: .utf8)
        }
        let problems = try Self.manifests(in: copy.path).problems(unit: try .shipped())
        #expect(problems.contains { $0.contains(breakage.expected) }, "\(breakage.to): \(problems)")
    }

    @Test("a unit with another capability or MemoryMax= than the pod's is a difference too")
    func unitChanged() throws {
        let manifests = try Self.manifests()
        var unit = try KubernetesManifests.Unit.shipped()
        unit.capabilities.insert("SYS_PTRACE")
        #expect(manifests.problems(unit: unit).contains { $0.contains("capabilities add") })
        unit = try .shipped()
        unit.memoryMax /= 2
        #expect(manifests.problems(unit: unit).contains { $0.contains("MemoryMax") })
    }

    @Test("ifmeterd takes the DaemonSet's command line and the ConfigMap's configuration (--check-config)")
    func daemonTakesThem() throws {
        let manifests = try Self.manifests()
        let command = try #require(manifests.container["command"] as? [String])
        // Where the Debian package (make deb, PREFIX=/usr) installs it.
        #expect(command == ["/usr/bin/ifmeterd"])
        let directory = try TemporaryDirectory()
        let config = directory.path + "/ifmeterd.conf"
        try #require(manifests.configurationText).write(toFile: config, atomically: true, encoding: .utf8)
        var arguments = try #require(manifests.container["args"] as? [String])
        let index = try #require(arguments.firstIndex(of: "--config"))
        arguments[index + 1] = config
        let result = try Command.run([DaemonProcess.binary, "--check-config"] + arguments)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    @Test("ifmeterd as the pod runs it (root with only the added capabilities, no_new_privs; the pod's mounts with the modes Kubernetes gives them, the ConfigMap's configuration, the DaemonSet's command line): ready, the probes' paths and /metrics answer 200 on its port",
          .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason))
    func runAsThePod() throws {
        let manifests = try Self.manifests()
        // The pod's filesystem under a directory of the test's: each mount as Kubernetes makes
        // it (a hostPath with DirectoryOrCreate 0755, an emptyDir 0777, a ConfigMap's files as
        // links into its ..data directory).
        let root = try TemporaryDirectory()
        let volumes = KubernetesManifests.objects(manifests.podSpec["volumes"])
        for mount in KubernetesManifests.objects(manifests.container["volumeMounts"]) {
            let path = root.path + (mount["mountPath"] as? String ?? "")
            let volume = try #require(volumes.first { $0["name"] as? String == mount["name"] as? String })
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            #expect(chmod(path, volume["emptyDir"] != nil ? 0o777 : 0o755) == 0)
            if volume["configMap"] != nil {
                try FileManager.default.createDirectory(atPath: path + "/..data", withIntermediateDirectories: false)
                try #require(manifests.configurationText).write(toFile: path + "/..data/ifmeterd.conf", atomically: true, encoding: .utf8)
                try FileManager.default.createSymbolicLink(atPath: path + "/ifmeterd.conf", withDestinationPath: "..data/ifmeterd.conf")
            }
        }
        var arguments = try #require(manifests.container["args"] as? [String])
        for flag in ["--config", "--state-dir", "--log-dir", "--socket"] {
            let index = try #require(arguments.firstIndex(of: flag))
            arguments[index + 1] = root.path + arguments[index + 1]
        }
        let added = KubernetesManifests.object(KubernetesManifests.object(manifests.container["securityContext"])["capabilities"])["add"]
            as? [String] ?? []
        let capabilities = "-all" + added.map { ",+" + $0.lowercased() }.joined()
        let node = try NetworkNamespace()
        defer { node.delete() }
        // The DaemonSet's command line comes last, so its paths are the ones taken.
        let daemon = try DaemonProcess(namespace: node)
        defer { _ = try? daemon.stop(SIGKILL) }
        try daemon.start(extraArguments: arguments, prefix: ["setpriv", "--reuid=0", "--regid=0", "--clear-groups", "--inh-caps=-all",
                                                             "--bounding-set=\(capabilities)", "--no-new-privs"], waitForReady: false)
        let port = try #require(manifests.listenPort)
        func get(_ path: String) throws -> String {
            try node.run(["curl", "-sS", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)\(path)"]).stdout
        }
        let probe = { (name: String) in
            KubernetesManifests.object(KubernetesManifests.object(manifests.container[name])["httpGet"])["path"] as? String ?? "?"
        }
        // Ready as the kubelet sees it.
        let deadline = Date().addingTimeInterval(30)
        while try get(probe("readinessProbe")) != "200" && Date() < deadline && daemon.isRunning { usleep(100_000) }
        for path in [probe("readinessProbe"), probe("livenessProbe"), "/metrics"] {
            #expect(try get(path) == "200", "\(path); ifmeterd: \(daemon.stderrText)")
        }
        let status = try String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8).split(separator: "\n")
        func field(_ name: String) -> String? {
            status.first { $0.hasPrefix(name + ":") }.map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces) }
        }
        #expect(field("Uid")?.hasPrefix("0") == true && field("NoNewPrivs") == "1")
        #expect(field("CapEff") == field("CapBnd") && field("CapAmb") == "0000000000000000")
        #expect(field("CapBnd").flatMap { UInt64($0, radix: 16) }?.nonzeroBitCount == added.count)
        let socket = try #require(arguments.firstIndex(of: "--socket").map { arguments[$0 + 1] })
        let reply = try SocketClient(path: socket).request(#"{"v":1,"id":0,"cmd":"status"}"#)
        #expect((reply["result"] as? [String: Any])?["ready"] as? Bool == true, "\(reply)")
        #expect(try daemon.stop() == 0)
    }
}

/// Kubernetes' own types, offline: `kubectl set env --local` decodes the DaemonSet into them
/// (a field of the wrong type is an error) and writes it back (a field they do not have is gone),
/// with no cluster. What it cannot check without one: values (a capability's name, a path), the
/// API server's validation, and the PodMonitor, whose type only the operator's CRD defines.
@Suite("The Kubernetes DaemonSet through kubectl", .enabled(if: YAMLFiles.available, YAMLFiles.skipReason),
       .enabled(if: (try? Command.resolve("kubectl")) != nil, "no kubectl (Debian package kubernetes-client; scripts/install-deps --test installs it)"),
       .ownThread, .timeLimit(.minutes(3)))
struct KubernetesKubectlTests {
    /// What of `written` kubectl's output lacks or changed; Go leaves out false, 0 and "" it was given.
    static func lost(_ written: Any, _ read: Any?, at path: String = "") -> [String] {
        switch written {
        case let object as [String: Any]:
            return object.sorted { $0.key < $1.key }.flatMap { key, value in
                if let read = read as? [String: Any], read[key] == nil {
                    let zero = (value as? Bool) == false || (value as? Int) == 0 || (value as? String) == ""
                    return zero ? [] : ["\(path)/\(key)"]
                }
                return lost(value, (read as? [String: Any])?[key], at: "\(path)/\(key)")
            }
        case let array as [Any]:
            let readArray = read as? [Any] ?? []
            return array.enumerated().flatMap { index, value in
                index < readArray.count ? lost(value, readArray[index], at: "\(path)/\(index)") : ["\(path)/\(index)"]
            }
        default:
            return "\(written)" == "\(read ?? "nil")" ? [] : ["\(path): \(written) became \(read ?? "nil")"]
        }
    }

    /// The DaemonSet of ifmeterd.yaml as JSON, after `change` to its text, and what kubectl makes of it.
    static func roundTrip(_ change: (String) -> String = { $0 }) throws -> (written: [String: Any], result: CommandResult) {
        let directory = try TemporaryDirectory()
        let text = try String(contentsOfFile: KubernetesManifestTests.directory + "/ifmeterd.yaml", encoding: .utf8)
        try change(text).write(toFile: directory.path + "/ifmeterd.yaml", atomically: true, encoding: .utf8)
        let documents = try #require(try YAMLFiles.read([directory.path + "/ifmeterd.yaml"]).first)
        let daemonSet = try #require(documents.first { $0["kind"] as? String == "DaemonSet" })
        let file = directory.path + "/daemonset.json"
        try JSONSerialization.data(withJSONObject: daemonSet).write(to: URL(fileURLWithPath: file))
        let result = try Command.run(["kubectl", "set", "env", "--local", "-f", file, "IFMETER_KUBECTL_CHECK=1", "-o", "json"],
                                     environment: ["KUBECONFIG": directory.path + "/no-cluster"])
        return (daemonSet, result)
    }

    @Test("kubectl decodes the DaemonSet into Kubernetes' types with no cluster, and nothing written is lost")
    func decodes() throws {
        let (written, result) = try Self.roundTrip()
        #expect(result.status == 0, "\(result.stderr)")
        let read = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        #expect(Self.lost(written, read) == [])
    }

    @Test("a field Kubernetes does not have is seen lost, and one of the wrong type refused")
    func catches() throws {
        let (written, result) = try Self.roundTrip { $0.replacingOccurrences(of: "readOnlyRootFilesystem:", with: "readOnlyRootFileSystem:") }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.lost(written, try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)))
            == ["/spec/template/spec/containers/0/securityContext/readOnlyRootFileSystem"])
        let wrongType = try Self.roundTrip { $0.replacingOccurrences(of: "hostNetwork: true", with: "hostNetwork: \"yes\"") }.result
        #expect(wrongType.status != 0 && wrongType.stderr.contains("hostNetwork"), "\(wrongType.stdout)\(wrongType.stderr)")
    }
}
