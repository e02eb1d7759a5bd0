import PortRunLoopKit
import CChildProcess
import Foundation
import Synchronization

/// SIGINT and SIGTERM, taken by a thread of their own (blocked everywhere else, so no thread is
/// interrupted): the first raises the stop flag (the run stops, tears down and judges), a second
/// ends the process at once (status 130; the children die with it).
///
/// Thread-safety: `Sendable`; ``start()`` on the main thread before any other thread exists.
final class SignalWatch: Sendable {
    let flag = StopFlag()
    private let received = TracedMutex<Int32?>(nil)

    /// The first signal taken, if any.
    var signal: Int32? { received.withLock { $0 } }

    static func start() -> SignalWatch {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        let watch = SignalWatch()
        let signals = set
        Thread.detachNewThread {
            var set = signals
            var taken: Int32 = 0
            sigwait(&set, &taken)
            watch.received.withLock { $0 = taken }
            watch.flag.raise()
            sigwait(&set, &taken)
            FileHandle.standardError.write(Data("soak: a second signal: exiting now\n".utf8))
            _exit(130)
        }
        return watch
    }
}

/// Ends the process (status 3) if the run does not finish by a deadline: a hang is reported, not
/// waited on.
///
/// Thread-safety: any thread.
enum Watchdog {
    private static let deadline = TracedMutex<ContinuousClock.Instant?>(nil)
    private static let started = TracedMutex(false)

    /// Sets the deadline `seconds` from now (starting the watching thread the first time).
    static func arm(seconds: Double, ledger: SoakLedger) {
        deadline.withLock { $0 = .now + .milliseconds(Int64(seconds * 1000)) }
        let first = started.withLock { started in defer { started = true }; return !started }
        guard first else { return }
        Thread.detachNewThread {
            while true {
                sleep(1)
                guard let due = deadline.withLock({ $0 }), ContinuousClock.now > due else { continue }
                FileHandle.standardError.write(Data("soak: watchdog: the run did not finish in time (a hang); exiting\n".utf8))
                let snapshot = SoakSample(elapsed: (ContinuousClock.now - ledger.start).seconds, ledger: ledger)
                FileHandle.standardError.write(Data((snapshot.line + "\n").utf8))
                _exit(3)
            }
        }
    }

    static func disarm() { deadline.withLock { $0 = nil } }
}

/// `portrunloop-soak --die-with-parent <parent pid> <program> [arguments…]`: the launcher every
/// child of the soak goes through. It unblocks the signals the soak blocks, asks the kernel to
/// kill it when the soak's main thread ends (`PR_SET_PDEATHSIG`, kept across `execve`), checks that
/// the soak is still its parent, and becomes `program`.
///
/// Thread-safety: the main thread of its own process.
enum SupervisedExec {
    static func run(_ arguments: [String]) -> Never {
        guard arguments.count >= 2, let parent = Int32(arguments[0]) else { _exit(2) }
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
        guard child_process_die_with_parent() == 0, getppid() == parent else { _exit(1) }
        let program = Array(arguments.dropFirst())
        var argv = program.map { strdup($0) }
        argv.append(nil)
        execv(program[0], &argv)
        FileHandle.standardError.write(Data("soak: could not start \(program[0]): errno \(errno)\n".utf8))
        _exit(127)
    }
}
