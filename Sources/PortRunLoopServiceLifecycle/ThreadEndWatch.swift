#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import PortRunLoopKit

/// Tells when a ``RunLoopThread``'s thread has ended, without polling: one block queued on its loop.
///
/// ``watch(_:onEnd:)`` queues one block on the loop that hands a token to the thread: the token is
/// kept in a thread-specific slot whose destructor releases it when the thread exits, which happens
/// only after its loop ended and was shut down. The token's `deinit` calls `onEnd`. If the block is
/// never run (the loop was already shut down, or shut down before reaching it) the block is
/// discarded with the token in it, which calls `onEnd` too. So `onEnd` is called exactly once, as
/// soon as the thread's loop is gone, whoever stopped it.
enum ThreadEndWatch {
    /// Calls `onEnd` (once, on whatever thread releases the token) when `thread` has ended.
    static func watch(_ thread: RunLoopThread, onEnd: @escaping @Sendable () -> Void) {
        let token = Token(onEnd: onEnd)
        thread.loop.perform { Tokens.adopt(token) }
    }

    /// Calls its closure when released.
    private final class Token: Sendable {
        let onEnd: @Sendable () -> Void
        init(onEnd: @escaping @Sendable () -> Void) { self.onEnd = onEnd }
        deinit { onEnd() }
    }

    /// The tokens a thread holds until it exits (several services may watch one thread). Touched
    /// only on its own thread.
    private final class Tokens {
        var held: [Token] = []

        private static let key: pthread_key_t = {
            var key = pthread_key_t()
            let rc = pthread_key_create(&key) { raw in
                guard let raw else { return }
                Unmanaged<Tokens>.fromOpaque(raw).release()
            }
            InternalFailure.check(rc == 0, "ThreadEndWatch: pthread_key_create failed, errno \(rc)")
            return key
        }()

        /// Keeps `token` until the calling thread exits.
        static func adopt(_ token: Token) {
            if let raw = pthread_getspecific(key) {
                Unmanaged<Tokens>.fromOpaque(raw).takeUnretainedValue().held.append(token)
            } else {
                let tokens = Tokens()
                tokens.held.append(token)
                pthread_setspecific(key, Unmanaged.passRetained(tokens).toOpaque())
            }
        }
    }
}
