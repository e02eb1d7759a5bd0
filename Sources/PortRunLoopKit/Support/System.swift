#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
internal import CLinux
import Synchronization

/// Every POSIX call PortRunLoopKit makes, wrapped and checked in one place (libevent calls live in
/// `LibEvent/`).
///
/// Thread-safety: each function is as thread-safe as the call it wraps; none keeps state.
enum System {
    /// `clock_gettime(CLOCK_MONOTONIC)` in seconds. Used for deadlines; never goes backwards.
    static func monotonicSeconds() -> Double {
        var ts = timespec()
        let rc = clock_gettime(CLOCK_MONOTONIC, &ts)
        InternalFailure.check(rc == 0, "clock_gettime(CLOCK_MONOTONIC) failed, errno \(errno)")
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Throws unless epoll accepts `fd`: `epoll_ctl(EPOLL_CTL_ADD)` on a process-wide probe epoll
    /// instance, then `EPOLL_CTL_DEL`. `EBADF` (not open) is ``PortRunLoopError/invalidFileDescriptor(_:)``;
    /// `EPERM` (a regular file, a directory, `/dev/null`: anything that does not support polling) is
    /// ``PortRunLoopError/unsupportedFileDescriptor(_:)``. Asking the kernel itself, on the calling
    /// thread, is what lets `watch` throw from any thread: the loop's own registration happens later,
    /// on the loop's thread. `EEXIST` (another thread probing the same fd at this moment) passes.
    ///
    /// Without a probe instance (the process is out of descriptors when the first one is needed;
    /// a later call tries again) the check is skipped: the loop's own registration then reports
    /// a refused fd (``FileDescriptorSource/registrationError``).
    static func checkPollable(_ fd: Int32) throws(PortRunLoopError) {
        guard fd >= 0 else { throw .invalidFileDescriptor(fd) }
        guard let probeEpoll = probeEpoll() else { return }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLOUT.rawValue
        event.data.fd = fd
        if epoll_ctl(probeEpoll, EPOLL_CTL_ADD, fd, &event) != 0 {
            switch errno {
            case EEXIST: return
            case EBADF: throw .invalidFileDescriptor(fd)
            default: throw .unsupportedFileDescriptor(fd)
            }
        }
        _ = epoll_ctl(probeEpoll, EPOLL_CTL_DEL, fd, &event)
    }

    /// The epoll instance ``checkPollable(_:)`` asks (`epoll_create1(EPOLL_CLOEXEC)`, made on first
    /// use and never closed); nil while it cannot be made. Two threads that make one at once keep
    /// the first stored and close the other.
    ///
    /// Thread-safety: any thread.
    static func probeEpoll() -> Int32? {
        let stored = probeEpollDescriptor.load(ordering: .acquiring)
        if stored >= 0 { return stored }
        let made = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard made >= 0 else { return nil }
        let (exchanged, original) = probeEpollDescriptor.compareExchange(
            expected: -1, desired: made, successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
        if exchanged { return made }
        close(made)
        return original
    }
    private static let probeEpollDescriptor = Atomic<Int32>(-1)

    /// Whether `count` more descriptors can be opened now: opens that many eventfds
    /// (`eventfd(0, EFD_CLOEXEC)`) and closes them again.
    static func descriptorsAvailable(_ count: Int) -> Bool {
        var opened: [Int32] = []
        opened.reserveCapacity(count)
        defer { for fd in opened { close(fd) } }
        for _ in 0..<count {
            let fd = eventfd(0, Int32(EFD_CLOEXEC))
            guard fd >= 0 else { return false }
            opened.append(fd)
        }
        return true
    }

    /// `eventfd(0, EFD_CLOEXEC)`: blocking, because a loop with nothing but work to wait for sleeps
    /// in `read(2)` on it (``waitEventfd(_:)``); libevent never reads it (see ``Doorbell``).
    static func makeEventfd() throws(PortRunLoopError) -> Int32 {
        let fd = eventfd(0, Int32(EFD_CLOEXEC))
        guard fd >= 0 else { throw .eventCreationFailed }
        return fd
    }

    /// `write(fd, 1)` on an eventfd: adds one to its counter. While the loop waits in libevent the
    /// counter is not read (the doorbell is edge-triggered there), so in the impossible case that
    /// it is full (`EAGAIN` at 2^64 − 2) it is emptied with `read` and written again. Inlined: it
    /// is the last step of a producer that finds the loop asleep, code that runs cold after an
    /// idle spell, where a call to a function of its own costs a fetch of its code.
    @inline(__always)
    static func signalEventfd(_ fd: Int32) {
        var one: UInt64 = 1
        while write(fd, &one, 8) != 8 {
            switch errno {
            case EINTR: continue
            case EAGAIN:
                var drained: UInt64 = 0
                _ = read(fd, &drained, 8)
            default:
                InternalFailure.fail("write to the loop's eventfd failed, errno \(errno)")
            }
        }
    }

    /// `read(fd, 8)` on a blocking eventfd: sleeps until its counter is non-zero, then zeroes it.
    /// Returns early on a signal (`EINTR`), which the caller treats as a spurious wake-up.
    static func waitEventfd(_ fd: Int32) {
        var count: UInt64 = 0
        let n = read(fd, &count, 8)
        InternalFailure.check(n == 8 || errno == EINTR, "read from the loop's eventfd failed, errno \(errno)")
    }

    /// `timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)`: the loop's wake timer (see
    /// ``WakeTimer``), set to absolute monotonic times and never read.
    static func makeTimerfd() throws(PortRunLoopError) -> Int32 {
        let fd = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        guard fd >= 0 else { throw .eventCreationFailed }
        return fd
    }

    /// `timerfd_settime(fd, TFD_TIMER_ABSTIME, {0, deadline})`: the timer expires once at the
    /// monotonic time `deadline` (seconds, as ``monotonicSeconds()``); a time already past expires
    /// at once. Setting it again replaces the expiry and resets its count.
    static func setTimerfd(_ fd: Int32, deadline: Double) {
        var spec = itimerspec(it_interval: timespec(), it_value: timespec(monotonicDeadline: deadline))
        let rc = timerfd_settime(fd, Int32(TFD_TIMER_ABSTIME), &spec, nil)
        InternalFailure.check(rc == 0, "timerfd_settime failed, errno \(errno)")
    }

    /// `close(fd)`, once: on Linux the fd is released even when `close` reports `EINTR`.
    static func closeDescriptor(_ fd: Int32) { _ = close(fd) }

    /// The calling thread, for owner checks (`pthread_self`).
    static func currentThread() -> pthread_t { pthread_self() }

    /// Whether the calling thread is the process's main thread, in a few nanoseconds.
    ///
    /// Foundation's `Thread.isMainThread` costs two system calls on Linux (CoreFoundation compares
    /// `gettid()` with `getpid()` on every call), which the notification center pays on every post;
    /// here the answer is computed once per thread and kept in a thread-local
    /// (``ThreadLocals/isMainThread``).
    static func isMainThread() -> Bool {
        if let known = ThreadLocals.isMainThread { return known }
        let isMain = Thread.isMainThread
        ThreadLocals.isMainThread = isMain
        return isMain
    }

    /// `pthread_equal(a, b)`, which glibc defines as `a == b` (a `pthread_t` is the address of the
    /// thread's descriptor): compared inline, without a call into libc on every owner check.
    @inline(__always)
    static func isSameThread(_ a: pthread_t, _ b: pthread_t) -> Bool { a == b }

    /// Names the calling thread: Foundation's `Thread.current.name`, and the kernel's name that
    /// debuggers and `top -H` show (`prctl(PR_SET_NAME)`), cut to the 15 bytes the kernel keeps
    /// (at a character's boundary). Foundation passes the whole name to `pthread_setname_np`,
    /// which refuses a longer one (`ERANGE`): the thread then kept the name of the thread that
    /// made it.
    static func setCurrentThreadName(_ name: String) {
        Thread.current.name = name
        var cut = Substring(name)
        while cut.utf8.count > 15 { cut = cut.dropLast() }
        _ = portrunloop_set_thread_name(String(cut))
    }

    /// `pthread_create` running `body` on a new joinable thread. Throws when the system refuses.
    static func spawnThread(_ body: @escaping @Sendable () -> Void) throws(PortRunLoopError) -> pthread_t {
        final class Box { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, context)
        guard rc == 0 else {
            Unmanaged<Box>.fromOpaque(context).release()
            throw .threadCreationFailed(errno: rc)
        }
        return thread
    }

    /// `pthread_join`; the thread must be joinable and not the caller.
    static func join(_ thread: pthread_t) {
        let rc = pthread_join(thread, nil)
        InternalFailure.check(rc == 0, "pthread_join failed, errno \(rc)")
    }

    /// `pthread_detach`.
    static func detach(_ thread: pthread_t) {
        _ = pthread_detach(thread)
    }
}

extension Date {
    /// This date as a monotonic-clock deadline (seconds); `.infinity` for dates beyond ~100 years
    /// (including `.distantFuture`). NaN dates are a programmer error and are rejected by callers.
    var monotonicDeadline: Double {
        // `.distantFuture` (the usual "no deadline") without reading either clock.
        if timeIntervalSinceReferenceDate >= Date.distantFuture.timeIntervalSinceReferenceDate { return .infinity }
        let delta = timeIntervalSinceNow
        if delta > 100 * 365 * 86_400 { return .infinity }
        return System.monotonicSeconds() + delta
    }
}

extension timespec {
    /// The absolute time `deadline` (monotonic seconds, as ``System/monotonicSeconds()``), rounded
    /// up to the nanosecond and clamped to (0, 10^12] seconds: never zero (an `it_value` of zero
    /// disarms a timerfd instead of expiring it) and never beyond what `Int` holds.
    init(monotonicDeadline deadline: Double) {
        let clamped = deadline.isNaN ? 1e-9 : min(max(deadline, 1e-9), 1e12)
        let whole = clamped.rounded(.down)
        var nanos = Int(((clamped - whole) * 1e9).rounded(.up))
        var seconds = Int(whole)
        if nanos >= 1_000_000_000 { seconds += 1; nanos -= 1_000_000_000 }
        if seconds == 0 && nanos == 0 { nanos = 1 }
        self.init(tv_sec: seconds, tv_nsec: nanos)
    }
}
