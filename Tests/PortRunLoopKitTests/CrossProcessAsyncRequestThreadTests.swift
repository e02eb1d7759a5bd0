#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// The async forms of `sendRequest` wait on a thread of their own. A thread the system will not
/// make fails the call at once with a typed error, before anything is sent; the task is never
/// left waiting for a thread that did not start.
@Suite(.timeLimit(.minutes(1))) struct CrossProcessAsyncRequestThreadTests {
    @Test func anAsyncRequestWithoutAThreadFailsBeforeSending() async throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try TestPublisher(directory, name: "no-thread") { message in
            message.reply(msgid: message.msgid + 1000, before: Date(timeIntervalSinceNow: 5))
        }
        defer { publisher.stop() }
        let remote = try directory.registry.remotePort(named: "no-thread")
        // The request's task runs on a loop thread on which `clone3` is refused from now on.
        let caller = try RunLoopThread(name: "no-threads-here")
        defer { caller.stop() }
        try caller.loop.performAndWait { try SyscallRefusal.threadCreation(errno: EAGAIN).installOnCurrentThread() }
        let refused = await Task(executorPreference: caller.loop.taskExecutor) { () -> CrossProcessPortError? in
            do throws(CrossProcessPortError) {
                _ = try await remote.sendRequest(msgid: 1, sendTimeout: .seconds(5), receiveTimeout: .seconds(5))
                return nil
            } catch {
                return error
            }
        }.value
        #expect(refused == .systemCallFailed("pthread_create", errno: EAGAIN))
        // Nothing went out: the next request is the first the publisher sees, and is answered.
        let reply = try await remote.sendRequest(msgid: 2, sendTimeout: .seconds(5), receiveTimeout: .seconds(5))
        #expect(reply.msgid == 1002)
        #expect(publisher.received.values == [2])
    }
}
