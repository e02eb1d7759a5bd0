import Foundation

/// Runs `body` on a brand-new thread (so it gets a brand-new `PortRunLoop.current`) and returns its
/// result. swift-testing reuses pool threads, whose loops would otherwise carry state between tests.
func onFreshThread<T: Sendable>(name: String, _ body: @escaping @Sendable () throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        Thread.current.name = name
        box.set(Result { try body() })
        done.signal()
    }
    thread.start()
    done.wait()
    return try box.get()
}

/// A result handed from one thread to another under an `NSLock` (which ThreadSanitizer sees,
/// unlike `Synchronization.Mutex` on Linux).
private final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<T, any Error>? // guarded by `lock`

    func set(_ value: Result<T, any Error>) {
        lock.lock(); defer { lock.unlock() }
        result = value
    }

    func get() throws -> T {
        lock.lock(); defer { lock.unlock() }
        return try result!.get()
    }
}
