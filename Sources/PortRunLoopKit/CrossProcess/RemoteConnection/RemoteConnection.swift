import Foundation
import Logging

/// The client end of a connection to a published port: what the sends of a remote ``MessagePort``
/// go through (made by ``MessagePortNameRegistry/remotePort(named:options:readingOn:)``).
///
/// Sending: one frame per message, each costing a credit; with none left, the sender reads the
/// socket (credit frames come back as the publisher's loop takes messages) until its date. Reading
/// is done by whichever thread needs frames: one thread at a time polls the socket (`isReading`)
/// while the others wait for it to have read (``readWaits``, in the package's one blocking wait);
/// whoever reads processes every frame waiting (credits, replies, routed messages) and completes
/// those waits (``readersMayLookAgain()``). A loop given at lookup also reads, whenever
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
/// The code, by concern: this file, the state, the lock's discipline and the ``RemoteEndpoint``
/// calls; `+BlockingRequests`, a thread waiting for its reply (the spin, the poll, the election of
/// one reader); `+LoopReading`, a loop reading the socket (the `readingOn:` source, the reply
/// reader of a request waiting on its loop); `+AsyncRequests`, a task waiting for its reply or to
/// send (the suspension, the arming in the reader thread's set, its timer); `+Sending`, a frame
/// written (credits, routes); `+Reading`, the frames read and handled; `+Ending`, the end of the
/// connection (a failure, a protocol violation, the close).
///
/// Thread-safety: `@unchecked Sendable`; every `var` below is guarded by `mutex` (the library's one mutex type, here in its
/// lock/unlock form because a reader lets it go around `poll`);
/// `name`, `options`, `parameters` and `logger` are immutable; the buffers `receiveBuffer`,
/// `receiveControl` and `sendBuffer` are immutable pointers whose memory is used with the mutex
/// held only. The guarded `var`s on a request's path are `@exclusivity(unchecked)`: the mutex
/// already makes every access exclusive, and the run-time checks would be ~700 instructions of a
/// request/reply exchange.
final class RemoteConnection: RemoteEndpoint, @unchecked Sendable {
    let name: String
    let options: CrossProcessPortOptions
    let parameters: PublisherParameters
    let logger: Logger
    let mutex = TracedMutex<Void>(())
    let receiveBuffer: UnsafeMutableRawBufferPointer
    /// Where a receive takes the descriptors of a frame (room for the options' limit; a frame with
    /// more is cut short by the kernel, a protocol violation).
    let receiveControl: UnsafeMutableRawBufferPointer
    /// Where a send builds its frame (with the lock held; built again after the lock was let go
    /// around a `poll`, since another sender may have used it meanwhile): no allocation per send.
    /// At most 64 KiB (the publisher's maximum comes from its lock file): a larger frame is built
    /// in an array of its own.
    let sendBuffer: UnsafeMutableRawBufferPointer

    @exclusivity(unchecked) var fd: Int32
    @exclusivity(unchecked) var credits: Int
    @exclusivity(unchecked) var isReading = false
    /// Threads waiting for the thread that polls the socket to have read (a send waiting for a
    /// credit, a request for its reply): each looks again once the reading is done.
    @exclusivity(unchecked) var readWaits = StateChangeWaits()
    /// Threads inside `poll` on `fd` (the reader, and senders waiting for room): the fd is closed
    /// only when none is, so no `poll` ever watches a closed (and possibly reused) fd number.
    @exclusivity(unchecked) var polling = 0
    /// Why the connection ended (what waiting calls throw); nil while open.
    @exclusivity(unchecked) var ended: CrossProcessPortError?
    /// The end, for the port's invalidation handler, until it is reported (``unlockReportingEnd()``).
    @exclusivity(unchecked) var endToReport: MessagePort.InvalidationReason?
    /// Told the reason the connection ended, once, without the lock held (the remote port
    /// invalidates itself). Not told of an end caused by the port's own ``invalidate()``.
    var endObserver: (@Sendable (MessagePort.InvalidationReason) -> Void)?
    @exclusivity(unchecked) var nextRequestID: UInt64 = 1
    /// Requests waiting for their reply, by request id; the reply is stored in the wait.
    @exclusivity(unchecked) var requests = PendingRequests()
    /// Local reply ports named in sends, by route id (held like a message holds its reply port).
    @exclusivity(unchecked) var routes: [UInt64: MessagePort] = [:]
    @exclusivity(unchecked) var routeIDs: [ObjectIdentifier: UInt64] = [:]
    @exclusivity(unchecked) var nextRouteID: UInt64 = 1
    @exclusivity(unchecked) var readSource: FileDescriptorSource?
    /// The loop `readSource` belongs to (weak: a connection does not keep a loop alive).
    weak var readLoop: PortRunLoop?
    /// The eventfd through which a thread that reads the socket on another's behalf (a loop's
    /// read source or reply reader, the reader thread) wakes a thread polling it. Made with the
    /// connection, so that every poller polls it: one made later would be missed by a poll begun
    /// before it. Immutable; closed in deinit (a poller may hold its number until then).
    let wakeFD: Int32
    /// The reply reader kept between requests for the loop that made it (``serveReplies(on:for:)``);
    /// cancelled when the connection closes (``closeIfEnded()``).
    @exclusivity(unchecked) var keptReader: ReplyReader?
    /// The ``ReplyWatchSet`` the socket is in once an async request was made on the connection,
    /// and the token it is registered with; taken out when the connection closes (``closeIfEnded()``).
    @exclusivity(unchecked) var asyncWatch: (set: ReplyWatchSet, token: UInt64)?
    /// How the socket is armed in ``asyncWatch``'s set: for a task that waits, and the reader
    /// thread has not been told since (``readForWaitingTasks()``).
    @exclusivity(unchecked) var asyncArming = AsyncArming.none
    enum AsyncArming { case none, reading, readingAndWriting }
    /// Async requests' tasks waiting to send: for a credit (a frame read from the socket, by
    /// whichever thread reads it, resumes them) or, with `forRoom`, for room in the socket (the
    /// reader thread's report resumes them). Each then tries again (``awaitRoomToSend(until:)``).
    @exclusivity(unchecked) var roomWaits: [ReplyWait] = []
    /// When the reader thread's timer for async requests' receive deadlines fires (monotonic
    /// seconds), nil when none is armed (``armAsyncTimer(for:)``).
    @exclusivity(unchecked) var asyncTimerDue: Double?
    /// Replies that came after their request gave up, routed messages for unknown routes or
    /// refused by a full reply port.
    @exclusivity(unchecked) var dropped = 0
    /// The continuations of tasks whose waits completed, resumed once the lock is let go
    /// (``unlockResumingTasks()``).
    @exclusivity(unchecked) var resumeAfterUnlocking: [CheckedContinuation<Void, Never>] = []
    /// This side's answer times (``AnswerTiming``), and how soon the exchange turned around by the
    /// last reply or routed message read (set to infinity by a reader before it reads).
    @exclusivity(unchecked) var answers = AnswerTiming()
    @exclusivity(unchecked) var lastAnswerGap = Double.infinity
    /// The publisher announced that its frames may carry descriptors (``CrossProcessFrame/Kind/descriptors``):
    /// frames are read with a control buffer from then on, and with a plain `recv` before.
    @exclusivity(unchecked) var takingDescriptors = false
    /// This side announced its descriptors to the publisher (before its first frame with some).
    @exclusivity(unchecked) var descriptorsAnnounced = false

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

    /// Takes the lock, runs `body`, lets the lock go and reports an end found meanwhile.
    func locked<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        mutex.lock()
        defer { unlockReportingEnd() }
        return try body()
    }

    /// Lets the lock go; then resumes the tasks whose waits completed meanwhile
    /// (``resumeAfterUnlocking``) and, if the connection ended meanwhile (and not by the port's
    /// own invalidation), tells the end observer, once.
    func unlockReportingEnd() {
        // The usual case, kept short.
        guard endToReport != nil || !resumeAfterUnlocking.isEmpty else { mutex.unlock(); return }
        let report = endToReport.map { reason in (reason, endObserver) }
        endToReport = nil
        if report != nil { endObserver = nil }
        unlockResumingTasks()
        if let (reason, observer) = report { observer?(reason) }
    }

    /// Lets the lock go, then resumes the tasks whose waits completed meanwhile. Never under the
    /// lock: a task being cancelled holds its status lock while its cancellation handler runs,
    /// which takes this lock (to end the wait), and resuming a task takes its status lock.
    func unlockResumingTasks() {
        guard !resumeAfterUnlocking.isEmpty else { mutex.unlock(); return }
        let resumes = resumeAfterUnlocking
        resumeAfterUnlocking.removeAll()
        mutex.unlock()
        for continuation in resumes { continuation.resume() }
    }

    /// With the lock held: completes `wait`; its task, if one waits, is resumed once the lock
    /// is let go (``unlockResumingTasks()``).
    func finish(_ wait: ReplyWait) {
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

    /// The connection held weakly by the fd sources that read it (``startReading(on:)``'s, and a
    /// ``ReplyReader``'s) and by the ``ReplyWatchSet``: a `weak let`, read without the run-time exclusivity check a
    /// `[weak self]` capture (a mutable box) costs on every read.
    ///
    /// Thread-safety: `Sendable`; immutable.
    final class WeakConnection: Sendable {
        weak let connection: RemoteConnection?
        init(_ connection: RemoteConnection) { self.connection = connection }
    }
}
