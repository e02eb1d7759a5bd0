import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Watching file descriptors: readiness wakes the loop; cancel stops handlers; bad fds throw.
@Suite(.timeLimit(.minutes(1))) struct FileDescriptorSourceTests {
    @Test func readReadinessWakesTheLoopAndCallsTheHandlerOnItsThread() throws {
        let thread = try RunLoopThread(name: "fd-loop")
        defer { thread.stop() }
        let pipe = Pipe2()
        let received = Recorder<UInt8>()
        let threads = Recorder<String>()
        let got = Signal()
        let source = try thread.loop.watch(fileDescriptor: pipe.readEnd, for: .read) { events in
            #expect(events.contains(.read))
            if let byte = pipe.readByte() { received.append(byte) }
            threads.append(Thread.current.name ?? "")
            if received.count == 3 { got.fire() }
        }
        defer { source.cancel() }
        try thread.loop.performAndWait {} // registered
        pipe.write(1); pipe.write(2); pipe.write(3)
        #expect(got.wait())
        #expect(received.values == [1, 2, 3])
        #expect(Set(threads.values) == ["fd-loop"])
    }

    @Test func writeReadiness() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let pipe = Pipe2()
            let events = Recorder<FileDescriptorSource.Events>()
            let source = try loop.watch(fileDescriptor: pipe.writeEnd, for: .write, inModes: [.default]) { ready in
                events.append(ready)
                PortRunLoop.current.stop()
            }
            _ = loop.run(mode: .default, timeout: 5, returnAfterSourceHandled: true)
            source.cancel()
            #expect(events.values.first == .write)
        }
    }

    @Test func cancelledSourceNeverCallsItsHandlerAgain() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let pipe = Pipe2()
            let calls = Recorder<Bool>()
            let source = try loop.watch(fileDescriptor: pipe.readEnd, for: .read, inModes: [.default]) { _ in
                calls.append(true)
            }
            pipe.write(9) // stays unread: level-triggered, it would fire on every turn
            #expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)))
            #expect(calls.count == 1)
            source.cancel()
            #expect(source.isCancelled)
            loop.add(MessagePort(), forMode: .default)
            #expect(loop.run(mode: .default, timeout: 0.05, returnAfterSourceHandled: true) == .timedOut)
            #expect(calls.count == 1)
        }
    }

    @Test func closedOrUnpollableDescriptorsThrowTypedErrors() throws {
        let loop = try RunLoopThread(name: "fd-errors")
        defer { loop.stop() }
        // A closed descriptor whose number no parallel test is handed: the kernel gives out the
        // lowest free number, so take a free one just under the descriptor limit
        // (`fcntl(F_DUPFD)`, which never replaces an open descriptor, as `dup2` onto a fixed
        // number would: another test's epoll instance, say) and close it there.
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        var limit = rlimit()
        #expect(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        let closed = fcntl(fds[0], F_DUPFD, Int32(clamping: limit.rlim_cur) - 32)
        try #require(closed >= 0)
        close(closed); close(fds[0]); close(fds[1])
        #expect(throws: PortRunLoopError.invalidFileDescriptor(closed)) {
            try loop.loop.watch(fileDescriptor: closed, for: .read) { _ in }
        }
        #expect(throws: PortRunLoopError.invalidFileDescriptor(-1)) {
            try loop.loop.watch(fileDescriptor: -1, for: .read) { _ in }
        }
        let file = open("/proc/self/cmdline", O_RDONLY)
        defer { close(file) }
        #expect(throws: PortRunLoopError.unsupportedFileDescriptor(file)) {
            try loop.loop.watch(fileDescriptor: file, for: .read) { _ in }
        }
    }
}
