import Foundation
import PortRunLoopKit
import Testing

/// A request made on a loop's thread waits as `performAndWait` does: the loop serves synchronous
/// work addressed to it meanwhile, so an answering handler that first calls back into the
/// requesting loop (here with `performAndWait`) does not deadlock until the receive timeout.
@Suite(.timeLimit(.minutes(1))) struct CrossProcessRequestOnLoopTests {
    @Test func aRequestFromALoopThreadServesTheLoopWhileItWaits() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let requester = try RunLoopThread(name: "requester")
        defer { requester.stop() }
        let answerer = try RunLoopThread(name: "answerer")
        defer { answerer.stop() }
        let port = MessagePort(queueLimit: 4)
        port.setHandler { message in
            // Calls back into the requesting loop before answering: only a serving wait lets it run.
            let where_ = (try? requester.loop.performAndWait { Thread.current.name ?? "?" }) ?? "refused"
            message.reply(msgid: message.msgid, components: [Data(where_.utf8)], before: Date(timeIntervalSinceNow: 5))
        }
        answerer.loop.add(port, forMode: .common)
        let published = try directory.registry.publish(port, as: "callback", on: answerer.loop)
        defer { published.unpublish() }
        let remote = try directory.registry.remotePort(named: "callback")
        defer { remote.invalidate() }

        let outcome = try requester.loop.performAndWait { () -> (String, Double) in
            let start = Date()
            do {
                let reply = try remote.sendRequest(msgid: 7, sendTimeout: .seconds(5), receiveTimeout: .seconds(20))
                return (String(decoding: reply.components.first ?? Data(), as: UTF8.self), Date().timeIntervalSince(start))
            } catch {
                return ("\(error)", Date().timeIntervalSince(start))
            }
        }
        #expect(outcome.0 == "requester")
        #expect(outcome.1 < 10, "the request waited \(outcome.1) s: the loop was not served while it waited")
    }

    @Test func aRequestFromALoopThreadStillTimesOut() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let requester = try RunLoopThread(name: "requester")
        defer { requester.stop() }
        let answerer = try RunLoopThread(name: "silent")
        defer { answerer.stop() }
        let port = MessagePort(queueLimit: 4)
        port.setHandler { _ in } // never answers
        answerer.loop.add(port, forMode: .common)
        let published = try directory.registry.publish(port, as: "silent", on: answerer.loop)
        defer { published.unpublish() }
        let remote = try directory.registry.remotePort(named: "silent")
        defer { remote.invalidate() }
        let timedOut = try requester.loop.performAndWait { () -> Bool in
            do {
                _ = try remote.sendRequest(sendTimeout: .seconds(5), receiveTimeout: .milliseconds(200))
                return false
            } catch {
                return (error as? CrossProcessPortError) == .receiveTimedOut
            }
        }
        #expect(timedOut)
        // The loop is still usable afterwards (the temporary fd source is gone).
        #expect(try requester.loop.performAndWait { 42 } == 42)
    }

    @Test func aRequestFromALoopThreadEndsWhenThePublisherIsKilled() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "dies-mid-request", "5"])
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        let requester = try RunLoopThread(name: "requester")
        defer { requester.stop() }
        let remote = try directory.registry.remotePort(named: "dies-mid-request")
        let killer = Thread {
            _ = publisher.waitForLine(startingWith: "MSG 7")
            publisher.kill9()
        }
        killer.start()
        let outcome = try requester.loop.performAndWait { () -> (CrossProcessPortError?, Double) in
            let start = Date()
            do {
                _ = try remote.sendRequest(msgid: 7, sendTimeout: .seconds(5), receiveTimeout: .seconds(20))
                return (nil, Date().timeIntervalSince(start))
            } catch {
                return (error as? CrossProcessPortError, Date().timeIntervalSince(start))
            }
        }
        #expect(outcome.0 == CrossProcessPortError.peerDied)
        #expect(outcome.1 < 15, "the request waited \(outcome.1) s: the end did not complete its wait")
    }

    @Test func aRequestOnTheLoopThatReadsTheConnectionGetsItsReply() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "echo-on-loop", "5", "reply"])
        defer { publisher.kill9() }
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        let requester = try RunLoopThread(name: "requester")
        defer { requester.stop() }
        let remote = try directory.registry.remotePort(named: "echo-on-loop", readingOn: requester.loop)
        defer { remote.invalidate() }
        for round in 0..<20 {
            let reply = try requester.loop.performAndWait { () -> String in
                do {
                    let reply = try remote.sendRequest(msgid: UInt32(round), components: [Data("r\(round)".utf8)],
                                                       sendTimeout: .seconds(5), receiveTimeout: .seconds(20))
                    return "\(reply.msgid) \(String(decoding: reply.components.first ?? Data(), as: UTF8.self))"
                } catch {
                    return "\(error)"
                }
            }
            #expect(reply == "\(round + 1000) r\(round)")
        }
    }
}
