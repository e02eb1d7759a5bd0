import Logging

extension RemoteConnection {
    /// A loop's thread: the loop cancelled a source reading the socket on its own (a registration
    /// or re-arm it could not make): the `readingOn:` loop's source, or the reader a request
    /// waiting on a loop reads its reply with. Nothing would read what the publisher sends back
    /// there, and a request would wait out its timeout for a reply already come: the connection
    /// ends, and the port becomes invalid with the reason. (A reader refused while it is made, on
    /// the request's own thread, is no reader: that request polls the socket instead.)
    func socketRefused(_ error: PortRunLoopError) {
        logger.warning("MessagePort connection to another process ended: its loop could not watch the socket", metadata: [
            LogKey.portName: "\(name)", LogKey.error: "\(error)"])
        locked {
            markEnded(.loopRefusedSocket(error), reason: .connectionFailed("the loop could not watch its socket: \(error)"))
        }
    }

    /// With the lock held: a read of the socket failed with `code`. Logged and ended out of line
    /// (as ``protocolViolation(_:)`` is): the logger's inlined code reads its storage's handler,
    /// a class's `var`, with a run-time exclusivity check, which the compiler may otherwise make
    /// at the top of ``drainFrames(stoppingAt:)``, on every read.
    @inline(never)
    func connectionFailed(_ code: Int32) {
        logger.warning("MessagePort connection to another process failed", metadata: [
            LogKey.portName: "\(name)", LogKey.error: "\(System.Errno(code))"])
        markEnded(.systemCallFailed("recv", errno: code), reason: .connectionFailed("recv: \(System.Errno(code))"))
    }

    @inline(never)
    func protocolViolation(_ why: String) {
        logger.warning("MessagePort closed a connection to another process: protocol violation", metadata: [
            LogKey.portName: "\(name)", LogKey.reason: "\(why)"])
        markEnded(.peerDied, reason: .protocolViolation(why))
    }

    /// With the lock held: the connection ended (`why` is what waiting calls throw, `reason` what
    /// the port's invalidation handler is told). The socket is shut down (a thread polling it
    /// wakes; the peer sees end of file) and closed as soon as no thread polls it; waiting
    /// requests complete (they find `ended`).
    func markEnded(_ why: CrossProcessPortError, reason: MessagePort.InvalidationReason) {
        guard ended == nil else { return }
        ended = why
        if endObserver != nil { endToReport = reason }
        if fd >= 0 { System.shutdown(fd) }
        closeIfEnded()
        requests.forEach(finish)
        resumeRoomWaits(forRoomToo: true)
        readersMayLookAgain()
    }

    /// With the lock held: once ended and nobody polls the fd, stops the loop's read source (first,
    /// as FileDescriptorSource asks) and closes the fd. Cancelling takes no lock of ours.
    func closeIfEnded() {
        guard ended != nil, polling == 0, fd >= 0 else { return }
        readSource?.cancel()
        readSource = nil
        if let asyncWatch { asyncWatch.set.remove(fd, token: asyncWatch.token) }
        asyncWatch = nil
        keptReader?.stop()
        keptReader = nil
        System.closeDescriptor(fd)
        fd = -1
    }
}
