import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// `PortRunLoop.main` drains `DispatchQueue.main` and `@MainActor` jobs when the main thread runs it.
///
/// swift-testing runs tests (and exit tests' bodies) off the main thread, and its entry point hands
/// the main thread to `dispatch_main()`, so a real main thread running `PortRunLoop.main.run()` can
/// only be observed in another program: the `MainQueueProbe` executable
/// (Tests/Probes/MainQueueProbe), which `swift build` / `swift test` build next to the test
/// bundle. It checks dispatch async/sync, a burst of 1000 ordered blocks, `Task { @MainActor }`,
/// `MainActor.run` and `assumeIsolated` on the main thread, then stops the loop, and exits 0 only
/// if all of it happened.
@Suite(.timeLimit(.minutes(1))) struct MainQueueDrainTests {
    /// Runs the probe with `arguments`; returns its exit status and output. Bounded: the probe has a
    /// 30 s watchdog, and the test kills it after 50 s.
    private func runProbe(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let probe = Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent("MainQueueProbe")
        guard FileManager.default.isExecutableFile(atPath: probe.path) else {
            Issue.record("MainQueueProbe was not built at \(probe.path) (build the package first)")
            return (-1, "")
        }
        return try runTool(probe.path, arguments, seconds: 50, includingStandardError: false)
    }

    @Test func mainQueueAndMainActorRunInPortRunLoopMain() throws {
        let (status, output) = try runProbe([])
        #expect(status == 0, "probe output:\n\(output)")
        #expect(output.contains("dispatch-async main=true"))
        #expect(output.contains("mainactor-task main=true"))
        #expect(output.hasSuffix("PASS\n"))
    }

    /// This test process's main thread is in `dispatchMain()` (swift-testing's async entry point):
    /// libdispatch serves the main queue itself and has no handle to give. Fetching the main loop
    /// must not disturb that.
    @Test func mainLoopLeavesADispatchMainProcessAlone() async {
        #expect(PortRunLoop.main.name == "main")
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.main.async { done.resume() }
        }
    }

    @Test func worksWhenTheMainLoopIsFirstUsedOffTheMainThread() throws {
        let (status, output) = try runProbe(["touch-main-loop-first-off-main"])
        #expect(status == 0, "probe output:\n\(output)")
        #expect(output.hasSuffix("PASS\n"))
    }

    /// corelibs' `test_mainDispatchQueueCallout`: a block queued on the main thread before its
    /// loop ever ran is run by the first `run(mode:before:)`, whichever thread made the main loop.
    @Test(arguments: [false, true]) func theFirstRunServesABlockQueuedBeforeIt(mainLoopMadeOffMain: Bool) throws {
        let (status, output) = try runProbe(mainLoopMadeOffMain ? ["touch-main-loop-first-off-main", "first-run-only"] : ["first-run-only"])
        #expect(status == 0, "probe output:\n\(output)")
        #expect(output == "first-run-block main=true\nfirst-run returned=true\nPASS\n")
    }
}
