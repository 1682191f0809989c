/// What a request may cost the daemon, as the server admits it (``UIDShares``): the server
/// knows no commands, only the cost its policy gives each request.
public struct RequestCost: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public init(largeAnswer: Bool, offLoop: Bool) {
        self.init(rawValue: (largeAnswer ? 1 : 0) | (offLoop ? 2 : 0))
    }

    /// Its answer may be megabytes: it waits while its uid holds too much unread.
    public static let largeAnswer = RequestCost(rawValue: 1)
    /// It is answered from another thread: one at a time per uid.
    public static let offLoop = RequestCost(rawValue: 2)
}
