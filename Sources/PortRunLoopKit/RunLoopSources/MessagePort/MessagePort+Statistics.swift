extension MessagePort {
    /// Counts since the port was made.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public struct Statistics: Sendable, Equatable {
        /// Messages accepted by `send`. Thread-safety: a value type.
        public var sent: Int
        /// Messages handed to a handler, counted when the batch they were delivered in ends (a
        /// handler reading it sees the earlier batches'). Thread-safety: a value type.
        public var delivered: Int
        /// Sends that returned false (full until the date, or invalid port). Thread-safety: a value type.
        public var rejected: Int
        /// Accepted messages dropped: the port was invalidated before delivery, or there was nobody to
        /// hand them to (no handler, delegate gone). Thread-safety: a value type.
        public var discarded: Int
        /// Messages waiting for the loop right now. Thread-safety: a value type.
        public var queued: Int
    }

    /// A snapshot of this port's counts.
    ///
    /// Thread-safety: any thread.
    public var statistics: Statistics {
        withLock {
            Statistics(sent: state.sent, delivered: deliveredCounter.value + state.deliveredAfterLeaving, rejected: state.rejected,
                       discarded: state.discarded + ownerDiscardedCounter.value, queued: state.queue.count)
        }
    }
}
