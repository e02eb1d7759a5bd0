import Synchronization
import Foundation

/// A file descriptor (socket, pipe, eventfd, …) a ``PortRunLoop`` watches for readiness, calling
/// a handler on its thread. Made by ``PortRunLoop/watch(fileDescriptor:for:inModes:handler:)``.
///
/// Readiness is level-triggered: while the fd stays readable the handler is called on every turn
/// of a run in one of the source's modes, so read until `EAGAIN` (or cancel). The source does not
/// own the fd: cancel the source before closing it.
///
/// Thread-safety: `Sendable`; every member is safe from any thread. The handler runs on the loop's thread.
public final class FileDescriptorSource: @unchecked Sendable {
    /// What to watch for, and what was ready.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public struct Events: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        /// Creates a set from its raw bits. Thread-safety: a value type.
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// Readable (or peer closed). Thread-safety: a constant.
        public static let read = Events(rawValue: 1)
        /// Writable. Thread-safety: a constant.
        public static let write = Events(rawValue: 2)
    }

    /// The watched file descriptor.
    ///
    /// Thread-safety: immutable.
    public let fileDescriptor: Int32
    /// The readiness the source watches for.
    ///
    /// Thread-safety: immutable.
    public let events: Events
    let handler: @Sendable (Events) -> Void
    let gate = DeliveryGate()
    private let loopBox: TracedMutex<PortRunLoop?>
    private let failure = TracedMutex<PortRunLoopError?>(nil)

    init(fileDescriptor: Int32, events: Events, loop: PortRunLoop, handler: @escaping @Sendable (Events) -> Void) {
        self.fileDescriptor = fileDescriptor
        self.events = events
        self.handler = handler
        self.loopBox = TracedMutex(loop)
    }

    /// Stops watching. Once this returns the handler does not start again (a call already running
    /// on the loop's thread may finish). Idempotent.
    ///
    /// Thread-safety: any thread, including from inside its own handler.
    public func cancel() {
        guard gate.close() else { return }
        let loop = loopBox.withLock { box -> PortRunLoop? in
            defer { box = nil }
            return box
        }
        loop?.onOwner { $0.unregisterFileDescriptorSource(self) }
    }

    /// True once cancelled (by ``cancel()``, or by the loop when the kernel refused the fd or the
    /// loop shut down).
    ///
    /// Thread-safety: any thread.
    public var isCancelled: Bool { gate.isClosed }

    /// Why the loop cancelled the source on its own, if it did (for example, the fd was closed
    /// before the loop could register it, so `event_add` failed).
    ///
    /// Thread-safety: any thread.
    public var registrationError: PortRunLoopError? { failure.withLock { $0 } }

    func fail(_ error: PortRunLoopError) {
        failure.withLock { $0 = error }
        cancel()
    }
}

/// An fd source scheduled in a loop: its persistent libevent event and its modes. Owner thread only.
final class FDRegistration: LibEventReceiver {
    let source: FileDescriptorSource
    let modes: ModeSet
    private unowned let loop: PortRunLoop
    private var event: LoopEvent?
    private var armed = false

    init(source: FileDescriptorSource, modes: ModeSet, loop: PortRunLoop) throws(PortRunLoopError) {
        self.source = source
        self.modes = modes
        self.loop = loop
        super.init()
        var flags: EventFlags = [.persist]
        if source.events.contains(.read) { flags.insert(.read) }
        if source.events.contains(.write) { flags.insert(.write) }
        self.event = try LoopEvent(base: loop.base, fileDescriptor: source.fileDescriptor, flags: flags, receiver: self)
    }

    /// libevent callback (inside `event_base_loop`): only records the readiness.
    override func eventFired(_ flags: EventFlags) {
        // Reported again before it was handled (a nested run polled): merge, never queue twice.
        if let index = loop.readyFDs.firstIndex(where: { $0.0 === self }) {
            loop.readyFDs[index].1.formUnion(flags)
        } else {
            loop.readyFDs.append((self, flags))
        }
    }

    func setArmed(_ wanted: Bool) {
        guard let event, wanted != armed else { return }
        if wanted {
            do {
                try event.add()
                armed = true
            } catch {
                source.fail(.eventRegistrationFailed)
            }
        } else {
            event.remove()
            armed = false
        }
    }

    func detach() {
        event?.remove()
        event = nil
        armed = false
    }
}

extension PortRunLoop {
    /// Watches `fd` for `events` and calls `handler` on the loop's thread, in runs of `modes`,
    /// whenever the fd is ready. Cancel the returned source (from any thread) to stop.
    ///
    /// - Throws: ``PortRunLoopError/invalidFileDescriptor(_:)`` for an fd that is not open,
    ///   ``PortRunLoopError/unsupportedFileDescriptor(_:)`` for a regular file or directory, and
    ///   libevent's failures when called on the loop's own thread. From another thread a later
    ///   kernel refusal cancels the source and sets ``FileDescriptorSource/registrationError``.
    ///
    /// Thread-safety: any thread.
    public func watch(fileDescriptor fd: Int32, for events: FileDescriptorSource.Events,
                      inModes modes: [RunLoop.Mode] = [.common],
                      handler: @escaping @Sendable (FileDescriptorSource.Events) -> Void) throws(PortRunLoopError) -> FileDescriptorSource {
        precondition(!events.isEmpty, "PortRunLoop.watch(fileDescriptor:for:): the event set is empty")
        precondition(!modes.isEmpty, "PortRunLoop.watch(fileDescriptor:for:inModes:): the mode list is empty")
        try System.checkPollable(fd)
        guard !isShutDown else { throw .loopShutDown }
        let source = FileDescriptorSource(fileDescriptor: fd, events: events, loop: self, handler: handler)
        let modeSet = ModeSet(modes)
        if isCurrentThread {
            try registerFileDescriptorSource(source, modes: modeSet)
        } else {
            let queued = onOwner { loop in
                do throws(PortRunLoopError) {
                    try loop.registerFileDescriptorSource(source, modes: modeSet)
                } catch {
                    source.fail(error)
                }
            }
            if !queued { source.fail(.loopShutDown) } // shut down since the check above
        }
        return source
    }

    private func registerFileDescriptorSource(_ source: FileDescriptorSource, modes: ModeSet) throws(PortRunLoopError) {
        guard !source.isCancelled else { return }
        guard !inbox.withLock({ $0.isShutDown }) else { throw .loopShutDown }
        let registration = try FDRegistration(source: source, modes: modes, loop: self)
        fdSources[ObjectIdentifier(source)] = registration
        if let armed = armedMode, modes.contains(armed, commonModes: ownerCommonModes) {
            registration.setArmed(true)
            if source.registrationError != nil {
                fdSources[ObjectIdentifier(source)] = nil
                registration.detach()
                throw .eventRegistrationFailed
            }
        }
    }

    func unregisterFileDescriptorSource(_ source: FileDescriptorSource) {
        guard let registration = fdSources.removeValue(forKey: ObjectIdentifier(source)) else { return }
        registration.detach()
        readyFDs.removeAll { $0.0 === registration }
    }

    /// Calls the handlers of the fd sources libevent reported ready, if they belong to `mode`.
    func handleReadyFileDescriptors(mode: RunLoop.Mode) -> Bool {
        var handled = false
        var index = 0
        while index < readyFDs.count {
            let (registration, flags) = readyFDs[index]
            let source = registration.source
            let current = fdSources[ObjectIdentifier(source)] === registration
            // Readiness libevent reported while a nested run of another mode polled stays queued
            // for a run of the source's own modes (dropped, it would wait for the next poll).
            if current && !registration.modes.contains(mode, commonModes: ownerCommonModes) {
                index += 1
                continue
            }
            readyFDs.remove(at: index)
            guard current else { continue }
            index = 0 // the handler may run nested runs that change the list
            var ready: FileDescriptorSource.Events = []
            if flags.contains(.read) { ready.insert(.read) }
            if flags.contains(.write) { ready.insert(.write) }
            if source.gate.tryEnter() {
                source.handler(ready)
                source.gate.exit()
                fdEventsHandled.increment()
                handled = true
            }
        }
        return handled
    }
}
