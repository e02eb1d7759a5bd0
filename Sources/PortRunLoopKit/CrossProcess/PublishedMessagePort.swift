import Foundation
import Logging
import Synchronization

/// A ``MessagePort`` published under a name for other processes on this host (the
/// `CFMessagePortCreateLocal(name)` / `NSMessagePortNameServer` registration), made by
/// ``MessagePortNameRegistry/publish(_:as:on:inModes:options:)``.
///
/// It owns the name's lock file and listening socket, and the connections of the processes that
/// looked the name up. The listener and the connections are fd sources of the loop passed to
/// `publish`; each frame received there is queued in the port like a local send, so the port's
/// guarantees (M1–M9) hold for messages from other processes too (see the CrossProcessPorts
/// article). Invalidating the port unpublishes it. Keep this object: the name stays published
/// until ``unpublish()``, the port's invalidation, or the loop's shutdown (not deinit).
///
/// Thread-safety: `Sendable`; every member is safe from any thread. The peer-disconnect handler
/// runs on the publishing loop's thread.
public final class PublishedMessagePort: @unchecked Sendable, CustomStringConvertible {
    /// The published port. Thread-safety: immutable.
    public let port: MessagePort
    /// The name it is published under. Thread-safety: immutable.
    public let name: String
    /// The path of its listening socket. Thread-safety: immutable.
    public let socketPath: String

    let loop: PortRunLoop
    let modes: [RunLoop.Mode]
    let options: CrossProcessPortOptions
    let parameters: PublisherParameters
    let logger: Logger

    /// Everything mutable, guarded by the mutex. Fds are closed on the loop's thread only (after
    /// their sources are cancelled there), so no loop callback sees a reused fd number.
    private struct State {
        var listenerFD: Int32
        var lockFD: Int32
        var listenerSource: FileDescriptorSource?
        var connections: [ObjectIdentifier: InboundConnection] = [:]
        var isPublished = true
        var disconnectHandler: (@Sendable (CrossProcessPeer, CrossProcessPeer.DisconnectReason) -> Void)?
        /// All counts but `messagesReceived`, which stays 0 here (see ``messagesReceived``).
        var statistics = Statistics(connectionsAccepted: 0, connectionsRefused: 0, peersDisconnected: 0,
                                    framesRejected: 0, connectionsFailed: 0, messagesReceived: 0, acceptFailures: 0)
    }
    private let state: TracedMutex<State>
    /// ``Statistics/messagesReceived``, counted apart from the rest: added to once per batch of
    /// frames read (per request in a request/reply exchange), an atomic add where the mutex would
    /// be a lock and an unlock.
    private let messagesReceived = Atomic<Int>(0)
    /// Where every connection reads its frames (they are all read on the loop's thread):
    /// ``receiveSlotCount`` slots of ``receiveSlotSize`` bytes, one frame per slot, filled by one
    /// `recvmmsg` (``System/receiveFrames(_:into:slotSize:count:lengths:control:controlSize:descriptorCounts:)``), and the frames'
    /// lengths. A slot holds one byte more than the largest frame (a frame that fills it was too
    /// large). Up to 16 slots, within 1 MiB: address space mostly, since small frames touch only the
    /// first page of their slot. Loop thread only.
    let receiveBuffer: UnsafeMutableRawPointer
    let receiveSlotSize: Int
    let receiveSlotCount: Int
    let receiveLengths: UnsafeMutablePointer<Int>
    /// Per slot, ``receiveControlSize`` bytes where the frame's descriptors land (room for the
    /// options' limit: a frame with more is cut short by the kernel, `MSG_CTRUNC`, a violation),
    /// and the count of descriptors each frame brought. Loop thread only.
    let receiveControl: UnsafeMutableRawPointer
    let receiveControlSize: Int
    let receiveDescriptorCounts: UnsafeMutablePointer<Int32>

    init(port: MessagePort, name: String, socketPath: String, listenerFD: Int32, lockFD: Int32,
         loop: PortRunLoop, modes: [RunLoop.Mode], options: CrossProcessPortOptions, parameters: PublisherParameters,
         logger: Logger) {
        self.port = port
        self.name = name
        self.socketPath = socketPath
        self.loop = loop
        self.modes = modes
        self.options = options
        self.parameters = parameters
        self.logger = logger
        self.state = TracedMutex(State(listenerFD: listenerFD, lockFD: lockFD))
        // One byte more than the largest frame: a frame that fills it was too large (MSG_TRUNC).
        receiveSlotSize = (options.maximumMessageSize + 1 + 7) & ~7
        receiveSlotCount = max(1, min(16, (1 << 20) / receiveSlotSize))
        receiveBuffer = .allocate(byteCount: receiveSlotSize * receiveSlotCount, alignment: 8)
        receiveLengths = .allocate(capacity: receiveSlotCount)
        receiveControlSize = System.descriptorControlSize(options.maximumFileDescriptorsPerMessage)
        receiveControl = .allocate(byteCount: receiveControlSize * receiveSlotCount, alignment: 8)
        receiveDescriptorCounts = .allocate(capacity: receiveSlotCount)
    }

    deinit {
        // Only reached without unpublication when the loop dropped the listener (it shut down).
        let (listenerFD, lockFD) = state.withLock { ($0.listenerFD, $0.lockFD) }
        if listenerFD >= 0 {
            _ = System.unlink(socketPath)
            System.closeDescriptor(listenerFD)
        }
        if lockFD >= 0 { System.closeDescriptor(lockFD) }
        receiveBuffer.deallocate()
        receiveControl.deallocate()
        receiveDescriptorCounts.deallocate()
        receiveLengths.deallocate()
    }

    /// Counts since publication.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public struct Statistics: Sendable, Equatable {
        /// Connections accepted. Thread-safety: a value type.
        public var connectionsAccepted: Int
        /// Connections refused: the peer's uid is not allowed, or could not be read (`SO_PEERCRED`).
        /// Thread-safety: a value type.
        public var connectionsRefused: Int
        /// Connections that ended (closed by the peer, a protocol violation, a failure, or
        /// unpublication). Thread-safety: a value type.
        public var peersDisconnected: Int
        /// Frames refused (malformed, oversized, beyond the sender's credits, or of a kind a client
        /// may not send); each also ended its connection. Thread-safety: a value type.
        public var framesRejected: Int
        /// Connections closed because a system call on their socket failed on this side
        /// (``CrossProcessPeer/DisconnectReason/connectionFailed(_:)``). Thread-safety: a value type.
        public var connectionsFailed: Int
        /// Messages received and queued in the port. Thread-safety: a value type.
        public var messagesReceived: Int
        /// Times `accept` failed for want of a resource (descriptors, memory). Each pauses
        /// accepting for ``PublishedMessagePort/acceptPause`` (the waiting peers stay queued in the
        /// listener's backlog); the first failure is logged, then one in 64. Thread-safety: a value type.
        public var acceptFailures: Int
    }

    /// How long accepting pauses after `accept` failed for want of a resource: the listener stays
    /// readable while peers wait, so watching it on would spin the loop, logging each turn.
    ///
    /// Thread-safety: a constant.
    public static let acceptPause: Duration = .milliseconds(100)

    /// A snapshot of the counts.
    ///
    /// Thread-safety: any thread.
    public var statistics: Statistics {
        var statistics = state.withLock { $0.statistics }
        statistics.messagesReceived = messagesReceived.load(ordering: .relaxed)
        return statistics
    }

    /// Whether the name is still published.
    ///
    /// Thread-safety: any thread.
    public var isPublished: Bool { state.withLock { $0.isPublished } }

    /// How many peers are connected now.
    ///
    /// Thread-safety: any thread.
    public var connectedPeers: [CrossProcessPeer] { state.withLock { $0.connections.values.map(\.peer) } }

    /// Sets a closure called on the publishing loop's thread each time a peer's connection ends,
    /// with the peer and why (the counterpart of a `CFMessagePort` invalidation callback, per
    /// peer). nil removes it. It runs as queued work of the loop (in any mode), after whatever
    /// found the end; it may run the loop.
    ///
    /// Thread-safety: any thread; the closure runs on the loop's thread.
    public func setPeerDisconnectHandler(_ handler: (@Sendable (CrossProcessPeer, CrossProcessPeer.DisconnectReason) -> Void)?) {
        let old = state.withLock { state in
            defer { state.disconnectHandler = handler }
            return state.disconnectHandler
        }
        withExtendedLifetime(old) {}
    }

    /// Withdraws the name: removes the socket, releases the lock and closes every connection
    /// (their peers' sends fail from then on). The port itself stays valid for local use; messages
    /// already queued in it are still delivered. Idempotent. Invalidating the port does this.
    ///
    /// Thread-safety: any thread. The fds are closed on the loop's thread (at once when called
    /// there, else before its next turn; at once if the loop is shut down).
    public func unpublish() {
        let wasPublished = state.withLock { state -> Bool in
            defer { state.isPublished = false }
            return state.isPublished
        }
        guard wasPublished else { return }
        // The name goes away now, from any thread: a new publisher may take it at once. Unlinking
        // before releasing the lock means a lookup never finds our socket with the lock free.
        _ = System.unlink(socketPath)
        if !loop.onOwner({ [self] _ in closeEverything() }) { closeEverything() }
    }

    /// Owner thread (or any thread once the loop is shut down): cancels the sources, closes the
    /// fds, releases the lock, ends every connection.
    private func closeEverything() {
        let (listenerSource, listenerFD, lockFD, connections) = state.withLock { state in
            defer { state.listenerSource = nil; state.listenerFD = -1; state.lockFD = -1; state.connections = [:] }
            return (state.listenerSource, state.listenerFD, state.lockFD, Array(state.connections.values))
        }
        listenerSource?.cancel()
        if listenerFD >= 0 { System.closeDescriptor(listenerFD) }
        for connection in connections { connection.close(reason: .unpublished) }
        // The lock file stays: unlinking it would let two later publishers lock two different
        // files of the same name (one opened before the unlink, one after). Closing releases it.
        if lockFD >= 0 { System.closeDescriptor(lockFD) }
        logger.debug("MessagePort unpublished", metadata: [LogKey.portName: "\(name)", LogKey.port: "\(port)"])
    }

    /// Owner thread: starts watching the listener (by `publish`, and again after an accept pause).
    func startListening() throws(PortRunLoopError) {
        let fd = state.withLock { $0.listenerFD }
        // The source holds the publication (strongly) until it is cancelled at unpublication: a
        // published name stays published whether or not its caller keeps this object.
        let source = try loop.watch(fileDescriptor: fd, for: .read, inModes: modes, spinRead: nil, onFailure: { [self] error in
            listenerRefused(error)
        }, onShutDown: { [self] in loopShutDown() }) { [self] _ in
            acceptConnections()
        }
        let keep = state.withLock { state -> Bool in
            guard state.isPublished else { return false }
            state.listenerSource = source
            return true
        }
        if !keep { source.cancel() }
    }

    /// Owner thread: the publishing loop shuts down (told by the listener's source, or by an
    /// accept pause's timer). The port may be scheduled in another loop, or in none: its
    /// invalidation, which withdraws the name too, is not what ends the publication here.
    private func loopShutDown() {
        logger.debug("MessagePort publishing loop shut down; the name is withdrawn", metadata: [LogKey.portName: "\(name)"])
        unpublish()
    }

    /// Owner thread: the loop could not watch the listener after `publish` returned (a registration
    /// queued from another thread, a re-arm, or the watch after an accept pause, refused). A name
    /// nobody accepts on would take connections into its backlog for ever: it is withdrawn, and
    /// clients find it unpublished.
    private func listenerRefused(_ error: PortRunLoopError) {
        logger.error("MessagePort could not watch its listener; the name is withdrawn", metadata: [
            LogKey.portName: "\(name)", LogKey.error: "\(error)"])
        unpublish()
    }

    /// Owner thread: `accept` failed (EMFILE, ENFILE, ENOMEM and the like). The listener stays
    /// readable while peers wait, so it is not watched for ``acceptPause``; a timer in the
    /// listener's modes watches it again. Counted; logged on the first failure, then one in 64.
    private func pauseAccepting(after error: any Error) {
        let (source, failures) = state.withLock { state -> (FileDescriptorSource?, Int) in
            state.statistics.acceptFailures += 1
            defer { state.listenerSource = nil }
            return (state.listenerSource, state.statistics.acceptFailures)
        }
        source?.cancel()
        if failures == 1 || failures % 64 == 0 {
            logger.warning("MessagePort could not accept a connection; accepting pauses", metadata: [
                LogKey.portName: "\(name)", LogKey.error: "\(error)", LogKey.failures: "\(failures)"])
        }
        let timer = RunLoopTimer(after: Self.acceptPause.seconds) { [self] _ in resumeAccepting() }
        // The listener has no source while paused: the loop's shutdown ends the publication
        // through the timer, as it does through the listener's source otherwise.
        timer.shutDownHandler = { [self] in loopShutDown() }
        for mode in modes { loop.add(timer, forMode: mode) }
    }

    /// Owner thread, after ``acceptPause``: watches the listener again, unless the name was
    /// withdrawn meanwhile; a listener the loop cannot watch any more withdraws the name.
    private func resumeAccepting() {
        guard state.withLock({ $0.isPublished && $0.listenerSource == nil && $0.listenerFD >= 0 }) else { return }
        do throws(PortRunLoopError) {
            try startListening()
        } catch {
            listenerRefused(error)
        }
    }

    /// Owner thread: accepts every waiting connection, refusing peers whose uid is not allowed.
    private func acceptConnections() {
        while true {
            let fd = state.withLock { $0.listenerFD }
            guard fd >= 0 else { return }
            let accepted: Int32
            switch System.accept(fd) {
            case .success(.some(let connection)): accepted = connection
            case .success(.none): return
            case .failure(let error):
                pauseAccepting(after: error)
                return
            }
            guard let credentials = System.peerCredentials(accepted) else {
                let code = System.lastError
                state.withLock { $0.statistics.connectionsRefused += 1 }
                System.closeDescriptor(accepted)
                logger.warning("MessagePort refused a connection whose peer could not be identified (SO_PEERCRED)", metadata: [
                    LogKey.portName: "\(name)", LogKey.error: "errno \(code)"])
                continue
            }
            let peer = CrossProcessPeer(processID: credentials.pid, userID: credentials.uid, groupID: credentials.gid)
            guard options.allows(peer.userID) else {
                state.withLock { $0.statistics.connectionsRefused += 1 } // counted before the peer sees the end
                System.closeDescriptor(accepted)
                logger.warning("MessagePort refused a connection from a user id that is not allowed", metadata: [
                    LogKey.portName: "\(name)", LogKey.peer: "\(peer)"])
                continue
            }
            let connection = InboundConnection(fd: accepted, peer: peer, publication: self)
            let added = state.withLock { state -> Bool in
                guard state.isPublished else { return false }
                state.connections[ObjectIdentifier(connection)] = connection
                state.statistics.connectionsAccepted += 1
                return true
            }
            guard added else { System.closeDescriptor(accepted); return }
            do throws(PortRunLoopError) {
                try connection.start()
            } catch {
                connection.socketRefused(error)
            }
        }
    }

    // MARK: Called by connections (owner thread)

    func countMessagesReceived(_ count: Int) { messagesReceived.wrappingAdd(count, ordering: .relaxed) }

    /// A connection ended: forget it, count it, tell the handler (through the loop's
    /// ``PortRunLoop/onOwner(_:)``: at once, or in the next turn when a spin's read found the end).
    func connectionEnded(_ connection: InboundConnection, reason: CrossProcessPeer.DisconnectReason) {
        let handler = state.withLock { state in
            state.connections.removeValue(forKey: ObjectIdentifier(connection))
            state.statistics.peersDisconnected += 1
            switch reason {
            case .protocolViolation: state.statistics.framesRejected += 1
            case .connectionFailed: state.statistics.connectionsFailed += 1
            case .closed, .unpublished: break
            }
            return state.disconnectHandler
        }
        let level: Logger.Level = switch reason {
        case .protocolViolation, .connectionFailed: .warning
        case .closed, .unpublished: .debug
        }
        logger.log(level: level, "MessagePort peer disconnected", metadata: [
            LogKey.portName: "\(name)", LogKey.peer: "\(connection.peer)", LogKey.reason: "\(reason)"])
        guard let handler else { return }
        let peer = connection.peer
        // Queued even on the loop's thread: the end is often found by a read of the connection,
        // which is still using the publication's receive buffers, and the handler may run the
        // loop, whose reads of other connections would overwrite them.
        if !loop.enqueue(QueuedWork(modes: .all, kind: .block { handler(peer, reason) })) {
            handler(peer, reason) // shut down: at once
        }
    }

    /// Thread-safety: immutable fields only.
    public var description: String { "PublishedMessagePort('\(name)', \(port))" }
}
