import Foundation
import PortRunLoopKit

/// Posts made on other threads for a connection's loop, handed over a batch at a time.
///
/// A transport's connection belongs to its loop, so a post from another thread is queued here and
/// sent by the loop. The first post of a batch tells its caller to schedule one ``drain(_:)`` on
/// the loop (one `perform`, so one doorbell); posts that come before that drain runs only join the
/// queue, and the drain takes them all at once, in arrival order. A burst from other threads then
/// costs one hop per batch instead of one per post, and each poster's order is kept.
///
/// The drain swaps the queue's array with one it keeps, so the two buffers are handed back and
/// forth with their storage: a steady stream allocates nothing per batch.
///
/// Thread-safety: `@unchecked Sendable`: the queue is behind its ``TracedMutex``; `spare` is
/// touched only by ``drain(_:)``, on the loop's thread.
package final class PostBatches<Item: Sendable>: @unchecked Sendable {
    private struct Queue {
        var items: [Item] = []
        /// A drain is scheduled: later posts only join the queue.
        var scheduled = false
    }

    private let queue = TracedMutex(Queue())
    private var spare: [Item] = [] // the loop's thread only

    /// An empty queue.
    ///
    /// Thread-safety: any thread.
    package init() {}

    /// Queues `item`. Returns true when the caller must schedule ``drain(_:)`` on the loop: the
    /// first post since the last drain took the queue.
    ///
    /// Thread-safety: any thread.
    package func append(_ item: Item) -> Bool {
        queue.withLock { queue in
            queue.items.append(item)
            defer { queue.scheduled = true }
            return !queue.scheduled
        }
    }

    /// Takes every queued post and hands them to `send`, in arrival order (nothing when the queue is
    /// empty); the next post schedules a drain again.
    ///
    /// Thread-safety: the loop's thread.
    package func drain(_ send: ([Item]) -> Void) {
        var batch: [Item] = []
        swap(&batch, &spare) // uniquely referenced, so the queue appends in place
        queue.withLock { queue in
            swap(&batch, &queue.items)
            queue.scheduled = false
        }
        if !batch.isEmpty { send(batch) }
        batch.removeAll(keepingCapacity: true)
        spare = batch
    }

    /// Removes and returns every queued post, for a transport whose loop is gone: they will not be
    /// sent.
    ///
    /// Thread-safety: any thread.
    package func removeAll() -> [Item] {
        queue.withLock { queue in
            defer { queue = Queue() }
            return queue.items
        }
    }
}
