import Foundation
import ServiceContextModule

/// Carries a Foundation `Notification` to another thread.
///
/// `Notification` is explicitly not `Sendable` (its `object` and `userInfo` are `Any`). Handing one to
/// another thread is what every thread-targeted notification does, and it is sound under the rule
/// Foundation itself documents: whatever a notification carries must be safe to read from the
/// threads its observers run on. The box makes that hand-over explicit in one place.
///
/// The box also carries the poster's `ServiceContext` (``CallerContext``), restored around each
/// handler on the observers' threads; every observer of one post sees the same context.
///
/// Thread-safety: `@unchecked Sendable` under the rule above; the box itself is immutable.
struct NotificationBox: @unchecked Sendable {
    let notification: Notification
    let context: CapturedContext?

    init(_ notification: Notification, context: CapturedContext? = nil) {
        self.notification = notification
        self.context = context
    }
}
