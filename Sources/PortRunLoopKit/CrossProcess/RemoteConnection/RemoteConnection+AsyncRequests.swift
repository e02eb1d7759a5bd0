import Foundation
import Logging

extension RemoteConnection {
    /// An async request (``MessagePort/sendRequest(msgid:components:sendTimeout:receiveTimeout:)-1ibw5``):
    /// sent from the calling task when it can go at once (a credit, and room in the socket), then
    /// awaited with no thread blocked. The ``RequestReaderThread`` reads the socket while the task
    /// waits (``ReplyWatchSet``): the reply completes the wait and resumes the task
    /// (``finish(_:)``), and its timer completes the wait at the receive deadline.
    /// Cancelling the task completes the wait too.
    ///
    /// A request that cannot go at once (no credit: the receiver's queue is full; or no room in
    /// the socket) waits for that, suspended too, until `sendTimeout` (``awaitRoomToSend(until:)``),
    /// and tries again.
    func asyncRequest(msgid: UInt32, components: [Data], descriptors: [Int32], sendTimeout: Double,
                      receiveTimeout: Double) async throws(CrossProcessPortError) -> ReplyWait.Reply {
        try startAsyncReading()
        let wait = ReplyWait(waiter: nil, connection: self)
        let (id, sentAt) = try await sendRequestFrame(for: wait, msgid: msgid, components: components, descriptors: descriptors,
                                                      until: System.monotonicSeconds() + sendTimeout)
        let deadline = sentAt + receiveTimeout
        // While replies have been coming within microseconds, the task reads the socket for this
        // one first, for at most 20 µs, yielding (as a thread waiting without a loop does,
        // ``WaitSpin``): a reply caught so costs no wake-up of the reader thread (the socket is
        // not armed in its set) and of a thread to resume the task on. Otherwise, or when the
        // spin finds nothing, the task suspends.
        if !spinForReply(to: wait, on: WaitSpin.current, until: deadline) { await awaitReply(wait, until: deadline) }
        return try locked { () throws(CrossProcessPortError) -> ReplyWait.Reply in
            requests.remove(id)
            if let reply = wait.reply { return reply }
            if wait.cancelled { throw .cancelled }
            if let ended { throw ended }
            throw .receiveTimedOut
        }
    }

    /// Suspends the task until `wait` completes: by its reply (read by the reader thread, for
    /// which the socket is armed in its set), the connection's end, its `deadline` (the reader
    /// thread's timer) or the task's cancellation. Then tells the spin of the thread it resumed
    /// on how soon the reply came.
    private func awaitReply(_ wait: ReplyWait, until deadline: Double) async {
        let suspendedAt = System.monotonicSeconds()
        await suspend(on: wait, until: deadline) { true }
        // The sooner of the wait and the exchange's answer times: the wait counts two wake-ups
        // (the reader thread's, and the thread's the task resumed on).
        let now = System.monotonicSeconds()
        let answerGap = locked { () -> Double in
            answers.delivered(at: now)
            return wait.reply == nil ? .infinity : wait.answerGap
        }
        WaitSpin.current.record(answeredAfter: answerGap == .infinity ? .infinity : min(now - suspendedAt, answerGap))
    }

    /// ``sendRequestFrame(for:msgid:components:descriptors:sendTimeout:)`` for an async request: it
    /// tries at once, and while it cannot go (no credit, no room in the socket) and `deadline` has
    /// not passed, waits suspended for what it lacks (``awaitRoomToSend(until:)``) and tries again.
    /// A task cancelled before a try sends nothing: it throws ``CrossProcessPortError/cancelled``,
    /// whether the cancellation ended its wait for room or came as that wait ended otherwise.
    private func sendRequestFrame(for wait: ReplyWait, msgid: UInt32, components: [Data], descriptors: [Int32],
                                  until deadline: Double) async throws(CrossProcessPortError) -> (id: UInt64, sentAt: Double) {
        while true {
            if Task.isCancelled { throw .cancelled }
            switch sendRequestFrame(for: wait, msgid: msgid, components: components, descriptors: descriptors, sendTimeout: 0) {
            case .success(let sent): return sent
            case .failure(.sendTimedOut) where System.monotonicSeconds() < deadline: await awaitRoomToSend(until: deadline)
            case .failure(let error): throw error
            }
        }
    }

    /// Suspends the task until it may try to send again: a credit came (read by any thread), the
    /// socket has room (the reader thread, for which the socket is armed for writability too),
    /// the connection ended, or `deadline` (the send deadline; the reader thread's timer) passed.
    /// Looks again under the lock first: what came since the failed try ends the wait at once.
    /// Cancelling the task ends the wait too; the caller then sends nothing.
    private func awaitRoomToSend(until deadline: Double) async {
        let room = ReplyWait(waiter: nil, connection: self)
        await suspend(on: room, until: deadline) {
            let roomInSocket = credits > 0 && fd >= 0 && !System.poll(fd, for: .writable, untilMonotonic: 0).isEmpty
            guard ended == nil, fd >= 0, !roomInSocket else {
                room.complete()
                return false
            }
            room.forRoom = credits > 0 // a credit is in hand: the socket is full
            roomWaits.append(room)
            return true
        }
        locked { roomWaits.removeAll { $0 === room } }
    }

    /// Suspends the task on `wait` (a request's wait for its reply, or a wait to send) until it
    /// completes: by whoever completes it (the reader thread; any thread that reads a credit or
    /// finds the connection ended), its `deadline` (the reader thread's timer, armed here when it
    /// is earlier than the armed one), or the task's cancellation (`wait.cancelled`). Under the
    /// lock, `register` decides whether to wait at all (false: the task goes on at once) and
    /// records the wait where it will be found; a wait completed before the task is attached
    /// resumes it at once. The socket is armed after the task is attached, so a reader thread it
    /// wakes finds the task to resume.
    private func suspend(on wait: ReplyWait, until deadline: Double, _ register: () -> Bool) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let armAt = locked { () -> Double? in
                    guard !wait.isComplete, register() else {
                        resumeAfterUnlocking.append(continuation)
                        return nil
                    }
                    wait.deadline = deadline
                    wait.continuation = continuation
                    armForWaitingTasks()
                    return wait.isComplete ? nil : timerDue(for: deadline) // complete: the arming failed, the connection ended
                }
                if let armAt { armAsyncTimer(for: armAt) }
            }
        } onCancel: {
            locked {
                guard !wait.isComplete else { return }
                wait.cancelled = true
                finish(wait)
            }
        }
    }

    /// With the lock held: the reader thread's timer must be armed for `deadline` (returned) when
    /// it is earlier than the armed one (a wait due no earlier arms none); it is then recorded.
    private func timerDue(for deadline: Double) -> Double? {
        guard deadline < (asyncTimerDue ?? .infinity) else { return nil }
        asyncTimerDue = deadline
        return deadline
    }

    /// With the lock held: resumes the tasks waiting to send (all of them, or only those waiting
    /// for a credit): each tries again, and waits again if it still cannot go.
    func resumeRoomWaits(forRoomToo: Bool) {
        for room in roomWaits where !room.isComplete && (forRoomToo || !room.forRoom) { finish(room) }
    }

    /// Puts the socket in the ``RequestReaderThread``'s ``ReplyWatchSet``, once, not armed. A
    /// refusal is this call's error; the next async request tries again. On a closed connection
    /// it does nothing (the request's send finds the end).
    private func startAsyncReading() throws(CrossProcessPortError) {
        if locked({ asyncWatch != nil }) { return }
        let watched = try RequestReaderThread.watchSet()
        try locked { () throws(CrossProcessPortError) in
            guard asyncWatch == nil, fd >= 0 else { return }
            asyncWatch = (watched, try watched.add(fd, of: self))
        }
    }

    /// With the lock held: arms the socket in its set if a task waits (for a reply or a credit:
    /// readability; for room in the socket: writability too) and it is not so armed already. The
    /// kernel reports at once a socket ready already. A refused arming ends the connection
    /// (nothing would read the reply): the waiting requests complete, and throw the error.
    private func armForWaitingTasks() {
        guard ended == nil, fd >= 0, let asyncWatch, suspendedTasks > 0 else { return }
        let forRoom = roomWaits.contains { $0.forRoom && !$0.isComplete }
        guard asyncArming == .none || (forRoom && asyncArming == .reading) else { return }
        if let error = asyncWatch.set.arm(fd, token: asyncWatch.token, forWriting: forRoom) {
            logger.warning("MessagePort connection to another process ended: its socket could not be watched for a reply", metadata: [
                LogKey.portName: "\(name)", LogKey.error: "\(error)"])
            markEnded(.systemCallFailed("epoll_ctl", errno: error.code), reason: .connectionFailed("epoll_ctl: \(error)"))
            return
        }
        asyncArming = forRoom ? .readingAndWriting : .reading
    }

    /// With the lock held: how many async requests' tasks are suspended, waiting for their reply
    /// or to send.
    var suspendedTasks: Int {
        var count = 0
        requests.forEach { wait in
            if wait.continuation != nil, !wait.isComplete { count += 1 }
        }
        for room in roomWaits where room.continuation != nil && !room.isComplete { count += 1 }
        return count
    }

    /// The reader thread, told by the ``ReplyWatchSet`` that the socket is ready (readable,
    /// writable, or hung up): the one-shot arming is spent; the tasks waiting for room try again,
    /// every frame waiting is read (a waiting task's reply resumes it, a credit those waiting for
    /// one), then the socket is armed again if a task still waits.
    func readForWaitingTasks() {
        locked {
            asyncArming = .none
            resumeRoomWaits(forRoomToo: true)
        }
        _ = readOnLoop(stoppingAt: nil)
        locked { armForWaitingTasks() }
    }

    /// Arms a timer of the ``RequestReaderThread`` for `due` (monotonic seconds): it completes the
    /// async requests whose receive deadline has passed, and arms the next for the earliest of
    /// the others. One timer serves every waiting request: a request due no earlier than the
    /// armed one arms none (a reply that comes leaves it armed), so an exchange of requests with
    /// one receive timeout arms one per timeout, not one per request.
    private func armAsyncTimer(for due: Double) {
        guard let loop = locked({ asyncWatch?.set.loop }) else { return } // closed: its waits are complete
        let reference = WeakConnection(self)
        let timer = RunLoopTimer(fireAt: Date(timeIntervalSinceNow: due - System.monotonicSeconds())) { [reference] _ in
            reference.connection?.asyncDeadlinesPassed()
        }
        loop.add(timer, forMode: .default)
    }

    /// The reader thread: completes the async requests past their receive deadline and arms the
    /// timer for the earliest of the others.
    private func asyncDeadlinesPassed() {
        let next = locked { () -> Double? in
            asyncTimerDue = nil
            let now = System.monotonicSeconds()
            var next = Double.infinity
            func due(_ wait: ReplyWait) {
                guard !wait.isComplete else { return }
                if wait.deadline <= now { finish(wait) } else { next = min(next, wait.deadline) }
            }
            requests.forEach(due) // a blocking request's deadline is its waiter's: infinity here
            roomWaits.forEach(due) // an async request's send deadline: it tries once more, and times out
            guard next < .infinity else { return nil }
            asyncTimerDue = next
            return next
        }
        if let next { armAsyncTimer(for: next) }
    }
}
