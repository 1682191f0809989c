import Foundation
import IfMeterTestSupport
import Testing

/// What is Kubernetes' own (docs/NAMESPACES.md "Kubernetes pods"), on Debian's containerd
/// through its CRI, pods made as the kubelet makes them, the real ifmeterd metering the node's
/// namespace as the shipped unit runs it: pods in two namespaces, a pod named as
/// Kubernetes never would, and one whose spec forges another's identity. The owner scenario
/// every runtime shares is RuntimeScenarioTests'.
@Suite("Pods on containerd's CRI", .enabled(if: ContainerdCRI.available, ContainerdCRI.skipReason), .serialized, .ownThread,
       .timeLimit(.minutes(10)))
struct KubernetesTests {
    @Test("as the unit runs it: pods in two namespaces; a pod named with markup is its namespace's bound name; one forging another's annotations is itself; each exact, no veth name keeps a byte")
    func namespacesAndHostileSpecs() throws {
        let node = try NetworkNamespace()
        defer { node.delete() }
        let cri = try ContainerdCRI(in: node)
        defer { cri.destroy() }
        let daemon = try DaemonProcess(namespace: node, config: "interval = 3600\nowner_grace = 1\n")
        defer { _ = try? daemon.stop(SIGKILL) }
        try daemon.startAsTheUnit()

        cri.place("web", in: "team-a")
        cri.place("db", in: "team-b")
        try cri.run("web")
        try cri.run("db")
        let victim = try cri.status(try cri.sandbox(of: "web"))
        let markup = "<b>m</b>"
        try cri.run(markup)
        let forger = "forger"
        let forged = ["io.kubernetes.cri.sandbox-name": victim.name, "io.kubernetes.cri.sandbox-namespace": victim.namespace,
                      "io.kubernetes.cri.sandbox-uid": victim.uid, "io.kubernetes.pod.name": victim.name]
        try cri.runPod(forger, annotations: forged, labels: ["io.kubernetes.pod.name": victim.name])
        let labels = ["web", "db", markup, forger]
        let sides = try labels.map { try cri.hostSide(of: $0) }
        try cri.send("web", bytes: 10_000)
        try cri.send("db", bytes: 4_000)
        try cri.send(markup, bytes: 6_000)
        try cri.send(forger, bytes: 8_000)
        for label in labels { try cri.freeze(label) }
        let truth = try Dictionary(uniqueKeysWithValues: labels.map { ($0, try cri.counters(of: $0)) })

        // The markup pod's namespace has no acceptable owner: after owner_grace its bound name.
        let markupNetns = try #require(try cri.status(try cri.sandbox(of: markup)).netns?.split(separator: "/").last.map(String.init))
        var figures = try daemon.figuresAfterSample()
        let deadline = Date().addingTimeInterval(60)
        while figures["netns:\(markupNetns)"] == nil && Date() < deadline {
            usleep(200_000)
            figures = try daemon.figuresAfterSample()
        }
        func counted(_ subject: String) throws -> (rx: UInt64?, tx: UInt64?) {
            let entry = try #require(figures[subject], "\(subject) not listed: \(figures.keys.sorted())")
            return (entry.int("rx_bytes"), entry.int("tx_bytes"))
        }
        #expect(cri.subject("web").hasPrefix("pod:ifmt-team-a/") && cri.subject("db").hasPrefix("pod:ifmt-team-b/"))
        let db = try counted(cri.subject("db"))
        #expect(db.rx == truth["db"]!.rx && db.tx == truth["db"]!.tx, "db: \(db) vs \(truth["db"]!)")
        let web = try counted(cri.subject("web")), forgerFigures = try counted(cri.subject(forger))
        let markupFigures = try counted("netns:\(markupNetns)")
        #expect(web.rx == truth["web"]!.rx && web.tx == truth["web"]!.tx, "web: \(web) vs \(truth["web"]!)")
        #expect(forgerFigures.rx == truth[forger]!.rx && forgerFigures.tx == truth[forger]!.tx, "forger: \(forgerFigures)")
        #expect(markupFigures.rx == truth[markup]!.rx && markupFigures.tx == truth[markup]!.tx, "markup: \(markupFigures)")
        #expect(!figures.keys.contains { $0.contains("<") || $0.contains(">") }, "\(figures.keys.sorted())")
        #expect(figures.filter { sides.contains($0.key) }.isEmpty, "veth names of their own: \(figures.keys.sorted())")
        let owner = try #require(figures[cri.subject("web")]?["owner"] as? [String: Any])
        #expect(owner["kind"] as? String == "kubernetes" && owner["id"] as? String == victim.uid, "\(owner)")
    }
}
