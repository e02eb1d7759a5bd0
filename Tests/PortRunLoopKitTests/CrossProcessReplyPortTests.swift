import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A local port passed in `from:` to another process arrives there as a reply port; what the
/// other side sends on it comes back over the same connection to the local port (X8).
@Suite(.serialized) struct CrossProcessReplyPortTests {
    @Test func answersOnAReplyPortArriveAtTheLocalPortOnItsOwnerThread() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "answerer", "5", "reply"])
        defer { publisher.kill9() }
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        let thread = try RunLoopThread(name: "xproc-client")
        defer { thread.stop() }
        let replyPort = MessagePort(queueLimit: 64)
        let answers = Recorder<(msgid: UInt32, text: String, onOwner: Bool)>()
        let allAnswered = Signal()
        let loop = thread.loop
        replyPort.setHandler { message in
            answers.append((message.msgid, String(decoding: message.components.first ?? Data(), as: UTF8.self), loop.isCurrentThread))
            if answers.values.count == 10 { allAnswered.fire() }
        }
        thread.loop.add(replyPort, forMode: .default)
        // The loop reads what comes back on the connection as it arrives.
        let remote = try directory.registry.remotePort(named: "answerer", readingOn: thread.loop)
        for index in UInt32(0)..<10 {
            #expect(remote.send(before: Date(timeIntervalSinceNow: 10), msgid: index, components: [Data("q\(index)".utf8)], from: replyPort))
        }
        #expect(allAnswered.wait(seconds: 30))
        let values = answers.values
        #expect(values.map(\.msgid) == (1000..<1010).map { UInt32($0) })
        #expect(values.map(\.text) == (0..<10).map { "q\($0)" })
        #expect(values.allSatisfy { $0.onOwner })
        remote.invalidate()
    }
}
