import Foundation

/// A container's `eth0` as its own namespace shows it, entered with `nsenter` (`--net=PATH` or
/// `-t PID -n`; `nsenter -n` does not remount /sys, so it is read with `ip`, not sysfs): its
/// counters, the host side of its veth, and the freeze that makes both final.
public struct ContainerEnd {
    /// How `nsenter` enters the container's network namespace.
    public let enter: [String]
    /// The namespace its veth's host side is in.
    public let host: NetworkNamespace

    public init(enter: [String], host: NetworkNamespace) {
        self.enter = enter
        self.host = host
    }

    /// `eth0`'s own counters: the container's traffic from its point of view.
    public func counters() throws -> (rx: UInt64, tx: UInt64) {
        let link = try eth0()
        let stats = link["stats64"] as? [String: Any]
        guard let rx = (stats?["rx"] as? [String: Any])?["bytes"] as? NSNumber,
              let tx = (stats?["tx"] as? [String: Any])?["bytes"] as? NSNumber else {
            throw CommandFailed(command: enter + ["ip", "-s", "-j", "link", "show", "eth0"], result: CommandResult(status: 1, stdout: "\(link)", stderr: "no counters"))
        }
        return (rx.uint64Value, tx.uint64Value)
    }

    /// The host side of the container's veth, by its peer index (`eth0@ifN`).
    public func hostSide() throws -> String {
        guard let peer = (try eth0()["link_index"] as? NSNumber)?.intValue else {
            throw CommandFailed(command: enter + ["ip", "-j", "link", "show", "eth0"], result: CommandResult(status: 1, stdout: "", stderr: "no peer index"))
        }
        let hostLinks = try JSONSerialization.jsonObject(with: Data(try host.ip("-j", "link", "show").utf8)) as? [[String: Any]] ?? []
        guard let name = hostLinks.first(where: { ($0["ifindex"] as? NSNumber)?.intValue == peer })?["ifname"] as? String else {
            throw CommandFailed(command: ["ip", "-j", "link", "show"], result: CommandResult(status: 1, stdout: "", stderr: "no host link with index \(peer)"))
        }
        return name
    }

    /// Stops every frame between the container and the bridge, both ways (``EgressDrop`` on each
    /// end), so that counters read afterwards are final (the bridge's IGMP reports and stale
    /// neighbours' ARP probes would move them later).
    public func freeze() throws {
        try host.exec(EgressDrop.command(try hostSide()))
        try Command.check(["nsenter"] + enter + EgressDrop.command("eth0"))
    }

    private func eth0() throws -> [String: Any] {
        let text = try Command.check(["nsenter"] + enter + ["ip", "-s", "-j", "link", "show", "eth0"])
        guard let link = (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])?.first else {
            throw CommandFailed(command: enter + ["ip", "-j", "link", "show", "eth0"], result: CommandResult(status: 1, stdout: text, stderr: "no eth0"))
        }
        return link
    }
}

/// A busybox shell script run inside a container: pings `address` until one is answered (for at
/// most about a minute), then `count` pings of `size` bytes, every one answered.
public enum PingScript {
    public static func text(to address: String, count: Int, size: Int) -> String {
        "i=0; until ping -c 1 -W 1 \(address) >/dev/null; do i=$((i+1)); [ $i -ge 200 ] && exit 1; sleep 0.2; done; "
            + "ping -c \(count) -i 0.2 -s \(size) \(address)"
    }
}
