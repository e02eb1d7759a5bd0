extension RemoteConnection {
    /// Watches the socket on `loop` so frames are read as they arrive (and the end is seen at
    /// once). Does nothing when a loop already reads it or the connection is closed.
    ///
    /// While the source is being made the fd counts as polled, so it is not closed under it. A
    /// refusal lets the next caller try again.
    func startReading(on loop: PortRunLoop) throws(PortRunLoopError) {
        let fd = locked { () -> Int32 in
            guard self.fd >= 0, readLoop == nil else { return -1 } // claimed: a second caller does nothing
            readLoop = loop
            polling += 1
            return self.fd
        }
        guard fd >= 0 else { return }
        var made: Result<FileDescriptorSource, PortRunLoopError>
        do {
            let reference = WeakConnection(self)
            made = .success(try loop.watch(fileDescriptor: fd, inModes: [.common], onFailure: { [reference] in
                reference.connection?.socketRefused($0)
            }, reading: { [reference] in
                reference.connection?.readOnLoop(stoppingAt: nil) ?? false
            }))
        } catch {
            made = .failure(error)
        }
        locked {
            polling -= 1
            switch made {
            case .success(let source): readSource = source
            case .failure: readLoop = nil
            }
            closeIfEnded() // cancels the source first if the connection ended meanwhile
        }
        if case .failure(let error) = made { throw error }
    }

    /// A loop's reader of replies: a fd source of the connection in the loop's private
    /// `.synchronousWait` mode, and the request it now serves (its read ends at that request's
    /// reply; nil between requests: it reads everything waiting).
    ///
    /// The reader knows its loop by identity only, not by a weak reference: a weak reference gives
    /// the loop a side table, after which every retain and release of the loop (several per turn)
    /// takes the runtime's slow path. The source stands for the loop's life instead: it holds the
    /// loop until it is cancelled, and the loop cancels it when it shuts down.
    ///
    /// Thread-safety: `@unchecked Sendable`; `wait`, `source` and `isKept` are written with the
    /// connection's mutex held, on the reader's own loop thread, which is also where its source's
    /// handler reads `wait` (before it takes the mutex): that read is confined to the thread of
    /// every write. The mutex and the one thread make every access exclusive (so they are
    /// `@exclusivity(unchecked)`, as the connection's own are); `loopID` and `connection` are
    /// immutable.
    final class ReplyReader: @unchecked Sendable {
        let loopID: ObjectIdentifier
        /// The connection, held weakly (a kept reader outlives requests).
        let connection: WeakConnection
        @exclusivity(unchecked) var source: FileDescriptorSource?
        @exclusivity(unchecked) var wait: ReplyWait?
        /// The connection's ``keptReader``: armed between requests, not counted in `polling`.
        @exclusivity(unchecked) var isKept = false

        init(loop: PortRunLoop, wait: ReplyWait, connection: RemoteConnection) {
            loopID = ObjectIdentifier(loop)
            self.wait = wait
            self.connection = WeakConnection(connection)
        }

        /// True while the reader's source is armed on `loop` (its loop has not shut down).
        func serves(_ loop: PortRunLoop) -> Bool { loopID == ObjectIdentifier(loop) && isLive }

        /// False once the source was cancelled (by ``stop()``, or by its loop shutting down).
        var isLive: Bool { !(source?.isCancelled ?? true) }

        /// With the connection's mutex held: cancels the source and lets it go (its handler
        /// holds this reader: the cycle ends here).
        func stop() {
            source?.cancel()
            source = nil
        }
    }

    /// Finds or makes the reader through which a request waiting on `loop` reads its reply: its
    /// handler reads the frames (completing the request's wait), so the reply is read while the
    /// loop serves synchronous work addressed to it (another thread's `performAndWait`, a
    /// `postAndWait` delivery, perhaps made by the very handler that is to answer). Nil when the
    /// connection is closed or the loop refused the fd: the caller then polls the socket.
    ///
    /// One reader is kept between requests (``keptReader``), for the loop that made it: a
    /// request/reply exchange from a loop's thread then costs no `epoll_ctl` and no registration
    /// (the kept source stays armed in `.synchronousWait`, a mode only blocking waits run). A
    /// reader made while the kept one is busy (a request nested in the wait of another on the same
    /// thread) or belongs to another loop is temporary: it counts as a poller, so the fd is not
    /// closed under it, and is cancelled when its request ends (``finishServing(_:)``). The kept
    /// one is cancelled before the fd is closed (``closeIfEnded()``), like the `readingOn:` source.
    func serveReplies(on loop: PortRunLoop, for wait: ReplyWait) -> ReplyReader? {
        let (kept, fd) = locked { () -> (ReplyReader?, Int32) in
            guard self.fd >= 0 else { return (nil, -1) }
            if let kept = keptReader, kept.wait == nil, kept.serves(loop) {
                kept.wait = wait
                return (kept, -1)
            }
            polling += 1
            return (nil, self.fd)
        }
        if let kept { return kept }
        guard fd >= 0 else { return nil }
        let reader = ReplyReader(loop: loop, wait: wait, connection: self)
        // The reader holds the source and the source's handler the reader: a cycle that
        // cancelling the source breaks. The connection is held weakly, by the reader.
        if let source = try? loop.watch(fileDescriptor: fd, inModes: [.synchronousWait], onFailure: { [reader] in
            reader.connection.connection?.socketRefused($0)
        }, reading: { [reader] in
            reader.connection.connection?.readOnLoop(stoppingAt: reader.wait) ?? false
        }) {
            locked { reader.source = source }
            return reader
        }
        locked { polling -= 1; closeIfEnded() }
        return nil
    }

    /// A loop's read of the socket (the handler of a loop's read source, or its spin read,
    /// ``FileDescriptorSource/spinRead``): the frames waiting, up to `wait`'s reply when given (the
    /// request a ``ReplyReader`` serves). Wakes a thread polling the socket meanwhile, which then
    /// finds what it waits for read, and tells the reading loop how soon the exchange turns
    /// around (``PortRunLoop/noteAnswer(after:)``). Returns whether it read anything.
    func readOnLoop(stoppingAt wait: ReplyWait?) -> Bool {
        let (read, answerGap) = locked { () -> (Bool, Double) in
            lastAnswerGap = .infinity // only what this read finds
            let read = drainFrames(stoppingAt: wait)
            if isReading { System.signalEventfd(wakeFD) }
            readersMayLookAgain()
            return (read, lastAnswerGap)
        }
        // The reading loop is this thread's, the main thread's included (``ThreadLocals/loop``
        // mirrors the loops of threads other than the main thread).
        if answerGap < .infinity { PortRunLoop.existingForCurrentThread()?.noteAnswer(after: answerGap) }
        return read
    }

    /// A request that waited through `reader` is over: the kept reader stays armed for the next
    /// one; a temporary one becomes the kept one when there is none (or the kept one's loop is
    /// gone) and the connection is open, and is cancelled otherwise.
    func finishServing(_ reader: ReplyReader) {
        locked {
            reader.wait = nil
            guard !reader.isKept else { return } // cancelled already if the connection closed
            polling -= 1
            if ended == nil, fd >= 0, !(keptReader?.isLive ?? false) {
                keptReader?.stop() // its loop is gone
                reader.isKept = true
                keptReader = reader
            } else {
                reader.stop() // before the fd may be closed (FileDescriptorSource's rule)
            }
            closeIfEnded()
        }
    }
}
