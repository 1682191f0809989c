import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's one loop: libsystemd's sd-event, which puts I/O, timers, signals and the
/// systemd watchdog in one place. Handlers run on the loop's thread, one at a time.
public final class EventLoop {
    public let handle: OpaquePointer

    public init() throws(PlatformError) {
        var handle: OpaquePointer?
        let result = sd_event_new(&handle)
        guard result >= 0, let handle else { throw PlatformError.system("sd_event_new", -result) }
        self.handle = handle
        // Sends WATCHDOG=1 at half of WATCHDOG_USEC from the loop itself when systemd asks for
        // it, so a stuck loop is noticed.
        _ = sd_event_set_watchdog(handle, 1)
    }

    deinit {
        sd_event_unref(handle)
    }

    /// Runs until ``exit(_:)``; returns its code.
    public func run() throws(PlatformError) -> Int32 {
        let result = sd_event_loop(handle)
        guard result >= 0 else { throw PlatformError.system("sd_event_loop", -result) }
        return result
    }

    public func exit(_ code: Int32) {
        _ = sd_event_exit(handle, code)
    }

    /// sd-event's unit: whole microseconds, none below zero, whatever the duration.
    public static func microseconds(_ duration: Duration) -> UInt64 {
        // A negative duration's components may be a zero second and negative attoseconds.
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000)
        return overflow ? UInt64.max : whole &+ UInt64(attoseconds / 1_000_000_000_000)
    }

    /// `CLOCK_MONOTONIC` now, in microseconds, as sd-event sees it.
    public var now: UInt64 {
        var usec: UInt64 = 0
        _ = sd_event_now(handle, CLOCK_MONOTONIC, &usec)
        return usec
    }

    /// Calls `handler` with the `EPOLL*` events whenever `fd` is ready for `events`.
    public func watch(fd: Int32, events: UInt32, _ handler: @escaping (UInt32) -> Void) throws(PlatformError) -> EventSource {
        let box = Unmanaged.passRetained(HandlerBox(io: handler))
        var source: OpaquePointer?
        let result = sd_event_add_io(handle, &source, fd, events, { _, _, revents, userdata in
            Unmanaged<HandlerBox>.fromOpaque(userdata!).takeUnretainedValue().io?(revents)
            return 0
        }, box.toOpaque())
        guard result >= 0, let source else {
            box.release()
            throw PlatformError.system("sd_event_add_io", -result)
        }
        return EventSource(source, box: box)
    }

    /// Calls `handler` every `period` (first call after one period).
    public func every(_ period: Duration, _ handler: @escaping () -> Void) throws(PlatformError) -> EventSource {
        let interval = Self.microseconds(period)
        let box = Unmanaged.passRetained(HandlerBox(timer: handler))
        var source: OpaquePointer?
        let result = sd_event_add_time_relative(handle, &source, CLOCK_MONOTONIC, interval, 0, { source, _, userdata in
            let box = Unmanaged<HandlerBox>.fromOpaque(userdata!).takeUnretainedValue()
            // Re-arm from the scheduled time, not from now, so the period does not drift.
            var next: UInt64 = 0
            _ = sd_event_source_get_time(source, &next)
            _ = sd_event_source_set_time(source, next + box.interval)
            _ = sd_event_source_set_enabled(source, Int32(SD_EVENT_ON))
            box.timer?()
            return 0
        }, box.toOpaque())
        guard result >= 0, let source else {
            box.release()
            throw PlatformError.system("sd_event_add_time_relative", -result)
        }
        box.takeUnretainedValue().interval = interval
        _ = sd_event_source_set_enabled(source, Int32(SD_EVENT_ON))
        return EventSource(source, box: box)
    }

    /// A source that calls `handler` once on a later loop turn each time it is
    /// ``EventSource/trigger()``ed: work left over from one turn waits behind everything
    /// else that is ready, so one busy client cannot hold the loop.
    public func deferred(_ handler: @escaping () -> Void) throws(PlatformError) -> EventSource {
        let box = Unmanaged.passRetained(HandlerBox(timer: handler))
        var source: OpaquePointer?
        let result = sd_event_add_defer(handle, &source, { _, userdata in
            Unmanaged<HandlerBox>.fromOpaque(userdata!).takeUnretainedValue().timer?()
            return 0
        }, box.toOpaque())
        guard result >= 0, let source else {
            box.release()
            throw PlatformError.system("sd_event_add_defer", -result)
        }
        _ = sd_event_source_set_enabled(source, Int32(SD_EVENT_OFF))
        return EventSource(source, box: box)
    }

    /// Calls `handler` once, `delay` from now, unless the source is released first.
    public func after(_ delay: Duration, _ handler: @escaping () -> Void) throws(PlatformError) -> EventSource {
        let box = Unmanaged.passRetained(HandlerBox(timer: handler))
        var source: OpaquePointer?
        let result = sd_event_add_time_relative(handle, &source, CLOCK_MONOTONIC, Self.microseconds(delay), 0, { _, _, userdata in
            Unmanaged<HandlerBox>.fromOpaque(userdata!).takeUnretainedValue().timer?()
            return 0
        }, box.toOpaque())
        guard result >= 0, let source else {
            box.release()
            throw PlatformError.system("sd_event_add_time_relative", -result)
        }
        return EventSource(source, box: box)
    }

    /// Calls `handler` when `signal` arrives (it is blocked for the process first, as sd-event
    /// requires).
    public func onSignal(_ signal: Int32, _ handler: @escaping () -> Void) throws(PlatformError) -> EventSource {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signal)
        sigprocmask(SIG_BLOCK, &set, nil)
        let box = Unmanaged.passRetained(HandlerBox(timer: handler))
        var source: OpaquePointer?
        let result = sd_event_add_signal(handle, &source, signal, { _, _, userdata in
            Unmanaged<HandlerBox>.fromOpaque(userdata!).takeUnretainedValue().timer?()
            return 0
        }, box.toOpaque())
        guard result >= 0, let source else {
            box.release()
            throw PlatformError.system("sd_event_add_signal", -result)
        }
        return EventSource(source, box: box)
    }
}

/// Keeps a handler alive for as long as its sd-event source exists.
public final class HandlerBox {
    public let io: ((UInt32) -> Void)?
    public let timer: (() -> Void)?
    public var interval: UInt64 = 0

    public init(io: ((UInt32) -> Void)? = nil, timer: (() -> Void)? = nil) {
        self.io = io
        self.timer = timer
    }
}

/// An sd-event source; removed from the loop when released.
public final class EventSource {
    private let handle: OpaquePointer
    private let box: Unmanaged<HandlerBox>

    fileprivate init(_ handle: OpaquePointer, box: Unmanaged<HandlerBox>) {
        self.handle = handle
        self.box = box
    }

    deinit {
        sd_event_source_disable_unref(handle)
        box.release()
    }

    /// Changes the `EPOLL*` events an I/O source waits for.
    public func setEvents(_ events: UInt32) {
        _ = sd_event_source_set_io_events(handle, events)
    }

    /// Turns an I/O source off (its descriptor is not watched) or on again.
    public func setEnabled(_ enabled: Bool) {
        _ = sd_event_source_set_enabled(handle, Int32(enabled ? SD_EVENT_ON : SD_EVENT_OFF))
    }

    /// Makes a ``EventLoop/deferred(_:)`` source run once more on a later turn.
    public func trigger() {
        _ = sd_event_source_set_enabled(handle, Int32(SD_EVENT_ONESHOT))
    }

    /// Moves a one-shot timer to `time` (CLOCK_MONOTONIC microseconds).
    public func reschedule(at time: UInt64) {
        _ = sd_event_source_set_time(handle, time)
        _ = sd_event_source_set_enabled(handle, Int32(SD_EVENT_ONESHOT))
    }

    /// Runs this source before ordinary ones whenever both are ready: sampling and signals
    /// keep their schedule however busy the clients keep the loop.
    public func setImportant() {
        _ = sd_event_source_set_priority(handle, Int64(SD_EVENT_PRIORITY_IMPORTANT))
    }

    /// Runs this source after ordinary ones whenever both are ready: anonymous web clients
    /// never go before the Unix socket's.
    public func setUnimportant() {
        _ = sd_event_source_set_priority(handle, Int64(SD_EVENT_PRIORITY_NORMAL) + 10)
    }

    /// Changes a repeating timer's period; the next call comes one period from `now` (the loop's).
    public func setInterval(_ period: Duration, now: UInt64) {
        let interval = EventLoop.microseconds(period)
        box.takeUnretainedValue().interval = interval
        _ = sd_event_source_set_time(handle, now + interval)
    }
}
