#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import Synchronization

extension PortRunLoop {
    private static let threadKey: pthread_key_t = {
        var key = pthread_key_t()
        let rc = pthread_key_create(&key) { raw in
            guard let raw else { return }
            let loop = Unmanaged<PortRunLoop>.fromOpaque(raw).takeRetainedValue()
            ThreadLocals.loop = nil // the destructor runs on the exiting thread
            loop.shutDownIfNeeded()
            loop.ownerThreadExited.store(true, ordering: .releasing)
        }
        InternalFailure.check(rc == 0, "pthread_key_create failed, errno \(rc)")
        return key
    }()

    private static let mainLoop: PortRunLoop = {
        defer { mainLoopMade.store(true, ordering: .releasing) }
        do { return try PortRunLoop(name: "main", owner: .mainThread).drainingMainDispatchQueue() } catch {
            fatalError("PortRunLoop: could not create the main thread's loop: \(error)")
        }
    }()

    /// The main thread's loop. May be fetched from any thread; only the main thread runs it.
    ///
    /// Thread-safety: any thread.
    public static var main: PortRunLoop { mainLoop }

    /// The calling thread's loop, created on first use. Traps if the loop cannot be created (for
    /// example when the process is out of file descriptors); use ``forCurrentThread()`` to get a
    /// thrown error instead.
    ///
    /// Thread-safety: any thread; each thread gets its own loop.
    public static var current: PortRunLoop {
        do { return try forCurrentThread() } catch {
            fatalError("PortRunLoop.current: could not create this thread's loop: \(error)")
        }
    }

    /// The calling thread's loop, created on first use; throws when libevent cannot create it.
    /// The loop is shut down when its thread exits.
    ///
    /// Thread-safety: any thread; each thread gets its own loop.
    public static func forCurrentThread() throws(PortRunLoopError) -> PortRunLoop {
        if let existing = existingForCurrentThread() { return existing } // the main loop included
        let name = Thread.current.name.flatMap { $0.isEmpty ? nil : $0 } ?? "thread-\(pthread_self())"
        let loop = try PortRunLoop(name: name, owner: .thread(pthread_self()))
        register(loop)
        return loop
    }

    /// Whether ``mainLoop`` has been made (read without making it).
    private static let mainLoopMade = Atomic<Bool>(false)

    /// Records on the calling thread's loop, if it has one, that the thread has just sent something
    /// another thread or process will probably answer: a message to a loop it had to wake, or a
    /// frame to another process. The loop then treats a quick answer as a conversation worth
    /// spinning for (see ``IdleSpin``). Makes no loop; costs a thread-local read.
    ///
    /// Thread-safety: any thread; touches only the calling thread's own loop.
    ///
    /// Inlined: it is on the path of a producer that finds a loop asleep. A thread known not to be
    /// the main thread, with no loop, goes no further than two thread-local loads.
    @inline(__always)
    package static func noteMessageSentFromCurrentThread() {
        if let loop = registeredForCurrentThread() {
            loop.inConversation = true
        } else if ThreadLocals.isMainThread != false {
            noteMessageSentFromMainThread()
        }
    }

    /// ``noteMessageSentFromCurrentThread()`` on a thread without a loop of its own that may be the
    /// main thread (not known yet, or known to be).
    @inline(never)
    private static func noteMessageSentFromMainThread() {
        // Never makes the main loop: only one already kept here, or already made.
        guard System.isMainThread(), ThreadLocals.mainLoop != nil || mainLoopMade.load(ordering: .acquiring) else { return }
        mainLoopOnMainThread().inConversation = true
    }

    /// The calling thread's loop if it already has one (never creates one, except the main loop
    /// on the main thread).
    static func existingForCurrentThread() -> PortRunLoop? {
        if System.isMainThread() { return mainLoopOnMainThread() }
        return registeredForCurrentThread()
    }

    /// ``mainLoop``, called on the main thread: from the thread-local kept there after the first
    /// call (``ThreadLocals/mainLoop``), not through the global's `swift_once` on every call.
    private static func mainLoopOnMainThread() -> PortRunLoop {
        if let loop = ThreadLocals.mainLoop { return loop }
        let loop = mainLoop
        ThreadLocals.mainLoop = loop
        return loop
    }

    /// The loop registered for the calling thread, if any; never the main loop. Read from the
    /// thread-local mirror (``ThreadLocals/loop``): no call, no lazily made key.
    @inline(__always)
    private static func registeredForCurrentThread() -> PortRunLoop? { ThreadLocals.loop }

    /// Registers `loop` as the calling thread's: ``threadKey`` holds the reference (its destructor
    /// shuts the loop down when the thread exits), ``ThreadLocals/loop`` mirrors it for reading.
    private static func register(_ loop: PortRunLoop) {
        pthread_setspecific(threadKey, Unmanaged.passRetained(loop).toOpaque())
        ThreadLocals.loop = loop
    }

    /// Makes a loop for a thread ``RunLoopThread`` is starting; registered like ``current``.
    static func makeForNewThread(name: String, logger: Logger) throws(PortRunLoopError) -> PortRunLoop {
        let loop = try PortRunLoop(name: name, owner: .thread(pthread_self()), logger: logger)
        register(loop)
        return loop
    }
}
