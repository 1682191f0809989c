import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Real Kubernetes pods for tests, made as the kubelet makes them: Debian's containerd with its
/// CRI plugin, started in a test's own namespace (the node's: the CNI bridge and the pods' host
/// veths live there), driven through the CRI's gRPC API (RunPodSandbox, StopPodSandbox,
/// RemovePodSandbox) by `Tests/tools/cri-client`; pods on the CNI `bridge` plugin with
/// `host-local` addresses; a pause image built here (`Tests/tools/pause-image`), since nothing can
/// be pulled. shared/notes/containerd-cri-in-a-test.md has what was checked on these machines.
///
/// Pod names carry the test process's pid (`ifmt-<pid>-<label>`), and so do the CNI network
/// (`ifmt-<pid>-pods<n>`, the prefix of its results files in ``cniCachePath``), the pods' cgroup
/// parent (`/ifmt-<pid>-kubepods<n>`) and the directory holding containerd's config, socket, root
/// and runc state (`…/ifmt-<pid>-cri<n>/`), `n` counting the harnesses of the process: whatever
/// a crashed run left is found by its pid (``reapStale()``, scripts/test-hygiene). ``destroy()``
/// removes every pod through the CRI, ends containerd and removes the rest.
///
/// Where a pod's identity lies on the host, for the daemon to read: containerd's sandbox
/// bundles, `<statePath>/io.containerd.runtime.v2.task/k8s.io/<sandbox id>/config.json`
/// (annotations `io.kubernetes.cri.sandbox-{name,namespace,uid}`), and libcni's results,
/// `/var/lib/cni/results/<network>-<sandbox id>-eth0` (`cniArgs` `K8S_POD_{NAME,NAMESPACE,UID}`).
public final class ContainerdCRI {
    /// True when pods can be run here: root, containerd and ctr, the CNI plugins, Debian's python3
    /// with grpcio and grpc-tools, gcc (the pause image), nsenter and busybox-static (traffic).
    public static var available: Bool {
        getuid() == 0
            && ["/usr/bin/containerd", "/usr/bin/ctr", "/usr/bin/containerd-shim-runc-v2", "/usr/lib/cni/bridge",
                "/usr/lib/cni/host-local", "/usr/lib/cni/loopback", python, "/bin/busybox"]
                .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
            && ["runc", "gcc", "nsenter"].allSatisfy { (try? Command.resolve($0)) != nil }
            && hasGRPC
    }

    public static let skipReason: Comment =
        "needs root with containerd, containernetworking-plugins, python3-grpcio, python3-grpc-tools, gcc and busybox-static (scripts/install-deps --test installs them)"

    /// Debian's python3: pyenv's, which may come first on PATH, has no grpc.
    static let python = "/usr/bin/python3"
    private static let hasGRPC: Bool = (try? Command.run([python, "-c", "import grpc, grpc_tools.protoc"], timeout: 60))?.status == 0

    /// containerd's default state directory, which the shipped daemon reads.
    public static let defaultStatePath = "/run/containerd"
    /// libcni's cache of each attachment's result: fixed (containerd's CRI gives go-cni no cache
    /// directory, and libcni's default is `/var/lib/cni`), so the harness deletes only its own
    /// files there.
    public static let cniCachePath = "/var/lib/cni/results"
    /// The pause image's reference, as containerd's `sandbox_image`.
    public static let pauseImage = "localhost/ifmt-pause:1"

    /// The node's namespace: containerd runs in it, and the bridge and the pods' host veths are in it.
    public let namespace: NetworkNamespace
    /// containerd's state directory: ``defaultStatePath`` when no other containerd uses it (nor
    /// another test's), else one of this harness's own. Bundles are under
    /// `<statePath>/io.containerd.runtime.v2.task/k8s.io/<sandbox id>/`.
    public let statePath: String
    /// containerd's gRPC socket, where the CRI answers.
    public let socket: String
    /// The CNI network's name (`ifmt-<pid>-pods<n>`): the results files of this harness's pods are
    /// `<cniCachePath>/<network>-<sandbox id>-eth0`.
    public let network: String
    /// The CNI bridge in ``namespace``; the pods' gateway is `subnet.1`.
    public let bridge: String
    /// The pods' subnet's first three octets: the test process's pid in it, so that runs at once
    /// do not share one.
    public let subnet: String
    public var gateway: String { subnet + ".1" }
    /// The top of the pods' cgroup parents (`/ifmt-<pid>-kubepods<n>/pod<uid>`), in every hierarchy.
    public let cgroupRoot: String
    /// The namespace the pods of a label go into unless ``place(_:in:)`` says otherwise.
    public let defaultPodNamespace = "ifmt-team-a"

    nonisolated(unsafe) private static var counter = 0
    private static let lock = NSLock()
    private let directory: TemporaryDirectory
    /// `…/ifmt-<pid>-cri<n>`: config, socket, root, runc state, IPAM leases, the compiled proto;
    /// containerd and its shims name it on their command lines.
    public let home: String
    private var containerd: pid_t = 0
    /// The lock that keeps ``defaultStatePath`` to one test containerd at a time; -1 if not held.
    private var stateLock: Int32 = -1
    private var createdCNICache: [String] = []
    private var pods: [String: Pod] = [:]
    private var podNamespaces: [String: String] = [:]
    /// Every sandbox this harness made, and the network namespace each had.
    private var sandboxes: [String: String] = [:]

    /// A pod of the test's: its identity, which stays across its sandboxes, and its sandbox now.
    public struct Pod: Sendable {
        public var name: String
        public var namespace: String
        public var uid: String
        public var attempt: Int
        /// The running sandbox; nil once stopped.
        public var sandbox: String?
        /// Every sandbox of this pod, stopped ones included (ListPodSandbox keeps them NOTREADY).
        public var sandboxes: [String]
        /// What its spec adds to the kubelet's own, sent again with each sandbox.
        public var annotations: [String: String]
        public var labels: [String: String]
    }

    /// What PodSandboxStatus says of a sandbox.
    public struct SandboxStatus: Decodable, Sendable {
        public var id: String
        public var state: String
        public var name: String
        public var namespace: String
        public var uid: String
        public var attempt: Int
        public var ip: String
        /// The network namespace's path (`/var/run/netns/cni-<uuid>`), while it has one.
        public var netns: String?
        public var pid: Int?
        public var annotations: [String: String]
        public var labels: [String: String]
        public var ready: Bool { state == "SANDBOX_READY" }
    }

    /// Starts containerd in `namespace` with a config of its own and waits until its CRI
    /// answers; imports the pause image.
    public init(in namespace: NetworkNamespace) throws {
        _ = Self.reaped
        self.namespace = namespace
        let pid = Int(getpid())
        // One process may run two harnesses at once (two suites): each has names of its own.
        let index = Self.lock.withLock { () -> Int in
            Self.counter += 1
            return Self.counter
        }
        network = "ifmt-\(pid)-pods\(index)"
        bridge = "ifmtcni\(index)"
        subnet = "10.\(81 + pid / 250 % 40).\(pid % 250)"
        cgroupRoot = "ifmt-\(pid)-kubepods\(index)"
        directory = try TemporaryDirectory()
        home = directory.path + "/ifmt-\(pid)-cri\(index)"
        socket = home + "/containerd.sock"
        for sub in ["", "/net.d", "/ipam", "/root", "/runc", "/proto"] {
            try FileManager.default.createDirectory(atPath: home + sub, withIntermediateDirectories: true)
        }
        if let lock = Self.claimDefaultState() {
            stateLock = lock
            statePath = Self.defaultStatePath
        } else {
            statePath = home + "/state"
        }
        for path in ["/var/lib/cni", Self.cniCachePath] where !FileManager.default.fileExists(atPath: path) {
            createdCNICache.insert(path, at: 0)
        }
        do {
            try writeConfig()
            try start()
            try Command.check(["/usr/bin/ctr", "-a", socket, "-n", "k8s.io", "images", "import", "--snapshotter", "native",
                               try Self.pauseArchive.get()], timeout: 120)
        } catch {
            destroy()
            throw error
        }
    }

    deinit { destroy() }

    // MARK: Pods

    /// The name a test's pod gets.
    public static func name(_ label: String) -> String { "ifmt-\(getpid())-\(label)" }

    /// Puts the pods of `label` into namespace `ifmt-<podNamespace>` from their next run on.
    public func place(_ label: String, in podNamespace: String) {
        podNamespaces[label] = "ifmt-\(podNamespace)"
    }

    /// The Kubernetes namespace of the pods of `label`.
    public func podNamespace(of label: String) -> String { pods[label]?.namespace ?? podNamespaces[label] ?? defaultPodNamespace }

    /// The pod of `label` as the harness made it: nil before its first run and after its removal.
    public func pod(_ label: String) -> Pod? { pods[label] }

    /// RunPodSandbox of a new pod (a new UID, attempt 0) with `annotations` and `labels` on top
    /// of the kubelet's own; its sandbox id.
    @discardableResult
    public func runPod(_ label: String, annotations: [String: String] = [:], labels: [String: String] = [:]) throws -> String {
        if let old = pods[label], old.sandbox != nil {
            throw CommandFailed(command: ["run", label], result: CommandResult(status: 1, stdout: "", stderr: "pod \(label) runs already: remove it first"))
        }
        var pod = Pod(name: Self.name(label), namespace: podNamespaces[label] ?? defaultPodNamespace,
                      uid: UUID().uuidString.lowercased(), attempt: 0, sandbox: nil, sandboxes: [],
                      annotations: annotations, labels: labels)
        let id = try runSandbox(of: pod)
        pod.sandbox = id
        pod.sandboxes.append(id)
        pods[label] = pod
        return id
    }

    /// StopPodSandbox of the pod's sandbox, if it runs; the pod stays (NOTREADY), as a kubelet
    /// leaves it until it makes the next sandbox or deletes the pod.
    public func stopPod(_ label: String) throws {
        guard var pod = pods[label], let id = pod.sandbox else { return }
        try cri(["stop", id])
        pod.sandbox = nil
        pods[label] = pod
    }

    /// RunPodSandbox of the same pod again (its UID, its spec, the next attempt), as the kubelet
    /// makes a new sandbox for a pod whose sandbox died; the last one is stopped first if it runs.
    @discardableResult
    public func runAgain(_ label: String) throws -> String {
        try stopPod(label)
        guard var pod = pods[label] else {
            throw CommandFailed(command: ["run again", label], result: CommandResult(status: 1, stdout: "", stderr: "no pod \(label)"))
        }
        pod.attempt += 1
        let id = try runSandbox(of: pod)
        pod.sandbox = id
        pod.sandboxes.append(id)
        pods[label] = pod
        return id
    }

    /// Stops and removes every sandbox of the pod: the pod is gone, as when it is deleted.
    public func removePod(_ label: String) throws {
        guard let pod = pods[label] else { return }
        for id in pod.sandboxes {
            try cri(["stop", id])
            try cri(["remove", id])
        }
        pods[label] = nil
    }

    /// The running sandbox of `label`'s pod.
    public func sandbox(of label: String) throws -> String {
        guard let id = pods[label]?.sandbox else {
            throw CommandFailed(command: ["sandbox", label], result: CommandResult(status: 1, stdout: "", stderr: "pod \(label) has no running sandbox"))
        }
        return id
    }

    /// PodSandboxStatus of a sandbox (verbose: its netns and pid too).
    public func status(_ id: String) throws -> SandboxStatus {
        try JSONDecoder().decode(SandboxStatus.self, from: Data(try cri(["status", id]).utf8))
    }

    /// ListPodSandbox: every sandbox containerd knows, READY and NOTREADY.
    public func list() throws -> [SandboxStatus] {
        struct Item: Decodable { var id, state, name, namespace, uid: String; var attempt: Int }
        return try JSONDecoder().decode([Item].self, from: Data(try cri(["list"]).utf8)).map {
            SandboxStatus(id: $0.id, state: $0.state, name: $0.name, namespace: $0.namespace, uid: $0.uid,
                          attempt: $0.attempt, ip: "", netns: nil, pid: nil, annotations: [:], labels: [:])
        }
    }

    /// The network namespace of `label`'s running sandbox.
    public func netns(of label: String) throws -> String {
        let id = try sandbox(of: label)
        guard let path = try status(id).netns, !path.isEmpty else {
            throw CommandFailed(command: ["netns", label], result: CommandResult(status: 1, stdout: "", stderr: "sandbox \(id) has no network namespace"))
        }
        return path
    }

    /// The pod's `eth0` as its namespace shows it (``ContainerEnd``).
    public func end(of label: String) throws -> ContainerEnd {
        ContainerEnd(enter: ["--net=\(try netns(of: label))"], host: namespace)
    }

    /// `count` pings of `size` bytes from the pod to the bridge, once one is answered: host tools
    /// (busybox) run in the pod's network namespace, since the pod holds only pause.
    public func ping(from label: String, count: Int, size: Int) throws {
        try Command.check(["nsenter", "--net=\(try netns(of: label))", "/bin/busybox", "sh", "-c",
                           PingScript.text(to: gateway, count: count, size: size)], timeout: 120)
    }

    /// `libcni`'s results file of a sandbox's `eth0`.
    public func cniResult(of id: String) -> String { "\(Self.cniCachePath)/\(network)-\(id)-eth0" }

    /// The sandbox's bundle, whose config.json carries the pod's identity in its annotations.
    public func bundle(of id: String) -> String { "\(statePath)/io.containerd.runtime.v2.task/k8s.io/\(id)" }

    private func runSandbox(of pod: Pod) throws -> String {
        var arguments = ["run", "--name", pod.name, "--namespace", pod.namespace, "--uid", pod.uid,
                         "--attempt", String(pod.attempt), "--cgroup-parent", "/\(cgroupRoot)/pod\(pod.uid)"]
        for (key, value) in pod.annotations.sorted(by: { $0.key < $1.key }) { arguments += ["--annotation", "\(key)=\(value)"] }
        for (key, value) in pod.labels.sorted(by: { $0.key < $1.key }) { arguments += ["--label", "\(key)=\(value)"] }
        // IPv6 off inside, as a pod's securityContext.sysctls may ask (containerd sets them when
        // pause starts), so that no router solicitation or MLD report moves its counters later.
        arguments += ["--sysctl", "net.ipv6.conf.all.disable_ipv6=1", "--sysctl", "net.ipv6.conf.default.disable_ipv6=1"]
        let id = try cri(arguments).trimmingCharacters(in: .whitespacesAndNewlines)
        guard id.count == 64, id.allSatisfy(\.isHexDigit) else {
            throw CommandFailed(command: arguments, result: CommandResult(status: 0, stdout: id, stderr: "not a sandbox id"))
        }
        sandboxes[id] = (try? status(id))?.netns ?? ""
        return id
    }

    /// `cri-client ARGS…` against this containerd; what it printed.
    @discardableResult
    public func cri(_ arguments: [String]) throws -> String {
        try Command.check([Self.python, Self.tools + "/cri-client", "--socket", socket, "--cache", home + "/proto"] + arguments,
                          timeout: 120)
    }

    // MARK: containerd

    private func writeConfig() throws {
        // Version 2; every key not written keeps containerd's default. restrict_oom_score_adj:
        // root lacks CAP_SYS_RESOURCE on these machines, and runc failed to create the sandbox
        // without it. The native snapshotter is the one the image is imported into.
        let cri = #"plugins."io.containerd.grpc.v1.cri""#
        try """
            version = 2
            root = "\(home)/root"
            state = "\(statePath)"

            [grpc]
              address = "\(socket)"

            [\(cri)]
              sandbox_image = "\(Self.pauseImage)"
              restrict_oom_score_adj = true
              [\(cri).containerd]
                snapshotter = "native"
                default_runtime_name = "runc"
                [\(cri).containerd.runtimes.runc]
                  runtime_type = "io.containerd.runc.v2"
                  [\(cri).containerd.runtimes.runc.options]
                    Root = "\(home)/runc"
              [\(cri).cni]
                bin_dir = "/usr/lib/cni"
                conf_dir = "\(home)/net.d"

            """.write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let conflist: [String: Any] = [
            "cniVersion": "1.0.0", "name": network,
            "plugins": [["type": "bridge", "bridge": bridge, "isGateway": true, "ipMasq": false, "hairpinMode": true,
                         "ipam": ["type": "host-local", "ranges": [[["subnet": "\(subnet).0/24"]]], "dataDir": home + "/ipam"]]],
        ]
        try JSONSerialization.data(withJSONObject: conflist, options: [.sortedKeys])
            .write(to: URL(fileURLWithPath: home + "/net.d/10-\(network).conflist"))
    }

    /// containerd in the node's namespace through `nsenter --net` (not `ip netns exec`, whose
    /// mount namespace would hide the pods' `cni-*` namespace mounts from the host), waited for
    /// until its CRI answers Version.
    private func start() throws {
        let log = home + "/containerd.log"
        containerd = try SpawnWithSignals.start([try Command.resolve("nsenter"), "--net=/run/netns/\(namespace.name)",
                                                 "/usr/bin/containerd", "--config", home + "/config.toml"], output: log)
        let deadline = Date().addingTimeInterval(120)
        while (try? Command.run([Self.python, Self.tools + "/cri-client", "--socket", socket, "--cache", home + "/proto",
                                 "--timeout", "5", "version"], timeout: 30))?.status != 0 {
            var raw: Int32 = 0
            let gone = waitpid(containerd, &raw, WNOHANG) == containerd
            if gone { containerd = 0 }
            guard !gone, Date() < deadline else {
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                throw CommandFailed(command: ["containerd", "--config", home + "/config.toml"],
                                    result: CommandResult(status: -1, stdout: "", stderr: "its CRI is not answering: \(text.suffix(3000))"))
            }
            usleep(100_000)
        }
    }

    /// containerd's log so far, for a failure's message.
    public var log: String { (try? String(contentsOfFile: home + "/containerd.log", encoding: .utf8)) ?? "" }

    /// Removes every pod through the CRI (pods outlive containerd otherwise), ends containerd
    /// (SIGTERM, SIGKILL past its deadline), then removes what is left of the test's: its shims
    /// and pause processes, its pods' namespaces and results files, its cgroups, and what it made
    /// under ``statePath`` and /var/lib/cni.
    public func destroy() {
        if containerd > 0 {
            let known = (try? list().map(\.id)) ?? []
            for id in Set(known).union(sandboxes.keys).sorted() {
                _ = try? cri(["stop", id])
                _ = try? cri(["remove", id])
            }
            kill(containerd, SIGTERM)
            if SpawnWithSignals.wait(containerd, within: 30) == nil { /* killed at the deadline */ }
            containerd = 0
        }
        pods = [:]
        Self.removeLeftovers(Leftovers(processMarker: home + "/", resultsPrefix: network + "-", cgroupRoot: { [cgroupRoot] in $0 == cgroupRoot },
                                       state: statePath, home: home, loopback: { [sandboxes] in sandboxes[$1] != nil }),
                             knownNetns: Array(sandboxes.values))
        sandboxes = [:]
        if stateLock >= 0 { Self.removeEmptyStateDirectories() }
        for path in createdCNICache { rmdir(path) }
        createdCNICache = []
        if stateLock >= 0 {
            close(stateLock)
            stateLock = -1
        }
    }
}
