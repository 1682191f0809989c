import IfMeterCore
import IfMeterJSON
#if canImport(Glibc)
import Glibc
#endif

extension LinkOwner.Kind {
    /// A Kubernetes pod on this node, `pod:NAMESPACE/NAME`: its namespace, name and UID from the
    /// CNI attachment containerd's CRI or CRI-O made for it.
    public static let kubernetes = LinkOwner.Kind("kubernetes", prefix: .pod)
}

/// The pods of a Kubernetes node, from libcni's cache of attachments (`/var/lib/cni/results`),
/// which both containerd's CRI and CRI-O write through libcni as they attach a pod's network:
/// one file a network and interface (`NETWORK-SANDBOXID-IFNAME`), holding the CNI args the
/// runtime passed (`K8S_POD_NAMESPACE`, `K8S_POD_NAME`, `K8S_POD_UID`, from the pod's metadata
/// as the kubelet sent it) and the result, whose interface inside the pod names its network
/// namespace (`sandbox`, `/var/run/netns/cni-…`). Those args are the runtime's, from the pod's
/// metadata: nothing in a pod's spec (its annotations, its labels) reaches them.
///
/// The directory and its files are root's (0700, 0600): a file counts only when root owns it
/// and it is a regular file, not a link; each is read again only when it changed, and at most
/// ``fileLimit`` bytes of it. A pod's subject is its namespace and name, so a pod re-created
/// under its name (a StatefulSet's) or its sandbox re-created (a restart, a node's reboot)
/// continues it; its UID is its id, which tells its incarnations apart.
public final class KubernetesSource: OwnerSource {
    public static let kind = LinkOwner.Kind.kubernetes
    public static let fuzzSeeds = ["cni-result.json"]

    /// A CNI result is a few kilobytes (the network's config, base64, the largest part).
    static let fileLimit = 1 << 20

    /// A pod as a CNI attachment names it.
    struct Pod: Hashable {
        var namespace: String
        var name: String
        var uid: String
        /// The pod's network namespace, bound by the runtime.
        var netns: String
    }

    private let directory: String
    private var results: [String: CachedFile<Pod?>] = [:]
    /// The directory's listing, kept while the directory's inode and modification time stay:
    /// libcni writes a file once for an attachment and removes it at its end, so a new pod or
    /// one gone changes the directory, and a look on a node of thousands reads no file again.
    private var listing: (stamp: [Int64], files: [String])?
    /// Results whose pod's namespace is gone: what libcni leaves when a sandbox's pause died or
    /// its network's DEL failed. A namespace never comes back (a new sandbox gets a new one), so
    /// they are not looked at again while they stay.
    private var gone: Set<String> = []

    public init(paths: OwnerPaths) { directory = paths.cniResults }

    public func find(_ look: inout OwnerLook) {
        guard look.anySought else { return }
        var status = stat()
        guard lstat(directory, &status) == 0, status.st_uid == 0, status.st_mode & S_IFMT == S_IFDIR else {
            (results, listing, gone) = ([:], nil, [])
            return
        }
        let stamp = [Int64(status.st_ino), Int64(status.st_mtim.tv_sec), Int64(status.st_mtim.tv_nsec)]
        let unchanged = listing?.stamp == stamp
        if !unchanged {
            let files = SysfsReader.listDirectory(directory).sorted()
            let present = Set(files)
            listing = (stamp, files)
            results = results.filter { present.contains($0.key) }
            gone.formIntersection(present)
        }
        for file in listing?.files ?? [] where !gone.contains(file) {
            let pod: Pod?
            if unchanged, let cached = results[file] {
                pod = cached.value ?? nil
            } else {
                let path = directory + "/" + file
                guard RootOwned.check(path, type: S_IFREG) else { continue }
                var cached = results[file] ?? CachedFile()
                pod = cached.read(path, limit: Self.fileLimit, Self.pod(cniResult:)) ?? nil
                results[file] = cached
            }
            guard let pod else { continue }
            guard let nsid = look.files.nsid(ofFile: pod.netns) else {
                if access(pod.netns, F_OK) != 0 && errno == ENOENT { gone.insert(file) }
                continue
            }
            if look.isSought(nsid) {
                look.namespaces[nsid] = .found(FoundOwner(.kubernetes, name: pod.namespace + "/" + pod.name, id: pod.uid))
            }
        }
    }

    /// A libcni cache file (`cniCacheV1`): the pod its CNI args name, and the network namespace
    /// its interface inside the pod is in. nil for anything else, or a pod whose namespace,
    /// name or UID Kubernetes would not accept.
    static func pod(cniResult bytes: [UInt8]) -> Pod? {
        var reader = JSONReader(bytes)
        var arguments: [String: String] = [:]
        var interfaceName: String?
        var sandboxes: [(name: String, sandbox: String)] = []
        var attachmentNetns: String?
        do {
            try reader.readObject { top, key in
                switch key {
                case "ifName": interfaceName = try top.readString()
                case "netns": attachmentNetns = try top.readString()
                case "cniArgs":
                    try top.readArray { pair in
                        let both = try pair.readStrings()
                        // The first of a key counts: libcni passes each once.
                        if both.count == 2, arguments[both[0]] == nil { arguments[both[0]] = both[1] }
                    }
                case "result":
                    try top.readObject { result, key in
                        guard key == "interfaces" else { return try result.skipValue() }
                        try result.readArray { element in
                            var name: String?
                            var sandbox: String?
                            try element.readObject { member, key in
                                switch key {
                                case "name": name = try member.readString()
                                case "sandbox": sandbox = try member.readString()
                                default: try member.skipValue()
                                }
                            }
                            if let name, let sandbox { sandboxes.append((name, sandbox)) }
                        }
                    }
                default: try top.skipValue()
                }
            }
        } catch {
            return nil
        }
        // The result's interface in the pod names its namespace; a plugin that reports none
        // (Calico's) leaves it to the attachment's own `netns`, which libcni 1.1 keeps too.
        guard let interfaceName, let netns = sandboxes.first(where: { $0.name == interfaceName })?.sandbox ?? attachmentNetns,
              netns.hasPrefix("/"), !netns.utf8.contains(0),
              let namespace = arguments["K8S_POD_NAMESPACE"], KubernetesName.isNamespace(namespace),
              let name = arguments["K8S_POD_NAME"], KubernetesName.isName(name),
              let uid = arguments["K8S_POD_UID"], KubernetesName.isUID(uid) else { return nil }
        return Pod(namespace: namespace, name: name, uid: uid, netns: netns)
    }

    public static func fuzz(_ bytes: [UInt8]) {
        if let pod = pod(cniResult: bytes) {
            guard KubernetesName.isNamespace(pod.namespace), KubernetesName.isName(pod.name), KubernetesName.isUID(pod.uid),
                  OwnerName.isAcceptable(pod.namespace), OwnerName.isAcceptable(pod.name) else { fatalError("a CNI result gave \(pod)") }
        }
    }

    public static func names(seed bytes: [UInt8]) -> Bool { pod(cniResult: bytes) != nil }
}

/// The names Kubernetes gives pods and namespaces (its API validates them; the CRI does not, so
/// they are checked again here): a namespace is a DNS label (RFC 1123: at most 63 of `a-z`,
/// `0-9`, `-`, starting and ending alphanumeric), a pod's name a DNS subdomain (at most 253,
/// dots between such labels). Both fit ``OwnerName``: no `:`, `/`, space or markup.
enum KubernetesName {
    static func isNamespace(_ text: String) -> Bool { text.utf8.count <= 63 && isLabel(Substring(text)) }

    static func isName(_ text: String) -> Bool {
        text.utf8.count <= 253 && text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy(isLabel)
    }

    /// What a pod's UID holds: a UUID from the API server; the CRI takes any string, so at most
    /// 128 of letters, digits and `-`.
    static func isUID(_ text: String) -> Bool {
        (1...128).contains(text.utf8.count) && text.utf8.allSatisfy { isAlphanumeric($0) || (0x41...0x5a).contains($0) || $0 == UInt8(ascii: "-") }
    }

    private static func isLabel(_ label: Substring) -> Bool {
        let bytes = Array(label.utf8)
        guard let first = bytes.first, let last = bytes.last, bytes.count <= 63 else { return false }
        return isAlphanumeric(first) && isAlphanumeric(last) && bytes.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) || (0x61...0x7a).contains(byte) }
}
