import Foundation
import PortRunLoopKit

/// Apple's `MyThreadedClass` from "Delivering Notifications To Particular Threads", line for line
/// on PortRunLoopKit: a lock-protected array, a port scheduled in the chosen thread's loop, a
/// `handleMessage` that drains the array until empty, and `processNotification` that redirects
/// when called on the wrong thread. (PortRunLoopKit also ships this as a reusable type; the demo
/// spells it out so the article's structure stays visible.)
final class ThreadedObserver: MessagePortDelegate, @unchecked Sendable {
    // The article's four instance variables.
    private var notifications: [Notification] = []      // guarded by notificationLock
    private var head = 0                                 // first unread index; guarded likewise
    private let notificationLock = NSLock()
    private var notificationThread: PortRunLoop?        // set once, on the chosen thread
    private let notificationPort: MessagePort

    // Evidence for the demo.
    let stats = DemoStats()
    private let onItem: @Sendable (Notification) -> Void

    init(queueLimit: Int, onItem: @escaping @Sendable (Notification) -> Void) {
        self.notificationPort = MessagePort(queueLimit: queueLimit)
        self.onItem = onItem
    }

    /// `setUpThreadingSupport`: run on the thread that must handle the notifications.
    func setUpThreadingSupport() {
        guard notificationThread == nil else { return }
        notificationThread = PortRunLoop.current
        notificationPort.delegate = self
        PortRunLoop.current.add(notificationPort, forMode: .common)
    }

    /// `handleMachMessage:`: ignore the message, drain the array until it is empty, unlocking
    /// around each call (port messages may be dropped; the array never loses one).
    func handleMessage(_ message: MessagePort.Message) {
        var handledInBatch = 0
        notificationLock.lock()
        while head < notifications.count {
            // `[notifications objectAtIndex:0]; removeObjectAtIndex:0` — O(1) here via a head index
            // (NSMutableArray is a deque; a Swift Array's removeFirst() would make this O(n²)).
            let notification = notifications[head]
            head += 1
            if head == notifications.count { notifications.removeAll(keepingCapacity: true); head = 0 }
            notificationLock.unlock()
            processNotification(notification)
            handledInBatch += 1
            notificationLock.lock()
        }
        notificationLock.unlock()
        stats.recordBatch(items: handledInBatch, thread: Thread.current.name ?? "?")
    }

    /// `processNotification:`: forward from the wrong thread, handle on the right one.
    func processNotification(_ notification: Notification) {
        if notificationThread?.isCurrentThread != true {
            notificationLock.lock()
            notifications.append(notification)
            notificationLock.unlock()
            // sendBeforeDate:[NSDate date] — try once; a full port drops the doorbell, not the item.
            if notificationPort.send(before: Date()) {
                stats.doorbellSent()
            } else {
                stats.doorbellDropped()
            }
        } else {
            onItem(notification)
        }
    }
}
