import Foundation

/// Runs `body` on a brand-new thread (so it gets a brand-new `PortRunLoop.current`) and returns its
/// result. swift-testing reuses pool threads, whose loops would otherwise carry sources and state
/// from one test into the next.
///
/// Waits at most `timeout` seconds: a body still running then is left alone and
/// ``FreshThreadTimedOut`` is thrown, so a hung body fails its test instead of hanging the suite.
///
/// Thread-safety: any thread; blocks until `body` returns or `timeout` passes.
public func onFreshThread<T: Sendable>(name: String = "test-owner", timeout: Double = 60,
                                       _ body: @escaping @Sendable () throws -> T) throws -> T {
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
    guard done.wait(timeout: .now() + timeout) == .success else { throw FreshThreadTimedOut(name: name, seconds: timeout) }
    return try result.withLock { $0! }.get()
}

/// ``onFreshThread(name:timeout:_:)``'s body did not return in time.
///
/// Thread-safety: `Sendable`; immutable.
public struct FreshThreadTimedOut: Error, CustomStringConvertible, Sendable {
    /// The thread's name.
    public let name: String
    /// How long the caller waited.
    public let seconds: Double
    /// Thread-safety: immutable.
    public var description: String { "the body run on thread '\(name)' did not return within \(seconds) s" }
}
