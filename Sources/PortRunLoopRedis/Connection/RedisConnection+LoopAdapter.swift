import CHiredis
import PortRunLoopBus
import PortRunLoopKit

/// hiredis' event-library hooks, mapped onto the connection's ``PortRunLoop`` (our own adapter, not
/// hiredis' libevent one: the loop's `event_base` is private to the loop, and its registrations are
/// managed per run-loop mode, which only the loop's own fd sources honour):
/// - `addRead`/`delRead`: an fd source for reading exists while hiredis wants to read; readiness
///   calls `redisAsyncHandleRead`;
/// - `addWrite`/`delWrite`: the same for writing (`redisAsyncHandleWrite`; also how hiredis learns
///   that a non-blocking connect completed);
/// - `cleanup`: the context is being freed: sources and timers go (``RedisConnection/contextFreed()``).
///
/// hiredis calls the hooks on the thread that calls into it: the loop's, always.
extension RedisConnection {
    func attachLoopAdapter(to context: UnsafeMutablePointer<redisAsyncContext>) {
        context.pointee.ev.data = context.pointee.data
        context.pointee.ev.addRead = { data in adapterConnection(data)?.setWatching(.read, true) }
        context.pointee.ev.delRead = { data in adapterConnection(data)?.setWatching(.read, false) }
        context.pointee.ev.addWrite = { data in adapterConnection(data)?.setWatching(.write, true) }
        context.pointee.ev.delWrite = { data in adapterConnection(data)?.setWatching(.write, false) }
        context.pointee.ev.cleanup = { data in adapterConnection(data)?.contextFreed() }
    }

    /// Starts or stops watching the socket for `event` (idempotent, as hiredis requires). While a
    /// batch of commands is being sent, wanting to write makes no source (``batchingWrites(_:)``).
    func setWatching(_ event: FileDescriptorSource.Events, _ on: Bool) {
        if event == .write {
            wantsWrite = on
            if on, isBatchingWrites { return }
        }
        let existing = event == .read ? readSource : writeSource
        if !on {
            existing?.cancel()
            if event == .read { readSource = nil } else { writeSource = nil }
            return
        }
        guard existing == nil, let context else { return }
        let fd = context.pointee.c.fd
        do {
            let source = try loop.watch(fileDescriptor: fd, for: event, inModes: modes, onFailure: { [weak self] error in
                self?.socketUnwatchable(fd, error)
            }) { [weak self] _ in
                self?.socketReady(event)
            }
            if event == .read { readSource = source } else { writeSource = source }
        } catch {
            socketUnwatchable(fd, error)
        }
    }

    /// The loop refused to watch the socket, when the watch was made or later (a re-arm): the
    /// connection is dropped, from the loop's next turn (not from inside hiredis' callback), with
    /// the reason, rather than left unserviced.
    private func socketUnwatchable(_ fd: Int32, _ error: PortRunLoopError) {
        logger.warning("Redis connection socket could not be watched", metadata: [
            RedisLogKey.connection: "\(label)", BusLogKey.fileDescriptor: "\(fd)", BusLogKey.error: "\(error)",
        ])
        if endReason == nil { endReason = "its socket could not be watched: \(error)" }
        _ = loop.perform(inModes: modes) { [weak self] in self?.drop("its socket could not be watched") }
    }

    /// The socket is ready (loop thread, outside hiredis): let hiredis read or write.
    private func socketReady(_ event: FileDescriptorSource.Events) {
        guard let context else { return }
        if event == .read {
            read()
            owner?.connectionFinishedReading(self)
        } else {
            isInsideHiredis = true
            redisAsyncHandleWrite(context)
            isInsideHiredis = false
        }
    }

    /// Lets hiredis read what the socket holds and hand out its replies (loop thread, outside
    /// hiredis; the owner is not told here).
    func read() {
        guard let context else { return }
        isInsideHiredis = true
        redisAsyncHandleRead(context)
        isInsideHiredis = false
    }
}

private func adapterConnection(_ data: UnsafeMutableRawPointer?) -> RedisConnection? {
    guard let data else { return nil }
    return Unmanaged<RedisConnection>.fromOpaque(data).takeUnretainedValue()
}
