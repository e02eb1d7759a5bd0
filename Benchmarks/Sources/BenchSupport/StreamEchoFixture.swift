#if canImport(Glibc)
import Glibc
#endif
import Benchmark
import CBenchNative
import PeerSupport
import PortRunLoopKit
import Synchronization

extension Scenarios {
    /// What a stream-echo round trip sends, and so which path of the connection it takes.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public enum StreamEchoShape: String, Sendable {
        /// 64-byte requests: each echo goes straight to the kernel.
        case direct = "Direct"
        /// 32 KiB requests to a client whose receive buffer is 4 KiB, from a server connection
        /// whose send buffer is 4 KiB: each echo is a partial write, the rest queued in the
        /// connection's outbound queue and flushed as the client reads.
        case queued = "Queued"

        var requestSize: Int { self == .direct ? 64 : 32 * 1024 }
        /// Round trips per sample: about half a second each on 2 vCPUs (a queued echo waits for
        /// the client's small window several times).
        var roundTrips: Int { self == .direct ? 10_000 : 1_000 }
        var smallBuffers: Bool { self == .queued }
    }

    /// Registers `StreamEcho.Ours.<shape>`: a ``StreamListener`` on a ``RunLoopThread`` whose
    /// connection echoes (`onRead = { $0.write($1) }`), and one client on the benchmark's thread
    /// with a blocking socket (whose calls allocate nothing), 10,000 round trips per sample
    /// (queued: 1,000) after the warm-up. Every malloc of the process in the sample is the connection's
    /// reads and writes (and the loop's turns around them): the guard's steady state is 0. Also
    /// reports `queuedWrites`, the echoes that left bytes queued (the queued shape checks there
    /// were some, so its guard measures the queue's path).
    ///
    /// Thread-safety: call from the benchmark registration closure only.
    public static func streamEcho(_ shape: StreamEchoShape, maxIterations: Int = 20) {
        let box = FixtureBox<StreamEchoFixture>()
        Benchmark(
            "StreamEcho.Ours.\(shape.rawValue)",
            configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal, BenchMetrics.queuedWrites,
                                           BenchMetrics.contextSwitches, BenchMetrics.operations],
                                 warmupIterations: 2, scalingFactor: .kilo, maxDuration: .seconds(5),
                                 maxIterations: maxIterations),
            closure: { benchmark in box.fixture!.runSample(benchmark) },
            setup: { box.fixture = try StreamEchoFixture(shape: shape) },
            teardown: { box.fixture?.shutDown(); box.fixture = nil }
        )
    }
}

/// A stream connection echoing to a blocking client (see ``Scenarios/streamEcho(_:maxIterations:)``).
final class StreamEchoFixture {
    private let shape: Scenarios.StreamEchoShape
    private let thread: RunLoopThread
    private let listener: StreamListener
    private let client: Int32
    private let request: UnsafeMutableRawBufferPointer
    private let reply: UnsafeMutableRawBufferPointer
    private let queuedWrites = Counter()

    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    init(shape: Scenarios.StreamEchoShape) throws {
        self.shape = shape
        thread = try RunLoopThread(name: "bench.stream-echo")
        var options = StreamListener.Options()
        if shape.smallBuffers { options.connection.sendBufferSize = 4096 }
        let queued = queuedWrites
        do {
            listener = try StreamListener(on: .host("127.0.0.1", port: 0), loop: thread.loop, options: options) { connection in
                connection.onRead = { connection, bytes in
                    connection.write(bytes)
                    if connection.queuedByteCount > 0 { queued.value.add(1, ordering: .relaxed) }
                }
            }
        } catch {
            thread.stop()
            throw error
        }
        client = cbench_tcp_connect_loopback(Int32(listener.localEndpoint.port ?? 0), shape.smallBuffers ? 4096 : 0)
        precondition(client >= 0, "StreamEchoFixture: connect failed, errno \(errno)")
        request = .allocate(byteCount: shape.requestSize, alignment: 16)
        request.initializeMemory(as: UInt8.self, repeating: 0x78)
        reply = .allocate(byteCount: shape.requestSize, alignment: 16)
    }

    func runSample(_ benchmark: Benchmark) {
        let rounds = shape.roundTrips
        let queuedBefore = queuedWrites.value.load(ordering: .relaxed)
        let switches = ProcessCounters.contextSwitches()
        benchmark.startMeasurement()
        for _ in 0..<rounds {
            transfer(request, write: true)
            transfer(reply, write: false)
        }
        benchmark.stopMeasurement()
        let queued = queuedWrites.value.load(ordering: .relaxed) - queuedBefore
        precondition(shape != .queued || queued > 0,
                     "\(benchmark.name): no echo was queued; the sample did not take the outbound queue's path")
        benchmark.measurement(BenchMetrics.queuedWrites, queued)
        record(benchmark, operations: rounds, contextSwitches: ProcessCounters.contextSwitches() - switches, wakeSignals: nil)
    }

    /// Writes all of `buffer`, or reads until it is full (blocking).
    private func transfer(_ buffer: UnsafeMutableRawBufferPointer, write: Bool) {
        var done = 0
        while done < buffer.count {
            let n = write ? Glibc.write(client, buffer.baseAddress! + done, buffer.count - done)
                : Glibc.read(client, buffer.baseAddress! + done, buffer.count - done)
            if n < 0 && errno == EINTR { continue }
            precondition(n > 0, "StreamEchoFixture: \(write ? "write" : "read") failed (\(n)), errno \(errno)")
            done += n
        }
    }

    func shutDown() {
        _ = Glibc.close(client)
        listener.close()
        thread.stop()
        request.deallocate()
        reply.deallocate()
    }
}
