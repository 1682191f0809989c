import CMetricsHTTP

/// A gzip stream (zlib through CMetricsHTTP), fed chunk by chunk.
public final class GzipStream {
    private let stream: OpaquePointer
    private var failed = false

    public init?() {
        guard let stream = ifm_http_gzip_begin() else { return nil }
        self.stream = stream
    }

    deinit { ifm_http_gzip_free(stream) }

    public func add(_ bytes: [UInt8]) {
        guard !failed else { return }
        failed = bytes.withUnsafeBufferPointer { ifm_http_gzip_add(stream, $0.baseAddress, $0.count) } != 0
    }

    /// The compressed bytes, or nil when memory ran out on the way.
    public func finish() -> [UInt8]? {
        var bytes: UnsafePointer<UInt8>?
        var length = 0
        guard !failed, ifm_http_gzip_finish(stream, &bytes, &length) == 0, let bytes else { return nil }
        return Array(UnsafeBufferPointer(start: bytes, count: length))
    }
}
