import Foundation

/// Runs `body` on a brand-new thread (so it gets a brand-new `PortRunLoop.current`) and returns its
/// result. swift-testing reuses pool threads, whose loops would otherwise carry sources and state
/// from one test into the next.
///
/// Thread-safety: any thread; blocks until `body` returns.
public func onFreshThread<T: Sendable>(name: String = "test-owner", _ body: @escaping @Sendable () throws -> T) throws -> T {
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
