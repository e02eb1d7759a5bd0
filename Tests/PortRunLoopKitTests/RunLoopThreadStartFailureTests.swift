#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A `RunLoopThread` that cannot start (the kernel refuses its thread, or the loop on it, made to
/// by a seccomp filter on the starting thread) is a typed error from `init`, never a hang.
@Suite(.timeLimit(.minutes(1))) struct RunLoopThreadStartFailureTests {
    @Test func aThreadTheKernelWillNotCreateIsATypedError() throws {
        let failure = try onRefusingThread(.threadCreation(errno: EAGAIN)) {
            thrownError { () throws(PortRunLoopError) in try RunLoopThread(name: "never-started").stop() }
        }
        #expect(failure == .threadCreationFailed(errno: EAGAIN))
    }

    @Test func aLoopThatCannotBeMadeOnItsThreadIsATypedError() throws {
        // The new thread inherits the refusal: its loop's wake timer cannot be made.
        let failure = try onRefusingThread(.timerfdCreate(errno: EMFILE)) {
            thrownError { () throws(PortRunLoopError) in try RunLoopThread(name: "loopless").stop() }
        }
        #expect(failure == .eventCreationFailed)
    }
}
