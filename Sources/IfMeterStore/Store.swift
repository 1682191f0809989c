import CSQLite
import IfMeterCore
import IfMeterHistory

/// ifmeter's history in SQLite (docs/decisions/store.md): one writer, WAL, `synchronous=FULL`.
/// It owns the connection and the writer's lock, and hands out the parts that use them: the
/// ``writer`` of saves, the ``queries`` answers read, the ``loader`` of what the service
/// starts from, ``retention`` and ``imports``.
///
/// Loss bound: a save is one transaction holding the traffic and the meter state it leads to.
/// If the daemon is killed, the database holds the last save, and in the same boot the kernel
/// counters still hold everything after it: the restarted meter counts it, nothing is lost. On
/// power loss (a reboot, so the counters are gone too), the traffic since the last completed
/// save is lost: at most one save interval. `FULL` makes each commit durable when it returns;
/// between folds, a save is an append to the ``journal``, as durable.
public final class Store {
    /// What opening repaired, each with why: said once at start.
    public let repairs: [String]
    public let path: String
    /// Replaced on a config reload; affects buckets written and queries answered from then on.
    public var configuration: HistoryConfiguration
    /// Which of the service's saves it holds, noted by whoever saves through it: what an
    /// answer adds of the unsaved traffic it was given (``UnsavedTraffic``).
    public var ledger = SaveLedger()
    /// Writes the meter's output, one save a transaction.
    public let writer: StoreWriter
    /// The save journal beside the database, once the daemon opened it (``openJournal()``).
    public private(set) var journal: SaveJournal?
    let connection: SQLiteConnection
    private let lock: StoreLock
    // Prepared once at open, like the writer's: a part handed out is only these and the
    // configuration of the moment.
    private let loading: HistoryLoader.Statements
    private let pruning: StoreRetention.Statements
    private let importing: VnStatImport.Statements
    private let appRows: AppCounterRows

    /// Opens (or creates) the database at `path`, holding `lock` (taken here if not given) so
    /// no second ifmeterd writes it. Refuses, without writing anything, a file that is not an
    /// ifmeter database, fails its integrity check, or has a newer schema.
    public init(
        path: String, configuration: HistoryConfiguration = HistoryConfiguration(), lock: StoreLock? = nil
    ) throws(StoreError) {
        self.path = path
        self.configuration = configuration
        if let lock {
            self.lock = lock
        } else {
            self.lock = try StoreLock(databasePath: path)
        }
        (connection, repairs) = try StoreOpening.open(path)
        appRows = try AppCounterRows(connection)
        writer = try StoreWriter(connection, appRows: appRows)
        loading = try HistoryLoader.Statements(connection)
        pruning = try StoreRetention.Statements(connection)
        importing = try VnStatImport.Statements(connection)
    }

    /// Opens the save journal beside the database (`PATH.journal`) and reads what it holds
    /// after the database's last save.
    public func openJournal() throws(StoreError) -> SaveJournal.Reading {
        let (journal, reading) = try SaveJournal.open(path: path + ".journal", sequence: writer.sequence)
        self.journal = journal
        return reading
    }

    /// Reads for answers, by the configuration of now.
    public var queries: StoreQueries { StoreQueries(connection: connection, configuration: configuration) }

    /// What the meter service starts from.
    public var loader: HistoryLoader { HistoryLoader(statements: loading, queries: queries, appRows: appRows) }

    /// What leaves the database: expired rows, and names forgotten.
    public var retention: StoreRetention {
        StoreRetention(connection: connection, statements: pruning, retention: configuration.retention,
                       calendar: configuration.calendar)
    }

    /// vnStat's history brought in.
    public var imports: VnStatImport {
        VnStatImport(connection: connection, statements: importing, configuration: configuration, path: path)
    }

    /// How long a statement waits for another program's lock on the file before failing
    /// with a busy error (10 s at open, for the load). The daemon shortens it once running: a
    /// save that finds the file busy fails fast and is retried with everything kept, instead
    /// of holding the loop for seconds.
    public func waitWhenBusy(milliseconds: Int32) {
        sqlite3_busy_timeout(connection.handle, milliseconds)
    }
}
