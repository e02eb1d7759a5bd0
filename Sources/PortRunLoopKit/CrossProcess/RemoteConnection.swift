import Foundation
import Logging

/// The client end of a connection to a published port: what the sends of a remote ``MessagePort``
/// go through (made by ``MessagePortNameRegistry/remotePort(named:options:readingOn:)``).
///
/// Sending: one frame per message, each costing a credit; with none left, the sender reads the
/// socket (credit frames come back as the publisher's loop takes messages) until its date. Reading
/// is done by whichever thread needs frames: one thread at a time polls the socket (`isReading`)
/// while the others wait on the condition; whoever reads processes every frame waiting (credits,
/// replies, routed messages) and wakes the others. A loop given at lookup also reads, whenever
/// the socket is readable, so messages to reply ports arrive without a send; when it read frames
/// while a thread polls, it signals `wakeFD` (an eventfd the poller also polls), since that
/// thread would otherwise wait in `poll` for data the loop already took. While an async request's
/// task waits for its reply, the ``RequestReaderThread`` reads it too, the same way, when the
/// socket is readable (``ReplyWatchSet``).
///
/// The end of the connection (either side's invalidation, the publisher's death, a protocol
/// violation) is recorded with the lock held (``markEnded(_:reason:)``) and reported to the remote
/// port (``endObserver``: it invalidates itself with the reason) once the lock is let go, by the
/// thread that found it. Tasks whose waits a critical section completed are resumed the same way,
/// after the lock is let go (``finish(_:)``). So every critical section goes through ``locked(_:)``
/// or ends with ``unlockReportingEnd()``, and a wait that lets the lock go in between does so
/// through ``unlockResumingTasks()``; none uses the mutex's `withLock`.
///
/// Thread-safety: `@unchecked Sendable`; every `var` below is guarded by `condition` (the library's one mutex type, here in its
/// lock/unlock form because a reader lets it go around `poll`);
/// `name`, `options`, `parameters` and `logger` are immutable; the buffers `receiveBuffer`,
/// `receiveControl` and `sendBuffer` are immutable pointers whose memory is used with the mutex
/// held only. The guarded `var`s on a request's path are `@exclusivity(unchecked)`: the mutex
/// already makes every access exclusive, and the run-time checks were ~700 instructions of a
/// request/reply exchange.
final class RemoteConnection: RemoteEndpoint, @unchecked Sendable {
    let name: String
    let options: CrossProcessPortOptions
    let parameters: PublisherParameters
    let logger: Logger
    private let condition = TracedMutex<Void>(())
    private let receiveBuffer: UnsafeMutableRawBufferPointer
    /// Where a receive takes the descriptors of a frame (room for the options' limit; a frame with
    /// more is cut short by the kernel, a protocol violation).
    private let receiveControl: UnsafeMutableRawBufferPointer
    /// Where a send builds its frame (with the lock held; built again after the lock was let go
    /// around a `poll`, since another sender may have used it meanwhile): no allocation per send.
    /// At most 64 KiB (the publisher's maximum comes from its lock file): a larger frame is built
    /// in an array of its own.
    private let sendBuffer: UnsafeMutableRawBufferPointer

    @exclusivity(unchecked) private var fd: Int32
    @exclusivity(unchecked) private var credits: Int
    @exclusivity(unchecked) private var isReading = false
    /// Threads inside `poll` on `fd` (the reader, and senders waiting for room): the fd is closed
    /// only when none is, so no `poll` ever watches a closed (and possibly reused) fd number.
    @exclusivity(unchecked) private var polling = 0
    /// Why the connection ended (what waiting calls throw); nil while open.
    @exclusivity(unchecked) private var ended: CrossProcessPortError?
    /// The end, for the port's invalidation handler, until it is reported (``unlockReportingEnd()``).
    @exclusivity(unchecked) private var endToReport: MessagePort.InvalidationReason?
    /// Told the reason the connection ended, once, without the lock held (the remote port
    /// invalidates itself). Not told of an end caused by the port's own ``invalidate()``.
    private var endObserver: (@Sendable (MessagePort.InvalidationReason) -> Void)?
    @exclusivity(unchecked) private var nextRequestID: UInt64 = 1
    /// Requests waiting for their reply, by request id; the reply is stored in the wait.
    @exclusivity(unchecked) private var requests = PendingRequests()
    /// Local reply ports named in sends, by route id (held like a message holds its reply port).
    @exclusivity(unchecked) private var routes: [UInt64: MessagePort] = [:]
    @exclusivity(unchecked) private var routeIDs: [ObjectIdentifier: UInt64] = [:]
    @exclusivity(unchecked) private var nextRouteID: UInt64 = 1
    @exclusivity(unchecked) private var readSource: FileDescriptorSource?
    /// The loop `readSource` belongs to (weak: a connection does not keep a loop alive).
    private weak var readLoop: PortRunLoop?
    /// The eventfd through which a thread that reads the socket on another's behalf (a loop's
    /// read source or reply reader, the reader thread) wakes a thread polling it. Made with the
    /// connection, so that every poller polls it: one made later would be missed by a poll begun
    /// before it. Immutable; closed in deinit (a poller may hold its number until then).
    private let wakeFD: Int32
    /// The reply reader kept between requests for the loop that made it (``serveReplies(on:for:)``);
    /// cancelled when the connection closes (``closeIfEnded()``).
    @exclusivity(unchecked) private var keptReader: ReplyReader?
    /// The ``ReplyWatchSet`` the socket is in once an async request was made on the connection,
    /// and the token it is registered with; taken out when the connection closes (``closeIfEnded()``).
    @exclusivity(unchecked) private var asyncWatch: (set: ReplyWatchSet, token: UInt64)?
    /// How the socket is armed in ``asyncWatch``'s set: for a task that waits, and the reader
    /// thread has not been told since (``readForWaitingTasks()``).
    @exclusivity(unchecked) private var asyncArming = AsyncArming.none
    private enum AsyncArming { case none, reading, readingAndWriting }
    /// Async requests' tasks waiting to send: for a credit (a frame read from the socket, by
    /// whichever thread reads it, resumes them) or, with `forRoom`, for room in the socket (the
    /// reader thread's report resumes them). Each then tries again (``awaitRoomToSend(until:)``).
    @exclusivity(unchecked) private var roomWaits: [ReplyWait] = []
    /// When the reader thread's timer for async requests' receive deadlines fires (monotonic
    /// seconds), nil when none is armed (``armAsyncTimer(for:)``).
    @exclusivity(unchecked) private var asyncTimerDue: Double?
    /// Replies that came after their request gave up, routed messages for unknown routes or
    /// refused by a full reply port.
    @exclusivity(unchecked) private(set) var dropped = 0
    /// The continuations of tasks whose waits completed, resumed once the lock is let go
    /// (``unlockResumingTasks()``).
    @exclusivity(unchecked) private var resumeAfterUnlocking: [CheckedContinuation<Void, Never>] = []
    /// This side's answer times (``AnswerTiming``), and how soon the exchange turned around by the
    /// last reply or routed message read (set to infinity by a reader before it reads).
    @exclusivity(unchecked) private var answers = AnswerTiming()
    @exclusivity(unchecked) private var lastAnswerGap = Double.infinity
    /// The publisher announced that its frames may carry descriptors (``CrossProcessFrame/Kind/descriptors``):
    /// frames are read with a control buffer from then on, and with a plain `recv` before.
    @exclusivity(unchecked) private var takingDescriptors = false
    /// This side announced its descriptors to the publisher (before its first frame with some).
    @exclusivity(unchecked) private var descriptorsAnnounced = false

    init(fd: Int32, wakeFD: Int32, name: String, options: CrossProcessPortOptions, parameters: PublisherParameters, logger: Logger) {
        self.fd = fd
        self.wakeFD = wakeFD
        self.name = name
        self.options = options
        self.parameters = parameters
        self.logger = logger
        self.credits = parameters.credits
        receiveBuffer = .allocate(byteCount: options.maximumMessageSize + 1, alignment: 8)
        receiveControl = .allocate(byteCount: System.descriptorControlSize(options.maximumFileDescriptorsPerMessage), alignment: 8)
        sendBuffer = .allocate(byteCount: min(parameters.maximumFrameSize, 64 * 1024), alignment: 8)
    }

    deinit {
        readSource?.cancel() // before the close, as FileDescriptorSource asks
        keptReader?.stop()
        if fd >= 0 {
            if let asyncWatch { asyncWatch.set.remove(fd, token: asyncWatch.token) }
            System.closeDescriptor(fd)
        }
        System.closeDescriptor(wakeFD)
        receiveBuffer.deallocate()
        receiveControl.deallocate()
        sendBuffer.deallocate()
    }

    /// Sets what is told when the connection ends (once, before any reading starts).
    func setEndObserver(_ observer: @escaping @Sendable (MessagePort.InvalidationReason) -> Void) {
        locked { endObserver = observer }
    }

    /// Watches the socket on `loop` so frames are read as they arrive (and the end is seen at
    /// once). Does nothing when a loop already reads it or the connection is closed.
    ///
    /// While the source is being made the fd counts as polled, so it is not closed under it. A
    /// refusal lets the next caller try again.
    func startReading(on loop: PortRunLoop) throws(PortRunLoopError) {
        let fd = locked { () -> Int32 in
            guard self.fd >= 0, readLoop == nil else { return -1 } // claimed: a second caller does nothing
            readLoop = loop
            polling += 1
            return self.fd
        }
        guard fd >= 0 else { return }
        var made: Result<FileDescriptorSource, PortRunLoopError>
        do {
            let reference = WeakConnection(self)
            made = .success(try loop.watch(fileDescriptor: fd, inModes: [.common], onFailure: { [reference] in
                reference.connection?.socketRefused($0)
            }, reading: { [reference] in
                reference.connection?.readOnLoop(stoppingAt: nil) ?? false
            }))
        } catch {
            made = .failure(error)
        }
        locked {
            polling -= 1
            switch made {
            case .success(let source): readSource = source
            case .failure: readLoop = nil
            }
            closeIfEnded() // cancels the source first if the connection ended meanwhile
        }
        if case .failure(let error) = made { throw error }
    }

    /// Takes the lock, runs `body`, lets the lock go and reports an end found meanwhile.
    private func locked<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        condition.lock()
        defer { unlockReportingEnd() }
        return try body()
    }

    /// Lets the lock go; then resumes the tasks whose waits completed meanwhile
    /// (``resumeAfterUnlocking``) and, if the connection ended meanwhile (and not by the port's
    /// own invalidation), tells the end observer, once.
    private func unlockReportingEnd() {
        // The usual case, kept short.
        guard endToReport != nil || !resumeAfterUnlocking.isEmpty else { condition.unlock(); return }
        let report = endToReport.map { reason in (reason, endObserver) }
        endToReport = nil
        if report != nil { endObserver = nil }
        unlockResumingTasks()
        if let (reason, observer) = report { observer?(reason) }
    }

    /// Lets the lock go, then resumes the tasks whose waits completed meanwhile. Never under the
    /// lock: a task being cancelled holds its status lock while its cancellation handler runs,
    /// which takes this lock (to end the wait), and resuming a task takes its status lock.
    private func unlockResumingTasks() {
        guard !resumeAfterUnlocking.isEmpty else { condition.unlock(); return }
        let resumes = resumeAfterUnlocking
        resumeAfterUnlocking.removeAll()
        condition.unlock()
        for continuation in resumes { continuation.resume() }
    }

    /// With the lock held: completes `wait`; its task, if one waits, is resumed once the lock
    /// is let go (``unlockResumingTasks()``).
    private func finish(_ wait: ReplyWait) {
        if let continuation = wait.finish() { resumeAfterUnlocking.append(continuation) }
    }

    // MARK: RemoteEndpoint

    func send(before deadline: Double, msgid: UInt32, components: [Data], replyPort: MessagePort?,
              descriptors: [Int32]) -> Bool {
        switch send(flags: [], msgid: msgid, firstID: 0, components: components, replyPort: replyPort,
                    descriptors: descriptors, before: deadline, now: nil) {
        case .success: return true
        case .failure(let error):
            if case .tooManyFileDescriptors = error {
                logger.warning("MessagePort send to another process refused: too many file descriptors", metadata: [
                    LogKey.portName: "\(name)", LogKey.reason: "\(error)"])
            }
            if case .messageTooLarge = error {
                logger.warning("MessagePort send to another process refused: message too large", metadata: [
                    LogKey.portName: "\(name)", LogKey.reason: "\(error)"])
            }
            return false
        }
    }

    var isValid: Bool {
        locked {
            if ended == nil && !isReading { drainFrames() }
            return ended == nil
        }
    }

    func invalidate() {
        locked { // resumes the tasks the end completes
            endObserver = nil // the port is invalidating itself: nothing to report
            markEnded(.invalidPort, reason: .invalidated)
        }
    }

    /// Why the connection ended (what calls throw); nil while it is open.
    var endError: CrossProcessPortError? { locked { ended } }

    var readingLoop: PortRunLoop? { locked { readLoop } }

    /// How the reader thread watches the socket (``ReplyWatchSet``), as the connection sees it:
    /// the socket (-1 once closed), the set's epoll instance and the token the socket is
    /// registered with (nil before the first async request), whether it was armed and not yet
    /// reported, and how many tasks wait (for a reply, or to send). For tests, which compare it with the
    /// kernel's view (`/proc/self/fdinfo` of the set).
    var asyncWatchState: (socket: Int32, epoll: Int32?, token: UInt64?, armed: Bool, tasksWaiting: Int) {
        locked { (fd, asyncWatch?.set.descriptor, asyncWatch?.token, asyncArming != .none, suspendedTasks) }
    }

    /// Starts reading on `loop`, so that the connection's end is seen at once. A loop that has
    /// shut down cannot run the invalidation handler either (it then runs where the port is found
    /// invalid); a loop that refuses the socket ends the connection, as a later refusal would, so
    /// the handler is told now rather than at the next send.
    func watchForEnd(on loop: PortRunLoop) {
        do throws(PortRunLoopError) {
            try startReading(on: loop)
        } catch .loopShutDown {
            logger.warning("MessagePort could not watch a connection to another process for its end: its loop has shut down",
                           metadata: [LogKey.portName: "\(name)"])
        } catch {
            socketRefused(error)
        }
    }

    // MARK: Request and reply

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
    private func sendRequestFrame(for wait: ReplyWait, msgid: UInt32, components: [Data], descriptors: [Int32],
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
    private func spinForReply(to wait: ReplyWait, on spin: WaitSpin, until deadline: Double) -> Bool {
        spin.spin(from: System.monotonicSeconds(), until: deadline) {
            locked {
                if !isReading, ended == nil { drainFrames(stoppingAt: wait) }
                return wait.isComplete || ended != nil
            }
        }
    }

    /// The connection held weakly by the fd sources that read it (``startReading(on:)``'s, and a
    /// ``ReplyReader``'s) and by the ``ReplyWatchSet``: a `weak let`, read without the run-time exclusivity check a
    /// `[weak self]` capture (a mutable box) costs on every read.
    ///
    /// Thread-safety: `Sendable`; immutable.
    final class WeakConnection: Sendable {
        weak let connection: RemoteConnection?
        init(_ connection: RemoteConnection) { self.connection = connection }
    }

    /// A loop's reader of replies: a fd source of the connection in the loop's private
    /// `.synchronousWait` mode, and the request it now serves (its read ends at that request's
    /// reply; nil between requests: it reads everything waiting).
    ///
    /// The reader knows its loop by identity only, not by a weak reference: a weak reference gives
    /// the loop a side table, after which every retain and release of the loop (several per turn)
    /// takes the runtime's slow path. The source stands for the loop's life instead: it holds the
    /// loop until it is cancelled, and the loop cancels it when it shuts down.
    ///
    /// Thread-safety: `@unchecked Sendable`; `wait`, `source` and `isKept` are written with the
    /// connection's mutex held, on the reader's own loop thread, which is also where its source's
    /// handler reads `wait` (before it takes the mutex): that read is confined to the thread of
    /// every write. The mutex and the one thread make every access exclusive (so they are
    /// `@exclusivity(unchecked)`, as the connection's own are); `loopID` and `connection` are
    /// immutable.
    private final class ReplyReader: @unchecked Sendable {
        let loopID: ObjectIdentifier
        /// The connection, held weakly (a kept reader outlives requests).
        let connection: WeakConnection
        @exclusivity(unchecked) var source: FileDescriptorSource?
        @exclusivity(unchecked) var wait: ReplyWait?
        /// The connection's ``keptReader``: armed between requests, not counted in `polling`.
        @exclusivity(unchecked) var isKept = false

        init(loop: PortRunLoop, wait: ReplyWait, connection: RemoteConnection) {
            loopID = ObjectIdentifier(loop)
            self.wait = wait
            self.connection = WeakConnection(connection)
        }

        /// True while the reader's source is armed on `loop` (its loop has not shut down).
        func serves(_ loop: PortRunLoop) -> Bool { loopID == ObjectIdentifier(loop) && isLive }

        /// False once the source was cancelled (by ``stop()``, or by its loop shutting down).
        var isLive: Bool { !(source?.isCancelled ?? true) }

        /// With the connection's mutex held: cancels the source and lets it go (its handler
        /// holds this reader: the cycle ends here).
        func stop() {
            source?.cancel()
            source = nil
        }
    }

    /// Finds or makes the reader through which a request waiting on `loop` reads its reply: its
    /// handler reads the frames (completing the request's wait), so the reply is read while the
    /// loop serves synchronous work addressed to it (another thread's `performAndWait`, a
    /// `postAndWait` delivery, perhaps made by the very handler that is to answer). Nil when the
    /// connection is closed or the loop refused the fd: the caller then polls the socket.
    ///
    /// One reader is kept between requests (``keptReader``), for the loop that made it: a
    /// request/reply exchange from a loop's thread then costs no `epoll_ctl` and no registration
    /// (the kept source stays armed in `.synchronousWait`, a mode only blocking waits run). A
    /// reader made while the kept one is busy (a request nested in the wait of another on the same
    /// thread) or belongs to another loop is temporary: it counts as a poller, so the fd is not
    /// closed under it, and is cancelled when its request ends (``finishServing(_:)``). The kept
    /// one is cancelled before the fd is closed (``closeIfEnded()``), like the `readingOn:` source.
    private func serveReplies(on loop: PortRunLoop, for wait: ReplyWait) -> ReplyReader? {
        let (kept, fd) = locked { () -> (ReplyReader?, Int32) in
            guard self.fd >= 0 else { return (nil, -1) }
            if let kept = keptReader, kept.wait == nil, kept.serves(loop) {
                kept.wait = wait
                return (kept, -1)
            }
            polling += 1
            return (nil, self.fd)
        }
        if let kept { return kept }
        guard fd >= 0 else { return nil }
        let reader = ReplyReader(loop: loop, wait: wait, connection: self)
        // The reader holds the source and the source's handler the reader: a cycle that
        // cancelling the source breaks. The connection is held weakly, by the reader.
        if let source = try? loop.watch(fileDescriptor: fd, inModes: [.synchronousWait], onFailure: { [reader] in
            reader.connection.connection?.socketRefused($0)
        }, reading: { [reader] in
            reader.connection.connection?.readOnLoop(stoppingAt: reader.wait) ?? false
        }) {
            locked { reader.source = source }
            return reader
        }
        locked { polling -= 1; closeIfEnded() }
        return nil
    }

    /// A loop's read of the socket (the handler of a loop's read source, or its spin read,
    /// ``FileDescriptorSource/spinRead``): the frames waiting, up to `wait`'s reply when given (the
    /// request a ``ReplyReader`` serves). Wakes a thread polling the socket meanwhile, which then
    /// finds what it waits for read, and tells the reading loop how soon the exchange turns
    /// around (``PortRunLoop/noteAnswer(after:)``). Returns whether it read anything.
    private func readOnLoop(stoppingAt wait: ReplyWait?) -> Bool {
        let (read, answerGap) = locked { () -> (Bool, Double) in
            lastAnswerGap = .infinity // only what this read finds
            let read = drainFrames(stoppingAt: wait)
            if isReading { System.signalEventfd(wakeFD) }
            return (read, lastAnswerGap)
        }
        condition.broadcast()
        // The reading loop is this thread's, the main thread's included (``ThreadLocals/loop``
        // mirrors the loops of threads other than the main thread).
        if answerGap < .infinity { PortRunLoop.existingForCurrentThread()?.noteAnswer(after: answerGap) }
        return read
    }

    /// A request that waited through `reader` is over: the kept reader stays armed for the next
    /// one; a temporary one becomes the kept one when there is none (or the kept one's loop is
    /// gone) and the connection is open, and is cancelled otherwise.
    private func finishServing(_ reader: ReplyReader) {
        locked {
            reader.wait = nil
            guard !reader.isKept else { return } // cancelled already if the connection closed
            polling -= 1
            if ended == nil, fd >= 0, !(keptReader?.isLive ?? false) {
                keptReader?.stop() // its loop is gone
                reader.isKept = true
                keptReader = reader
            } else {
                reader.stop() // before the fd may be closed (FileDescriptorSource's rule)
            }
            closeIfEnded()
        }
    }

    // MARK: Async requests

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
        let wait = ReplyWait(waiter: nil)
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
        let room = ReplyWait(waiter: nil)
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
    private func resumeRoomWaits(forRoomToo: Bool) {
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
    private var suspendedTasks: Int {
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

    // MARK: Sending

    /// Sends a message frame with these fields (and, for a reply port, its route), spending a
    /// credit; waits for a credit or room in the socket until `deadline`. The frame is written from
    /// the fields, with no ``CrossProcessFrame`` made (no copy of `components` to retain and
    /// release), into the connection's send buffer, or, for a frame larger than that, a temporary
    /// one (`withUnsafeTemporaryAllocation`, as ``InboundConnection`` does for replies).
    ///
    /// `now`: the caller's reading of the clock, used for the frame's answer time on the first
    /// try (nil: read here). Returns when the frame went out: that reading, or a later one when
    /// the send had to wait.
    private func send(flags: CrossProcessFrame.Flags, msgid: UInt32, firstID: UInt64, components: [Data],
                      replyPort: MessagePort?, descriptors: [Int32],
                      before deadline: Double, now: Double?) -> Result<Double, CrossProcessPortError> {
        let size = CrossProcessFrame.encodedSize(of: components)
        let limit = parameters.maximumFrameSize
        guard size <= limit else { return .failure(.messageTooLarge(size: size, limit: limit)) }
        if !descriptors.isEmpty, descriptors.count > options.maximumFileDescriptorsPerMessage {
            return .failure(.tooManyFileDescriptors(count: descriptors.count, limit: options.maximumFileDescriptorsPerMessage))
        }
        if let replyPort {
            precondition(replyPort.remote == nil,
                         "MessagePort.send(before:msgid:components:from:): the reply port of a message to another process must be a local port")
        }
        condition.lock()
        defer { unlockReportingEnd() }
        var clockReading = now
        while true {
            // The caller's reading serves the first try only: every later one follows a wait.
            let tryStart = clockReading.take()
            if let ended { return .failure(ended) }
            if credits == 0 && !isReading {
                drainFrames()
                if let ended { return .failure(ended) } // the drain found the end
            }
            if credits > 0 {
                let route = replyPort.map(routeID(for:)) ?? 0
                let frameFlags = route == 0 ? flags : flags.union(.replyRoute)
                let descriptorCount = UInt8(truncatingIfNeeded: descriptors.count)
                let sendingAt = tryStart ?? System.monotonicSeconds()
                let answer = answers.answerTime(sendingAt: sendingAt)
                let fd = self.fd
                // Encodes the frame into `buffer` and sends it.
                func send(in buffer: UnsafeMutableRawBufferPointer) -> System.SocketResult {
                    let length = CrossProcessFrame.encode(
                        kind: .message, flags: frameFlags, msgid: msgid, firstID: firstID, secondID: route,
                        descriptorCount: descriptorCount, answerMicroseconds: answer, components: components,
                        into: buffer)
                    let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
                    return descriptors.isEmpty ? System.sendFrame(fd, bytes)
                        : descriptors.withUnsafeBufferPointer { System.sendFrame(fd, bytes, descriptors: $0) }
                }
                let announcementFailed = descriptors.isEmpty ? nil
                    : CrossProcessFrame.announceDescriptors(on: fd, announced: &descriptorsAnnounced)
                let result = announcementFailed ?? (size <= sendBuffer.count
                    ? send(in: sendBuffer)
                    : withUnsafeTemporaryAllocation(byteCount: size, alignment: 8) { send(in: $0) })
                switch result {
                case .done:
                    credits -= 1
                    PortRunLoop.noteMessageSentFromCurrentThread() // the peer may well answer
                    return .success(sendingAt)
                case .wouldBlock:
                    // The socket is full (large frames): wait for room, without the lock.
                    let fd = self.fd
                    polling += 1
                    unlockResumingTasks()
                    let ready = System.monotonicSeconds() < deadline
                        ? System.poll(fd, for: .writable, untilMonotonic: deadline) : []
                    condition.lock()
                    polling -= 1
                    closeIfEnded()
                    if let ended { return .failure(ended) }
                    if ready.isEmpty { return .failure(.sendTimedOut) }
                case .closed:
                    markEnded(.peerDied, reason: .peerDied)
                case .failed(let code):
                    logger.warning("MessagePort send to another process failed", metadata: [
                        LogKey.portName: "\(name)", LogKey.error: "\(System.Errno(code))"])
                    return .failure(.systemCallFailed("send", errno: code))
                case .truncated:
                    return .failure(.systemCallFailed("send", errno: 0))
                }
            } else if !waitForFrames(until: deadline) {
                return .failure(.sendTimedOut)
            }
        }
    }

    /// With the lock held: the route id of a local reply port.
    private func routeID(for port: MessagePort) -> UInt64 {
        if let id = routeIDs[ObjectIdentifier(port)] { return id }
        for (id, old) in routes where !old.isValid {
            routes[id] = nil
            routeIDs[ObjectIdentifier(old)] = nil
        }
        let id = nextRouteID
        nextRouteID += 1
        routes[id] = port
        routeIDs[ObjectIdentifier(port)] = id
        return id
    }

    // MARK: Reading

    /// With the lock held: waits until frames were read (by this thread or another) or `deadline`
    /// passed. Returns false on timeout; true when something may have changed (look again).
    /// With `wait`, the read ends as soon as that request's reply is in (``drainFrames(stoppingAt:)``).
    private func waitForFrames(until deadline: Double, stoppingAt wait: ReplyWait? = nil) -> Bool {
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

    /// With the lock held: reads and handles every frame waiting, without blocking, or, given a
    /// request's `wait`, only up to the frame that completes it.
    ///
    /// Ending at a request's reply spares the round trip the `recv` that would find the socket
    /// empty. Frames that came after the reply (credits, routed messages, other replies) stay in
    /// the socket for the next look, and every reader that needs them looks: a send without a
    /// credit drains before it waits, a waiting request polls the socket (readable at once), and a
    /// loop's read source is level-triggered, so a `readingOn:` loop reads them at its next turn.
    /// Returns whether it read anything (a frame, or the end).
    @discardableResult
    private func drainFrames(stoppingAt wait: ReplyWait? = nil) -> Bool {
        var read = false
        while ended == nil, fd >= 0, !(wait?.isComplete ?? false) {
            var descriptorCount: Int32 = 0
            // Until the publisher announces descriptors, a plain `recv`: `recvmsg` costs ~0.2 µs
            // more per frame, with or without a control buffer (and a descriptor sent anyway is
            // closed by the kernel, its frame then refused below).
            let result = takingDescriptors
                ? System.receiveFrame(fd, into: receiveBuffer, control: receiveControl, descriptorCount: &descriptorCount)
                : System.receiveFrame(fd, into: receiveBuffer)
            // Owned at once: every path below that does not hand them on closes them.
            let descriptors = descriptorCount > 0
                ? System.takeDescriptors(receiveControl.baseAddress!, count: Int(descriptorCount)) : []
            guard descriptorCount >= 0 else {
                protocolViolation("file descriptors were lost (the control data was truncated)")
                return true
            }
            switch result {
            case .wouldBlock:
                return read
            case .closed:
                markEnded(.peerDied, reason: .peerDied)
            case .failed(let code):
                connectionFailed(code)
            case .truncated(let length):
                protocolViolation("a frame of \(length) bytes exceeds the maximum of \(options.maximumMessageSize)")
            case .done(let length) where length > options.maximumMessageSize:
                protocolViolation("a frame of \(length) bytes exceeds the maximum of \(options.maximumMessageSize)")
            case .done(let length):
                let frame: CrossProcessFrame
                do { frame = try CrossProcessFrame.parse(UnsafeRawBufferPointer(rebasing: receiveBuffer[0..<length])) } catch {
                    protocolViolation("malformed frame: \(error)")
                    read = true
                    continue
                }
                if let violation = frame.descriptorViolation(received: descriptors.count,
                                                             limit: options.maximumFileDescriptorsPerMessage,
                                                             announced: takingDescriptors, sender: "publisher") {
                    protocolViolation(violation)
                    return true
                }
                handle(frame, descriptors: descriptors)
            }
            read = true
        }
        return read
    }

    private func handle(_ frame: CrossProcessFrame, descriptors: [TransferredFileDescriptor]) {
        if frame.kind == .reply || frame.kind == .routed {
            lastAnswerGap = answers.read(at: System.monotonicSeconds(), peerAnswer: frame.answerMicroseconds)
        }
        switch frame.kind {
        case .credit:
            credits += Int(frame.firstID)
            if credits > parameters.credits { protocolViolation("more credits returned than granted") }
            resumeRoomWaits(forRoomToo: false)
        case .reply:
            if let wait = requests[id: frame.firstID], wait.reply == nil {
                wait.reply = ReplyWait.Reply(msgid: frame.msgid, components: frame.components, descriptors: descriptors)
                wait.answerGap = lastAnswerGap
                finish(wait)
            } else {
                dropped += 1 // its request gave up (receive timeout)
            }
        case .routed:
            guard let port = routes[frame.firstID],
                  port.send(before: .distantPast, msgid: frame.msgid, components: frame.components, context: CallerContext.capture(),
                            descriptors: descriptors) else {
                dropped += 1
                logger.notice("MessagePort dropped a message for a reply port (unknown, invalid or full)", metadata: [
                    LogKey.portName: "\(name)"])
                return
            }
        case .message:
            protocolViolation("the publisher sent a message frame")
        case .closing:
            markEnded(.invalidPort, reason: .publisherWithdrew)
        case .descriptors:
            takingDescriptors = true
        }
    }

    /// A loop's thread: the loop cancelled a source reading the socket on its own (a registration
    /// or re-arm it could not make): the `readingOn:` loop's source, or the reader a request
    /// waiting on a loop reads its reply with. Nothing would read what the publisher sends back
    /// there, and a request would wait out its timeout for a reply already come: the connection
    /// ends, and the port becomes invalid with the reason. (A reader refused while it is made, on
    /// the request's own thread, is no reader: that request polls the socket instead.)
    func socketRefused(_ error: PortRunLoopError) {
        logger.warning("MessagePort connection to another process ended: its loop could not watch the socket", metadata: [
            LogKey.portName: "\(name)", LogKey.error: "\(error)"])
        locked {
            markEnded(.loopRefusedSocket(error), reason: .connectionFailed("the loop could not watch its socket: \(error)"))
        }
    }

    /// With the lock held: a read of the socket failed with `code`. Logged and ended out of line
    /// (as ``protocolViolation(_:)`` is): the logger's inlined code reads its storage's handler,
    /// a class's `var`, with a run-time exclusivity check, which the compiler may otherwise make
    /// at the top of ``drainFrames(stoppingAt:)``, on every read.
    @inline(never)
    private func connectionFailed(_ code: Int32) {
        logger.warning("MessagePort connection to another process failed", metadata: [
            LogKey.portName: "\(name)", LogKey.error: "\(System.Errno(code))"])
        markEnded(.systemCallFailed("recv", errno: code), reason: .connectionFailed("recv: \(System.Errno(code))"))
    }

    @inline(never)
    private func protocolViolation(_ why: String) {
        logger.warning("MessagePort closed a connection to another process: protocol violation", metadata: [
            LogKey.portName: "\(name)", LogKey.reason: "\(why)"])
        markEnded(.peerDied, reason: .protocolViolation(why))
    }

    /// With the lock held: the connection ended (`why` is what waiting calls throw, `reason` what
    /// the port's invalidation handler is told). The socket is shut down (a thread polling it
    /// wakes; the peer sees end of file) and closed as soon as no thread polls it; waiting
    /// requests complete (they find `ended`).
    private func markEnded(_ why: CrossProcessPortError, reason: MessagePort.InvalidationReason) {
        guard ended == nil else { return }
        ended = why
        if endObserver != nil { endToReport = reason }
        if fd >= 0 { System.shutdown(fd) }
        closeIfEnded()
        requests.forEach(finish)
        resumeRoomWaits(forRoomToo: true)
        condition.broadcast()
    }

    /// With the lock held: once ended and nobody polls the fd, stops the loop's read source (first,
    /// as FileDescriptorSource asks) and closes the fd. Cancelling takes no lock of ours.
    private func closeIfEnded() {
        guard ended != nil, polling == 0, fd >= 0 else { return }
        readSource?.cancel()
        readSource = nil
        if let asyncWatch { asyncWatch.set.remove(fd, token: asyncWatch.token) }
        asyncWatch = nil
        keptReader?.stop()
        keptReader = nil
        System.closeDescriptor(fd)
        fd = -1
    }
}
