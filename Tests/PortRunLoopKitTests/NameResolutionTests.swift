import Foundation
import PortRunLoopKit
import Testing

/// Our names resolve unqualified next to Foundation (which declares an unavailable `MessagePort`),
/// and qualify with the module name (which is why the module is not called `PortRunLoop`).
@Suite struct NameResolutionTests {
    @Test func unqualifiedAndQualifiedNamesResolve() {
        let port: MessagePort = PortRunLoopKit.MessagePort()
        let loop: PortRunLoopKit.PortRunLoop = PortRunLoop.main
        let _: PortRunLoopKit.MessagePort.Message.Type = MessagePort.Message.self
        #expect(port.isValid)
        #expect(loop.name == "main")
    }
}
