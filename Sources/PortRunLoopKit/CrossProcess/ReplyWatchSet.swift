
/// The connections async requests wait on, as the ``RequestReaderThread`` watches them: an epoll
/// instance of the library's own, itself a read source of that thread's loop. Each connection's
/// socket is in it once, one-shot (`EPOLLONESHOT`), and armed only while a task waits on it: for
/// reading while one waits for a reply or a credit, for writing too while one waits for room in
/// the socket. The task arms it as it suspends, and the reader thread, woken, reads the socket
/// and arms it again if a task still waits.
///
/// Why not a read source of the reader loop per connection, armed for the connection's life:
/// every reply would wake the reader thread, also a reply the waiting task reads itself while it
/// spins (``WaitSpin``). With the threads on one CPU the woken reader thread ran before the
/// spinning task looked, and a request took three context switches instead of one. Nor a loop
/// source armed per wait: the reader's base is its loop's alone (`EVENT_BASE_FLAG_NOLOCK`), so a
/// registration from the task's thread is queued to the loop and rings it, a wake-up of the
/// reader thread for every request that suspends. `epoll_ctl` may be called from any thread: the
/// task arms its socket itself, in one system call that wakes nobody, and since the kernel looks
/// at the socket as it arms it (`EPOLL_CTL_MOD`), a reply that came after the task's last look
/// is reported at once.
///
/// Thread-safety: `@unchecked Sendable`; `members` is guarded by its mutex; `descriptor` and
/// `loop` are immutable (`epoll_ctl` and `epoll_wait` are thread-safe); `ready` is used by the reader
/// thread only (``serveReady()``, the handler of the loop's source).
final class ReplyWatchSet: @unchecked Sendable {
    /// The epoll instance (kept for the process's life, as its thread is).
    let descriptor: Int32
    /// The reader thread's loop, which watches the set and runs the async requests' timers.
    let loop: PortRunLoop
    private let members = TracedMutex<Members>(Members())
    private let ready = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: 64)

    private struct Members {
        var nextToken: UInt64 = 1
        /// The connections in the set, by the token their socket is registered with.
        var connections: [UInt64: RemoteConnection.WeakConnection] = [:]
        /// Why the reader loop stopped watching the set (its registration was refused late): no
        /// connection is added any more.
        var refusal: PortRunLoopError?
    }

    init(descriptor: Int32, loop: PortRunLoop) {
        self.descriptor = descriptor
        self.loop = loop
    }

    /// Only a set its loop refused is ever let go: at once when the loop refused to watch it, or
    /// once that loop's source (which holds it) is gone. The set owns its descriptor.
    deinit {
        System.closeDescriptor(descriptor)
        ready.deallocate()
    }

    /// Adds `connection`'s socket `fd`, not armed (``System/addOneShot(_:token:to:)``): its token,
    /// for ``arm(_:token:)`` and ``remove(_:token:)``. Throws `epoll_ctl`'s error, or the loop's
    /// refusal of the set.
    func add(_ fd: Int32, of connection: RemoteConnection) throws(CrossProcessPortError) -> UInt64 {
        let token = try members.withLock { (members: inout Members) throws(CrossProcessPortError) -> UInt64 in
            if let refusal = members.refusal { throw .loopRefusedSocket(refusal) }
            let token = members.nextToken
            members.nextToken += 1
            members.connections[token] = RemoteConnection.WeakConnection(connection)
            return token
        }
        if let error = System.addOneShot(fd, token: token, to: descriptor) {
            members.withLock { $0.connections[token] = nil }
            throw .systemCallFailed("epoll_ctl", errno: error.code)
        }
        return token
    }

    /// Arms `fd` for one report of readability, or writability too
    /// (``System/armOneShot(_:token:in:forWriting:)``); nil, or `epoll_ctl`'s error.
    func arm(_ fd: Int32, token: UInt64, forWriting: Bool) -> System.Errno? {
        System.armOneShot(fd, token: token, in: descriptor, forWriting: forWriting)
    }

    /// Takes `fd` out of the set, before it is closed.
    func remove(_ fd: Int32, token: UInt64) {
        System.remove(fd, from: descriptor)
        members.withLock { $0.connections[token] = nil }
    }

    /// The reader thread, when the set is readable: every connection reported reads its socket
    /// (``RemoteConnection/readForWaitingTasks()``). Returns whether any was reported.
    func serveReady() -> Bool {
        let count = System.takeReadyTokens(descriptor, into: ready)
        for index in 0..<count {
            let token = ready[index]
            members.withLock { $0.connections[token]?.connection }?.readForWaitingTasks()
        }
        return count > 0
    }

    /// The reader loop refused the set's fd after it was watched (``PortRunLoop``'s failure
    /// handler): nothing would read the replies, so every connection in the set ends
    /// (``RemoteConnection/socketRefused(_:)``, which logs it), and no connection is added any more.
    func refused(_ error: PortRunLoopError) {
        let connections = members.withLock { (members: inout Members) -> [RemoteConnection] in
            members.refusal = error
            return members.connections.values.compactMap(\.connection)
        }
        for connection in connections { connection.socketRefused(error) }
    }
}
