import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Podman as a ``ContainerRuntime``: containers on its default bridge, their host side in the
/// test's namespace, traffic sent from inside over TCP. Podman names the host sides `vethN`,
/// the lowest free: the next container takes the name of one removed.
public final class PodmanRuntime: ContainerRuntime {
    public let namespace: NetworkNamespace
    private var labels: [String] = []
    private var port: UInt16 = 5100

    public init(in namespace: NetworkNamespace) { self.namespace = namespace }

    public var kind: String { "podman" }
    public var reusesHostSideNames: Bool { true }
    public func subject(_ label: String) -> String { "container:\(Podman.name(label))" }

    public func run(_ label: String) throws {
        if !labels.contains(label) { labels.append(label) }
        try Podman.run(label, in: namespace)
    }

    public func send(_ label: String, bytes: Int) throws {
        port += 1
        try Podman.send(bytes, from: label, in: namespace, port: port)
    }

    public func freeze(_ label: String) throws { try Podman.freeze(label, in: namespace) }
    public func counters(of label: String) throws -> (rx: UInt64, tx: UInt64) { try Podman.counters(of: label) }

    public func hostSide(of label: String) throws -> String {
        let sandbox = try Podman.podman(["inspect", "--format", "{{.NetworkSettings.SandboxKey}}", Podman.name(label)])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return try ContainerEnd(enter: ["--net=\(sandbox)"], host: namespace).hostSide()
    }

    public func remove(_ label: String) throws {
        Podman.remove(label)
        labels.removeAll { $0 == label }
    }

    public func restart(_ label: String) throws { try Podman.podman(["restart", "-t", "0", Podman.name(label)], in: namespace) }

    public func destroy() {
        // Last made first: podman refuses to remove a container others share a namespace with.
        for label in labels.reversed() { Podman.remove(label) }
        labels = []
    }
}

extension DockerDaemon: ContainerRuntime {
    public var kind: String { "docker" }
    /// Docker names host sides `veth` and 7 random hex digits.
    public var reusesHostSideNames: Bool { false }
    public func subject(_ label: String) -> String { "container:\(Self.name(label))" }
    public func run(_ label: String) throws { try run(label, host: address(of: label)) }

    /// Pings of 1000 bytes to the network's gateway, the host side's bridge.
    public func send(_ label: String, bytes: Int) throws { try ping(from: label, to: 1, count: max(1, bytes / 1000), size: 1000) }

    public func hostSide(of label: String) throws -> String { try end(of: label).hostSide() }
    public func restart(_ label: String) throws { try docker(["restart", "-t", "0", Self.name(label)]) }
    public func destroy() { stop() }
}

extension LXCHost: ContainerRuntime {
    public var kind: String { "lxc" }
    /// LXC names host sides `veth` and 6 random characters.
    public var reusesHostSideNames: Bool { false }
    public func subject(_ label: String) -> String { "container:\(Self.name(label))" }
    public func run(_ label: String) throws { try run(label, host: address(of: label)) }

    /// Pings of 1000 bytes to the bridge.
    public func send(_ label: String, bytes: Int) throws { try ping(from: label, to: 1, count: max(1, bytes / 1000), size: 1000) }

    public func hostSide(of label: String) throws -> String { try end(of: label).hostSide() }

    public func restart(_ label: String) throws {
        try stop(label)
        try start(label)
    }
}

extension LibvirtHost: ContainerRuntime {
    public var kind: String { "libvirt" }
    /// A libvirtd started again names its next tap `vnet0` when no tap is: ``handOverHostSideName(of:to:)``.
    public var reusesHostSideNames: Bool { true }
    public func subject(_ label: String) -> String { "vm:\(Self.name(label))" }
    public func prepare(_ daemon: DaemonProcess) { daemon.enclosing = enter }

    /// One NIC; `b`'s tap is named by its domain (`<target dev='…'/>`), as an admin may name one.
    public func run(_ label: String) throws {
        try run(label, macs: [mac(of: label)], tap: label == "b" ? "ifmt\(getpid() % 100_000)tap" : nil)
    }

    /// Datagrams of 1000 bytes from the host into the guest, and the guest's own network boot
    /// requests out of it, waited for.
    public func send(_ label: String, bytes: Int) throws {
        try send(to: label, mac: mac(of: label), count: max(1, bytes / 1000), size: 1000)
        try waitForGuest(on: try hostSide(of: label))
    }

    /// The tap's counters turned round: what the guest received is what the tap sent.
    public func counters(of label: String) throws -> (rx: UInt64, tx: UInt64) {
        let tap = try counters(ofTap: try hostSide(of: label))
        return (tap.tx, tap.rx)
    }

    public func hostSide(of label: String) throws -> String {
        guard let tap = try taps(of: label).first else {
            throw CommandFailed(command: ["virsh", "domiflist", Self.name(label)], result: CommandResult(status: 1, stdout: "", stderr: "no tap"))
        }
        return tap
    }

    public func handOverHostSideName(of label: String, to next: String) throws {
        try stopDaemon()
        try startDaemon()
    }

    public func restart(_ label: String) throws {
        try remove(label)
        try run(label)
    }
}

extension ContainerdCRI: ContainerRuntime {
    public var kind: String { "kubernetes" }
    /// The bridge plugin names host sides `veth` and 8 random hex digits.
    public var reusesHostSideNames: Bool { false }
    /// `pod:NAMESPACE/NAME`.
    public func subject(_ label: String) -> String { "pod:\(podNamespace(of: label))/\(Self.name(label))" }
    /// A new pod: a new UID, attempt 0.
    public func run(_ label: String) throws { try runPod(label) }

    /// Pings of 1000 bytes from the pod to the bridge.
    public func send(_ label: String, bytes: Int) throws { try ping(from: label, count: max(1, bytes / 1000), size: 1000) }

    public func freeze(_ label: String) throws { try end(of: label).freeze() }
    public func counters(of label: String) throws -> (rx: UInt64, tx: UInt64) { try end(of: label).counters() }
    public func hostSide(of label: String) throws -> String { try end(of: label).hostSide() }
    /// Stopped and removed: the pod is deleted.
    public func remove(_ label: String) throws { try removePod(label) }
    /// StopPodSandbox, then RunPodSandbox of the same pod (its UID) with the next attempt, as the
    /// kubelet makes a pod's sandbox again.
    public func restart(_ label: String) throws { try runAgain(label) }
}
