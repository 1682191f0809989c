import Foundation
import IfMeterCore
import IfMeterHistory
import IfMeterStore
import IfMeterTestSupport
import Testing

/// The save journal's file (docs/CONFIG.md, `fold_interval`): what it gives back after the
/// database's last save, and what it leaves out of a file a crash cut or a hand changed.
@Suite("The save journal's file", .ownThread, .timeLimit(.minutes(1)))
struct SaveJournalFileTests {
    static let boot = "0b5ab2a0-0000-4000-8000-000000000001"

    static func record(_ seed: UInt64) -> JournalRecord {
        let instant = MeterInstant(wall: 1_796_558_400 + Double(seed), sinceBootNanoseconds: 10_000_000_000 + seed)
        let epoch = Epoch(bootID: boot, ifindex: 2, generation: 1, since: 1_796_000_000.5)
        return JournalRecord(
            bootID: boot,
            deltas: [MeterDelta(name: "eth0", ifindex: 2, epoch: epoch, traffic: Traffic(rxBytes: seed, txBytes: 1 << 40, rxPackets: 3, txPackets: 0),
                                at: instant.wall, flags: [.gap]),
                     MeterDelta(name: "network:0b5ab2a0-0000-4000-8000-00000000000\(seed % 10)", namespace: NamespaceID(rawValue: 7), ifindex: -1,
                                epoch: epoch, traffic: Traffic(rxBytes: .max, txBytes: 0, rxPackets: 0, txPackets: .max), at: instant.wall)],
            progress: [JournalRecord.Progress(namespace: .own, ifindex: 2, generation: 1,
                                              last: Traffic(rxBytes: 10 + seed, txBytes: 20, rxPackets: 1, txPackets: 2), lastInstant: instant)],
            lastInstant: instant, clockAnchor: seed.isMultiple(of: 2) ? instant : nil)
    }

    @Test("records read back as written, only after the save they follow")
    func roundTrip() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/ifmeter.db.journal"
        let (journal, first) = try SaveJournal.open(path: path, sequence: 7)
        #expect(first.records.isEmpty && first.note == nil)
        try journal.reset(sequence: 7)
        try journal.append(Self.record(1))
        try journal.append(Self.record(2))
        let again = try SaveJournal.open(path: path, sequence: 7).1
        #expect(again.records == [Self.record(1), Self.record(2)])
        #expect(again.note == nil)
        let later = try SaveJournal.open(path: path, sequence: 8).1
        #expect(later.records.isEmpty && later.note == nil, "the database moved on: its records are in it")
        try journal.reset(sequence: 8)
        #expect(try SaveJournal.open(path: path, sequence: 8).1.records.isEmpty)
    }

    @Test("a record cut short or changed ends the reading, with a note; what came before counts")
    func damaged() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/j"
        let (journal, _) = try SaveJournal.open(path: path, sequence: 3)
        try journal.reset(sequence: 3)
        try journal.append(Self.record(1))
        try journal.append(Self.record(2))
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let cut = SaveJournal.parse(Array(bytes.dropLast(3)), following: 3)
        #expect(cut.records == [Self.record(1)])
        #expect(cut.note?.contains("cut short") == true, "\(cut.note ?? "")")
        var flipped = bytes
        flipped[flipped.count - 5] ^= 0x40
        let changed = SaveJournal.parse(flipped, following: 3)
        #expect(changed.records == [Self.record(1)])
        #expect(changed.note?.contains("checksum") == true)
        let other = SaveJournal.parse(Array("hello, world, not a journal".utf8), following: 3)
        #expect(other.records.isEmpty && other.note?.contains("not a save journal") == true)
    }

    @Test("a record's bytes that lie (counts past the end, a long name, not UTF-8, bad markers) are refused, never trusted")
    func hostileRecords() {
        let good = Self.record(4).encoded()
        for end in 0..<good.count {
            #expect(throws: JournalRecord.DecodingError.self) { try JournalRecord(decoding: good[0..<end]) }
        }
        #expect(throws: JournalRecord.DecodingError.self) { try JournalRecord(decoding: (good + [0])[...]) }
        var huge = [UInt8(1), 0, 0, 0]  // version, empty boot id, no instants
        huge += [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]  // four billion deltas in a few bytes
        #expect(throws: JournalRecord.DecodingError.self) { try JournalRecord(decoding: huge[...]) }
        let notUTF8: [UInt8] = [1, 2, 0xC3, 0x28, 0, 0, 0, 0]
        #expect(throws: JournalRecord.DecodingError.self) { try JournalRecord(decoding: notUTF8[...]) }
        let longName: [UInt8] = [1, 0x81, 0x08] + [UInt8](repeating: 0x61, count: 1025)
        #expect(throws: JournalRecord.DecodingError.self) { try JournalRecord(decoding: longName[...]) }
        let badMarker: [UInt8] = [1, 0, 2, 0, 0, 0]
        #expect(throws: JournalRecord.DecodingError.self) { try JournalRecord(decoding: badMarker[...]) }
    }

    @Test("the fuzz corpus's seeds are a record and a journal with one record and a cut one")
    func seeds() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus/save-journal")
        let record = [UInt8](try Data(contentsOf: corpus.appendingPathComponent("record")))
        #expect(try JournalRecord(decoding: record[...]).deltas.map(\.name) == ["eth0"])
        let journal = SaveJournal.parse([UInt8](try Data(contentsOf: corpus.appendingPathComponent("journal-cut"))), following: 7)
        #expect(journal.records.count == 1 && journal.note?.contains("cut short") == true)
    }

    @Test("a symbolic link where the journal goes is refused, not followed")
    func symbolicLink() throws {
        let directory = try TemporaryDirectory()
        let target = directory.path + "/elsewhere"
        #expect(FileManager.default.createFile(atPath: target, contents: Data("keep".utf8)))
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/j", withDestinationPath: target)
        #expect(throws: StoreError.self) { _ = try SaveJournal.open(path: directory.path + "/j", sequence: 1) }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep")
    }
}
