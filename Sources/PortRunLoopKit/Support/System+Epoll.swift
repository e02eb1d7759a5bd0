#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
internal import CLinux

/// The calls on an epoll instance of the library's own (``ReplyWatchSet``), beside libevent's:
/// one-shot registrations that any thread arms, and a look at what is ready that never blocks.
///
/// Thread-safety: each function is as thread-safe as the call it wraps (`epoll_ctl` and
/// `epoll_wait` may be called on one instance from any thread at once); none keeps state.
extension System {
    /// `epoll_create1(EPOLL_CLOEXEC)`, or the errno.
    static func makeEpoll() -> Result<Int32, Errno> {
        let fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        return fd >= 0 ? .success(fd) : .failure(Errno(errno))
    }

    /// `epoll_ctl(EPOLL_CTL_ADD)` of `fd` into `epoll`, one-shot and not armed for reading
    /// (`EPOLLONESHOT` alone: the kernel adds `EPOLLHUP | EPOLLERR`, so a hang-up or an error is
    /// reported once even unarmed). `token` comes back with each report (``takeReadyTokens(_:into:)``).
    static func addOneShot(_ fd: Int32, token: UInt64, to epoll: Int32) -> Errno? {
        var event = epoll_event()
        event.events = EPOLLONESHOT.rawValue
        event.data.u64 = token
        return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) == 0 ? nil : Errno(errno)
    }

    /// `epoll_ctl(EPOLL_CTL_MOD)`: arms `fd` once for reading, and for writing too when asked
    /// (`EPOLLIN | EPOLLONESHOT`, `| EPOLLOUT`); after one report it is disarmed until armed
    /// again. The kernel looks at the fd as it arms it, so an fd ready already is reported at
    /// once: arming after a last look that found nothing loses no wake-up.
    static func armOneShot(_ fd: Int32, token: UInt64, in epoll: Int32, forWriting: Bool) -> Errno? {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLONESHOT.rawValue | (forWriting ? EPOLLOUT.rawValue : 0)
        event.data.u64 = token
        return epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event) == 0 ? nil : Errno(errno)
    }

    /// `epoll_ctl(EPOLL_CTL_DEL)`: `fd` leaves `epoll` (called before `fd` is closed; a failure, an
    /// fd not in the set, is of no consequence).
    static func remove(_ fd: Int32, from epoll: Int32) {
        var event = epoll_event()
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, fd, &event)
    }

    /// `epoll_wait(epoll, …, 0)`: the tokens of the fds reported now, at most `tokens.count`,
    /// without blocking (the events are read into stack memory). Returns how many were written to
    /// the front of `tokens` (0 on `EINTR`).
    static func takeReadyTokens(_ epoll: Int32, into tokens: UnsafeMutableBufferPointer<UInt64>) -> Int {
        withUnsafeTemporaryAllocation(of: epoll_event.self, capacity: tokens.count) { events in
            let count = max(Int(epoll_wait(epoll, events.baseAddress, Int32(events.count), 0)), 0)
            for index in 0..<count { tokens[index] = events[index].data.u64 }
            return count
        }
    }
}
