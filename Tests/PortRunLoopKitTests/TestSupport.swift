import Foundation
import PortRunLoopKit
import Synchronization
import Testing
import PortRunLoopTestSupport

/// Holds `thread`'s loop inside a block until the returned signal fires, so a test can queue work
/// behind it deterministically. Returns after the loop has entered the block.
func holdLoop(_ thread: RunLoopThread) -> Signal {
    let entered = Signal()
    let release = Signal()
    thread.loop.perform {
        entered.fire()
        _ = release.wait(seconds: 60)
    }
    _ = entered.wait()
    return release
}

/// A pipe whose ends are closed on deinit.
final class Pipe2: Sendable {
    let readEnd: Int32
    let writeEnd: Int32
    init() {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0)
        readEnd = fds[0]
        writeEnd = fds[1]
    }
    func write(_ byte: UInt8) { var b = byte; _ = Foundation.write(writeEnd, &b, 1) }
    func readByte() -> UInt8? { var b: UInt8 = 0; return read(readEnd, &b, 1) == 1 ? b : nil }
    deinit { close(readEnd); close(writeEnd) }
}

