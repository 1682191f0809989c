@testable import IfMeterDaemon
import Testing

@Suite("OutputBuffer")
struct OutputBufferTests {
    @Test("sends exactly what was queued, in order, however the writes are split")
    func againstArray() {
        var buffer = OutputBuffer()
        var expected: [UInt8] = []
        var generator = SystemRandomNumberGenerator()
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
                #expect(sent == Array(expected.prefix(taken)))
                buffer.consume(taken)
                expected.removeFirst(taken)
            }
            #expect(buffer.count == expected.count)
            #expect(buffer.isEmpty == expected.isEmpty)
            #expect(buffer.withUnsentBytes { Array($0) } == expected)
        }
        buffer.removeAll()
        #expect(buffer.isEmpty && buffer.count == 0)
    }
}
