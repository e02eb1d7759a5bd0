import Foundation
import Testing

/// The README's examples against the tests that run them: a test holds an example between
/// `// <marker> begins` and `// <marker> ends`, and the README holds it in the first Swift code
/// block after a heading; both, trimmed and without blank or `import` lines, must be equal.
enum ReadmeCodeBlocks {
    /// The lines of `testFile` between the markers, and the README's block after `heading`.
    static func compare(testFile: String, marker: String, heading: String) throws -> (test: [String], readme: [String]) {
        let here = URL(fileURLWithPath: testFile)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let test = try String(contentsOf: here, encoding: .utf8)
        let testLines = test.split(separator: "\n", omittingEmptySubsequences: false)
        let from = try #require(testLines.firstIndex { $0.contains("// \(marker) begins") })
        let to = try #require(testLines.firstIndex { $0.contains("// \(marker) ends") })
        let section = try #require(readme.components(separatedBy: "\(heading)\n").dropFirst().first)
        let block = try #require(section.components(separatedBy: "```swift\n").dropFirst().first?
            .components(separatedBy: "```").first)
        return (normalized(testLines[(from + 1)..<to]),
                normalized(block.split(separator: "\n", omittingEmptySubsequences: false)).filter { !$0.hasPrefix("import ") })
    }

    private static func normalized(_ lines: some Sequence<Substring>) -> [String] {
        lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
