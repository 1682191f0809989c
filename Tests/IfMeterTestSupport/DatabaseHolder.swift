import Foundation

/// Holds an exclusive lock on an SQLite database, as a backup tool would, until released, so a
/// daemon opening it has to wait: its start-up can be observed without racing a timer.
public final class DatabaseHolder: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private var released = false

    /// Returns once the lock is held: the whole file (nobody may open it), or with
    /// `writerOnly` the write lock a writing program holds while others still read.
    public init(path: String, writerOnly: Bool = false) throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1], isolation_level=None)
            if sys.argv[2] == "writer":
                c.execute("BEGIN IMMEDIATE")
            else:
                c.execute("PRAGMA locking_mode=EXCLUSIVE"); c.execute("BEGIN EXCLUSIVE")
            print("locked", flush=True); sys.stdin.readline(); c.execute("COMMIT")
            """, path, writerOnly ? "writer" : "whole"]
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        // Nothing but "locked" means the lock was not taken (in WAL mode the whole file cannot
        // be taken while the daemon has it open): fail here rather than hold nothing.
        guard output.fileHandleForReading.firstLine() == "locked" else {
            release()
            throw POSIXError(.EBUSY)
        }
    }

    /// Lets go of the lock and waits for the holder to exit.
    public func release() {
        guard !released else { return }
        released = true
        try? input.fileHandleForWriting.write(contentsOf: Data("go\n".utf8))
        try? input.fileHandleForWriting.close()
        // It exits on "go"; one that does not is killed at the deadline.
        _ = try? process.awaitExit("database holder")
    }

    deinit { release() }
}
