import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Loop threads blocked on each other through full ports: a cycle that can never end is broken at
/// its sends (they return false); waits that can end are left alone.
@Suite(.timeLimit(.minutes(1))) struct BlockingWaitCycleTests {
    /// A port of `thread`'s loop, scheduled in a mode the loop never runs, and full: only an
    /// invalidation (or the loop running that mode) ends a wait for room in it.
    private func fullPort(on thread: RunLoopThread) -> MessagePort {
        let port = MessagePort(queueLimit: 1)
        thread.loop.add(port, forMode: RunLoop.Mode("never-run"))
        #expect(port.send(before: .distantFuture))
        return port
    }

    @Test func twoLoopsSendingToEachOthersFullPortsDoNotBothWaitForever() throws {
        let a = try RunLoopThread(name: "cycle-a")
        let b = try RunLoopThread(name: "cycle-b")
        defer { a.stop(); b.stop() }
        let portA = fullPort(on: a)
        let portB = fullPort(on: b)
        let results = Recorder<Bool>()
        let finished = DispatchSemaphore(value: 0)
        a.loop.perform { results.append(portB.send(before: .distantFuture)); finished.signal() }
        b.loop.perform { results.append(portA.send(before: .distantFuture)); finished.signal() }
        // Whichever send closes the cycle gives up at once; the other still waits (its port may
        // yet get room) until the ports go away.
        #expect(finished.wait(timeout: .now() + 30) == .success)
        #expect(results.values == [false])
        portA.invalidate()
        portB.invalidate()
        #expect(finished.wait(timeout: .now() + 30) == .success)
        #expect(results.values == [false, false])
        #expect(portA.statistics.rejected + portB.statistics.rejected == 2)
    }

    @Test func aCallIntoALoopBlockedOnTheCallersFullPortBreaksThatSend() throws {
        let a = try RunLoopThread(name: "call-cycle-a")
        let b = try RunLoopThread(name: "call-cycle-b")
        defer { a.stop(); b.stop() }
        let portA = fullPort(on: a)
        defer { portA.invalidate() }
        let sent = Locked<Bool?>(nil)
        b.loop.perform { sent.withLock { $0 = portA.send(before: .distantFuture) } }
        // a waits for b; b waits for room in a's port, which a (waiting) never makes.
        // Bounded, so that a cycle left unbroken fails the test (timed out) instead of hanging it.
        let answer = try a.loop.performAndWait(timeout: .seconds(20)) { try b.loop.performAndWait(timeout: .seconds(10)) { 42 } }
        #expect(answer == 42)
        #expect(sent.withLock { $0 } == false)
    }

    /// A request to another process made inside a call's wait waits on no loop: the call it is
    /// nested in still blocks the thread on the callee, and a send that closes a cycle through
    /// that call is broken while the request waits (it would otherwise wait for room forever).
    @Test func aCallStaysInTheGraphWhileARequestNestedInItWaits() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let a = try RunLoopThread(name: "nested-a")
        let b = try RunLoopThread(name: "nested-b")
        let answerer = try RunLoopThread(name: "nested-answerer")
        defer { a.stop(); b.stop(); answerer.stop() }
        let portA = fullPort(on: a)
        defer { portA.invalidate() }
        let requestArrived = Signal(), answerNow = Signal()
        let server = MessagePort(queueLimit: 4)
        server.setHandler { message in
            requestArrived.fire()
            _ = answerNow.wait()
            message.reply(msgid: message.msgid, before: Date(timeIntervalSinceNow: 5))
        }
        answerer.loop.add(server, forMode: .common)
        let published = try directory.registry.publish(server, as: "nested", on: answerer.loop)
        defer { published.unpublish() }
        let remote = try directory.registry.remotePort(named: "nested")
        defer { remote.invalidate() }

        // a calls b (the outer wait); b, once a's nested request is waiting for its answer, sends
        // to a's full port: b waits for a, which waits for b.
        let callStarted = Signal(), sendReturned = Signal(), callReturned = Signal()
        let sent = Locked<Bool?>(nil)
        a.loop.perform {
            _ = try? b.loop.performAndWait {
                callStarted.fire()
                _ = requestArrived.wait()
                // Served by a only at its next turn: inside the nested request's wait, which is then
                // entered (the request was sent before it).
                try? a.loop.performAndWait {}
                sent.withLock { $0 = portA.send(before: .distantFuture) }
                sendReturned.fire()
            }
            callReturned.fire()
        }
        #expect(callStarted.wait())
        let replied = Locked<Bool?>(nil)
        let requestDone = Signal()
        Thread.detachNewThread {
            // Served by a's loop inside its wait for b: the nested request.
            let answered = try? a.loop.performAndWait { () -> Bool in
                (try? remote.sendRequest(msgid: 9, sendTimeout: .seconds(5), receiveTimeout: .seconds(30))) != nil
            }
            replied.withLock { $0 = answered }
            requestDone.fire()
        }
        let broken = sendReturned.wait(seconds: 20)
        #expect(broken, "b's send into a's full port was not broken while a's nested request waited")
        if !broken { portA.invalidate() } // lets the rest end
        answerNow.fire()
        #expect(requestDone.wait())
        #expect(callReturned.wait())
        #expect(sent.withLock { $0 } == false)
        #expect(replied.withLock { $0 } == true)
    }

    @Test func aSendToABusyLoopThatWaitsOnNobodyKeepsWaitingForRoom() throws {
        let a = try RunLoopThread(name: "busy-a")
        let b = try RunLoopThread(name: "busy-b")
        defer { a.stop(); b.stop() }
        let port = MessagePort(queueLimit: 1)
        let delivered = Recorder<UInt32>()
        port.setHandler { delivered.append($0.msgid) }
        a.loop.add(port, forMode: .common)
        defer { port.invalidate() }
        let release = holdLoop(a)
        #expect(port.send(before: .distantFuture, msgid: 1))
        let sent = Signal()
        let result = Locked<Bool?>(nil)
        b.loop.perform {
            result.withLock { $0 = port.send(before: .distantFuture, msgid: 2) }
            sent.fire()
        }
        release.fire() // a drains the port; b's send gets room
        #expect(sent.wait())
        #expect(result.withLock { $0 } == true)
        try a.loop.performAndWait {}
        #expect(delivered.values == [1, 2])
    }
}
