import Foundation

/// The thread that delivers to ``NotificationStream``s made without a loop: their observer only
/// puts each notification in the stream's buffer, so one shared thread serves them all.
enum NotificationStreamDelivery {
    static let thread: RunLoopThread = {
        do { return try RunLoopThread(name: "PortRunLoop.notification-streams") } catch {
            fatalError("ThreadNotificationCenter.notifications(named:): could not start the delivery thread: \(error)")
        }
    }()
}

extension ThreadNotificationCenter {
    /// The notifications named `name` (nil: every name) from `sender` (nil: any sender) posted from
    /// now on, as an `AsyncSequence`: `for await note in center.notifications(named: .x) { … }`.
    ///
    /// - Parameters:
    ///   - name: the name to observe, or nil for every name.
    ///   - sender: only notifications from this sender (matched as by
    ///     ``addObserver(forName:object:on:inModes:using:)``).
    ///   - bufferLimit: how many notifications to hold while the consumer is not waiting (at
    ///     least 1; default ``NotificationStream/defaultBufferLimit``).
    ///   - overflow: what a full buffer drops (default ``NotificationStream/OverflowPolicy/dropNewest``);
    ///     drops are counted in ``NotificationStream/statistics``.
    ///   - loop: the thread whose observation feeds the stream. nil (the default) uses a shared
    ///     internal delivery thread, so posts from any thread arrive promptly. With a loop, posts
    ///     made on its thread reach the buffer before `post` returns (handy for tests), and posts
    ///     from other threads arrive when that loop runs in a common mode.
    /// - Returns: a stream that observes from this moment on.
    ///
    /// Thread-safety: any thread.
    public func notifications(named name: Notification.Name?, object sender: Any? = nil,
                              bufferLimit: Int = NotificationStream.defaultBufferLimit,
                              whenFull overflow: NotificationStream.OverflowPolicy = .dropNewest,
                              on loop: PortRunLoop? = nil) -> NotificationStream {
        Misuse.check(bufferLimit >= 1, "ThreadNotificationCenter.notifications(named:): bufferLimit must be at least 1, got \(bufferLimit)")
        let buffer = NotificationStreamBuffer(limit: bufferLimit, overflow: overflow)
        let observation = addObserver(forName: name, object: sender, on: loop ?? NotificationStreamDelivery.thread.loop,
                                      inModes: [.common]) { [weak buffer] note in
            buffer?.receive(NotificationBox(note))
        }
        buffer.attach(observation)
        return NotificationStream(buffer: buffer)
    }
}
