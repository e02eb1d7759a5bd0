import CChildProcess
import Foundation

/// A child process whose output (stdout and stderr) is collected as it comes, so a caller can wait
/// for a line; stopped by ``stop()`` (SIGKILL, waited for), and killed when released. Every wait is
/// bounded.
///
/// Started with `posix_spawn`, not Foundation's `Process`: the child gets standard input
/// (`/dev/null`), output and error (one pipe) and no other descriptor — they are closed at the
/// spawn itself, so it cannot keep a descriptor another thread opened meanwhile (another child's
/// pipe, or the socket through which Foundation learns that another child exited, which would
/// hide that child's end for as long as this one lives) — with every signal unblocked and SIGPIPE,
/// SIGINT and SIGTERM at their default action, in a process group of its own. A thread of its own
/// waits for it (`waitpid` on its pid alone).
///
/// Thread-safety: `Sendable`; the output is guarded by its condition, the exit by its lock.
public final class StreamingProcess: @unchecked Sendable {
    /// The process id.
    public let pid: Int32
    private let collected = Output()
    private let exit: ExitState
    /// Signalled once the reader has seen the end of the output (the last chunk is in `text`).
    private let drained = DispatchSemaphore(value: 0)
    private let stopped = NSLock()
    private var isStopped = false // guarded by `stopped`

    /// What the child wrote so far (the reader thread holds it, not the process object, so that
    /// releasing the object kills the child).
    private final class Output: @unchecked Sendable {
        let condition = NSCondition()
        var text = "" // guarded by `condition`
    }

    /// The child's exit status, once `waitpid` returned it.
    private final class ExitState: @unchecked Sendable {
        let exited = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var value: Int32? // guarded by `lock`
        var status: Int32? { lock.withLock { value } }
        func set(_ status: Int32) { lock.withLock { value = status } }
    }

    /// Starts `path` (searched in `PATH` when it has no slash) with `arguments`, and `environment`
    /// added to this process's environment. With a `launcher` (a command and its arguments, such
    /// as `setpriv …` or `nice -n 10`), runs `launcher + [path] + arguments`.
    public init(_ path: String, _ arguments: [String], environment: [String: String] = [:],
                launcher: [String] = []) throws {
        let command = launcher + [path] + arguments
        var ends: [Int32] = [0, 0]
        guard child_process_pipe(&ends) == 0 else { throw StreamingProcessError.spawn(command[0], errno) }
        let devNull = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { if devNull >= 0 { close(devNull) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, devNull >= 0 ? devNull : ends[1], 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 2)
        child_process_close_inherited(&actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0)=\($1)" }
        var argv = command.map { strdup($0) } + [nil]
        var envp = variables.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var child: pid_t = 0
        let failed = posix_spawnp(&child, command[0], &actions, &attributes, &argv, &envp)
        close(ends[1])
        guard failed == 0 else {
            close(ends[0])
            throw StreamingProcessError.spawn(command[0], failed)
        }
        pid = child
        let exit = ExitState()
        self.exit = exit
        let spawned = child
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(spawned, &status, 0) == -1 && errno == EINTR {}
            exit.set(status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f) // the exit code, or the signal
            exit.exited.signal()
        }
        let reader = ends[0]
        let drained = self.drained
        let collected = self.collected
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(reader, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                collected.condition.lock()
                collected.text += String(decoding: buffer[0..<count], as: UTF8.self)
                collected.condition.broadcast()
                collected.condition.unlock()
            }
            close(reader)
            drained.signal()
        }
    }

    /// Everything the process wrote so far.
    public var output: String {
        collected.condition.lock(); defer { collected.condition.unlock() }
        return collected.text
    }

    /// Whether the process is still running (not yet reaped).
    public var isRunning: Bool { exit.status == nil }

    /// Waits until the output contains `needle`, at most `seconds`.
    public func wait(for needle: String, seconds: Double = 20) -> Bool {
        wait(seconds: seconds) { $0.contains(needle) }
    }

    /// Waits until `condition` holds for the output so far, at most `seconds`.
    public func wait(seconds: Double = 20, until condition: (String) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        collected.condition.lock(); defer { collected.condition.unlock() }
        while !condition(collected.text) {
            if !collected.condition.wait(until: deadline) { return condition(collected.text) }
        }
        return true
    }

    /// Waits (at most `seconds`) until a whole line (ended by a newline) containing `needle` was
    /// written; returns that line, without its newline, or nil.
    public func line(containing needle: String, seconds: Double = 20) -> String? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        collected.condition.lock(); defer { collected.condition.unlock() }
        while true {
            if let line = collected.text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().first(where: { $0.contains(needle) }) {
                return String(line)
            }
            if !collected.condition.wait(until: deadline) { return nil }
        }
    }

    /// Waits for the process to exit on its own, at most `seconds`; its exit code (the signal's
    /// number if a signal ended it), or nil if it did not.
    public func waitForExit(seconds: Double) -> Int32? {
        guard exit.exited.wait(timeout: .now() + seconds) == .success else { return nil }
        exit.exited.signal() // keep it signalled for stop()
        // The output's last chunk may still be on its way to the reader: wait for the end of it.
        if drained.wait(timeout: .now() + 5) == .success { drained.signal() }
        return exit.status
    }

    /// Kills the process (SIGKILL) and waits for it, at most 5 s. Idempotent. Returns false when
    /// it had not exited 5 s after the signal.
    @discardableResult
    public func stop() -> Bool {
        let first = stopped.withLock { defer { isStopped = true }; return !isStopped }
        guard first else { return true }
        if isRunning { kill(pid, SIGKILL) }
        guard exit.exited.wait(timeout: .now() + 5) == .success else { return false }
        exit.exited.signal()
        return true
    }

    deinit { stop() }
}

/// A child process could not be started.
///
/// Thread-safety: `Sendable`; immutable.
public enum StreamingProcessError: Error {
    /// `posix_spawn` (or the pipe before it) failed for the program, with this errno.
    case spawn(String, Int32)
}
