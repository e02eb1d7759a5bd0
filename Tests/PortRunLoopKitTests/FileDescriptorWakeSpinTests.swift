#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import PortRunLoopTestSupport
import Testing

/// What a sleep that an fd's readiness ended earns the loop's idle spin (Semantics.md R10): outside
/// a conversation, as a ring's wake-up does, only by the backlog it finds. A stream socket is read
/// by a handler that queues one block per byte (a queued block is what the loop counts as
/// handled); each byte or pair of bytes is written once the loop has gone to sleep, so every
/// wake-up is an fd's and finds exactly what was written.
@Suite(.timeLimit(.minutes(1))) struct FileDescriptorWakeSpinTests {
    /// A loop thread watching the read end of a stream socket pair.
    private final class Stream: @unchecked Sendable {
        let thread: RunLoopThread
        let writer: Int32, reader: Int32
        /// The loop's ``LoopMetrics/sleeps`` when its handler last ran (set on the loop's thread).
        let sleepsAtHandler = Locked(0)
        let handled = Signal()
        private var source: FileDescriptorSource?

        init(_ name: String) throws {
            thread = try RunLoopThread(name: name)
            var ends: [Int32] = [-1, -1]
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            try #require(socketpair(AF_UNIX, type, 0, &ends) == 0)
            (writer, reader) = (ends[0], ends[1])
            let loop = thread.loop
            source = try loop.watch(fileDescriptor: reader, for: .read) { [self] _ in
                var bytes = [UInt8](repeating: 0, count: 16)
                let count = recv(reader, &bytes, bytes.count, Int32(MSG_DONTWAIT))
                for _ in 0..<max(count, 0) { loop.perform {} }
                sleepsAtHandler.withLock { $0 = loop.metrics.sleeps }
                handled.fire()
            }
        }

        func stop() {
            source?.cancel()
            thread.stop()
            close(writer)
            close(reader)
        }

        /// Waits until the loop has gone to sleep since its handler last ran.
        func waitUntilAsleep() {
            let sleeps = sleepsAtHandler.withLock { $0 }
            #expect(eventually { thread.loop.metrics.sleeps > sleeps })
        }

        /// Once the loop is asleep, writes `count` bytes in one `send` and waits for the handler.
        func writeWhenAsleep(_ count: Int) {
            waitUntilAsleep()
            #expect(send(writer, [UInt8](repeating: 0x78, count: count), count, Int32(MSG_NOSIGNAL)) == count)
            #expect(handled.wait())
        }

        /// Writes single bytes until whatever credit the loop's start-up left is spent.
        func settle() {
            for _ in 0..<5 { writeWhenAsleep(1) }
            waitUntilAsleep()
        }
    }

    @Test func aStreamThatFindsOneMessagePerWakeUpNeverSpins() throws {
        let stream = try Stream("fd-wake-sparse")
        defer { stream.stop() }
        stream.settle()
        let spins = stream.thread.loop.metrics.idleSpins
        for _ in 0..<20 { stream.writeWhenAsleep(1) }
        stream.waitUntilAsleep()
        #expect(stream.thread.loop.metrics.idleSpins == spins)
    }

    @Test func aWakeUpThatFindsABacklogEarnsASpin() throws {
        let stream = try Stream("fd-wake-backlog")
        defer { stream.stop() }
        stream.settle()
        let spins = stream.thread.loop.metrics.idleSpins
        stream.writeWhenAsleep(2) // two blocks handled after one wake-up: a backlog
        #expect(eventually { stream.thread.loop.metrics.idleSpins > spins })
    }
}
