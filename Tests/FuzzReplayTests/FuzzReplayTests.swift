import Foundation
import IfMeterFuzzTargets
import IfMeterTestSupport
import Testing

/// Every committed fuzz input — seeds and the crashers libFuzzer found, fixed since — run
/// through its target as an ordinary test: a crasher that comes back fails here, without
/// libFuzzer (docs/FUZZING.md).
// Serialized: the request targets share one store and its handlers, as libFuzzer's one input
// at a time does; two replayed at once began a transaction within another's.
@Suite("Fuzz corpora replayed", .serialized, .ownThread, .timeLimit(.minutes(3)))
struct FuzzReplayTests {
    static let corpora = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus")

    @Test("every target has a corpus, and every input in it runs clean", arguments: FuzzTargets.all.keys.sorted())
    func replay(_ target: String) throws {
        let directory = Self.corpora.appendingPathComponent(target)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(!names.isEmpty, "Fuzz/corpus/\(target) is empty")
        let body = try #require(FuzzTargets.all[target])
        for name in names {
            body(Array(try Data(contentsOf: directory.appendingPathComponent(name))))
        }
    }
}
