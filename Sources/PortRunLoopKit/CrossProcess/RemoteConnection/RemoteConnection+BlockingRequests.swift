import Foundation

extension RemoteConnection {
    /// Sends a request and waits for its reply (``MessagePort/sendRequest(msgid:components:sendTimeout:receiveTimeout:)``).
    ///
    /// The wait is a ``ReplyWait`` (a ``BlockingCall``), completed by whichever thread reads the
    /// reply or finds the connection ended. On a thread whose loop is alive it is the library's one
    /// blocking wait (``BlockingCall/waitUntilComplete(deadline:on:)``): the loop serves its
    /// `.synchronousWait` mode, where the connection is an fd source (``serveReplies(on:for:)``; kept
    /// armed between requests for one loop) whose handler reads the frames and so completes the wait, and the wait is registered in
    /// ``BlockingWaits`` (with no target loop: the loop that answers is in another process). A
    /// thread without a loop has nothing that would read the socket while it sleeps (a `readingOn:`
    /// loop is optional), so it reads the socket itself (``awaitReplyWithoutLoop(_:until:)``): it
    /// spins while that pays, then polls it as a send waiting for credits does
    /// (``waitForFrames(until:)``), and stops when its wait is complete.
    ///
    /// One reading of the clock serves the send's deadline, the frame's answer time and the start
    /// of the receive timeout, unless the send had to wait (then the receive timeout starts when
    /// the frame went out).
    func request(msgid: UInt32, components: [Data], descriptors: [Int32] = [], sendTimeout: Double,
                 receiveTimeout: Double) throws(CrossProcessPortError) -> ReplyWait.Reply {
        let loop = PortRunLoop.existingForCurrentThread().flatMap { $0.ownerShutDown ? nil : $0 }
        let wait = ReplyWait(waiter: loop)
        let (id, sentAt) = try sendRequestFrame(for: wait, msgid: msgid, components: components, descriptors: descriptors,
                                                sendTimeout: sendTimeout).get()
        let receiveDeadline = sentAt + receiveTimeout
        if let loop, let reader = serveReplies(on: loop, for: wait) {
            wait.waitUntilComplete(deadline: receiveDeadline, on: [])
            finishServing(reader)
        } else {
            awaitReplyWithoutLoop(wait, until: receiveDeadline)
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

    /// The wait of a request on a thread without a loop: it reads the socket itself. First it
    /// spins as a thread waiting for a `performAndWait` answer does (``WaitSpin``: only while
    /// answers keep coming within microseconds), looking at the socket without blocking between
    /// yields; then it polls the socket (``waitForFrames(until:stoppingAt:)``) until the reply is in,
    /// the connection ends or `deadline` passes, and tells the spin how soon the reply came
    /// (measured to this thread's wake-up, or by the exchange's answer times, ``AnswerTiming``,
    /// when they say sooner: the reply waited for the publisher's own wake-up).
    private func awaitReplyWithoutLoop(_ wait: ReplyWait, until deadline: Double) {
        let spin = WaitSpin.current
        guard !spinForReply(to: wait, on: spin, until: deadline) else { return }
        let sleepStart = System.monotonicSeconds()
        let answerGap = locked { () -> Double in
            lastAnswerGap = .infinity // only what this wait finds
            while !wait.isComplete, ended == nil, waitForFrames(until: deadline, stoppingAt: wait) {}
            return lastAnswerGap
        }
        // The sooner of the wait and the exchange's answer times (``AnswerTiming``): the wait
        // counts the publisher's wake-up.
        spin.record(answeredAfter: wait.isComplete ? min(System.monotonicSeconds() - sleepStart, answerGap) : .infinity)
    }

    /// Spins on `spin` (as far as it allows, never past `deadline`) for `wait`'s reply, reading the
    /// socket between yields; while another thread polls the socket, that thread reads the reply
    /// for this one. True when the wait completed (its reply, or the connection's end).
    func spinForReply(to wait: ReplyWait, on spin: WaitSpin, until deadline: Double) -> Bool {
        spin.spin(from: System.monotonicSeconds(), until: deadline) {
            locked {
                if !isReading, ended == nil { drainFrames(stoppingAt: wait) }
                return wait.isComplete || ended != nil
            }
        }
    }

    /// With the lock held: waits until frames were read (by this thread or another) or `deadline`
    /// passed. Returns false on timeout; true when something may have changed (look again).
    /// With `wait`, the read ends as soon as that request's reply is in (``drainFrames(stoppingAt:)``).
    func waitForFrames(until deadline: Double, stoppingAt wait: ReplyWait? = nil) -> Bool {
        guard System.monotonicSeconds() < deadline else { return false }
        guard ended == nil, fd >= 0 else { return true } // the caller looks at `ended`
        if isReading {
            // Another thread polls the socket; it wakes everyone when it has read. Tasks this
            // thread completed are resumed first, and the caller looks again.
            guard resumeAfterUnlocking.isEmpty else {
                unlockResumingTasks()
                condition.lock()
                return true
            }
            return condition.waitLocked(untilMonotonic: deadline) || System.monotonicSeconds() < deadline
        }
        isReading = true
        polling += 1
        let fd = self.fd
        let wake = wakeFD
        unlockResumingTasks()
        let ready = System.poll(fd, for: .readable, orWake: wake, untilMonotonic: deadline)
        condition.lock()
        isReading = false
        polling -= 1
        if ready.contains(.woken) { System.resetEventfd(wakeFD) }
        if ended == nil { drainFrames(stoppingAt: wait) }
        closeIfEnded()
        condition.broadcast()
        return !ready.isEmpty
    }
}
