import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// MessagePort delivery: held until the loop runs, FIFO, payload intact, on the loop's thread.
@Suite(.timeLimit(.minutes(1))) struct PortDeliveryTests {
    final class Collector: MessagePortDelegate, @unchecked Sendable {
        var messages: [MessagePort.Message] = []
        var threads: [pthread_t] = []
        func handleMessage(_ message: MessagePort.Message) {
            messages.append(message)
            threads.append(pthread_self())
        }
    }

    @Test func messagesSentBeforeTheLoopRunsAreDeliveredWhenItRuns() throws {
        try onFreshThread(name: "owner") {
            let loop = PortRunLoop.current
            let port = MessagePort(queueLimit: 10)
            let collector = Collector()
            port.delegate = collector
            loop.add(port, forMode: .default)
            let reply = MessagePort()
            // Sent from another thread while this loop is not running.
            let sent = Signal()
            Thread.detachNewThread {
                for i in 0..<10 { port.send(before: .distantFuture, msgid: UInt32(i), components: [Data([UInt8(i)])], from: reply) }
                sent.fire()
            }
            #expect(sent.wait())
            #expect(collector.messages.isEmpty)
            #expect(port.statistics.queued == 10)
            #expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)))
            #expect(collector.messages.map(\.msgid) == Array(0..<10))
            #expect(collector.messages.map { $0.components.first?.first } == (0..<10).map { UInt8($0) })
            #expect(collector.messages.allSatisfy { $0.replyPort === reply && $0.receivePort === port })
            let owner = pthread_self()
            #expect(collector.threads.allSatisfy { pthread_equal($0, owner) != 0 }, "handled on the loop's thread")
            #expect(port.statistics.delivered == 10)
            #expect(port.statistics.queued == 0)
        }
    }

    @Test func portSentBeforeItIsScheduledDeliversOnceScheduled() throws {
        try onFreshThread {
            let port = MessagePort()
            #expect(port.send(before: Date(), msgid: 7))
            let collector = Collector()
            port.delegate = collector
            let loop = PortRunLoop.current
            loop.add(port, forMode: .default)
            #expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)))
            #expect(collector.messages.map(\.msgid) == [7])
        }
    }

    @Test func messageWithNoReceiverIsCountedAsDiscarded() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let port = MessagePort()
            loop.add(port, forMode: .default)
            do {
                let collector = Collector()
                port.delegate = collector
            } // the delegate is held weakly: gone now
            #expect(port.send(before: Date()))
            loop.run(mode: .default, before: Date(timeIntervalSinceNow: 0.5))
            #expect(port.statistics.delivered == 0)
            #expect(port.statistics.discarded == 1)
        }
    }

    @Test func handlerClosureTakesPrecedenceOverDelegate() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let port = MessagePort()
            let collector = Collector()
            port.delegate = collector
            let viaClosure = Recorder<UInt32>()
            port.setHandler { viaClosure.append($0.msgid) }
            loop.add(port, forMode: .default)
            port.send(before: Date(), msgid: 3)
            #expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)))
            #expect(viaClosure.values == [3])
            #expect(collector.messages.isEmpty)
        }
    }
}
