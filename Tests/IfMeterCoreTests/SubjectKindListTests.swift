import Foundation
import IfMeterCore
import IfMeterTestSupport
import Testing

/// The list of subject kinds is what docs/ARCHITECTURE.md's "Where a change goes" says it is,
/// each kind in the file the row names, and every kind's answers hold together.
@Suite("The subject kinds", .ownThread, .timeLimit(.minutes(1)))
struct SubjectKindListTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("ARCHITECTURE.md lists SubjectKinds.builtIn in order, and each kind is in IfMeterCore/Subjects/NAME.swift")
    func listedInTheMap() throws {
        let map = try String(contentsOf: Self.root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let row = try #require(map.range(of: "Kinds now:").map { String(map[$0.upperBound...]) })
        let listed = String(row[..<(row.range(of: "(`builtIn`)")?.lowerBound ?? row.endIndex)])
            .split(whereSeparator: { !$0.isLetter }).map(String.init)
        let declared = SubjectKinds.builtIn.map { String(describing: type(of: $0)) }
        #expect(listed == declared)
        for name in declared {
            let path = Self.root.appendingPathComponent("Sources/IfMeterCore/Subjects/\(name).swift").path
            #expect(FileManager.default.fileExists(atPath: path), "\(name) is not in \(path)")
        }
    }

    @Test("each prefix names one kind, and a subject's kind is found by its prefix")
    func prefixes() {
        let prefixes = SubjectKinds.builtIn.compactMap(\.prefix)
        #expect(Set(prefixes).count == prefixes.count)
        #expect(SubjectKinds.builtIn.filter { $0.prefix == nil }.count == 1)
        for kind in SubjectKinds.builtIn {
            // An application's name holds its user's uid; one on a network, its network and subject;
            // a scope's, its scope and subject.
            let name = kind is AppKind ? "1000/web" : kind is NetworkAppKind ? "unknown/service:web"
                : kind is ScopeKind ? "internet/service:web" : "web"
            let subject = kind.subject(name)
            let found = SubjectKinds.kind(of: subject)
            #expect(found.map { type(of: $0.kind) == type(of: kind) && $0.name == name } == true, "\(subject)")
        }
        #expect(SubjectKinds.kind(of: "app:web") == nil)
        #expect(SubjectKinds.kind(of: "gadget:web") == nil)
        #expect(SubjectKinds.kind(of: "container:") == nil)
        #expect(SubjectKinds.kind(of: "scope:internet/eth0")?.name == "internet/eth0")
        #expect(SubjectKinds.kind(of: "scope:nearby/eth0") == nil && SubjectKinds.kind(of: "scope:local/netapp:unknown/app:1000/web") == nil)
        #expect(SubjectName.owner(of: "network:unknown") == nil && SubjectName.owner(of: "wlan0") == nil)
    }

    @Test("the owners' heading names every owner kind; each section's kinds are listed in it")
    func sections() {
        #expect(SubjectSection.owners.heading == "Containers, pods, virtual machines and namespaces")
        #expect(SubjectSection.networks.heading == "Networks")
        #expect(SubjectSection.apps.heading == "Services, applications and links' remainders")
        #expect(SubjectKinds.kinds(in: .apps).map(\.prefix) == ["service", "app", "remainder"])
        #expect(SubjectKinds.kinds(in: .owners).map(\.prefix) == ["container", "pod", "vm", "netns"])
    }

    @Test("a figure is labelled where its kind says it was counted", arguments: [
        ("container:web", [EstimateLabel.hostSideVeth]), ("pod:a/b", [.hostSideVeth]), ("vm:db#2", [.hostSideTap]),
        ("netns:blue", [.hostSideVeth]), ("netns:vpn/tun0", []), ("network:unknown", [.networkUnknown]),
        ("network:6f1c1a38-0000-4000-8000-00000000000a", []), ("eth0", []), ("remainder:eth0", []),
    ])
    func labels(subject: String, expected: [EstimateLabel]) {
        let labels = BucketTally().labels(tunnel: false, subject: subject)
        #expect(labels == EstimateLabel.labels(tunnel: false, resets: 0, gaps: 0, implausibleDropped: 0) + expected)
    }

    @Test("an application's figures say they were counted per cgroup, not by interface counters", arguments: [
        "service:nginx.service", "app:1000/firefox",
    ])
    func cgroupLabels(subject: String) {
        let labels = BucketTally().labels(tunnel: false, subject: subject)
        #expect(labels == [.estimate, .cgroupCounters, .includesOverhead])
        #expect(!labels.contains(.notPerApp) && !labels.contains(.interfaceCounters))
    }
}
