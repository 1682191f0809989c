@testable import IfMeterServer
import Testing
import IfMeterTestSupport

@Suite("OutputBuffer", .ownThread, .timeLimit(.minutes(3)))
struct OutputBufferTests {
    @Test("sends exactly what was queued, in order, however the writes are split")
    func againstArray() {
        var buffer = OutputBuffer()
        var expected: [UInt8] = []
        let seed = TestSeed("OutputBuffer against an array")
        var generator = seed.generator
        var next: UInt8 = 0
        for _ in 0..<2000 {
            if Bool.random(using: &generator) {
                let more = (0..<Int.random(in: 0...300, using: &generator)).map { _ in
                    next &+= 1
                    return next
                }
                buffer.append(more)
                expected += more
            } else {
                let taken = Int.random(in: 0...buffer.count, using: &generator)
                let sent = buffer.withUnsentBytes { Array($0.prefix(taken)) }
                #expect(sent == Array(expected.prefix(taken)), "\(seed)")
                buffer.consume(taken)
                expected.removeFirst(taken)
            }
            #expect(buffer.count == expected.count, "\(seed)")
            #expect(buffer.isEmpty == expected.isEmpty, "\(seed)")
            #expect(buffer.withUnsentBytes { Array($0) } == expected, "\(seed)")
        }
        buffer.removeAll()
        #expect(buffer.isEmpty && buffer.count == 0, "\(seed)")
    }

    @Test("dropping unsent lines keeps the rest of a line partly sent, so what follows starts a line", arguments: [
        (0, "b\n"), (1, "a\nb\n"), (2, "\nb\n"), (3, "b\n"), (4, "bcdefghij\nb\n"), (6, "defghij\nb\n"),
        // 13 and 14 sent: the sent front is dropped from storage, and whether it ended a line is kept.
        (13, "\nb\n"), (14, "b\n"), (17, "\nb\n"), (18, "b\n"),
    ])
    func dropUnsentLines(sentBytes: Int, unsentAfterDrop: String) {
        var buffer = OutputBuffer()
        buffer.append(Array("aa\n".utf8))
        buffer.append(Array("abcdefghij\n".utf8))
        buffer.append(Array("xyz\n".utf8))
        buffer.consume(sentBytes)
        buffer.dropUnsentLines()
        buffer.append(Array("b\n".utf8))
        #expect(String(decoding: buffer.withUnsentBytes { Array($0) }, as: UTF8.self) == unsentAfterDrop)
    }
}
