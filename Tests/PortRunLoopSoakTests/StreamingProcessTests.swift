import Foundation
import PortRunLoopTestSupport
import Testing

/// The child processes the tests and the soak start (``StreamingProcess``): a child holds no
/// descriptor of ours but its standard three, so a long-lived child (a daemon, the soak) cannot hide
/// another child's end or keep another's pipe open; its exit is seen by its own `waitpid`; and
/// releasing the object kills it.
@Suite(.timeLimit(.minutes(1))) struct StreamingProcessTests {
    /// With a pipe of ours open and not close-on-exec, the child's descriptors are 0, 1, 2 and the
    /// one `ls` opens to list them (Foundation's `Process` also hands its child the socket it
    /// watches for the child's end).
    @Test func aChildHasOnlyTheStandardDescriptors() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let child = try StreamingProcess("/bin/ls", ["/proc/self/fd"])
        defer { child.stop() }
        #expect(child.waitForExit(seconds: 20) == 0, "\(child.output)")
        let descriptors = child.output.split(separator: "\n").compactMap { Int($0) }.sorted()
        #expect(descriptors == [0, 1, 2, 3], "\(child.output)")
    }

    /// A child's exit is seen while another child lives on.
    @Test func anExitIsSeenWhileAnotherChildLives() throws {
        let sleeper = try StreamingProcess("/bin/sleep", ["30"])
        defer { sleeper.stop() }
        let quick = try StreamingProcess("/bin/sh", ["-c", "echo done; exit 7"])
        #expect(quick.waitForExit(seconds: 20) == 7)
        #expect(quick.output == "done\n")
        #expect(sleeper.isRunning)
    }

    /// Releasing the object kills its child (SIGKILL) and reaps it.
    @Test func releasingTheObjectKillsTheChild() throws {
        var pid: Int32 = 0
        do {
            let sleeper = try StreamingProcess("/bin/sleep", ["30"])
            pid = sleeper.pid
            #expect(kill(pid, 0) == 0)
        }
        #expect(eventually(seconds: 10) { kill(pid, 0) != 0 }, "pid \(pid) still exists")
    }
}
