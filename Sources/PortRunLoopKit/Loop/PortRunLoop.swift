#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import Synchronization

/// A run loop bound to one thread, built on a libevent `event_base`: the Linux stand-in for
/// `NSRunLoop`/`CFRunLoop` with working port sources, timers, fd sources and cross-thread perform.
///
/// Each thread has at most one loop (``current``; the main thread's is ``main``). The loop runs only
/// on its own thread (``run()`` and friends check it); everything that feeds it (``perform(inModes:_:)``,
/// ``MessagePort/send(before:msgid:components:from:)``, ``stop()``, ``wakeUp()``, adding and removing
/// ports, timers and fd sources) may be called from any thread and wakes a sleeping loop.
///
/// Thread-safety: `Sendable`. Running is owner-thread only and enforced by precondition; every other
/// public member is safe from any thread.
public final class PortRunLoop: @unchecked Sendable {
    // MARK: Immutable after init.

    /// The name of the loop's thread (set by ``RunLoopThread``, or the thread's name when created).
    ///
    /// Thread-safety: immutable; read from any thread.
    public let name: String
    let base: EventBase
    private(set) var doorbell: Doorbell!
    /// The doorbell's eventfd, for producers to ring (``ringDoorbell()``): a plain value, so a ring
    /// neither loads nor retains the ``Doorbell`` (it is closed only in `deinit`, when no producer
    /// holds the loop any more).
    let doorbellDescriptor: Int32
    private(set) var wakeTimer: WakeTimer!
    private let owner: Owner
    /// Set by the thread-exit destructor, after the loop was shut down on its thread. Declared
    /// beside `owner`: ``isCurrentThread`` reads both, and so finds them on one cache line.
    let ownerThreadExited = Atomic<Bool>(false)

    enum Owner { case thread(pthread_t), mainThread }

    // MARK: Shared state, guarded by `inbox`'s mutex.

    let inbox: TracedMutex<Inbox>
    /// True when work (or a wake or stop request) may have arrived in the inbox since the owner
    /// last collected it: set by producers and cleared by the owner, both with `inbox` locked, and
    /// read without the lock by the owner while it spins before parking
    /// (``workArrivedWhileSpinning(deadline:)``), so that the spin does not take the producers'
    /// lock thousands of times. On cache lines of its own: a producer writes it per item, and it
    /// must not share a line with the counters the owner writes per item.
    let workHint = CacheLine.allocate(Atomic<Bool>(false))

    // MARK: Owner-thread-only state (touched only on the loop's thread; no lock).
    //
    // `@exclusivity(unchecked)`: these are read and written on every turn, and the run-time
    // exclusivity checks Swift makes for a class's stored properties (a thread-local access set per
    // access) would be a third of the loop's instructions per fd event (Docs/Benchmarks.md,
    // `FdPingPong.Ours`). The loop's code never holds an
    // access to one of them across a call that can run a handler (a nested run may touch them all):
    // each access is one expression, or a value copied out first. Every test, TSan included, runs
    // the same code.

    /// The common modes as the owner sees them: ``Inbox/commonModes``, copied when
    /// ``addCommonMode(_:)``'s work reaches the loop (read on every pass without a lock).
    @exclusivity(unchecked) var ownerCommonModes: Set<RunLoop.Mode> = [.default] {
        didSet { modeFacts = nil }
    }
    /// What ``workFilter(for:jobsMayStart:)`` last worked out about a mode.
    @exclusivity(unchecked) private var modeFacts: ModeFacts?
    @exclusivity(unchecked) var frames: [RunFrame] = []
    @exclusivity(unchecked) var localWork = HandoffQueue<QueuedWork>()
    @exclusivity(unchecked) var pendingPorts: [MessagePort] = []
    /// Ports whose batch is being delivered, innermost last (a stack: ``HandoffQueue/append(_:)``
    /// and ``HandoffQueue/popLast()``): a nested run started by one of their handlers continues
    /// their batch (Semantics R8). Not an `Array`, whose append and removal call into the runtime
    /// (a uniqueness check, the standard library's prespecialized append) on every batch.
    @exclusivity(unchecked) var portsInDelivery = HandoffQueue<MessagePort>()
    @exclusivity(unchecked) var ports: [ObjectIdentifier: PortRegistration] = [:]
    @exclusivity(unchecked) var timers: [ObjectIdentifier: RunLoopTimer] = [:]
    @exclusivity(unchecked) var fdSources: [ObjectIdentifier: FileDescriptorRegistration] = [:]
    /// The same registrations by fd number (several sources may watch one fd).
    @exclusivity(unchecked) var fileDescriptorRegistrations: [Int32: [FileDescriptorRegistration]] = [:]
    /// Every source, grouped by the exact set of modes it is scheduled in (see ``SourceGroup``).
    @exclusivity(unchecked) var sourceGroups: [ModeSet: SourceGroup] = [:]
    /// Moves whenever a group is made or the common modes change.
    @exclusivity(unchecked) var sourceGroupsGeneration = 0
    /// The last ``sourceGroup(forMode:)`` answer.
    @exclusivity(unchecked) var lastSingleModeGroup: (mode: RunLoop.Mode, generation: Int, group: SourceGroup)?
    /// The last ``sourceGroups(in:)`` answer.
    @exclusivity(unchecked) var lastGroupLookup: (mode: RunLoop.Mode, generation: Int, groups: [SourceGroup])?
    /// The groups marked ``SourceGroup/isInRunningMode`` (the innermost run's), and for which
    /// mode and generation: what the per-turn questions ("is the mode empty?", "which timer is
    /// next?") read.
    @exclusivity(unchecked) var activeGroups: [SourceGroup] = []
    @exclusivity(unchecked) var activeMode: RunLoop.Mode?
    @exclusivity(unchecked) var activeGeneration = -1
    /// Taken by each timer scheduling; orders timers due at the same time.
    @exclusivity(unchecked) var nextTimerSequence: UInt64 = 0
    /// Fd sources libevent reported ready in a mode they are in, in order (see
    /// ``handleReadyFileDescriptors()``).
    @exclusivity(unchecked) var readyFileDescriptors = HandoffQueue<FileDescriptorRegistration>()
    /// Fd sources disarmed because they fired in a mode they are not in (see
    /// ``FileDescriptorRegistration``).
    @exclusivity(unchecked) var suspendedFileDescriptors: [FileDescriptorRegistration] = []
    @exclusivity(unchecked) var iterationsSincePoll = 0
    /// The last fd source handled that can be read while spinning (a cross-process connection's
    /// socket, ``FileDescriptorSource/spinRead``): the conversation's socket, which a spin reads
    /// directly (``readConversationSocket()``). Dropped when it is unregistered.
    @exclusivity(unchecked) var conversationSocket: FileDescriptorRegistration?
    /// Spin reads of ``conversationSocket`` since libevent was last asked (``pollLibEvent(blocking:)``):
    /// every ``IdleSpin/spinReadsPerPoll``-th chance to look goes to libevent instead, so that the
    /// loop's other fds are never starved by a conversation.
    @exclusivity(unchecked) var spinReadsSincePoll = 0
    /// True while a spin reads the conversation socket (``readConversationSocket()``): the loop is
    /// waiting, so no handler may run, and ``onOwner(_:)`` queues what would run at once.
    @exclusivity(unchecked) var isReadingInSpin = false
    /// The owner's knowledge that ``Inbox/parked`` is still set from its last sleep and no producer
    /// has cleared it since (see `waitForEvents`); refreshed under the inbox lock whenever the loop
    /// takes it.
    @exclusivity(unchecked) var parkedFlagLeftSet = false
    /// How many runs were in progress when the executor job running now started (nil: none).
    @exclusivity(unchecked) var jobStartedAtRunDepth: Int?
    /// When to spin before parking (see ``IdleSpin``).
    @exclusivity(unchecked) var idleSpin = IdleSpin()
    /// Whether the loop's work answered someone who will probably answer back: it ran a Swift
    /// task's job or a synchronous call, or this thread sent a message to another loop or process
    /// (``noteMessageSentFromCurrentThread()`` when it rang a loop or sent a frame;
    /// ``enqueueDeferringDoorbell(_:)`` for the first work handed to a loop that is awake). Part
    /// of ``isConversing``, which decides on what terms a wake-up or a spin earns ``idleSpin``
    /// credit (``IdleSpin``). Cleared once a
    /// producer's ring, or an fd that came within ``IdleSpin/limit`` (a reply read from a socket),
    /// has ended a sleep begun with it set (each answer buys at most one park's worth); a sleep a
    /// timer or a later fd ended leaves it set.
    @exclusivity(unchecked) var inConversation = false
    /// The loop is in a conversation (``IdleSpin``): its work answered someone
    /// (``inConversation``), or its innermost run is private, a blocking call waiting for its
    /// answer.
    var isConversing: Bool { inConversation || frames[frames.count - 1].isPrivate }
    /// When the loop last parked, until a producer's ring has ended the sleep and the loop's next
    /// collect has turned it into ``wakeToAccount`` (nothing runs in between, so
    /// ``inConversation`` and the innermost run are then as they were at the park).
    @exclusivity(unchecked) var parkedAt: Double?
    /// A ring-ended sleep (or a spin that found work) not yet accounted for in ``idleSpin``:
    /// accounted for when the loop next runs dry, once ``handledCount`` tells whether the wake-up
    /// found a backlog. `handledAtWake`: ``handledCount`` when it was set.
    @exclusivity(unchecked) var wakeToAccount: (gap: Double, inConversation: Bool, handledAtWake: Int)?
    /// The last sleep was begun in a conversation and ended by an fd's readiness later than
    /// ``IdleSpin/limit`` after the park, so it earned nothing by its own measure; a library
    /// connection that reads the answer may still earn it by the exchange's answer times
    /// (``noteAnswer(after:)``). Cleared whenever the loop waits again.
    @exclusivity(unchecked) var answerWakeUnearned = false
    /// Set by ``shutDown()`` (on this thread): run entry checks it without the inbox lock.
    @exclusivity(unchecked) var ownerShutDown = false
    /// Counts outermost runs; the current one's is published in ``runningEpoch``.
    @exclusivity(unchecked) var runEpoch: UInt64 = 0
    /// The epoch of the outermost run in progress, 0 when the loop is not running: written by the
    /// loop's thread when it enters and leaves an outermost run (no lock), read by ``stop()`` from
    /// other threads, which addresses its request to that epoch. Stop requests are thereby exact
    /// without a lock per run entry: one that arrives as a run ends is ignored by the next (R6).
    ///
    /// Declared here, among the owner's fields, and not beside ``inbox``: in the
    /// `run(mode:before:)` idiom the loop writes it twice per call, and beside the fields every
    /// producer reads per hand-off (``inbox``, ``workHint``, the owner) each write would take
    /// their cache line away from the producers' CPUs.
    let runningEpoch = Atomic<UInt64>(0)
    /// True while the loop's thread blocks in its wait (``isWaiting``): written by the loop around
    /// each sleep, read from any thread.
    let sleeping = Atomic<Bool>(false)
    /// ``metricsDelegate`` as this thread knows it (taken from the inbox when it changes).
    @exclusivity(unchecked) var ownerMetricsDelegate: (any LoopMetricsDelegate)?
    /// ``logger`` as this thread knows it (taken from the inbox when it next collects work).
    @exclusivity(unchecked) var ownerLogger: Logger
    /// True while the delegate is being called (its own nested runs are not reported).
    @exclusivity(unchecked) var isReportingTurn = false
    /// About-to-sleep callouts (Loop/PortRunLoop+BeforeWaiting.swift; `.whenIdle` posting).
    @exclusivity(unchecked) var beforeWaitingObservers: [BeforeWaitingObserver] = []
    /// The loop's ``RunLoopSource``s (Loop/PortRunLoop+CustomSources.swift). Empty, a pass pays
    /// one emptiness test for them.
    @exclusivity(unchecked) var customSources: [ObjectIdentifier: RunLoopSource] = [:]
    /// The loop's ``RunLoopObserver``s, sorted by (order, sequence) (Loop/PortRunLoop+Observers.swift).
    /// Empty, a run pays one test per pass for them.
    @exclusivity(unchecked) var runObservers: [RunLoopObserver] = []
    /// Moves whenever an observer is added to or leaves ``runObservers`` or changes its modes.
    @exclusivity(unchecked) var observerGeneration = 0
    /// Taken by each observer's registration (ties between equal orders).
    @exclusivity(unchecked) var nextObserverSequence: UInt64 = 0
    /// The last observers-of-a-mode answer.
    @exclusivity(unchecked) var lastObserverLookup: (mode: RunLoop.Mode, generation: Int, groupsGeneration: Int, observers: [RunLoopObserver])?
    /// The Foundation `Timer`s fired by this loop, by `Timer` (Loop/PortRunLoop+FoundationTimers.swift).
    @exclusivity(unchecked) var foundationTimers: [ObjectIdentifier: FoundationTimerDriver] = [:]
    /// The before-sleep check of ``foundationTimers``, added with the first and removed with the last.
    @exclusivity(unchecked) var foundationTimerCheck: BeforeWaitingObserver?
    /// Where this loop's stream connections read (``StreamReadBuffer``), made at the first read.
    @exclusivity(unchecked) var streamReadBuffer = StreamReadBuffer()

    // MARK: Guarded by `BlockingWaits.shared`'s lock (any thread).

    /// The blocking waits in progress on this loop's thread, innermost last (see ``BlockingWaits``).
    @exclusivity(unchecked) var blockingWaitStack: [BlockingWait] = []
    /// The last ``BlockingWaits`` cycle search that visited this loop.
    @exclusivity(unchecked) var blockingWaitVisit: UInt64 = 0

    // MARK: Metrics.

    let wakeSignals = SharedCounter()
    let performsRun = OwnerCounter()
    let messagesDelivered = OwnerCounter()
    let timersFired = OwnerCounter()
    /// ``RunLoopSource`` performs.
    let sourcesPerformed = OwnerCounter()
    let fdEventsHandled = OwnerCounter()
    /// The executor jobs among ``performsRun`` (for ``LoopTurnInfo``).
    let executorJobsRun = OwnerCounter()
    let workDiscarded = SharedCounter()
    let sleeps = OwnerCounter()
    let idleSpins = OwnerCounter()
    /// `timerfd_settime` calls of ``wakeTimer``.
    let wakeTimerSets = OwnerCounter()
    /// Calls of ``notifyObservers(_:mode:)`` (made only while the loop has observers).
    let observerRounds = OwnerCounter()
    /// Queued items run and port messages delivered so far (``performsRun`` + ``messagesDelivered``).
    var handledCount: Int { performsRun.value &+ messagesDelivered.value }

    /// One run in progress (``runSpecific(mode:deadline:returnAfterSourceHandled:until:)``),
    /// innermost last.
    struct RunFrame {
        let mode: RunLoop.Mode
        /// A wait of the library's own (a synchronous call or post waiting for its answer), not a
        /// run the user started: ``stop()`` is not meant for it.
        let isPrivate: Bool
        /// Whether a `ServiceContext` was bound on the thread when the run began (a nested run
        /// started by a handler that runs in its caller's context): work queued without a context
        /// then runs with it cleared (``withCallerContext(_:ambient:_:)``).
        let hasAmbientContext: Bool
        var stopped = false
    }

    init(name: String, owner: Owner, logger: Logger = .portRunLoopDisabled) throws(PortRunLoopError) {
        self.name = name
        self.owner = owner
        self.inbox = TracedMutex(Inbox(logger: logger))
        self.ownerLogger = logger
        let base = try EventBase()
        var doorbell: Doorbell? = try Doorbell(base: base)
        let wakeTimer: WakeTimer
        do {
            wakeTimer = try WakeTimer(base: base)
        } catch {
            // The doorbell's event is freed before its base, as `deinit` does: a failed init
            // would release the two in an order Swift does not promise.
            withExtendedLifetime(base) { doorbell = nil }
            throw error
        }
        self.base = base
        self.doorbell = doorbell
        self.doorbellDescriptor = doorbell.unsafelyUnwrapped.fileDescriptor
        self.wakeTimer = wakeTimer
        CallerContext.resolve() // an instrument bootstrapped since: context capture turns on
    }

    deinit {
        CacheLine.free(workHint)
        // Events must be freed before their base.
        doorbell = nil
        wakeTimer?.detach()
        wakeTimer = nil
        for registration in fdSources.values { registration.detach() }
        ports.removeAll()
        timers.removeAll()
        fdSources.removeAll()
        fileDescriptorRegistrations.removeAll()
        readyFileDescriptors.removeAll()
        suspendedFileDescriptors.removeAll()
        conversationSocket = nil
    }

    // MARK: Identity

    /// True when the calling thread is this loop's thread.
    ///
    /// Thread-safety: any thread.
    public var isCurrentThread: Bool {
        @inline(__always) get {
            switch owner {
            case .thread(let t):
                // glibc reuses a pthread_t once its thread has exited: a dead loop must not mistake
                // a new, unrelated thread for its owner.
                !ownerThreadExited.load(ordering: .acquiring) && System.isSameThread(t, System.currentThread())
            case .mainThread: System.isMainThread()
            }
        }
    }


    /// Traps with a message naming the loop unless called on its thread (NIO's
    /// `preconditionInEventLoop`).
    ///
    /// Thread-safety: any thread.
    public func preconditionOnLoopThread(_ what: @autoclosure () -> String = "this call",
                                         file: StaticString = #fileID, line: UInt = #line) {
        Misuse.check(isCurrentThread,
                     "\(what()) must be made on the loop's own thread ('\(name)'), but was made on another thread",
                     file: file, line: line)
    }

    /// The modes `RunLoop.Mode.common` stands for on this loop; initially `[.default]`.
    ///
    /// Thread-safety: any thread.
    public var commonModes: Set<RunLoop.Mode> { inbox.withLock { $0.commonModes } }

    /// A filter for a pass over the queued work in `mode`. Made on every pass, almost always for
    /// the same mode: what it needs to know about the mode (one of the common modes? the private
    /// waiting mode?) is kept until the mode or the common modes change, since asking the set hashes
    /// the mode's string (about 400 instructions) and comparing two different modes' strings costs
    /// about 90, where comparing with the same mode as last time is a few.
    ///
    /// Thread-safety: the loop's thread.
    ///
    /// Inlined into the loop's turn (one function fewer on the wake path's pages); working the
    /// facts out anew is not (``learnModeFacts(_:)``).
    @inline(__always)
    func workFilter(for mode: RunLoop.Mode, jobsMayStart: Bool = true) -> WorkFilter {
        let facts = if let known = modeFacts, known.mode == mode { known } else { learnModeFacts(mode) }
        return WorkFilter(modeIsCommon: facts.isCommon, isSynchronousWait: facts.isSynchronousWait, jobsMayStart: jobsMayStart)
    }

    /// Works out and keeps what a filter needs to know about `mode` (see ``workFilter(for:jobsMayStart:)``).
    @inline(never)
    private func learnModeFacts(_ mode: RunLoop.Mode) -> ModeFacts {
        let facts = ModeFacts(mode: mode, isCommon: ownerCommonModes.contains(mode), isSynchronousWait: mode == .synchronousWait)
        modeFacts = facts
        return facts
    }

    /// Adds `mode` to the common modes: sources and work scheduled in `.common` then also fire in
    /// runs of `mode` (`CFRunLoopAddCommonMode`).
    ///
    /// Thread-safety: any thread; takes effect on the loop's thread before its next turn.
    public func addCommonMode(_ mode: RunLoop.Mode) {
        Misuse.check(mode != .common, "PortRunLoop.addCommonMode: .common cannot be one of the common modes")
        inbox.withLock { _ = $0.commonModes.insert(mode) }
        registerOnOwner { loop in
            let modes = loop.inbox.withLock { $0.commonModes }
            guard modes != loop.ownerCommonModes else { return }
            loop.ownerCommonModes = modes
            loop.sourceGroupsChanged()
        }
    }

    /// True once the loop was shut down (its thread exited, or its ``RunLoopThread`` stopped); from
    /// then on it accepts no work.
    ///
    /// Thread-safety: any thread.
    public var isShutDown: Bool { inbox.withLock { $0.isShutDown } }

    /// Runs `body` on the owner thread: now when already there, otherwise as control work that runs
    /// in every mode before the loop's next turn. Dropped, returning false, if the loop is shut down.
    /// On the owner thread during a spin's read of the conversation socket (``isReadingInSpin``) it
    /// is queued as well: what a read sets off (a connection's end reported to a handler, a port's
    /// invalidation handler) runs in the next turn, never while the loop waits.
    @discardableResult
    func onOwner(_ body: @escaping @Sendable (PortRunLoop) -> Void) -> Bool {
        if isCurrentThread, !isReadingInSpin { body(self); return true }
        return enqueue(QueuedWork(modes: .all, kind: .block { [self] in body(self) }))
    }

    /// ``onOwner(_:)`` for bookkeeping that runs no user code (a registration added, removed or
    /// changed): queued as a ``QueuedWork/Kind/registration(_:)``, which is not a handled source.
    @discardableResult
    func registerOnOwner(_ body: @escaping @Sendable (PortRunLoop) -> Void) -> Bool {
        if isCurrentThread, !isReadingInSpin { body(self); return true }
        return enqueue(QueuedWork(modes: .all, kind: .registration { [self] in body(self) }))
    }
}

// MARK: - Shutdown

extension PortRunLoop {
    /// Shuts the loop down on its own thread: accepts no more work, fails waiting synchronous calls
    /// with ``PortRunLoopError/loopShutDown``, discards queued blocks (counted in
    /// ``LoopMetrics/workDiscarded``), hands queued executor jobs over to its after-shutdown queue,
    /// invalidates its ports and cancels its timers and fd sources.
    func shutDown() {
        let (work, logger, hooks) = inbox.withLock { inbox -> ([QueuedWork], Logger, [ShutDownHook]) in
            inbox.isShutDown = true
            defer { inbox.shutDownHooks = [] }
            ownerShutDown = true
            // Executor jobs are never discarded: they fail over, in order, to the loop's
            // after-shutdown queue (under the lock, so ahead of any job enqueued from now on).
            localWork.append(movingContentsOf: &inbox.work)
            let work = localWork.removeAllReturningElements()
            handOverQueuedJobs(work, inbox: &inbox)
            return (work, inbox.logger, inbox.shutDownHooks)
        }
        var discardedBlocks = 0
        for item in work {
            switch item.kind {
            case .call(let call): call.fail(.loopShutDown)
            case .block(let control) where item.modes == .all:
                // Control work (a port, timer or fd source added or removed from another thread
                // just before the shutdown) still applies: registrations then see the loop shut
                // down and invalidate / cancel what they would have scheduled, instead of leaving
                // it attached to a dead loop (a port that accepts sends nothing will ever deliver).
                control()
            case .registration(let apply): apply() // as control work above
            case .block: workDiscarded.increment(); discardedBlocks += 1
            case .job: break // handed over above
            case .portReady: break // its port is invalidated below
            }
        }
        if discardedBlocks > 0 {
            logger.notice("PortRunLoop shut down with queued blocks; they were discarded",
                          metadata: [LogKey.loop: "\(name)", LogKey.discarded: "\(discardedBlocks)"])
        }
        pendingPorts.removeAll()
        // Only ports still scheduled here die with the loop; a port another thread removed (and
        // may have scheduled in a live loop since) is let go of, its messages kept: what a sync
        // on a shut-down loop does.
        for registration in ports.values { syncPort(registration.port) }
        ports.removeAll()
        invalidateCustomSourcesAtShutDown()
        let deadTimers = Array(timers.values)
        timers.removeAll()
        let deadSources = fdSources.values.map(\.source)
        for registration in fdSources.values { registration.detach() }
        fdSources.removeAll()
        fileDescriptorRegistrations.removeAll()
        for group in sourceGroups.values { group.timers.removeAll() }
        for timer in deadTimers { timer.group = nil } // a group's heap held its timers, each timer its group
        sourceGroups.removeAll()
        sourceGroupsChanged()
        readyFileDescriptors.removeAll()
        suspendedFileDescriptors.removeAll()
        conversationSocket = nil
        // As documented: a dead loop's timers are invalidated and its fd sources cancelled (which
        // also drops their references to the loop, so the loop itself can be freed).
        for timer in deadTimers {
            let wasValid = timer.isValid
            timer.invalidate()
            if wasValid { timer.shutDownHandler?() }
        }
        for source in deadSources { source.fail(.loopShutDown) }
        notifyBeforeWaitingObserversOfShutDown()
        invalidateObserversAtShutDown()
        for hook in hooks { hook.call() }
    }

    /// Owner thread: stops every run in progress, not just the innermost.
    func stopAllRuns() {
        for index in frames.indices { frames[index].stopped = true }
    }

    /// Shuts the loop down once; later calls do nothing.
    func shutDownIfNeeded() {
        if !isShutDown { shutDown() }
    }
}
