/// `--help` texts: the overview, and one per command.
enum Help {
    static let overview = """
        usage: ifmeter [COMMAND] [OPTIONS]

        Shows what ifmeterd counted: estimates of traffic per network interface from the
        kernel's interface counters (they include protocol overhead and are not per-application).

        Commands (vnStat's switches in brackets also work):
          summary          today, yesterday, this and last month, all time, month-end projection (default)
          5min             5-minute periods [-5]
          hours            hours, with a bar graph [-h]
          days             days [-d]
          months           months [-m]
          years            years [-y]
          top              the busiest days [-t]
          list             interfaces: class and why, state, rates, totals, continuity
          events           counter resets, re-creations, gaps, implausible jumps, and what they mean
          status           the daemon's state
          rate             rates over the last sampling interval [-tr]
          live             rates updating after each sample until Ctrl-C, then a session summary [-l]
          log              read the estimate log files (the daemon need not run)
          check            quota check with Nagios exit codes (0 ok, 1 warning, 2 over, 3 unknown)
          plans            data plans: used of the limit this period, left per day, projection
          containers       traffic per container and network namespace: today, this month, all time
          notify           run a command or a desktop notification for each data plan event
          chart            SVG bar chart: chart hours|days|months [-o FILE]
          metrics          the Prometheus exposition /metrics serves; --textfile DIR for node_exporter
          import vnstat    bring a vnStat database's history into ifmeter (admin)

        Options for every command:
          --socket PATH    ifmeterd's socket (default: $IFMETER_SOCKET, then the daemon's own default)
          --json           machine-readable output (docs/CLI.md)
          --si             SI units (kB, MB) instead of IEC (KiB, MiB)
          --bits           rates in bits per second
          --help           help for the command

        `ifmeter COMMAND --help` tells a command's options. Exit status: 0 ok, 64 bad arguments,
        66 log file missing, 69 ifmeterd not running, 70 ifmeterd could not answer, 73 ifmeterd
        busy (too many clients), 74 connection broken, 75 ifmeterd starting, 76 protocol
        mismatch, 77 permission denied, 1 anything else; `check` has its own (see its help).
        """

    static let subject = """
          -i, --interface NAME   one interface (repeat, or NAME,NAME, for several)
          --class CLASS          the interfaces of a class: wifi, cellular, ethernet, tunnel,
                                 virtual, loopback, other (tables sum the class)
          -a, --all              also virtual links that are down and never carried traffic
                                 (left out by default)
        """

    static let range = """
          --from TIME, --to TIME periods starting in [from, to): YYYY-MM-DD, "YYYY-MM-DD HH:MM",
                                 RFC 3339 or @UNIXSECONDS, in the daemon's time zone
          --limit N              at most N rows, the newest
        """

    static func text(for command: CLICommand) -> String {
        switch command {
        case .summary:
            return """
                usage: ifmeter [summary] [-i NAME | --class CLASS] [--oneline]

                Per interface (all but loopback by default): today, yesterday, this month, last month,
                all time, and where this month ends at its pace so far (a projection).
                Marks: * a counter reset, ! a gap, ~ an implausible jump left out, in that period.

                \(subject)
                  --oneline              one ;-separated line per interface: name;class;today rx;tx;total;
                                         month rx;tx;total;month-end projection;all time rx;tx;total;marks
                """
        case .fiveMinutes, .hours, .days, .months, .years:
            return """
                usage: ifmeter \(command.rawValue) [-i NAME | --class CLASS] [--from TIME] [--to TIME] [--limit N]

                Traffic per \(command.period?.rawValue ?? "") with its average rate\(command == .hours ? " and a bar graph (r = rx, t = tx)" : "").
                One table per interface, or one for the sum of a class.

                \(subject)
                \(range)
                """
        case .top:
            return """
                usage: ifmeter top [-i NAME | --class CLASS] [--limit N]

                The busiest days (rx + tx), busiest first; 10 unless --limit says otherwise.

                \(subject)
                """
        case .list:
            return """
                usage: ifmeter list [-i NAME | --class CLASS]

                Every interface ifmeter knows, present or not: class and the evidence for it, state,
                rates over the last interval, totals since its history began, and continuity
                (resets, gaps and implausible jumps in that history).

                \(subject)
                """
        case .events:
            return """
                usage: ifmeter events [-i NAME] [--kind KIND] [--from TIME] [--to TIME] [--limit N]

                Counter events, oldest first, each with what it means for the figures. Kinds:
                first-sight, appeared, epoch-started, reboot, recreated, deleted, vanished, reset,
                wrap, implausible, gap, rename, clock-jump, events-lost, buckets-folded.
                """
        case .status:
            return "usage: ifmeter status\n\nThe daemon's version, sampling, last sample and save, and database health."
        case .rate:
            return """
                usage: ifmeter rate [-i NAME | --class CLASS]

                Rates measured over the daemon's last sampling interval, once.

                \(subject)
                """
        case .live:
            return """
                usage: ifmeter live [-i NAME | --class CLASS] [--count N]

                Rates pushed by the daemon after each sample (its `watch` stream), redrawn in place
                on a terminal, a line per interface and update otherwise. Ctrl-C ends it with a
                summary of the session: bytes, average and peak rates per interface.

                \(subject)
                  --count N              stop after N updates
                """
        case .log:
            return """
                usage: ifmeter log [--log-dir DIR | --file FILE...] [-i NAME] [--class CLASS]
                                   [--kind KIND] [--from TIME] [--to TIME] [--follow] [--json]

                Reads the estimate log (docs/LOG.md) from its files, oldest rotated file first; works
                with the daemon stopped. A torn last line is skipped.

                  --log-dir DIR          where the log is (default: the daemon's log directory)
                  --file FILE            read this file instead (repeatable, in the order given)
                  --kind KIND            estimate, event, or an event kind (reset, gap, ...)
                  --follow               keep reading as records are written, across rotations,
                                         until Ctrl-C
                  --json                 the records as they are in the log, one per line
                """
        case .check:
            return """
                usage: ifmeter check -i NAME --limit SIZE [--period day|month] [--warn PERCENT]
                                     [--projected] [--direction rx|tx|both]
                       ifmeter check --plan NAME [--projected]

                Compares this day's or month's traffic of one interface (rx + tx unless --direction)
                with a quota and prints one line: status, reason, and Nagios performance data.

                  --limit SIZE           the quota: 10GiB, 500MB, 2G (IEC unless it says kB/MB/GB)
                  --period P             day or month (default month; months start on the daemon's
                                         month_start_day)
                  --warn PERCENT         warn from this share of the quota (default 80%)
                  --projected            compare the month-end (day-end) projection instead
                  --plan NAME            a data plan of ifmeterd.conf instead: its interfaces, limit
                                         and period; its lowest threshold under 100% warns

                Exit status: 0 OK, 1 WARNING (at or over --warn), 2 CRITICAL (at or over the quota),
                3 UNKNOWN (no daemon, unknown interface, bad arguments).
                """
        case .plans:
            return """
                usage: ifmeter plans [--json]

                Each data plan of ifmeterd.conf (docs/PLANS.md): its period, what its interfaces
                used of the limit so far (saved and not yet saved), the share, the projection at
                this period's pace, the days left (today included) and what is left per day.
                Marks: R reset, G gap, I implausible jump left out, L link events lost, V imported
                from vnStat, T a tunnel summed with the link beneath it (counted twice).
                """
        case .containers:
            return """
                usage: ifmeter containers [-i container:NAME …] [--json]

                Every container and network namespace ifmeterd counted (docs/NAMESPACES.md): its
                traffic today, this month and all time, its rate now, who owns it (podman, docker,
                nspawn, lxc, netns, process) and the host-side link it is counted through now ("via").
                A container keeps its history across restarts and new veth names; rx is what it
                received, tx what it sent. Every view takes its name: ifmeter days -i container:web.
                """
        case .notify:
            return """
                usage: ifmeter notify [--exec COMMAND] [--desktop] [--state FILE] [--once]

                Follows ifmeterd's data plan events (a threshold crossed, a new period) and acts on
                each one once, also across its own restarts: events stored while it was not running
                are caught up on (on its very first run they are only remembered). Runs until
                SIGINT or SIGTERM, reconnecting when ifmeterd restarts.

                  --exec COMMAND   run COMMAND with /bin/sh for each event; the figures are in
                                   IFMETER_EVENT, IFMETER_PLAN, IFMETER_THRESHOLD (percent),
                                   IFMETER_USED_BYTES, IFMETER_LIMIT_BYTES, IFMETER_DIRECTION,
                                   IFMETER_PERIOD_START, IFMETER_PERIOD_END (Unix seconds),
                                   IFMETER_WHILE_DOWN (1: crossed while ifmeterd was stopped),
                                   IFMETER_SUMMARY, IFMETER_BODY, IFMETER_DETAIL, IFMETER_AT
                  --desktop        a desktop notification (freedesktop Notifications on the
                                   session bus, through busctl --user)
                  --state FILE     the events handled (default: $XDG_STATE_HOME/ifmeter/notify.state,
                                   root's /var/lib/ifmeter-notify/notify.state, or
                                   $STATE_DIRECTORY/notify.state under systemd)
                  --once           catch up once and exit (for a timer or a test)

                An event is remembered before it is acted on: killed meanwhile, it is not acted on again.
                """
        case .chart:
            return """
                usage: ifmeter chart hours|days|months [-i NAME | --class CLASS] [--from TIME] [--to TIME]
                                     [--limit N] [-o FILE]

                An SVG bar chart, rx and tx stacked, for one interface or class (the first one
                given, else the first interface known), to FILE or standard output.

                \(subject)
                \(range)
                  -o, --output FILE      write the SVG here instead of standard output
                """
        case .metrics:
            return """
                usage: ifmeter metrics [--openmetrics] [--textfile DIR]

                The Prometheus metrics ifmeterd serves on /metrics (docs/METRICS.md): continuous
                per-interface totals across counter resets, re-creation, restarts and reboots.
                Answered while the daemon is still loading too (ifmeter_up 0).

                  --openmetrics          OpenMetrics 1.0 instead of the text format 0.0.4
                  --textfile DIR         write DIR/ifmeter.prom for node_exporter's textfile collector
                                         (--collector.textfile.directory=DIR), replaced atomically;
                                         without the process_* metrics node_exporter has itself
                """
        case .importHistory:
            return """
                usage: ifmeter import vnstat [PATH] [--dry-run] [--utc]

                Brings each interface's history from a vnStat 2.x database (default
                /var/lib/vnstat/vnstat.db, opened read-only: a running vnstatd is not disturbed)
                into ifmeterd's store: every resolution into the same one, and vnStat's all-time
                total. Traffic vnStat counted before ifmeter first saw an interface is added to
                ifmeter's buckets and total; where both counted, ifmeter's own count wins and
                vnStat's buckets for that time are left out (reported). A second import of the
                same database adds nothing. Imported figures are labelled imported-vnstat (marked v).
                Root, ifmeterd's user or admin_group only.

                  --dry-run              print what would be imported; change nothing
                  --utc                  vnStat ran with UseUTC 1 (its dates are UTC, not local time)
                """
        case .help, .version:
            return overview
        }
    }
}
