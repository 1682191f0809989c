import IfMeterCore
@testable import IfMeterKernel
import Testing

/// How a read of the own and the peers sockets is merged, and how long a peers-socket loss
/// labels the deletions read after it (docs/NAMESPACES.md, "Two sockets").
@Suite("Peer order", .ownThread, .timeLimit(.minutes(3)))
struct PeerOrderTests {
    static func link(_ ifindex: Int32, _ name: String) -> Link {
        Link(ifindex: ifindex, name: name, kind: "veth", arpType: 1, counters: LinkCounters(rxBytes: 1, txBytes: 2))
    }

    static let hostEnd = link(7, "veth0")
    static let end = link(2, "eth0")
    static let changed = LinkObservation.event(.newOrChanged(hostEnd))
    static let deleted = LinkObservation.event(.deleted(hostEnd))
    static let endDeleted = LinkObservation.peer(nsid: 3, .deleted(end))
    static let other = LinkObservation.event(.newOrChanged(link(9, "eth1")))

    @Test("peers go just before the own socket's first deletion or nsid deletion, else at the end", arguments: [
        // A host end goes down as its container end does, then both are deleted: the end's
        // counters must outlive the host end's change (which drops counters read before it).
        ([changed, deleted], [endDeleted], [changed, endDeleted, deleted]),
        ([deleted, other], [endDeleted], [endDeleted, deleted, other]),
        ([.namespaceIDDeleted(3), deleted], [endDeleted], [endDeleted, .namespaceIDDeleted(3), deleted]),
        ([other, changed], [endDeleted], [other, changed, endDeleted]),
        ([], [endDeleted], [endDeleted]),
        ([changed, deleted], [], [changed, deleted]),
    ] as [([LinkObservation], [LinkObservation], [LinkObservation])])
    func merged(own: [LinkObservation], peers: [LinkObservation], expected: [LinkObservation]) {
        #expect(PeerOrder.merged(own: own, peers: peers, lost: false) == expected)
    }

    @Test("while a loss may have hidden an end's deletion, every deletion read is preceded by peerEventsLost, and nothing else is")
    func lostMarksDeletions() {
        let merged = PeerOrder.merged(own: [Self.other, Self.changed, Self.deleted], peers: [Self.endDeleted], lost: true)
        #expect(merged == [Self.other, Self.changed, Self.endDeleted, .peerEventsLost(before: Self.hostEnd), Self.deleted])
        #expect(PeerOrder.merged(own: [Self.other, Self.changed], peers: [], lost: true) == [Self.other, Self.changed])
    }

    @Test("the window: opened by a loss, open through the next read and for at least `hold` after the last loss")
    func lossWindow() {
        var window = PeerLossWindow()
        #expect(!window.isOpen && window.losses == 0)
        window.readFinished(at: 100)
        #expect(!window.isOpen)

        window.lost(at: 100)
        #expect(window.isOpen && window.losses == 1)
        window.readFinished(at: 100)
        #expect(window.isOpen, "the read that found it")
        window.readFinished(at: 100 + PeerLossWindow.hold / 2)
        #expect(window.isOpen, "a second read, but before `hold`")
        window.readFinished(at: 100 + PeerLossWindow.hold)
        #expect(!window.isOpen)

        // Long after: the next read still belongs to the window (the loop may have been busy).
        window.lost(at: 200)
        window.readFinished(at: 200 + PeerLossWindow.hold * 3)
        #expect(window.isOpen, "only one read since the loss")
        window.readFinished(at: 200 + PeerLossWindow.hold * 3)
        #expect(!window.isOpen)

        // A new loss restarts both counts.
        window.lost(at: 300)
        window.readFinished(at: 300)
        window.lost(at: 305)
        window.readFinished(at: 305 + PeerLossWindow.hold - 1)
        window.readFinished(at: 305 + PeerLossWindow.hold - 1)
        #expect(window.isOpen, "within `hold` of the last loss")
        window.readFinished(at: 305 + PeerLossWindow.hold)
        #expect(!window.isOpen && window.losses == 4)
    }
}
