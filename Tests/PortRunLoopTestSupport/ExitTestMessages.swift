import Testing

/// The text an exit test's child process wrote to standard error ("" when not captured).
public func standardError(_ result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

/// Checks that a misuse check's message reached standard error. The library's checks keep their
/// message in release builds too (`Misuse`, `InternalFailure`: a `fatalError`, not a
/// `precondition`), so this holds in every build.
public func expectMessage(_ result: ExitTest.Result?, contains text: String,
                          sourceLocation: SourceLocation = #_sourceLocation) {
    let stderr = standardError(result)
    #expect(stderr.contains(text), "stderr was: \(stderr)", sourceLocation: sourceLocation)
}

/// Checks that a misuse check stopped the process with the library's message: "PortRunLoop
/// misuse: `text` … (at `file`:`line`)", the location being a line of `file` (a `#fileID`).
public func expectMisuse(_ result: ExitTest.Result?, _ text: String, at file: String,
                         sourceLocation: SourceLocation = #_sourceLocation) {
    let stderr = standardError(result)
    let line = stderr.split(separator: "\n").first { $0.contains("PortRunLoop misuse: ") }.map(String.init) ?? ""
    #expect(line.contains("PortRunLoop misuse: \(text)"), "stderr was: \(stderr)", sourceLocation: sourceLocation)
    #expect(line.contains(" (at \(file):"), "stderr was: \(stderr)", sourceLocation: sourceLocation)
}
