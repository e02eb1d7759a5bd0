internal import CLinux

/// What the library keeps per thread and reads on its hand-off paths, in C thread-locals
/// (`_Thread_local`, declared in CLinux's shim): one `%fs`-relative load each. A `pthread_key_t`
/// costs a call into libc per read, and its lazily made key a `swift_once` per access: two pages
/// of code more on a path that, after an idle spell, pays for every page it touches.
///
/// Thread-safety: each thread reads and writes only its own values.
enum ThreadLocals {
    /// The calling thread's loop (``PortRunLoop/forCurrentThread()``, a ``RunLoopThread``'s), or
    /// nil: unretained, a mirror of the loop's pthread key, which holds the reference and whose
    /// destructor shuts the loop down when the thread exits (and clears this).
    static var loop: PortRunLoop? {
        @inline(__always) get {
            portrunloop_thread_loop().map { Unmanaged<PortRunLoop>.fromOpaque($0).takeUnretainedValue() }
        }
        set { portrunloop_set_thread_loop(newValue.map { Unmanaged.passUnretained($0).toOpaque() }) }
    }

    /// Whether the calling thread is the process's main thread, once known (nil before).
    static var isMainThread: Bool? {
        @inline(__always) get {
            switch portrunloop_main_marker() {
            case 1: true
            case 2: false
            default: nil
            }
        }
        set { portrunloop_set_main_marker(newValue.map { $0 ? 1 : 2 } ?? 0) }
    }

    /// On the main thread, the main loop once this thread asked for it (unretained: the main loop
    /// lives as long as the process); nil on every other thread. Read instead of the main loop's
    /// lazily made global, whose every access is a `swift_once` call.
    static var mainLoop: PortRunLoop? {
        @inline(__always) get {
            portrunloop_main_loop().map { Unmanaged<PortRunLoop>.fromOpaque($0).takeUnretainedValue() }
        }
        set { portrunloop_set_main_loop(newValue.map { Unmanaged.passUnretained($0).toOpaque() }) }
    }

    /// The loop whose executor job the calling thread is running (unretained; set and reset
    /// around the job by ``RunningExecutorJob``), or nil.
    static var runningJob: UnsafeMutableRawPointer? {
        @inline(__always) get { portrunloop_running_job() }
        set { portrunloop_set_running_job(newValue) }
    }
}
