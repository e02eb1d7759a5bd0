#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A publishing loop's spin read of a connection (``PortRunLoop/readConversationSocket()``) takes
/// one frame: in a request/reply exchange that is the request the spin waits for, and offering the
/// kernel more slots than frames waiting costs it a look into the empty socket. Frames behind it
/// stay in the socket for the next look or the source's handler, which reads them in batches;
/// none is lost or reordered.
@Suite(.serialized, .timeLimit(.minutes(1))) struct PublisherSpinReadTests {
    @Test func aSpinReadTakesOneFrame() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let thread = try RunLoopThread(name: "xproc-spin-read")
        defer { thread.stop() }
        let port = MessagePort(queueLimit: 8)
        let handled = Collector<UInt32>()
        port.setHandler { handled.append($0.msgid) }
        thread.loop.add(port, forMode: .default)
        let published = try directory.registry.publish(port, as: "spin", on: thread.loop)
        defer { published.unpublish() }
        let fd = rawConnection(to: directory, name: "spin")
        defer { close(fd) }
        // Handled once by its source, the connection is the loop's conversation socket.
        sendRawMessages([0], to: fd)
        #expect(handled.wait(for: 1))
        // Three frames in the socket before the first look (written on the loop's thread, which
        // reads nothing meanwhile): one per look, then nothing.
        let found = try thread.loop.performAndWait { () -> [PortRunLoop.SpinRead] in
            sendRawMessages([1, 2, 3], to: fd)
            thread.loop.spinReadsSincePoll = 0
            return (0..<4).map { _ in thread.loop.readConversationSocket() }
        }
        #expect(found == [.read, .read, .read, .empty])
        #expect(handled.wait(for: 4))
        #expect(handled.values == [0, 1, 2, 3])
        // Behind a spin read's one frame, the source's handler takes the rest.
        try thread.loop.performAndWait {
            sendRawMessages([4, 5, 6], to: fd)
            thread.loop.spinReadsSincePoll = 0
            #expect(thread.loop.readConversationSocket() == .read)
        }
        #expect(handled.wait(for: 7))
        #expect(handled.values == [0, 1, 2, 3, 4, 5, 6])
    }
}
