import Foundation

/// A real container or virtual machine runtime with its host side in a test's namespace, as the
/// shared owner scenario (RuntimeScenarioTests) drives it: each runtime's harness conforms, and
/// the scenario is written once. Owners are called by labels (`a`, `b`), which the runtime turns
/// into names that carry the test process's pid.
public protocol ContainerRuntime: AnyObject {
    /// The owner kind ifmeter names its owners by: `podman`, `libvirt`.
    var kind: String { get }
    /// The namespace the owners' host sides are in: the daemon under test meters it.
    var namespace: NetworkNamespace { get }
    /// The subject of owner `label`'s first NIC: `container:ifmt-<pid>-a`, `vm:ifmt-<pid>-a`.
    func subject(_ label: String) -> String
    /// True when the runtime gives a new owner the host-side name of one gone (Podman's `vethN`,
    /// libvirt's `vnetN` from a libvirtd started again, LXC's configured pair), so that the
    /// scenario can check that name counts for the new owner.
    var reusesHostSideNames: Bool { get }

    /// Makes the daemon see what the runtime keeps where the daemon reads it (libvirt's status
    /// files are in a mount namespace of the test's).
    func prepare(_ daemon: DaemonProcess)
    /// Starts owner `label`, a new one each time.
    func run(_ label: String) throws
    /// Moves a known amount of traffic through owner `label`'s NIC, both ways where the runtime
    /// can, and returns once the kernel counted it.
    func send(_ label: String, bytes: Int) throws
    /// Stops every frame into and out of the owner's NIC, so that its counters read afterwards
    /// are final.
    func freeze(_ label: String) throws
    /// The owner's NIC's counters from its own point of view (what it received, what it sent).
    func counters(of label: String) throws -> (rx: UInt64, tx: UInt64)
    /// The host-side link of owner `label`'s NIC, as the kernel names it now.
    func hostSide(of label: String) throws -> String
    /// Prepares the next owner to take over the host-side name of the one just removed.
    func handOverHostSideName(of label: String, to next: String) throws
    /// Removes owner `label` at once: its NIC goes.
    func remove(_ label: String) throws
    /// Stops owner `label` and starts it again: a new NIC, the same owner.
    func restart(_ label: String) throws
    /// Removes everything the runtime made; for a test's deinit.
    func destroy()
}

extension ContainerRuntime {
    public func prepare(_ daemon: DaemonProcess) {}
    public func handOverHostSideName(of label: String, to next: String) throws {}
}
