import IfMeterPresentation
import IfMeterCore
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// `log`: the estimate log, read from its files (the daemon need not run), filtered, as text
/// or passed through as JSON; `--follow` keeps reading across rotations until Ctrl-C.
enum LogView {
    static func run(_ invocation: LogCommand, _ context: CommandContext) throws(CLIError) {
        let (locations, output, errors) = (context.locations, context.output, context.errors)
        let time = TimeText(utc: false)
        var filter = LogFilter(interfaces: invocation.subjects.interfaces, interfaceClass: invocation.subjects.interfaceClass,
                               kind: invocation.kind)
        filter.from = try time.argument(invocation.from, option: "--from")
        filter.to = try time.argument(invocation.to, option: "--to")
        if let kind = invocation.kind, kind != "estimate", kind != "event", CounterEvent.Kind(rawValue: kind) == nil {
            throw .usage("--kind: \"\(kind)\" is neither estimate, event nor an event kind (\(CounterEvent.Kind.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let files: [String]
        let current: String?
        if !invocation.logFiles.isEmpty {
            files = invocation.logFiles
            current = invocation.logFiles.last
        } else {
            let candidates = locations.logDirectoryCandidates(flag: invocation.logDirectory)
            guard let directory = candidates.first(where: { !EstimateLogReader.files(in: $0).isEmpty })
                    ?? (invocation.follow ? candidates.first(where: exists) : nil) else {
                throw CLIError(.noInput, "no estimate log in \(candidates.joined(separator: " or ")); ifmeterd writes \(Paths.estimateLogName) there at each save (choose another directory with --log-dir)")
            }
            files = EstimateLogReader.files(in: directory)
            current = directory + "/" + Paths.estimateLogName
        }
        var reader = EstimateLogReader()
        let show = { (records: [LogRecord]) in
            for record in records where filter.matches(record) {
                if context.json { output.raw(record.line) } else { output.write(describe(record, time: time, units: context.units)) }
            }
        }
        let wholeFiles = invocation.follow ? files.filter { $0 != current } : files
        let opened = invocation.logFiles.isEmpty
            ? try EstimateLogReader.open(rotated: wholeFiles)
            : try wholeFiles.map { path throws(CLIError) in try LogFile(path: path) }
        for file in opened { show(try reader.read(file)) }
        if invocation.follow, let current {
            try follow(current, reader: &reader, output: output, show: show)
        }
        if !context.json { output.write(EstimateLabel.footnote + "\n") }
        output.flush()
        if reader.unreadable > 0 {
            errors.write("ifmeter log: skipped \(reader.unreadable) line\(reader.unreadable == 1 ? "" : "s") that are not log records\n")
        }
    }

    /// Reads `path` to its end, then what is appended, reopening it when it is rotated away.
    private static func follow(_ path: String, reader: inout EstimateLogReader, output: Output,
                               show: ([LogRecord]) -> Void) throws(CLIError) {
        let signals = try SignalDescriptor([SIGINT, SIGTERM])
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        guard let notify = FileDescriptor(adopting: inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))) else {
            throw CLIError(.failure, "inotify_init1 failed: \(Errno.current.description)")
        }
        inotify_add_watch(notify.rawValue, directory.isEmpty ? "/" : directory,
                          UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE))
        var file: LogFile? = exists(path) ? try LogFile(path: path) : nil
        var pending: [UInt8] = []
        while true {
            if let open = file {
                pending += try open.readToEnd()
                let (records, consumed) = reader.records(in: pending)
                pending.removeFirst(consumed)
                show(records)
                output.flush()
                if open.isReplaced {
                    // Rotated: the old file is complete (what is left unterminated is torn).
                    pending += try open.readToEnd()
                    let (rest, _) = reader.records(in: pending)
                    show(rest)
                    pending = []
                    file = exists(path) ? try LogFile(path: path) : nil
                    continue
                }
            } else if exists(path) {
                file = try LogFile(path: path)
                continue
            }
            // Woken by the directory changing; the timeout covers a missed notification.
            if try signals.wait(alongside: notify.rawValue, timeoutMilliseconds: 1000) == .signal { return }
            var drain = [UInt8](repeating: 0, count: 4096)
            while read(notify.rawValue, &drain, drain.count) > 0 {}
        }
    }

    static func describe(_ record: LogRecord, time: TimeText, units: Units) -> String {
        let name = (record.interface ?? "—").padding(to: 12)
        switch record.record {
        case .estimate(let window):
            var marks = Marks()
            let mark = marks.mark(window.continuity)
            return "\(time.second(window.start))  \(name)  \((window.class ?? "").padding(to: 9))  "
                + "rx \(units.bytes(window.traffic.rxBytes).padding(to: 11))  tx \(units.bytes(window.traffic.txBytes).padding(to: 11))  "
                + "over \(Int((window.end - window.start).rounded())) s\(mark.isEmpty ? "" : "  " + mark)\n"
        case .event(let event):
            return "\(time.second(event.at))  \(name)  event \(event.kind.rawValue): \(EventsView.meaning(event.kind)) (\(event.detail))\n"
        }
    }
}

extension String {
    /// Padded with spaces to at least `width` characters.
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}

/// `log`.
struct LogCommand: Subcommand {
    static let name = "log"
    static let summary = "read the estimate log files (the daemon need not run)"
    static let usage = """
        ifmeter log [--log-dir DIR | --file FILE...] [-i NAME] [--class CLASS]
                           [--kind KIND] [--from TIME] [--to TIME] [--follow] [--json]
        """
    static let about = """
        Reads the estimate log (docs/LOG.md) from its files, oldest rotated file first; works
        with the daemon stopped. A torn last line is skipped. With --json, the records as they
        are in the log, one per line.
        """
    static let logDirectory = OptionSpec(
        names: ["--log-dir"], value: "DIR", help: "where the log is (default: the daemon's log directory)",
        completion: .directories)
    static let file = OptionSpec(
        names: ["--file"], value: "FILE", help: "read this file instead (repeatable, in the order given)", completion: .files)
    static let kind = OptionSpec(
        names: ["--kind"], value: "KIND", help: "estimate, event, or an event kind (reset, gap, ...)",
        completion: .words(["estimate", "event"] + CounterEvent.Kind.allCases.map(\.rawValue)))
    static let follow = OptionSpec(
        names: ["--follow"], help: "keep reading as records are written, across rotations,\nuntil Ctrl-C")
    static let options = [logDirectory, file, OptionSpec.interface, .interfaceClass, kind, .from, .to, follow]

    var subjects: Subjects
    var kind: String?
    var from: String?
    var to: String?
    var follow: Bool
    var logDirectory: String?
    var logFiles: [String]

    init(_ parsed: ParsedArguments) throws(CLIError) {
        subjects = try Subjects(parsed)
        kind = parsed.value(Self.kind)
        from = parsed.value(.from)
        to = parsed.value(.to)
        follow = parsed.isSet(Self.follow)
        logDirectory = parsed.value(Self.logDirectory)
        logFiles = parsed.values(Self.file)
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        try LogView.run(self, context)
        return 0
    }
}
