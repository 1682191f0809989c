/// The meter's rules (docs/METER.md), by name. The meter's functions say which rule they
/// implement; the rule test table is keyed by these cases, and every case has rows.
public enum MeterRule: String, CaseIterable, Hashable, Sendable {
    /// A name never seen before, at daemon start: its counters are the baseline.
    case firstSight = "0"
    /// A link appearing while running, or a later epoch of a name with history: counted from zero.
    case countFromZero = "0′"
    /// Same boot, same ifindex, counters grew: the difference.
    case advance = "1"
    /// The boot id changed: every old epoch closes at its saved values.
    case reboot = "2"
    /// Same name on a new ifindex, or an ifindex gone without a delete message.
    case recreated = "3"
    /// `RTM_DELLINK`: counted up to the larger of the last poll and the message.
    case deleted = "4"
    /// Counters went backwards on the same ifindex: a new generation (a veth without its peer excepted).
    case backwards = "5"
    /// A 32-bit counter wrapped (the getifaddrs fallback).
    case wrap = "6"
    /// More than the link could have moved: that direction is left out.
    case implausible = "7"
    /// The daemon was down in the same boot: the difference since the save is counted as a gap.
    case resume = "8"
    /// Same ifindex, new name: the epoch continues under the new name.
    case rename = "9"
    /// Wall time moved differently from boot time.
    case clockJump = "10"

    /// The events the rule produces; empty for a rule that only counts.
    public var events: Set<CounterEvent.Kind> {
        switch self {
        case .firstSight: [.firstSight]
        case .countFromZero: [.appeared, .epochStarted]
        case .advance: []
        case .reboot: [.reboot]
        case .recreated: [.recreated, .vanished]
        case .deleted: [.deleted]
        case .backwards: [.reset]
        case .wrap: [.wrap]
        case .implausible: [.implausible]
        case .resume: [.gap]
        case .rename: [.rename]
        case .clockJump: [.clockJump]
        }
    }
}
