import CMetricsHTTP

extension HTTPServer {
    /// What one request asked.
    public struct Request {
        public var method: String
        public var path: String
        public var accept: String?
        public var acceptEncoding: String?
        /// The `Host` header (``HostAllowList``).
        public var host: String?
        /// The query string's arguments, decoded, in order (a key without `=` has an empty value).
        public var arguments: [(key: String, value: String)] = []
        /// More arguments came than are passed on (``maximumArguments``).
        public var tooManyArguments = false

        public init(method: String, path: String, accept: String? = nil, acceptEncoding: String? = nil, host: String? = nil) {
            (self.method, self.path, self.accept, self.acceptEncoding, self.host) = (method, path, accept, acceptEncoding, host)
        }

        /// The values of every argument named `key`, in order.
        public func values(_ key: String) -> [String] {
            arguments.filter { $0.key == key }.map(\.value)
        }
    }

    /// Most query arguments a request may carry.
    public static let maximumArguments = Int(IFM_HTTP_MAX_ARGUMENTS)
}
