/// What a view is about: `-i NAME…`, `--class CLASS`, or by default what the views show, and
/// with `-a` also idle virtual links.
struct Subjects: Sendable, Hashable {
    var interfaces: [String] = []
    var interfaceClass: String?
    var all = false

    init(interfaces: [String] = [], interfaceClass: String? = nil, all: Bool = false) {
        self.interfaces = interfaces
        self.interfaceClass = interfaceClass
        self.all = all
    }

    /// From ``OptionSpec/subjects``: `-i` repeated or comma-separated.
    init(_ parsed: ParsedArguments) throws(CLIError) {
        interfaces = parsed.values(.interface).flatMap { $0.split(separator: ",").map(String.init) }
        interfaceClass = parsed.value(.interfaceClass)
        all = parsed.isSet(.all)
        if !interfaces.isEmpty && interfaceClass != nil {
            throw .usage("give -i/--interface or --class, not both")
        }
    }
}

/// `--limit N` of a view: a number of rows.
enum RowLimit {
    /// The rows asked for, or `fallback`; a limit that is not a positive number is refused.
    static func parse(_ parsed: ParsedArguments, default fallback: Int) throws(CLIError) -> Int {
        guard let text = parsed.value(.rows) else { return fallback }
        guard let rows = Int(text), rows >= 1 else {
            throw .usage("--limit: expected a positive number of rows, got \"\(text)\"")
        }
        return rows
    }
}
