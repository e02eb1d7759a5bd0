#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// One ``PortRunLoop/performAndWait(timeout:_:)`` in flight: one allocation (this object), nothing
/// else per call.
///
/// State machine, one atomic word: `pending` → `claimed` → `finished` | `withdrawn`. Whoever moves
/// it out of `pending` (compare-exchange) owns the body from then on: the loop's thread to run it,
/// or the waiter (timeout) or the loop (shutdown) to withdraw it. The owner drops the body, writes
/// the result or the error, and publishes with a releasing store of the final state; the waiter
/// reads them after an acquiring load. The body is dropped before the final state is published,
/// which `withoutActuallyEscaping` requires: once the waiter returns, nothing may refer to it.
///
/// The waiter is woken through its own loop when it has one (it is then running the private
/// `.synchronousWait` mode and serving calls made to it), or else through the ``ParkingLot``, keyed
/// by the call's address (after spinning as its thread's ``WaitSpin`` allows).
///
/// Thread-safety: `Sendable`; `body`, `result` and `error` are guarded by the state word as above.
/// The body runs on the target loop's thread only.
final class SynchronousCall<T: Sendable>: SynchronousCallProtocol, @unchecked Sendable {
    private static var pending: Int { 0 }
    private static var claimed: Int { 1 }
    private static var finished: Int { 2 }
    private static var withdrawn: Int { 3 }

    private let state = Atomic<Int>(0)
    private var body: (@Sendable () throws -> T)?
    private var result: Result<T, any Error>?
    private var error: PortRunLoopError?
    /// When the call finished or was withdrawn (monotonic seconds), for ``WaitSpin``.
    private var completedAt = 0.0
    private let waiterLoop: PortRunLoop?

    init(body: @escaping @Sendable () throws -> T, waiter: PortRunLoop?) {
        self.body = body
        self.waiterLoop = waiter
    }

    private var key: UnsafeRawPointer { UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()) }

    private func claim() -> Bool {
        state.compareExchange(expected: Self.pending, desired: Self.claimed, ordering: .acquiring).exchanged
    }

    func run() {
        guard claim() else { return }
        // Taken out, called and released inside this function, before the result is published.
        let result = Self.call(take(&body)!)
        self.result = result
        publish(Self.finished)
    }

    private static func call(_ body: @Sendable () throws -> T) -> Result<T, any Error> {
        Result { try body() }
    }

    func fail(_ error: PortRunLoopError) {
        guard claim() else { return }
        body = nil
        self.error = error
        publish(Self.withdrawn)
    }

    /// Stores the final state and wakes the waiter: its loop, or the parking lot (the store comes
    /// first, and the waiter checks the state with the slot locked, so the wake-up cannot be missed).
    private func publish(_ final: Int) {
        if let waiterLoop {
            state.store(final, ordering: .releasing)
            waiterLoop.wakeUp()
        } else {
            completedAt = System.monotonicSeconds()
            state.store(final, ordering: .releasing)
            ParkingLot.wakeAll(key: key)
        }
    }

    private var isDone: Bool { state.load(ordering: .acquiring) >= Self.finished }

    /// Blocks until the call finished or was withdrawn. At `deadline` a call that has not started
    /// is withdrawn with ``PortRunLoopError/timedOut``; one that has started is waited for.
    func waitForCompletion(deadline: Double) {
        var deadline = deadline
        while true {
            if let loop = waiterLoop {
                _ = loop.runSpecific(mode: .synchronousWait, deadline: deadline,
                                     returnAfterSourceHandled: false, until: { self.isDone })
            } else {
                let spin = WaitSpin.current
                let start = System.monotonicSeconds()
                if !spin.spin(from: start, until: deadline, for: { self.isDone }) {
                    let sleepStart = System.monotonicSeconds()
                    let done = ParkingLot.park(key: key, deadline: deadline) { self.isDone }
                    // How soon the loop answered, not counting this thread's own wake-up.
                    spin.record(answeredAfter: done ? completedAt - sleepStart : .infinity)
                }
            }
            if isDone { return }
            if System.monotonicSeconds() >= deadline {
                fail(.timedOut)
                deadline = .infinity
            }
        }
    }

    func takeResult() throws -> T {
        precondition(isDone, "PortRunLoop: synchronous call result read before completion")
        if let error { throw error }
        return try result!.get()
    }
}

/// Moves the value out of `value`, leaving nil.
@inline(__always) private func take<V>(_ value: inout V?) -> V? {
    defer { value = nil }
    return value
}

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
                idleSpin.spun(for: System.monotonicSeconds() - start, found: true)
                return true
            }
            let now = System.monotonicSeconds()
            if now >= end {
                idleSpin.spun(for: now - start, found: false)
                return false
            }
            sched_yield()
        }
    }

    /// Records how soon a call that this thread slept for was answered (`.infinity`: it was not).
    func record(answeredAfter seconds: Double) { idleSpin.slept(gap: seconds) }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let rc = pthread_key_create(&key) { raw in
            guard let raw else { return }
            Unmanaged<WaitSpin>.fromOpaque(raw).release()
        }
        precondition(rc == 0, "PortRunLoop: pthread_key_create failed, errno \(rc)")
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
