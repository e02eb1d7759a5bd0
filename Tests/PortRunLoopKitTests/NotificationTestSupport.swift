import Foundation
import PortRunLoopKit
import Synchronization
import Testing
import PortRunLoopTestSupport

// Helpers for the notification tests. Every wait is bounded: a bound that passes fails
// the test instead of hanging it; no wait is used to order events.

/// Counts events and lets a test wait until a count is reached.
final class NotifCountdown: @unchecked Sendable {
    private let condition = NSCondition()
    private var count = 0 // guarded by `condition`

    func add(_ amount: Int = 1) {
        condition.lock()
        count += amount
        condition.broadcast()
        condition.unlock()
    }

    var value: Int {
        condition.lock()
        defer { condition.unlock() }
        return count
    }

    /// Waits until at least `target` events happened; false if `seconds` passed first.
    func wait(for target: Int, seconds: Double = 30) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while count < target {
            if !condition.wait(until: deadline) { return count >= target }
        }
        return true
    }
}

/// A thread-safe append-only log. (An `NSLock`, not a `Mutex`: ThreadSanitizer sees pthread locks
/// but not `Synchronization.Mutex`'s futex on Linux.)
final class NotifLog<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Element] = [] // guarded by `lock`
    func append(_ item: Element) { lock.withLock { items.append(item) } }
    var all: [Element] { lock.withLock { items } }
    var count: Int { lock.withLock { items.count } }
}

/// Runs `body` on a new Foundation thread named `name`; the returned signal fires when it is done.
@discardableResult
func notifSpawn(_ name: String, _ body: @escaping @Sendable () -> Void) -> Signal {
    let done = Signal()
    let thread = Thread {
        body()
        done.fire()
    }
    thread.name = name
    thread.start()
    return done
}

/// The calling thread's name ("" when unnamed).
var notifThreadName: String { Thread.current.name ?? "" }

extension Notification.Name {
    static let notifTestA = Notification.Name("NotificationTests.A")
    static let notifTestB = Notification.Name("NotificationTests.B")
    static let notifTestC = Notification.Name("NotificationTests.C")
}

/// The stderr text of an exit test's child ("" when not captured).
func notifStandardError(_ result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

/// A value shared between threads (a class around a lock, so closures can capture it).
final class NotifBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: Value // guarded by `lock`
    init(_ value: Value) { storage = value }
    var value: Value {
        get { lock.withLock { storage } }
        set { lock.withLock { storage = newValue } }
    }
}

/// A short description of how `got` differs from `0..<count` (failure messages must stay small).
func notifOrderReport(_ got: [Int], _ count: Int) -> String {
    if got == Array(0..<count) { return "in order" }
    let firstBad = zip(got, 0..<count).first { $0.0 != $0.1 }?.1 ?? min(got.count, count)
    return "\(got.count) of \(count) received, first difference at index \(firstBad)"
}
