import IfMeterPresentation
import IfMeterCore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// `ifmeter notify`: acts on data plan events so the daemon need execute nothing
/// (docs/PLANS.md). It follows the daemon's `watch` stream, and after connecting catches up on
/// the plan events the daemon stored while it was not following; each event is handled once,
/// remembered in a state file before it is acted on (so a crash during its command never runs
/// it again). It runs until SIGINT or SIGTERM, reconnecting when the daemon restarts.
struct NotifyCommand: Subcommand {
    static let name = "notify"
    static let summary = "run a command or a desktop notification for each data plan event"
    static let usage = "ifmeter notify [--exec COMMAND] [--desktop] [--state FILE] [--once]"
    static let about = """
        Follows ifmeterd's data plan events (a threshold crossed, a new period) and acts on
        each one once, also across its own restarts: events stored while it was not running
        are caught up on (on its very first run they are only remembered). Runs until
        SIGINT or SIGTERM, reconnecting when ifmeterd restarts. An event is remembered before
        it is acted on: killed meanwhile, it is not acted on again.
        """
    static let exec = OptionSpec(
        names: ["--exec"], value: "COMMAND",
        help: "run COMMAND with /bin/sh for each event; the figures are in\nIFMETER_EVENT, IFMETER_PLAN, IFMETER_THRESHOLD (percent),\nIFMETER_USED_BYTES, IFMETER_LIMIT_BYTES, IFMETER_DIRECTION,\nIFMETER_PERIOD_START, IFMETER_PERIOD_END (Unix seconds),\nIFMETER_WHILE_DOWN (1: crossed while ifmeterd was stopped),\nIFMETER_SUMMARY, IFMETER_BODY, IFMETER_DETAIL, IFMETER_AT")
    static let desktop = OptionSpec(
        names: ["--desktop"],
        help: "a desktop notification (freedesktop Notifications on the\nsession bus, through busctl --user)")
    static let state = OptionSpec(
        names: ["--state"], value: "FILE",
        help: "the events handled (default: $XDG_STATE_HOME/ifmeter/notify.state,\nroot's /var/lib/ifmeter-notify/notify.state, or\n$STATE_DIRECTORY/notify.state under systemd)",
        completion: .files)
    static let once = OptionSpec(names: ["--once"], help: "catch up once and exit (for a timer or a test)")
    static let options = [exec, desktop, state, once]

    var exec: String?
    var desktop: Bool
    var statePath: String?
    var once: Bool
    var units = Units()

    init(_ parsed: ParsedArguments) throws(CLIError) {
        exec = parsed.value(Self.exec)
        desktop = parsed.isSet(Self.desktop)
        statePath = parsed.value(Self.state)
        once = parsed.isSet(Self.once)
        guard exec != nil || desktop else {
            throw .usage("notify: say what to do: --exec COMMAND, --desktop, or both")
        }
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        var invocation = self
        invocation.units = context.units
        let errors = context.errors
        let statePath = statePath ?? context.locations.notifyState
        var state = try NotifyState.load(statePath)
        let signals = try SignalDescriptor([SIGINT, SIGTERM])
        let candidates = context.socketCandidates
        var said = false
        while true {
            let client: DaemonClient
            do throws(CLIError) {
                guard let path = candidates.first(where: exists) else {
                    throw CLIError(.unavailable, DaemonClient.notRunning(candidates.joined(separator: " or ")))
                }
                client = try DaemonClient(path: path)
                var stream = try WatchStream(client)
                said = false
                try Self.catchUp(client, &state, invocation, errors: errors)
                if invocation.once { return 0 }
                errors.write("ifmeter notify: following ifmeterd's plan events at \(path)\n")
                errors.flush()
                while true {
                    switch try stream.next(signals) {
                    case .signal: return 0
                    case .timeout: continue
                    case .closed: throw CLIError(.unavailable, "ifmeterd closed the stream (stopped or restarted)")
                    case .message(let response):
                        if response.stream == "event", let event = (try? response.result(as: CounterEvent.self)).flatMap(PlanEvent.init) {
                            try Self.handle(event, &state, invocation, errors: errors)
                        }
                    }
                }
            } catch {
                if invocation.once { throw error }
                if !said { errors.write("ifmeter notify: \(error.message); trying again every 5 s\n") }
                errors.flush()
                said = true
                if try signals.wait(alongside: -1, timeoutMilliseconds: 5000) == .signal { return 0 }
            }
        }
    }

    /// Events asked for in one answer while catching up.
    static let catchUpPage = 10_000

    /// The plan events the daemon stored that were not handled yet, oldest first: those from the
    /// newest one handled on, page after page, so that more stored events than one answer holds
    /// are all seen. On the very first run (no state file) they are only remembered: notifying a
    /// month of old events is not what a new user asked for.
    static func catchUp(_ client: DaemonClient, _ state: inout NotifyState, _ invocation: NotifyCommand,
                        errors: Output) throws(CLIError) {
        var events: [PlanEvent] = []
        for kind in [CounterEvent.Kind.planThreshold, .planPeriodStarted] {
            var from = state.newest
            while true {
                let request = EventsRequest(from: from.map { TimeArgument(seconds: $0) }, kind: kind, limit: catchUpPage)
                let page = try client.call(request, reading: EventsResult.self).events
                events += page.compactMap(PlanEvent.init)
                // A full page ends at an event whose time the next one starts from (keys tell the
                // ones at that time apart); a page all at one time cannot be passed this way.
                guard page.count == catchUpPage, let last = page.last?.at, last != from else { break }
                from = last
            }
        }
        events.sort { $0.at < $1.at }
        if state.isNew {
            for event in events { state.remember(event.key, at: event.at) }
            try state.save()
            errors.write("ifmeter notify: first run; \(events.count) earlier plan event(s) remembered, not acted on\n")
            return
        }
        for event in events { try handle(event, &state, invocation, errors: errors) }
    }

    static func handle(_ event: PlanEvent, _ state: inout NotifyState, _ invocation: NotifyCommand,
                       errors: Output) throws(CLIError) {
        let key = event.key
        guard !state.handled(key, at: event.at) else { return }
        let plan = event.facts
        // Remembered first: killed while acting, the event is not acted on twice.
        state.remember(key, at: event.at)
        try state.save()
        let units = invocation.units
        let summary = event.kind == .threshold
            ? "Data plan \(plan.plan): \(plan.threshold.map { ValueGrammar.percentText($0) } ?? "") of its limit"
            : "Data plan \(plan.plan): a new period"
        let body = "\(units.bytes(plan.used)) of \(units.bytes(plan.limit)) used (\(plan.direction))"
            + (plan.whileDown ? "; crossed while ifmeterd was not running" : "")
        if let command = invocation.exec {
            let status = spawn(["/bin/sh", "-c", command], environment: environment(event, plan, summary: summary, body: body))
            if status != 0 { errors.write("ifmeter notify: \(command) exited \(status) for \(key)\n") }
        }
        if invocation.desktop {
            let urgency = event.kind == .threshold && (plan.threshold ?? 0) >= 1 ? "2" : "1"
            // "--" before the arguments: the timeout -1 is not an option.
            let status = spawn(["busctl", "--user", "--", "call", "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                                "org.freedesktop.Notifications", "Notify", "susssasa{sv}i", "ifmeter", "0",
                                "network-transmit-receive", summary, body, "0", "1", "urgency", "y", urgency, "-1"],
                               environment: nil)
            if status != 0 {
                errors.write("ifmeter notify: the desktop notification for \(key) failed (busctl --user exited \(status)): "
                    + "is there a session bus with a notification service?\n")
            }
        }
        errors.flush()
    }

    /// The event's figures for the command: `IFMETER_PLAN`, `IFMETER_THRESHOLD` (percent) and
    /// the rest (docs/PLANS.md).
    static func environment(_ event: PlanEvent, _ plan: PlanEventFacts, summary: String, body: String) -> [String: String] {
        var variables = [
            "IFMETER_EVENT": event.counterKind.rawValue, "IFMETER_PLAN": plan.plan, "IFMETER_DIRECTION": plan.direction,
            "IFMETER_USED_BYTES": String(plan.used), "IFMETER_LIMIT_BYTES": String(plan.limit),
            "IFMETER_PERIOD_START": String(plan.periodStart), "IFMETER_PERIOD_END": String(plan.periodEnd),
            "IFMETER_AT": String(Int64(event.at)), "IFMETER_WHILE_DOWN": plan.whileDown ? "1" : "0",
            "IFMETER_SUMMARY": summary, "IFMETER_BODY": body, "IFMETER_DETAIL": event.detail,
        ]
        if let threshold = plan.threshold {
            let percent = (threshold * 1000).rounded() / 10
            variables["IFMETER_THRESHOLD"] = percent == percent.rounded() ? String(Int(percent)) : String(percent)
        }
        return variables
    }

    /// Runs `arguments` (found on PATH) with `environment` added to ours, and waits: its exit
    /// status, or 127 when it could not be started.
    static func spawn(_ arguments: [String], environment: [String: String]?) -> Int32 {
        // The whole environment (PATH, the session bus's address), with the event's added.
        let added = environment ?? [:]
        var entries: [String] = []
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            index += 1
            if let equals = text.firstIndex(of: "="), added[String(text[..<equals])] != nil { continue }
            entries.append(text)
        }
        entries += added.map { "\($0.key)=\($0.value)" }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = entries.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        guard posix_spawnp(&pid, arguments[0], nil, nil, argv, envp) == 0 else { return 127 }
        var status: Int32 = 0
        _ = retryingEINTR { waitpid(pid, &status, 0) }
        // WIFEXITED / WEXITSTATUS, which Swift does not import.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}

/// The plan events `notify` has handled, one key a line after a header and the time of the
/// newest (`newest AT`), written whole to a temporary file and renamed over the old one, so a
/// crash leaves the old state or the new. Keys are kept for the newest ``maximumKeys`` events;
/// an event older than the newest one handled counts as handled whether its key is still kept
/// or not, so forgetting the oldest keys never has notify act on their events again.
package struct NotifyState {
    let path: String
    /// No state file yet.
    let isNew: Bool
    private var keys: [String]
    private var known: Set<String>
    /// When the newest event handled (or remembered) happened; nil before the first.
    package private(set) var newest: Double?

    static let header = "ifmeter-notify 1"
    /// The line that says when the newest event handled happened. No key begins so: keys begin
    /// with an event's kind.
    static let newestPrefix = "newest "
    /// Keys kept: a plan fires a few events a period, so this is years of them.
    package static let maximumKeys = 10_000

    package static func load(_ path: String) throws(CLIError) -> NotifyState {
        let bytes: [UInt8]
        do {
            bytes = try WholeFile.read(path, limit: 4 << 20)
        } catch {
            if error.isMissing { return NotifyState(path: path, isNew: true, keys: [], known: []) }
            if case .tooLarge = error.reason { throw CLIError(.failure, "\(path) is larger than 4 MiB; is it notify's state?") }
            throw CLIError(.failure, "cannot read \(path): \(error)")
        }
        return try parse(bytes, path: path)
    }

    /// A state file's bytes, as read from `path`.
    package static func parse(_ bytes: [UInt8], path: String) throws(CLIError) -> NotifyState {
        // "\r\n" is one Character, which equals no "\n".
        let lines = String(decoding: bytes, as: UTF8.self).split { $0 == "\n" || $0 == "\r\n" }.map(String.init)
        guard lines.first == header else {
            throw CLIError(.failure, "\(path) is not ifmeter notify's state (its first line is not \"\(header)\"); move it away to start afresh")
        }
        var state = NotifyState(path: path, isNew: false, keys: [], known: [])
        for line in lines.dropFirst() {
            if line.hasPrefix(Self.newestPrefix) {
                guard let at = Double(line.dropFirst(Self.newestPrefix.count)), at.isFinite else {
                    throw CLIError(.failure, "\(path): \"\(line)\" is not a time; move the file away to start afresh")
                }
                state.newest = max(state.newest ?? at, at)
            } else {
                state.remember(line)
            }
        }
        return state
    }

    /// How many events it remembers.
    package var count: Int { keys.count }

    /// Whether the event with `key` at `at` was handled: its key is kept, or it is older than
    /// the newest event handled.
    package func handled(_ key: String, at: Double) -> Bool {
        known.contains(key) || newest.map { at < $0 } == true
    }

    /// Remembers an event handled, and when it happened.
    package mutating func remember(_ key: String, at: Double) {
        newest = max(newest ?? at, at)
        remember(key)
    }

    private mutating func remember(_ key: String) {
        guard known.insert(key).inserted else { return }
        keys.append(key)
        if keys.count > Self.maximumKeys {
            for old in keys.prefix(keys.count - Self.maximumKeys) { known.remove(old) }
            keys.removeFirst(keys.count - Self.maximumKeys)
        }
    }

    /// Writes the state whole to `NAME.new` and renames it over `NAME`, in a directory nobody
    /// else can write to (``DirectoryTrust``): there, no one can plant a link for root's
    /// notify to write through, or swap the file. The new file is created afresh
    /// (`O_EXCL|O_NOFOLLOW`, beside the directory's descriptor), never opened as found.
    package func save() throws(CLIError) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        makeDirectories(directory)
        let real: String
        do {
            real = try DirectoryTrust.check(directory, role: "notify state", program: "ifmeter notify")
        } catch {
            throw CLIError(.failure, error.message)
        }
        guard let parent = FileDescriptor(adopting: open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) else {
            throw CLIError(.failure, "cannot open \(real): \(Errno.current.description)")
        }
        let temporary = name + ".new"
        // One left by a notify killed while saving is its own: the directory is trusted.
        unlinkat(parent.rawValue, temporary, 0)
        guard let fd = FileDescriptor(adopting: openat(parent.rawValue, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)) else {
            throw CLIError(.failure, "cannot write \(real)/\(temporary): \(Errno.current.description)")
        }
        let mark = newest.map { ["\(Self.newestPrefix)\($0)"] } ?? []
        let text = Array(([Self.header] + mark + keys).joined(separator: "\n").utf8) + [0x0a]
        var written = 0
        while written < text.count {
            let count = text[written...].withUnsafeBytes { raw in retryingEINTR { write(fd.rawValue, raw.baseAddress, raw.count) } }
            guard count > 0 else {
                throw CLIError(.failure, "cannot write \(real)/\(temporary): \(Errno.current.description)")
            }
            written += count
        }
        let synced = fsync(fd.rawValue) == 0
        fd.close()
        guard synced, renameat(parent.rawValue, temporary, parent.rawValue, name) == 0 else {
            throw CLIError(.failure, "cannot save \(path): \(Errno.current.description)")
        }
    }

    private func makeDirectories(_ directory: String) {
        var prefix = directory.hasPrefix("/") ? "" : "."
        for part in directory.split(separator: "/") {
            prefix += "/" + part
            mkdir(prefix, 0o700)
        }
    }
}
