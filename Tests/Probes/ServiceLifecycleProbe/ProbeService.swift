import Dispatch
import Foundation
import PortRunLoopKit
import ServiceLifecycle

/// The probe's own service: shows that the main actor is served on the main thread while the group
/// runs and while it shuts down, and queues work on the worker thread during the shutdown (the
/// worker's service, shut down after this one, must let it run).
struct ProbeService: Service {
    let worker: RunLoopThread
    let stopsMainLoop: Bool

    func run() async throws {
        let onMain = await MainActor.run { Thread.isMainThread }
        let workerName = try await worker.loop.submit { Thread.current.name ?? "?" }
        emit("ready main-actor-on-main=\(onMain) worker=\(workerName)")
        if stopsMainLoop {
            DispatchQueue.main.async { PortRunLoop.main.stop() }
        }
        do {
            try await gracefulShutdown()
        } catch {
            recorded.append("FAIL cancelled instead of shut down gracefully")
            return
        }
        let stillOnMain = await MainActor.run { Thread.isMainThread }
        recorded.append("shutdown main-actor-on-main=\(stillOnMain)")
        worker.loop.perform { recorded.append("worker ran work queued at shutdown") }
    }
}
