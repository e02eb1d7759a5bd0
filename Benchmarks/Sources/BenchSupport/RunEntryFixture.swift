#if canImport(Glibc)
import Glibc
#endif
import Benchmark
import Foundation
import PortRunLoopKit
import Synchronization

/// The Foundation idiom's fixed cost: a thread that owns a loop with `idle` fd sources and `timers`
/// far-future timers enters and leaves `run(mode:before:)` (a past date: one polling turn each)
/// ``RunEntryFixture/entries`` times per sample. Reports the `event_add` + `event_del` calls the
/// loop made (``BenchMetrics/eventRegistrations``): entering and leaving a run of the mode already
/// armed must make none, however many sources are registered.
///
/// Thread-safety: `Sendable`; driven from the benchmark thread.
public final class RunEntryFixture: @unchecked Sendable {
    /// Run entries per sample.
    public static let entries = 1_000

    private final class Control: Sendable {
        let go = Completion()
        let done = Completion()
        let quit = Atomic<Bool>(false)
        let registrations = Atomic<Int>(0)
    }

    private let control = Control()
    private let thread: BenchThread

    /// Registers the sources on a new thread's loop (idle fds share 500 pipes, several sources per
    /// fd, to stay below the process's fd limit).
    ///
    /// Thread-safety: any thread.
    public init(idle: Int, timers: Int) {
        let control = self.control
        let ready = Completion()
        thread = BenchThread {
            let loop = PortRunLoop.current
            var pipes: [Int32] = []
            if idle > 0 {
                for _ in 0..<500 {
                    var fds: [Int32] = [0, 0]
                    precondition(pipe(&fds) == 0, "RunEntryFixture: pipe failed, errno \(errno)")
                    pipes += fds
                }
            }
            var sources: [FileDescriptorSource] = []
            for index in 0..<idle {
                sources.append(try! loop.watch(fileDescriptor: pipes[index % pipes.count], for: .read, inModes: [.default]) { _ in })
            }
            var armed: [RunLoopTimer] = []
            for _ in 0..<timers {
                let timer = RunLoopTimer(fireAt: Date(timeIntervalSinceNow: 3600)) { _ in }
                loop.add(timer, forMode: .default)
                armed.append(timer)
            }
            let past = Date(timeIntervalSinceNow: -1)
            loop.run(mode: .default, before: past) // registrations applied
            ready.signal()
            while true {
                control.go.wait()
                if control.quit.load(ordering: .acquiring) { break }
                let before = loop.metrics
                for _ in 0..<Self.entries { loop.run(mode: .default, before: past) }
                let spent = loop.metrics.since(before)
                control.registrations.store(spent.eventAdds + spent.eventDeletes, ordering: .releasing)
                control.done.signal()
            }
            for source in sources { source.cancel() }
            for timer in armed { timer.invalidate() }
            loop.run(mode: .default, before: past)
            for fd in pipes { close(fd) }
        }
        ready.wait()
    }

    func runSample(_ benchmark: Benchmark) {
        benchmark.startMeasurement()
        control.go.signal()
        control.done.wait()
        benchmark.stopMeasurement()
        benchmark.measurement(BenchMetrics.operations, Self.entries)
        benchmark.measurement(BenchMetrics.eventRegistrations, control.registrations.load(ordering: .acquiring))
    }

    func shutDown() {
        control.quit.store(true, ordering: .releasing)
        control.go.signal()
        thread.join()
    }
}

extension Scenarios {
    /// `RunEntry.<peer>`: ``RunEntryFixture`` with `idle` fd sources and `timers` timers.
    public static func runEntry(_ peer: String, idle: Int, timers: Int, maxIterations: Int = 100) {
        let box = FixtureBox<RunEntryFixture>()
        Benchmark(
            "RunEntry.\(peer)",
            configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal, BenchMetrics.operations, BenchMetrics.eventRegistrations],
                                 warmupIterations: 2, scalingFactor: .kilo,
                                 maxDuration: .seconds(2), maxIterations: maxIterations),
            closure: { benchmark in box.fixture!.runSample(benchmark) },
            setup: { box.fixture = RunEntryFixture(idle: idle, timers: timers) },
            teardown: { box.fixture?.shutDown(); box.fixture = nil }
        )
    }
}
