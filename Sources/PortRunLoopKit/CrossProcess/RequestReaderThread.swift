/// The loop thread that reads the replies of async requests
/// (``MessagePort/sendRequest(msgid:components:sendTimeout:receiveTimeout:)-1ibw5``): one for the
/// process, started by the first async request and kept for the process's life. It watches the
/// socket of every connection an async request was made on, so the reply completes the request
/// and resumes its task without any thread blocking for it, and it times the requests out.
///
/// It is the library's own loop, always running its default mode: a `readingOn:` loop given at
/// lookup may be run in other modes or not at all, and a request must still see its reply or
/// its receive timeout.
///
/// Thread-safety: `Sendable`; the thread is made under the mutex.
enum RequestReaderThread {
    private static let thread = TracedMutex<RunLoopThread?>(nil)

    /// The thread's loop, made at the first call. A thread the system would not make is an
    /// error of this call only: the next one tries again.
    static func loop() throws(CrossProcessPortError) -> PortRunLoop {
        try thread.withLock { (thread: inout RunLoopThread?) throws(CrossProcessPortError) -> PortRunLoop in
            if let thread { return thread.loop }
            do throws(PortRunLoopError) {
                let made = try RunLoopThread(name: "portrunloop.requests")
                thread = made
                return made.loop
            } catch {
                throw CrossProcessPortError(error)
            }
        }
    }
}
