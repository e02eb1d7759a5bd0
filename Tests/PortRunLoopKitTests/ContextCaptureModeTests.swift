import Foundation
import PortRunLoopKit
import ServiceContextModule
import Testing
import PortRunLoopTestSupport

extension ServiceContextTests {
    /// `PortRunLoop.serviceContextCapture`: `.never` carries nothing, `.always` carries the context,
    /// `.automatic` follows whether an instrument is bootstrapped (none is, in the tests).
    @Suite(.timeLimit(.minutes(1))) struct ContextCaptureModeTests {
        @Test func eachModeDecidesWhetherTheContextTravels() throws {
            let thread = try RunLoopThread(name: "ctx-mode")
            defer { thread.stop(); PortRunLoop.serviceContextCapture = .always }
            let port = MessagePort()
            let seen = Recorder<String>()
            port.setHandler { _ in seen.append(currentTraceID() ?? "none") }
            thread.loop.add(port, forMode: .common)
            defer { port.invalidate() }
            func hop(_ mode: ServiceContextCapture) throws -> [String?] {
                PortRunLoop.serviceContextCapture = mode
                #expect(PortRunLoop.serviceContextCapture == mode)
                return try ServiceContext.withValue(traceContextWithoutEnabling("t")) {
                    port.send(before: .distantFuture)
                    let performed = try thread.loop.performAndWait { currentTraceID() }
                    return [performed]
                }
            }
            #expect(try hop(.never) == [nil])
            #expect(try hop(.automatic) == [nil]) // no instrument bootstrapped in this process
            #expect(try hop(.always) == ["t"])
            try thread.loop.performAndWait {}
            #expect(seen.values == ["none", "none", "t"])
        }
    }
}

/// A context holding `traceID`, leaving the capture mode as it is.
private func traceContextWithoutEnabling(_ traceID: String) -> ServiceContext {
    var context = ServiceContext.topLevel
    context[TraceIDKey.self] = traceID
    return context
}
