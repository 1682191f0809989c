import FoundationEssentials
import IfMeterHTTP
import IfMeterPlatform
import IfMeterServer
import IfMeterCore
import IfMeterJSON
import IfMeterKernel
import IfMeterWire

/// `ifmeterd --probe`: every interface the daemon sees right now, classified.
public struct ProbeReport: Sendable {
    /// The kernel counter epoch the raw figures belong to (docs/METER.md: an epoch).
    public struct EpochKey: Sendable {
        var bootID: String
        var ifindex: Int32
    }

    public struct Interface: Sendable {
        var name: String
        var ifindex: Int32
        var `class`: String
        var classReason: String
        var kind: String
        var arpType: UInt16
        var operstate: String
        var mtu: UInt32
        var address: String
        var master: Int32?
        var parent: Int32?
        var rxBytes: UInt64?
        var txBytes: UInt64?
        var rxPackets: UInt64?
        var txPackets: UInt64?
        var rxErrors: UInt64?
        var txErrors: UInt64?
        var rxDropped: UInt64?
        var txDropped: UInt64?
        var speedBitsPerSecond: UInt64?
        var epoch: EpochKey?
        var labels: [EstimateLabel]

    }

    public var version = IfMeterVersion.string
    public var bootID: String?
    public var source: String
    public var warnings: [String]
    public var interfaces: [Interface]
    /// Whether applications are counted (docs/APPS.md), and what says so or why not.
    public var apps = AppsHealth(counting: false, detail: "not probed")
    /// Whether interfaces' traffic is split by scope (docs/SCOPES.md): the links covered.
    public var scopes = AppsHealth(counting: false, detail: "not probed")

    public init(listing: LinkListing, classifier: Classifier, sysfs: SysfsReader, bootID: String?) {
        self.bootID = bootID
        source = listing.source.rawValue
        warnings = listing.warnings
        interfaces = listing.links.sorted { $0.ifindex < $1.ifindex }.map { link in
            let facts = sysfs.facts(for: link.name)
            let classification = classifier.classify(link, facts: facts)
            var labels = EstimateLabel.labels(
                tunnel: classification.isTunnel, resets: 0, gaps: 0, implausibleDropped: 0)
            labels.append(.kernelCountersSinceCreation)
            if link.countersAre32Bit { labels.append(.counters32Bit) }
            let counters = link.counters
            return Interface(
                name: link.name, ifindex: link.ifindex, class: classification.label,
                classReason: classification.reason, kind: link.kind, arpType: link.arpType,
                operstate: link.operState.rawValue, mtu: link.mtu, address: link.address,
                master: link.master, parent: link.parent,
                rxBytes: counters?.rxBytes, txBytes: counters?.txBytes,
                rxPackets: counters?.rxPackets, txPackets: counters?.txPackets,
                rxErrors: counters?.rxErrors, txErrors: counters?.txErrors,
                rxDropped: counters?.rxDropped, txDropped: counters?.txDropped,
                speedBitsPerSecond: facts.speedBitsPerSecond,
                epoch: bootID.map { EpochKey(bootID: $0, ifindex: link.ifindex) },
                labels: labels)
        }
    }

    /// Whether the application counter's maps in `pinDirectory` can be read by this process.
    public static func apps(pinDirectory: String?) -> AppsHealth {
        guard let pinDirectory else { return AppsHealth(counting: false, detail: "apps = no") }
        do {
            let maps = try AppCounterMaps(pinDirectory: pinDirectory)
            let dump = try maps.read()
            return AppsHealth(counting: true, detail: "map \(dump.mapID) pinned in \(pinDirectory): "
                + "\(dump.entries.count) of \(dump.maxEntries) entries")
        } catch {
            return AppsHealth(counting: false, detail: "\(error) (ifmeterd --attach-apps attaches it, as root)")
        }
    }

    /// Whether the scope counters in `pinDirectory` can be read, and which of the interfaces
    /// they cover.
    public func scopes(pinDirectory: String?) -> AppsHealth {
        guard let pinDirectory else { return AppsHealth(counting: false, detail: "apps = no") }
        do {
            let counts = try ScopeCounterMaps(pinDirectory: pinDirectory).read()
            let covered = interfaces.filter { counts.covers($0.ifindex) }.map(\.name)
            return AppsHealth(counting: true, detail: "map \(counts.mapID) pinned in \(pinDirectory): "
                + (covered.isEmpty ? "no interface covered yet" : "covering " + covered.joined(separator: ", ")))
        } catch {
            return AppsHealth(counting: false, detail: "\(error)")
        }
    }

    public func json() -> String {
        String(decoding: jsonBytes, as: UTF8.self)
    }

    /// An aligned table, one interface a line, ending with the estimate footnote.
    public func table() -> String {
        let header = ["NAME", "IFINDEX", "CLASS", "KIND", "STATE", "RX_BYTES", "TX_BYTES",
                      "RX_PACKETS", "TX_PACKETS", "CLASS_REASON"]
        let rightAligned: Set<Int> = [1, 5, 6, 7, 8]
        let rows = interfaces.map { interface -> [String] in
            let number: (UInt64?) -> String = { $0.map(String.init) ?? "-" }
            return [interface.name, String(interface.ifindex), interface.class,
                    interface.kind.isEmpty ? "-" : interface.kind, interface.operstate,
                    number(interface.rxBytes), number(interface.txBytes),
                    number(interface.rxPackets), number(interface.txPackets),
                    interface.classReason]
        }
        let widths = header.indices.map { column in
            ([header] + rows).map { $0[column].count }.max() ?? 0
        }
        let lines = ([header] + rows).map { cells in
            cells.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                if column == cells.count - 1 { return cell }
                return rightAligned.contains(column) ? padding + cell : cell + padding
            }.joined(separator: "  ")
        }
        let source = "source: \(source) (kernel counters since each interface was created)"
        let applications = "applications: " + (apps.counting ? "counted, " : "not counted: ") + apps.detail
        let split = "scopes: " + (scopes.counting ? "split, " : "not split: ") + scopes.detail
        return (lines + [source, applications, split, EstimateLabel.footnote]).joined(separator: "\n")
    }
}

extension ProbeReport: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("apps"); apps.write(to: &w)
        if let bootID { w.key("boot_id"); w.string(bootID) }
        w.key("interfaces")
        w.beginArray()
        for interface in interfaces { interface.write(to: &w) }
        w.endArray()
        w.key("scopes"); scopes.write(to: &w)
        w.key("source"); w.string(source)
        w.key("version"); w.string(version)
        w.key("warnings"); w.strings(warnings)
        w.endObject()
    }
}

extension ProbeReport.Interface: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("address"); w.string(address)
        w.key("arp_type"); w.number(UInt64(arpType))
        w.key("class"); w.string(self.class)
        w.key("class_reason"); w.string(classReason)
        if let epoch {
            w.key("epoch")
            w.beginObject()
            w.key("boot_id"); w.string(epoch.bootID)
            w.key("ifindex"); w.number(epoch.ifindex)
            w.endObject()
        }
        w.key("ifindex"); w.number(ifindex)
        w.key("kind"); w.string(kind)
        w.key("labels"); w.strings(labels.map(\.rawValue))
        if let master { w.key("master"); w.number(master) }
        w.key("mtu"); w.number(UInt64(mtu))
        w.key("name"); w.string(name)
        w.key("operstate"); w.string(operstate)
        if let parent { w.key("parent"); w.number(parent) }
        for (key, value) in [("rx_bytes", rxBytes), ("rx_dropped", rxDropped), ("rx_errors", rxErrors),
                             ("rx_packets", rxPackets)] as [(StaticString, UInt64?)] {
            if let value { w.key(key); w.number(value) }
        }
        if let speedBitsPerSecond { w.key("speed_bps"); w.number(speedBitsPerSecond) }
        for (key, value) in [("tx_bytes", txBytes), ("tx_dropped", txDropped), ("tx_errors", txErrors),
                             ("tx_packets", txPackets)] as [(StaticString, UInt64?)] {
            if let value { w.key(key); w.number(value) }
        }
        w.endObject()
    }
}
