import Foundation
import PortRunLoopKit
import Synchronization
import Testing

/// Many producers, one port: nothing lost, nothing duplicated, FIFO per producer.
@Suite(.timeLimit(.minutes(3))) struct ProducerFIFOTests {
    @Test func fourProducersHundredThousandMessagesEach() throws {
        let producers = 4
        let perProducer = 100_000
        let thread = try RunLoopThread(name: "consumer")
        defer { thread.stop() }
        let port = MessagePort(queueLimit: 256)
        // Written only on the consumer thread; read after a performAndWait barrier.
        final class Tally: @unchecked Sendable {
            var next = [Int](repeating: 0, count: 4)
            var outOfOrder = 0
            var total = 0
        }
        let tally = Tally()
        port.setHandler { message in
            let producer = Int(message.msgid >> 24)
            let seq = Int(message.msgid & 0xFF_FFFF)
            if seq != tally.next[producer] { tally.outOfOrder += 1 }
            tally.next[producer] = seq + 1
            tally.total += 1
        }
        thread.loop.add(port, forMode: .common)
        let group = DispatchGroup()
        let failedSends = Atomic<Int>(0)
        for p in 0..<producers {
            group.enter()
            Thread.detachNewThread {
                for seq in 0..<perProducer {
                    if !port.send(before: .distantFuture, msgid: UInt32(p << 24 | seq)) {
                        failedSends.add(1, ordering: .relaxed)
                    }
                }
                group.leave()
            }
        }
        #expect(group.wait(timeout: .now() + 120) == .success)
        try thread.loop.performAndWait {}
        #expect(failedSends.load(ordering: .relaxed) == 0)
        let (total, outOfOrder, next) = try thread.loop.performAndWait { (tally.total, tally.outOfOrder, tally.next) }
        #expect(total == producers * perProducer, "lost or duplicated messages")
        #expect(outOfOrder == 0)
        #expect(next == [Int](repeating: perProducer, count: producers))
        #expect(port.statistics.delivered == producers * perProducer)
        #expect(port.statistics.discarded == 0)
    }
}
