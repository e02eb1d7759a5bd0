import Foundation
import PortRunLoopKit
import PortRunLoopStressEngine
import Synchronization
import Testing
import PortRunLoopTestSupport

/// fd-source misuse: closed descriptors, empty event sets, double cancel. (Closed,
/// negative and regular-file descriptors at `watch` time are covered by the core tests.)
@Suite(.timeLimit(.minutes(1))) struct FileDescriptorMisuseTests {
    private func makePipe() -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0)
        return (fds[0], fds[1])
    }

    @Test func anFdClosedBeforeTheLoopRegistersItCancelsTheSourceWithATypedError() throws {
        let thread = try RunLoopThread(name: "fd-closed-late")
        defer { thread.stop() }
        let (r, w) = makePipe()
        let calls = CallCounter()
        let release = holdLoop(thread)
        // The fd is open now (watch checks it), but closed before the loop gets to register it —
        // and its number reused at once by a regular file (which epoll refuses). dup2 does both
        // atomically, so no other test's pipe can take the number in between (tests run in
        // parallel in one process): the kernel refusal is certain.
        let source = try thread.loop.watch(fileDescriptor: r, for: .read) { _ in calls.increment() }
        let file = open("/proc/self/cmdline", O_RDONLY)
        #expect(file >= 0)
        #expect(dup2(file, r) == r)
        close(file)
        close(w)
        defer { close(r) }
        release.fire()
        try thread.loop.performAndWait {}
        #expect(source.isCancelled, "a source whose fd the kernel refused must be cancelled")
        #expect(source.registrationError == .eventRegistrationFailed)
        #expect(calls.value == 0)
    }

    @Test func anEmptyEventSetIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var fds: [Int32] = [0, 0]
            _ = pipe(&fds)
            _ = try? PortRunLoop.current.watch(fileDescriptor: fds[0], for: []) { _ in }
        }
        expectMessage(result, contains: "event set is empty")
    }

    @Test func anEmptyModeListIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var fds: [Int32] = [0, 0]
            _ = pipe(&fds)
            _ = try? PortRunLoop.current.watch(fileDescriptor: fds[0], for: .read, inModes: []) { _ in }
        }
        expectMessage(result, contains: "mode list is empty")
    }

    @Test func cancellingTwiceAndFromTheHandlerAreNoOps() throws {
        try onLoopThread { c in
            let loop = PortRunLoop.current
            let (r, w) = makePipe()
            defer { close(r); close(w) }
            var byte: UInt8 = 1
            _ = write(w, &byte, 1)
            let calls = CallCounter()
            let sourceBox = Locked<FileDescriptorSource?>(nil)
            let source = try loop.watch(fileDescriptor: r, for: .read) { _ in
                calls.increment()
                sourceBox.withLock { $0 }?.cancel()
                sourceBox.withLock { $0 }?.cancel()
            }
            sourceBox.withLock { $0 = source }
            // Level-triggered and never read: without the cancel it would fire on every turn.
            for _ in 0..<5 { loop.run(mode: .default, timeout: 0.01, returnAfterSourceHandled: true) }
            c.expect(calls.value == 1)
            source.cancel()
            c.expect(source.isCancelled)
            c.expect(source.registrationError == nil, "a user cancel is not a registration error")
            sourceBox.withLock { $0 = nil }
        }
    }

    @Test func closingAWatchedFdAndThenCancellingNeitherCrashesNorHangs() throws {
        // Documented misuse ("cancel the source before closing its fd"): the result is no more calls
        // after cancel, no crash and no hang.
        try onLoopThread { c in
            let loop = PortRunLoop.current
            let (r, w) = makePipe()
            let calls = CallCounter()
            let source = try loop.watch(fileDescriptor: r, for: .read) { _ in calls.increment() }
            loop.add(MessagePort(), forMode: .default)
            c.expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: false) == .timedOut)
            close(r)
            close(w)
            loop.run(mode: .default, timeout: 0.01, returnAfterSourceHandled: false)
            source.cancel()
            let before = calls.value
            loop.run(mode: .default, timeout: 0.01, returnAfterSourceHandled: false)
            c.expect(calls.value == before)
        }
    }
}
