/// Failures PortRunLoopKit reports by throwing: environmental failures and calls that cannot be
/// completed (a dead target, a deadline that passed). Programmer errors are preconditions instead.
///
/// Thread-safety: a value type; `Sendable`.
public enum PortRunLoopError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The target loop was shut down (its thread exited or its ``RunLoopThread`` stopped).
    case loopShutDown
    /// The deadline passed before the work started; the work will never run.
    case timedOut
    /// `evthread_use_pthreads()` failed: libevent was built without pthread support.
    case libeventThreadingUnavailable
    /// `event_base_new()` returned NULL (usually: out of file descriptors).
    case eventBaseCreationFailed
    /// `event_new()` returned NULL.
    case eventCreationFailed
    /// `event_add()` failed (for an fd source: the kernel refused to watch it).
    case eventRegistrationFailed
    /// The file descriptor is not open.
    case invalidFileDescriptor(Int32)
    /// The file descriptor is open but epoll will not watch it (a regular file or a directory, for
    /// one: `epoll_ctl(EPOLL_CTL_ADD)` failed with an errno other than `EBADF`).
    case unsupportedFileDescriptor(Int32)
    /// `pthread_create` failed with this errno.
    case threadCreationFailed(errno: Int32)
    /// The observed object or port was invalidated before the call could complete.
    case invalidated

    public var description: String {
        switch self {
        case .loopShutDown: "the target PortRunLoop is shut down (its thread exited or was stopped)"
        case .timedOut: "the deadline passed before the work started; it will not run"
        case .libeventThreadingUnavailable: "libevent was built without pthread support (evthread_use_pthreads failed)"
        case .eventBaseCreationFailed: "event_base_new() failed (out of file descriptors?)"
        case .eventCreationFailed: "event_new() failed"
        case .eventRegistrationFailed: "event_add() failed: the kernel refused to watch the event"
        case .invalidFileDescriptor(let fd): "file descriptor \(fd) is not open"
        case .unsupportedFileDescriptor(let fd): "file descriptor \(fd) cannot be polled: epoll refuses it (a regular file or a directory, for one)"
        case .threadCreationFailed(let e): "pthread_create failed with errno \(e)"
        case .invalidated: "the port or observation was invalidated"
        }
    }
}
