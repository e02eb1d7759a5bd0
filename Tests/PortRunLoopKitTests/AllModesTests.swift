import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// allModes (CFRunLoopCopyAllModes): the modes something is scheduled in, `.common` expanded.
@Suite(.timeLimit(.minutes(1))) struct AllModesTests {
    private static let a = RunLoop.Mode("AllModesTests.a")
    private static let b = RunLoop.Mode("AllModesTests.b")
    private static let c = RunLoop.Mode("AllModesTests.c")
    private static let d = RunLoop.Mode("AllModesTests.d")

    @Test func listsTheModesOfEveryKindOfSourceAndObserver() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            #expect(loop.allModes.isEmpty)
            let timer = RunLoopTimer(fireAt: .distantFuture) { _ in }
            loop.add(timer, forMode: Self.a)
            let port = MessagePort()
            loop.add(port, forMode: Self.b)
            let observer = RunLoopObserver(activities: .entry) { _, _ in }
            loop.add(observer, forMode: Self.c)
            let source = RunLoopSource { _ in }
            loop.add(source, forMode: .common)
            loop.addCommonMode(Self.d)
            #expect(loop.allModes == [Self.a, Self.b, Self.c, .default, Self.d])
            timer.invalidate()
            port.invalidate()
            loop.remove(observer, forMode: Self.c)
            source.invalidate()
            #expect(loop.allModes.isEmpty)
        }
    }
}
