import Foundation
import PortRunLoopKit

extension RunLoopThread {
    /// ``RunLoopThread/stop()`` — which handles the work queued before it, then joins the thread —
    /// made on a thread of its own, so that the awaiting task does not hold one of the cooperative
    /// pool's few threads for as long as the loop takes to finish its queued work (work that may
    /// itself wait for tasks on that pool).
    func stopAwaitingTheJoin() async {
        if isStopped { return }
        await withCheckedContinuation { (joined: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread { [self] in
                stop()
                joined.resume()
            }
        }
    }
}
