/// Why a running ``RunLoopThreadService`` goes on to stop its thread: the first of "the thread
/// ended" and "graceful shutdown or cancellation asked for it" to happen. The service waits for it
/// as a `PendingResult<StopCause>`, the core's one-shot result (the first cause set wins).
///
/// Thread-safety: `Sendable`; a value type.
enum StopCause: Sendable, Equatable {
    case threadEnded
    case stopRequested
}
