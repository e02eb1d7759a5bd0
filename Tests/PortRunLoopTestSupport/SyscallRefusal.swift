import CSyscallRefusal
import Foundation
import PortRunLoopStressEngine

/// A system call the kernel is made to refuse on one thread, through a seccomp filter
/// (`prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER)` without `SECCOMP_FILTER_FLAG_TSYNC`): the filter
/// binds the thread that installs it, and the threads that thread starts afterwards, for the rest
/// of their lives, and no other thread of the process. Tests reach through it the library's
/// answers to failures they cannot otherwise provoke, with the real kernel and no test double.
///
/// Thread-safety: `Sendable`; a value.
public enum SyscallRefusal: Sendable {
    /// `getsockopt(_, SOL_SOCKET, SO_PEERCRED, _)`: who is at the other end of a Unix socket.
    case peerCredentials(errno: Int32)
    /// `epoll_ctl(epoll, EPOLL_CTL_ADD, _, _)` on this one epoll instance.
    case epollAdd(epoll: Int32, errno: Int32)
    /// `epoll_ctl(_, EPOLL_CTL_ADD, _, _)` on every epoll instance: install it on a loop's thread
    /// once the loop runs (its own events are added when it is made).
    case anyEpollAdd(errno: Int32)
    /// `send`/`sendto` of exactly `length` bytes.
    case send(length: UInt32, errno: Int32)
    /// `epoll_ctl(_, EPOLL_CTL_ADD, fileDescriptor, _)`: this one fd, in every epoll instance (the
    /// library's check that epoll takes an fd included).
    case epollAddOf(fileDescriptor: Int32, errno: Int32)
    /// `epoll_ctl(_, EPOLL_CTL_MOD, fileDescriptor, _)`: this one fd, in every epoll instance.
    case epollModifyOf(fileDescriptor: Int32, errno: Int32)
    /// `accept4` and `accept` on this one listening socket.
    case accept(listener: Int32, errno: Int32)
    /// Every receive (`recv`/`recvfrom`, `recvmsg`, `recvmmsg`) on this one socket.
    case receive(fileDescriptor: Int32, errno: Int32)
    /// Every `poll`.
    case poll(errno: Int32)
    /// Every `clone3`: `pthread_create` fails with the errno.
    case threadCreation(errno: Int32)
    /// Every `timerfd_create`.
    case timerfdCreate(errno: Int32)
    /// Every `pread`.
    case pread(errno: Int32)

    /// Installs the filter on the calling thread, which keeps it until it exits.
    ///
    /// Thread-safety: binds the calling thread only; call it on a thread of the test's own
    /// (``onRefusingThread(_:name:timeout:_:)``), never on a pool thread swift-testing reuses.
    public func installOnCurrentThread() throws {
        let result = switch self {
        case .peerCredentials(let code): syscall_refusal_peer_credentials(code)
        case .epollAdd(let epoll, let code): syscall_refusal_epoll_add(epoll, code)
        case .anyEpollAdd(let code): syscall_refusal_any_epoll_add(code)
        case .send(let length, let code): syscall_refusal_send_of_length(length, code)
        case .epollAddOf(let fd, let code): syscall_refusal_epoll_add_of(fd, code)
        case .epollModifyOf(let fd, let code): syscall_refusal_epoll_modify_of(fd, code)
        case .accept(let listener, let code): syscall_refusal_accept(listener, code)
        case .receive(let fd, let code): syscall_refusal_receive(fd, code)
        case .poll(let code): syscall_refusal_poll(code)
        case .threadCreation(let code): syscall_refusal_thread_creation(code)
        case .timerfdCreate(let code): syscall_refusal_timerfd_create(code)
        case .pread(let code): syscall_refusal_pread(code)
        }
        guard result == 0 else { throw FilterRefused(refusal: self, errno: errno) }
    }

    /// The kernel would not install the filter (a kernel without `CONFIG_SECCOMP_FILTER`, or a
    /// sandbox that forbids it).
    ///
    /// Thread-safety: `Sendable`; immutable.
    public struct FilterRefused: Error, CustomStringConvertible, Sendable {
        /// The refusal that could not be installed.
        public let refusal: SyscallRefusal
        /// `errno` of the failed `prctl`.
        public let errno: Int32
        /// Thread-safety: immutable.
        public var description: String { "seccomp filter for \(refusal) not installed: errno \(errno)" }
    }
}

/// Runs `body` on a brand-new thread under `refusal` (see ``onFreshThread(name:timeout:_:)``):
/// the system call fails there, and on every thread `body` starts (a `RunLoopThread` made inside
/// keeps the refusal after `body` returns); nowhere else.
///
/// Thread-safety: any thread; blocks until `body` returns or `timeout` passes.
public func onRefusingThread<T: Sendable>(_ refusal: SyscallRefusal, name: String = "refusing", timeout: Double = 60,
                                          _ body: @escaping @Sendable () throws -> T) throws -> T {
    try JoinableThread.run(name: name, timeout: timeout) {
        try refusal.installOnCurrentThread()
        return try body()
    }
}
