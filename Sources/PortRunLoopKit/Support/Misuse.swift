/// The checks behind every documented programmer error of the PortRunLoop modules: a call on the
/// wrong thread, an invalid argument, a rule of an API broken (a second close observer, a source in
/// two loops). A broken rule stops the process with a message naming the mistake and where it was
/// checked, in debug and release builds alike:
///
///     PortRunLoop misuse: StreamConnection.setWaterMarks(low:high:): need 0 <= low <= high, got 5, 2 (at PortRunLoopKit/StreamConnection.swift:189)
///
/// Swift's `precondition` keeps its message only in debug builds (a release build prints a bare
/// "precondition failure"); `fatalError` keeps it in every build, so the failure path is a
/// `fatalError`. The location is the one passed in: a member that takes its caller's location
/// (``PortRunLoop/preconditionOnLoopThread(_:file:line:)``) passes it on, so the message names the
/// caller's line; otherwise it is the line of the check, in the member the message names.
///
/// The passing path costs a test and a branch: the message is an autoclosure, built only when the
/// rule is broken, and the failure is out of line.
///
/// Thread-safety: stateless; any thread.
package enum Misuse {
    /// Stops the process with ``fail(_:file:line:)`` unless `condition` holds.
    ///
    /// Thread-safety: any thread.
    @inline(__always)
    package static func check(_ condition: Bool, _ message: @autoclosure () -> String,
                              file: StaticString = #fileID, line: UInt = #line) {
        if _slowPath(!condition) { fail(message(), file: file, line: line) }
    }

    /// Stops the process: "PortRunLoop misuse: `message` (at `file`:`line`)".
    ///
    /// Thread-safety: any thread.
    @inline(never)
    package static func fail(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
        stopProcess("PortRunLoop misuse", message, file: file, line: line)
    }
}

/// The checks of what the library relies on but does not control: a system call that cannot fail
/// (`clock_gettime`, `pthread_key_create`), libevent's own state, the library's internal
/// invariants. Like ``Misuse``, a failure keeps its message in release builds:
///
///     PortRunLoop internal error: clock_gettime(CLOCK_MONOTONIC) failed, errno 22 (at PortRunLoopKit/System.swift:19)
///
/// Thread-safety: stateless; any thread.
package enum InternalFailure {
    /// Stops the process with ``fail(_:file:line:)`` unless `condition` holds.
    ///
    /// Thread-safety: any thread.
    @inline(__always)
    package static func check(_ condition: Bool, _ message: @autoclosure () -> String,
                              file: StaticString = #fileID, line: UInt = #line) {
        if _slowPath(!condition) { fail(message(), file: file, line: line) }
    }

    /// Stops the process: "PortRunLoop internal error: `message` (at `file`:`line`)".
    ///
    /// Thread-safety: any thread.
    @inline(never)
    package static func fail(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
        stopProcess("PortRunLoop internal error", message, file: file, line: line)
    }
}

/// `fatalError` with "`kind`: `message` (at `file`:`line`)", which it prints in every build.
private func stopProcess(_ kind: String, _ message: String, file: StaticString, line: UInt) -> Never {
    fatalError("\(kind): \(message) (at \(file):\(line))", file: file, line: line)
}
