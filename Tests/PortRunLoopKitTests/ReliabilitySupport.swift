import Foundation
import PortRunLoopKit
import PortRunLoopStressEngine
import Synchronization
import Testing
import PortRunLoopTestSupport

// Helpers for the reliability tests: misuse, teardown, stress and model tests.

/// A thread-safe counter for handler calls.
final class CallCounter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// Expectations checked on a thread other than the test's: swift-testing attributes `#expect` only
/// inside the test's own task, so they are collected here and recorded on the test's thread.
final class ThreadChecks: Sendable {
    private let failures = Locked<[(String, SourceLocation)]>([])

    func expect(_ condition: Bool, _ message: @autoclosure () -> String = "",
                sourceLocation: SourceLocation = #_sourceLocation) {
        if !condition { failures.withLock { $0.append((message(), sourceLocation)) } }
    }

    func recordIssues() {
        for (message, location) in failures.withLock({ $0 }) {
            Issue.record(Comment(rawValue: message.isEmpty ? "expectation failed" : message), sourceLocation: location)
        }
    }
}

/// Runs `body` on a brand-new thread (so `PortRunLoop.current` is a brand-new loop that only this
/// test uses), waits for it, and records the body's failed checks against the test.
func onLoopThread<T: Sendable>(_ body: @escaping @Sendable (ThreadChecks) throws -> T) throws -> T {
    let checks = ThreadChecks()
    defer { checks.recordIssues() }
    return try JoinableThread.run(name: "test-loop") { try body(checks) }
}

/// Runs `body` on a thread of its own and awaits it, so a long-running test does not hold one of
/// the few (one per core) cooperative threads swift-testing runs tests on — holding them starves
/// async tests running in parallel.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}
