#if canImport(Glibc)
import Glibc
#endif
@testable import PortRunLoopKit
import Testing

/// A peer that closes its end while frames this side sent it are still unread makes the kernel
/// report `ECONNRESET` here once, ahead of the frames the peer sent before it closed. Each of the
/// socket's receive calls reads past it: those frames arrive, in order, and only then the end
/// (a sender killed mid-stream loses none of what it sent).
@Suite struct PeerResetReceiveTests {
    /// A socket pair where `frames` went from the peer to this end, one frame from this end
    /// stays unread at the peer, and the peer then closed. Returns this end.
    private func endAfterPeerClosed(sending frames: [String]) throws -> Int32 {
        var ends: [Int32] = [-1, -1]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        try #require(socketpair(AF_UNIX, type, 0, &ends) == 0)
        for frame in frames {
            let bytes = Array(frame.utf8)
            try #require(send(ends[1], bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count)
        }
        let unread: [UInt8] = [0x78]
        try #require(send(ends[0], unread, 1, Int32(MSG_NOSIGNAL)) == 1)
        close(ends[1])
        return ends[0]
    }

    private func text(_ buffer: UnsafeMutableRawBufferPointer, _ result: System.SocketResult) -> String? {
        guard case .done(let length) = result else { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: buffer[0..<length]), as: UTF8.self)
    }

    @Test func aFrameAtATimeReadsWhatThePeerSentBeforeTheEnd() throws {
        let fd = try endAfterPeerClosed(sending: ["one", "two"])
        defer { close(fd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)
        defer { buffer.deallocate() }
        #expect(text(buffer, System.receiveFrame(fd, into: buffer)) == "one")
        #expect(text(buffer, System.receiveFrame(fd, into: buffer)) == "two")
        #expect(System.receiveFrame(fd, into: buffer) == .closed)
    }

    @Test func aFrameWithRoomForDescriptorsReadsWhatThePeerSentBeforeTheEnd() throws {
        let fd = try endAfterPeerClosed(sending: ["one", "two"])
        defer { close(fd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)
        let control = UnsafeMutableRawBufferPointer.allocate(byteCount: System.descriptorControlSize(4), alignment: 8)
        defer { buffer.deallocate(); control.deallocate() }
        var count: Int32 = 0
        #expect(text(buffer, System.receiveFrame(fd, into: buffer, control: control, descriptorCount: &count)) == "one")
        #expect(text(buffer, System.receiveFrame(fd, into: buffer, control: control, descriptorCount: &count)) == "two")
        #expect(System.receiveFrame(fd, into: buffer, control: control, descriptorCount: &count) == .closed)
        #expect(count == 0)
    }

    @Test func aBatchedReadReadsWhatThePeerSentBeforeTheEnd() throws {
        let fd = try endAfterPeerClosed(sending: ["one", "two"])
        defer { close(fd) }
        let slots = 4, slotSize = 64, controlSize = System.descriptorControlSize(1)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: slots * slotSize, alignment: 8)
        let control = UnsafeMutableRawPointer.allocate(byteCount: slots * controlSize, alignment: 8)
        let lengths = UnsafeMutablePointer<Int>.allocate(capacity: slots)
        let counts = UnsafeMutablePointer<Int32>.allocate(capacity: slots)
        defer { buffer.deallocate(); control.deallocate(); lengths.deallocate(); counts.deallocate() }
        let result = System.receiveFrames(fd, into: buffer, slotSize: slotSize, count: slots, lengths: lengths,
                                          control: control, controlSize: controlSize, descriptorCounts: counts)
        // Both frames, then end of file in the slot after them (a length of 0).
        guard case .done(let read) = result else {
            Issue.record("expected frames, got \(result)")
            return
        }
        let texts = (0..<min(read, 2)).map { i in
            String(decoding: UnsafeRawBufferPointer(start: buffer + i * slotSize, count: lengths[i]), as: UTF8.self)
        }
        #expect(texts == ["one", "two"])
        #expect(read == 2 || lengths[2] == 0)
    }
}
