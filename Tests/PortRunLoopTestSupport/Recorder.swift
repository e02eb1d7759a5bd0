/// A thread-safe list, for recording what handlers saw.
///
/// Thread-safety: `Sendable`.
public final class Recorder<Element: Sendable>: Sendable {
    private let items = Locked<[Element]>([])

    /// An empty list.
    public init() {}

    /// Appends `element`.
    public func append(_ element: Element) { items.withLock { $0.append(element) } }

    /// Everything appended so far, oldest first.
    public var values: [Element] { items.withLock { $0 } }

    /// How many elements were appended.
    public var count: Int { items.withLock { $0.count } }
}
