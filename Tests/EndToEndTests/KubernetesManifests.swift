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

        // Privileges: the unit's capabilities as root, less CAP_DAC_READ_SEARCH, nothing else.
        // Root owns what it reads, and with that capability the runtime's default seccomp
        // profile lets open_by_handle_at through: out of any hostPath into the node's whole
        // filesystem (the unit forbids the call with SystemCallFilter=~@privileged).
        let security = Self.object(container["securityContext"])
        let capabilities = Self.object(security["capabilities"])
        let added = capabilities["add"] as? [String] ?? []
        let expected = unit.capabilities.subtracting(["DAC_READ_SEARCH"])
        check(Set(added) == expected && added.count == expected.count,
              "capabilities add \(added), not exactly the unit's less DAC_READ_SEARCH \(expected.sorted())")
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
