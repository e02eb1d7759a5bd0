#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// Decides, per handler call, whether a handler may *start*, and lets a canceller know whether one
/// is running. It is what makes "once `invalidate()` / `remove` returns, no handler starts" exact,
/// for every kind of handler: ports, timers, fd sources, observations, redirectors and the blocks
/// registered with a Foundation center.
///
/// State word: bit 0 = closed, bits 1… = number of handler calls in flight (nested runs can make
/// more than one). ``tryEnter()`` is one compare-and-swap that fails once the gate is closed;
/// ``close()`` sets the bit with one atomic OR, so after it returns every later ``tryEnter()`` fails.
/// A call that entered before the close may still be running; ``waitForHandlers()`` waits for it.
///
/// A loop delivering a batch of port messages enters once for the whole batch and checks
/// ``isClosed`` (a plain load) before each message: the in-flight count then means "inside this
/// port's batch", and an invalidation that races with a per-message check is ordered exactly like
/// one that races with ``tryEnter()`` (the check happened first; the waiter still waits for the
/// handler it let start). `PortRunLoop.deliverMessages(of:registration:mode:)` explains why.
///
/// Memory ordering: `tryEnter` acquires and `exit` releases (at least), so a waiter that sees "no handler in
/// flight" also sees everything those handlers wrote. `close` is acquiring-and-releasing so the
/// canceller's earlier writes are visible to any handler that checks state afterwards.
///
/// "Is anything running except me": a waiter passes how many of the calls in flight are its own
/// (further down its stack), and waits for the rest. Handlers bound to a loop know that from the
/// loop (a port: the batches its thread is inside; an observation: all of them, when called on its
/// loop's thread). A handler that runs on whatever thread calls it (a Foundation observer block)
/// enters with ``tryEnterOnAnyThread()``, which also notes the thread, and its waiter asks
/// ``callsHeldByCurrentThread``.
///
/// Waiters (rare: `waitForRunningHandlers`) wait in the package's one blocking wait, a
/// ``BlockingCall`` each (a loop thread serves its synchronous calls meanwhile, W4), listed in
/// `waiters` with the number of calls each allows; an exit that leaves few enough calls in flight
/// completes them. A gate with no waiter costs one allocation: itself.
///
/// Thread-safety: fully thread-safe; `threadsInside` and `waiters` are guarded by `threadsLock`.
final class DeliveryGate: @unchecked Sendable {
    private let state = Atomic<UInt>(0)
    /// `waiters.count`, read without the lock by ``exit()``.
    private let waiterCount = Atomic<Int>(0)
    /// Guards `threadsInside` and `waiters` (keyed by the gate's address).
    private let threadsLock = LockWord()
    /// The threads inside calls entered with ``tryEnterOnAnyThread()``, once per call.
    private var threadsInside: [pthread_t] = []
    /// The waits in ``waitForHandlers(deadlineMonotonic:excluding:)``, each with the number of
    /// calls in flight it allows.
    private var waiters: [(wait: StateChangeWait, allowed: UInt)] = []

    private var key: UnsafeRawPointer { UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()) }

    var isClosed: Bool { state.load(ordering: .acquiring) & 1 == 1 }

    /// Starts one handler call; false once closed.
    @inline(__always) func tryEnter() -> Bool {
        var current = state.load(ordering: .relaxed)
        while current & 1 == 0 {
            let (exchanged, original) = state.weakCompareExchange(
                expected: current, desired: current + 2,
                successOrdering: .acquiring, failureOrdering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// Ends a call started by a successful ``tryEnter()``.
    @inline(__always) func exit() {
        // Sequentially consistent on both sides (here and in `waitForHandlers`): each side writes
        // one word and then reads the other's, the store-load pattern only seq_cst orders.
        // Any exit may be the one a waiter waits for (it may be allowed calls of its own), so every
        // exit wakes while someone waits; waiters are rare, and without them this is one load.
        state.subtract(2, ordering: .sequentiallyConsistent)
        if waiterCount.load(ordering: .sequentiallyConsistent) > 0 { completeSatisfiedWaiters() }
    }

    /// Completes (and unlists) the waiters that allow as many calls as are in flight now.
    private func completeSatisfiedWaiters() {
        let satisfied = threadsLock.withLock(key: key) { () -> [StateChangeWait] in
            let inFlight = state.load(ordering: .sequentiallyConsistent) >> 1
            var satisfied: [StateChangeWait] = []
            waiters.removeAll { waiter in
                guard waiter.allowed >= inFlight else { return false }
                satisfied.append(waiter.wait)
                return true
            }
            waiterCount.store(waiters.count, ordering: .sequentiallyConsistent)
            return satisfied
        }
        for wait in satisfied { wait.complete() }
    }

    /// ``tryEnter()`` for a handler that may run on any thread: also notes the calling thread, for
    /// ``callsHeldByCurrentThread``. End it with ``exitOnAnyThread()`` on the same thread.
    func tryEnterOnAnyThread() -> Bool {
        guard tryEnter() else { return false }
        withThreadsLocked { $0.append(pthread_self()) }
        return true
    }

    /// Ends a call started by a successful ``tryEnterOnAnyThread()``.
    func exitOnAnyThread() {
        let me = pthread_self()
        withThreadsLocked { threads in
            if let index = threads.lastIndex(where: { pthread_equal($0, me) != 0 }) { threads.remove(at: index) }
        }
        exit()
    }

    /// How many calls entered with ``tryEnterOnAnyThread()`` the calling thread is inside (they
    /// are further down its own stack).
    var callsHeldByCurrentThread: Int {
        let me = pthread_self()
        return withThreadsLocked { threads in threads.reduce(0) { $0 + (pthread_equal($1, me) != 0 ? 1 : 0) } }
    }

    private func withThreadsLocked<R>(_ body: (inout [pthread_t]) -> R) -> R {
        threadsLock.withLock(key: key) { body(&threadsInside) }
    }

    /// Closes the gate. Returns true if this call closed it (false if it was closed already).
    @discardableResult
    func close() -> Bool {
        state.bitwiseOr(1, ordering: .acquiringAndReleasing).oldValue & 1 == 0
    }

    /// Blocks until no handler call is in flight except the `heldByCaller` calls the calling
    /// thread itself is inside (its own stack: waiting for them would deadlock on itself).
    func waitForHandlers(deadlineMonotonic: Double = .infinity, excluding heldByCaller: Int = 0) -> Bool {
        let allowed = UInt(heldByCaller)
        if state.load(ordering: .acquiring) >> 1 <= allowed { return true }
        let wait = StateChangeWait(waiter: PortRunLoop.existingForCurrentThread())
        threadsLock.withLock(key: key) {
            waiters.append((wait, allowed))
            waiterCount.store(waiters.count, ordering: .sequentiallyConsistent)
        }
        // Listed first, then checked (sequentially consistent, as in `exit`): an exit that came
        // before the listing is seen here, one after it sees the waiter.
        completeSatisfiedWaiters()
        wait.waitUntilComplete(deadline: deadlineMonotonic)
        threadsLock.withLock(key: key) {
            waiters.removeAll { $0.wait === wait }
            waiterCount.store(waiters.count, ordering: .sequentiallyConsistent)
        }
        return state.load(ordering: .acquiring) >> 1 <= allowed
    }
}
