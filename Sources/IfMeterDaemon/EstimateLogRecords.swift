import IfMeterHTTP
import IfMeterPlatform
import IfMeterServer
import IfMeterHistory
import IfMeterService
import IfMeterWire

extension EstimateLogRecord {
    /// A closed window's lines: its events, then one estimate per name.
    static func records(of window: LogWindow) -> [EstimateLogRecord] {
        window.events.map(EstimateLogRecord.event) + window.estimates.map { estimate in
            .estimate(WindowRecord(
                interface: estimate.name, class: estimate.classification?.label, start: estimate.start,
                end: estimate.end, tally: estimate.tally, epoch: estimate.epoch, labels: estimate.labels,
                eventsLost: estimate.eventsLost))
        }
    }
}
