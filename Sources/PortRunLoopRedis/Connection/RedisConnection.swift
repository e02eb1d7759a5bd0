import CHiredis
import Foundation
import Logging
import PortRunLoopKit

/// What a ``RedisConnection`` reports to the transport that owns it (loop thread).
protocol RedisConnectionOwner: AnyObject {
    /// The TCP connection is up (reported from a queued block, outside hiredis' calls).
    func connectionOpened(_ connection: RedisConnection)
    /// The context is gone (refused, timed out, lost, or closed by us): `reason` says why, and
    /// `wasOpen` whether it had been up. Reported once, from a queued block.
    func connectionEnded(_ connection: RedisConnection, reason: String, wasOpen: Bool)
    /// A reply or a pushed message, inside hiredis' read (copy what is needed: hiredis frees it on
    /// return). Nil when hiredis abandons a command because the context is being freed.
    func connection(_ connection: RedisConnection, received reply: UnsafeMutablePointer<redisReply>?)
    /// hiredis finished handling one readiness of the socket (replies delivered by then).
    func connectionFinishedReading(_ connection: RedisConnection)
    /// The connection had heard nothing for the health-check interval and sent its ``RedisConnection/healthCheck``.
    func connectionSentHealthCheck(_ connection: RedisConnection)
}

/// One hiredis async connection (`redisAsyncContext`) run by a ``PortRunLoop``, on its thread:
/// hiredis' event hooks are the loop's fd sources (RedisConnection+LoopAdapter.swift), the connect
/// and command timeouts are ``RunLoopTimer``s, and every hiredis call is made on the loop's thread.
///
/// Lifetime: while hiredis holds the context, the context holds a strong reference to this object
/// (taken in ``open()``, given back after the context's cleanup hook ran), so hiredis never calls
/// into a released object.
///
/// hiredis is never re-entered: the owner is told about opening and ending from queued blocks, and
/// a connection is freed (``drop(_:)``) only from a timer or a queued block, never from inside a
/// hiredis callback (hiredis 0.14 would defer it; we keep the rule simple instead).
///
/// **Replies read in batches** (``readsRepliesInBatches``, the publishing connection): the server
/// answers every `PUBLISH` with a few bytes (`:1\r\n`) that only count it as confirmed. Read as
/// they come, each reply would wake the loop on its own: a post's round trip (a post, then the
/// answer from another process) woke the loop twice, once for the reply and once for the answer.
/// So the socket's receive low-water mark (`SO_RCVLOWAT`) is set to ``replyBatchBytes``: epoll
/// reports the socket readable only once that many bytes wait, or at the end of the stream or an
/// error, which it reports whatever the mark. Replies below the mark are read without a wake of
/// their own: when the owner reads its other connection to the same server (``readWaitingReplies()``),
/// when the watchdog ticks (before it judges), and, while a flush waits for its `PING`, at once
/// (the mark is 1 then, ``setRepliesWanted(_:)``). At most ``replyBatchBytes`` of replies, a few
/// hundred commands, wait unread; the watchdog's period bounds how late one is counted.
///
/// Thread-safety: `@unchecked Sendable` only so that the loop's blocks, timers and fd sources can
/// capture it: every member is read and written on the loop's thread only (those blocks run there),
/// except when its transport is closed after the loop shut down: the closing thread, the only one
/// left, then frees the context (``drop(_:)``) and tells the owner.
final class RedisConnection: @unchecked Sendable {
    let loop: PortRunLoop
    let endpoint: RedisEndpoint
    /// Where it connects, with which credentials, and whether it checks the server's `ROLE`.
    let target: RedisConnectionTarget
    let label: String
    let logger: Logger
    /// The loop modes its sources, timers and queued blocks run in (the common modes and the
    /// transport's private waiting mode).
    let modes: [RunLoop.Mode]
    /// Replies are left below the socket's low-water mark until read on another occasion (see the
    /// type's notes).
    let readsRepliesInBatches: Bool
    weak var owner: (any RedisConnectionOwner)?

    /// The receive low-water mark of a connection whose replies are read in batches: ~250 `PUBLISH`
    /// replies.
    static let replyBatchBytes: Int32 = 1024

    /// The hiredis context while it exists (nil before ``open()`` and after its cleanup hook).
    private(set) var context: UnsafeMutablePointer<redisAsyncContext>?
    /// The context between its cleanup hook and hiredis' disconnect callback, which runs after
    /// the hook while the context still exists: what that callback reads the error from.
    /// Cleared by the callback, and by the queued report of the end (the context is gone then).
    private var dyingContext: UnsafeMutablePointer<redisAsyncContext>?
    /// True from the handshake's answer (after hiredis' connect callback) until the context is gone.
    var isOpen = false
    /// The handshake's command that was sent and not answered: the next reply is its own (nothing
    /// else is sent before the owner hears the connection is open). Nil outside the handshake.
    var handshakePending: HandshakeStep?
    /// Why the context ended (set by the first of: our drop, hiredis' connect or disconnect callback).
    var endReason: String?
    /// The error reply that ended the context, when the server's refusal of a command did: hiredis
    /// 0.14 closes a subscribed connection on an error reply (a (P)SUBSCRIBE's has no callback to
    /// go to), e.g. `NOPERM` for a channel an ACL user may not use.
    private(set) var refusedByServer: String?
    /// The reference the context holds on us (see the type's comment).
    private var retainedByContext: Unmanaged<RedisConnection>?

    var readSource: FileDescriptorSource?
    var writeSource: FileDescriptorSource?
    /// hiredis wants to write (its `addWrite` hook was called, `delWrite` not yet).
    var wantsWrite = false
    /// Inside ``batchingWrites(_:)``: `addWrite` makes no fd source (the batch writes at its end).
    var isBatchingWrites = false
    /// Inside a call into hiredis made by the loop adapter: hiredis is not called again.
    var isInsideHiredis = false
    private var connectTimer: RunLoopTimer?
    private var watchdog: RunLoopTimer?

    /// Commands sent whose reply has not come (the watchdog's subject).
    private(set) var awaitingReplies = 0

    /// The command that asks the server for an answer after ``RedisEndpoint/healthCheckInterval``
    /// of silence (its reply counted by ``noteReply()``, as any other), or nil for none.
    let healthCheck: [[UInt8]]?
    /// Replies and pushed messages hiredis handed out. The watchdog compares it between ticks to
    /// learn that the server spoke: the read and send paths keep no clock, the watchdog alone
    /// reads it, once per tick.
    var repliesHeard = 0
    /// ``repliesHeard`` at the watchdog's last tick, and when that tick (or the opening) saw it change.
    private var repliesHeardAtTick = 0
    private var lastHeard = ContinuousClock.now
    /// The tick that first saw replies awaited (nil when the last tick saw none): with
    /// ``lastHeard``, the start of the wait the command timeout measures.
    private var awaitedSince: ContinuousClock.Instant?
    /// The health check's reply is awaited. It is sent only when nothing else is, so the next reply
    /// is its own (replies come in the order of their commands).
    private var healthCheckAwaited = false

    /// Replies awaited for commands other than the health check.
    var awaitingCommandReplies: Int { awaitingReplies - (healthCheckAwaited ? 1 : 0) }

    /// A connection to `target` (the endpoint's host, port and credentials by default); the
    /// endpoint gives the timeouts.
    init(loop: PortRunLoop, endpoint: RedisEndpoint, target: RedisConnectionTarget? = nil, label: String, logger: Logger,
         modes: [RunLoop.Mode], readsRepliesInBatches: Bool = false, healthCheck: [[UInt8]]? = nil) {
        self.loop = loop
        self.endpoint = endpoint
        self.target = target ?? RedisConnectionTarget(host: endpoint.host, port: endpoint.port,
                                                      username: endpoint.username, password: endpoint.password)
        self.label = label
        self.logger = logger
        self.modes = modes
        self.readsRepliesInBatches = readsRepliesInBatches
        self.healthCheck = healthCheck
    }

    // MARK: Opening

    /// Starts connecting (non-blocking). Every outcome is reported to the owner, later.
    func open() {
        InternalFailure.check(context == nil && retainedByContext == nil, "RedisConnection.open: opened twice")
        guard let made = redisAsyncConnect(target.host, Int32(target.port)) else {
            later { $0.owner?.connectionEnded($0, reason: "hiredis could not allocate a context", wasOpen: false) }
            return
        }
        if made.pointee.err != 0 {
            // Refused at once (loopback with no listener, an unresolvable host): nothing attached.
            let reason = Self.errorString(made)
            redisAsyncFree(made)
            later { $0.owner?.connectionEnded($0, reason: reason, wasOpen: false) }
            return
        }
        context = made
        RedisReplyLimit.install(on: made.pointee.c.reader)
        let retained = Unmanaged.passRetained(self)
        retainedByContext = retained
        made.pointee.data = retained.toOpaque()
        attachLoopAdapter(to: made)
        redisAsyncSetDisconnectCallback(made, redisConnectionDisconnected)
        // hiredis asks for write readiness here (connect completion): the adapter must be attached.
        redisAsyncSetConnectCallback(made, redisConnectionConnected)
        let timer = RunLoopTimer(after: endpoint.connectTimeout.seconds) { [weak self] _ in
            guard let self, !self.isOpen, self.context != nil else { return }
            self.drop("no connection within \(self.endpoint.connectTimeout)")
        }
        connectTimer = timer
        schedule(timer)
    }

    /// hiredis' connect callback: up, or failed (hiredis frees the context right after).
    fileprivate func connected(status: Int32) {
        connectTimer?.invalidate()
        connectTimer = nil
        guard status == REDIS_OK, let context else {
            if endReason == nil, let context { endReason = Self.errorString(context) }
            return
        }
        setsockoptNoDelay(context.pointee.c.fd)
        lastHeard = .now
        startWatchdog()
        later { $0.sendHandshake() }
    }

    /// hiredis' disconnect callback (an open connection ended; the context is freed right after).
    fileprivate func disconnected(status: Int32) {
        defer { dyingContext = nil }
        guard let context = context ?? dyingContext else { return }
        // hiredis reports an error reply it had no callback for as REDIS_ERR_OTHER with the reply's text.
        if status != REDIS_OK, context.pointee.err == REDIS_ERR_OTHER { refusedByServer = Self.errorString(context) }
        if endReason == nil {
            endReason = status == REDIS_OK ? "closed" : Self.errorString(context)
        }
    }

    /// The context's cleanup hook ran (it is being freed): the loop's sources and timers go, the
    /// owner hears of it from a queued block, and the context's reference to us is given back.
    func contextFreed() {
        let wasOpen = isOpen
        dyingContext = context
        context = nil
        isOpen = false
        readSource?.cancel()
        readSource = nil
        writeSource?.cancel()
        writeSource = nil
        wantsWrite = false
        connectTimer?.invalidate()
        connectTimer = nil
        watchdog?.invalidate()
        watchdog = nil
        let retained = retainedByContext
        retainedByContext = nil
        // The reason is read when the end is reported: hiredis' disconnect callback, which
        // records the server's or the socket's error, runs after this hook.
        let queued = loop.perform(inModes: modes) { [self] in
            dyingContext = nil
            owner?.connectionEnded(self, reason: endReason ?? "connection lost", wasOpen: wasOpen)
            retained?.release()
        }
        if !queued {
            // A shut-down loop: the context was freed by a close on another thread, the only one
            // left to use the connection. The owner hears of it here (it counts what was left
            // unanswered); hiredis calls the disconnect callback after this returns.
            owner?.connectionEnded(self, reason: endReason ?? "connection lost", wasOpen: wasOpen)
            retained?.release()
        }
    }

    // MARK: Commands

    /// Sends one command (loop thread, context up or connecting); `expectsReply` counts it for the
    /// watchdog. Returns false when hiredis refused it (no context, or being freed).
    @discardableResult
    func send(_ arguments: [[UInt8]], expectsReply: Bool = true) -> Bool {
        guard let context else { return false }
        var pointers: [UnsafePointer<CChar>?] = []
        var lengths: [Int] = []
        pointers.reserveCapacity(arguments.count)
        lengths.reserveCapacity(arguments.count)
        let status: Int32 = withArgumentPointers(arguments, 0, &pointers, &lengths) { argv, argvlen in
            redisAsyncCommandArgv(context, redisConnectionReplied, retainedByContext?.toOpaque(),
                                  Int32(arguments.count), argv, argvlen)
        }
        guard status == REDIS_OK else { return false }
        if expectsReply { awaitingReplies += 1 }
        return true
    }

    /// A reply to a counted command arrived.
    func noteReply() {
        if awaitingReplies > 0 { awaitingReplies -= 1 }
        healthCheckAwaited = false
    }

    /// Reads the replies waiting below the low-water mark now (loop thread, outside hiredis), as a
    /// readiness of the socket would, but without telling the owner: the caller is itself in the
    /// middle of handling a read. Nothing happens when no reply is awaited.
    func readWaitingReplies() {
        guard readsRepliesInBatches, awaitingReplies > 0, !isInsideHiredis else { return }
        read()
    }

    /// While `wanted`, every reply wakes the loop as it comes (the low-water mark is 1): a caller
    /// waits for one. Back to batches when not.
    func setRepliesWanted(_ wanted: Bool) {
        guard readsRepliesInBatches, isOpen, let context else { return }
        setReceiveLowWater(context.pointee.c.fd, wanted ? 1 : Self.replyBatchBytes)
    }

    /// Sends one command already in RESP form (loop thread; counted for the watchdog). Returns
    /// false when hiredis refused it.
    func send(formatted command: PendingPublish) -> Bool {
        guard let context else { return false }
        let status = command.withCommand { bytes in
            redisAsyncFormattedCommand(context, redisConnectionReplied, retainedByContext?.toOpaque(),
                                       bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
        }
        guard status == REDIS_OK else { return false }
        awaitingReplies += 1
        return true
    }

    /// Runs `body`, which sends commands, then writes them at once (loop thread): hiredis asks for
    /// write readiness at each command; meanwhile no fd source is made for it, and after `body` the
    /// output is written right away (a socket with room takes it whole). Only what the socket
    /// would not take waits for write readiness, as usual. Inside hiredis' own calls (a command
    /// sent from a reply callback) hiredis is not re-entered: the write waits for readiness.
    func batchingWrites(_ body: () -> Void) {
        guard !isBatchingWrites, !isInsideHiredis, isOpen else {
            body()
            return
        }
        isBatchingWrites = true
        body()
        isBatchingWrites = false
        guard wantsWrite, let context else { return }
        isInsideHiredis = true
        redisAsyncHandleWrite(context)
        isInsideHiredis = false
        if wantsWrite, writeSource == nil, self.context != nil { setWatching(.write, true) }
    }

    /// Closes once every command sent has its reply (hiredis' `redisAsyncDisconnect`; from a timer
    /// or a queued block only). New commands are refused meanwhile.
    func closeAfterReplies() {
        guard let context else { return }
        if endReason == nil { endReason = "closed" }
        redisAsyncDisconnect(context)
    }

    /// Frees the context now (from a timer or a queued block only), with `reason` as the end reason.
    func drop(_ reason: String) {
        guard let context else { return }
        if endReason == nil { endReason = reason }
        redisAsyncFree(context)
    }

    // MARK: Support

    /// The watchdog, ticking four times per ``RedisEndpoint/commandTimeout`` (or per
    /// ``RedisEndpoint/healthCheckInterval``, when shorter):
    /// - the command timeout: a connection with replies awaited and no progress for
    ///   ``RedisEndpoint/commandTimeout`` is dropped (a server that stopped answering). Both ends
    ///   of that span are the ticks that saw them, so a silent server is found at most two ticks
    ///   late;
    /// - the health check: a connection with nothing awaited that has heard nothing from the
    ///   server for ``RedisEndpoint/healthCheckInterval`` sends ``healthCheck``, whose reply is
    ///   then awaited like any other. A silent dead link is found within the interval plus the
    ///   command timeout plus two ticks.
    private func startWatchdog() {
        let shortest = min(endpoint.commandTimeout, endpoint.healthCheckInterval ?? endpoint.commandTimeout)
        let period = max(shortest.seconds / 4, 0.01)
        let timer = RunLoopTimer(fireAt: Date(timeIntervalSinceNow: period), interval: period, repeats: true) { [weak self] _ in
            self?.watchdogTicked()
        }
        watchdog = timer
        schedule(timer)
    }

    private func watchdogTicked() {
        if awaitingReplies > 0, readsRepliesInBatches {
            // Replies below the low-water mark are progress too: read them before judging.
            readWaitingReplies()
            owner?.connectionFinishedReading(self)
            guard context != nil else { return }
        }
        let now = ContinuousClock.now
        if repliesHeard != repliesHeardAtTick {
            repliesHeardAtTick = repliesHeard
            lastHeard = now
        }
        if awaitingReplies > 0 {
            // No progress since the wait began (seen by a tick) or the server last spoke.
            let since = awaitedSince ?? now
            awaitedSince = since
            if now - max(since, lastHeard) > endpoint.commandTimeout {
                drop(healthCheckAwaited ? "no answer to a health check within \(endpoint.commandTimeout)"
                                        : "no reply within \(endpoint.commandTimeout)")
            }
            return
        }
        awaitedSince = nil
        guard let healthCheck, let interval = endpoint.healthCheckInterval, now - lastHeard >= interval,
              send(healthCheck) else { return }
        healthCheckAwaited = true
        awaitedSince = now
        owner?.connectionSentHealthCheck(self)
    }

    func schedule(_ timer: RunLoopTimer) {
        for mode in modes { loop.add(timer, forMode: mode) }
    }

    /// Runs `body` on a later turn of the loop, in the connection's modes.
    func later(_ body: @escaping (RedisConnection) -> Void) {
        let box = UncheckedBox((self, body))
        loop.perform(inModes: modes) { box.value.1(box.value.0) }
    }

    static func errorString(_ context: UnsafePointer<redisAsyncContext>) -> String {
        guard let text = context.pointee.errstr else { return "error \(context.pointee.err)" }
        return String(cString: text)
    }

    static func errorString(_ context: UnsafeMutablePointer<redisAsyncContext>) -> String {
        errorString(UnsafePointer(context))
    }
}

/// Calls `body` with C argument vectors pointing into `arguments`' bytes (recursively, so that
/// every buffer stays pinned for the call).
private func withArgumentPointers<R>(_ arguments: [[UInt8]], _ index: Int, _ pointers: inout [UnsafePointer<CChar>?],
                                     _ lengths: inout [Int],
                                     _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> R) -> R {
    if index == arguments.count {
        return pointers.withUnsafeMutableBufferPointer { argv in
            lengths.withUnsafeBufferPointer { argvlen in body(argv.baseAddress!, argvlen.baseAddress!) }
        }
    }
    return arguments[index].withUnsafeBufferPointer { bytes in
        let base = bytes.baseAddress.map(UnsafeRawPointer.init) ?? UnsafeRawPointer(emptyArgument.utf8Start)
        pointers.append(base.assumingMemoryBound(to: CChar.self))
        lengths.append(bytes.count)
        return withArgumentPointers(arguments, index + 1, &pointers, &lengths, body)
    }
}

/// What an empty argument points at (hiredis reads no byte of it).
private let emptyArgument: StaticString = ""

/// The socket's receive low-water mark (`setsockopt(SO_RCVLOWAT)`); on TCP, epoll reports the
/// socket readable only once that many bytes wait (or at the end of the stream, or an error).
/// A refusal only costs wake-ups, so it is not an error.
func setReceiveLowWater(_ fd: Int32, _ bytes: Int32) {
    var value = bytes
    _ = setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &value, socklen_t(MemoryLayout<Int32>.size))
}

/// Low latency for small notifications (PUBLISH is one small write).
private func setsockoptNoDelay(_ fd: Int32) {
    var on: Int32 = 1
    _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
}

/// A value carried into a loop block that runs on the same thread that made it.
///
/// Thread-safety: `@unchecked Sendable`: made and used on the loop's thread only.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

// MARK: hiredis callbacks (loop thread, inside hiredis calls)

private func connection(of context: UnsafePointer<redisAsyncContext>?) -> RedisConnection? {
    guard let data = context?.pointee.data else { return nil }
    return Unmanaged<RedisConnection>.fromOpaque(data).takeUnretainedValue()
}

private func redisConnectionConnected(_ context: UnsafePointer<redisAsyncContext>?, _ status: Int32) {
    connection(of: context)?.connected(status: status)
}

private func redisConnectionDisconnected(_ context: UnsafePointer<redisAsyncContext>?, _ status: Int32) {
    connection(of: context)?.disconnected(status: status)
}

private func redisConnectionReplied(_ context: UnsafeMutablePointer<redisAsyncContext>?, _ reply: UnsafeMutableRawPointer?,
                                    _ privdata: UnsafeMutableRawPointer?) {
    guard let privdata else { return }
    let connection = Unmanaged<RedisConnection>.fromOpaque(privdata).takeUnretainedValue()
    connection.repliesHeard &+= 1
    if connection.handshakePending != nil {
        connection.handshakeAnswered(reply?.assumingMemoryBound(to: redisReply.self))
        return
    }
    connection.owner?.connection(connection, received: reply?.assumingMemoryBound(to: redisReply.self))
}
