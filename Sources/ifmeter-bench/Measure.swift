#if canImport(Glibc)
import Glibc
#endif

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func nanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

func median(_ values: [UInt64]) -> Double {
    let sorted = values.sorted()
    return Double(sorted[sorted.count / 2])
}

/// "1.07x"
func ratio(_ value: Double, _ baseline: Double) -> String {
    let hundredths = Int((value / baseline * 100).rounded())
    return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)x"
}
