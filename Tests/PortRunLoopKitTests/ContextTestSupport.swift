import Foundation
import PortRunLoopKit
import ServiceContextModule
import Testing

/// Every test of the caller's context, one at a time: they set the process-wide
/// `PortRunLoop.serviceContextCapture` (to `.always`, as no instrument is bootstrapped here, and to
/// `.never` in the one test of that mode).
@Suite(.serialized) struct ServiceContextTests {}

/// A trace id carried in a `ServiceContext`, as a tracer would carry its span.
enum TraceIDKey: ServiceContextKey {
    typealias Value = String
}

/// A context holding `traceID` (and context capture on: no instrument is bootstrapped in the tests).
func traceContext(_ traceID: String) -> ServiceContext {
    PortRunLoop.serviceContextCapture = .always
    var context = ServiceContext.topLevel
    context[TraceIDKey.self] = traceID
    return context
}

/// The trace id of the current context (nil when no context is set, or it holds none).
func currentTraceID() -> String? {
    ServiceContext.current?[TraceIDKey.self]
}

/// Runs `body` with a context holding `traceID` bound on the calling thread or task.
@discardableResult func withTrace<T>(_ traceID: String, _ body: () throws -> T) rethrows -> T {
    try ServiceContext.withValue(traceContext(traceID), operation: body)
}

/// `withTrace` for async code.
@discardableResult func withTrace<T>(_ traceID: String, _ body: () async throws -> T) async rethrows -> T {
    try await ServiceContext.withValue(traceContext(traceID), operation: body)
}
