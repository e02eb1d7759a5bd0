import PortRunLoopKit

extension RunLoopThreadService {
    /// What a ``RunLoopThreadService`` lets its thread finish, once asked to stop, before it stops
    /// the thread.
    ///
    /// Either way the thread is stopped by `RunLoopThread.stop()`, whose rule always applies:
    /// everything queued on the loop before that call (perform blocks in the running mode, `submit`
    /// and `performAndWait` bodies, messages already sent to its ports) is handled, then the loop
    /// ends and is shut down. The drain decides only how long the loop keeps running first.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public struct Drain: Sendable, Equatable, CustomStringConvertible {
        enum Kind: Sendable, Equatable {
            case queuedWork
            case untilIdle(timeout: Duration)
        }

        let kind: Kind

        /// Stops the thread at once: the work queued before shutdown is handled (the stop rule),
        /// work that this work queues in turn may not be. The default.
        ///
        /// Thread-safety: a constant.
        public static let queuedWork = Drain(kind: .queuedWork)

        /// First keeps the loop running until it is idle, then stops it: until a round trip through
        /// the loop's queue (a `submit`) finds that the loop handled nothing else — no perform block,
        /// `submit` or `performAndWait` body, executor job, port message, timer or fd event — since
        /// the previous round trip, or until `timeout` has passed. For chains of work: a block that
        /// queues another, a handler that answers by sending to a port of the same loop. A repeating
        /// timer or a steady producer keeps the loop busy, so the drain then ends at `timeout`.
        /// Cancellation skips the drain (and ends one in progress); the stop rule still applies.
        ///
        /// Thread-safety: a value type.
        public static func untilIdle(timeout: Duration) -> Drain {
            Drain(kind: .untilIdle(timeout: timeout))
        }

        /// `queuedWork` or `untilIdle(timeout: …)`.
        ///
        /// Thread-safety: a value type.
        public var description: String {
            switch kind {
            case .queuedWork: "queuedWork"
            case .untilIdle(let timeout): "untilIdle(timeout: \(timeout))"
            }
        }

        /// Keeps `loop` running until it is idle or the timeout passed (nothing for `queuedWork`).
        func perform(on loop: PortRunLoop) async {
            guard case .untilIdle(let timeout) = kind, timeout > .zero else { return }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await Self.waitUntilIdle(loop) }
                group.addTask { try? await Task.sleep(for: timeout) }
                await group.next()
                group.cancelAll()
            }
        }

        /// Round trips until one finds the loop handled nothing else since the previous one. Each
        /// body reads the loop's counters on its thread, where they are exact: its own body is
        /// counted only after it returns, so between two bodies exactly one perform (the earlier
        /// body) means nothing else ran. Ends when the loop shuts down or the task is cancelled (a
        /// body that has not started is then withdrawn).
        private static func waitUntilIdle(_ loop: PortRunLoop) async {
            var previous: LoopMetrics?
            while !Task.isCancelled {
                guard let current = try? await loop.submit({ loop.metrics }) else { return }
                if let previous, isIdle(current.since(previous)) { return }
                previous = current
            }
        }

        private static func isIdle(_ delta: LoopMetrics) -> Bool {
            delta.performsRun == 1 && delta.messagesDelivered == 0 && delta.timersFired == 0
                && delta.fdEventsHandled == 0
        }
    }
}
