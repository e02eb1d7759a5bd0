import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Messages from another process (the CrossProcessProbe program) to a port published here:
/// delivered once each, in order, on the owner's thread; held while the owner loop does not run;
/// bounded by the queue limit through credits (X3–X5).
@Suite(.serialized) struct CrossProcessDeliveryTests {
    /// A published port on a loop thread of its own, recording what its handler saw.
    final class Receiver: @unchecked Sendable {
        let thread: RunLoopThread
        let port: MessagePort
        let published: PublishedMessagePort
        let seen = Recorder<(msgid: UInt32, onOwner: Bool, bytes: Int)>()
        private let expected: Int
        let allArrived = Signal()

        init(_ directory: NameDirectory, name: String, queueLimit: Int, expecting expected: Int,
             options: CrossProcessPortOptions = CrossProcessPortOptions()) throws {
            thread = try RunLoopThread(name: "xproc-owner")
            port = MessagePort(queueLimit: queueLimit)
            self.expected = expected
            let loop = thread.loop
            port.setHandler { [seen, allArrived] message in
                seen.append((message.msgid, loop.isCurrentThread, message.components.reduce(0) { $0 + $1.count }))
                if seen.values.count == expected { allArrived.fire() }
            }
            thread.loop.add(port, forMode: .default)
            published = try directory.registry.publish(port, as: name, on: thread.loop, options: options)
        }

        func stop() {
            published.unpublish()
            port.invalidate()
            thread.stop()
        }
    }

    /// The probe sends `count` messages (of `size` bytes, when given) to the port `receiver`
    /// published as `name`, each send waiting up to `timeoutMs` for room: every send succeeds, every
    /// message arrives, in order, and the probe exits cleanly. Returns what the handler saw.
    private func probeSends(_ count: Int, size: Int? = nil, timeoutMs: Int, to receiver: Receiver, as name: String,
                            in directory: NameDirectory, seconds: Double = 20) throws -> [(msgid: UInt32, onOwner: Bool, bytes: Int)] {
        let sender = try CrossProcessProbeProcess(["send", directory.path, name, "\(count)", "\(timeoutMs)"] + (size.map { ["\($0)"] } ?? []))
        #expect(sender.waitForLine(startingWith: "DONE", seconds: seconds) == "DONE \(count) 0")
        #expect(receiver.allArrived.wait(seconds: 30))
        let seen = receiver.seen.values
        #expect(seen.map(\.msgid) == (0..<count).map(UInt32.init))
        #expect(sender.waitForExit() == 0)
        return seen
    }

    /// ``probeSends(_:size:timeoutMs:to:as:in:seconds:)`` to a receiver of its own published as
    /// `name`, in a name directory of its own; both are removed afterwards.
    private func probeSends(_ count: Int, size: Int, timeoutMs: Int, toNew name: String, queueLimit: Int,
                            options: CrossProcessPortOptions = CrossProcessPortOptions(),
                            seconds: Double) throws -> [(msgid: UInt32, onOwner: Bool, bytes: Int)] {
        let directory = NameDirectory()
        defer { directory.remove() }
        let receiver = try Receiver(directory, name: name, queueLimit: queueLimit, expecting: count, options: options)
        defer { receiver.stop() }
        return try probeSends(count, size: size, timeoutMs: timeoutMs, to: receiver, as: name, in: directory, seconds: seconds)
    }

    @Test func everyMessageArrivesOnceInOrderOnTheOwnerThread() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let receiver = try Receiver(directory, name: "order", queueLimit: 5, expecting: 300)
        defer { receiver.stop() }
        let seen = try probeSends(300, size: 64, timeoutMs: 10000, to: receiver, as: "order", in: directory)
        #expect(seen.allSatisfy { $0.onOwner && $0.bytes == 64 })
        #expect(receiver.published.statistics.messagesReceived == 300)
        // The last handler call signalled from inside; its delivery is counted once it returns.
        #expect(receiver.port.waitForRunningHandlers(timeout: .seconds(10)))
        #expect(receiver.port.statistics.delivered == 300)
    }

    @Test func pureSignalsArriveOnceInOrderWhenReadManyPerCall() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        // 64 credits: the sender runs ahead, so the publisher reads many frames per recvmmsg.
        let receiver = try Receiver(directory, name: "signals", queueLimit: 64, expecting: 3000)
        defer { receiver.stop() }
        let seen = try probeSends(3000, timeoutMs: 10000, to: receiver, as: "signals", in: directory, seconds: 60)
        #expect(seen.allSatisfy { $0.onOwner && $0.bytes == 0 })
        #expect(receiver.published.statistics.messagesReceived == 3000)
    }

    @Test func aPublisherWithOneReceiveSlotGetsEveryMessage() throws {
        // A 1 MiB maximum leaves room for one receive slot: one frame per call.
        let seen = try probeSends(500, size: 100, timeoutMs: 10000, toNew: "one-slot", queueLimit: 16,
                                  options: CrossProcessPortOptions(maximumMessageSize: 1 << 20), seconds: 60)
        #expect(seen.allSatisfy { $0.bytes == 100 })
    }

    @Test func largeMessagesWaitForRoomInTheSocket() throws {
        // 64 credits of 60 KB are more than a socket buffer holds: sends also wait for room.
        let seen = try probeSends(120, size: 60000, timeoutMs: 20000, toNew: "large", queueLimit: 64, seconds: 60)
        #expect(seen.allSatisfy { $0.bytes == 60000 })
    }

    @Test func messagesLargerThanTheSendersKeptBufferArriveWhole() throws {
        // A sender encodes frames of up to 64 KiB in a buffer it keeps; larger ones in one of
        // their own.
        let seen = try probeSends(20, size: 150_000, timeoutMs: 20000, toNew: "huge", queueLimit: 8,
                                  options: CrossProcessPortOptions(maximumMessageSize: 1 << 20), seconds: 60)
        #expect(seen.count == 20)
        #expect(seen.allSatisfy { $0.bytes == 150_000 })
    }

    @Test func aFullSocketBoundsSendsEvenWithCreditsLeft() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let receiver = try Receiver(directory, name: "socket-full", queueLimit: 64, expecting: 1)
        defer { receiver.stop() }
        let release = holdLoop(receiver.thread)
        // 64 credits, but the socket holds only a few 60 KB frames: with a deadline of now the
        // sends beyond what it holds fail at once (nothing is buffered in the sender).
        let sender = try CrossProcessProbeProcess(["send", directory.path, "socket-full", "64", "0", "60000"])
        let done = sender.waitForLine(startingWith: "DONE")?.split(separator: " ").compactMap { Int($0) } ?? []
        #expect(done.count == 2)
        let sent = done.first ?? 0
        #expect(sent >= 1 && sent < 64)
        #expect(sender.lines(startingWith: "SENT").count == sent)
        release.fire()
        #expect(receiver.allArrived.wait(seconds: 30))
        #expect(sender.waitForExit() == 0)
    }

    @Test func threadsSharingARemotePortKeepTheirOwnOrder() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "shared", "3"])
        defer { publisher.kill9() }
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        let remote = try directory.registry.remotePort(named: "shared")
        let threads = 4
        let perThread = 150
        let finished = DispatchSemaphore(value: 0)
        let failures = Recorder<UInt32>()
        for thread in 0..<threads {
            Thread.detachNewThread {
                for index in 0..<perThread {
                    let msgid = UInt32(thread * 10_000 + index)
                    if !remote.send(before: Date(timeIntervalSinceNow: 20), msgid: msgid) { failures.append(msgid) }
                }
                finished.signal()
            }
        }
        for _ in 0..<threads { #expect(finished.wait(timeout: .now() + 60) == .success) }
        #expect(failures.values.isEmpty)
        let last = (0..<threads).map { "MSG \($0 * 10_000 + perThread - 1) 1" }
        for line in last { #expect(publisher.waitForLine(startingWith: line) != nil) }
        let delivered = publisher.lines(startingWith: "MSG").compactMap { UInt32($0.split(separator: " ")[1]) }
        #expect(delivered.count == threads * perThread)
        for thread in 0..<threads {
            let mine = delivered.filter { Int($0) / 10_000 == thread }
            #expect(mine == (0..<perThread).map { UInt32(thread * 10_000 + $0) })
        }
    }

    @Test func messagesAreHeldWhileTheOwnerLoopIsBusyAndZeroDeadlineSendsFailAtOnce() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let receiver = try Receiver(directory, name: "held", queueLimit: 3, expecting: 3)
        defer { receiver.stop() }
        let release = holdLoop(receiver.thread)
        // Credits = the queue limit (3): three sends succeed while nothing is delivered; the next
        // ones, with a deadline of now, return false at once (the zero-timeout doorbell).
        let sender = try CrossProcessProbeProcess(["send", directory.path, "held", "5", "0"])
        #expect(sender.waitForLine(startingWith: "DONE") == "DONE 3 2")
        #expect(sender.lines(startingWith: "REFUSED") == ["REFUSED 3", "REFUSED 4"])
        #expect(receiver.seen.values.isEmpty)
        release.fire()
        #expect(receiver.allArrived.wait(seconds: 30))
        #expect(receiver.seen.values.map(\.msgid) == [0, 1, 2])
        #expect(sender.waitForExit() == 0)
    }

    @Test func aSenderWaitsForCreditsUntilTheReceiverTakesMessages() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let receiver = try Receiver(directory, name: "credits", queueLimit: 2, expecting: 40)
        defer { receiver.stop() }
        let release = holdLoop(receiver.thread)
        let sender = try CrossProcessProbeProcess(["send", directory.path, "credits", "40", "20000"])
        #expect(sender.waitForLine(startingWith: "SENT 1") != nil)
        // Held: the sender has spent its two credits and waits; the port never holds more than the limit.
        #expect(receiver.port.statistics.queued <= 2)
        #expect(sender.lines(startingWith: "SENT 2").isEmpty)
        release.fire()
        #expect(sender.waitForLine(startingWith: "DONE") == "DONE 40 0")
        #expect(receiver.allArrived.wait(seconds: 30))
        #expect(receiver.seen.values.map(\.msgid) == (0..<40).map(UInt32.init))
        #expect(sender.waitForExit() == 0)
    }
}
