/// What a view is about: `-i NAME…` (a name or an alias, which the daemon resolves), `-i a+b`
/// (those names summed as one), `--class CLASS`, or by default what the views show, and with
/// `-a` also idle virtual links.
struct Subjects: Sendable, Hashable {
    var interfaces: [String] = []
    var interfaceClass: String?
    var all = false
    /// `-i a+b`: `interfaces` are summed bucket by bucket as one subject.
    var merged = false

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
        if let merge = interfaces.first(where: { $0.contains("+") }) {
            (interfaces, merged) = (try Self.members(of: merge, alone: interfaces.count == 1), true)
        }
    }

    /// The names of `-i a+b` (two or more, none empty, none twice), given alone.
    static func members(of merge: String, alone: Bool) throws(CLIError) -> [String] {
        guard alone else { throw .usage("-i \(merge): a merge is the view's one subject; give it alone") }
        let members = merge.split(separator: "+", omittingEmptySubsequences: false).map(String.init)
        guard members.count >= 2, !members.contains(where: \.isEmpty) else {
            throw .usage("-i \(merge): a merge is two or more names joined by +, such as -i eth0+eth1")
        }
        guard Set(members).count == members.count else { throw .usage("-i \(merge): a merge names each interface once") }
        return members
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
