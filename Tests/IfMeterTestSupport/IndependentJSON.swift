import Foundation

/// A second reading of the JSON the project writes, for golden files: Foundation's decoder
/// shares no code with IfMeterJSON's writer, and the docs are what a peer codes against. A
/// golden rewritten by `IFMETER_WRITE_GOLDEN=1` is only ever compared with itself; read this
/// way, a rewrite that changed a figure, broke an escape or added an undocumented key fails.
public enum IndependentJSON {
    /// The lines of a golden file beside `testFile` (`#filePath`), in `Golden/`.
    public static func goldenLines(_ name: String, besides testFile: String) throws -> [String] {
        let url = URL(fileURLWithPath: testFile).deletingLastPathComponent().appendingPathComponent("Golden/\(name)")
        return String(decoding: try Data(contentsOf: url), as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// One JSON object, read by Foundation.
    public static func object(_ text: String) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) as? [String: Any] else {
            throw POSIXError(.EBADMSG)
        }
        return object
    }

    /// The value at a dotted path (`result.store.error`; `interfaces.0.name` indexes an array).
    public static func value(_ object: Any, _ path: String) -> Any? {
        var current: Any? = object
        for key in path.split(separator: ".") {
            if let array = current as? [Any], let index = Int(key) {
                current = array.indices.contains(index) ? array[index] : nil
            } else {
                current = (current as? [String: Any])?[String(key)]
            }
        }
        return current
    }

    /// Every member name in `object`, at any depth.
    public static func keys(_ object: Any) -> Set<String> {
        if let dictionary = object as? [String: Any] {
            return dictionary.reduce(into: Set(dictionary.keys)) { $0.formUnion(keys($1.value)) }
        }
        if let array = object as? [Any] { return array.reduce(into: []) { $0.formUnion(keys($1)) } }
        return []
    }

    /// The text of the project's documents, by path from the repository root (`docs/PROTOCOL.md`).
    public static func documents(_ paths: [String], besides testFile: String) throws -> String {
        // Tests/<target>/<file>: the repository is two levels up from the file's directory.
        let root = URL(fileURLWithPath: testFile).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try paths.map { try String(contentsOf: root.appendingPathComponent($0), encoding: .utf8) }.joined(separator: "\n")
    }

    /// The member names of `objects` that `documents` never name, as `` `key` `` or `"key"`.
    public static func undocumented(_ objects: [Any], in documents: String) -> [String] {
        objects.reduce(into: Set<String>()) { $0.formUnion(keys($1)) }
            .filter { !documents.contains("`\($0)`") && !documents.contains("\"\($0)\"") }
            .sorted()
    }
}
