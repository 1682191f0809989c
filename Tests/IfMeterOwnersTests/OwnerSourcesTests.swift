import Foundation
import IfMeterCore
import IfMeterOwners
import IfMeterTestSupport
import Testing

/// The registry of owner sources: each kind once, each source's fuzz seeds in the corpus that
/// `runtime-state` starts from, and each seed one its source names an owner from.
@Suite("Owner sources", .ownThread, .timeLimit(.minutes(1)))
struct OwnerSourcesTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus/runtime-state")

    @Test("each kind is named by one source, and a runtime's state is read before bound names and processes")
    func registry() {
        let kinds = OwnerDirectory.sources.map { $0.kind.rawValue }
        #expect(Set(kinds).count == kinds.count, "\(kinds)")
        let position = { (kind: LinkOwner.Kind) in kinds.firstIndex(of: kind.rawValue) ?? -1 }
        for runtime in [LinkOwner.Kind.podman, .docker, .nspawn] {
            #expect(position(runtime) >= 0 && position(runtime) < position(.netns), "\(runtime) after bound names: \(kinds)")
        }
        #expect(position(.process) > position(.lxc) && position(.process) > position(.netns), "\(kinds)")
    }

    @Test("every source's seeds are in Fuzz/corpus/runtime-state, and name an owner", arguments: OwnerDirectory.sources.indices)
    func seeds(_ index: Int) throws {
        let source: any OwnerSource.Type = OwnerDirectory.sources[index]
        let kind = source.kind.rawValue
        for seed in source.fuzzSeeds {
            let bytes = try Array(Data(contentsOf: Self.corpus.appendingPathComponent(seed)))
            let named = source.names(seed: bytes)
            #expect(named, "\(kind): seed \(seed) names no owner")
            var others: [String] = []
            for (other, type) in OwnerDirectory.sources.enumerated() where other != index && type.names(seed: bytes) {
                others.append(type.kind.rawValue)
            }
            #expect(others.isEmpty, "\(seed) is \(kind)'s, but \(others) read an owner from it too")
        }
    }
}
