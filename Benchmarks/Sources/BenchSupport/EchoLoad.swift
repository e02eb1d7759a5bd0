import CBenchNative

/// The echo scenario's clients: TCP connections to 127.0.0.1 driven by a few client threads with
/// epoll, written in C (`Sources/CBenchNative/cbench_echo_load.c`) so that the load generator costs
/// as little CPU as possible on a small machine.
///
/// Thread-safety: `Sendable`; ``run(requests:cap:)`` and ``close()`` from one driving thread.
public final class EchoLoad: @unchecked Sendable {
    private let load: OpaquePointer
    private var latencies: [Int64] = []

    /// Opens `connections` connections to `port` on 127.0.0.1, split over `threads` threads, each
    /// sending `payload`-byte requests.
    ///
    /// Thread-safety: any thread.
    public init(port: Int, connections: Int, threads: Int, payload: Int) {
        guard let load = cbench_echo_load_create(Int32(port), Int32(connections), Int32(threads), Int32(payload)) else {
            preconditionFailure("EchoLoad: could not open \(connections) connections to 127.0.0.1:\(port)")
        }
        self.load = load
    }

    /// One sample: `requests` request/echo exchanges, issued until `cap` has passed: as fast as
    /// the echoes come back, or with `rate` at that many requests per second in all, each
    /// request's latency counted from when it was due (`cbench_echo_load_run`). Returns the
    /// completed requests' latencies in ns (as many as were completed; unsorted).
    ///
    /// Thread-safety: the driving thread; blocks until every outstanding echo came back.
    public func run(requests: Int, cap: Duration, rate: Int? = nil) -> ArraySlice<Int64> {
        if latencies.count < requests { latencies = [Int64](repeating: 0, count: requests) }
        let (seconds, attoseconds) = cap.components
        let capNs = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        let completed = latencies.withUnsafeMutableBufferPointer {
            cbench_echo_load_run(load, requests, capNs, rate ?? 0, $0.baseAddress)
        }
        precondition(completed >= 0, "EchoLoad: a connection failed or an echo did not come back")
        return latencies[0..<completed]
    }

    /// Closes every connection.
    ///
    /// Thread-safety: the driving thread, once.
    public func close() { cbench_echo_load_destroy(load) }
}
