import Foundation
import PortRunLoopStressEngine

/// Runs `body` on a brand-new thread (so it gets a brand-new `PortRunLoop.current`) and returns its
/// result. swift-testing reuses pool threads, whose loops would otherwise carry sources and state
/// from one test into the next. The thread is a ``JoinableThread``: when this returns it has been
/// joined (its thread-local destructors have run). Waits at most `timeout` seconds: a body still
/// running then is left alone and ``JoinableThread/TimedOut`` is thrown, so a hung body fails its
/// test instead of hanging the suite.
///
/// Thread-safety: any thread; blocks until `body` returns or `timeout` passes.
public func onFreshThread<T: Sendable>(name: String = "test-owner", timeout: Double = 60,
                                       _ body: @escaping @Sendable () throws -> T) throws -> T {
    try JoinableThread.run(name: name, timeout: timeout, body)
}
