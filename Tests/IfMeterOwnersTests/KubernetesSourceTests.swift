import Foundation
import IfMeterCore
import IfMeterKernel
@testable import IfMeterOwners
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Pods from libcni's cache of attachments: the parser on what containerd's CRI writes and on
/// what it never would, and the source against real namespaces with a hostile cache beside.
@Suite("Kubernetes pods from CNI results", .ownThread, .timeLimit(.minutes(3)))
struct KubernetesSourceTests {
    static func result(namespace: String = "team-a", name: String = "web-0", uid: String = "11111111-2222-4333-8444-555555555555",
                       ifName: String = "eth0", netns: String = "/var/run/netns/cni-e483fae4", extra: String = "") -> String {
        """
        {"kind":"cniCacheV1","containerId":"5b2a","config":"e30=","ifName":"\(ifName)","networkName":"podnet",\
        "cniArgs":[["K8S_POD_UID",\(json(uid))],["IgnoreUnknown","1"],["K8S_POD_NAMESPACE",\(json(namespace))],\
        ["K8S_POD_NAME",\(json(name))]\(extra)],"result":{"cniVersion":"1.0.0","interfaces":[{"name":"cni0"},\
        {"name":"veth809f8c47","mac":"7e:22:90:13:ab:cd"},{"name":"eth0","sandbox":\(json(netns))}],"ips":[]}}
        """
    }

    static func json(_ text: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: text, options: .fragmentsAllowed), as: UTF8.self)
    }

    static func parse(_ text: String) -> KubernetesSource.Pod? { KubernetesSource.pod(cniResult: Array(text.utf8)) }

    @Test("a pod's attachment: its namespace, name, UID and network namespace")
    func attachment() throws {
        let pod = try #require(Self.parse(Self.result()))
        #expect(pod == KubernetesSource.Pod(namespace: "team-a", name: "web-0", uid: "11111111-2222-4333-8444-555555555555",
                                            netns: "/var/run/netns/cni-e483fae4"))
        // A plugin whose result names no interface in the pod (Calico's): the attachment's netns.
        let calico = #"{"ifName":"eth0","netns":"/var/run/netns/cni-1","cniArgs":[["K8S_POD_NAMESPACE","a"],["K8S_POD_NAME","b"],"#
            + #"["K8S_POD_UID","u"]],"result":{"interfaces":[{"name":"cali12345"}]}}"#
        #expect(Self.parse(calico)?.netns == "/var/run/netns/cni-1")
        // The first of a repeated argument counts, as libcni passes each once.
        #expect(Self.parse(Self.result(extra: #",["K8S_POD_NAME","victim"]"#))?.name == "web-0")
    }

    @Test("what Kubernetes would not name a pod, or not a pod's attachment, names nobody", arguments: [
        ("markup in the name", result(name: "<b>x</b>")),
        ("a quote in the namespace", result(namespace: "a\"b")),
        ("an upper-case namespace", result(namespace: "Team")),
        ("a name with a slash", result(name: "a/b")),
        ("a namespace of 64 characters", result(namespace: String(repeating: "a", count: 64))),
        ("an empty UID", result(uid: "")),
        ("a UID with a newline", result(uid: "a\nb")),
        ("no interface of its ifName", result(ifName: "net1")),
        ("a relative sandbox", result(netns: "cni-e483fae4")),
        ("a sandbox with a NUL", result(netns: "/run/netns/a\u{0}b")),
        ("no K8S args", #"{"ifName":"eth0","cniArgs":[],"result":{"interfaces":[{"name":"eth0","sandbox":"/run/netns/x"}]}}"#),
        ("truncated", String(result().prefix(200))),
        ("not JSON", "garbage"),
    ])
    func refused(_ what: String, _ text: String) {
        #expect(Self.parse(text) == nil, "\(what)")
    }

    @Test("against real namespaces: two pods in two namespaces are named; a FIFO, a symlink, a 10 MB file, a file not root's and 1,000 stale attachments beside them name nobody",
          .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason))
    func directory() throws {
        let host = try NetworkNamespace()
        let first = try NetworkNamespace()
        let second = try NetworkNamespace()
        let victim = try NetworkNamespace()
        try host.ip("link", "add", "h-first", "type", "veth", "peer", "name", "eth0", "netns", first.name)
        try host.ip("link", "add", "h-second", "type", "veth", "peer", "name", "eth0", "netns", second.name)
        try host.ip("link", "add", "h-victim", "type", "veth", "peer", "name", "eth0", "netns", victim.name)
        let cache = try TemporaryDirectory()
        let results = cache.path + "/results"
        try FileManager.default.createDirectory(atPath: results, withIntermediateDirectories: true)
        func write(_ file: String, _ text: String) throws { try text.write(toFile: results + "/" + file, atomically: false, encoding: .utf8) }
        try write("podnet-aaa-eth0", Self.result(namespace: "team-a", name: "web-0", netns: "/run/netns/\(first.name)"))
        try write("podnet-bbb-eth0", Self.result(namespace: "team-b", name: "db", uid: "u-2", netns: "/var/run/netns/\(second.name)"))
        for index in 0..<1000 {
            try write("podnet-stale\(index)-eth0", Self.result(name: "gone-\(index)", netns: "/run/netns/cni-gone-\(index)"))
        }
        // What a tenant cannot make, made as it would look: each claims the victim's namespace.
        let forged = Self.result(namespace: "team-a", name: "forged", netns: "/run/netns/\(victim.name)")
        try write("zz-not-roots", forged)
        #expect(chown(results + "/zz-not-roots", 65534, 65534) == 0)
        try forged.write(toFile: cache.path + "/elsewhere", atomically: false, encoding: .utf8)
        #expect(symlink(cache.path + "/elsewhere", results + "/zz-link") == 0)
        #expect(mkfifo(results + "/zz-fifo", 0o600) == 0)
        try write("zz-large", forged + String(repeating: " ", count: 10 << 20))

        let paths = OwnerPaths(namedNamespaces: ["/run/netns"], podmanStorage: cache.path + "/none", dockerRoot: cache.path + "/none",
                               proc: cache.path + "/none", cgroups: cache.path + "/none", libvirtQemu: cache.path + "/none",
                               cniResults: results)
        let third = try NetworkNamespace()
        let (links, found, again) = try host.inside { () throws -> ([Link], [Int32: OwnerLookup], [Int32: OwnerLookup]) in
            let directory = try OwnerDirectory(paths: paths)
            func look() throws -> ([Link], [Int32: OwnerLookup]) {
                let links = try NetlinkSocket().dumpLinks()
                var names: [Int32: String] = [:]
                for link in links { if let nsid = link.peerNamespaceID { names[nsid] = link.name } }
                return (links, directory.lookUp(Set(names.keys), hostNames: names))
            }
            let (links, found) = try look()
            // A pod started since: its result is a new file in the directory the look keeps.
            try host.ip("link", "add", "h-third", "type", "veth", "peer", "name", "eth0", "netns", third.name)
            try write("podnet-ccc-eth0", Self.result(namespace: "team-c", name: "late", uid: "u-3", netns: "/run/netns/\(third.name)"))
            return (links, found, try look().1)
        }
        func lookup(_ name: String) throws -> OwnerLookup? {
            found[try #require(links.first { $0.name == name }?.peerNamespaceID, "no \(name)")]
        }
        #expect(try lookup("h-first") == .found(FoundOwner(.kubernetes, name: "team-a/web-0", id: "11111111-2222-4333-8444-555555555555")))
        #expect(try lookup("h-second") == .found(FoundOwner(.kubernetes, name: "team-b/db", id: "u-2")))
        #expect(again.values.filter { $0 == .found(FoundOwner(.kubernetes, name: "team-a/web-0", id: "11111111-2222-4333-8444-555555555555")) }.count == 1)
        #expect(again.values.contains(.found(FoundOwner(.kubernetes, name: "team-c/late", id: "u-3"))), "\(again)")
        // The victim's namespace is bound under /run/netns: a name, not the forged pod.
        #expect(try lookup("h-victim") == .found(FoundOwner(.netns, name: victim.name, id: try inode(of: "/run/netns/\(victim.name)"))))
    }

    private func inode(of path: String) throws -> String {
        var status = stat()
        try #require(stat(path, &status) == 0)
        return String(status.st_ino)
    }
}
