import Synchronization

/// What a stress pipe's handler records, kept apart from the pipe so the handler (held by the fd
/// source, held by the pipe) does not retain the pipe, and the verifier can read it after every
/// thread joined.
///
/// Thread-safety: `Sendable`; the state is written by the handler on the consumer's thread under
/// its condition's lock, and read by the canceller and the verifier under the same lock.
final class StressPipeRecords: Sendable {
    struct State: Sendable {
        /// Every byte the handler read, in order.
        var delivered: [UInt8] = []
        /// Handler calls (held ones included).
        var calls = 0
        /// Set by the canceller: the handler returns without reading, so the fd stays ready and the
        /// loop calls the handler again on every turn (level-triggered) until the source is cancelled.
        var hold = false
        /// Handler calls that returned without reading because of ``hold``.
        var heldCalls = 0
        /// The consumer began retiring: its loop will shut down and cancel the source, so bytes
        /// still in the pipe need not be delivered (the delivered bytes must still be a prefix).
        var waived = false
        /// Read errors, unexpected end of file, events without `.read`.
        var errors: [String] = []
    }

    let state = StressCondition(State())
    let marker = StressCancelMarker()
    /// Handler calls on a thread other than the consumer loop's.
    let wrongThread = Atomic<Int>(0)

    /// Marks the pipe's consumer as retiring and wakes a canceller waiting for the handler.
    func waive() { state.update { $0.waived = true } }
}
