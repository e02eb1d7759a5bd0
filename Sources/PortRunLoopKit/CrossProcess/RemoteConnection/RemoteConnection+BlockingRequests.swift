import Foundation

extension RemoteConnection {
    /// Sends a request and waits for its reply (``MessagePort/sendRequest(msgid:components:sendTimeout:receiveTimeout:)``).
    ///
    /// The wait is a ``ReplyWait``, completed by whichever thread reads the reply or finds the
    /// connection ended, and waited for in the package's one blocking wait
    /// (``BlockingCall/waitUntilComplete(deadline:on:isSend:servingLoop:)``). On a thread whose
    /// loop is alive the loop serves its `.synchronousWait` mode, where the connection is an fd
    /// source (``serveReplies(on:for:)``; kept armed between requests for one loop) whose handler
    /// reads the frames and so completes the wait (no target loop: the loop that answers is in
    /// another process). A thread without a loop has nothing that would read the socket while it
    /// sleeps (a `readingOn:` loop is optional), so the wait reads it itself: it spins while that
    /// pays (``lookForReply(to:)``), then polls the socket as a send waiting for credits does
    /// (``pollForReply(to:from:until:)``), until the wait is complete.
    ///
    /// One reading of the clock serves the send's deadline, the frame's answer time and the start
    /// of the receive timeout, unless the send had to wait (then the receive timeout starts when
    /// the frame went out).
    func request(msgid: UInt32, components: [Data], descriptors: [Int32] = [], sendTimeout: Double,
                 receiveTimeout: Double) throws(CrossProcessPortError) -> ReplyWait.Reply {
        let loop = PortRunLoop.existingForCurrentThread().flatMap { $0.ownerShutDown ? nil : $0 }
        let wait = ReplyWait(waiter: loop, connection: self)
        let (id, sentAt) = try sendRequestFrame(for: wait, msgid: msgid, components: components, descriptors: descriptors,
                                                sendTimeout: sendTimeout).get()
        let receiveDeadline = sentAt + receiveTimeout
        if let loop, let reader = serveReplies(on: loop, for: wait) {
            wait.waitUntilComplete(deadline: receiveDeadline)
            finishServing(reader)
        } else {
            // No loop, or one that could not watch the socket: the waiting thread reads it.
            wait.waitUntilComplete(deadline: receiveDeadline, servingLoop: false)
        }
        return try locked { () throws(CrossProcessPortError) -> ReplyWait.Reply in
            requests.remove(id)
            if let reply = wait.reply { return reply }
            if let ended { throw ended }
            throw .receiveTimedOut
        }
    }

    /// Registers `wait` under a fresh request id and sends the request's frame, waiting for a
    /// credit or room in the socket for at most `sendTimeout` (0: only if it can go at once).
    /// Returns the id and when the frame went out; on failure the wait is forgotten again.
    func sendRequestFrame(for wait: ReplyWait, msgid: UInt32, components: [Data], descriptors: [Int32],
                                  sendTimeout: Double) -> Result<(id: UInt64, sentAt: Double), CrossProcessPortError> {
        let id = locked { () -> UInt64 in
            defer { nextRequestID += 1 }
            requests.insert(wait, id: nextRequestID)
            return nextRequestID
        }
        let start = System.monotonicSeconds()
        switch send(flags: .request, msgid: msgid, firstID: id, components: components, replyPort: nil,
                    descriptors: descriptors, before: start + sendTimeout, now: start) {
        case .success(let sentAt): return .success((id, sentAt))
        case .failure(let error):
            locked { requests.remove(id) }
            return .failure(error)
        }
    }

    /// The sleep of a request's wait on a thread that serves no loop: polls the socket
    /// (``waitForFrames(until:stoppingAt:)``) until the reply is in, the connection ends or
    /// `deadline` passes. Returns how soon the reply came after `sleepStart` (measured to this
    /// thread's wake-up, or by the exchange's answer times, ``AnswerTiming``, when they say sooner:
    /// the reply waited for the publisher's own wake-up), for the thread's spin.
    func pollForReply(to wait: ReplyWait, from sleepStart: Double, until deadline: Double) -> Double {
        let answerGap = locked { () -> Double in
            lastAnswerGap = .infinity // only what this wait finds
            while !wait.isComplete, ended == nil, waitForFrames(until: deadline, stoppingAt: wait) {}
            return lastAnswerGap
        }
        return wait.isComplete ? min(System.monotonicSeconds() - sleepStart, answerGap) : .infinity
    }

    /// One look for `wait`'s reply while its waiter spins: reads the socket without blocking
    /// (unless another thread is reading it, which then reads the reply for this one). True when
    /// the wait is complete: its reply came, or the connection ended (which completes it).
    func lookForReply(to wait: ReplyWait) -> Bool {
        locked {
            if !isReading, ended == nil { drainFrames(stoppingAt: wait) }
            if ended != nil { finish(wait) }
            return wait.isComplete
        }
    }

    /// Spins on `spin` (as far as it allows, never past `deadline`) for `wait`'s reply, looking
    /// for it between yields (``lookForReply(to:)``). True when the wait completed.
    func spinForReply(to wait: ReplyWait, on spin: WaitSpin, until deadline: Double) -> Bool {
        spin.spin(from: System.monotonicSeconds(), until: deadline) { lookForReply(to: wait) }
    }

    /// With the lock held: waits until frames were read (by this thread or another) or `deadline`
    /// passed. Returns false on timeout; true when something may have changed (look again).
    /// With `wait`, the read ends as soon as that request's reply is in (``drainFrames(stoppingAt:)``).
    func waitForFrames(until deadline: Double, stoppingAt wait: ReplyWait? = nil) -> Bool {
        guard System.monotonicSeconds() < deadline else { return false }
        guard ended == nil, fd >= 0 else { return true } // the caller looks at `ended`
        if isReading {
            // Another thread polls the socket; it completes the waits listed when it has read.
            // Tasks this thread completed are resumed first, and the caller looks again.
            guard resumeAfterUnlocking.isEmpty else {
                unlockResumingTasks()
                mutex.lock()
                return true
            }
            // The wait serves no loop: a send waiting for a credit delivers nothing of its own
            // meanwhile.
            let wait = StateChangeWait(waiter: nil)
            readWaits.add(wait)
            mutex.unlock()
            wait.waitUntilComplete(deadline: deadline)
            mutex.lock()
            readWaits.remove(wait) // still listed after its deadline
            return System.monotonicSeconds() < deadline
        }
        isReading = true
        polling += 1
        let fd = self.fd
        let wake = wakeFD
        unlockResumingTasks()
        let ready = System.poll(fd, for: .readable, orWake: wake, untilMonotonic: deadline)
        mutex.lock()
        isReading = false
        polling -= 1
        if ready.contains(.woken) { System.resetEventfd(wakeFD) }
        if ended == nil { drainFrames(stoppingAt: wait) }
        closeIfEnded()
        readersMayLookAgain()
        return !ready.isEmpty
    }

    /// With the lock held: the socket was read (or the connection ended); the threads waiting for
    /// that look again.
    func readersMayLookAgain() { readWaits.completeAll() }
}
