/// Whether the wall clock may be believed for what cannot be undone: deleting expired history
/// (`retention_*`), forgetting containers (`retention_owners`), dropping absent series
/// (`metrics_keep_absent`), ending a plan's period and firing its thresholds (docs/METER.md,
/// "When the wall clock moves"). Counting never waits: buckets follow the wall clock.
///
/// The boot clock (`CLOCK_BOOTTIME`) is the witness: nobody sets it, and it counts through
/// suspend. The wall clock is believed while it moves as the boot clock does since the last
/// instant it was believed at (the *anchor*); a wall clock that moved otherwise is *doubted*
/// until one of:
/// - it is back on the anchor's time line (a clock set three years ahead, then set right);
/// - a time source says it is synchronised (``observe(_:synchronised:)``);
/// - it has moved as the boot clock does for ``settleSeconds`` since it last jumped.
///
/// States: trusted (with or without an anchor) ⇄ doubted. Pure: the caller reads the clocks
/// and the time sources.
public struct ClockTrust: Hashable, Sendable {
    /// Why the clock is doubted.
    public enum Reason: Hashable, Sendable {
        /// It moved `seconds` more (or, negative, less) than the boot clock did.
        case jumped(seconds: Double)
        /// After a reboot it reads `seconds` before the last time it was believed at: a board
        /// without a real-time clock, or one whose battery died.
        case behindSaved(seconds: Double)
    }

    /// How doubt ended.
    public enum Regained: String, Hashable, Sendable {
        /// A time source said the clock is synchronised.
        case synchronised
        /// It moved as the boot clock did for ``settleSeconds``.
        case agreed
        /// It came back to the time line it was believed on.
        case returned
    }

    public enum State: Hashable, Sendable {
        case trusted
        /// Since wall time `since` (as the doubted clock read it). `candidate` is where the
        /// wall clock last jumped to: agreement is timed from there.
        case doubted(since: Double, reason: Reason, candidate: MeterInstant)
    }

    /// What an observation changed.
    public enum Transition: Hashable, Sendable {
        case doubted(Reason)
        case trusted(Regained)
        /// It jumped while a time source said it is synchronised: believed at once.
        case stepped(seconds: Double)
    }

    /// How far the two clocks may disagree between observations: NTP slews at most 500 ppm.
    public static let toleranceSeconds: Double = 5
    /// How long a moved clock must agree with the boot clock to be believed without a time source.
    public static let settleSeconds: Double = 1800

    public private(set) var state: State
    /// The last instant the clock was believed at; saved, so a restart keeps a doubt.
    public private(set) var anchor: MeterInstant?
    /// Whether ``anchor``'s boot time is this boot's: after a reboot only its wall time compares.
    private var anchorThisBoot: Bool

    /// Resumes from the anchor a previous run saved (`sameBoot`: saved in this boot).
    public init(anchor: MeterInstant? = nil, sameBoot: Bool = true) {
        state = .trusted
        self.anchor = anchor
        anchorThisBoot = sameBoot
    }

    public var isTrusted: Bool { state == .trusted }

    /// Takes the clocks as read at `now`; `synchronised` when a time source said, at this
    /// instant, that the wall clock is right. Returns what changed, if anything.
    public mutating func observe(_ now: MeterInstant, synchronised: Bool) -> Transition? {
        switch state {
        case .trusted:
            guard let anchor else {
                believe(now)
                return nil
            }
            if !anchorThisBoot {
                let behind = anchor.wall - now.wall
                guard behind > Self.toleranceSeconds, !synchronised else {
                    believe(now)
                    return nil
                }
                state = .doubted(since: now.wall, reason: .behindSaved(seconds: behind), candidate: now)
                return .doubted(.behindSaved(seconds: behind))
            }
            let drift = Self.drift(now, from: anchor)
            if abs(drift) <= Self.toleranceSeconds {
                believe(now)
                return nil
            }
            if synchronised {
                believe(now)
                return .stepped(seconds: drift)
            }
            state = .doubted(since: now.wall, reason: .jumped(seconds: drift), candidate: now)
            return .doubted(.jumped(seconds: drift))
        case .doubted(let since, let reason, var candidate):
            if synchronised {
                believe(now)
                return .trusted(.synchronised)
            }
            if anchorThisBoot, let anchor, abs(Self.drift(now, from: anchor)) <= Self.toleranceSeconds {
                believe(now)
                return .trusted(.returned)
            }
            if abs(Self.drift(now, from: candidate)) > Self.toleranceSeconds {
                candidate = now
            } else if now.seconds(since: candidate) >= Self.settleSeconds {
                believe(now)
                return .trusted(.agreed)
            }
            state = .doubted(since: since, reason: reason, candidate: candidate)
            return nil
        }
    }

    private mutating func believe(_ now: MeterInstant) {
        state = .trusted
        anchor = now
        anchorThisBoot = true
    }

    /// How much more the wall clock moved than the boot clock from `earlier` to `now`.
    static func drift(_ now: MeterInstant, from earlier: MeterInstant) -> Double {
        let boot = now.sinceBootNanoseconds >= earlier.sinceBootNanoseconds
            ? Double(now.sinceBootNanoseconds - earlier.sinceBootNanoseconds) / 1e9
            : -Double(earlier.sinceBootNanoseconds - now.sinceBootNanoseconds) / 1e9
        return (now.wall - earlier.wall) - boot
    }
}

extension ClockTrust.Reason: CustomStringConvertible {
    public var description: String {
        switch self {
        case .jumped(let seconds):
            "the wall clock moved \(Self.span(abs(seconds))) \(seconds > 0 ? "ahead of" : "behind") the boot clock"
        case .behindSaved(let seconds):
            "the wall clock reads \(Self.span(seconds)) before the last time it was believed, in an earlier boot"
        }
    }

    /// `3 s`, `2 h 5 min`, `1096 d 0 h`.
    public static func span(_ seconds: Double) -> String {
        let whole = Int64(seconds.rounded())
        if whole < 60 { return "\(whole) s" }
        if whole < 3600 { return "\(whole / 60) min \(whole % 60) s" }
        if whole < 86400 { return "\(whole / 3600) h \(whole % 3600 / 60) min" }
        return "\(whole / 86400) d \(whole % 86400 / 3600) h"
    }
}
