/// A Redis stream entry's ID, `<milliseconds>-<sequence>`, ordered as the server orders them.
///
/// Thread-safety: a value type.
struct StreamEntryID: Comparable, Hashable, Sendable, CustomStringConvertible {
    var milliseconds: UInt64
    var sequence: UInt64

    /// `0-0`, before every entry.
    static let zero = StreamEntryID(milliseconds: 0, sequence: 0)

    init(milliseconds: UInt64, sequence: UInt64) {
        self.milliseconds = milliseconds
        self.sequence = sequence
    }

    /// The ID `text` spells (`1700000000000-3`, or `1700000000000`: sequence 0), or nil.
    init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard let milliseconds = parts.first.flatMap({ UInt64($0) }) else { return nil }
        let sequence = parts.count > 1 ? UInt64(parts[1]) : 0
        guard let sequence else { return nil }
        self.init(milliseconds: milliseconds, sequence: sequence)
    }

    static func < (lhs: StreamEntryID, rhs: StreamEntryID) -> Bool {
        (lhs.milliseconds, lhs.sequence) < (rhs.milliseconds, rhs.sequence)
    }

    var description: String { "\(milliseconds)-\(sequence)" }
}
