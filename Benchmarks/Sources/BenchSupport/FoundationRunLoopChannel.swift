import CBenchSupport
import Foundation
import Synchronization

/// Foundation's `RunLoop.perform` on a thread that runs `RunLoop.current`, plus an explicit wake.
///
/// On Linux `RunLoop.perform(inModes:block:)` (CFRunLoopPerformBlock) queues the block but does
/// not wake a sleeping run loop, and swift-corelibs-foundation does not expose CoreFoundation to
/// Swift. `CFRunLoopGetCurrent`/`CFRunLoopWakeUp` are nonetheless exported by libFoundation.so, so
/// CBenchSupport declares them (with `void *` for `CFRunLoopRef`) and we call `CFRunLoopWakeUp`
/// after every `perform` (the straightforward user code, and what Darwin's `performSelector:
/// onThread:` does). The thread keeps its run loop alive with a far-future repeating `Timer`.
///
/// Thread-safety: `Sendable`; ``send()`` from any thread.
public final class FoundationRunLoopChannel: MessageChannel, @unchecked Sendable {
    private let receiver: Receiver
    private let signals = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private var thread: BenchThread!
    // Written by the consumer thread before `ready` is signalled; read-only afterwards.
    nonisolated(unsafe) private var runLoop: RunLoop!
    private var cfRunLoop: UnsafeMutableRawPointer!
    private let ready = Completion()

    /// Starts the run loop thread and waits until it runs.
    public init(receiver: Receiver) {
        self.receiver = receiver
        thread = BenchThread { [self] in consume() }
        ready.wait()
    }

    public func send() {
        runLoop.perform(inModes: [.default]) { [receiver] in receiver.receive() }
        signals.add(1, ordering: .relaxed)
        CFRunLoopWakeUp(cfRunLoop)
    }

    public var wakeSignals: Int? { signals.load(ordering: .relaxed) }

    public func shutDown() {
        // A performed block is not a source: `run(mode:before:)` does not return after it. Stop the
        // run loop explicitly (CFRunLoopStop, also exported by libFoundation.so).
        stopping.store(true, ordering: .releasing)
        CFRunLoopStop(cfRunLoop)
        CFRunLoopWakeUp(cfRunLoop)
        thread.join()
    }

    private func consume() {
        let current = RunLoop.current
        let keepAlive = Timer(timeInterval: 1_000_000, repeats: true) { _ in }
        current.add(keepAlive, forMode: .default)
        runLoop = current
        cfRunLoop = CFRunLoopGetCurrent()
        ready.signal()
        while !stopping.load(ordering: .acquiring) {
            _ = current.run(mode: .default, before: .distantFuture)
        }
        keepAlive.invalidate()
    }
}
