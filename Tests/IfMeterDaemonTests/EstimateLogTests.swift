import Foundation
@testable import IfMeterDaemon
import IfMeterTestSupport
import Testing

@Suite("Estimate log", .ownThread, .timeLimit(.minutes(3)))
struct EstimateLogTests {
    func directory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ifmeter-log-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test("rotates by size, keeps N older files, loses no record that fits")
    func rotation() throws {
        let base = try directory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let path = base + "/estimates.jsonl"
        let log = EstimateLog(path: path, maxSize: 4096, keep: 2)
        // 100 records of 100 bytes: 40 fit a file, so the log rotates twice.
        for index in 0..<100 {
            let record = "{\"n\":\(String(format: "%05d", index)),\"pad\":\"\(String(repeating: "x", count: 79))\"}\n"
            #expect(record.utf8.count == 100)
            log.append(Array(record.utf8))
        }
        let current = lines(path), first = lines(path + ".1"), second = lines(path + ".2")
        #expect(!FileManager.default.fileExists(atPath: path + ".3"))
        #expect(current.count == 20 && first.count == 40 && second.count == 40)
        #expect(second.first?.hasPrefix("{\"n\":00000") == true && current.last?.hasPrefix("{\"n\":00099") == true)
        for file in [path, path + ".1", path + ".2"] {
            let size = (try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
            #expect(size <= 4096)
        }
    }

    @Test("reopen follows an external rotation (SIGHUP)")
    func reopen() throws {
        let base = try directory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let path = base + "/estimates.jsonl"
        let log = EstimateLog(path: path, maxSize: 1 << 20, keep: 5)
        log.append(Array("{\"a\":1}\n".utf8))
        try FileManager.default.moveItem(atPath: path, toPath: path + ".old")
        log.append(Array("{\"a\":2}\n".utf8))   // still into the moved file
        log.reopen()
        log.append(Array("{\"a\":3}\n".utf8))
        #expect(lines(path + ".old") == ["{\"a\":1}", "{\"a\":2}"])
        #expect(lines(path) == ["{\"a\":3}"])
    }
}
