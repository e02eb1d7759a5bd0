#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Which loop's executor job, if any, the calling thread is running right now (a thread-local).
///
/// It answers two questions: "may an executor job start here?" (no, while another job is on this
/// thread's stack: jobs never nest) and "is this after-shutdown queue thread isolated to loop X?"
/// (yes, while it runs one of X's jobs).
///
/// Thread-safety: each thread sees only its own value.
enum RunningExecutorJob {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let rc = pthread_key_create(&key, nil)
        precondition(rc == 0, "PortRunLoop: pthread_key_create failed, errno \(rc)")
        return key
    }()

    /// Runs `job` for `loop`, marking the thread meanwhile.
    static func run(_ job: LoopJob, on loop: PortRunLoop) {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(loop).toOpaque())
        job.run(on: loop)
        pthread_setspecific(key, previous)
    }

    /// True while the calling thread runs a job of any loop.
    static var isRunningAny: Bool { pthread_getspecific(key) != nil }

    /// True while the calling thread runs a job of `loop`.
    static func isRunning(for loop: PortRunLoop) -> Bool {
        pthread_getspecific(key) == Unmanaged.passUnretained(loop).toOpaque()
    }
}
