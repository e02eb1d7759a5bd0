import Foundation

extension StreamListener {
    /// The first pause after `accept` ran out of descriptors; each pause of the same shortage
    /// doubles, up to ``longestRetryDelay``.
    static let firstRetryDelay: TimeInterval = 0.01
    static let longestRetryDelay: TimeInterval = 1
    /// Accepts per readiness: a burst of connections does not keep the loop from its other sources.
    static let acceptsPerReadiness = 64

    /// The listening socket is readable: accepts what is waiting, hands each connection to its
    /// serving loop; on exhaustion, pauses (see ``StreamListener``).
    func acceptReady() {
        for _ in 0..<Self.acceptsPerReadiness {
            guard !isClosed else { return }
            switch System.acceptStream(fileDescriptor) {
            case .connection(let fd):
                acceptState.withLock { $0.retryDelay = Self.firstRetryDelay }
                handOn(fd)
            case .none:
                return
            case .exhausted(let error):
                pauseAccepting(error)
                return
            case .failed(let error):
                loop.currentLogger.warning("PortRunLoop stream listener: accept failed", metadata: [
                    LogKey.loop: "\(loop.name)", LogKey.error: "\(error)",
                ])
                return
            }
        }
    }

    /// Makes the connection on the loop that serves it (the next in turn), and calls
    /// `onConnection` there, once its transport's opening (if any) completed.
    private func handOn(_ fd: Int32) {
        let target: PortRunLoop
        if servingLoops.isEmpty {
            target = loop
        } else {
            target = acceptState.withLock { state in
                defer { state.nextLoop = (state.nextLoop + 1) % servingLoops.count }
                return servingLoops[state.nextLoop]
            }
        }
        let queued = target.onOwner { [self] serving in self.serve(fd, on: serving) }
        if !queued {
            System.closeDescriptor(fd)
            dropped.add(1, ordering: .relaxed)
        }
    }

    private func serve(_ fd: Int32, on serving: PortRunLoop) {
        let made: (any StreamTransport)?
        do throws(StreamConnectionError) {
            made = try transport?(fd, nil)
        } catch {
            System.closeDescriptor(fd)
            dropped.add(1, ordering: .relaxed)
            return
        }
        let connection: StreamConnection
        do throws(StreamConnectionError) {
            connection = try StreamConnection(fileDescriptor: fd, loop: serving, options: options.connection,
                                              modes: modes, transport: made)
        } catch {
            made?.close()
            System.closeDescriptor(fd)
            dropped.add(1, ordering: .relaxed)
            return
        }
        guard connection.phase == .starting else {
            accepted.add(1, ordering: .relaxed)
            onConnection(connection)
            return
        }
        connection.whenStarted = { [self] result in
            switch result {
            case .success(let connection):
                self.accepted.add(1, ordering: .relaxed)
                self.onConnection(connection)
            case .failure(let error):
                self.dropped.add(1, ordering: .relaxed)
                serving.currentLogger.debug("PortRunLoop stream listener: a connection's opening failed", metadata: [
                    LogKey.loop: "\(serving.name)", LogKey.error: "\(error)",
                ])
            }
        }
        connection.armStartTimeout()
        connection.advanceStart()
    }

    /// Stops watching the socket and looks again after the current delay (doubled for next time).
    private func pauseAccepting(_ error: System.Errno) {
        let pauses = exhaustionPauses.add(1, ordering: .relaxed).newValue
        let (source, delay, firstOfShortage) = acceptState.withLock { state in
            let delay = state.retryDelay
            state.retryDelay = min(delay * 2, Self.longestRetryDelay)
            return (state.source, delay, delay == Self.firstRetryDelay)
        }
        guard let source else { return }
        loop.setInterest(of: source, to: [])
        if firstOfShortage {
            loop.currentLogger.warning("PortRunLoop stream listener: out of descriptors, accepting paused", metadata: [
                LogKey.loop: "\(loop.name)", LogKey.error: "\(error)", "pauses": "\(pauses)",
            ])
        }
        let timer = RunLoopTimer(after: delay) { [self] _ in self.resumeAccepting() }
        acceptState.withLock { $0.retryTimer = timer }
        for mode in modes { loop.add(timer, forMode: mode) }
    }

    private func resumeAccepting() {
        let source = acceptState.withLock { state in
            state.retryTimer = nil
            return state.source
        }
        guard let source, !isClosed else { return }
        loop.setInterest(of: source, to: .read)
    }
}
