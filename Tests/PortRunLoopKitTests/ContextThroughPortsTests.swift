import Foundation
import PortRunLoopKit
import ServiceContextModule
import Testing
import PortRunLoopTestSupport

extension ServiceContextTests {
    /// A port's handler runs in the context of each message's sender; the redirector's in the poster's.
    @Suite(.timeLimit(.minutes(1))) struct ContextThroughPortsTests {
        @Test func handlerSeesEachSendersContext() throws {
            let thread = try RunLoopThread(name: "ctx-port")
            defer { thread.stop() }
            let seen = Recorder<String>()
            let done = Signal()
            let port = MessagePort(queueLimit: 16)
            port.setHandler { message in
                seen.append("\(message.msgid):\(currentTraceID() ?? "none")")
                if message.msgid == 4 { done.fire() }
            }
            thread.loop.add(port, forMode: .common)
            let release = holdLoop(thread) // all four in one batch
            withTrace("a") { _ = port.send(before: .distantFuture, msgid: 1) }
            _ = port.send(before: .distantFuture, msgid: 2)
            withTrace("b") { _ = port.send(before: .distantFuture, msgid: 3, components: [Data([1])]) }
            _ = port.send(before: .distantFuture, msgid: 4, components: [Data([2])])
            release.fire()
            #expect(done.wait())
            #expect(seen.values == ["1:a", "2:none", "3:b", "4:none"])
            port.invalidate()
        }

        @Test func delegateSeesTheSendersContext() throws {
            let thread = try RunLoopThread(name: "ctx-port-delegate")
            defer { thread.stop() }
            let delegate = ContextRecordingDelegate()
            let port = MessagePort()
            port.delegate = delegate
            thread.loop.add(port, forMode: .common)
            withTrace("delegate") { _ = port.send(before: .distantFuture) }
            #expect(delegate.received.wait())
            #expect(delegate.seen.values == ["delegate"])
            port.invalidate()
        }

        @Test func redirectedNotificationsKeepThePostersContext() throws {
            let thread = try RunLoopThread(name: "ctx-redirector")
            defer { thread.stop() }
            let seen = Recorder<String>()
            let done = Signal()
            let redirector = try thread.loop.performAndWait {
                NotificationRedirector(loop: thread.loop) { note in
                    seen.append("\(note.name.rawValue):\(currentTraceID() ?? "none")")
                    if note.name.rawValue == "third" { done.fire() }
                }
            }
            let release = holdLoop(thread) // one drain for all three
            withTrace("first-trace") { redirector.process(Notification(name: .init("first"))) }
            redirector.process(Notification(name: .init("second")))
            withTrace("third-trace") { redirector.process(Notification(name: .init("third"))) }
            release.fire()
            #expect(done.wait())
            #expect(seen.values == ["first:first-trace", "second:none", "third:third-trace"])
            redirector.invalidate()
        }
    }

    /// Records the trace id each message is handled in.
    final class ContextRecordingDelegate: MessagePortDelegate, Sendable {
        let seen = Recorder<String>()
        let received = Signal()
        func handleMessage(_ message: MessagePort.Message) {
            seen.append(currentTraceID() ?? "none")
            received.fire()
        }
    }
}
