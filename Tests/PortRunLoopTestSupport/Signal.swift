import Foundation

/// A one-shot signal with a bounded wait, for "this happened on the other thread" checks.
///
/// Thread-safety: `Sendable`.
public final class Signal: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    /// A signal not yet fired.
    public init() {}

    /// Fires the signal (wakes one waiter, or the next one).
    public func fire() { semaphore.signal() }

    /// Waits at most `seconds` (a safety bound against hangs: tests never rely on it for ordering).
    public func wait(seconds: Double = 30) -> Bool { semaphore.wait(timeout: .now() + seconds) == .success }
}
