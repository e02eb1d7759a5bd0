import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A source cancelled from another thread, its fd closed and the number reused by a new watch on
/// the loop's own thread before the loop processed the cancellation: the new source must fire.
@Suite(.timeLimit(.minutes(1))) struct FileDescriptorReuseTests {
    @Test func aNewWatchOfAReusedFdNumberFiresAfterACrossThreadCancel() throws {
        let thread = try RunLoopThread(name: "fd-reuse")
        defer { thread.stop() }
        let first = Pipe2()
        let number = dup(first.readEnd)
        try #require(number >= 0)
        let old = try thread.loop.watch(fileDescriptor: number, for: .read) { _ in }
        try thread.loop.performAndWait {} // registered
        let second = Pipe2()
        let fired = Signal()
        let newSource = Locked<FileDescriptorSource?>(nil)
        let inBlock = Signal()
        let cancelled = Signal()
        thread.loop.perform {
            inBlock.fire()
            _ = cancelled.wait() // the loop is busy here: the cancel below stays queued
            let source = try? thread.loop.watch(fileDescriptor: number, for: .read) { _ in
                var byte: UInt8 = 0
                _ = read(number, &byte, 1)
                fired.fire()
            }
            newSource.withLock { $0 = source }
        }
        #expect(inBlock.wait())
        old.cancel() // from this thread: the loop's removal of it is queued behind the block
        // Closed and reused: dup2 closes the number's file and puts the second pipe's read end
        // under the same number in one step (a separate close would leave a window in which a
        // test running in parallel could be given the number).
        #expect(dup2(second.readEnd, number) == number)
        cancelled.fire()
        try thread.loop.performAndWait {} // the block, then the queued removal, have run
        try #require(newSource.withLock { $0 } != nil)
        second.write(1)
        #expect(fired.wait(seconds: 5), "the new source on the reused fd number never fired")
        newSource.withLock { $0?.cancel() }
        try thread.loop.performAndWait {}
        close(number)
    }
}
