/// Why the store could not do what it was asked, naming the database file.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        case cannotOpen
        /// Not a database, not ifmeter's, or failing its integrity check. Never overwritten.
        case corrupt
        /// Written by a newer ifmeter; this build will not touch it.
        case newerSchema(found: Int, supported: Int)
        /// Another ifmeterd holds the database (``StoreLock``, with its pid when the lock file
        /// names one), or another program holds SQLite's lock on it beyond the busy timeout.
        case locked(byPID: Int32?)
        /// Disk full or quota reached: nothing was written; retry when there is space.
        case full
        /// The file or its directory cannot be written.
        case readOnly
        case io
        case other
    }

    public var kind: Kind
    public var path: String
    /// What the store was doing, as a verb phrase: "open", "save to", "read".
    public var operation: String
    public var message: String

    public init(kind: Kind, path: String, operation: String, message: String) {
        self.kind = kind
        self.path = path
        self.operation = operation
        self.message = message
    }

    public var description: String {
        "cannot \(operation) database \(path): \(message)"
    }
}
