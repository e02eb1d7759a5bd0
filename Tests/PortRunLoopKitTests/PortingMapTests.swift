import Foundation
import Testing

/// PortingFromCocoa's map against PortRunLoopKit's public API, both read from the repository: every
/// public type and member of ours is named in the article, and every symbol the article links to
/// (``Type/member``) exists. The public symbols come from a line parser of the module's sources
/// (`public`/`open` types, and their `public`/`open` members declared directly in their bodies or
/// extensions).
@Suite(.timeLimit(.minutes(1))) struct PortingMapTests {
    /// Members that only satisfy a standard protocol (printing, hashing, sequences, executors,
    /// option sets): not API to port to.
    static let witnesses: Set<String> = [
        "description", "debugDescription", "hash", "hashValue", "rawValue", "makeAsyncIterator", "next",
        "Element", "Failure", "asUnownedSerialExecutor", "asUnownedTaskExecutor", "checkIsolated",
        "isIsolatingCurrentContext", "isSameExclusiveExecutionContext",
    ]
    static let executorWitnesses: Set<String> = ["PortRunLoop/enqueue", "RunLoopTaskExecutor/enqueue"]

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test func everyPublicSymbolIsInTheMapAndEverySymbolInTheMapExists() throws {
        let api = try PublicAPI(sources: Self.repository.appendingPathComponent("Sources/PortRunLoopKit"))
        #expect(api.types.contains("PortRunLoop") && api.members.contains("PortRunLoop/run"),
                "the parser found no API: \(api.types.count) types")
        #expect(api.members.count > 200, "the parser found too few members: \(api.members.count)")
        let article = try String(contentsOf: Self.repository.appendingPathComponent(
            "Sources/PortRunLoopKit/PortRunLoopKit.docc/PortingFromCocoa.md"), encoding: .utf8)
        let links = Self.symbolLinks(in: article, types: api.types)

        let wanted = api.types.union(api.members.filter { symbol in
            let name = String(symbol.split(separator: "/")[1])
            return !Self.witnesses.contains(name) && !Self.executorWitnesses.contains(symbol)
        })
        let mentioned = Set(links.map(\.symbol)).union(links.map(\.type))
        let missing = wanted.filter { !mentioned.contains($0) }.sorted()
        #expect(missing.isEmpty, "public symbols missing from PortingFromCocoa.md: \(missing)")

        let unknown = links.filter { link in
            link.symbol == link.type ? !api.types.contains(link.type)
                : !api.members.contains(link.symbol) && !api.cases.contains(link.symbol)
        }.map(\.text)
        #expect(unknown.isEmpty, "PortingFromCocoa.md names symbols that do not exist: \(unknown)")
    }

    @Test func theParserReadsTypesMembersAndNesting() {
        let api = PublicAPI(files: ["""
            /// A type.
            public final class Outer: Sendable {
                public let a: Int
                public internal(set) var b: Int
                let hidden = 0
                public func c(_ x: Int) -> Int {
                    func local() {}
                    return x
                }
                public struct Inner {
                    public static func d() {}
                }
                public init() {}
            }
            extension Outer {
                public var e: Int { 0 }
                func f() {}
            }
            public enum Kind: Int {
                case one
            }
            extension String {
                public var foreign: Int { 0 }
            }
            """])
        #expect(api.types == ["Outer", "Outer.Inner", "Kind"])
        #expect(api.members == ["Outer/a", "Outer/b", "Outer/c", "Outer/init", "Outer.Inner/d", "Outer/e"])
        #expect(api.cases == ["Kind/one"])
        let links = Self.symbolLinks(in: "``Outer/c(_:)-(Int)`` and ``Outer/Inner`` and ``Outer/Inner/d()``",
                                     types: api.types)
        #expect(links.map(\.symbol) == ["Outer/c", "Outer.Inner", "Outer.Inner/d"])
    }

    /// A DocC symbol link of the article: the type it names and the symbol (`Type/member`, or the
    /// type itself).
    struct Link { let text: String; let type: String; let symbol: String }

    static func symbolLinks(in article: String, types: Set<String>) -> [Link] {
        var links: [Link] = []
        var rest = article[...]
        while let open = rest.range(of: "``") {
            guard let close = rest[open.upperBound...].range(of: "``") else { break }
            let text = String(rest[open.upperBound..<close.lowerBound])
            rest = rest[close.upperBound...]
            guard !text.contains(" ") else { continue }
            let components = text.split(separator: "/").map(String.init)
            let typePath = components.joined(separator: ".")
            if types.contains(typePath) || !components.last!.contains(where: { $0 == "(" }) && components.count == 1 {
                links.append(Link(text: text, type: typePath, symbol: typePath))
                continue
            }
            let type = components.dropLast().joined(separator: ".")
            var member = components.last!
            if let paren = member.firstIndex(of: "(") { member = String(member[..<paren]) }
            if let dash = member.firstIndex(of: "-") { member = String(member[..<dash]) }
            links.append(Link(text: text, type: type, symbol: "\(type)/\(member)"))
        }
        return links
    }
}

/// The public types and members of a module, read line by line from its sources.
struct PublicAPI {
    private(set) var types: Set<String> = []
    private(set) var members: Set<String> = []
    /// Enum cases: symbols the map may name, not required in it (the parser's brief: declarations
    /// marked `public`).
    private(set) var cases: Set<String> = []

    init(sources: URL) throws {
        var files: [String] = []
        let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            files.append(try String(contentsOf: url, encoding: .utf8))
        }
        self.init(files: files)
    }

    init(files: [String]) {
        var candidates: [(owner: String, member: String)] = []
        var caseCandidates: [(owner: String, member: String)] = []
        for file in files { Self.read(file, types: &types, members: &candidates, cases: &caseCandidates) }
        for candidate in caseCandidates { cases.insert("\(candidate.owner)/\(candidate.member)") }
        // Members of extensions of other modules' types are not ours.
        for candidate in candidates where types.contains(candidate.owner) {
            members.insert("\(candidate.owner)/\(candidate.member)")
        }
    }

    private static let attributes = #"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*"#
    private static let typePattern = (attributes + #"(?:public|open)\s+(?:final\s+)?(?:class|struct|enum|protocol|actor)\s+(\w+)"#)
    private static let extensionPattern = (#"^\s*(?:public\s+)?extension\s+([\w.]+)"#)
    private static let memberPattern = (attributes + #"(?:public|open)\s+(?:\w+\(set\)\s+)?(?:(?:static|final|override|convenience|nonisolated|mutating|required|class|dynamic|lazy|weak|unowned)\s+)*(func|var|let|init|subscript|typealias)\b\s*(\w*)"#)
    private static let keywords: Set<String> = ["var", "let", "func", "init", "subscript"]

    private static func read(_ file: String, types: inout Set<String>, members: inout [(owner: String, member: String)],
                             cases: inout [(owner: String, member: String)]) {
        let typeDeclaration = try! Regex(typePattern)
        let extensionDeclaration = try! Regex(extensionPattern)
        let memberDeclaration = try! Regex(memberPattern)
        let caseDeclaration = try! Regex(#"^\s*(?:indirect\s+)?case\s+(\w+)"#)
        // A public protocol's requirements are public without the word.
        let requirementDeclaration = try! Regex(#"^\s*(?:(?:static|mutating)\s+)*(?:func|var)\s+(\w+)"#)
        var protocols: Set<String> = []
        var stack: [(name: String, depth: Int)] = []
        var depth = 0
        var pending: String?
        for rawLine in file.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = codePart(of: String(rawLine))
            var opened: String?
            if let match = line.firstMatch(of: typeDeclaration), let name = match.output[1].substring.map(String.init),
               !keywords.contains(name) {
                let full = stack.last.map { "\($0.name).\(name)" } ?? name
                types.insert(full)
                if line.contains("protocol ") { protocols.insert(full) }
                opened = full
            } else if let match = line.firstMatch(of: extensionDeclaration), let name = match.output[1].substring {
                opened = String(name)
            } else if let match = line.firstMatch(of: memberDeclaration), let owner = stack.last, depth == owner.depth + 1,
                      let kind = match.output[1].substring {
                let name = kind == "init" || kind == "subscript" ? String(kind) : String(match.output[2].substring ?? "")
                if !name.isEmpty { members.append((owner.name, name)) }
            } else if let owner = stack.last, protocols.contains(owner.name), depth == owner.depth + 1,
                      let match = line.firstMatch(of: requirementDeclaration), let name = match.output[1].substring {
                members.append((owner.name, String(name)))
            } else if let match = line.firstMatch(of: caseDeclaration), let owner = stack.last, depth == owner.depth + 1,
                      let name = match.output[1].substring {
                cases.append((owner.name, String(name)))
            }
            if let opened { pending = opened }
            for character in line {
                if character == "{" {
                    if let name = pending { stack.append((name, depth)); pending = nil }
                    depth += 1
                } else if character == "}" {
                    depth -= 1
                    while let top = stack.last, depth <= top.depth { stack.removeLast() }
                }
            }
        }
    }

    /// The line without its comment and string literals' contents.
    private static func codePart(of line: String) -> String {
        var result = ""
        var inString = false
        var previous: Character = " "
        for character in line {
            if !inString, previous == "/", character == "/" { result.removeLast(); break }
            if character == "\"" { inString.toggle() }
            if !inString || character == "\"" { result.append(character) }
            previous = character
        }
        return result
    }
}
