import IfMeterCore
import IfMeterJSON
import IfMeterWire

/// The events table's `plan` column: a plan event's figures in their one JSON form, the one
/// the protocol answers with (``PlanEventFacts/write(to:)``, docs/PROTOCOL.md). A value that
/// does not read is left out of the event, not trusted.
package enum PlanColumn {
    package static func text(_ facts: PlanEventFacts) -> String {
        var w = JSONWriter(capacity: 160)
        facts.write(to: &w)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    package static func facts(_ text: String) -> PlanEventFacts? {
        var reader = JSONReader(Array(text.utf8))
        guard let facts = try? PlanEventFacts(reading: &reader), (try? reader.isAtEnd()) == true else { return nil }
        return facts
    }
}
