import IfMeterCore
@testable import IfMeterCLI
import IfMeterTestSupport
import Testing

@Suite("apps --now: what moved between two samples", .ownThread, .timeLimit(.minutes(1)))
struct AppsLiveViewTests {
    func totals(_ pairs: [(String, UInt64, UInt64)]) -> [String: (kind: String, traffic: Traffic)] {
        Dictionary(uniqueKeysWithValues: pairs.map { ($0.0, ("application", Traffic(rxBytes: $0.1, txBytes: $0.2))) })
    }

    @Test("busiest first by what moved, rates over the samples' distance, idle and new subjects handled, at most rows")
    func frame() {
        let before = totals([("app:1000/firefox", 1000, 100), ("service:nginx.service", 5000, 5000), ("app:1000/idle", 7, 7)])
        let after = totals([("app:1000/firefox", 9000, 300), ("service:nginx.service", 6000, 5500), ("app:1000/idle", 7, 7),
                            ("app:1000/new", 40, 0)])
        let frame = AppsLiveView.frame(from: before, to: after, seconds: 2, at: 100, rows: 2)
        #expect(frame.apps.map(\.name) == ["app:1000/firefox", "service:nginx.service"])
        #expect(frame.apps.first?.rxBytes == 8000 && frame.apps.first?.txBytes == 200)
        #expect(frame.apps.first?.rxBytesPerSecond == 4000 && frame.apps.first?.txBytesPerSecond == 100)
        let all = AppsLiveView.frame(from: before, to: after, seconds: 2, at: 100, rows: 10)
        #expect(all.apps.map(\.name) == ["app:1000/firefox", "service:nginx.service", "app:1000/new"])
    }

    @Test("a subject counted anew (forgotten, then seen again) has moved what it has now, not a wrapped difference")
    func forgotten() {
        let frame = AppsLiveView.frame(from: totals([("app:1000/x", 5000, 0)]), to: totals([("app:1000/x", 300, 0)]),
                                       seconds: 1, at: 1, rows: 5)
        #expect(frame.apps.first?.rxBytes == 300)
    }
}
