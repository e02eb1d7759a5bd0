import Benchmark
import PeerSupport

extension Scenarios {
    /// Handshakes per sample (at most: see ``tlsHandshakeCap``).
    ///
    /// Thread-safety: a constant.
    public static let tlsHandshakes = 4000
    /// After this long a handshake sample starts no new handshake.
    ///
    /// Thread-safety: a constant.
    public static let tlsHandshakeCap: Duration = .milliseconds(1500)
    /// Client threads of the handshake scenario.
    ///
    /// Thread-safety: a constant.
    public static let tlsClientThreads = 2
    /// The bytes each handshake's connection sends and reads back.
    ///
    /// Thread-safety: a constant.
    public static let tlsHandshakePayload = 64
    /// Bytes echoed per bulk sample.
    ///
    /// Thread-safety: a constant.
    public static let tlsBulkBytes = 64 << 20
    /// The client's write size in the bulk scenario: one full TLS record.
    ///
    /// Thread-safety: a constant.
    public static let tlsBulkChunk = 16 << 10
    /// Bytes the bulk client keeps in flight at most (sent, not yet back).
    ///
    /// Thread-safety: a constant.
    public static let tlsBulkWindow = 1 << 20

    /// Makes a TLS echo server with the scenario's certificate.
    ///
    /// Thread-safety: called from the benchmark's set-up, on its thread.
    public typealias TLSServerFactory = @Sendable (TLSBenchCertificate) throws -> any EchoServer

    /// Registers `TLSEcho.Handshakes.<name>`: ``tlsClientThreads`` C client threads connect, make a
    /// full TLS 1.3 handshake (ECDSA P-256 certificate, X25519, TLS_AES_128_GCM_SHA256, no
    /// resumption), send ``tlsHandshakePayload`` bytes and read them back, exchange close_notify
    /// and close, again and again: up to ``tlsHandshakes`` per sample. Reports `requestsPerSecond`
    /// (handshakes per second), `serverCPUNs` (the server thread's CPU time), mallocs (process-wide:
    /// the client's are the same for every server), context switches and `operations` (handshakes).
    ///
    /// Thread-safety: call from the benchmark registration closure only.
    public static func tlsHandshakes(_ name: String, make: @escaping TLSServerFactory) {
        let box = FixtureBox<TLSHandshakeFixture>()
        Benchmark(
            "TLSEcho.Handshakes.\(name)",
            configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal, BenchMetrics.requestsPerSecond,
                                           BenchMetrics.serverCPUNs, BenchMetrics.contextSwitches, BenchMetrics.operations],
                                 warmupIterations: 1, scalingFactor: .kilo, maxDuration: .seconds(10), maxIterations: 10),
            closure: { benchmark in box.fixture!.runSample(benchmark) },
            setup: { box.fixture = try TLSHandshakeFixture(make: make) },
            teardown: { box.fixture?.shutDown(); box.fixture = nil }
        )
    }

    /// Registers `TLSEcho.Bulk.<name>`: one TLS connection (made before the samples), on which the
    /// C client writes ``tlsBulkBytes`` in ``tlsBulkChunk``-byte writes and reads the echo back as
    /// it comes, at most ``tlsBulkWindow`` in flight. Reports `serverCPUNs`, mallocs, context
    /// switches and `operations` (MiB echoed).
    ///
    /// Thread-safety: call from the benchmark registration closure only.
    public static func tlsBulk(_ name: String, make: @escaping TLSServerFactory) {
        let box = FixtureBox<TLSBulkFixture>()
        Benchmark(
            "TLSEcho.Bulk.\(name)",
            configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal, BenchMetrics.serverCPUNs,
                                           BenchMetrics.contextSwitches, BenchMetrics.operations],
                                 warmupIterations: 1, scalingFactor: .one, maxDuration: .seconds(10), maxIterations: 10),
            closure: { benchmark in box.fixture!.runSample(benchmark) },
            setup: { box.fixture = try TLSBulkFixture(make: make) },
            teardown: { box.fixture?.shutDown(); box.fixture = nil }
        )
    }
}

/// A TLS echo server, its certificate and the client.
class TLSEchoFixture {
    let certificate: TLSBenchCertificate
    let server: any EchoServer
    let client: TLSEchoClient

    init(make: Scenarios.TLSServerFactory) throws {
        certificate = try TLSBenchCertificate()
        server = try make(certificate)
        do {
            client = try TLSEchoClient(port: server.port)
        } catch {
            server.shutDown()
            throw error
        }
    }

    /// The server threads' CPU time so far, summed.
    func serverCPUNanoseconds() -> UInt64 {
        server.serverThreadClocks.reduce(0) { $0 + ProcessCounters.cpuNanoseconds(of: $1) }
    }

    func shutDown() {
        client.close()
        server.shutDown()
    }
}

/// See ``Scenarios/tlsHandshakes(_:make:)``.
final class TLSHandshakeFixture: TLSEchoFixture {
    func runSample(_ benchmark: Benchmark) {
        let switches = ProcessCounters.contextSwitches()
        let serverCPU = serverCPUNanoseconds()
        let start = ProcessCounters.nanoseconds()
        benchmark.startMeasurement()
        let completed = client.handshakes(count: Scenarios.tlsHandshakes, cap: Scenarios.tlsHandshakeCap,
                                          threads: Scenarios.tlsClientThreads, payload: Scenarios.tlsHandshakePayload)
        benchmark.stopMeasurement()
        let elapsed = ProcessCounters.nanoseconds() - start
        precondition(completed > 0, "\(benchmark.name): no handshake completed")
        benchmark.measurement(BenchMetrics.requestsPerSecond, Int(Double(completed) * 1e9 / Double(elapsed)))
        benchmark.measurement(BenchMetrics.serverCPUNs, Int(serverCPUNanoseconds() - serverCPU))
        record(benchmark, operations: completed, contextSwitches: ProcessCounters.contextSwitches() - switches,
               wakeSignals: nil)
    }
}

/// See ``Scenarios/tlsBulk(_:make:)``.
final class TLSBulkFixture: TLSEchoFixture {
    override init(make: Scenarios.TLSServerFactory) throws {
        try super.init(make: make)
        do {
            try client.openStream()
        } catch {
            shutDown()
            throw error
        }
    }

    func runSample(_ benchmark: Benchmark) {
        let switches = ProcessCounters.contextSwitches()
        let serverCPU = serverCPUNanoseconds()
        benchmark.startMeasurement()
        client.echo(bytes: Scenarios.tlsBulkBytes, chunk: Scenarios.tlsBulkChunk, window: Scenarios.tlsBulkWindow)
        benchmark.stopMeasurement()
        benchmark.measurement(BenchMetrics.serverCPUNs, Int(serverCPUNanoseconds() - serverCPU))
        record(benchmark, operations: Scenarios.tlsBulkBytes >> 20,
               contextSwitches: ProcessCounters.contextSwitches() - switches, wakeSignals: nil)
    }
}
