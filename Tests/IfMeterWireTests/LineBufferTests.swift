import IfMeterTestSupport
import IfMeterWire
import Testing

/// The line splitter against the byte-by-byte rule it implements, over random streams cut into
/// random chunks: complete lines in order, `\r\n` accepted, an overlong line reported once and
/// dropped up to its newline.
@Suite("LineBuffer", .ownThread, .timeLimit(.minutes(3)))
struct LineBufferTests {
    /// The rule, a byte at a time.
    struct Model {
        let maximumLength: Int
        var pending: [UInt8] = []
        var discarding = false

        mutating func append(_ bytes: [UInt8]) -> [LineBuffer.Item] {
            var items: [LineBuffer.Item] = []
            for byte in bytes {
                if byte == UInt8(ascii: "\n") {
                    if discarding {
                        discarding = false
                    } else {
                        if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
                        if !pending.isEmpty { items.append(.line(pending)) }
                    }
                    pending.removeAll()
                } else if !discarding {
                    pending.append(byte)
                    if pending.count > maximumLength {
                        items.append(.tooLong)
                        pending.removeAll()
                        discarding = true
                    }
                }
            }
            return items
        }
    }

    @Test("splits as the byte-by-byte rule does, however the stream is cut", arguments: 0..<5)
    func againstModel(run: Int) {
        let seed = TestSeed("LineBuffer against the rule, run \(run)")
        var generator = seed.generator
        let alphabet: [UInt8] = [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "\r"), UInt8(ascii: "\n"), UInt8(ascii: "\n")]
        let stream = (0..<20_000).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }
        let maximum = Int.random(in: 1...8, using: &generator)
        var buffer = LineBuffer(maximumLength: maximum)
        var model = Model(maximumLength: maximum)
        var got: [LineBuffer.Item] = []
        var start = 0
        while start < stream.count {
            let end = min(stream.count, start + Int.random(in: 0...40, using: &generator))
            got += buffer.append(stream[start..<end])
            start = end
        }
        #expect(got == model.append(stream), "\(seed)")
        #expect(got.contains(.tooLong) && got.contains { if case .line = $0 { true } else { false } })
    }
}
