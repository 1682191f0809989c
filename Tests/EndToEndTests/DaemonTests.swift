import Foundation
import IfMeterTestSupport
import Testing

/// Field access on decoded JSON.
extension Dictionary where Key == String, Value == Any {
    subscript(path path: String) -> Any? {
        var current: Any? = self
        for key in path.split(separator: ".") {
            current = (current as? [String: Any])?[String(key)]
        }
        return current
    }
    func int(_ path: String) -> UInt64? { (self[path: path] as? NSNumber)?.uint64Value }
    func string(_ path: String) -> String? { self[path: path] as? String }
}

func interface(_ name: String, in reply: [String: Any]) throws -> [String: Any] {
    let list = try #require(reply[path: "result.interfaces"] as? [[String: Any]])
    return try #require(list.first { $0["name"] as? String == name }, "\(name) not listed")
}

/// The real `ifmeterd` in namespaces the tests create, counting traffic the tests generate.
@Suite("ifmeterd end to end", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason), .ownThread, .timeLimit(.minutes(10)))
struct DaemonEndToEndTests {
    @Test("sample, then interfaces: exactly the kernel's bytes for known traffic")
    func knownTraffic() throws {
        let pair = try VethPair(subnet: 82)
        let daemon = try DaemonProcess(namespace: pair.left, config: "interval = 3600\n")
        try daemon.start()
        try pair.sendLeftToRight(count: 200, payload: 500)
        try pair.sendRightToLeft(count: 30, payload: 100)
        let client = try daemon.client()
        let sample = try client.request(#"{"v":1,"id":1,"cmd":"sample"}"#)
        #expect(sample["ok"] as? Bool == true)
        let va = try interface("va", in: try client.request(#"{"v":1,"id":2,"cmd":"interfaces"}"#))
        #expect(va.int("tx_bytes") == 200 * 542 && va.int("tx_packets") == 200)
        #expect(va.int("rx_bytes") == 30 * 142 && va.int("rx_packets") == 30)
        #expect(va.int("tx_bytes") == (try pair.left.sysfsCounter("va", "tx_bytes")))
        #expect(va.string("class") == "virtual" && va.string("class_reason") == "netlink kind veth")
        #expect((va["labels"] as? [String])?.starts(with: ["estimate", "interface-counters", "not-per-app", "includes-overhead"]) == true)
        #expect(try daemon.stop() == 0)
    }

    @Test("a tun deleted between polls is counted in full from its delete message")
    func tunDeletedBetweenPolls() throws {
        let namespace = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: namespace, config: "interval = 3600\n")
        try daemon.start()
        let tun = try namespace.inside { try TunDevice(name: "tund0") }
        try TunTraffic.push(through: tun, in: namespace, written: 10, writtenPayload: 400, read: 6, readPayload: 100)
        tun.close()
        let client = try daemon.client()
        let deadline = Date().addingTimeInterval(60)
        var total: [String: Any] = [:]
        repeat {
            let reply = try client.request(#"{"v":1,"id":1,"cmd":"usage","interface":"tund0","period":"total"}"#)
            total = (reply[path: "result.rows"] as? [[String: Any]])?.first ?? [:]
            if total.int("rx_bytes") == 10 * 428 { break }
            usleep(50_000)
        } while Date() < deadline
        #expect(total.int("rx_bytes") == 10 * 428 && total.int("tx_bytes") == 6 * 128)
        #expect(total.int("rx_packets") == 10 && total.int("tx_packets") == 6)
        let events = try client.request(#"{"v":1,"id":2,"cmd":"events","interface":"tund0"}"#)
        let kinds = (events[path: "result.events"] as? [[String: Any]])?.compactMap { $0["kind"] as? String }
        #expect(kinds == ["appeared", "deleted"])
    }

    @Test("saves that meet another program's lock: 50 clients' status is answered, a query holds the unsaved traffic, once, before and after a later save writes it")
    func statusDuringSave() throws {
        let pair = try VethPair(subnet: 86)
        let daemon = try DaemonProcess(namespace: pair.left,
                                       config: "interval = 3600\nsave_interval = 1\nfold_interval = 0\nmax_clients = 100\nmax_clients_per_uid = 100\n")
        try daemon.start()
        let asker = try daemon.client()
        let clients = try (0..<50).map { _ in try daemon.client() }
        func storeError() throws -> String? {
            try asker.request(#"{"v":1,"id":4,"cmd":"status"}"#).string("result.store.error")
        }
        func total() throws -> UInt64? {
            let reply = try asker.request(#"{"v":1,"id":3,"cmd":"usage","interface":"va","period":"total"}"#)
            return (reply[path: "result.rows"] as? [[String: Any]])?.first?.int("tx_bytes")
        }
        let before = try #require(try total())
        // Saves wait on (then fail at) the write lock another program holds, holding the store's
        // thread: queries queue behind them, status does not.
        let holder = try DatabaseHolder(path: daemon.stateDirectory + "/ifmeter.db", writerOnly: true)
        defer { holder.release() }
        try pair.sendLeftToRight(count: 20, payload: 500)
        #expect(try asker.request(#"{"v":1,"id":0,"cmd":"sample"}"#)["ok"] as? Bool == true)
        try asker.send(#"{"v":1,"id":1,"cmd":"query","interfaces":["va"],"usage":[{"period":"total"}]}"# + "\n")
        for client in clients { try client.send(#"{"v":1,"id":2,"cmd":"status"}"# + "\n") }
        for client in clients {
            let status = try SocketClient.decode(try #require(try client.readLine()))
            #expect(status[path: "result.ready"] as? Bool == true)
        }
        let answer = try SocketClient.decode(try #require(try asker.readLine()))
        let usage = answer[path: "result.usage"] as? [[String: Any]]
        #expect((usage?.first?["rows"] as? [[String: Any]])?.first?.int("tx_bytes") == before + 20 * 542,
                "the traffic no save could write is in the answer: \(answer)")
        let error = try eventually("a save failing on the lock") { try storeError() }
        #expect(error.contains("locked") || error.contains("busy"), "\(error)")
        #expect(try total() == before + 20 * 542, "while saves fail")
        holder.release()
        // The failed saves' traffic is written by a later one, and counted once.
        _ = try eventually("a save after the lock is gone") { try storeError() == nil ? true : nil }
        #expect(try total() == before + 20 * 542, "after a later save wrote it")
        #expect(try daemon.stop() == 0)
    }

    @Test("SIGTERM, traffic while stopped, restart: nothing lost; the estimate log adds up")
    func restartLosesNothing() throws {
        let pair = try VethPair(subnet: 83)
        let daemon = try DaemonProcess(namespace: pair.left, config: "interval = 3600\n")
        try daemon.start()
        try pair.sendLeftToRight(count: 50, payload: 1000)
        #expect(try daemon.stop() == 0)
        try pair.sendLeftToRight(count: 70, payload: 300)   // while nobody is counting
        try daemon.start()
        let client = try daemon.client()
        _ = try client.request(#"{"v":1,"id":1,"cmd":"sample"}"#)
        let total = try client.request(#"{"v":1,"id":2,"cmd":"usage","interface":"va","period":"total"}"#)
        let row = try #require((total[path: "result.rows"] as? [[String: Any]])?.first)
        let expected = UInt64(50 * 1042 + 70 * 342)
        #expect(row.int("tx_bytes") == expected && row.int("tx_packets") == 120)
        #expect((row["labels"] as? [String])?.contains("gap-in-period") == true)
        #expect(try daemon.stop() == 0)

        let estimates = try daemon.logRecords().filter { $0["type"] as? String == "estimate" && $0["interface"] as? String == "va" }
        #expect(estimates.compactMap { $0.int("tx_bytes") }.reduce(0, +) == expected)
        #expect(estimates.compactMap { $0.int("tx_packets") }.reduce(0, +) == 120)
        #expect(try daemon.logRecords().contains { $0["type"] as? String == "event" && $0["kind"] as? String == "gap" })
    }

    @Test("usage answers with what was counted since the last save, and no question saves")
    func usageSavesNothing() throws {
        let pair = try VethPair(subnet: 88)
        let daemon = try DaemonProcess(namespace: pair.left, config: "interval = 3600\nsave_interval = 3600\n")
        try daemon.start()
        let client = try daemon.client()
        func lastSave() throws -> Double? {
            try client.request(#"{"v":1,"id":1,"cmd":"status"}"#)[path: "result.store.last_save_at"] as? Double
        }
        let usage = #"{"v":1,"id":2,"cmd":"usage","interface":"va","period":"total"}"#
        // The first save is handed to the store's thread as the daemon becomes ready.
        let first = try eventually("the first save") { try lastSave() }
        let before = (try client.request(usage)[path: "result.rows"] as? [[String: Any]])?.first?.int("tx_bytes") ?? 0
        try pair.sendLeftToRight(count: 10, payload: 100)
        _ = try client.request(#"{"v":1,"id":3,"cmd":"sample"}"#)
        let total = (try client.request(usage)[path: "result.rows"] as? [[String: Any]])?.first
        #expect(total?.int("tx_bytes") == before + 10 * 142)
        #expect(try lastSave() == first, "the answer came from memory: no save")
    }
}
