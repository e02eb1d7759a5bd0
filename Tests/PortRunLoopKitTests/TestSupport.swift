import Foundation
import PortRunLoopKit
import Synchronization
import Testing

/// Runs `body` on a brand-new thread (so it gets a brand-new `PortRunLoop.current`) and returns its
/// result. swift-testing reuses pool threads, whose loops would otherwise leak sources between tests.
func onFreshThread<T: Sendable>(name: String = "test-owner", _ body: @escaping @Sendable () throws -> T) throws -> T {
    let result = Locked<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        // corelibs ignores a name set before start(); set it from inside.
        Thread.current.name = name
        let r = Result { try body() }
        result.withLock { $0 = r }
        done.signal()
    }
    thread.start()
    done.wait()
    return try result.withLock { $0! }.get()
}

/// A lock-protected value with `Mutex`'s `withLock` API, on `NSLock` so ThreadSanitizer sees it
/// (`Synchronization.Mutex` is a futex inside the uninstrumented stdlib on Linux: false reports).
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value // guarded by `lock`
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock(); defer { lock.unlock() }
        return try body(&value)
    }
}

/// A one-shot signal with a bounded wait, for "this happened on the other thread" checks.
final class Signal: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    func fire() { semaphore.signal() }
    /// Waits at most `seconds` (a safety bound against hangs: tests never rely on it for ordering).
    func wait(seconds: Double = 30) -> Bool { semaphore.wait(timeout: .now() + seconds) == .success }
}

/// Holds `thread`'s loop inside a block until the returned signal fires, so a test can queue work
/// behind it deterministically. Returns after the loop has entered the block.
func holdLoop(_ thread: RunLoopThread) -> Signal {
    let entered = Signal()
    let release = Signal()
    thread.loop.perform {
        entered.fire()
        _ = release.wait(seconds: 60)
    }
    _ = entered.wait()
    return release
}

/// A thread-safe list, for recording what handlers saw.
final class Recorder<Element: Sendable>: Sendable {
    private let items = Locked<[Element]>([])
    func append(_ element: Element) { items.withLock { $0.append(element) } }
    var values: [Element] { items.withLock { $0 } }
    var count: Int { items.withLock { $0.count } }
}

/// A pipe whose ends are closed on deinit.
final class Pipe2: Sendable {
    let readEnd: Int32
    let writeEnd: Int32
    init() {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0)
        readEnd = fds[0]
        writeEnd = fds[1]
    }
    func write(_ byte: UInt8) { var b = byte; _ = Foundation.write(writeEnd, &b, 1) }
    func readByte() -> UInt8? { var b: UInt8 = 0; return read(readEnd, &b, 1) == 1 ? b : nil }
    deinit { close(readEnd); close(writeEnd) }
}

/// Runs `body` on a new pthread and joins it: when this returns, the thread has fully exited
/// (thread-local destructors included).
func runAndJoinThread(_ body: @escaping @Sendable () -> Void) throws {
    final class Box { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
    var thread = pthread_t()
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    let rc = pthread_create(&thread, nil, { raw in
        Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
        return nil
    }, context)
    try #require(rc == 0)
    pthread_join(thread, nil)
}
