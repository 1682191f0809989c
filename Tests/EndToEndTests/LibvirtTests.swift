import Foundation
import IfMeterTestSupport
import Testing

/// What is libvirt's own (docs/NAMESPACES.md): a machine's several NICs, and its state kept in
/// the test's mount namespace. The owner scenario every runtime shares, a tap named by its
/// domain among it, is RuntimeScenarioTests'.
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

    @Test("as the unit runs it: a VM with two NICs is vm:NAME and vm:NAME#2, each its tap turned round; libvirt's state stays the test's")
    func twoNICs() throws {
        try daemon.startAsTheUnit()
        let macs = ["52:54:00:76:00:02", "52:54:00:76:00:03"]
        try libvirt.run("b", macs: macs)
        // The test's libvirtd keeps its state where the daemon, and only it, reads it.
        #expect(FileManager.default.fileExists(atPath: libvirt.statusFile(of: "b")))
        #expect(!FileManager.default.fileExists(atPath: "/run/libvirt/qemu/\(LibvirtHost.name("b")).xml"), "the host's libvirt state was written")
        let taps = try libvirt.taps(of: "b")
        #expect(taps.count == 2, "\(taps)")
        try libvirt.send(to: "b", nic: 0, mac: macs[0], count: 10, size: 700)
        try libvirt.send(to: "b", nic: 1, mac: macs[1], count: 5, size: 300)
        try libvirt.waitForGuest(on: taps[0])
        try libvirt.freeze("b")
        let truth = try taps.map { try libvirt.counters(ofTap: $0) }
        let figures = try daemon.figuresAfterSample()
        for (index, subject) in ["vm:\(LibvirtHost.name("b"))", "vm:\(LibvirtHost.name("b"))#2"].enumerated() {
            let entry = try #require(figures[subject], "\(subject) not listed: \(figures.keys.sorted())")
            #expect((entry["owner"] as? [String: Any])?["kind"] as? String == "libvirt", "\(entry)")
            // From the machine's point of view: rx is what the guest received, the tap's tx.
            #expect(entry.int("rx_bytes") == truth[index].tx && entry.int("tx_bytes") == truth[index].rx, "\(subject): \(entry) vs \(truth[index])")
        }
        #expect(figures.filter { taps.contains($0.key) }.isEmpty, "tap names of their own: \(figures.keys.sorted())")
    }
}
