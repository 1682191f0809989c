#if canImport(Glibc)
import Glibc
#endif

/// A seeded generator (SplitMix64), so every randomized test is reproducible from its seed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    public var state: UInt64
    public init(state: UInt64) { self.state = state }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The seed of a randomized test: `IFMETER_TEST_SEED` when set (to replay a failure), a fresh
/// one otherwise. Printed either way, and carried in the test's failure messages.
public struct TestSeed: CustomStringConvertible, Sendable {
    public let value: UInt64

    public init(_ test: String) {
        if let text = getenv("IFMETER_TEST_SEED").map({ String(cString: $0) }), let value = UInt64(text) {
            self.value = value
        } else {
            var system = SystemRandomNumberGenerator()
            value = system.next()
        }
        print("\(test): seed \(value) (IFMETER_TEST_SEED=\(value) replays it)")
    }

    public var generator: SplitMix64 { SplitMix64(state: value) }
    public var description: String { "seed \(value)" }
}
