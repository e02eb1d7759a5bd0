import Foundation
import PortRunLoopKit
import Synchronization

/// A consumer: a loop on its own thread, either a ``RunLoopThread`` or a plain thread that runs
/// `PortRunLoop.current` itself and exits (so its loop is shut down by thread exit), with ports
/// scheduled in it and records of what ran there.
///
/// Thread-safety: `Sendable`; records are written on the consumer's thread and read after it joined.
final class StressConsumer: Sendable {
    enum Kind: Sendable {
        case runLoopThread(RunLoopThread)
        case plainThread(JoinableThread, exit: ExitFlag)
    }

    final class ExitFlag: Sendable {
        let value = Atomic<Bool>(false)
    }

    static let privateMode = RunLoop.Mode("PortRunLoopStress.private")

    let id: Int
    let kind: Kind
    let loop: PortRunLoop
    let loopID: ObjectIdentifier
    /// The current ports (a port invalidated by chaos is replaced in place).
    let ports: Locked<[StressPort]>
    /// Set before the consumer starts retiring; items accepted after it may be discarded.
    let retiring = Atomic<Bool>(false)
    /// Per producer: sequence numbers of `perform` blocks in the order they ran.
    let performed: Locked<[[UInt32]]>
    /// Per producer: sequence numbers of `performAndWait` bodies that ran.
    let called: Locked<[[UInt32]]>
    /// Bodies of loop-to-loop synchronous calls that ran here.
    let relayBodies = Atomic<Int>(0)
    /// Notification deliveries on this consumer (see the notification parts).
    let notificationRecords: Locked<[String]> = Locked([])

    init(id: Int, usePlainThread: Bool, producers: Int) {
        self.id = id
        let name = "stress-c\(id)"
        if usePlainThread {
            let exit = ExitFlag()
            let published = Latch()
            let box = Locked<PortRunLoop?>(nil)
            let thread = JoinableThread(name: name) {
                let loop = PortRunLoop.current
                // A private port keeps the default mode non-empty, like RunLoopThread's.
                loop.add(MessagePort(), forMode: .default)
                box.withLock { $0 = loop }
                published.open()
                while !exit.value.load(ordering: .acquiring) {
                    _ = loop.run(mode: .default, timeout: .infinity, returnAfterSourceHandled: false)
                }
                // Returning exits the thread: its loop is shut down by the thread-exit hook.
            }
            published.wait()
            self.kind = .plainThread(thread, exit: exit)
            self.loop = box.withLock { $0! }
        } else {
            let thread: RunLoopThread
            do { thread = try RunLoopThread(name: name) } catch {
                fatalError("portrunloop-stress: could not start a RunLoopThread: \(error)")
            }
            self.kind = .runLoopThread(thread)
            self.loop = thread.loop
        }
        self.loopID = ObjectIdentifier(loop)
        self.ports = Locked([])
        self.performed = Locked(Array(repeating: [], count: producers))
        self.called = Locked(Array(repeating: [], count: producers))
    }

    var isPlainThread: Bool {
        if case .plainThread = kind { return true }
        return false
    }

    /// Adds a fresh port (from the calling thread, i.e. a cross-thread add) and returns it.
    func addPort(uid: Int, producers: Int, queueLimit: Int, common: Bool) -> StressPort {
        let port = StressPort(uid: uid, consumerID: id, loopID: loopID, producers: producers, queueLimit: queueLimit)
        loop.add(port.port, forMode: common ? .common : .default)
        return port
    }

    /// Retires the consumer: everything accepted before this call is handled, then the loop ends and
    /// its thread is joined. Returns false when the thread did not exit within `timeout` seconds.
    func retire(timeout: Double) -> Bool {
        retiring.store(true, ordering: .sequentiallyConsistent)
        switch kind {
        case .runLoopThread(let thread):
            // Documented rule: what was queued before stop() is handled, then the thread is joined.
            thread.stop()
            return true
        case .plainThread(let thread, let exit):
            // Two synchronous calls: when the second returns, every message and block queued before
            // the first has been handled (a turn runs blocks, then ports).
            _ = try? loop.performAndWait {}
            _ = try? loop.performAndWait {}
            loop.perform {
                exit.value.store(true, ordering: .releasing)
                PortRunLoop.current.stop()
            }
            return thread.join(timeout: timeout)
        }
    }
}

/// A one-shot latch (plain `DispatchSemaphore`), for hand-overs inside the engine.
final class Latch: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    func open() { semaphore.signal() }
    func wait() { semaphore.wait() }
    func wait(seconds: Double) -> Bool { semaphore.wait(timeout: .now() + seconds) == .success }
}
