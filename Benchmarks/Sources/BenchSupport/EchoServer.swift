#if canImport(Glibc)
import Glibc
#endif
import Benchmark
import PeerSupport

/// A TCP echo server on 127.0.0.1 with one loop thread (or a few): whatever a connection sends
/// comes back.
///
/// Thread-safety: `Sendable`; ``shutDown()`` once, from the driving thread.
public protocol EchoServer: AnyObject, Sendable {
    /// The port it listens on (127.0.0.1, chosen by the kernel).
    ///
    /// Thread-safety: any thread.
    var port: Int { get }
    /// The CPU-time clocks of the server's threads (``ProcessCounters/currentThreadCPUClock()``
    /// taken on each), read around every sample for `serverCPUNs`.
    ///
    /// Thread-safety: immutable.
    var serverThreadClocks: [clockid_t] { get }
    /// Connections accepted so far, where the server counts them (nil: it does not). A scenario
    /// with idle connections waits for the server to hold them all before it measures.
    ///
    /// Thread-safety: any thread.
    var acceptedConnections: Int? { get }
    /// Closes the listener and every connection and ends the loop thread.
    ///
    /// Thread-safety: the driving thread, once, after the clients closed.
    func shutDown()
}

extension EchoServer {
    /// Not counted (see ``EchoServer/acceptedConnections``).
    ///
    /// Thread-safety: any thread.
    public var acceptedConnections: Int? { nil }
}

extension Scenarios {
    /// Client connections of the echo scenario.
    ///
    /// Thread-safety: a constant.
    public static let echoConnections = 1000
    /// Client threads (each owns an equal share of the connections).
    ///
    /// Thread-safety: a constant.
    public static let echoClientThreads = 2
    /// Request size, bytes.
    ///
    /// Thread-safety: a constant.
    public static let echoPayload = 64
    /// Requests per sample (at most: see ``echoCap``).
    ///
    /// Thread-safety: a constant.
    public static let echoRequests = 100_000
    /// The offered load of the paced echo scenarios (`EchoServer.Conn100.At60k.<peer>`), requests
    /// per second: below what every peer answers on the benchmark host (NIO's one loop thread,
    /// the slowest, about 120,000 at 100 connections: half of it).
    ///
    /// Thread-safety: a constant.
    public static let echoPacedRate = 60_000
    /// After this long a sample issues no new request; it ends once the outstanding ones are back.
    ///
    /// Thread-safety: a constant.
    public static let echoCap: Duration = .milliseconds(1500)

    /// Registers `EchoServer.<name>`: `connections` connections (default ``echoConnections``) from
    /// ``echoClientThreads`` client threads, each sending ``echoPayload``-byte requests and waiting
    /// for the echo, up to ``echoRequests`` per sample; with `idleConnections`, that many more are
    /// opened first, by a second process (``IdleConnections``), and held open without a byte while
    /// the sample runs; with `rate`, the clients offer that many requests per second in all
    /// instead of as many as the server answers (``EchoLoad/run(requests:cap:rate:)``), so that
    /// servers' latencies compare at the same load, below every peer's saturation. Reports wall
    /// clock, throughput, `requestsPerSecond`, `p99Ns` (of the sample's per-request latencies), `serverCPUNs` (the server threads' CPU time), mallocs
    /// (process-wide: the server's; the C clients allocate nothing per request), context switches
    /// and `operations` (requests).
    ///
    /// Thread-safety: call from the benchmark registration closure only.
    public static func echoServer(_ name: String, connections: Int = echoConnections, idleConnections: Int = 0, rate: Int? = nil,
                                  make: @escaping @Sendable () throws -> any EchoServer) {
        let box = FixtureBox<EchoFixture>()
        Benchmark(
            "EchoServer.\(name)",
            configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal, BenchMetrics.requestsPerSecond,
                                           BenchMetrics.p99Ns, BenchMetrics.serverCPUNs, BenchMetrics.contextSwitches,
                                           BenchMetrics.operations],
                                 warmupIterations: 2, scalingFactor: .kilo, maxDuration: .seconds(10), maxIterations: 10),
            closure: { benchmark in box.fixture!.runSample(benchmark) },
            setup: { box.fixture = try EchoFixture(server: make(), connections: connections, idleConnections: idleConnections, rate: rate) },
            teardown: { box.fixture?.shutDown(); box.fixture = nil }
        )
    }
}

/// An echo server, its idle connections and its clients (see ``Scenarios/echoServer``).
final class EchoFixture {
    let server: any EchoServer
    let idle: IdleConnections?
    let load: EchoLoad
    /// The offered load, requests per second (nil: as fast as the echoes come back).
    let rate: Int?

    init(server: any EchoServer, connections: Int, idleConnections: Int, rate: Int?) throws {
        self.server = server
        self.rate = rate
        FileDescriptorLimit.raise()
        if idleConnections > 0 {
            do {
                idle = try IdleConnections(port: server.port, count: idleConnections, server: server)
            } catch {
                server.shutDown()
                throw error
            }
        } else {
            idle = nil
        }
        load = EchoLoad(port: server.port, connections: connections, threads: Scenarios.echoClientThreads,
                        payload: Scenarios.echoPayload)
    }

    func runSample(_ benchmark: Benchmark) {
        let switches = ProcessCounters.contextSwitches()
        let serverCPU = serverCPUNanoseconds()
        let start = ProcessCounters.nanoseconds()
        benchmark.startMeasurement()
        let latencies = load.run(requests: Scenarios.echoRequests, cap: Scenarios.echoCap, rate: rate)
        benchmark.stopMeasurement()
        let elapsed = ProcessCounters.nanoseconds() - start
        precondition(!latencies.isEmpty, "\(benchmark.name): no request completed")
        let sorted = latencies.sorted()
        let p99 = sorted[min(sorted.count - 1, (sorted.count * 99 + 99) / 100 - 1)]
        benchmark.measurement(BenchMetrics.p99Ns, Int(p99))
        benchmark.measurement(BenchMetrics.requestsPerSecond, Int(Double(latencies.count) * 1e9 / Double(elapsed)))
        benchmark.measurement(BenchMetrics.serverCPUNs, Int(serverCPUNanoseconds() - serverCPU))
        record(benchmark, operations: latencies.count, contextSwitches: ProcessCounters.contextSwitches() - switches,
               wakeSignals: nil)
    }

    /// The server threads' CPU time so far, summed.
    private func serverCPUNanoseconds() -> UInt64 {
        server.serverThreadClocks.reduce(0) { $0 + ProcessCounters.cpuNanoseconds(of: $1) }
    }

    func shutDown() {
        load.close()
        idle?.close()
        server.shutDown()
    }
}
