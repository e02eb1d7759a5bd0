import Testing

/// The text an exit test's child process wrote to standard error ("" when not captured).
public func standardError(_ result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

/// Checks that a precondition's message reached standard error. Messages are only printed in
/// debug builds (`-Onone`), so release builds check the exit status alone.
public func expectMessage(_ result: ExitTest.Result?, contains text: String,
                          sourceLocation: SourceLocation = #_sourceLocation) {
    #if DEBUG
    let stderr = standardError(result)
    #expect(stderr.contains(text), "stderr was: \(stderr)", sourceLocation: sourceLocation)
    #endif
}
