import Foundation
@testable import PortRunLoopKit
import PortRunLoopTestSupport
import Testing

/// When a loop counts as being in a conversation (``IdleSpin``): its thread handed another loop
/// work that loop will answer. The mark does not depend on whether the other loop had to be woken:
/// a loop whose partner is awake (spinning, or running) must be marked too, or its sleeps, which
/// the partner's answers end, would earn no spin.
@Suite(.timeLimit(.minutes(1))) struct ConversationMarkTests {
    /// Runs `body` on `thread`'s loop thread while `busy`'s loop is awake, running a block that
    /// waits until `body` is done; returns whether `thread`'s loop was in a conversation afterwards.
    private func markAfterHandingWork(from thread: RunLoopThread, to busy: RunLoopThread,
                                      _ body: @escaping @Sendable () -> Void) throws -> Bool {
        let running = Signal(), release = Signal()
        busy.loop.perform {
            running.fire()
            _ = release.wait()
        }
        #expect(running.wait())
        let marked = try thread.loop.performAndWait { () -> Bool in
            thread.loop.inConversation = false
            body()
            return thread.loop.inConversation
        }
        release.fire()
        return marked
    }

    @Test func aLoopThatHandsWorkToAnAwakeLoopIsInAConversation() throws {
        let a = try RunLoopThread(name: "mark-a"), b = try RunLoopThread(name: "mark-b")
        defer { a.stop(); b.stop() }
        #expect(try markAfterHandingWork(from: a, to: b) { b.loop.perform {} })
    }

    @Test func aLoopThatSendsToAPortOfAnAwakeLoopIsInAConversation() throws {
        let a = try RunLoopThread(name: "mark-port-a"), b = try RunLoopThread(name: "mark-port-b")
        defer { a.stop(); b.stop() }
        let port = MessagePort()
        port.setHandler { _ in }
        b.loop.add(port, forMode: .common)
        try b.loop.performAndWait {}
        defer { port.invalidate() }
        #expect(try markAfterHandingWork(from: a, to: b) { _ = port.send(before: .distantFuture) })
    }

    @Test func aLoopThatQueuesWorkForItselfIsNot() throws {
        let a = try RunLoopThread(name: "mark-self"), b = try RunLoopThread(name: "mark-self-b")
        defer { a.stop(); b.stop() }
        #expect(try !markAfterHandingWork(from: a, to: b) { a.loop.perform {} })
    }
}
