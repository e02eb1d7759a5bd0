import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Nested runs from inside handlers, in the same mode and in another (modal) mode.
@Suite(.timeLimit(.minutes(1))) struct NestedRunTests {
    @Test func nestedRunInAnotherModeSeesOnlyThatModesSources() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let modal = RunLoop.Mode("modal")
            let defaultPort = MessagePort(queueLimit: 10)
            let modalPort = MessagePort(queueLimit: 10)
            let log = Recorder<String>()
            modalPort.setHandler { log.append("modal \($0.msgid)") }
            defaultPort.setHandler { message in
                log.append("default \(message.msgid) begin")
                if message.msgid == 1 {
                    // A modal wait: only the modal port is served; default message 2 waits.
                    #expect(loop.currentMode == .default)
                    #expect(loop.run(mode: modal, before: Date(timeIntervalSinceNow: 5)))
                    #expect(loop.currentMode == .default)
                }
                log.append("default \(message.msgid) end")
            }
            loop.add(defaultPort, forMode: .default)
            loop.add(modalPort, forMode: modal)
            defaultPort.send(before: Date(), msgid: 1)
            defaultPort.send(before: Date(), msgid: 2)
            modalPort.send(before: Date(), msgid: 9)
            while defaultPort.statistics.delivered < 2 {
                #expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)))
            }
            #expect(log.values == ["default 1 begin", "modal 9", "default 1 end", "default 2 begin", "default 2 end"])
        }
    }

    @Test func nestedRunInTheSameModeContinuesWithTheNextItemsInOrder() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            loop.add(MessagePort(), forMode: .default)
            let log = Recorder<Int>()
            loop.perform(inModes: [.default]) {
                log.append(1)
                // Items 2 and 3 are already queued; the nested run must run them, in order.
                _ = loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true)
                log.append(4)
            }
            loop.perform(inModes: [.default]) { log.append(2) }
            loop.perform(inModes: [.default]) { log.append(3) }
            loop.perform(inModes: [.default]) { loop.stop() }
            _ = loop.run(mode: .default, timeout: 10, returnAfterSourceHandled: false)
            #expect(log.values == [1, 2, 3, 4])
        }
    }

    @Test func timersKeepFiringInNestedRunsOfTheirModes() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let modal = RunLoop.Mode("modal")
            let fired = Recorder<RunLoop.Mode?>()
            let timer = RunLoopTimer(fireAt: Date(timeIntervalSinceNow: 0.02), interval: 0.01, repeats: true) { timer in
                fired.append(loop.currentMode)
                if fired.count == 3 { timer.invalidate() }
            }
            loop.add(timer, forMode: .common)
            loop.addCommonMode(modal)
            let modalDone = Recorder<Bool>()
            loop.perform(inModes: [.default]) {
                // Nested modal run until the timer has fired three times.
                while fired.count < 3 {
                    _ = loop.run(mode: modal, before: Date(timeIntervalSinceNow: 5))
                }
                modalDone.append(true)
            }
            _ = loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5))
            #expect(modalDone.values == [true])
            #expect(fired.values == [modal, modal, modal])
            #expect(!timer.isValid)
        }
    }
}
