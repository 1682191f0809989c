import Foundation
import IfMeterTestSupport
import Testing

/// docs/ARCHITECTURE.md is the map a newcomer reads first (#48). Its module tables drifted
/// from Package.swift once (a module missing from four rows, tools listing part of what they
/// link), and the map grew past what anyone reads: the tables are held to Package.swift row by
/// row, and the map to 250 lines of at most 100 characters.
@Suite("The architecture map", .ownThread, .timeLimit(.minutes(1)))
struct ArchitectureMapTests {
    struct Row: Equatable, CustomStringConvertible {
        var name: String
        var dependencies: [String]
        var description: String { "\(name): \(dependencies.joined(separator: ", "))" }
    }

    static let mapPath = "docs/ARCHITECTURE.md"
    static let maxLines = 250
    static let maxColumns = 100

    static func read(_ path: String) throws -> String {
        try String(contentsOfFile: Daemon.packageRoot + "/" + path, encoding: .utf8)
    }

    // MARK: Package.swift

    /// `text` without its `//` comments; string literals are kept whole.
    static func withoutComments(_ text: String) -> [Character] {
        let characters = Array(text)
        var kept: [Character] = []
        var index = 0, inString = false
        while index < characters.count {
            let character = characters[index]
            if inString {
                kept.append(character)
                if character == "\\", index + 1 < characters.count {
                    kept.append(characters[index + 1])
                    index += 2
                    continue
                }
                if character == "\"" { inString = false }
            } else if character == "/", index + 1 < characters.count, characters[index + 1] == "/" {
                while index < characters.count, characters[index] != "\n" { index += 1 }
                continue
            } else {
                if character == "\"" { inString = true }
                kept.append(character)
            }
            index += 1
        }
        return kept
    }

    /// The index just past the bracket that closes the one opened before `start`.
    static func closing(_ characters: [Character], from start: Int) -> Int {
        var depth = 1, index = start, inString = false
        while depth > 0, index < characters.count {
            let character = characters[index]
            if inString {
                if character == "\\" { index += 1 } else if character == "\"" { inString = false }
            } else if character == "\"" {
                inString = true
            } else if character == "(" || character == "[" {
                depth += 1
            } else if character == ")" || character == "]" {
                depth -= 1
            }
            index += 1
        }
        return index
    }

    /// The string literals of `characters[range]`: at its own level, and `name:` inside a call
    /// (`.product(name: …)`, `.target(name: …)`).
    static func names(in characters: ArraySlice<Character>) -> [String] {
        var found: [String] = []
        var depth = 0, index = characters.startIndex
        while index < characters.endIndex {
            let character = characters[index]
            if character == "(" || character == "[" { depth += 1 }
            if character == ")" || character == "]" { depth -= 1 }
            if character == "\"" {
                var end = index + 1
                while end < characters.endIndex, characters[end] != "\"" { end += characters[end] == "\\" ? 2 : 1 }
                let label = String(characters[characters.startIndex..<index]).trimmingCharacters(in: .whitespaces)
                if depth == 0 || label.hasSuffix("name:") { found.append(String(characters[(index + 1)..<end])) }
                index = end + 1
                continue
            }
            index += 1
        }
        return found
    }

    /// Every target the manifest declares (`.target`, `.executableTarget`, `.testTarget`,
    /// `.systemLibrary`), with the names in its `dependencies`.
    static func packageTargets(_ manifest: String) -> [Row] {
        let characters = withoutComments(manifest)
        var rows: [Row] = []
        var index = 0
        let calls = [".target(", ".executableTarget(", ".testTarget(", ".systemLibrary("].map(Array.init)
        while index < characters.count {
            guard let call = calls.first(where: { index + $0.count <= characters.count && Array(characters[index..<(index + $0.count)]) == $0 }) else {
                index += 1
                continue
            }
            let start = index + call.count
            let end = closing(characters, from: start)
            // The call's own arguments: what nested brackets hold is theirs.
            let body = characters[start..<(end - 1)]
            let bodyText = String(body)
            var name = ""
            if let label = bodyText.range(of: "name:") {
                let afterLabel = bodyText[label.upperBound...]
                if let open = afterLabel.firstIndex(of: "\""), let close = afterLabel[afterLabel.index(after: open)...].firstIndex(of: "\"") {
                    name = String(afterLabel[afterLabel.index(after: open)..<close])
                }
            }
            var dependencies: [String] = []
            if let label = bodyText.range(of: "dependencies:"),
               let open = bodyText[label.upperBound...].firstIndex(of: "[") {
                let from = start + bodyText.distance(from: bodyText.startIndex, to: open) + 1
                let to = closing(characters, from: from) - 1
                dependencies = names(in: characters[from..<to])
            }
            rows.append(Row(name: name, dependencies: dependencies))
            index = end
        }
        return rows
    }

    // MARK: The map

    /// The rows of the tables under "## Modules": the target is the first cell's code span,
    /// its dependencies the last cell's names; a row whose first cell is empty goes on the row
    /// above it. Throws on a continuation with nothing to continue.
    static func mapRows(_ map: String) throws -> [Row] {
        var rows: [Row] = []
        var inModules = false
        for line in map.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { inModules = line == "## Modules" }
            guard inModules, line.hasPrefix("|") else { continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = cells.first, let last = cells.last, cells.count >= 2,
                  first != "target", !cells.allSatisfy({ $0.allSatisfy { $0 == "-" } }) else { continue }
            let dependencies = last.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && $0 != "—" }
            if first.isEmpty {
                guard !rows.isEmpty else { throw MapError(message: "a continuation row before any row: \(line)") }
                rows[rows.count - 1].dependencies += dependencies
            } else {
                let name = first.split(separator: "`", omittingEmptySubsequences: false).dropFirst().first.map(String.init) ?? first
                rows.append(Row(name: name, dependencies: dependencies))
            }
        }
        return rows
    }

    struct MapError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// Every way the map's rows differ from the package's targets, one message each, naming the
    /// row.
    static func drift(package: [Row], map: [Row]) -> [String] {
        var messages: [String] = []
        let packageByName = Dictionary(package.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var seen: [String: Int] = [:]
        for row in map { seen[row.name, default: 0] += 1 }
        for target in package where seen[target.name] == nil {
            messages.append("\(mapPath) has no row for target \(target.name)"
                + (target.dependencies.isEmpty ? "" : ", which depends on \(target.dependencies.joined(separator: ", "))"))
        }
        for row in map {
            guard let target = packageByName[row.name] else {
                messages.append("\(mapPath), row \(row.name): no such target in Package.swift")
                continue
            }
            if let count = seen[row.name], count > 1 {
                messages.append("\(mapPath), row \(row.name): \(count) rows for one target")
                seen[row.name] = 1
            }
            let listed = Set(row.dependencies), declared = Set(target.dependencies)
            if listed.count != row.dependencies.count {
                messages.append("\(mapPath), row \(row.name): a dependency listed twice: \(row.dependencies.joined(separator: ", "))")
            }
            if listed != declared {
                let missing = declared.subtracting(listed).sorted(), extra = listed.subtracting(declared).sorted()
                var parts = ["\(mapPath), row \(row.name): depends on \(declared.sorted().joined(separator: ", ")) in Package.swift"]
                if !missing.isEmpty { parts.append("missing from the row: \(missing.joined(separator: ", "))") }
                if !extra.isEmpty { parts.append("in the row only: \(extra.joined(separator: ", "))") }
                messages.append(parts.joined(separator: "; "))
            }
        }
        return messages
    }

    /// The lines past the limits, one message each.
    static func overLimits(_ map: String) -> [String] {
        var lines = map.split(separator: "\n", omittingEmptySubsequences: false)
        if lines.last == "" { lines.removeLast() }
        var messages: [String] = []
        if lines.count > maxLines { messages.append("\(mapPath) is \(lines.count) lines; at most \(maxLines)") }
        for (number, line) in zip(1..., lines) where line.count > maxColumns {
            messages.append("\(mapPath):\(number) is \(line.count) characters; at most \(maxColumns)")
        }
        return messages
    }

    // MARK: Tests

    @Test("every target in Package.swift has one row in the map's module tables, with exactly its dependencies")
    func modulesMatchThePackage() throws {
        let package = Self.packageTargets(try Self.read("Package.swift"))
        #expect(package.count > 40, "read \(package.count) targets from Package.swift: \(package)")
        #expect(package.allSatisfy { !$0.name.isEmpty }, "\(package)")
        let map = try Self.mapRows(try Self.read(Self.mapPath))
        let drift = Self.drift(package: package, map: map)
        #expect(drift.isEmpty, "\(drift.joined(separator: "\n"))")
    }

    @Test("the map is at most 250 lines, none over 100 characters")
    func mapIsReadable() throws {
        let over = Self.overLimits(try Self.read(Self.mapPath))
        #expect(over.isEmpty, "\(over.joined(separator: "\n"))")
    }

    /// The checks above pass on the map as it is; this holds them to failing on the drift
    /// they exist for, each message naming the row.
    @Test("a row missing, a row too many, a dependency left out or added, a line too long: each is named")
    func driftIsCaught() throws {
        let manifest = """
            let package = Package(
                name: "p",
                products: [.executable(name: "tool", targets: ["tool"])],
                targets: [
                    // A comment naming .target(name: "Ghost") is no target.
                    .systemLibrary(name: "CLib", pkgConfig: "lib"),
                    .target(name: "Core"),
                    .target(name: "Store", dependencies: ["Core", .product(name: "Ext", package: "ext"), "CLib"],
                            cSettings: [.define("X")]),
                    .executableTarget(name: "tool", dependencies: ["Store"]),
                    .testTarget(name: "StoreTests", dependencies: ["Store", "Core"]),
                ]
            )
            """
        let package = Self.packageTargets(manifest)
        #expect(package == [
            Row(name: "CLib", dependencies: []), Row(name: "Core", dependencies: []),
            Row(name: "Store", dependencies: ["Core", "Ext", "CLib"]), Row(name: "tool", dependencies: ["Store"]),
            Row(name: "StoreTests", dependencies: ["Store", "Core"]),
        ])
        let map = """
            ## Modules

            | target | for | depends on |
            |---|---|---|
            | `CLib` | a library | — |
            | `Core` | the model | — |
            | `Store` | the history | Core, Ext, |
            | | | CLib |
            | `tool` | `main` | Store |

            | target | depends on |
            |---|---|
            | `StoreTests` | Store, Core |

            ## Elsewhere

            | `Unrelated` | — |
            """
        #expect(try Self.mapRows(map).count == 5)
        #expect(Self.drift(package: package, map: try Self.mapRows(map)).isEmpty)

        let broken = map
            .replacingOccurrences(of: "| `Core` | the model | — |\n", with: "")
            .replacingOccurrences(of: "| | | CLib |", with: "| | | CLib, tool |")
            .replacingOccurrences(of: "| `tool` | `main` | Store |", with: "| `tool` | `main` | — |\n| `Gone` | once | Core |")
            .replacingOccurrences(of: "Store, Core |", with: "Store, Store, Core |")
        let drift = Self.drift(package: package, map: try Self.mapRows(broken))
        #expect(drift == [
            "docs/ARCHITECTURE.md has no row for target Core",
            "docs/ARCHITECTURE.md, row Store: depends on CLib, Core, Ext in Package.swift; in the row only: tool",
            "docs/ARCHITECTURE.md, row tool: depends on Store in Package.swift; missing from the row: Store",
            "docs/ARCHITECTURE.md, row Gone: no such target in Package.swift",
            "docs/ARCHITECTURE.md, row StoreTests: a dependency listed twice: Store, Store, Core",
        ], "\(drift.joined(separator: "\n"))")
        #expect(throws: MapError.self) { try Self.mapRows("## Modules\n| target | x |\n| | Core |\n") }

        let long = String(repeating: "x", count: 101)
        let over = Self.overLimits(Array(repeating: "line", count: 250).joined(separator: "\n") + "\n" + long + "\n")
        #expect(over == ["docs/ARCHITECTURE.md is 251 lines; at most 250", "docs/ARCHITECTURE.md:251 is 101 characters; at most 100"])
        #expect(Self.overLimits(Array(repeating: String(repeating: "─", count: 100), count: 250).joined(separator: "\n") + "\n").isEmpty)
    }
}
