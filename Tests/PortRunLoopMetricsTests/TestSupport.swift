import Foundation
import Synchronization

/// Runs `body` on a brand-new thread (so it gets a brand-new `PortRunLoop.current`) and returns its
/// result. swift-testing reuses pool threads, whose loops would otherwise carry state between tests.
func onFreshThread<T: Sendable>(name: String, _ body: @escaping @Sendable () throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        Thread.current.name = name
        let outcome = Result { try body() }
        result.withLock { $0 = outcome }
        done.signal()
    }
    thread.start()
    done.wait()
    return try result.withLock { $0! }.get()
}
