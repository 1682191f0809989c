import IfMeterWire

/// The daemon's `watch` stream as `live` and `notify` follow it: each line decoded and an
/// error answer thrown, until a signal, a quiet spell or the daemon closing the stream.
struct WatchStream {
    /// What waiting for the stream brought.
    enum Next {
        case message(ResponseLine)
        /// SIGINT or SIGTERM.
        case signal
        /// Nothing within the wait's timeout.
        case timeout
        /// The daemon closed the stream (stopped or restarted).
        case closed
    }

    let client: DaemonClient
    private var pending: [UInt8]?

    /// Subscribes on `client`; the first line (the rates now) is the first message.
    init(_ client: DaemonClient) throws(CLIError) {
        self.client = client
        pending = try client.send([WatchRequest()])[0].line
    }

    /// The next message, waiting for it alongside `signals`.
    mutating func next(_ signals: SignalDescriptor) throws(CLIError) -> Next {
        while true {
            if let line = pending {
                pending = nil
                let response = try DaemonClient.decode(line)
                if let error = response.error { throw DaemonClient.describe(error, command: Command.watch.rawValue) }
                return .message(response)
            }
            // Lines already read come first: poll would not wake for them.
            if client.hasBufferedLine {
                pending = try client.readLine(timeoutMilliseconds: 0)
                continue
            }
            switch try signals.wait(alongside: client.descriptor) {
            case .signal: return .signal
            case .timeout: return .timeout
            case .readable:
                guard let line = try client.readLine(timeoutMilliseconds: 1000) else { return .closed }
                pending = line
            }
        }
    }
}
