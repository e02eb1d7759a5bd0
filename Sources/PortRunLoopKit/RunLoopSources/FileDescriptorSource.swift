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
    /// For the library's own sockets only (a cross-process connection): reads what the fd holds
    /// without blocking, as the handler does, and returns whether it read anything (a frame, or
    /// the end). A loop spinning in a conversation calls it instead of asking libevent
    /// (``PortRunLoop/readConversationSocket()``). nil for every source made through the public
    /// ``PortRunLoop/watch(fileDescriptor:for:inModes:handler:)``: a user's handler runs only when
    /// the kernel reported the fd ready.
    let spinRead: (@Sendable () -> Bool)?
    /// For the sockets of the library and its bus transports: told why the loop cancelled the
    /// source on its own (``fail(_:)``), so that what owns the socket ends too
    /// (``PortRunLoop/watch(fileDescriptor:for:inModes:onFailure:handler:)``). nil for a user's
    /// source, whose owner reads ``registrationError``.
    let failureHandler: (@Sendable (PortRunLoopError) -> Void)?
    /// For a library socket whose owner must end with the loop (a published port's listener):
    /// called on the loop's thread as the loop shuts down and cancels the source, which
    /// ``failureHandler`` is not told of.
    let shutDownHandler: (@Sendable () -> Void)?
    let gate = DeliveryGate()
    private let loopBox: TracedMutex<PortRunLoop?>
    private let failure = TracedMutex<PortRunLoopError?>(nil)

    init(fileDescriptor: Int32, events: Events, loop: PortRunLoop, spinRead: (@Sendable () -> Bool)? = nil,
         failureHandler: (@Sendable (PortRunLoopError) -> Void)? = nil, shutDownHandler: (@Sendable () -> Void)? = nil,
         handler: @escaping @Sendable (Events) -> Void) {
        self.fileDescriptor = fileDescriptor
        self.events = events
        self.handler = handler
        self.spinRead = spinRead
        self.failureHandler = failureHandler
        self.shutDownHandler = shutDownHandler
        self.loopBox = TracedMutex(loop)
    }

    /// Stops watching. Once this returns the handler does not start again (a call already running
    /// on the loop's thread may finish). Idempotent.
    ///
    /// From another thread, the loop's thread takes the fd out of its epoll set at its next turn
    /// (libevent's `event_del` is applied there). Closing the fd before that is safe when nothing
    /// else refers to its open file (the kernel then drops it from the set). When something may
    /// (a duplicate, a descriptor passed to another process, a child that inherited it), close it
    /// after the loop has let go, for example from a block queued with
    /// ``PortRunLoop/perform(inModes:_:)`` after the cancel: otherwise the open file stays in the
    /// set under a number the loop no longer watches, and its readiness wakes the loop for nothing.
    ///
    /// Thread-safety: any thread, including from inside its own handler.
    public func cancel() {
        _ = close()
    }

    /// ``cancel()``; the loop the source was registered with, nil when it was cancelled already.
    private func close() -> PortRunLoop? {
        guard gate.close() else { return nil }
        let loop = loopBox.withLock { box -> PortRunLoop? in
            defer { box = nil }
            return box
        }
        guard let loop else { return nil }
        if loop.isCurrentThread {
            loop.unregisterFileDescriptorSource(self)
        } else {
            loop.registerOnOwner { $0.unregisterFileDescriptorSource(self) }
        }
        return loop
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

    /// The loop cancels the source on its own, for `error`; its owner's ``failureHandler`` is
    /// told of a refusal, unless the source was cancelled already (its owner ended it first).
    /// The report is queued as control work (it runs before the loop's next turn, in any mode),
    /// never made inline: a refusal found while the loop registers or re-arms sources may be found
    /// inside a caller's own `watch`, `add` or run, which an owner's reaction must not re-enter.
    /// The loop's shutdown is told to ``shutDownHandler`` only, inline: the loop takes no more work.
    func fail(_ error: PortRunLoopError) {
        failure.withLock { $0 = error }
        guard let loop = close() else { return }
        if error == .loopShutDown { shutDownHandler?(); return }
        guard let failureHandler else { return }
        _ = loop.enqueue(QueuedWork(modes: .all, kind: .block { failureHandler(error) })) // refused: shut down
    }
}
