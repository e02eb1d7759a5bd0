import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// An fd epoll refuses makes `watch` throw a typed error on every thread it can be called from:
/// the loop's own, and any other (where the registration itself happens later, on the loop).
@Suite(.timeLimit(.minutes(1))) struct WatchRefusedFileDescriptorTests {
    private func expectRefused(_ fd: Int32, on loop: PortRunLoop) {
        #expect(throws: PortRunLoopError.unsupportedFileDescriptor(fd)) {
            _ = try loop.watch(fileDescriptor: fd, for: .read) { _ in Issue.record("handler of a refused fd ran") }
        }
    }

    @Test func devNullIsRefusedOnTheLoopsThreadAndFromAnother() throws {
        let devNull = open("/dev/null", O_RDONLY)
        try #require(devNull >= 0)
        defer { close(devNull) }
        let thread = try RunLoopThread(name: "refuse-dev-null")
        defer { thread.stop() }
        expectRefused(devNull, on: thread.loop) // from another thread
        try thread.loop.performAndWait { expectRefused(devNull, on: thread.loop) } // from its own
        // The loop is unharmed: it still runs work.
        #expect(try thread.loop.performAndWait { 42 } == 42)
    }

    @Test func aRegularFileIsRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("portrunloop-watch-\(getpid())").path
        let fd = open(path, O_RDWR | O_CREAT, 0o600)
        try #require(fd >= 0)
        defer { close(fd); unlink(path) }
        try onFreshThread { expectRefused(fd, on: PortRunLoop.current) }
        let thread = try RunLoopThread(name: "refuse-file")
        defer { thread.stop() }
        expectRefused(fd, on: thread.loop)
    }

    @Test func aClosedFdIsInvalid() throws {
        // A number far above any fd the tests open (they run in parallel and reuse low numbers).
        let fd: Int32 = 19_999
        try #require(fcntl(fd, F_GETFD) == -1)
        let thread = try RunLoopThread(name: "refuse-closed")
        defer { thread.stop() }
        #expect(throws: PortRunLoopError.invalidFileDescriptor(fd)) {
            _ = try thread.loop.watch(fileDescriptor: fd, for: .read) { _ in }
        }
        #expect(throws: PortRunLoopError.invalidFileDescriptor(-1)) {
            _ = try thread.loop.watch(fileDescriptor: -1, for: .read) { _ in }
        }
    }
}
