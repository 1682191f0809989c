import IfMeterCore
import IfMeterTestSupport
@testable import IfMeterWire
import Testing

/// Which interfaces the views show, and in what order: by class group (physical, Wi-Fi and
/// cellular; other; tunnel; virtual; then classes the views do not know), present before
/// absent, and otherwise in the daemon's order.
@Suite("Query selection", .ownThread, .timeLimit(.minutes(1)))
struct QuerySelectionTests {
    struct Entry: SelectableInterface, Equatable {
        var selectionName: String
        var selectionClass: String
        var isUp = true
        var isAbsent = false
        var carriedTraffic = true
    }

    static let daemonOrder: [Entry] = [
        Entry(selectionName: "veth1", selectionClass: "virtual"),
        Entry(selectionName: "wg0", selectionClass: "tunnel", isAbsent: true),
        Entry(selectionName: "lo", selectionClass: "loopback"),
        Entry(selectionName: "eth1", selectionClass: "ethernet", isAbsent: true),
        Entry(selectionName: "ifb0", selectionClass: "virtual", isUp: false, carriedTraffic: false),
        Entry(selectionName: "x0", selectionClass: "someday"),
        Entry(selectionName: "wlan0", selectionClass: "wifi"),
        Entry(selectionName: "tun0", selectionClass: "tunnel"),
        Entry(selectionName: "veth0", selectionClass: "virtual"),
        Entry(selectionName: "eth0", selectionClass: "ethernet"),
        Entry(selectionName: "dummy0", selectionClass: "ignored"),
        Entry(selectionName: "wwan0", selectionClass: "cellular"),
        Entry(selectionName: "bond0", selectionClass: "other"),
    ]

    @Test("shown and all: ranked by group then presence, the daemon's order kept within a rank", arguments: [
        (QuerySelection.shown, ["wlan0", "eth0", "wwan0", "eth1", "bond0", "tun0", "wg0", "veth1", "veth0", "x0"]),
        (QuerySelection.all, ["wlan0", "eth0", "wwan0", "eth1", "bond0", "tun0", "wg0", "veth1", "ifb0", "veth0", "x0"]),
    ])
    func order(selection: QuerySelection, expected: [String]) {
        #expect(selection.pick(Self.daemonOrder).map(\.selectionName) == expected)
    }

    @Test("at thousands of interfaces the order is the same rule: every rank in the daemon's order")
    func many() {
        let classes = ["virtual", "ethernet", "tunnel", "other", "wifi"]
        let entries = (0..<5000).map { index in
            Entry(selectionName: "n\(index)", selectionClass: classes[index % classes.count], isAbsent: index % 7 == 0)
        }
        let picked = QuerySelection.shown.pick(entries)
        #expect(picked.count == entries.count)
        let rank = { (entry: Entry) in QuerySelection.rank(entry) }
        let position = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($1.selectionName, $0) })
        for (a, b) in zip(picked, picked.dropFirst()) {
            let (x, y) = (rank(a), rank(b))
            #expect(x < y || (x == y && position[a.selectionName]! < position[b.selectionName]!), "\(a.selectionName) before \(b.selectionName)")
        }
    }
}
