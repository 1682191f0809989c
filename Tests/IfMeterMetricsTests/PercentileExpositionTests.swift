import IfMeterCore
import IfMeterHistory
@testable import IfMeterMetrics
import IfMeterService
import IfMeterTestSupport
import Testing

/// The 95th percentile's gauges (docs/METRICS.md): one series per uplink and direction, in bits
/// per second, and its coverage; in both text formats.
@Suite("95th percentile gauges", .ownThread, .timeLimit(.minutes(1)))
struct PercentileExpositionTests {
    func text(_ percentiles: [PercentileFigures], _ format: ExpositionFormat) -> String {
        let service = MeterService(bootID: "b", configuration: ServiceConfiguration(), history: ServiceHistory(), at: 1_800_000_000)
        var input = MetricsInput(snapshot: service.snapshot(), now: 1_800_000_060, keepAbsentSeconds: 86400,
                                 sampleDurations: Histogram(bounds: Histogram.sampleBounds),
                                 saveDurations: Histogram(bounds: Histogram.saveBounds), version: "9.9.9", process: nil)
        input.percentiles = percentiles
        return String(decoding: MetricsExposition.render(input, format: format), as: UTF8.self)
    }

    @Test("rx, tx and the larger of the two in bit/s from the figure's bytes per slot, and the share of slots with traffic")
    func series() {
        // 20 slots: the 19th smallest of each direction, as the figure's own rank says.
        var buckets: [(start: Int64, traffic: Traffic)] = []
        for slot in 0..<20 {
            let traffic = Traffic(rxBytes: UInt64(slot) * 1000, txBytes: UInt64(19 - slot) * 3000)
            buckets.append((start: Int64(1_800_000_000 + 300 * slot), traffic: traffic))
        }
        let figure = BurstablePercentile(buckets: Array(buckets.prefix(16)), from: 1_800_000_000, to: 1_800_000_000 + 300 * 20)
        let exposition = text([PercentileFigures(interface: #"we"ird"#, interfaceClass: "ethernet", figure: figure)], .prometheus)
        // As the exposition writes a number: a whole one without a fraction.
        func number(_ value: Double) -> String { value == value.rounded() ? String(Int64(value)) : "\(value)" }
        let rx = number(BurstablePercentile.bitsPerSecond(figure.rxBytes)), tx = number(BurstablePercentile.bitsPerSecond(figure.txBytes))
        #expect(figure.slots == 20 && figure.slotsWithTraffic == 16)
        #expect(exposition.contains(#"ifmeter_interface_95th_percentile_bits_per_second{interface="we\"ird",class="ethernet",direction="rx"} \#(rx)"#))
        #expect(exposition.contains(#"ifmeter_interface_95th_percentile_bits_per_second{interface="we\"ird",class="ethernet",direction="tx"} \#(tx)"#))
        #expect(exposition.contains(#"direction="max"} \#(number(BurstablePercentile.bitsPerSecond(figure.maxBytes)))"#))
        #expect(figure.maxBytes == max(figure.rxBytes, figure.txBytes))
        #expect(exposition.contains(#"ifmeter_interface_95th_percentile_coverage_ratio{interface="we\"ird",class="ethernet"} 0.8"#))
        let open = text([PercentileFigures(interface: "eth0", interfaceClass: "ethernet", figure: figure)], .openMetrics)
        #expect(open.contains("# UNIT ifmeter_interface_95th_percentile_bits_per_second bits_per_second\n"))
        #expect(open.contains("# UNIT ifmeter_interface_95th_percentile_coverage_ratio ratio\n"))
    }

    @Test("no uplink, no family")
    func none() {
        #expect(!text([], .prometheus).contains("95th"))
    }
}
