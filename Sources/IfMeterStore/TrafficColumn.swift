import IfMeterCore
import IfMeterJSON

/// The events table's `previous`, `current` and `delta` columns: raw counters as
/// `{"rx_bytes":…,"rx_packets":…,"tx_bytes":…,"tx_packets":…}`. This is the database's format,
/// kept as every release wrote it whatever the wire does; a value that does not read (a file
/// edited by hand) is left out of the event, not trusted.
enum TrafficColumn {
    static func bytes(_ traffic: Traffic) -> [UInt8] {
        var w = JSONWriter(capacity: 96)
        w.beginObject()
        w.key("rx_bytes"); w.number(traffic.rxBytes)
        w.key("rx_packets"); w.number(traffic.rxPackets)
        w.key("tx_bytes"); w.number(traffic.txBytes)
        w.key("tx_packets"); w.number(traffic.txPackets)
        w.endObject()
        return w.bytes
    }

    static func traffic(_ text: String) -> Traffic? {
        var reader = JSONReader(Array(text.utf8))
        var traffic = Traffic.zero
        var seen = 0
        do {
            try reader.readObject { r, key in
                switch key {
                case "rx_bytes": traffic.rxBytes = try r.readUInt64()
                case "rx_packets": traffic.rxPackets = try r.readUInt64()
                case "tx_bytes": traffic.txBytes = try r.readUInt64()
                case "tx_packets": traffic.txPackets = try r.readUInt64()
                default: return try r.skipValue()
                }
                seen += 1
            }
            guard seen == 4, try reader.isAtEnd() else { return nil }
        } catch {
            return nil
        }
        return traffic
    }
}
