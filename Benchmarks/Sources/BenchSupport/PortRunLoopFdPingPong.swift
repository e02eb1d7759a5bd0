#if canImport(Glibc)
import Glibc
import PeerSupport
#endif
import Foundation
import PortRunLoopKit

/// Ours: the fd ping-pong on a ``PortRunLoop`` of its own thread (a ``SampleThread``), both ends
/// watched with `watch(fileDescriptor:for: .read)` in the common modes, idle fd sources and idle
/// timers (`RunLoopTimer` an hour away, `add(_:forMode: .common)`) registered beside them.
///
/// Thread-safety: `Sendable`; driven by one thread (see ``FdPingPongPeer``); everything else is
/// touched only on the sample thread.
public final class PortRunLoopFdPingPong: FdPingPongPeer, @unchecked Sendable {
    /// How a sample runs the loop.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public enum Drive: Sendable {
        /// `loop.run()`, ended by `loop.stop()` from the handler of the last event.
        case run
        /// The Foundation idiom: `while !done { loop.run(mode: .default, before: .distantFuture) }`.
        case runModeBefore
    }

    /// Idle sources registered (fds or timers).
    ///
    /// Thread-safety: immutable after init.
    public private(set) var idleSources = 0
    private let drive: Drive
    private let thread = SampleThread()
    private let pair = SocketPair()
    private let idleDescriptors: IdleDescriptors?
    // Sample thread only:
    private var loop: PortRunLoop!
    private var sources: [FileDescriptorSource] = []
    private var timers: [RunLoopTimer] = []
    private var handled = 0
    private var target = 0
    private var deadline: UInt64 = 0
    private var finished = false

    /// Makes the loop on a new thread and registers the ping-pong's two ends and the idle load.
    ///
    /// Thread-safety: any thread.
    public init(drive: Drive, idle: IdleLoad) throws {
        self.drive = drive
        if case .fileDescriptors(let count) = idle {
            idleDescriptors = IdleDescriptors(requested: count)
        } else {
            idleDescriptors = nil
        }
        do {
            try thread.runThrowing { try setUp(idle) }
        } catch {
            shutDown()
            throw error
        }
    }

    private func setUp(_ idle: IdleLoad) throws {
        loop = try PortRunLoop.forCurrentThread()
        for fd in [pair.first, pair.second] {
            sources.append(try loop.watch(fileDescriptor: fd, for: .read) { [self] _ in bounce(fd) })
        }
        if let idleDescriptors {
            for fd in idleDescriptors.descriptors {
                sources.append(try loop.watch(fileDescriptor: fd, for: .read) { _ in })
            }
            // Registered on the loop's own thread, so a refusal has cancelled the source by now.
            idleSources = sources.dropFirst(2).filter { !$0.isCancelled }.count
        }
        if case .timers(let count) = idle {
            let fireDate = Date(timeIntervalSinceNow: 3600)
            timers.reserveCapacity(count)
            for _ in 0..<count {
                let timer = RunLoopTimer(fireAt: fireDate) { _ in }
                loop.add(timer, forMode: .common)
                timers.append(timer)
            }
            idleSources = timers.filter(\.isValid).count
        }
    }

    /// One event: read the byte; write it back unless the sample is over.
    private func bounce(_ fd: Int32) {
        var byte: UInt8 = 0
        guard read(fd, &byte, 1) == 1 else { return }
        handled &+= 1
        if handled == target || (handled & 63 == 0 && ProcessCounters.nanoseconds() >= deadline) {
            switch drive {
            case .run: loop.stop()
            case .runModeBefore: finished = true
            }
            return
        }
        _ = write(fd, &byte, 1)
    }

    /// Runs one sample on the peer's loop thread (see ``FdPingPongPeer/runSample(events:deadline:)``).
    ///
    /// Thread-safety: the driving thread; blocks until the sample ended.
    public func runSample(events: Int, deadline: UInt64) -> Int {
        thread.run {
            handled = 0
            target = events
            self.deadline = deadline
            finished = false
            var byte: UInt8 = 1
            precondition(write(pair.first, &byte, 1) == 1, "PortRunLoopFdPingPong: write failed, errno \(errno)")
            switch drive {
            case .run:
                loop.run()
            case .runModeBefore:
                while !finished { loop.run(mode: .default, before: .distantFuture) }
            }
            return handled
        }
    }

    /// Frees everything and ends the thread (see ``FdPingPongPeer/shutDown()``).
    ///
    /// Thread-safety: the driving thread, once.
    public func shutDown() {
        thread.run {
            for source in sources { source.cancel() }
            for timer in timers { timer.invalidate() }
            sources = []
            timers = []
        }
        thread.stop()
        pair.close()
        idleDescriptors?.close()
    }
}
