import IfMeterCore

extension DaemonConfig {
    /// `alias[NAME] = ALIAS`: an interface's alias (docs/CONFIG.md), checked as `ifmeter alias`
    /// checks one (``InterfaceAlias``); two names never share an alias. False for another key.
    mutating func setAlias(key: String, value: String) throws(ValueError) -> Bool {
        guard key.hasPrefix("alias[") && key.hasSuffix("]") else { return false }
        let name = String(key.dropFirst("alias[".count).dropLast())
        guard !name.isEmpty, name.utf8.count <= 15,
              !name.contains(where: { $0 == "/" || $0 == ":" || $0.isWhitespace }) else {
            throw ValueError("\(key): expected an interface's name in the brackets (up to 15 bytes, no /, : or white space)")
        }
        if let problem = InterfaceAlias.problem(value) { throw ValueError("\(key): \(problem)") }
        if let other = aliases.first(where: { $0.value == value && $0.key != name })?.key {
            throw ValueError("\(key): \"\(value)\" is already the alias of \(other); an alias names one interface")
        }
        aliases[name] = value
        return true
    }
}
