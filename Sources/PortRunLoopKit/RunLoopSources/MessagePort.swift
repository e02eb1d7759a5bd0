import Foundation
import Logging
import ServiceContextModule
import Synchronization

/// A port a ``PortRunLoop`` listens on: the Linux stand-in for `NSMachPort`/`NSMessagePort`.
///
/// Any thread sends; the loop the port is scheduled in delivers each message to the port's
/// ``delegate`` (or ``setHandler(_:)`` closure) on its own thread, first in, first out.
///
/// Like a Mach port, a port has a queue limit (``defaultQueueLimit`` = 5, as `MACH_PORT_QLIMIT_DEFAULT`).
/// A message counts against it from `send` until the loop takes it for delivery. When the queue is
/// full, `send` waits for room until its date; a date now or in the past tries once. Messages sent
/// while the loop is not running (or before the port is scheduled) are held and delivered when it
/// next runs.
///
/// A port can be published for other processes, and a *remote* port (from
/// ``MessagePortNameRegistry/remotePort(named:options:readingOn:)``) stands for a port of another
/// process: its sends cross a Unix socket, bounded by credits instead of a local queue, and it is
/// never scheduled in a loop (its ``queueLimit`` and handler are unused). See <doc:CrossProcessPorts>.
///
/// Thread-safety: `Sendable`; every member is safe from any thread. Handlers run on the loop's thread.
public final class MessagePort: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// Mach's default queue limit, `MACH_PORT_QLIMIT_DEFAULT`.
    ///
    /// Thread-safety: a constant.
    public static let defaultQueueLimit = 5

    /// One queued message: 16 bytes for a pure signal, which is what crosses CPUs per message in a
    /// burst (the producer writes it, the loop's CPU reads it).
    struct Envelope {
        let msgid: UInt32
        /// The components, reply port and sender's context; nil for a pure signal (no components,
        /// no reply port, sent with no `ServiceContext` set), so such a send neither allocates nor
        /// retains anything.
        let payload: Payload?
    }

    /// What a message carries besides its `msgid`. Immutable.
    final class Payload: Sendable {
        let components: [Data]
        /// Where replies go (``ReplyAddress``).
        let replyAddress: ReplyAddress?
        /// The sender's `ServiceContext`, restored around the handler (``CallerContext``).
        let context: CapturedContext?
        /// For a message that came from another process: told when the loop hands it to the
        /// handler (the sender's credit comes back; see ``CreditSink``).
        let creditSink: (any CreditSink)?
        /// The file descriptors the message carries (closed with the payload unless taken).
        let fileDescriptors: [TransferredFileDescriptor]
        /// Whether it has a reply address or descriptors: a delivered ``Message`` then keeps it
        /// (``Message/extras``); otherwise only its components. Kept, not derived: deriving it
        /// reads the descriptors array's header, one more cache line per delivered message.
        let hasExtras: Bool
        /// Whether it carries nothing but a credit sink: a pure signal from another process (one
        /// payload shared by all of a connection's signals). The loop delivers it as a pure
        /// signal and gives the credit back, with nothing to carry into the ``Message``.
        let carriesOnlyCredit: Bool

        convenience init(components: [Data], replyPort: MessagePort?, context: CapturedContext?, creditSink: (any CreditSink)? = nil,
             fileDescriptors: [TransferredFileDescriptor] = []) {
            self.init(components: components, replyAddress: replyPort.map(ReplyAddress.port), context: context,
                      creditSink: creditSink, fileDescriptors: fileDescriptors)
        }

        init(components: [Data], replyAddress: ReplyAddress?, context: CapturedContext?, creditSink: (any CreditSink)?,
             fileDescriptors: [TransferredFileDescriptor]) {
            self.fileDescriptors = fileDescriptors
            self.components = components
            self.replyAddress = replyAddress
            self.context = context
            self.creditSink = creditSink
            self.hasExtras = replyAddress != nil || !fileDescriptors.isEmpty
            self.carriesOnlyCredit = creditSink != nil && components.isEmpty && !hasExtras && context == nil
        }
    }

    private struct State: ~Copyable {
        // The first cache line (the state is allocated on lines of its own): everything a send
        // touches, the lock included, 64 bytes. The loop takes it once per batch (the lock and the
        // swap of `queue`), so a batch moves one line between the CPUs, as in the floor.
        var queue = HandoffQueue<Envelope>()
        var sent = 0
        var limit: Int
        var loop: PortRunLoop?
        /// A copy of the gate's closed bit (``DeliveryGate``; set under this lock by ``invalidate()``
        /// after the gate closes), kept on the send's own cache line: the gate's word is written by
        /// the loop as each handler starts and ends, and a sender reading it per message would pull
        /// that line away from the loop during a burst.
        var isValid = true
        var readyOnLoop = false
        /// Guards everything in the state but itself (see ``MessagePort/lock()``).
        let word = LockWord()
        // The second line: what the loop reads per batch and senders only when the queue is
        // full or a send fails, so a burst's sends do not lose the first line to these reads.
        var spaceWaiters = 0
        weak var delegate: (any MessagePortDelegate)?
        var handler: (@Sendable (MessagePort.Message) -> Void)?
        var rejected = 0
        /// The sends among `rejected` that found the port full until their date (what is logged).
        var rejectedFull = 0
        var discarded = 0
        /// The modes of `loop` the port is scheduled in: the truth the loop's registration follows.
        var modes: Set<RunLoop.Mode> = []
        /// A loop the port was removed from whose thread has not let go of it yet (it may be
        /// delivering a batch it took). No other loop takes messages until it has.
        var leaving: PortRunLoop?
        /// Messages delivered by loops whose batch ended after a handler took the port out of
        /// them (``countDelivered(afterLeaving:)``); the rest are in `deliveredCounter`.
        var deliveredAfterLeaving = 0
        /// `loop`'s registration of the port, once its thread has made it: what that thread looks
        /// up per batch, instead of hashing the port into its table. Only `loop`'s thread reads the
        /// object. Cleared whenever `loop` is (the port leaves its last mode there, or is
        /// invalidated, as every port of a loop that shuts down is): that breaks the reference
        /// cycle with the registration's own reference to the port.
        var registration: PortRegistration?
    }

    // Layout matters here (stored properties are laid out in declaration order). The loop's thread
    // writes the object's first cache line once per delivered message (`deliveredCounter`);
    // senders read `stateStorage` once per send. `cacheLinePadding` keeps the two at
    // least 64 bytes apart, so a burst does not bounce one cache line between the two CPUs on
    // every message (false sharing). `state` and `ownerBuffer` live on cache lines of their own
    // (``CacheLine``) for the same reason: the loop pops `ownerBuffer` per message.

    /// Delivered / discarded-by-the-loop counts, written by the loop's thread only.
    let deliveredCounter = OwnerCounter()
    private let ownerDiscardedCounter = SharedCounter()
    /// Decides whether a handler may start (closed by `invalidate`).
    let gate = DeliveryGate()
    /// Messages the loop has taken for delivery. Owner (loop) thread only; behind a pointer for
    /// the same reason as `state` (one pop per delivered message).
    private let ownerBufferStorage: UnsafeMutablePointer<HandoffQueue<Envelope>>
    var ownerBuffer: HandoffQueue<Envelope> {
        unsafeAddress { UnsafePointer(ownerBufferStorage) }
        unsafeMutableAddress { ownerBufferStorage }
    }
    private let cacheLinePadding: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    // Senders waiting for room (the queue was full) sleep in the ``ParkingLot`` (keyed by
    // `roomGeneration`'s owner, ``roomKey``) until `roomGeneration` moves; whoever may have made room
    // (the loop taking a batch, a raised limit, `invalidate`) bumps it with the lock held and then
    // wakes the key (``notifyRoomChanged()``). A waiter reads the generation with the lock held
    // before it sleeps, so it cannot miss a bump (an eventcount).
    private var roomKey: UnsafeRawPointer { UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()) }
    private let roomGeneration = Atomic<UInt>(0)
    // Guarded by its own `word` (``lock()``). Kept behind a pointer and reached through addressors, so that `send` and
    // the loop's delivery pay no dynamic exclusivity check (swift_beginAccess/endAccess, two TLS
    // look-ups each) per access: the lock, not the compiler, is what serializes access here.
    private let stateStorage: UnsafeMutablePointer<State>
    private var state: State {
        unsafeAddress { UnsafePointer(stateStorage) }
        unsafeMutableAddress { stateStorage }
    }
    /// The logger passed to `init`; nil: the logger of the loop the port is scheduled in.
    private let ownLogger: Logger?
    /// Set for a port that stands for a port in another process (CrossProcess/): sends go to it,
    /// and the port is never scheduled in a loop.
    let remote: (any RemoteEndpoint)?
    /// What the first invalidation calls (internal observers: CrossProcess/ unpublishes the port's
    /// name; the user's handler) and records (the reason, the port's loop then).
    let invalidation = TracedMutex(InvalidationRecord())
    /// Whether a message from another process was ever queued (only then does a discard look for
    /// credits to give back). Set before such a message is queued under the lock.
    private let remoteSendersSeen = Atomic<Bool>(false)

    // The lock that guards `state`: the ``LockWord`` on the state's first line (one inlined
    // atomic to lock and one to unlock), keyed in the parking lot by the state's address.
    @inline(__always) private func lock() { state.word.lock(key: stateStorage) }
    @inline(__always) private func unlock() { state.word.unlock(key: stateStorage) }
    @inline(__always) private func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Makes a port with the given queue limit (at least 1).
    ///
    /// - Parameters:
    ///   - queueLimit: the most messages that may wait for delivery at once.
    ///   - logger: where the port logs messages discarded by ``invalidate()`` (`.notice`, with the
    ///     count) and sends rejected because it stayed full (`.warning`, aggregated: the first
    ///     rejection, then one entry per ``rejectionLogInterval`` rejections, with the counts);
    ///     never anything per message. nil (the default): the ``PortRunLoop/logger`` of the loop
    ///     the port is scheduled in when there is something to log, or nothing if it is in none.
    ///
    /// Thread-safety: any thread.
    public init(queueLimit: Int = MessagePort.defaultQueueLimit, logger: Logger? = nil) {
        precondition(queueLimit >= 1, "MessagePort: the queue limit must be at least 1, got \(queueLimit)")
        ownLogger = logger
        remote = nil
        stateStorage = CacheLine.allocate(State(limit: queueLimit))
        ownerBufferStorage = CacheLine.allocate(HandoffQueue<Envelope>())
    }

    /// A port whose sends go to `remote` (a port of another process).
    init(remote: any RemoteEndpoint, logger: Logger?) {
        ownLogger = logger
        self.remote = remote
        stateStorage = CacheLine.allocate(State(limit: MessagePort.defaultQueueLimit))
        ownerBufferStorage = CacheLine.allocate(HandoffQueue<Envelope>())
    }

    deinit {
        CacheLine.free(stateStorage)
        CacheLine.free(ownerBufferStorage)
    }

    /// The most messages that can wait for delivery at once (at least 1). Raising it wakes senders
    /// waiting for room.
    ///
    /// Thread-safety: any thread.
    public var queueLimit: Int {
        get { withLock { state.limit } }
        set {
            precondition(newValue >= 1, "MessagePort.queueLimit must be at least 1, got \(newValue)")
            withLock { state.limit = newValue; notifyRoomChanged() }
        }
    }

    /// Receives this port's messages on its loop's thread; held weakly, like `NSPort.delegate`.
    ///
    /// Thread-safety: any thread; the delegate is called on the loop's thread only.
    public var delegate: (any MessagePortDelegate)? {
        get { withLock { state.delegate } }
        set { withLock { state.delegate = newValue } }
    }

    /// Sets a closure that receives messages instead of the delegate (the closure wins when both
    /// are set). Pass nil to remove it.
    ///
    /// Thread-safety: any thread; the closure is called on the loop's thread only.
    public func setHandler(_ handler: (@Sendable (MessagePort.Message) -> Void)?) {
        // The old closure is released after the lock: whatever it captured may call back into
        // this port from its `deinit` (invalidate it, send to it), which takes the same lock.
        let old = withLock { () -> (@Sendable (MessagePort.Message) -> Void)? in
            defer { state.handler = handler }
            return state.handler
        }
        withExtendedLifetime(old) {}
    }

    /// False once ``invalidate()`` was called (or the port's loop shut down); for a remote port,
    /// also once its connection ended (see ``setInvalidationHandler(on:_:)``).
    ///
    /// Thread-safety: any thread.
    public var isValid: Bool {
        if let remote { return !gate.isClosed && remote.isValid }
        return !gate.isClosed
    }

    /// Sends a message (`-[NSPort sendBeforeDate:msgid:components:from:reserved:]`).
    ///
    /// - Parameters:
    ///   - date: how long to wait for room when the queue is full; now or past means try once.
    ///   - msgid: an identifier for the receiver.
    ///   - components: data to carry; empty sends a pure signal and allocates nothing.
    ///   - replyPort: a port the receiver may answer on.
    /// - Returns: true when the message was queued; false when the port is invalid or stayed full
    ///   until `date`. A false return means the message will never be delivered. On the thread of
    ///   the loop the port is scheduled in, a full port returns false at once: only that thread
    ///   could make room, so waiting would never end.
    ///
    /// Thread-safety: any thread.
    @discardableResult
    public func send(before date: Date, msgid: UInt32 = 0, components: [Data] = [], from replyPort: MessagePort? = nil) -> Bool {
        if components.isEmpty, replyPort == nil, !CallerContext.isCapturing.load(ordering: .relaxed) {
            if sendSignalAtOnce(msgid: msgid, before: date) { return true }
            // Constants rather than the arguments: nothing but `date` and `msgid` has to survive
            // the attempt above, which then needs no saved registers.
            return sendInFull(before: date, msgid: msgid, components: [], from: nil)
        }
        return sendInFull(before: date, msgid: msgid, components: components, from: replyPort)
    }

    /// The public send's general case, out of line so that the burst case above needs no frame.
    @inline(never)
    private func sendInFull(before date: Date, msgid: UInt32, components: [Data], from replyPort: MessagePort?) -> Bool {
        guard CallerContext.isCapturing.load(ordering: .relaxed) else {
            // A literal nil, not `capture()`'s answer: the send then has no context reference to
            // release afterwards (a runtime call per send otherwise).
            return send(before: date, msgid: msgid, components: components, from: replyPort, context: nil)
        }
        return send(before: date, msgid: msgid, components: components, from: replyPort, context: CallerContext.capture())
    }

    /// A pure signal's send (no components, no reply port, no context to carry) when it can be
    /// done at once, the case of nearly every signal: the lock is free, the port is valid and has
    /// room, and the queue's storage has a free slot. Returns false, having changed nothing, in
    /// every other case: the caller then makes the full
    /// ``send(before:msgid:components:from:context:doorbell:descriptors:)``, which waits, grows or
    /// rejects.
    ///
    /// Why a second path: a burst of signals is the port's throughput case, where the sending
    /// thread's instructions are the cost of a message, and this one is about 45 of them against
    /// 65 for the full path's (callgrind): in a burst (the loop already told of the batch) it
    /// calls nothing on its way (an unlock wakes a parked locker only when there is one), so it
    /// needs no saved registers, no payload decision and no out-of-line branch. It does what the
    /// full path does in the same case, under the same lock.
    ///
    /// The first message of a batch goes this way too, to ``tellLoopAndUnlock()``: after an idle
    /// spell that send is the latency of the loop's wake-up, and every function on its way is code
    /// to fetch on a cold CPU; giving up here would unlock, go through the full path's two
    /// functions and lock again (Docs/Benchmarks.md, design notes: with the other steps taken then,
    /// the producer's part of a first send after 10 ms idle went from 6.0–7.2 to 4.3–5.3 µs).
    @inline(__always)
    private func sendSignalAtOnce(msgid: UInt32, before date: Date) -> Bool {
        // A NaN date, a remote port and a taken lock go the full way (which traps on the NaN).
        guard remote == nil, !date.timeIntervalSinceReferenceDate.isNaN, state.word.tryLock() else { return false }
        guard state.isValid, state.queue.count < state.limit, state.queue.hasRoomAtTail else {
            unlock()
            return false
        }
        state.queue.append(Envelope(msgid: msgid, payload: nil))
        state.sent &+= 1
        guard state.readyOnLoop else { return tellLoopAndUnlock() }
        unlock()
        return true
    }

    /// Sends a message carrying file descriptors, as a Mach message carries port rights: the
    /// receiving handler finds them, owned, in ``Message/fileDescriptors``. The caller keeps its own
    /// descriptors (a local port gets close-on-exec duplicates; to another process they travel as
    /// `SCM_RIGHTS`, which the kernel duplicates). Otherwise as ``send(before:msgid:components:from:)``.
    ///
    /// - Returns: false as for ``send(before:msgid:components:from:)``, and also when a descriptor
    ///   could not be duplicated (an invalid fd) or, to another process, when there are more than
    ///   ``CrossProcessPortOptions/maximumFileDescriptorsPerMessage`` (logged).
    ///
    /// Thread-safety: safe from any thread.
    @discardableResult
    public func send(before date: Date, msgid: UInt32 = 0, components: [Data] = [], fileDescriptors: [Int32],
                     from replyPort: MessagePort? = nil) -> Bool {
        if let remote {
            return send(to: remote, before: date, msgid: msgid, components: components, replyPort: replyPort,
                        descriptors: fileDescriptors)
        }
        var owned = [TransferredFileDescriptor]()
        owned.reserveCapacity(fileDescriptors.count)
        for fd in fileDescriptors {
            guard let copy = System.duplicateDescriptor(fd) else {
                withLock { state.rejected += 1 }
                return false // the copies made so far close with `owned`
            }
            owned.append(TransferredFileDescriptor(taking: copy))
        }
        return send(before: date, msgid: msgid, components: components, from: replyPort,
                    context: CallerContext.capture(), descriptors: owned)
    }

    /// ``send(before:msgid:components:from:)`` with the context the handler is to run in (the
    /// public one passes the caller's). A `doorbell` send is a pure signal whose rejection is
    /// expected (a signal is already queued, as in the article's zero-timeout send): rejections are
    /// counted as usual and logged, aggregated, at `.debug` only.
    @discardableResult
    func send(before date: Date, msgid: UInt32 = 0, components: [Data] = [], from replyPort: MessagePort? = nil,
              context: CapturedContext?, doorbell: Bool = false, descriptors: [TransferredFileDescriptor] = []) -> Bool {
        if let remote {
            return send(to: remote, before: date, msgid: msgid, components: components, replyPort: replyPort,
                        descriptors: descriptors.isEmpty ? [] : descriptors.compactMap { $0.fileDescriptor })
        }
        precondition(!date.timeIntervalSinceReferenceDate.isNaN, "MessagePort.send(before:): the date is NaN")
        // Made before the lock: a payload box is the send's only allocation, and the lock is
        // held for the queue's append alone.
        let envelope = Envelope(
            msgid: msgid,
            payload: components.isEmpty && replyPort == nil && context == nil && descriptors.isEmpty
                ? nil : Payload(components: components, replyPort: replyPort, context: context, fileDescriptors: descriptors))
        lock()
        // The fast path, every send of a burst: valid, room, and the loop already told. The rest
        // (full, invalid, first message of a batch) is out of line, so that this path's frame
        // stays small.
        guard state.isValid, state.queue.count < state.limit else {
            return sendFindingNoRoom(envelope, before: date, doorbell: doorbell)
        }
        return queueAndUnlock(envelope)
    }

    /// With the lock held and the port valid: queues `envelope` (moved, not copied: no retain and
    /// release of its payload), counts it as sent, tells the loop if this is the first message it
    /// has not been told about (``tellLoopAndUnlock()``), and unlocks. Returns true.
    @inline(__always)
    private func queueAndUnlock(_ envelope: consuming Envelope) -> Bool {
        state.queue.append(envelope)
        state.sent &+= 1
        guard state.readyOnLoop else { return tellLoopAndUnlock() }
        unlock()
        return true
    }

    /// The rest of a send that found the port invalid or full, with the lock held: waits for room
    /// until `date` (not on the port's own loop's thread), then queues `envelope` or counts the
    /// rejection. Unlocks.
    @inline(never)
    private func sendFindingNoRoom(_ envelope: consuming Envelope, before date: Date, doorbell: Bool) -> Bool {
        guard state.isValid else {
            state.rejected += 1
            unlock()
            return false
        }
        // Only the port's loop makes room, so its own thread waiting for room would wait for
        // itself: on that thread a full port fails at once, whatever the date. So does the thread
        // of a loop the port is leaving (removed by another thread): until it lets go, which it
        // cannot while it waits, no loop takes the port's messages.
        let selfSend = (state.loop?.isCurrentThread ?? false) || (state.leaving?.isCurrentThread ?? false)
        guard !selfSend, waitForRoom(until: date) else {
            state.rejected += 1
            guard state.isValid else { unlock(); return false } // invalidated while waiting
            state.rejectedFull += 1
            let rejectedFull = state.rejectedFull
            let loop = state.loop
            let limit = state.limit
            unlock()
            if rejectedFull == 1 || rejectedFull % MessagePort.rejectionLogInterval == 0 {
                logRejections(total: rejectedFull, limit: limit, loop: loop, doorbell: doorbell)
            }
            return false
        }
        return queueAndUnlock(envelope)
    }

    /// With the lock held, after a message was queued on a port its loop has not been told about
    /// (the first message of a batch, or a port in no loop yet): queues the port-ready item on the
    /// loop (under this lock: see ``PortRunLoop/portBecameReady(_:)``), unlocks, and rings the
    /// loop's doorbell if it sleeps. Returns true (the message is queued).
    @inline(never)
    private func tellLoopAndUnlock() -> Bool {
        var loopToRing: PortRunLoop?
        if let loop = state.loop {
            state.readyOnLoop = true
            if loop.portBecameReady(self) { loopToRing = loop }
        }
        unlock()
        loopToRing?.ringDoorbell()
        return true
    }

    /// A full port logs its first rejected send, then one entry per this many (so a burst of
    /// rejections costs a few log entries, not one per message).
    ///
    /// Thread-safety: a constant.
    public static let rejectionLogInterval = 1024

    /// The logger to use: the port's own, else `loop`'s, else one that logs nothing. Called
    /// without the port's lock held (a loop's logger is behind the loop's lock).
    private func logger(loop: PortRunLoop?) -> Logger {
        ownLogger ?? loop?.currentLogger ?? .portRunLoopDisabled
    }

    /// Logs that the port stayed full for `total` rejected sends so far (a rare path: see
    /// ``rejectionLogInterval``).
    private func logRejections(total: Int, limit: Int, loop: PortRunLoop?, doorbell: Bool) {
        let since = total == 1 ? 1 : min(total - 1, MessagePort.rejectionLogInterval)
        logger(loop: loop).log(level: doorbell ? .debug : .warning,
                               doorbell ? "MessagePort doorbell signals dropped (one is already queued)"
                                        : "MessagePort stayed full; sends were rejected", metadata: [
            LogKey.port: "\(self)", LogKey.loop: "\(loop?.name ?? "none")", LogKey.rejected: "\(total)",
            LogKey.rejectedSinceLastLog: "\(since)", LogKey.queueLimit: "\(limit)",
        ])
    }

    /// With the lock held and the queue full: waits until there is room, the port is invalidated or
    /// `date` passes. Returns true when there is room.
    ///
    /// On a loop's thread the wait is registered in ``BlockingWaits``: a wait that closes a cycle of
    /// loops blocked on each other (this loop's own port full, waited on by the port's loop) can
    /// never end, and gives up at once instead.
    private func waitForRoom(until date: Date) -> Bool {
        let deadline = date.monotonicDeadline
        guard deadline > System.monotonicSeconds() else { return false }
        var blockingWait: BlockingWait?
        // Room comes from the loop the port is in, once the loop it is leaving (if any) let go.
        let targets = [state.leaving, state.loop].compactMap { $0 }
        if !targets.isEmpty, let waiter = PortRunLoop.existingForCurrentThread() {
            blockingWait = BlockingWaits.shared.enter(waiter, on: targets, isSend: true) { [self] in
                roomGeneration.add(1, ordering: .releasing)
                ParkingLot.wakeAll(key: roomKey)
            }
            guard blockingWait != nil else { return false }
        }
        defer { if let blockingWait { BlockingWaits.shared.leave(blockingWait) } }
        state.spaceWaiters += 1
        defer { state.spaceWaiters -= 1 }
        while state.isValid && state.queue.count >= state.limit && !(blockingWait?.isBroken ?? false) {
            let seen = roomGeneration.load(ordering: .acquiring)
            unlock()
            // A broken wait is woken through the parking lot after the flag is set: checked in the
            // predicate too, it cannot be missed between the outer check and the sleep.
            let changed = ParkingLot.park(key: roomKey, deadline: deadline) {
                roomGeneration.load(ordering: .acquiring) != seen || (blockingWait?.isBroken ?? false)
            }
            lock()
            if !changed { break }
        }
        return state.isValid && state.queue.count < state.limit
    }

    /// With the lock held: tells senders waiting for room to look again. Lock order: the state's
    /// lock, then the parking-lot slot (a waiter never takes the state's lock while parked).
    private func notifyRoomChanged() {
        roomGeneration.add(1, ordering: .releasing)
        ParkingLot.wakeAll(key: roomKey)
    }

    /// A remote port's send: hands the message to the connection and counts it here.
    private func send(to remote: any RemoteEndpoint, before date: Date, msgid: UInt32, components: [Data],
                      replyPort: MessagePort?, descriptors: [Int32]) -> Bool {
        precondition(!date.timeIntervalSinceReferenceDate.isNaN, "MessagePort.send(before:): the date is NaN")
        let sent = remote.send(before: date.monotonicDeadline, msgid: msgid, components: components, replyPort: replyPort,
                               descriptors: descriptors)
        withLock { if sent { state.sent += 1 } else { state.rejected += 1 } }
        return sent
    }

    /// Invalidates the port. Once this returns, no handler starts for it (one already running on
    /// the loop's thread may finish; ``waitForRunningHandlers(timeout:)`` waits for it). Queued
    /// messages are discarded and counted in ``statistics`` (and, when there were any, logged once
    /// at `.notice` with their count: see ``init(queueLimit:logger:)``); senders waiting for room
    /// return false, and later sends return false. The invalidation handler, if one is set
    /// (``setInvalidationHandler(on:_:)``), is called once, with ``InvalidationReason/invalidated``.
    /// Idempotent.
    ///
    /// Thread-safety: any thread, including from inside the port's own handler.
    public func invalidate() { invalidate(reason: .invalidated) }

    /// ``invalidate()`` with the reason its handler is given (a remote port whose connection
    /// ended calls it with the connection's). Idempotent: only the first call's reason counts.
    ///
    /// With `required`, the owner thread of that loop as it shuts down: the port is invalidated
    /// only if it is still scheduled there, and the result says whether it was. A port another
    /// thread removed from `required` (and may have scheduled in a live loop since) is not that
    /// loop's to invalidate; the check and the closing share the critical section below, so a
    /// removal and an add elsewhere made meanwhile find the port invalid rather than leaving a
    /// live loop with a port the dead one then invalidates.
    ///
    /// In one critical section (unless `required` is given and the port is not scheduled there,
    /// or the port was closed already: false) the gate closes and the port turns invalid, its
    /// queued messages are discarded, senders waiting for room are woken, and it leaves its loop. A second `invalidate()` waits for the first one's section, so it
    /// returns with the port invalid too, and any send after either is refused. Then, with the
    /// lock let go: the observers, the remote connection, the log, the loop's registration, the
    /// invalidation handler.
    @discardableResult
    func invalidate(reason: InvalidationReason = .invalidated, ifScheduledOn required: PortRunLoop? = nil) -> Bool {
        var discarded = 0
        var loop: PortRunLoop?
        let closed = withLock { () -> Bool in
            if let required, state.loop !== required { return false }
            guard gate.close() else { return false }
            state.isValid = false
            discarded = state.queue.count
            state.discarded += discarded
            state.queue.removeAll()
            state.readyOnLoop = false
            notifyRoomChanged()
            loop = state.loop
            state.loop = nil
            state.registration = nil
            state.modes = []
            return true
        }
        guard closed else { return false }
        for observer in invalidation.withLock({ record in defer { record.observers = [] }; return record.observers }) {
            observer()
        }
        remote?.invalidate()
        if discarded > 0 {
            logger(loop: loop).notice("MessagePort invalidated with queued messages; they were discarded", metadata: [
                LogKey.port: "\(self)", LogKey.loop: "\(loop?.name ?? "none")", LogKey.discarded: "\(discarded)",
            ])
        }
        loop?.onOwner { $0.unregisterPort(self, discardingBuffered: true) }
        // Recorded after the port's state changed: a handler set from now on runs at once.
        let handler = invalidation.withLock { record -> InvalidationHandler? in
            record.reason = reason
            record.portLoop = loop
            defer { record.handler = nil }
            return record.handler
        }
        if let handler { runInvalidationHandler(handler, reason: reason, portLoop: loop) }
        return true
    }

    /// Calls `observer` once when the port is invalidated (at once, on this thread, if it already
    /// is). The observer must not call back into this port's invalidation.
    func onInvalidation(_ observer: @escaping @Sendable () -> Void) {
        let added = invalidation.withLock { record -> Bool in
            guard !gate.isClosed else { return false }
            record.observers.append(observer)
            return true
        }
        if !added { observer() }
    }

    /// Queues a message that came from another process, whatever the queue limit: the sender's
    /// credits bound what it may have queued (CrossProcess/). False for an invalid port (the
    /// message is not counted: the connection goes away with the port).
    func inject(msgid: UInt32, payload: consuming Payload) -> Bool {
        if !remoteSendersSeen.load(ordering: .relaxed) { remoteSendersSeen.store(true, ordering: .relaxed) }
        lock()
        guard state.isValid else { unlock(); return false }
        return queueAndUnlock(Envelope(msgid: msgid, payload: payload))
    }

    /// Waits until no handler of this port is running (on the loop's thread). Called from inside
    /// the port's own handler, it does not wait for that call. Returns false on timeout.
    ///
    /// The loop delivers a port's messages in batches and counts the whole batch as running, so
    /// this may also wait out the rest of the batch in progress. After ``invalidate()`` that is at
    /// most the handler call already running: the batch stops at its next message.
    ///
    /// Thread-safety: any thread.
    @discardableResult
    public func waitForRunningHandlers(timeout: Duration? = nil) -> Bool {
        let deadline = timeout.map { System.monotonicSeconds() + $0.seconds } ?? .infinity
        // The batches of this port the calling thread is itself inside (a handler, or a nested run
        // continuing the batch): whatever loop the port is attached to now, or none after
        // `invalidate()` or its removal from its last mode.
        let held = PortRunLoop.existingForCurrentThread()?.portsInDelivery.count { $0 === self } ?? 0
        return gate.waitForHandlers(deadlineMonotonic: deadline, excluding: held)
    }

    /// Counts since the port was made.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public struct Statistics: Sendable, Equatable {
        /// Messages accepted by `send`. Thread-safety: a value type.
        public var sent: Int
        /// Messages handed to a handler, counted when the batch they were delivered in ends (a
        /// handler reading it sees the earlier batches'). Thread-safety: a value type.
        public var delivered: Int
        /// Sends that returned false (full until the date, or invalid port). Thread-safety: a value type.
        public var rejected: Int
        /// Accepted messages dropped: the port was invalidated before delivery, or there was nobody to
        /// hand them to (no handler, delegate gone). Thread-safety: a value type.
        public var discarded: Int
        /// Messages waiting for the loop right now. Thread-safety: a value type.
        public var queued: Int
    }

    /// A snapshot of this port's counts.
    ///
    /// Thread-safety: any thread.
    public var statistics: Statistics {
        withLock {
            Statistics(sent: state.sent, delivered: deliveredCounter.value + state.deliveredAfterLeaving, rejected: state.rejected,
                       discarded: state.discarded + ownerDiscardedCounter.value, queued: state.queue.count)
        }
    }

    // MARK: Loop side

    /// Records that `loop` schedules this port; traps if another loop already does. Returns false
    /// for an invalidated port (nothing is scheduled).
    /// Any thread, for `loop.add(self, forMode: mode)`: schedules the port in `mode` of `loop`.
    /// Returns false for an invalid port (nothing to do) and whether the caller must ring `loop`'s
    /// doorbell (held messages are now the loop's to deliver). A port scheduled in another loop
    /// is a programmer error.
    func schedule(on loop: PortRunLoop, mode: RunLoop.Mode) -> (accepted: Bool, ring: Bool) {
        precondition(remote == nil, "PortRunLoop.add(_:forMode:): a remote MessagePort (one that stands for a port of another process) cannot be scheduled in a loop")
        return withLock {
            guard state.isValid else { return (false, false) }
            if let current = state.loop {
                precondition(current === loop,
                             "PortRunLoop.add(_:forMode:): this MessagePort is already scheduled in another PortRunLoop ('\(current.name)'); remove it there first")
            }
            state.loop = loop
            state.modes.insert(mode)
            guard state.leaving == nil, !state.queue.isEmpty, !state.readyOnLoop else { return (true, false) }
            state.readyOnLoop = true
            return (true, loop.portBecameReady(self)) // queued under our lock, as in send
        }
    }

    /// Any thread, for `loop.remove(self, forMode: mode)`: unschedules the port from `mode`. Once
    /// it is in no mode it is detached at once (another loop may take it), and `loop`'s thread
    /// lets go of it when it next syncs (``finishLeaving(_:)``). False when it was not scheduled
    /// in `loop`.
    func unschedule(from loop: PortRunLoop, mode: RunLoop.Mode) -> Bool {
        withLock {
            guard state.loop === loop, state.modes.remove(mode) != nil else { return false }
            if state.modes.isEmpty {
                state.loop = nil
                state.registration = nil
                state.readyOnLoop = false
                if state.leaving == nil { state.leaving = loop }
            }
            return true
        }
    }

    /// Owner thread of `loop`: the modes the port is scheduled in there (empty: not scheduled).
    func scheduledModes(on loop: PortRunLoop) -> Set<RunLoop.Mode> {
        withLock { state.loop === loop && state.isValid ? state.modes : [] }
    }

    /// Owner thread of `loop`, once it holds no messages of the port any more: if the port was
    /// leaving `loop`, it has left; held messages are then handed to the loop it is scheduled in
    /// now, if any.
    func finishLeaving(_ loop: PortRunLoop) {
        let next: PortRunLoop? = withLock {
            guard state.leaving === loop else { return nil }
            state.leaving = nil
            guard let next = state.loop, !state.queue.isEmpty, !state.readyOnLoop else { return nil }
            state.readyOnLoop = true
            return next.portBecameReady(self) ? next : nil
        }
        next?.ringDoorbell()
    }

    /// A loop's thread, at the end of a batch during which a handler took the port out of that
    /// loop: the messages it delivered, counted under the lock (the port's owner counter may be
    /// another loop's by then, and has one writer).
    func countDelivered(afterLeaving count: Int) {
        guard count > 0 else { return }
        withLock { state.deliveredAfterLeaving += count }
    }

    /// Whether this port is currently scheduled in `loop`.
    func isAttached(to loop: PortRunLoop) -> Bool { withLock { state.loop === loop } }

    /// Owner thread of `loop`: `loop`'s registration of the port, if the port is scheduled there
    /// and the registration has been made (one lock on the line the batch's take locks next).
    func registration(on loop: PortRunLoop) -> PortRegistration? {
        withLock { state.loop === loop ? state.registration : nil }
    }

    /// Owner thread of `loop`: records `registration`, `loop`'s current one, unless the port has
    /// left `loop` meanwhile (another thread removed it).
    func adopt(_ registration: PortRegistration, on loop: PortRunLoop) {
        withLock { if state.loop === loop { state.registration = registration } }
    }

    /// Owner thread: puts the messages the loop took but did not deliver (the port was removed from
    /// the running mode by a handler) back in front of the queue, where they count against the
    /// limit again; discards and counts them instead if the port was invalidated meanwhile.
    func requeueBuffered() {
        guard !ownerBuffer.isEmpty else { return }
        withLock {
            if state.isValid {
                state.queue.prepend(movingContentsOf: &ownerBuffer)
            } else {
                discardBuffered()
            }
        }
    }

    /// Owner thread: drops the messages the loop took but will not deliver (the port was
    /// invalidated, or nobody handles them), counting them as discarded.
    func discardBuffered() {
        ownerDiscardedCounter.increment(by: ownerBuffer.count)
        if remoteSendersSeen.load(ordering: .relaxed) {
            // Messages from other processes give their senders' credits back even when dropped.
            while !ownerBuffer.isEmpty { ownerBuffer.popFirst().payload?.creditSink?.messageTaken() }
        }
        ownerBuffer.removeAll()
    }

    /// Owner thread: moves queued messages to ``ownerBuffer`` and returns who handles them.
    ///
    /// Hot path (once per delivered batch): explicit lock/unlock rather than `withLock`, because
    /// returning the handler closure through `withLock`'s generic result reabstracts it twice, and
    /// each reabstraction thunk is a heap allocation (2 mallocs per batch, i.e. per message when
    /// messages arrive one at a time; see Docs/Benchmarks.md). Inlined into its one caller
    /// (``PortRunLoop/deliverMessages(of:registration:mode:)``): a batch after an idle spell runs
    /// it cold, and a function of its own is one more piece of code to fetch.
    ///
    /// Returns nil, taking nothing, when the messages are not `loop`'s to take: the port is
    /// scheduled elsewhere (or nowhere), or is still leaving another loop.
    @inline(__always)
    func takeQueuedMessages(by loop: PortRunLoop) -> (delegate: (any MessagePortDelegate)?, handler: (@Sendable (MessagePort.Message) -> Void)?)? {
        lock()
        defer { unlock() }
        guard state.loop === loop, state.leaving == nil || state.leaving === loop else {
            if state.loop === loop { state.readyOnLoop = false } // `finishLeaving` will tell it again
            return nil
        }
        if !state.queue.isEmpty {
            // Usually the owner buffer is empty and the whole queue is handed over by swapping
            // buffers (no per-message copy, retain or release; both keep their capacity).
            ownerBuffer.append(movingContentsOf: &state.queue)
            if state.spaceWaiters > 0 { notifyRoomChanged() }
        }
        state.readyOnLoop = false
        // The delegate only counts without a handler, and reading it (a weak reference) is a
        // call into the runtime: not made when there is a handler.
        guard let handler = state.handler else { return (state.delegate, nil) }
        return (nil, handler)
    }

    public static func == (lhs: MessagePort, rhs: MessagePort) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    public var description: String { "MessagePort(\(ObjectIdentifier(self)), valid: \(isValid))" }
}
