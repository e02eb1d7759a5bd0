import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// `.common` stands for the loop's common modes; addCommonMode extends them.
@Suite(.timeLimit(.minutes(1))) struct CommonModesTests {
    @Test func commonSourceFiresInDefaultButNotInAPrivateMode() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            #expect(loop.commonModes == [.default])
            let other = RunLoop.Mode("other")
            let port = MessagePort()
            let got = Recorder<RunLoop.Mode?>()
            port.setHandler { _ in got.append(loop.currentMode) }
            loop.add(port, forMode: .common)
            loop.add(MessagePort(), forMode: other)
            port.send(before: Date())
            // Not a common mode: the message waits.
            #expect(loop.run(mode: other, timeout: 0.05, returnAfterSourceHandled: true) == .timedOut)
            #expect(got.values.isEmpty)
            #expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)))
            #expect(got.values == [.default])
        }
    }

    @Test func addingACommonModeExtendsCommonSourcesToIt() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let tracking = RunLoop.Mode("tracking")
            loop.addCommonMode(tracking)
            #expect(loop.commonModes == [.default, tracking])
            let port = MessagePort()
            let got = Recorder<RunLoop.Mode?>()
            port.setHandler { _ in got.append(loop.currentMode) }
            loop.add(port, forMode: .common)
            port.send(before: Date())
            #expect(loop.run(mode: tracking, before: Date(timeIntervalSinceNow: 5)))
            #expect(got.values == [tracking])
        }
    }

    @Test func performInCommonModesRunsInEachCommonMode() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let tracking = RunLoop.Mode("tracking")
            loop.addCommonMode(tracking)
            let got = Recorder<RunLoop.Mode?>()
            loop.perform { got.append(loop.currentMode) }
            #expect(loop.run(mode: tracking, before: Date(timeIntervalSinceNow: 5)))
            loop.perform { got.append(loop.currentMode) }
            #expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)))
            #expect(got.values == [tracking, .default])
        }
    }
}
