import Foundation
import IfMeterCore
@testable import IfMeterHistory
@testable import IfMeterStore
import IfMeterTestSupport
import Testing

@Suite("Store under SIGKILL", .ownThread, .timeLimit(.minutes(3)))
struct StoreCrashTests {
    /// Reads the writer's "saved N" lines until `count` have arrived; returns the last N.
    func awaitSaves(_ pipe: Pipe, count: Int) -> Int {
        var seen: [Int] = []
        while seen.count < count {
            let line = pipe.fileHandleForReading.firstLine()
            if line.isEmpty { break }  // the writer exited
            if line.hasPrefix("saved "), let step = Int(line.dropFirst(6)) { seen.append(step) }
        }
        return seen.last ?? 0
    }

    @Test("killed at random points 25 times: the database always opens, passes integrity_check, and totals match the saved meter state")
    func killedMidWrite() throws {
        let directory = try TemporaryDirectory()
        let writer = Command.buildProductsDirectory + "/store-crash-writer"
        let seed = TestSeed("store killed mid-write")
        var random = seed.generator
        var lastAcknowledged = 0
        for round in 0..<25 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: writer)
            process.arguments = [directory.database, "24"]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let acknowledged = awaitSaves(output, count: Int.random(in: 1...40, using: &random))
            // Land the kill anywhere in the next save: mid-transaction, mid-commit, or between.
            usleep(UInt32.random(in: 0...4000, using: &random))
            kill(process.processIdentifier, SIGKILL)
            try process.awaitExit("store-crash-writer after SIGKILL")
            #expect(process.terminationReason == .uncaughtSignal, "\(seed), round \(round): the writer died on its own")
            #expect(acknowledged > lastAcknowledged, "\(seed), round \(round): the writer made progress")
            lastAcknowledged = acknowledged

            let store = try Store(path: directory.database)
            #expect(try store.connection.scalarText("PRAGMA integrity_check", "check") == "ok")
            let state = try #require(try store.loader.meter().state)
            #expect(state.interfaces.count == 24)
            for interface in state.interfaces {
                let total = try #require(try store.queries.total(interface.name))
                let counted = interface.last.combined(with: Traffic(rxBytes: 1_000_000, txBytes: 1_000_000)) { $0 - $1 }
                #expect(total.tally.traffic == counted, "\(seed), round \(round): \(interface.name) totals and meter state disagree")
            }
            // Every save the writer reported done survived the kill.
            let savedStep = Int(state.interfaces.first { $0.name == "if0" }!.last.rxBytes - 1_000_000) / 1000
            #expect(savedStep >= acknowledged, "\(seed), round \(round): save \(acknowledged) was reported but lost")
        }
    }
}
