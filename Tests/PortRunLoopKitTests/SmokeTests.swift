import Foundation
import PortRunLoopKit
import Synchronization
import Testing

@Suite struct SmokeTests {
    @Test func performAndWaitOnThread() throws {
        let t = try RunLoopThread(name: "smoke")
        defer { t.stop() }
        let name = try t.loop.performAndWait { Thread.current.name ?? "?" }
        #expect(name == "smoke")
        let x = try t.loop.performAndWait { 41 + 1 }
        #expect(x == 42)
    }

    @Test func portDelivers() throws {
        let t = try RunLoopThread(name: "ports")
        defer { t.stop() }
        let port = MessagePort(queueLimit: 1000)
        let got = Mutex<[UInt32]>([])
        port.setHandler { m in got.withLock { $0.append(m.msgid) } }
        t.loop.add(port, forMode: .common)
        for i in 0..<100 { #expect(port.send(before: .distantFuture, msgid: UInt32(i))) }
        try t.loop.performAndWait { }  // flushes: performs queued after the sends run after them
        #expect(got.withLock { $0 } == Array(0..<100))
    }
}
