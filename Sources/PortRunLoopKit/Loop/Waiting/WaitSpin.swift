#if canImport(Glibc)
import Glibc
#endif

/// How long a thread without a loop spins for the answer to its
/// ``PortRunLoop/performAndWait(timeout:_:)`` before it parks: the thread's own ``IdleSpin``, made on
/// its first blocking call and kept until it exits. It spins the way a loop does before it parks:
/// only while spinning pays, that is, while calls are answered within microseconds (a loop thread
/// that is itself spinning answers in a microsecond or two).
///
/// Thread-safety: not `Sendable`; thread-bound: reached only through ``current``, by its own thread.
final class WaitSpin {
    /// When to spin for an answer.
    private var idleSpin = IdleSpin()

    /// Spins (yielding the CPU) for `done` as far as ``IdleSpin`` allows, never past `deadline`.
    /// True when `done` became true; false when the caller must sleep.
    func spin(from start: Double, until deadline: Double, for done: () -> Bool) -> Bool {
        let allowance = idleSpin.allowance
        guard allowance > 0 else { return false }
        let end = min(start + allowance, deadline)
        while true {
            if done() {
                idleSpin.spun(for: System.monotonicSeconds() - start, found: true, inConversation: true)
                return true
            }
            let now = System.monotonicSeconds()
            if now >= end {
                idleSpin.spun(for: now - start, found: false, inConversation: true)
                return false
            }
            sched_yield()
        }
    }

    /// Records how soon a call that this thread slept for was answered (`.infinity`: it was not);
    /// waiting for an answer is a conversation (``IdleSpin``).
    func record(answeredAfter seconds: Double) { idleSpin.slept(gap: seconds, inConversation: true, backlog: false) }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let rc = pthread_key_create(&key) { raw in
            guard let raw else { return }
            Unmanaged<WaitSpin>.fromOpaque(raw).release()
        }
        InternalFailure.check(rc == 0, "pthread_key_create failed, errno \(rc)")
        return key
    }()

    /// The calling thread's spin state.
    static var current: WaitSpin {
        if let raw = pthread_getspecific(key) { return Unmanaged<WaitSpin>.fromOpaque(raw).takeUnretainedValue() }
        let spin = WaitSpin()
        pthread_setspecific(key, Unmanaged.passRetained(spin).toOpaque())
        return spin
    }
}
