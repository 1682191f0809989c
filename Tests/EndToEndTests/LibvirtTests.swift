import Foundation
import IfMeterTestSupport
import Testing

/// Traffic per virtual machine on real libvirt and QEMU (docs/NAMESPACES.md): Debian's libvirtd
/// in a test namespace, diskless guests whose firmware sends DHCP requests, datagrams the host
/// sends each NIC, the real ifmeterd metering that namespace as the shipped unit runs it (nobody
/// with its two capabilities), and each VM's figures compared with its taps' kernel counters
/// over its lifetimes.
@Suite("Virtual machines on real libvirt", .enabled(if: LibvirtHost.available, LibvirtHost.skipReason), .serialized, .ownThread,
       .timeLimit(.minutes(10)))
final class LibvirtTests {
    let host: NetworkNamespace
    let daemon: DaemonProcess
    let libvirt: LibvirtHost

    init() throws {
        host = try NetworkNamespace()
        daemon = try DaemonProcess(namespace: host, config: "interval = 3600\n")
        libvirt = try LibvirtHost(in: host)
        daemon.enclosing = libvirt.enter
    }

    deinit {
        _ = try? daemon.stop(SIGKILL)
        libvirt.destroy()
        host.delete()
    }

    @Test("as the unit runs it: a's tap name goes to b, b has two NICs, a runs again; each VM is its taps turned round over its lifetimes, no vnet name keeps a byte")
    func lifetimes() throws {
        try daemon.startAsTheUnit()
        let macA = "52:54:00:76:00:01"
        let macsB = ["52:54:00:76:00:02", "52:54:00:76:00:03"]
        try libvirt.run("a", macs: [macA])
        // The test's libvirtd keeps its state where the daemon, and only it, reads it.
        #expect(FileManager.default.fileExists(atPath: libvirt.statusFile(of: "a")))
        #expect(!FileManager.default.fileExists(atPath: "/run/libvirt/qemu/\(LibvirtHost.name("a")).xml"), "the host's libvirt state was written")
        let tapA1 = try #require(try libvirt.taps(of: "a").first)
        try libvirt.send(to: "a", mac: macA, count: 20, size: 1000)
        try libvirt.waitForGuest(on: tapA1)
        try libvirt.freeze("a")
        let a1 = try libvirt.counters(ofTap: tapA1)
        #expect(a1.tx >= 20 * 1000, "what the host sent a")
        _ = try daemon.figuresAfterSample()
        try libvirt.remove("a")

        // A libvirtd started again names its next tap as the first.
        try libvirt.stopDaemon()
        try libvirt.startDaemon()
        try libvirt.run("b", macs: macsB)
        let tapsB = try libvirt.taps(of: "b")
        #expect(tapsB.count == 2 && tapsB.first == tapA1, "b took over a's tap name: \(tapsB) after \(tapA1)")
        try libvirt.send(to: "b", nic: 0, mac: macsB[0], count: 10, size: 700)
        try libvirt.send(to: "b", nic: 1, mac: macsB[1], count: 5, size: 300)
        try libvirt.waitForGuest(on: tapsB[0])

        try libvirt.run("a", macs: [macA])
        let tapA2 = try #require(try libvirt.taps(of: "a").first)
        try libvirt.send(to: "a", mac: macA, count: 8, size: 500)
        try libvirt.waitForGuest(on: tapA2)
        try libvirt.freeze("a")
        try libvirt.freeze("b")
        let a2 = try libvirt.counters(ofTap: tapA2)
        let b = try tapsB.map { try libvirt.counters(ofTap: $0) }

        let figures = try daemon.figuresAfterSample()
        func counted(_ subject: String) throws -> (rx: UInt64?, tx: UInt64?) {
            let entry = try #require(figures[subject], "\(subject) not listed: \(figures.keys.sorted())")
            let owner = entry["owner"] as? [String: Any]
            #expect(owner?["kind"] as? String == "libvirt" && (owner?["id"] as? String)?.count == 36, "\(entry)")
            #expect((entry["labels"] as? [String])?.contains("host-side-tap") == true, "\(entry)")
            return (entry.int("rx_bytes"), entry.int("tx_bytes"))
        }
        let vmA = try counted("vm:\(LibvirtHost.name("a"))")
        let vmB = try counted("vm:\(LibvirtHost.name("b"))")
        let vmB2 = try counted("vm:\(LibvirtHost.name("b"))#2")
        // From the machine's point of view: rx is what the guest received, the tap's tx.
        #expect(vmA.rx == a1.tx + a2.tx && vmA.tx == a1.rx + a2.rx, "a: \(vmA) vs \(a1) + \(a2)")
        #expect(vmB.rx == b[0].tx && vmB.tx == b[0].rx, "b: \(vmB) vs \(b[0])")
        #expect(vmB2.rx == b[1].tx && vmB2.tx == b[1].rx, "b#2: \(vmB2) vs \(b[1])")
        let taps = figures.filter { $0.key.hasPrefix("vnet") }
        #expect(taps.isEmpty, "tap names of their own: \(taps.mapValues { ($0.int("rx_bytes"), $0.int("tx_bytes")) })")
        let listed = try Command.check([CLIBinary.path, "--socket", daemon.socket, "containers"])
        #expect(listed.split(separator: "\n").contains { $0.hasPrefix("vm:\(LibvirtHost.name("b")) ") && $0.contains(" libvirt ") }, "\(listed)")
    }
}
