import Foundation

/// The delegate of a ``LoopStream``: `NSStreamDelegate`'s one method, with Foundation's own
/// `Stream.Event` values.
///
/// A stream tells its delegate, on the thread of the loop it is scheduled in and only during runs
/// of the modes it is scheduled in:
///
/// - `.openCompleted` once its connection is made;
/// - `.hasBytesAvailable` (input) when bytes are buffered, and again only after a read;
/// - `.hasSpaceAvailable` (output) when a write would be accepted, and again only after a write;
/// - `.endEncountered` (input) once the peer's end of stream is read (``LoopStream/streamStatus``
///   is `.atEnd`);
/// - `.errorOccurred` when the connection could not be made or failed
///   (``LoopStream/streamError`` says why; the status is `.error`). Nothing follows it.
///
/// ```swift
/// final class Client: LoopStreamDelegate {
///     func stream(_ stream: LoopStream, handle event: Stream.Event) {
///         switch event {
///         case .hasBytesAvailable:
///             var buffer = [UInt8](repeating: 0, count: 4096)
///             let count = (stream as! LoopInputStream).read(&buffer, maxLength: buffer.count)
///             if count > 0 { consume(buffer[..<count]) }
///         case .endEncountered, .errorOccurred:
///             stream.close()
///         default:
///             break
///         }
///     }
/// }
/// ```
///
/// A stream holds its delegate weakly, as Cocoa does: keep it alive yourself.
///
/// Thread-safety: called on the stream's loop thread only; conformers need not be `Sendable`.
public protocol LoopStreamDelegate: AnyObject {
    /// `stream` had `event` (one event per call; see ``LoopStreamDelegate``).
    ///
    /// Thread-safety: called on the stream's loop thread.
    func stream(_ stream: LoopStream, handle event: Stream.Event)
}
