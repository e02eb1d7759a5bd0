import Foundation
import Logging

/// An fd source scheduled in a loop: its persistent libevent event and its group (the modes it is
/// in).
///
/// Armed state, lazily: a registration is armed (`event_add`) from the moment it is registered,
/// whatever mode is running. When libevent reports it ready during a run of a mode it is not in, it
/// is *suspended* (`event_del`) instead of queued, so that a level-triggered fd cannot keep waking a
/// run that will not handle it; a run of one of its modes re-arms it when it starts (or becomes the
/// innermost run again), and epoll, level-triggered, reports it again if it is still ready. So a run
/// that starts or ends in the mode already armed makes no libevent call at all, and a mode switch
/// changes only the sources that actually fired in the wrong mode.
///
/// Thread-safety: the loop's thread only. Its `var`s are `@exclusivity(unchecked)`, as the loop's
/// own are (``PortRunLoop``): each event reads and writes them, and each access is one expression
/// that runs no handler.
final class FileDescriptorRegistration: LibEventReceiver {
    let source: FileDescriptorSource
    let group: SourceGroup
    /// Unretained: only the loop's own code calls into a registration, on its thread, while the
    /// loop is alive (its callbacks, runs and registry), so the reference is never read after the
    /// loop is gone. Reached through `_withUnsafeGuaranteedRef`: an `unowned` read costs a strong
    /// retain and release per event (and an `unowned(unsafe)` one still a retain and release
    /// around the queue it appends to).
    private let loop: Unmanaged<PortRunLoop>
    @exclusivity(unchecked) private var event: LoopEvent?
    /// Readiness reported since the handler last ran (merged when reported twice).
    @exclusivity(unchecked) var readyEvents: FileDescriptorSource.Events = []
    /// In the loop's ready queue.
    @exclusivity(unchecked) var isQueued = false
    /// In the loop's suspended list (disarmed after firing in another mode).
    @exclusivity(unchecked) var isSuspended = false
    /// What the event watches for now: the source's events, unless its owner changed them
    /// (``changeInterest(_:)``, the library's stream connections). Empty: registered, not armed.
    @exclusivity(unchecked) private(set) var interest: FileDescriptorSource.Events

    init(source: FileDescriptorSource, group: SourceGroup, loop: PortRunLoop) throws(PortRunLoopError) {
        self.source = source
        self.group = group
        self.loop = Unmanaged.passUnretained(loop)
        self.interest = source.events
        super.init()
        self.event = try LoopEvent(base: loop.base, fileDescriptor: source.fileDescriptor, flags: Self.flags(for: interest), receiver: self)
    }

    private static func flags(for events: FileDescriptorSource.Events) -> EventFlags {
        var flags: EventFlags = [.persist]
        if events.contains(.read) { flags.insert(.read) }
        if events.contains(.write) { flags.insert(.write) }
        return flags
    }

    /// Watches for `events` from now on, on the same registration: `event_del`, `event_assign`
    /// with the new flags, and `event_add` unless the registration is suspended (a run of its
    /// modes re-arms it) or `events` is empty (it stays registered, a source of its modes, and
    /// unarmed). Readiness already reported is still handled. A refused re-add fails the source.
    func changeInterest(_ events: FileDescriptorSource.Events) throws(PortRunLoopError) {
        guard events != interest, let event else { return }
        interest = events
        let wasArmed = event.isPending
        event.remove()
        guard !events.isEmpty else { return }
        event.reassign(flags: Self.flags(for: events))
        if wasArmed || !isSuspended { try event.add() }
    }

    var isRegistered: Bool { event != nil }

    /// libevent callback (inside `event_base_loop`): only records the readiness, or suspends the
    /// registration when the running mode is not one of its own.
    override func eventFired(_ flags: EventFlags) {
        guard group.isInRunningMode else {
            suspend()
            return
        }
        if flags.contains(.read) { readyEvents.insert(.read) }
        if flags.contains(.write) { readyEvents.insert(.write) }
        if !isQueued {
            isQueued = true
            loop._withUnsafeGuaranteedRef { $0.readyFileDescriptors.append(self) }
        }
    }

    /// `event_add`; on failure (the kernel refused the fd) the caller ends the registration.
    func arm() throws(PortRunLoopError) {
        guard let event, !event.isPending, !interest.isEmpty else { return }
        try event.add()
    }

    /// `event_del`, remembered in the loop's suspended list until a run of its modes re-arms it.
    func suspend() {
        guard let event, event.isPending else { return }
        event.remove()
        if !isSuspended {
            isSuspended = true
            loop._withUnsafeGuaranteedRef { $0.suspendedFileDescriptors.append(self) }
        }
    }

    /// Frees the libevent event (owner thread) and breaks the cycle with the receiver.
    func detach() {
        event?.remove()
        event = nil
    }
}

extension PortRunLoop {
    /// Watches `fd` for `events` and calls `handler` on the loop's thread, in runs of `modes`,
    /// whenever the fd is ready. Cancel the returned source (from any thread) to stop.
    ///
    /// - Throws: ``PortRunLoopError/invalidFileDescriptor(_:)`` for an fd that is not open,
    ///   ``PortRunLoopError/unsupportedFileDescriptor(_:)`` for one epoll refuses (a regular file, a
    ///   directory, `/dev/null`), on whatever thread `watch` is called: the fd is checked with the
    ///   kernel before the call returns. ``PortRunLoopError/loopShutDown`` for a shut-down loop.
    ///   A later refusal (the fd closed before the loop registered it) cancels the source and sets
    ///   ``FileDescriptorSource/registrationError``. Every refusal but `loopShutDown`, thrown or
    ///   late, is also logged to ``logger`` at `.warning`, with the fd and the error.
    ///
    /// Thread-safety: any thread.
    public func watch(fileDescriptor fd: Int32, for events: FileDescriptorSource.Events,
                      inModes modes: [RunLoop.Mode] = [.common],
                      handler: @escaping @Sendable (FileDescriptorSource.Events) -> Void) throws(PortRunLoopError) -> FileDescriptorSource {
        try watch(fileDescriptor: fd, for: events, inModes: modes, spinRead: nil, handler: handler)
    }

    /// ``watch(fileDescriptor:for:inModes:handler:)`` for the sockets of the library and its bus
    /// transports: `onFailure` is told, once, why the loop cancelled the source on its own after
    /// `watch` returned (``FileDescriptorSource/registrationError``: a registration queued from
    /// another thread, or a re-arm after a nested run of another mode, that libevent or the kernel
    /// refused), so that whatever owns the socket ends too instead of waiting for a source that
    /// will never fire. It runs on the loop's thread, as control work before the loop's next turn
    /// (never inside the registration or run that found the refusal). A loop that shuts down
    /// cancels its sources without telling anyone (their owners learn it from the loop).
    ///
    /// Thread-safety: any thread.
    package func watch(fileDescriptor fd: Int32, for events: FileDescriptorSource.Events,
                       inModes modes: [RunLoop.Mode] = [.common],
                       onFailure: @escaping @Sendable (PortRunLoopError) -> Void,
                       handler: @escaping @Sendable (FileDescriptorSource.Events) -> Void) throws(PortRunLoopError) -> FileDescriptorSource {
        try watch(fileDescriptor: fd, for: events, inModes: modes, spinRead: nil, onFailure: onFailure, handler: handler)
    }

    /// ``watch(fileDescriptor:for:inModes:handler:)`` for the library's own sockets: `read` reads
    /// what the fd holds without blocking and returns whether it read anything. It is both the
    /// source's handler (its answer unused) and the read a spin may make instead of asking
    /// libevent (``FileDescriptorSource/spinRead``). `onFailure` as for
    /// ``watch(fileDescriptor:for:inModes:onFailure:handler:)``.
    ///
    /// Thread-safety: any thread.
    func watch(fileDescriptor fd: Int32, inModes modes: [RunLoop.Mode] = [.common],
               onFailure: @escaping @Sendable (PortRunLoopError) -> Void,
               reading read: @escaping @Sendable () -> Bool) throws(PortRunLoopError) -> FileDescriptorSource {
        try watch(fileDescriptor: fd, for: .read, inModes: modes, spinRead: read, onFailure: onFailure) { _ in _ = read() }
    }

    /// ``watch(fileDescriptor:for:inModes:handler:)`` with the read a spin may make instead of
    /// asking libevent (``FileDescriptorSource/spinRead``), the owner's failure handler and what
    /// the owner does as the loop shuts down (``FileDescriptorSource/shutDownHandler``), all nil
    /// for a user's source. `knownPollable`: a socket the library made, which needs no probe.
    ///
    /// Thread-safety: any thread.
    func watch(fileDescriptor fd: Int32, for events: FileDescriptorSource.Events, inModes modes: [RunLoop.Mode] = [.common],
               spinRead: (@Sendable () -> Bool)?, knownPollable: Bool = false, onFailure: (@Sendable (PortRunLoopError) -> Void)? = nil,
               onShutDown: (@Sendable () -> Void)? = nil,
               handler: @escaping @Sendable (FileDescriptorSource.Events) -> Void) throws(PortRunLoopError) -> FileDescriptorSource {
        Misuse.check(!events.isEmpty, "PortRunLoop.watch(fileDescriptor:for:): the event set is empty")
        Misuse.check(!modes.isEmpty, "PortRunLoop.watch(fileDescriptor:for:inModes:): the mode list is empty")
        // A socket the library made itself is pollable: no probe (two `epoll_ctl`s per connection).
        if !knownPollable {
            do throws(PortRunLoopError) {
                try System.checkPollable(fd)
            } catch {
                logRefusedRegistration(of: fd, error: error)
                throw error
            }
        }
        guard !isShutDown else { throw .loopShutDown }
        let source = FileDescriptorSource(fileDescriptor: fd, events: events, loop: self, spinRead: spinRead,
                                          failureHandler: onFailure, shutDownHandler: onShutDown, handler: handler)
        let modeSet = ModeSet(modes)
        if isCurrentThread {
            do throws(PortRunLoopError) {
                try registerFileDescriptorSource(source, modes: modeSet)
            } catch {
                logRefusedRegistration(of: fd, error: error)
                throw error
            }
        } else {
            let queued = registerOnOwner { loop in
                do throws(PortRunLoopError) {
                    try loop.registerFileDescriptorSource(source, modes: modeSet)
                } catch {
                    source.fail(error)
                    loop.logRefusedRegistration(of: fd, error: error)
                }
            }
            if !queued { source.fail(.loopShutDown) } // shut down since the check above
        }
        return source
    }

    /// Logs, at `.warning`, that libevent or the kernel refused to watch `fd` (a shut-down loop is
    /// not a refusal and is not logged). A rare path: never per event.
    func logRefusedRegistration(of fd: Int32, error: PortRunLoopError) {
        if case .loopShutDown = error { return }
        currentLogger.warning("PortRunLoop could not watch a file descriptor", metadata: [
            LogKey.loop: "\(name)", LogKey.fileDescriptor: "\(fd)", LogKey.error: "\(error)",
        ])
    }

    private func registerFileDescriptorSource(_ source: FileDescriptorSource, modes: ModeSet) throws(PortRunLoopError) {
        guard !source.isCancelled else { return }
        guard !inbox.withLock({ $0.isShutDown }) else { throw .loopShutDown }
        // A source on the same fd number that was cancelled from another thread may still be
        // registered (its removal is queued behind this call). If the fd was closed and the number
        // reused since, libevent would take the new registration for a duplicate of the old one
        // and never add the new file to epoll: finish those removals first.
        for stale in fileDescriptorRegistrations[source.fileDescriptor] ?? [] where stale.source.isCancelled {
            unregisterFileDescriptorSource(stale.source)
        }
        let registration = try FileDescriptorRegistration(source: source, group: sourceGroup(for: modes), loop: self)
        do {
            try registration.arm()
        } catch {
            registration.detach()
            throw error
        }
        fdSources[ObjectIdentifier(source)] = registration
        fileDescriptorRegistrations[source.fileDescriptor, default: []].append(registration)
        registration.group.fileDescriptors += 1
    }

    /// Makes registered `source` watch for `events` from now on (``FileDescriptorRegistration/changeInterest(_:)``):
    /// a stream connection watches for room to write only while it has bytes queued. A re-arm the
    /// kernel refuses fails the source (its owner is told). Loop thread only.
    func setInterest(of source: FileDescriptorSource, to events: FileDescriptorSource.Events) {
        guard let registration = fdSources[ObjectIdentifier(source)] else { return }
        do throws(PortRunLoopError) {
            try registration.changeInterest(events)
        } catch {
            logRefusedRegistration(of: source.fileDescriptor, error: error)
            source.fail(error)
        }
    }

    func unregisterFileDescriptorSource(_ source: FileDescriptorSource) {
        guard let registration = fdSources.removeValue(forKey: ObjectIdentifier(source)) else { return }
        let fd = source.fileDescriptor
        if var sameFD = fileDescriptorRegistrations[fd] {
            sameFD.removeAll { $0 === registration }
            fileDescriptorRegistrations[fd] = sameFD.isEmpty ? nil : sameFD
        }
        registration.group.fileDescriptors -= 1
        registration.detach()
        if conversationSocket === registration { conversationSocket = nil }
        // Left in the ready queue or the suspended list, it is skipped there (not registered).
    }

    /// Re-arms the suspended fd sources that belong to the running mode (called when a run becomes
    /// the innermost one), and queues again the readiness a nested run of another mode set aside.
    /// Registrations no longer registered are dropped from the list.
    func resumeSuspendedFileDescriptors() {
        guard !suspendedFileDescriptors.isEmpty else { return }
        var index = 0
        while index < suspendedFileDescriptors.count {
            let registration = suspendedFileDescriptors[index]
            if !registration.isRegistered || registration.group.isInRunningMode {
                suspendedFileDescriptors.swapAt(index, suspendedFileDescriptors.count - 1)
                suspendedFileDescriptors.removeLast()
                registration.isSuspended = false
                // Cancelled from another thread, its unregistration still queued: not armed again.
                guard registration.isRegistered, !registration.source.isCancelled else { continue }
                do throws(PortRunLoopError) {
                    try registration.arm()
                } catch {
                    logRefusedRegistration(of: registration.source.fileDescriptor, error: error)
                    registration.source.fail(error) // cancelled (and so unregistered), its owner told
                    continue
                }
                if !registration.readyEvents.isEmpty && !registration.isQueued {
                    registration.isQueued = true
                    readyFileDescriptors.append(registration)
                }
            } else {
                index += 1
            }
        }
    }

    /// Calls the handlers of the fd sources libevent reported ready, in the order they were
    /// reported: O(1) per ready fd, each handler at most once per call for the readiness queued
    /// when the call began. A handler may run the loop nested: the nested run takes the next ready
    /// fds from the same queue, and this call goes on with whatever is left. A source cancelled by
    /// an earlier handler in the same turn does not run (its gate is closed).
    func handleReadyFileDescriptors() -> Bool {
        var handled = false
        var budget = readyFileDescriptors.count
        guard budget > 0 else { return false }
        let ambient = innermostRunHasAmbientContext
        while budget > 0, !readyFileDescriptors.isEmpty {
            let registration = readyFileDescriptors.popFirst()
            budget -= 1
            registration.isQueued = false
            let ready = registration.readyEvents
            registration.readyEvents = []
            guard registration.isRegistered else { continue }
            guard registration.group.isInRunningMode else {
                // Queued by an outer run, reached by a nested run of another mode: suspended with
                // its readiness kept, and queued again when a run of its modes resumes it (R8).
                registration.readyEvents = ready
                registration.suspend()
                continue
            }
            // The registration taken off the queue holds its source (a `let`), and the source its
            // gate and handler: borrowed, not retained and released per event (they were four
            // atomic read-modify-writes of each event).
            let entered = Unmanaged.passUnretained(registration.source)._withUnsafeGuaranteedRef { source -> Bool in
                guard source.gate.tryEnter() else { return false }
                // An fd source belongs to the loop, not to a caller: no `ServiceContext`.
                withCallerContext(nil, ambient: ambient) { source.handler(ready) }
                source.gate.exit()
                return true
            }
            if entered {
                // Compared first: storing the same registration again is a retain and a release.
                // Not one the handler cancelled (its unregistration cleared the conversation):
                // kept, it would hold the dead source until another conversation replaced it.
                if registration.source.spinRead != nil, registration.isRegistered, conversationSocket !== registration {
                    conversationSocket = registration
                }
                fdEventsHandled.increment()
                handled = true
            }
        }
        return handled
    }

    /// What a spin's look at the conversation's socket found (``readConversationSocket()``).
    enum SpinRead {
        /// It read something: the answer is queued in its port, or the wait it answers complete.
        case read
        /// The socket held nothing yet.
        case empty
        /// It may not be read now: no conversation socket, not in the running mode, cancelled,
        /// or libevent is owed its turn. The spin asks libevent instead.
        case notNow
    }

    /// A spin's look at the conversation's socket, instead of asking libevent: one `recv` that
    /// reads the answer when it is there, where asking libevent takes an `epoll_wait` and then
    /// that `recv`. After ``IdleSpin/spinReadsPerPoll`` reads since libevent was last asked, the
    /// next look goes to libevent (``SpinRead/notNow``), so the loop's other fds wait a few looks
    /// at most; when the socket is the running mode's only fd source there are none to wait (a
    /// request waiting on its loop's private mode, whose one fd is the connection's), and every
    /// look reads it.
    ///
    /// The read is the library's own, not a user's handler: it moves frames into a port's queue or
    /// a request's reply, as the source's handler would on the next turn. What else it sets off
    /// that would run code of the user's (a connection's end reported to a disconnect or
    /// invalidation handler) goes through ``onOwner(_:)``, which queues it for that turn.
    func readConversationSocket() -> SpinRead {
        guard let registration = conversationSocket, registration.isRegistered, !registration.isQueued,
              registration.group.isInRunningMode,
              spinReadsSincePoll < IdleSpin.spinReadsPerPoll || runningModeFileDescriptorCount() == 1 else { return .notNow }
        spinReadsSincePoll += 1
        return Unmanaged.passUnretained(registration.source)._withUnsafeGuaranteedRef { source -> SpinRead in
            guard let spinRead = source.spinRead, source.gate.tryEnter() else { return .notNow }
            isReadingInSpin = true
            let read = withCallerContext(nil, ambient: innermostRunHasAmbientContext) { spinRead() }
            isReadingInSpin = false
            source.gate.exit()
            guard read else { return .empty }
            fdEventsHandled.increment()
            return .read
        }
    }
}
