import Foundation
import PortRunLoopKit
import PortRunLoopTestSupport

// Helpers for the concurrency suites (LoopExecutorTests, AsyncPerformTests, MainQueueDrainTests,
// NotificationStreamTests). Every wait is bounded; none is used for ordering. Shared state uses
// `Locked` (TestSupport.swift), which ThreadSanitizer sees; `Synchronization.Mutex` it does not.

/// The calling thread's kernel id (the TID in `/proc/thread-self` → `PID/task/TID`): unlike a
/// `pthread_t`, it is not handed to a new thread as soon as the old one exits.
func kernelThreadID() -> Int32 {
    let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
    return Int32(link.split(separator: "/").last ?? "") ?? -1
}

/// A gate a loop's thread can be parked on (inside a perform block), so that work queued behind
/// it cannot start until the test opens it.
final class ConcurrencyGate: Sendable {
    private let entered = DispatchSemaphore(value: 0)
    private let opened = DispatchSemaphore(value: 0)

    /// Parks `loop`'s thread in a perform block; returns once the thread is surely parked there.
    func close(on loop: PortRunLoop) {
        loop.perform { [self] in
            entered.signal()
            _ = opened.wait(timeout: .now() + 50)
        }
        _ = entered.wait(timeout: .now() + 50)
    }

    func open() { opened.signal() }
}

/// A thread-safe ordered log.
final class ConcurrencyLog<Element: Sendable>: Sendable {
    private let items = Locked<[Element]>([])
    func append(_ element: Element) { items.withLock { $0.append(element) } }
    var values: [Element] { items.withLock { $0 } }
}

/// A thread that makes its `PortRunLoop.current`, never runs it, and exits when released, which
/// shuts the loop down (its thread-exit path, not ``RunLoopThread/stop()``).
final class BareLoopThread: Sendable {
    let loop: PortRunLoop
    /// The thread's kernel id.
    let threadID: Int32
    private let release = DispatchSemaphore(value: 0)

    init() {
        let handOut = Locked<(PortRunLoop, Int32)?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let release = self.release
        let thread = Thread {
            handOut.withLock { $0 = (PortRunLoop.current, kernelThreadID()) }
            ready.signal()
            _ = release.wait(timeout: .now() + 50)
        }
        thread.name = "bare-loop"
        thread.start()
        ready.wait()
        (loop, threadID) = handOut.withLock { $0! }
    }

    /// Lets the thread exit; its loop shuts down as it does.
    func exit() { release.signal() }
}
