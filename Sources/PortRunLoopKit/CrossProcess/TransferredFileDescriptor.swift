import Synchronization

/// A file descriptor that arrived with a message (the counterpart of a port right carried by a
/// Mach message): owned by this object, which closes it on deinit unless it was taken.
///
/// A handler that keeps the descriptor calls ``take()`` and then owns the raw fd (closes it
/// itself); one that does not simply drops the message, and the descriptor is closed with it. A
/// message discarded unread (its port invalidated, its frame refused) closes its descriptors the
/// same way. Received descriptors are close-on-exec.
///
/// Thread-safety: `Sendable`; the descriptor is held in an atomic, so ``take()`` hands it out to
/// exactly one caller whatever the threads.
public final class TransferredFileDescriptor: Sendable, CustomStringConvertible {
    private let storage: Atomic<Int32>

    /// Takes ownership of `fileDescriptor` (it is closed on deinit unless taken).
    ///
    /// Thread-safety: an initializer.
    public init(taking fileDescriptor: Int32) {
        storage = Atomic(fileDescriptor)
    }

    /// The descriptor, still owned by this object (nil once taken): valid until this object is
    /// released or ``take()`` is called.
    ///
    /// Thread-safety: safe from any thread.
    public var fileDescriptor: Int32? {
        let fd = storage.load(ordering: .acquiring)
        return fd >= 0 ? fd : nil
    }

    /// Hands the descriptor to the caller, who must close it: nil when it was already taken.
    ///
    /// Thread-safety: safe from any thread; exactly one caller gets the descriptor.
    public func take() -> Int32? {
        let fd = storage.exchange(-1, ordering: .acquiringAndReleasing)
        return fd >= 0 ? fd : nil
    }

    /// Thread-safety: safe from any thread.
    public var description: String { fileDescriptor.map { "fd \($0)" } ?? "fd (taken)" }

    deinit {
        let fd = storage.load(ordering: .relaxed)
        if fd >= 0 { System.closeDescriptor(fd) }
    }
}
