/// Holding a link's counters still while a test reads them: the kernel keeps sending on its own
/// after a test's traffic (IGMP and MLD reports, router solicitations, ARP probes of a stale
/// neighbour), and a figure compared with counters read a moment earlier would then differ.
public enum EgressDrop {
    /// The `tc` command, to run in the link's namespace, after which `interface` sends nothing:
    /// a `pfifo` qdisc with room for no packet drops each frame before the driver counts it (a
    /// veth counts in its transmit, after the qdisc, and its peer's receive counter is that same
    /// count). Adding a qdisc sends no link event, so a daemon learns nothing from it.
    public static func command(_ interface: String) -> [String] {
        ["tc", "qdisc", "add", "dev", interface, "root", "pfifo", "limit", "0"]
    }
}
