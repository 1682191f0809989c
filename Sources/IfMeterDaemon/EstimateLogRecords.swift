import IfMeterHTTP
import IfMeterPlatform
import IfMeterServer
import IfMeterHistory
import IfMeterService
import IfMeterWire

extension EstimateLogRecord {
    /// A closed window's lines, one at a time: its events, then one estimate per name.
    static func forEachRecord(of window: LogWindow, _ body: (EstimateLogRecord) -> Void) {
        for event in window.events { body(.event(event)) }
        window.forEachEstimate { estimate in
            body(.estimate(WindowRecord(
                interface: estimate.name, class: estimate.classification?.label, start: estimate.start,
                end: estimate.end, tally: estimate.tally, epoch: estimate.epoch, labels: estimate.labels,
                eventsLost: estimate.eventsLost)))
        }
    }
}
