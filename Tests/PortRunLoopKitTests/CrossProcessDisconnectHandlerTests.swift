#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A published port's peer-disconnect handler runs on the publishing loop's thread once the read
/// that found the end is over: a handler may run the loop (R8), and a nested run reads the
/// publication's other connections into the same receive buffers that read was using.
@Suite(.serialized, .timeLimit(.minutes(1))) struct CrossProcessDisconnectHandlerTests {
    typealias Pipes = CrossProcessFileDescriptorTests

    /// One peer's frame and end wait in the socket while another peer's frames, each carrying a
    /// pipe, wait in its own; the first peer's disconnect handler runs the loop. Each pipe reaches
    /// its message open, with its own contents.
    @Test func aHandlerThatRunsTheLoopLeavesOtherPeersDescriptorsIntact() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let texts = Recorder<String>()
        let publisher = try TestPublisher(directory, name: "dc-nested", queueLimit: 8) { message in
            guard let descriptor = message.fileDescriptors.first else { return }
            let text = descriptor.take().map { fd in
                defer { close(fd) }
                return Pipes.readAll(fd)
            } ?? "(taken)"
            texts.append(text)
        }
        defer { publisher.stop() }
        let ran = Signal()
        publisher.published.setPeerDisconnectHandler { _, _ in
            _ = PortRunLoop.current.run(mode: .default, before: Date()) // a nested run: reads what is waiting
            ran.fire()
        }
        let release = holdLoop(publisher.thread)
        let leaving = rawConnection(to: directory, name: "dc-nested")
        sendRawMessages([100], to: leaving)
        close(leaving) // its frame and its end: one batch, with room for more in the buffers
        let staying = rawConnection(to: directory, name: "dc-nested")
        defer { close(staying) }
        announceDescriptors(on: staying)
        let pipes = (0..<3).map { Pipes.pipeHolding("pipe \($0)") }
        for (index, pipe) in pipes.enumerated() {
            sendRawFrame(CrossProcessFrame(kind: .message, msgid: UInt32(index), descriptorCount: 1), descriptors: [pipe], to: staying)
        }
        pipes.forEach { close($0) }
        release.fire()
        #expect(ran.wait(seconds: 10))
        #expect(publisher.waitForMessages(4))
        #expect(texts.values == ["pipe 0", "pipe 1", "pipe 2"])
    }
}
