import IfMeterCore
import IfMeterKernel
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The link-event socket, against links the test creates, changes and deletes.
@Suite("Link events", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason), .ownThread, .timeLimit(.minutes(10)))
struct LinkEventTests {
    @Test("a tun deleted right after traffic: the delete event carries the kernel's final counters")
    func tunDeletedCarriesFinalCounters() throws {
        let namespace = try NetworkNamespace()
        let events = try namespace.inside { try LinkEventSocket() }
        let tun = try namespace.inside { try TunDevice(name: "tunt1") }
        try TunTraffic.push(through: tun, in: namespace, written: 25, writtenPayload: 700,
                            read: 15, readPayload: 200)
        let final = try sysfsCounters(namespace, "tunt1")
        #expect(final.rxBytes == 25 * 728 && final.txBytes == 15 * 228)

        tun.close()
        let (seen, overflowed) = try events.collect { events in
            events.contains { if case .deleted(let link) = $0 { link.name == "tunt1" } else { false } }
        }
        #expect(!overflowed)
        let created = try #require(seen.first { $0.link.name == "tunt1" })
        guard case .newOrChanged = created else {
            Issue.record("first event for tunt1 should be its creation, got \(created)")
            return
        }
        let deleted = try #require(seen.last)
        #expect(deleted == .deleted(deleted.link))
        #expect(deleted.link.counters == final)
        #expect(deleted.link.kind == "tun")
        #expect(deleted.link.ifindex == created.link.ifindex)
    }

    /// Documented in docs/decisions/kernel-and-platform.md: deleting one end of a veth deletes both. The
    /// surviving end's delete message still reports its tx, but its rx is read through the
    /// peer, which is already gone, so the message says 0 received. The meter takes the
    /// larger of the last poll and the message, per counter (docs/METER.md rule 4).
    @Test("a veth whose peer is deleted: its own delete message reports rx 0, tx intact")
    func vethPeerDeleted() throws {
        let pair = try VethPair(subnet: 78)
        try pair.sendLeftToRight(count: 30, payload: 100)
        try pair.sendRightToLeft(count: 20, payload: 300)
        let lastPolled = try pair.left.inside { try NetlinkSocket().dumpLinks() }
        let polled = try #require(try link(named: pair.leftName, in: lastPolled).counters)
        #expect(polled.txBytes == 30 * 142 && polled.rxBytes == 20 * 342)

        let events = try pair.left.inside { try LinkEventSocket() }
        try pair.right.ip("link", "delete", pair.rightName)
        let (seen, _) = try events.collect { events in
            events.contains { if case .deleted(let link) = $0 { link.name == pair.leftName } else { false } }
        }
        let deleted = try #require(seen.last { $0.link.name == pair.leftName }).link
        let counters = try #require(deleted.counters)
        #expect(counters.txBytes == polled.txBytes && counters.txPackets == polled.txPackets)
        #expect(counters.rxBytes == 0 && counters.rxPackets == 0)
    }

    /// libnl files a bridge's own (AF_UNSPEC) message under AF_BRIDGE; read by that family, a
    /// bridge created while the daemon ran (Podman's `podman0`) was never metered.
    @Test("a bridge created while the socket listens is an event about the link")
    func bridgeCreated() throws {
        let namespace = try NetworkNamespace()
        let events = try namespace.inside { try LinkEventSocket() }
        try namespace.ip("link", "add", "br8", "type", "bridge")
        let (seen, _) = try events.collect { events in events.contains { $0.link.name == "br8" } }
        let created = try #require(seen.first { $0.link.name == "br8" })
        #expect(created == .newOrChanged(created.link))
        #expect(created.link.kind == "bridge")
        #expect(created.link.counters != nil)
    }

    /// What attribution starts from (docs/NAMESPACES.md): the host side of a veth whose peer
    /// moved away names the peer's namespace by an nsid, and asking the kernel about that
    /// namespace's file gives the same nsid.
    @Test("a veth whose peer is in another namespace carries that namespace's nsid, as RTM_GETNSID gives it")
    func peerNamespaceID() throws {
        let host = try NetworkNamespace()
        let container = try NetworkNamespace()
        let other = try NetworkNamespace()
        try host.ip("link", "add", "h0", "type", "veth", "peer", "name", "c0", "netns", container.name)
        try host.ip("link", "add", "h1", "type", "veth", "peer", "name", "c1")
        let (links, nsid, otherNsid) = try host.inside { () throws -> ([Link], Int32?, Int32?) in
            let socket = try NetlinkSocket()
            let fd = open("/run/netns/\(container.name)", O_RDONLY | O_CLOEXEC)
            let otherFd = open("/run/netns/\(other.name)", O_RDONLY | O_CLOEXEC)
            defer { close(fd); close(otherFd) }
            return (try socket.dumpLinks(), try socket.namespaceID(of: fd), try socket.namespaceID(of: otherFd))
        }
        let moved = try link(named: "h0", in: links)
        let local = try link(named: "h1", in: links)
        #expect(moved.peerNamespaceID != nil)
        #expect(moved.peerNamespaceID == nsid)
        // Both ends are often ifindex 2 in their namespaces: the peer is still named.
        #expect(moved.parent != nil)
        #expect(local.peerNamespaceID == nil)
        // No link of the host namespace reaches `other`: asking assigns it no nsid.
        #expect(otherNsid == nil)
    }

    /// What attribution reads a removed container's last bytes from (docs/NAMESPACES.md): the
    /// container's end reports its own counters as it is deleted, marked with its namespace's
    /// nsid, on the peers socket; the feed puts it before the host's end's deletion, read on the
    /// own socket, which never hears another namespace.
    @Test("a feed with a peers socket: the peer's deletion with its own counters comes first, marked; the own socket hears no other namespace")
    func peerEvents() throws {
        let host = try NetworkNamespace()
        let container = try NetworkNamespace()
        try host.ip("link", "add", "h0", "type", "veth", "peer", "name", "c0", "netns", container.name)
        try host.ip("link", "set", "h0", "up")
        try container.ip("link", "set", "c0", "up")
        let (feed, ownOnly, nsid) = try host.inside { () throws -> (LinkFeed, LinkEventSocket, Int32?) in
            let links = try NetlinkSocket().dumpLinks()
            let feed = try LinkFeed()
            try feed.listenToPeers()
            return (feed, try LinkEventSocket(), links.first { $0.name == "h0" }?.peerNamespaceID)
        }
        let frame = #"b"\xff" * 6 + b"\x02" + b"\0" * 5 + b"\x88\xb5" + b"\0" * 46"#
        try container.exec(["python3", "-c", "import socket\nwith socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:\n"
                            + "    for _ in range(7): s.sendto(\(frame), (\"c0\", 0))\n"])
        let sent = try container.sysfsCounter("c0", "tx_bytes")
        try container.ip("link", "delete", "c0")
        let seen = try feed.collect { seen in
            seen.contains { if case .event(.deleted(let link)) = $0 { link.name == "h0" } else { false } }
        }
        let own = seen.compactMap { if case .event(let event) = $0 { event } else { nil } }
        #expect(own.allSatisfy { $0.link.name == "h0" }, "only the own namespace's links: \(own.map(\.link.name))")
        let hostDeleted = try #require(seen.firstIndex { if case .event(.deleted) = $0 { true } else { false } })
        let peerDeleted = try #require(seen.firstIndex { if case .peer(_, .deleted(let link)) = $0 { link.name == "c0" } else { false } })
        guard case .peer(let number, .deleted(let end)) = seen[peerDeleted] else { return }
        #expect(number == nsid)
        #expect(peerDeleted < hostDeleted, "the container's end is deleted first: \(seen)")
        #expect(end.counters?.txBytes == sent, "its own counters, to the last frame")
        guard case .event(.deleted(let hostEnd)) = seen[hostDeleted] else { return }
        #expect(hostEnd.counters?.rxBytes == 0, "the host's end reads the peer's tx, gone by then")
        #expect(!seen.contains { if case .peerEventsLost = $0 { true } else { false } })
        let heard = try ownOnly.collect { events in events.contains { $0.link.name == "h0" && $0 == .deleted($0.link) } }
        #expect(!heard.overflowed)
        #expect(try ownOnly.readEvents().observations.allSatisfy { if case .peer = $0 { false } else { true } })
    }

    /// A tenant is root in its namespace, so it may multicast to that namespace's link group;
    /// the kernel hands its datagrams to every socket listening there, the peers socket
    /// included (docs/SECURITY.md, "Tenants").
    @Test("a tenant's forged multicast flood overflows the peers socket only: the own socket loses nothing, the forgeries are never read as events, and deletions read meanwhile are marked")
    func forgedMulticastFlood() throws {
        let host = try NetworkNamespace()
        let tenant = try NetworkNamespace()
        try host.ip("link", "add", "h0", "type", "veth", "peer", "name", "eth0", "netns", tenant.name)
        let feed = try host.inside { () throws -> LinkFeed in
            let feed = try LinkFeed()
            try feed.listenToPeers()
            return feed
        }
        let peers = try #require(feed.peers)
        // 40 MB of forged RTM_DELLINK datagrams to RTNLGRP_LINK, more than either buffer holds
        // (the kernel reports double the 8 MiB asked), sent while nothing reads.
        try tenant.exec(["python3", "-c", """
            import socket, struct
            s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
            s.bind((0, 0))
            forged = struct.pack("=LHHLL", 65000, 17, 0, 0, 0) + struct.pack("=BxHiII", 0, 1, 2, 0, 0) + bytes(65000 - 32)
            for _ in range(600): s.sendto(forged, (0, 1))
            """])
        #expect(peers.receiveBufferSize < 600 * 65000)
        try host.ip("link", "add", "after0", "type", "veth", "peer", "name", "after1")
        try host.ip("link", "delete", "after0")
        let seen = try feed.collect { seen in
            seen.contains { if case .event(.deleted(let link)) = $0 { link.name == "after0" } else { false } }
        }
        #expect(!seen.contains { if case .resync = $0 { true } else { false } }, "the own socket overflowed: \(seen)")
        #expect(!seen.contains { if case .peer = $0 { true } else { false } }, "a forgery was read: \(seen)")
        #expect(seen.contains { if case .event(.newOrChanged(let link)) = $0 { link.name == "after1" } else { false } })
        #expect(feed.peerLosses > 0)
        let marked = seen.compactMap { if case .peerEventsLost(let link) = $0 { link.name } else { nil } }
        #expect(marked.contains("after0"), "\(seen)")
    }

    /// Small forgeries queue by the thousand in the peers socket's buffer, more than one read's
    /// budget: the read after a deletion takes everything queued, so the end's deletion and the
    /// copy of its host end's come before the host end's deletion.
    @Test("a genuine end's deletion queued behind more forgeries than a read takes: read before its host end's deletion, in the kernel's order")
    func endBehindForgeries() throws {
        let host = try NetworkNamespace()
        let tenant = try NetworkNamespace()
        try host.ip("link", "add", "h0", "type", "veth", "peer", "name", "c0", "netns", tenant.name)
        let feed = try host.inside { () throws -> LinkFeed in
            let feed = try LinkFeed()
            try feed.listenToPeers()
            return feed
        }
        try tenant.exec(["python3", "-c", """
            import socket, struct
            s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
            s.bind((0, 0))
            forged = struct.pack("=LHHLL", 32, 17, 0, 0, 0) + struct.pack("=BxHiII", 0, 1, 2, 0, 0)
            for _ in range(5000): s.sendto(forged, (0, 1))
            """])
        try tenant.ip("link", "delete", "c0")
        let seen = try feed.collect { seen in
            seen.contains { if case .event(.deleted(let link)) = $0 { link.name == "h0" } else { false } }
        }
        let deleted = try #require(seen.firstIndex { if case .event(.deleted(let link)) = $0 { link.name == "h0" } else { false } })
        let endFirst = seen[..<deleted].contains { if case .peer(_, .deleted(let link)) = $0 { link.name == "c0" } else { false } }
        let marked = deleted > 0 && seen[deleted - 1] == .peerEventsLost(before: { if case .event(.deleted(let link)) = seen[deleted] { link } else { fatalError() } }())
        #expect(endFirst, "\(seen)")
        #expect(!marked, "nothing was lost")
        let order = seen.filter { if case .peer = $0 { true } else if case .hostMark = $0 { true } else { false } }
        let ifindex = try #require(try host.inside { try NetlinkSocket().dumpLinks() }.isEmpty ? nil : { () -> Int32? in
            if case .event(.deleted(let link)) = seen[deleted] { link.ifindex } else { nil } }())
        let endAt = try #require(order.firstIndex { if case .peer(_, .deleted) = $0 { true } else { false } })
        #expect(order[(endAt + 1)...].first == .hostMark(ifindex: ifindex, deleted: true), "the host end's deletion next: \(order)")
    }

    @Test("leaving a bridge is a change, not a deletion (AF_BRIDGE RTM_DELLINK is filtered)")
    func bridgePortLeaving() throws {
        let namespace = try NetworkNamespace()
        try namespace.ip("link", "add", "br9", "type", "bridge")
        try namespace.ip("link", "add", "p0", "type", "veth", "peer", "name", "p1")
        let events = try namespace.inside { try LinkEventSocket() }
        try namespace.ip("link", "set", "p0", "master", "br9")
        try namespace.ip("link", "set", "p0", "nomaster")
        // A link created afterwards marks the end: events arrive in order.
        try namespace.ip("link", "add", "mark0", "type", "veth", "peer", "name", "mark1")
        let (seen, _) = try events.collect { events in events.contains { $0.link.name == "mark1" } }
        let p0 = seen.filter { $0.link.name == "p0" }
        #expect(!p0.isEmpty)
        #expect(p0.allSatisfy { if case .newOrChanged = $0 { true } else { false } })
        #expect(p0.contains { $0.link.master != nil })
        #expect(p0.last?.link.master == nil)
    }

    @Test("an overflowed event socket says so, and works again afterwards")
    func overflowIsReported() throws {
        let namespace = try NetworkNamespace()
        let events = try namespace.inside { try LinkEventSocket() }
        #expect(events.receiveBufferSize >= 8 * 1024 * 1024, "root gets the full buffer")
        // Shrink the buffer to the kernel's minimum so a burst of links overflows it.
        var tiny: Int32 = 1
        #expect(setsockopt(events.fileDescriptor, SOL_SOCKET, SO_RCVBUF, &tiny, 4) == 0)
        try namespace.ipBatch((0..<100).map { "link add o\($0) type veth peer name q\($0)" })
        let burst = try events.readEvents()
        #expect(burst.overflowed)
        #expect(burst.ownEvents.count < 200)

        var roomy: Int32 = 1 << 20
        #expect(setsockopt(events.fileDescriptor, SOL_SOCKET, SO_RCVBUF, &roomy, 4) == 0)
        try namespace.ip("link", "add", "after0", "type", "veth", "peer", "name", "after1")
        let (seen, overflowed) = try events.collect { events in events.contains { $0.link.name == "after1" } }
        #expect(!overflowed)
        #expect(seen.contains { $0.link.name == "after0" })
    }

    /// What lets attribution forget an owner found by a number the kernel gives out again.
    @Test("a destroyed namespace's nsid is heard deleted; a tenant's own nsids, and its link changes, are not heard at all")
    func nsidDeletionHeard() throws {
        let host = try NetworkNamespace()
        let container = try NetworkNamespace()
        let inner = try NetworkNamespace()
        try host.ip("link", "add", "h0", "type", "veth", "peer", "name", "c0", "netns", container.name)
        // The container numbers a namespace of its own, then lets it die: its RTM_DELNSID is
        // about the container's numbers, not the host's.
        try container.ip("link", "add", "i0", "type", "veth", "peer", "name", "j0", "netns", inner.name)
        let (feed, nsid) = try host.inside { () throws -> (LinkFeed, Int32?) in
            let links = try NetlinkSocket().dumpLinks()
            let feed = try LinkFeed()
            try feed.listenToPeers()
            return (feed, links.first { $0.name == "h0" }?.peerNamespaceID)
        }
        let number = try #require(nsid)
        try container.ip("link", "set", "c0", "alias", "churned")
        inner.delete()
        try container.ip("link", "add", "mark0", "type", "veth", "peer", "name", "mark1")
        container.delete()
        let seen = try feed.collect(seconds: 30) { $0.contains(.namespaceIDDeleted(number)) }
        #expect(seen.filter { if case .namespaceIDDeleted = $0 { true } else { false } } == [.namespaceIDDeleted(number)])
        #expect(!seen.contains { if case .peer(_, .newOrChanged) = $0 { true } else { false } }, "\(seen)")
    }

    @Test("no other process can queue a datagram on an event socket: it is connected to the kernel")
    func forgedDatagramsRefused() throws {
        let namespace = try NetworkNamespace()
        let events = try namespace.inside { try LinkEventSocket() }
        // A sockaddr_nl: family, padding, port id, groups (Glibc's module has no netlink.h).
        var address = [UInt8](repeating: 0, count: 12)
        var length = socklen_t(address.count)
        let named = address.withUnsafeMutableBytes {
            getsockname(events.fileDescriptor, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
        }
        #expect(named == 0 && address[0] == UInt8(AF_NETLINK) && address[4..<8] != [0, 0, 0, 0])
        let forger = try namespace.inside { socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        #expect(forger >= 0)
        defer { close(forger) }
        // An RTM_DELLINK header and an empty ifinfomsg, as a forger would send to make the
        // daemon believe a link was deleted, or fill its queue.
        var forged = [UInt8](repeating: 0, count: 32)
        forged[0] = 32
        forged[4] = 17
        let sent = forged.withUnsafeBytes { bytes in
            address.withUnsafeBytes {
                sendto(forger, bytes.baseAddress, bytes.count, 0, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(12))
            }
        }
        let failure = errno
        #expect(sent == -1 && failure == ECONNREFUSED, "sendto returned \(sent), errno \(failure)")
        #expect(try events.readEvents().messages == 0)
    }

    /// Docker and LXC create both ends of a veth here and move one into the container: the
    /// kernel says nothing about the end that stays, whose peer is now elsewhere.
    @Test("a veth end moved to another namespace: the feed reads the end that stayed afresh, before the move's deletion")
    func endMovedAway() throws {
        let host = try NetworkNamespace()
        let container = try NetworkNamespace()
        try host.ip("link", "add", "stay0", "type", "veth", "peer", "name", "away0")
        let feed = try host.inside { try LinkFeed() }
        try host.ip("link", "set", "away0", "netns", container.name)
        var seen: [LinkObservation] = []
        let deadline = monotonicMilliseconds() + 10_000
        while !seen.contains(where: { if case .event(.deleted(let link)) = $0 { link.name == "away0" } else { false } }),
              monotonicMilliseconds() < deadline {
            var poller = pollfd(fd: feed.events.fileDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, 1000)
            seen += try feed.readEvents()
        }
        let deletion = try #require(seen.firstIndex { if case .event(.deleted(let link)) = $0 { link.name == "away0" } else { false } }, "\(seen)")
        let fresh = try #require(seen.firstIndex { if case .event(.newOrChanged(let link)) = $0 { link.name == "stay0" && link.peerNamespaceID != nil } else { false } }, "\(seen)")
        #expect(fresh < deletion, "the end that stayed comes first: \(seen)")
    }
}
