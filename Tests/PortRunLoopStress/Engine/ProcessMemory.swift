import Foundation

/// The process's resident memory, from `/proc/self/status`.
///
/// Thread-safety: reads a file; any thread.
public enum ProcessMemory {
    /// `VmRSS` (resident now) in KiB, or 0 when unavailable.
    ///
    /// Thread-safety: any thread.
    public static var residentKiB: Int { field("VmRSS:") }

    /// `VmHWM` (peak resident since start) in KiB, or 0 when unavailable.
    ///
    /// Thread-safety: any thread.
    public static var peakResidentKiB: Int { field("VmHWM:") }

    private static func field(_ name: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            return Int(line.dropFirst(name.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? 0
        }
        return 0
    }
}
