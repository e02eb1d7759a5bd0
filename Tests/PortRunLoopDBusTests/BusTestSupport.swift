import Foundation
import Logging
import PortRunLoopDBus
import PortRunLoopKit

/// A lock-protected value on `NSLock`, which ThreadSanitizer sees.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value // guarded by `lock`
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock(); defer { lock.unlock() }
        return try body(&value)
    }
}

/// Collects values from handlers and lets a test wait until it has `count` of them.
final class Collector<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element] = [] // guarded by `condition`

    func append(_ element: Element) {
        condition.lock()
        items.append(element)
        condition.broadcast()
        condition.unlock()
    }

    var values: [Element] {
        condition.lock(); defer { condition.unlock() }
        return items
    }

    /// Waits until at least `count` values arrived, at most `seconds` (a bound against hangs).
    @discardableResult
    func wait(for count: Int, seconds: Double = 20) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock(); defer { condition.unlock() }
        while items.count < count {
            if !condition.wait(until: deadline) { return items.count >= count }
        }
        return true
    }
}

/// A center on a private bus, its connection running on a loop thread of its own; closed and its
/// thread stopped by ``shutDown()``.
final class BusFixture: @unchecked Sendable {
    let bus: PrivateBus
    let thread: RunLoopThread
    let center: BusNotificationCenter

    init(heldNotificationLimit: Int = BusNotificationCenter.defaultHeldNotificationLimit, bus: PrivateBus? = nil,
         logger: Logger = BusNotificationCenter.disabledLogger) throws {
        self.bus = try bus ?? PrivateBus()
        thread = try RunLoopThread(name: "bus-center")
        center = try BusNotificationCenter(endpoint: self.bus.endpoint, loop: thread.loop,
                                           logger: logger, heldNotificationLimit: heldNotificationLimit)
    }

    /// Another center on the same bus, on the same loop thread (another "process" on the bus).
    func secondCenter() throws -> BusNotificationCenter {
        try BusNotificationCenter(endpoint: bus.endpoint, loop: thread.loop)
    }

    /// A round trip through the bus: returns once everything `center` posted before has been
    /// received back (the bus keeps one sender's order).
    func sync(_ other: BusNotificationCenter? = nil) throws {
        let poster = other ?? center
        let token = "sync-\(UUID().uuidString)"
        let seen = Collector<Int>()
        let observation = try center.addObserver(forName: .init(token), suspensionBehavior: .deliverImmediately, on: thread.loop) { _ in
            seen.append(1)
        }
        try poster.post(name: .init(token), deliverImmediately: true)
        _ = seen.wait(for: 1)
        observation.remove()
    }

    func shutDown() {
        center.close()
        thread.stop()
        bus.stop()
    }
}
