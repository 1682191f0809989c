import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// packaging/kubernetes as a reviewer reads it, against the unit it must match, and ifmeterd run
/// as the pod would run it.
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
        ("ifmeterd.yaml", "add: [NET_BROADCAST]", "add: [NET_BROADCAST, SYS_PTRACE]", "capabilities add"),
        ("ifmeterd.yaml", "add: [NET_BROADCAST]", "add: [DAC_READ_SEARCH, NET_BROADCAST]", "capabilities add"),
        ("ifmeterd.yaml", "add: [NET_BROADCAST]", "add: []", "capabilities add"),
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
