import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A thread whose own loop is already shut down can still make blocking calls (from a deinit run by
/// the shutdown, for instance): it then sleeps while it waits, as a thread without a loop does,
/// instead of re-entering its dead loop over and over.
@Suite(.timeLimit(.minutes(1))) struct WaitOnShutDownLoopTests {
    /// Something whose deinit makes a blocking call, on whatever thread releases it last.
    final class CallsOnRelease: Sendable {
        let call: @Sendable () -> Void
        init(_ call: @escaping @Sendable () -> Void) { self.call = call }
        deinit { call() }
    }

    /// CPU time the calling thread has used, in seconds.
    static func threadCPUSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Queues a block holding the only reference to `object` in a mode `loop` never runs.
    private func queueUnrunnable(on loop: PortRunLoop, holding object: CallsOnRelease) {
        loop.perform(inModes: [RunLoop.Mode("never-run")]) { withExtendedLifetime(object) {} }
    }

    @Test func performAndWaitFromAShutDownLoopSleeps() throws {
        let target = try RunLoopThread(name: "held-target")
        defer { target.stop() }
        let release = holdLoop(target) // the call cannot start: it waits its whole timeout
        defer { release.fire() }
        let caller = try RunLoopThread(name: "dying-caller")
        let measured = Locked<(wall: Double, cpu: Double, timedOut: Bool)?>(nil)
        let targetLoop = target.loop
        // Queued in a mode the caller's loop never runs: the shutdown discards it on the caller's
        // thread, and its release makes the call there, after the loop is shut down.
        queueUnrunnable(on: caller.loop, holding: CallsOnRelease {
            let wallStart = Date()
            let cpuStart = Self.threadCPUSeconds()
            var timedOut = false
            do { _ = try targetLoop.performAndWait(timeout: .milliseconds(300)) { 1 } } catch { timedOut = true }
            let cpu = Self.threadCPUSeconds() - cpuStart
            measured.withLock { $0 = (Date().timeIntervalSince(wallStart), cpu, timedOut) }
        })
        caller.stop()
        let result = try #require(measured.withLock { $0 })
        #expect(result.timedOut)
        #expect(result.wall >= 0.29)
        // Sleeping costs next to no CPU (a wake-up or two); re-entering a dead loop over and over
        // burns the whole wait, or whatever share of it a busy machine gives the thread.
        #expect(result.cpu < 0.03)
    }

    /// On its own shut-down loop (W2) a call throws instead of running its body inline.
    @Test func performAndWaitOnTheCallersOwnShutDownLoopThrows() throws {
        let thread = try RunLoopThread(name: "own-dead-loop")
        let loop = thread.loop
        let outcome = Locked<Result<Int, PortRunLoopError>?>(nil)
        queueUnrunnable(on: loop, holding: CallsOnRelease {
            let result: Result<Int, PortRunLoopError>
            do { result = .success(try loop.performAndWait { 1 }) } catch let error as PortRunLoopError {
                result = .failure(error)
            } catch {
                result = .failure(.timedOut) // not thrown by performAndWait without a timeout
            }
            outcome.withLock { $0 = result }
        })
        thread.stop()
        #expect(outcome.withLock { $0 } == .failure(.loopShutDown))
    }

    @Test func postAndWaitFromAShutDownLoopSleeps() throws {
        let observerThread = try RunLoopThread(name: "held-observer")
        defer { observerThread.stop() }
        let center = ThreadNotificationCenter()
        let name = Notification.Name("WaitOnShutDownLoopTests.post")
        let token = center.addObserver(forName: name, on: observerThread.loop) { _ in }
        let release = holdLoop(observerThread) // the delivery cannot start: the post times out
        defer { release.fire() }
        let caller = try RunLoopThread(name: "dying-poster")
        let measured = Locked<(wall: Double, cpu: Double, timedOut: Bool)?>(nil)
        queueUnrunnable(on: caller.loop, holding: CallsOnRelease {
            let wallStart = Date()
            let cpuStart = Self.threadCPUSeconds()
            var timedOut = false
            do { try center.postAndWait(name: name, timeout: .milliseconds(300)) } catch { timedOut = true }
            let cpu = Self.threadCPUSeconds() - cpuStart
            measured.withLock { $0 = (Date().timeIntervalSince(wallStart), cpu, timedOut) }
        })
        caller.stop()
        let result = try #require(measured.withLock { $0 })
        #expect(result.timedOut)
        #expect(result.wall >= 0.29)
        #expect(result.cpu < 0.03)
        withExtendedLifetime(token) {}
    }
}
