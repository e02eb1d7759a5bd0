import Foundation

/// A callout a ``PortRunLoop`` makes when it is about to sleep — CFRunLoop's
/// `kCFRunLoopBeforeWaiting` activity, reduced to what ``ThreadNotificationQueue``'s `.whenIdle`
/// posting style needs.
///
/// The loop calls ``callout`` with the running mode right before it would block, and only when
/// nothing is queued for it (no perform, no ready port, no wake or stop request). A callout that did
/// work returns true; the loop then takes another full turn instead of sleeping, so anything the
/// work queued is handled first, and the loop sleeps once a turn finds every callout idle.
/// ``shutDown`` is called once when the loop shuts down. Both run on the loop's thread.
///
/// Thread-safety: owner thread of the loop it is added to only.
final class BeforeWaitingObserver {
    let callout: (RunLoop.Mode) -> Bool
    let shutDown: () -> Void

    init(callout: @escaping (RunLoop.Mode) -> Bool, shutDown: @escaping () -> Void) {
        self.callout = callout
        self.shutDown = shutDown
    }
}

extension PortRunLoop {
    /// Adds `observer` (owner thread only).
    func addBeforeWaitingObserver(_ observer: BeforeWaitingObserver) {
        preconditionOnLoopThread("PortRunLoop.addBeforeWaitingObserver")
        beforeWaitingObservers.append(observer)
    }

    /// Called by `runSpecific` right before `waitForEvents` (only when observers exist). Returns true
    /// when a callout did work, in which case the run takes another turn instead of sleeping.
    func notifyBeforeWaiting(mode: RunLoop.Mode) -> Bool {
        if inbox.withLock({ $0.hasWork }) { return false } // not idle: the wait will only poll
        var didWork = false
        for observer in beforeWaitingObservers where observer.callout(mode) { didWork = true }
        return didWork
    }

    /// Called by `shutDown()`: tells every observer, once, and forgets them.
    func notifyBeforeWaitingObserversOfShutDown() {
        let observers = beforeWaitingObservers
        beforeWaitingObservers.removeAll()
        for observer in observers { observer.shutDown() }
    }
}
