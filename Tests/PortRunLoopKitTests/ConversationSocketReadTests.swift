#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import PortRunLoopTestSupport
import Testing

/// A spinning loop in a conversation reads the conversation's socket directly instead of asking
/// libevent (``PortRunLoop/readConversationSocket()``): only a library socket (one with a spin
/// read) that the loop last handled, in the running mode and not cancelled; libevent is asked again
/// after ``IdleSpin/spinReadsPerPoll`` reads when the mode has other fd sources, never when the
/// socket is its only one; and what a read sets off runs in the next turn, never while the loop
/// waits. Each check runs on the loop's thread, inside one `performAndWait`, where
/// nothing else reads the socket.
@Suite(.timeLimit(.minutes(1))) struct ConversationSocketReadTests {
    /// A socket pair: `writer` sends, the loop watches `reader`. `reads` counts what the spin read
    /// and the handler took from it, `spinReads` the spin read's calls.
    private final class Pair: @unchecked Sendable {
        let writer: Int32, reader: Int32
        let reads = Locked(0), spinReads = Locked(0)
        let handled = Signal()
        /// What the spin read also does, on the loop's thread (set before the loop reads).
        let onRead = Locked<(@Sendable () -> Void)?>(nil)

        init() throws {
            var ends: [Int32] = [-1, -1]
            let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            try #require(socketpair(AF_UNIX, type, 0, &ends) == 0)
            (writer, reader) = (ends[0], ends[1])
        }

        deinit { close(writer); close(reader) }

        func write() { #expect(send(writer, [0x78], 1, Int32(MSG_NOSIGNAL)) == 1) }

        /// Reads what the socket holds: true when it held something.
        func drain() -> Bool {
            var byte: UInt8 = 0
            var any = false
            while recv(reader, &byte, 1, Int32(MSG_DONTWAIT)) == 1 { any = true; reads.withLock { $0 += 1 } }
            return any
        }

        /// Watches `reader` on `loop` in `modes`, with a spin read unless `public`.
        func watch(on loop: PortRunLoop, modes: [RunLoop.Mode] = [.common], public: Bool = false) throws -> FileDescriptorSource {
            let handler: @Sendable (FileDescriptorSource.Events) -> Void = { [self] _ in _ = drain(); handled.fire() }
            if `public` { return try loop.watch(fileDescriptor: reader, for: .read, inModes: modes, handler: handler) }
            return try loop.watch(fileDescriptor: reader, for: .read, inModes: modes, spinRead: { [self] in
                spinReads.withLock { $0 += 1 }
                onRead.withLock { $0 }?()
                return drain()
            }, handler: handler)
        }

        /// Makes the loop handle the socket once (it becomes the loop's conversation socket).
        func handleOnce() {
            write()
            #expect(handled.wait())
        }
    }

    /// Runs `body` with a loop thread watching a new pair's socket (with its spin read), which the
    /// loop has handled once: its conversation socket. Everything stops afterwards.
    private func withConversationSocket(_ name: String, _ body: (RunLoopThread, Pair, FileDescriptorSource) throws -> Void) throws {
        let thread = try RunLoopThread(name: name)
        defer { thread.stop() }
        let pair = try Pair()
        let source = try pair.watch(on: thread.loop)
        defer { source.cancel() }
        pair.handleOnce()
        try body(thread, pair, source)
    }

    @Test func theSocketTheLoopLastHandledIsReadDirectly() throws {
        try withConversationSocket("spin-read") { thread, pair, _ in
            let found = try thread.loop.performAndWait { () -> (PortRunLoop.SpinRead, PortRunLoop.SpinRead) in
                let loop = thread.loop
                let empty = loop.readConversationSocket()
                pair.write()
                return (empty, loop.readConversationSocket())
            }
            #expect(found.0 == .empty)
            #expect(found.1 == .read)
            #expect(pair.reads.withLock { $0 } == 2)
            #expect(pair.spinReads.withLock { $0 } == 2)
        }
    }

    @Test func libEventIsAskedAfterAFewReadsInARow() throws {
        try withConversationSocket("spin-read-poll") { thread, pair, _ in
            // Another fd source in the mode: it must not wait more than a few looks.
            let other = try Pair()
            let otherSource = try other.watch(on: thread.loop, public: true)
            defer { otherSource.cancel() }
            let found = try thread.loop.performAndWait { () -> [PortRunLoop.SpinRead] in
                let loop = thread.loop
                loop.pollLibEvent(blocking: false)
                var found: [PortRunLoop.SpinRead] = []
                for _ in 0...IdleSpin.spinReadsPerPoll { pair.write(); found.append(loop.readConversationSocket()) }
                loop.pollLibEvent(blocking: false) // the handler is queued; the next read may look again
                _ = loop.handleReadyFileDescriptors()
                pair.write()
                found.append(loop.readConversationSocket())
                return found
            }
            #expect(found == Array(repeating: .read, count: IdleSpin.spinReadsPerPoll) + [.notNow, .read])
        }
    }

    @Test func aSocketAloneInItsModeIsReadAtEveryLook() throws {
        try withConversationSocket("spin-read-alone") { thread, pair, _ in
            let found = try thread.loop.performAndWait { () -> [PortRunLoop.SpinRead] in
                let loop = thread.loop
                loop.pollLibEvent(blocking: false)
                var found: [PortRunLoop.SpinRead] = []
                for _ in 0..<(3 * IdleSpin.spinReadsPerPoll) { pair.write(); found.append(loop.readConversationSocket()) }
                return found
            }
            #expect(found == Array(repeating: .read, count: 3 * IdleSpin.spinReadsPerPoll))
        }
    }

    @Test func aCancelledSourceIsNotRead() throws {
        try withConversationSocket("spin-read-cancel") { thread, pair, source in
            let found = try thread.loop.performAndWait { () -> PortRunLoop.SpinRead in
                source.cancel()
                pair.write()
                return thread.loop.readConversationSocket()
            }
            #expect(found == .notNow)
            #expect(pair.spinReads.withLock { $0 } == 0)
        }
    }

    @Test func aSocketOutsideTheRunningModeIsNotRead() throws {
        let thread = try RunLoopThread(name: "spin-read-mode")
        defer { thread.stop() }
        let pair = try Pair()
        let other = RunLoop.Mode("spin-read-other")
        let source = try pair.watch(on: thread.loop, modes: [other])
        defer { source.cancel() }
        let found = try thread.loop.performAndWait { () -> (Bool, PortRunLoop.SpinRead) in
            // Handled in a nested run of its mode, then looked at from the default mode.
            pair.write()
            _ = thread.loop.run(mode: other, timeout: 10, returnAfterSourceHandled: true)
            pair.write()
            return (pair.reads.withLock { $0 } == 1, thread.loop.readConversationSocket())
        }
        #expect(found.0)
        #expect(found.1 == .notNow)
        #expect(pair.spinReads.withLock { $0 } == 0)
    }

    @Test func aUsersSourceIsNeverReadBySpins() throws {
        let thread = try RunLoopThread(name: "spin-read-public")
        defer { thread.stop() }
        let pair = try Pair()
        let source = try pair.watch(on: thread.loop, public: true)
        defer { source.cancel() }
        pair.handleOnce()
        let found = try thread.loop.performAndWait { () -> PortRunLoop.SpinRead in
            pair.write()
            return thread.loop.readConversationSocket()
        }
        #expect(found == .notNow)
    }

    @Test func whatAReadSetsOffRunsInTheNextTurn() throws {
        try withConversationSocket("spin-read-defer") { thread, pair, _ in
            let ran = Locked(false)
            pair.onRead.withLock { $0 = { _ = thread.loop.onOwner { _ in ran.withLock { $0 = true } } } }
            let duringRead = try thread.loop.performAndWait { () -> Bool in
                pair.write()
                #expect(thread.loop.readConversationSocket() == .read)
                return ran.withLock { $0 }
            }
            #expect(!duringRead)
            try thread.loop.performAndWait {} // queued before this call: it ran first
            #expect(ran.withLock { $0 })
        }
    }
}
