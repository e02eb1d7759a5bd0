import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// RunLoopObserver: order among observers, repeats, no re-entry, removal, containment and
/// invalidation from another thread.
@Suite(.timeLimit(.minutes(1))) struct ObserverOrderTests {
    @Test func observersAreCalledByOrderThenInTheOrderTheyWereAdded() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            loop.add(MessagePort(), forMode: .default)
            let calls = Recorder<String>()
            for (name, order) in [("two", 2), ("minusOne", -1), ("zeroA", 0), ("zeroB", 0)] {
                loop.add(RunLoopObserver(activities: .beforeTimers, order: order) { _, _ in calls.append(name) }, forMode: .default)
            }
            loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: false)
            #expect(calls.values == ["minusOne", "zeroA", "zeroB", "two"])
        }
    }

    @Test func aNonRepeatingObserverIsInvalidatedAfterOneCall() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            loop.add(MessagePort(), forMode: .default)
            let calls = Recorder<RunLoopActivity>()
            let observer = RunLoopObserver(activities: .allActivities, repeats: false) { _, activity in calls.append(activity) }
            loop.add(observer, forMode: .default)
            loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: false)
            loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: false)
            #expect(calls.values == [.entry])
            #expect(!observer.isValid)
            #expect(!loop.contains(observer, inMode: .default))
        }
    }

    @Test func anObserverIsNotCalledAgainFromANestedRunItStarted() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            loop.add(MessagePort(), forMode: .default)
            let calls = Recorder<RunLoopActivity>()
            let nested = Recorder<RunLoopActivity>()
            loop.add(RunLoopObserver(activities: .beforeTimers) { _, activity in
                calls.append(activity)
                if calls.count == 1 { PortRunLoop.current.run(mode: .default, timeout: 0, returnAfterSourceHandled: false) }
            }, forMode: .default)
            // A second observer sees the nested run's passes: the first is skipped there, not the run.
            loop.add(RunLoopObserver(activities: .beforeTimers, order: 1) { _, activity in nested.append(activity) }, forMode: .default)
            loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: false)
            #expect(calls.count == 1)
            #expect(nested.count == 2) // the nested run's pass, then the outer one's
        }
    }

    @Test func removalContainmentAndCommonModes() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let other = RunLoop.Mode("ObserverOrderTests.other")
            let observer = RunLoopObserver(activities: .entry) { _, _ in }
            loop.add(observer, forMode: .common)
            loop.add(observer, forMode: other)
            #expect(loop.contains(observer, inMode: .common))
            #expect(loop.contains(observer, inMode: .default))
            #expect(loop.contains(observer, inMode: other))
            loop.remove(observer, forMode: .common)
            #expect(!loop.contains(observer, inMode: .default))
            #expect(loop.contains(observer, inMode: other))
            #expect(observer.isValid)
            observer.invalidate()
            #expect(!loop.contains(observer, inMode: other))
            #expect(!observer.isValid)
        }
    }

    @Test func anObserverInvalidatedFromAnotherThreadIsNoLongerCalled() throws {
        let thread = try RunLoopThread(name: "observed")
        defer { thread.stop() }
        let calls = Recorder<RunLoopActivity>()
        let called = Signal()
        let observer = RunLoopObserver(activities: .beforeSources) { _, activity in
            calls.append(activity)
            called.fire()
        }
        thread.loop.add(observer, forMode: .common)
        try thread.loop.performAndWait {} // the observer is added
        thread.loop.wakeUp() // a pass after this reports before sources
        #expect(called.wait())
        observer.invalidate()
        try thread.loop.performAndWait {} // the invalidation has reached the loop
        let seen = calls.count
        try thread.loop.performAndWait {}
        try thread.loop.performAndWait {}
        #expect(calls.count == seen)
        #expect(!observer.isValid)
    }
}
