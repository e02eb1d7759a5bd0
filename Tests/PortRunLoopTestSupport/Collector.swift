import Foundation

/// Collects values from handlers and lets a test wait for a condition on them, bounded in time.
///
/// Thread-safety: `Sendable`; `items` is guarded by `condition`.
public final class Collector<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element] = [] // guarded by `condition`

    /// An empty collector.
    public init() {}

    /// Adds `element` and wakes the waiters.
    public func append(_ element: Element) {
        condition.lock()
        items.append(element)
        condition.broadcast()
        condition.unlock()
    }

    /// Everything collected so far, oldest first.
    public var values: [Element] {
        condition.lock(); defer { condition.unlock() }
        return items
    }

    /// Waits until at least `count` values arrived, at most `seconds`.
    @discardableResult
    public func wait(for count: Int, seconds: Double = 20) -> Bool {
        wait(seconds: seconds) { $0.count >= count }
    }

    /// Waits until `predicate` holds for the values, at most `seconds`.
    @discardableResult
    public func wait(seconds: Double = 20, until predicate: ([Element]) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock(); defer { condition.unlock() }
        while !predicate(items) {
            if !condition.wait(until: deadline) { return predicate(items) }
        }
        return true
    }
}
