import Foundation
@testable import PortRunLoopKit
import PortRunLoopTestSupport
import Testing

/// ``AsyncStreamConnection/write(_:)`` against a peer that does not read: the writer ends up
/// suspended with the outbound queue above its high-water mark, and goes on once the peer reads.
@Suite(.timeLimit(.minutes(1))) struct AsyncStreamWriteBackPressureTests {
    @Test func aWriteWaitsForASlowReaderAndResumesWhenItReads() async throws {
        let thread = try RunLoopThread(name: "slow-reader")
        defer { thread.stop() }
        let peerListener = try RawStreamListener()
        peerListener.setReceiveBufferSize(16 * 1024)
        var options = AsyncStreamConnection.defaultOptions
        options.sendBufferSize = 16 * 1024
        options.lowWaterMark = 16 * 1024
        options.highWaterMark = 64 * 1024
        let accepting = Task { try await offThePool { try peerListener.accept() } }
        let connection = try await AsyncStreamConnection.connect(to: .host("127.0.0.1", port: peerListener.port),
                                                                  on: thread.loop, options: options)
        let peer = try await accepting.value

        // Far more than the kernel's buffers and the high-water mark together hold.
        let chunk = 32 * 1024, chunks = 128
        let message = patternBytes(chunk * chunks)
        let progress = Locked((started: 0, finished: 0))
        let writer = Task {
            for index in 0..<chunks {
                progress.withLock { $0.started += 1 }
                try await connection.write(Array(message[index * chunk..<(index + 1) * chunk]))
                progress.withLock { $0.finished += 1 }
            }
            try await connection.shutdownOutput()
        }
        let core = connection.core
        // The writer is stuck: one write in progress, and the queue past its high-water mark (so
        // that write waits for it to drain).
        let stuck = try await eventuallyAsync {
            let (started, finished) = progress.withLock { ($0.started, $0.finished) }
            guard started == finished + 1 else { return false }
            return try await thread.loop.submit { !core.value.connection.isWritable }
        }
        #expect(stuck)
        let (_, finishedWhileStuck) = progress.withLock { ($0.started, $0.finished) }
        #expect(finishedWhileStuck < chunks)
        let queued = try await thread.loop.submit { core.value.connection.queuedByteCount }
        #expect(queued > options.lowWaterMark)
        #expect(queued <= options.highWaterMark + chunk)

        // The peer reads: the writer goes on to the end.
        let received = try await offThePool { try peer.readToEnd() }
        try await writer.value
        #expect(progress.withLock { $0.finished } == chunks)
        #expect(received.count == message.count)
        #expect(received == message)
        await connection.close()
    }

    @Test func aWriteLargerThanTheOutboundLimitThrows() async throws {
        let thread = try RunLoopThread(name: "over-limit")
        defer { thread.stop() }
        let peerListener = try RawStreamListener()
        var options = AsyncStreamConnection.defaultOptions
        options.outboundLimit = 256 * 1024
        let accepting = Task { try await offThePool { try peerListener.accept() } }
        let connection = try await AsyncStreamConnection.connect(to: .host("127.0.0.1", port: peerListener.port),
                                                                  on: thread.loop, options: options)
        let peer = try await accepting.value
        // More than the limit plus what the kernel takes at once: the queue would pass the limit.
        let error = await thrownError { () async throws(StreamConnectionError) in
            try await connection.write([UInt8](repeating: 1, count: 16 * 1024 * 1024))
        }
        #expect(error == .outboundLimitExceeded(limit: 256 * 1024))
        #expect(await thrownError { () async throws(StreamConnectionError) in try await connection.write([1]) }
            == .outboundLimitExceeded(limit: 256 * 1024))
        peer.close()
    }
}
