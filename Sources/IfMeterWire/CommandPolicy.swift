/// A command's place in the daemon, declared on its request type (``CommandRequestType/policy``):
/// who may run it, whether its answer may be large, and whether it is answered off the loop.
/// The admin check, the server's admission (given as its cost) and the hold on a client
/// answered off the loop all read it, and a test holds each handler's answer to it, so none of
/// them can disagree.
public struct CommandPolicy: Hashable, Sendable {
    /// Only root, ifmeterd's user and `admin_group` (it changes state).
    public var adminOnly = false
    /// Its answer grows with the interfaces or rows asked for (megabytes at thousands of
    /// interfaces), rather than staying a few hundred bytes.
    public var largeAnswer = false
    /// It is answered from another thread than the loop's: the store's, or one that builds the
    /// answer from a copy of the meter's state.
    public var offLoop = false

    /// The policy of a request line as read: none for one naming no known command (it is
    /// answered at once with an error).
    public static func of(_ line: RequestLine) -> CommandPolicy {
        line.command?.requestType.policy ?? CommandPolicy()
    }
}
