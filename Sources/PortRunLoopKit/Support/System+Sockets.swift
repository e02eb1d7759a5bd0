#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
internal import CLinux

/// The Unix-domain socket, file-lock and directory calls of cross-process ports, wrapped and
/// checked in one place (the C side is in `CLinux/shim.h`).
///
/// Thread-safety: each function is as thread-safe as the call it wraps; none keeps state.
extension System {
    /// What one non-blocking socket call did.
    enum SocketResult: Equatable {
        /// The call completed (for a receive: a whole frame of this many bytes).
        case done(Int)
        /// The frame received was longer than the buffer: its real length (its tail was dropped).
        case truncated(Int)
        /// `EAGAIN`: nothing to read, or no room to write; poll and try again.
        case wouldBlock
        /// The peer closed its end (a receive of 0 bytes, `EPIPE`, `ECONNRESET`; a receive's first
        /// `ECONNRESET` is read past, see `receiveFailure(_:resetSeen:)`).
        case closed
        /// Any other failure, with its errno (`EMSGSIZE`: the frame is larger than the socket can carry).
        case failed(Int32)
    }

    /// The longest socket path `sockaddr_un` holds (107 on Linux).
    static var maximumSocketPathLength: Int { Int(portrunloop_max_socket_path()) }

    /// The effective user id of this process (`geteuid`): the id `SO_PEERCRED` reports for a
    /// peer, and the owner of the files and sockets this process makes. A set-user-id process is
    /// its effective user, not the user who started it.
    static func currentUserID() -> UInt32 { geteuid() }

    /// The process id of this process.
    static func currentProcessID() -> Int32 { getpid() }

    /// The calling thread's errno.
    static var lastError: Int32 { errno }

    /// A non-blocking, close-on-exec `SOCK_SEQPACKET` Unix socket, or the errno.
    static func makeSeqpacketSocket() -> Result<Int32, Errno> {
        let fd = portrunloop_seqpacket_socket()
        return fd >= 0 ? .success(fd) : .failure(Errno(errno))
    }

    /// `bind` then `listen` on `path`.
    static func bindAndListen(_ fd: Int32, path: String, backlog: Int32) -> Errno? {
        portrunloop_bind_listen(fd, path, backlog) == 0 ? nil : Errno(errno)
    }

    /// `connect` to `path` (a Unix socket's connect completes at once, or fails with `EAGAIN` when
    /// the listener's backlog is full).
    static func connect(_ fd: Int32, path: String) -> Errno? {
        portrunloop_connect(fd, path) == 0 ? nil : Errno(errno)
    }

    /// `accept4` (non-blocking, close-on-exec): the new fd, nil when none is waiting, or the errno.
    static func accept(_ fd: Int32) -> Result<Int32?, Errno> {
        let connection = portrunloop_accept(fd)
        if connection >= 0 { return .success(connection) }
        let code = errno
        if code == EAGAIN || code == EWOULDBLOCK || code == EINTR || code == ECONNABORTED { return .success(nil) }
        return .failure(Errno(code))
    }

    /// `SO_PEERCRED`: who is at the other end of a connected Unix socket.
    static func peerCredentials(_ fd: Int32) -> (pid: Int32, uid: UInt32, gid: UInt32)? {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
        guard portrunloop_peer_credentials(fd, &pid, &uid, &gid) == 0 else { return nil }
        return (pid, uid, gid)
    }

    /// Sends one whole frame (`MSG_NOSIGNAL | MSG_DONTWAIT`): never blocks, never raises SIGPIPE.
    static func sendFrame(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> SocketResult {
        retryingSend { portrunloop_send_frame(fd, bytes.baseAddress, UInt(bytes.count)) }
    }

    /// Runs a send (`send`/`sendmsg` shim returning bytes sent or -1), again on `EINTR`, and sorts
    /// its outcome.
    @inline(__always)
    private static func retryingSend(_ send: () -> Int) -> SocketResult {
        while true {
            let rc = send()
            if rc >= 0 { return .done(rc) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case EPIPE, ECONNRESET, ENOTCONN: return .closed
            case let code: return .failed(code)
            }
        }
    }

    /// `fcntl(fd, F_DUPFD_CLOEXEC, 0)`: a close-on-exec duplicate, nil when `fd` is not open.
    static func duplicateDescriptor(_ fd: Int32) -> Int32? {
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        return copy >= 0 ? copy : nil
    }

    /// Closes the first `count` descriptors at `control` (received ones nobody took).
    static func closeDescriptors(_ control: UnsafeMutableRawPointer, count: Int) {
        for index in 0..<count { closeDescriptor(control.load(fromByteOffset: index * 4, as: Int32.self)) }
    }

    /// Wraps the first `count` descriptors at `control` (received ones) as owned descriptors.
    static func takeDescriptors(_ control: UnsafeMutableRawPointer, count: Int) -> [TransferredFileDescriptor] {
        (0..<count).map { TransferredFileDescriptor(taking: control.load(fromByteOffset: $0 * 4, as: Int32.self)) }
    }

    /// The most file descriptors one frame can carry (the kernel's `SCM_MAX_FD`, 253).
    static var maximumDescriptorsPerFrame: Int { Int(PORTRUNLOOP_MAX_FDS_PER_FRAME) }

    /// The control-buffer bytes a receive needs to take `count` descriptors (`CMSG_SPACE`).
    static func descriptorControlSize(_ count: Int) -> Int { Int(portrunloop_fds_control_size(UInt32(count))) }

    /// Sends one whole frame carrying `descriptors` (1 to 253) as `SCM_RIGHTS` (`sendmsg`,
    /// `MSG_NOSIGNAL | MSG_DONTWAIT`); the caller keeps its descriptors (the kernel duplicates them).
    static func sendFrame(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, descriptors: UnsafeBufferPointer<Int32>) -> SocketResult {
        retryingSend {
            portrunloop_send_frame_with_fds(fd, bytes.baseAddress, UInt(bytes.count),
                                            descriptors.baseAddress, UInt32(descriptors.count))
        }
    }

    /// Receives one whole frame into `buffer` and its descriptors (`recvmsg`, `MSG_CMSG_CLOEXEC`)
    /// into `control` without blocking: the descriptors are then the first `descriptorCount` ints of
    /// `control` (-1: the control data was truncated; those that came are closed). As
    /// ``receiveFrame(_:into:)`` otherwise.
    static func receiveFrame(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, control: UnsafeMutableRawBufferPointer,
                             descriptorCount: inout Int32) -> SocketResult {
        var resetSeen = false
        while true {
            let rc = portrunloop_receive_frame_with_fds(fd, buffer.baseAddress, UInt(buffer.count),
                                                        control.baseAddress, UInt(control.count), &descriptorCount)
            if rc > buffer.count { return .truncated(rc) }
            if rc > 0 { return .done(rc) }
            if rc == 0 { return .closed }
            guard let failure = receiveFailure(errno, resetSeen: &resetSeen) else { continue }
            return failure
        }
    }

    /// Receives up to `count` whole frames without blocking, in one call (`recvmmsg`): frame i
    /// into the `slotSize` bytes at `buffer + i * slotSize`, its real length in `lengths[i]` (more
    /// than `slotSize`: it was truncated; 0: end of file, and so are the entries after it).
    /// Its descriptors (`SCM_RIGHTS`, close-on-exec) end up as the first `descriptorCounts[i]` ints
    /// of the `controlSize` bytes at `control + i * controlSize` (-1: the control data was
    /// truncated, the descriptors that came are closed).
    /// `.done(n)`: n frames (at least 1) were read.
    static func receiveFrames(_ fd: Int32, into buffer: UnsafeMutableRawPointer, slotSize: Int, count: Int,
                              lengths: UnsafeMutablePointer<Int>, control: UnsafeMutableRawPointer, controlSize: Int,
                              descriptorCounts: UnsafeMutablePointer<Int32>) -> SocketResult {
        var resetSeen = false
        while true {
            let rc = portrunloop_receive_frames(fd, buffer, UInt(slotSize), UInt32(count), lengths,
                                                control, UInt(controlSize), descriptorCounts)
            if rc > 0 { return .done(Int(rc)) }
            if rc == 0 { return .wouldBlock } // no slot asked for
            guard let failure = receiveFailure(errno, resetSeen: &resetSeen) else { continue }
            return failure
        }
    }

    /// Receives one whole frame into `buffer` without blocking.
    static func receiveFrame(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> SocketResult {
        var resetSeen = false
        while true {
            let rc = portrunloop_receive_frame(fd, buffer.baseAddress, UInt(buffer.count))
            if rc > buffer.count { return .truncated(rc) }
            if rc > 0 { return .done(rc) }
            if rc == 0 { return .closed } // SOCK_SEQPACKET: 0 is end of file (empty frames are never sent)
            guard let failure = receiveFailure(errno, resetSeen: &resetSeen) else { continue }
            return failure
        }
    }

    /// What a receive that failed with `code` means; nil: receive again.
    ///
    /// `ECONNRESET` on a Unix socket is the kernel's word that the peer closed its end while
    /// frames this side had sent it were still unread there. It is reported once (reading it
    /// clears it) and *ahead of* the frames the peer sent before it closed, which are still queued
    /// on this side: taken for the end, they would be lost. So the first one reads again, and gets
    /// those frames, then end of file; a second one (`resetSeen`) is the end.
    private static func receiveFailure(_ code: Int32, resetSeen: inout Bool) -> SocketResult? {
        switch code {
        case EINTR: return nil
        case EAGAIN, EWOULDBLOCK: return .wouldBlock
        case ECONNRESET where !resetSeen:
            resetSeen = true
            return nil
        case ECONNRESET, EPIPE, ENOTCONN: return .closed
        default: return .failed(code)
        }
    }

    /// Readiness `poll` reports for one fd.
    struct PollEvents: OptionSet {
        let rawValue: Int32
        static let readable = PollEvents(rawValue: 1)
        static let writable = PollEvents(rawValue: 2)
        /// `POLLHUP`, `POLLERR` or `POLLNVAL`.
        static let hangUp = PollEvents(rawValue: 4)
        /// The wake eventfd of ``System/poll(_:for:orWake:untilMonotonic:)`` was signalled.
        static let woken = PollEvents(rawValue: 8)
    }

    /// Waits until `fd` is ready for `events` or the monotonic `deadline` passes (`.infinity`: no
    /// deadline; now or past: one check). Returns what was ready (empty: timed out).
    ///
    /// A `poll` that fails (`ENOMEM`: the kernel could not allocate its wait table) returns
    /// `.hangUp` after ``pollFailurePause`` (or at the deadline, if sooner), so the caller looks at
    /// the socket and waits again: it keeps finding what arrives, at one look per pause instead
    /// of spinning through failing calls until its deadline.
    static func poll(_ fd: Int32, for events: PollEvents, orWake wakeFD: Int32 = -1,
                     untilMonotonic deadline: Double) -> PollEvents {
        while true {
            let remaining = deadline - monotonicSeconds()
            let timeout: Int32 = deadline == .infinity ? -1
                : remaining <= 0 ? 0 : Int32(min((remaining * 1000).rounded(.up), 3_600_000))
            let rc = wakeFD >= 0 ? portrunloop_poll_or_wake(fd, events.rawValue, wakeFD, timeout)
                                 : portrunloop_poll(fd, events.rawValue, timeout)
            if rc > 0 { return PollEvents(rawValue: rc) }
            if rc < 0 && errno != EINTR {
                usleep(useconds_t(min(pollFailurePause, max(remaining, 0)) * 1e6))
                return .hangUp
            }
            if rc == 0 && (timeout == 0 || monotonicSeconds() >= deadline) { return [] }
        }
    }

    /// How long ``poll(_:for:orWake:untilMonotonic:)`` pauses after a failed `poll`.
    static let pollFailurePause = 0.001

    /// Reads an eventfd's counter back to zero (non-blocking; nothing to read is fine).
    static func resetEventfd(_ fd: Int32) {
        var value: UInt64 = 0
        _ = read(fd, &value, 8)
    }

    /// `open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)`.
    static func openLockFile(_ path: String) -> Result<Int32, Errno> {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        return fd >= 0 ? .success(fd) : .failure(Errno(errno))
    }

    /// `open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)`.
    static func openForReading(_ path: String) -> Result<Int32, Errno> {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        return fd >= 0 ? .success(fd) : .failure(Errno(errno))
    }

    /// `flock(LOCK_EX | LOCK_NB)`: true when taken, false when another open file holds it.
    static func tryLockExclusive(_ fd: Int32) -> Result<Bool, Errno> {
        if portrunloop_lock_exclusive(fd) == 0 { return .success(true) }
        return errno == EWOULDBLOCK ? .success(false) : .failure(Errno(errno))
    }

    /// What `lstat` says about a path: nil when it does not exist.
    struct PathInfo {
        let owner: UInt32
        let permissions: UInt32
        let isDirectory: Bool
        let isSocket: Bool
    }

    /// `lstat(path)`: nil (no error) when the path does not exist.
    static func pathInfo(_ path: String) -> Result<PathInfo?, Errno> {
        var owner: UInt32 = 0
        var mode: UInt32 = 0
        guard portrunloop_lstat(path, &owner, &mode) == 0 else {
            return errno == ENOENT ? .success(nil) : .failure(Errno(errno))
        }
        return .success(PathInfo(owner: owner, permissions: mode & 0o7777,
                                 isDirectory: portrunloop_is_directory(mode) != 0,
                                 isSocket: portrunloop_is_socket(mode) != 0))
    }

    /// `shutdown(fd, SHUT_RDWR)`: the peer sees end of file; a thread polling `fd` wakes.
    static func shutdown(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// `mkdir(path, 0700)`; an existing path is not an error (the caller checks what it is).
    static func makeDirectory(_ path: String) -> Errno? {
        mkdir(path, 0o700) == 0 || errno == EEXIST ? nil : Errno(errno)
    }

    /// `chmod(path, mode)`.
    static func changeMode(_ path: String, _ mode: UInt32) -> Errno? {
        chmod(path, mode_t(mode)) == 0 ? nil : Errno(errno)
    }

    /// `unlink(path)`; a missing path is not an error.
    static func unlink(_ path: String) -> Errno? {
        Glibc.unlink(path) == 0 || errno == ENOENT ? nil : Errno(errno)
    }

    /// Writes all of `bytes` to a regular file at offset 0 and truncates it there (`pwrite`, `ftruncate`).
    static func replaceContents(of fd: Int32, with bytes: [UInt8]) -> Errno? {
        let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard written == bytes.count else { return Errno(written < 0 ? errno : EIO) }
        return ftruncate(fd, off_t(bytes.count)) == 0 ? nil : Errno(errno)
    }

    /// Reads up to `limit` bytes of a file from offset 0 (`pread`).
    static func readContents(of fd: Int32, limit: Int) -> Result<[UInt8], Errno> {
        var buffer = [UInt8](repeating: 0, count: limit)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, limit, 0) }
        guard count >= 0 else { return .failure(Errno(errno)) }
        return .success(Array(buffer.prefix(count)))
    }

    /// An errno value with its `strerror` text.
    struct Errno: Error, Equatable, CustomStringConvertible {
        let code: Int32
        init(_ code: Int32) { self.code = code }
        var description: String { "\(String(cString: strerror(code))) (errno \(code))" }
    }
}
