/// The loop thread that reads the replies of async requests
/// (``MessagePort/sendRequest(msgid:components:sendTimeout:receiveTimeout:)-1ibw5``): one for the
/// process, started by the first async request and kept for the process's life. Its loop watches
/// a ``ReplyWatchSet``, in which the socket of every connection an async request was made on is
/// armed while a task waits there, so the reply completes the request and resumes its task
/// without any thread blocking for it; and its timers time the requests out.
///
/// It is the library's own loop, always running its default mode: a `readingOn:` loop given at
/// lookup may be run in other modes or not at all, and a request must still see its reply or
/// its receive timeout.
///
/// Thread-safety: `Sendable`; the thread and its set are made under the mutex.
enum RequestReaderThread {
    private static let made = TracedMutex<(thread: RunLoopThread?, watchSet: ReplyWatchSet?)>((nil, nil))

    /// The set the thread's loop watches (``ReplyWatchSet/loop`` is that loop), made with the
    /// thread at the first call. A thread, an epoll instance or a registration the system refuses
    /// is an error of this call only: the next one tries again.
    static func watchSet() throws(CrossProcessPortError) -> ReplyWatchSet {
        try made.withLock { (made: inout (thread: RunLoopThread?, watchSet: ReplyWatchSet?)) throws(CrossProcessPortError) -> ReplyWatchSet in
            if let watchSet = made.watchSet { return watchSet }
            let thread: RunLoopThread
            if let made = made.thread {
                thread = made
            } else {
                do throws(PortRunLoopError) {
                    thread = try RunLoopThread(name: "portrunloop.requests")
                } catch {
                    throw CrossProcessPortError(error)
                }
                made.thread = thread
            }
            let epoll: Int32
            switch System.makeEpoll() {
            case .success(let fd): epoll = fd
            case .failure(let error): throw .systemCallFailed("epoll_create1", errno: error.code)
            }
            let watched = ReplyWatchSet(descriptor: epoll, loop: thread.loop)
            do throws(PortRunLoopError) {
                // The source lives as long as the loop (it is never cancelled), and so does the
                // set its handlers hold.
                _ = try thread.loop.watch(fileDescriptor: epoll, inModes: [.default], onFailure: { [watched] in
                    forget(watched) // the next async request makes a new set
                    watched.refused($0)
                }, reading: { [watched] in
                    watched.serveReady()
                })
            } catch {
                // The set owns the descriptor and closes it as it goes, with the refused source
                // that held it: closing it here too would close a number reused meanwhile.
                throw CrossProcessPortError(error)
            }
            made.watchSet = watched
            return watched
        }
    }

    /// Lets `watched` go, if it is the set in use: its loop refused it.
    private static func forget(_ watched: ReplyWatchSet) {
        made.withLock { made in
            if made.watchSet === watched { made.watchSet = nil }
        }
    }
}
