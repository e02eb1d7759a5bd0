#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Credits on the wire, read by a hand-made peer: the publisher gives credits back once half the
/// window is owed, a batch's in one frame, and gives back the credits of messages nobody handled
/// (X5).
@Suite(.serialized) struct CrossProcessCreditTests {
    private func sendMessages(_ count: Int, to fd: Int32) { sendRawMessages(UInt32(0)..<UInt32(count), to: fd) }

    @Test func aBatchsCreditsComeBackInOneFrame() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let thread = try RunLoopThread(name: "xproc-owner")
        defer { thread.stop() }
        let port = MessagePort(queueLimit: 5)
        let handled = Recorder<UInt32>()
        port.setHandler { handled.append($0.msgid) }
        thread.loop.add(port, forMode: .default)
        let published = try directory.registry.publish(port, as: "batch", on: thread.loop)
        defer { published.unpublish() }
        let release = holdLoop(thread)
        let fd = rawConnection(to: directory, name: "batch")
        defer { close(fd) }
        sendMessages(5, to: fd) // all five credits, while the loop is held
        release.fire()
        // The loop reads the five frames in one turn and takes them as one batch: half the window
        // (3) is owed during it, and the flush at its end returns all five in one credit frame.
        let frame = readRawFrame(fd)
        #expect(frame?.kind == .credit)
        #expect(frame?.firstID == 5)
        #expect(handled.values == [0, 1, 2, 3, 4])
        // Spent again, they come back again: at least half the window, as soon as it is owed.
        sendMessages(5, to: fd)
        var returned = 0
        while returned < 3, let more = readRawFrame(fd), more.kind == .credit { returned += Int(more.firstID) }
        #expect(returned >= 3)
    }

    @Test func messagesNobodyHandlesGiveTheirCreditsBack() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let thread = try RunLoopThread(name: "xproc-owner")
        defer { thread.stop() }
        let port = MessagePort(queueLimit: 4) // no handler, no delegate: messages are discarded
        thread.loop.add(port, forMode: .default)
        let published = try directory.registry.publish(port, as: "void", on: thread.loop)
        defer { published.unpublish() }
        let fd = rawConnection(to: directory, name: "void")
        defer { close(fd) }
        sendMessages(4, to: fd)
        // Half the window (2) is owed after the second discard at the latest: at least that comes
        // back, and the rest with it if the four were taken in one batch.
        var returned = 0
        while returned < 2, let frame = readRawFrame(fd), frame.kind == .credit { returned += Int(frame.firstID) }
        #expect(returned >= 2)
        #expect(port.statistics.discarded >= 2)
    }
}
