import Foundation
import Testing

/// Runs a command-line tool with arguments and an environment addition, and returns its status
/// and output (standard output, with standard error merged in unless `includingStandardError` is
/// false). Bounded: a tool still running after `seconds` is killed (SIGKILL) and the test gets an
/// issue; the output is read on a thread of its own, so a tool that never closes it cannot hold
/// the caller past the bound.
///
/// Thread-safety: any thread; blocks until the tool exits or `seconds` pass.
@discardableResult
public func runTool(_ path: String, _ arguments: [String], environment: [String: String] = [:], seconds: Double = 20,
                    includingStandardError: Bool = true) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let pipe = Pipe()
    process.standardOutput = pipe
    if includingStandardError { process.standardError = pipe }
    let exited = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in exited.signal() }
    try process.run()
    let output = Locked(Data())
    let drained = DispatchSemaphore(value: 0)
    let reader = pipe.fileHandleForReading
    Thread.detachNewThread {
        let data = reader.readDataToEndOfFile()
        output.withLock { $0 = data }
        drained.signal()
    }
    if exited.wait(timeout: .now() + seconds) == .timedOut {
        kill(process.processIdentifier, SIGKILL)
        Issue.record("\(path) did not exit within \(seconds) s")
        _ = exited.wait(timeout: .now() + 5)
        _ = drained.wait(timeout: .now() + 5)
        return (-1, String(decoding: output.withLock { $0 }, as: UTF8.self))
    }
    _ = drained.wait(timeout: .now() + 5)
    return (process.terminationStatus, String(decoding: output.withLock { $0 }, as: UTF8.self))
}
