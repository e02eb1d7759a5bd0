import Foundation
import PortRunLoopKit
import Synchronization

/// What a stress port's handler records, kept apart from the port so the handler does not retain
/// the port (no cycle) and the verifier can read it after the port is gone.
///
/// Thread-safety: `Sendable`; written by the handler on the consumer's thread, read after joins.
final class StressPortRecords: Sendable {
    /// Per producer: sequence numbers in delivery order.
    let delivered: Locked<[[UInt32]]>
    let deliveredCount = Atomic<Int>(0)
    /// Deliveries that started after `invalidate()` (and the wait for running handlers) returned.
    let late = Atomic<Int>(0)
    /// Deliveries on a thread other than the consumer loop's.
    let wrongThread = Atomic<Int>(0)
    /// Payloads that did not match their msgid.
    let corrupt = Atomic<Int>(0)
    /// Set once `invalidate()` and `waitForRunningHandlers()` have returned.
    let closed = Atomic<Bool>(false)

    init(producers: Int) {
        delivered = Locked(Array(repeating: [], count: producers))
    }
}

/// One MessagePort of a stress consumer, with its records.
///
/// Thread-safety: `Sendable`.
final class StressPort: Sendable {
    let uid: Int
    let consumerID: Int
    let port: MessagePort
    let records: StressPortRecords
    /// Set (before `invalidate()` is called) when chaos invalidates the port: its messages may then
    /// be discarded rather than delivered.
    let invalidatedByChaos = Atomic<Bool>(false)

    init(uid: Int, consumerID: Int, loopID: ObjectIdentifier, producers: Int, queueLimit: Int) {
        self.uid = uid
        self.consumerID = consumerID
        self.port = MessagePort(queueLimit: queueLimit)
        let records = StressPortRecords(producers: producers)
        self.records = records
        port.setHandler { message in
            if records.closed.load(ordering: .acquiring) { records.late.add(1, ordering: .relaxed) }
            if ObjectIdentifier(PortRunLoop.current) != loopID { records.wrongThread.add(1, ordering: .relaxed) }
            let producer = StressTag.producer(of: message.msgid)
            let seq = StressTag.seq(of: message.msgid)
            if let data = message.components.first, !StressTag.verify(data, producer: producer, seq: seq) {
                records.corrupt.add(1, ordering: .relaxed)
            }
            records.delivered.withLock { lists in
                if producer < lists.count { lists[producer].append(seq) } else { records.corrupt.add(1, ordering: .relaxed) }
            }
            records.deliveredCount.add(1, ordering: .relaxed)
        }
    }

    /// Chaos: invalidates the port, waits for a handler that may be running, then marks it closed
    /// so any later handler start is counted as late.
    func invalidateForChaos() {
        invalidatedByChaos.store(true, ordering: .sequentiallyConsistent)
        port.invalidate()
        _ = port.waitForRunningHandlers()
        records.closed.store(true, ordering: .releasing)
    }
}
