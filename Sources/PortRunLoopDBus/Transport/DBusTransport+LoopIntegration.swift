import CDBus
import Foundation
import PortRunLoopKit

/// libdbus's main-loop integration, mapped onto the transport's ``PortRunLoop``:
/// - a `DBusWatch` (the connection's socket, for reading or writing) is a ``FileDescriptorSource``
///   while it is enabled; readiness calls `dbus_watch_handle`, then dispatches what was read;
/// - a `DBusTimeout` (a pending call's deadline, say) is a repeating ``RunLoopTimer`` while it is
///   enabled; a fire calls `dbus_timeout_handle`;
/// - the dispatch-status function queues a dispatch on the loop when messages wait.
///
/// libdbus calls the add/remove/toggle functions on whatever thread changes the connection: the
/// opening thread while the functions are installed, the loop's thread afterwards. They only touch
/// `state` (locked) and the loop's any-thread API.
extension DBusTransport {
    func installLoopIntegration() {
        let me = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_add_filter(connection, dbusTransportFilter, me, nil)
        dbus_connection_set_dispatch_status_function(connection, { _, status, data in
            guard status == DBUS_DISPATCH_DATA_REMAINS, let data else { return }
            Unmanaged<DBusTransport>.fromOpaque(data).takeUnretainedValue().scheduleDrain()
        }, me, nil)
        dbus_connection_set_watch_functions(connection, { watch, data in
            guard let watch, let data else { return 0 }
            Unmanaged<DBusTransport>.fromOpaque(data).takeUnretainedValue().watchChanged(watch)
            return 1
        }, { watch, data in
            guard let watch, let data else { return }
            Unmanaged<DBusTransport>.fromOpaque(data).takeUnretainedValue().removed(watch: watch)
        }, { watch, data in
            guard let watch, let data else { return }
            Unmanaged<DBusTransport>.fromOpaque(data).takeUnretainedValue().watchChanged(watch)
        }, me, nil)
        dbus_connection_set_timeout_functions(connection, { timeout, data in
            guard let timeout, let data else { return 0 }
            Unmanaged<DBusTransport>.fromOpaque(data).takeUnretainedValue().timeoutChanged(timeout)
            return 1
        }, { timeout, data in
            guard let timeout, let data else { return }
            Unmanaged<DBusTransport>.fromOpaque(data).takeUnretainedValue().disarm(timeout: timeout)
        }, { timeout, data in
            guard let timeout, let data else { return }
            Unmanaged<DBusTransport>.fromOpaque(data).takeUnretainedValue().timeoutChanged(timeout)
        }, me, nil)
    }

    /// Clears every function (after `dbus_connection_close`), so libdbus keeps no pointer to us.
    func clearLoopIntegration() {
        let me = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_remove_filter(connection, dbusTransportFilter, me)
        dbus_connection_set_dispatch_status_function(connection, nil, nil, nil)
        dbus_connection_set_watch_functions(connection, nil, nil, nil, nil, nil)
        dbus_connection_set_timeout_functions(connection, nil, nil, nil, nil, nil)
        let (sources, timers) = state.withLock { state in
            defer { state.watches.removeAll(); state.timeouts.removeAll() }
            return (Array(state.watches.values), Array(state.timeouts.values))
        }
        sources.forEach { $0.cancel() }
        timers.forEach { $0.invalidate() }
    }

    // MARK: Watches

    /// A watch was added or toggled: an fd source while it is enabled, none while it is not.
    /// Inside a send batch on the loop's thread the change is applied after the batch.
    func watchChanged(_ watch: OpaquePointer) {
        if loop.isCurrentThread, loopState.deferringWatchChanges {
            if !loopState.changedWatches.contains(watch) { loopState.changedWatches.append(watch) }
            return
        }
        disarm(watch: watch)
        guard dbus_watch_get_enabled(watch) != 0 else { return }
        let fd = dbus_watch_get_unix_fd(watch)
        let flags = dbus_watch_get_flags(watch)
        var events: FileDescriptorSource.Events = []
        if flags & DBUS_WATCH_READABLE.rawValue != 0 { events.insert(.read) }
        if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events.insert(.write) }
        guard fd >= 0, !events.isEmpty else { return }
        let key = WatchKey(watch)
        do {
            let source = try loop.watch(fileDescriptor: fd, for: events, onFailure: { [self] error in
                socketUnwatchable(fd, error)
            }) { [self] ready in
                handleWatch(key, ready: ready)
            }
            state.withLock { $0.watches[UInt(bitPattern: watch)] = source }
        } catch {
            socketUnwatchable(fd, error)
        }
    }

    /// The loop refused to watch the connection's socket, when the watch was made or later (a
    /// registration queued from another thread, a re-arm). Unserviced, the connection would accept
    /// posts that never go out: it counts as lost (reported from the loop's next turn, not from
    /// inside libdbus' callback).
    private func socketUnwatchable(_ fd: Int32, _ error: PortRunLoopError) {
        logger.warning("D-Bus connection socket could not be watched", metadata: [BusLogKey.error: "\(error)", BusLogKey.fileDescriptor: "\(fd)"])
        guard !state.withLock({ $0.closed }) else { return }
        if !loop.perform({ [self] in connectionLost() }) { connectionLost() }
    }

    func disarm(watch: OpaquePointer) {
        state.withLock { $0.watches.removeValue(forKey: UInt(bitPattern: watch)) }?.cancel()
    }

    /// libdbus removed (and frees) `watch`: its source goes, and a deferred change to it is forgotten.
    func removed(watch: OpaquePointer) {
        if loop.isCurrentThread { loopState.changedWatches.removeAll { $0 == watch } }
        disarm(watch: watch)
    }

    /// Runs `body` (loop thread) with watch changes held back, then applies each changed watch's
    /// final state once: a watch enabled and disabled again within `body` (libdbus' write watch
    /// around a message it wrote at once) makes no loop source.
    func withWatchChangesDeferred(_ body: () -> Void) {
        let state = loopState
        guard !state.deferringWatchChanges else { return body() }
        state.deferringWatchChanges = true
        body()
        state.deferringWatchChanges = false
        while let watch = state.changedWatches.popLast() { watchChanged(watch) }
    }

    /// The socket is ready (loop thread): let libdbus read or write, then dispatch what it read.
    private func handleWatch(_ key: WatchKey, ready: FileDescriptorSource.Events) {
        // Still the same enabled watch (not removed or replaced since this readiness was queued).
        guard state.withLock({ $0.watches[UInt(bitPattern: key.pointer)] != nil && !$0.closed }) else { return }
        var flags: UInt32 = 0
        if ready.contains(.read) { flags |= DBUS_WATCH_READABLE.rawValue }
        if ready.contains(.write) { flags |= DBUS_WATCH_WRITABLE.rawValue }
        loopState.drainFollows = true
        dbus_watch_handle(key.pointer, flags)
        loopState.drainFollows = false
        sendWaitingIfWritten()
        drain()
    }

    // MARK: Timeouts

    func timeoutChanged(_ timeout: OpaquePointer) {
        disarm(timeout: timeout)
        guard dbus_timeout_get_enabled(timeout) != 0 else { return }
        let interval = Double(dbus_timeout_get_interval(timeout)) / 1000
        let key = WatchKey(timeout)
        let timer = RunLoopTimer(fireAt: Date(timeIntervalSinceNow: interval), interval: interval, repeats: true) { [self] _ in
            guard state.withLock({ $0.timeouts[UInt(bitPattern: key.pointer)] != nil && !$0.closed }) else { return }
            loopState.drainFollows = true
            dbus_timeout_handle(key.pointer)
            loopState.drainFollows = false
            drain()
        }
        state.withLock { $0.timeouts[UInt(bitPattern: timeout)] = timer }
        loop.add(timer, forMode: .common)
    }

    func disarm(timeout: OpaquePointer) {
        state.withLock { $0.timeouts.removeValue(forKey: UInt(bitPattern: timeout)) }?.invalidate()
    }

    // MARK: Dispatch

    /// Queues a ``drain()`` on the loop (once, however often libdbus reports data; none while the
    /// loop is reading the socket, which drains right after).
    func scheduleDrain() {
        let work: @Sendable () -> Void = { [self] in
            loopState.drainScheduled = false
            drain()
        }
        if loop.isCurrentThread {
            guard !loopState.drainScheduled, !loopState.drainFollows else { return }
            loopState.drainScheduled = true
        }
        loop.perform(work)
    }

    /// Dispatches the messages libdbus has read (loop thread), at most ``dispatchBudget`` before
    /// queuing the rest behind the loop's other work.
    func drain() {
        var budget = Self.dispatchBudget
        while budget > 0 {
            guard !state.withLock({ $0.closed }) else { return }
            guard dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS else { return }
            budget -= 1
        }
        scheduleDrain()
    }
}

/// A libdbus watch or timeout pointer carried into a loop closure (used on the loop's thread only,
/// after checking it is still registered).
///
/// Thread-safety: `@unchecked Sendable`: an address; dereferenced on the loop's thread only.
struct WatchKey: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}

/// The connection's message filter: every message libdbus dispatches passes here (loop thread).
private func dbusTransportFilter(_ connection: OpaquePointer?, _ message: OpaquePointer?,
                                 _ data: UnsafeMutableRawPointer?) -> DBusHandlerResult {
    guard let message, let data else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    Unmanaged<DBusTransport>.fromOpaque(data).takeUnretainedValue().received(message)
    return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
}
