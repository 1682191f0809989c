/// The one list of subject kinds (``SubjectKind``), in the order views list them. A new kind
/// is its file, its line in ``builtIn``, its tests and its docs; a kind declared elsewhere
/// (a test's) is added for the work it is needed in with ``registering(_:_:)``.
public enum SubjectKinds {
    /// The kinds ifmeter has.
    public static let builtIn: [any SubjectKind] = [
        InterfaceKind(),
        ContainerKind(),
        PodKind(),
        VirtualMachineKind(),
        NamespaceKind(),
        NetworkKind(),
    ]

    /// Kinds declared outside this list (a test's), for the work `registering(_:_:)` runs:
    /// bound to that work alone, so tests that run beside it see the built-in list.
    @TaskLocal private static var registered: [any SubjectKind] = []

    /// Runs `body` with `kind` listed after the built-in kinds. Its prefix must be new: a
    /// prefix names one kind.
    public static func registering<Result>(_ kind: any SubjectKind, _ body: () throws -> Result) rethrows -> Result {
        precondition(kind.prefix != nil && !all.contains { $0.prefix == kind.prefix }, "a subject kind needs a prefix no other kind has")
        return try $registered.withValue(registered + [kind], operation: body)
    }

    /// Every kind: the built-in ones, then any registered.
    public static var all: [any SubjectKind] {
        let registered = registered
        return registered.isEmpty ? builtIn : builtIn + registered
    }

    /// The kind with this prefix (nil: interfaces), if there is one.
    public static func kind(prefix: some StringProtocol) -> (any SubjectKind)? {
        // The built-in kinds first: an interface's name or a built-in prefix, all but every
        // lookup, reads no task-local value.
        for (position, known) in builtInPrefixes.enumerated() where known.utf8.elementsEqual(prefix.utf8) { return builtIn[position] }
        return registered.first { $0.prefix.map { $0.utf8.elementsEqual(prefix.utf8) } == true }
    }

    /// The kind of `subject` and its name after the prefix; an interface's name is its own.
    /// Nil for a prefix no kind has, or a name its kind does not accept.
    public static func kind(of subject: String) -> (kind: any SubjectKind, name: Substring)? {
        guard let colon = subject.utf8.firstIndex(of: UInt8(ascii: ":")) else { return (interface, subject[...]) }
        guard let kind = kind(prefix: subject[..<colon]) else { return nil }
        let name = subject[subject.index(after: colon)...]
        return kind.accepts(name) ? (kind, name) : nil
    }

    /// The kinds listed in `section`.
    public static func kinds(in section: SubjectSection) -> [any SubjectKind] {
        all.filter { $0.section == section }
    }

    private static let interface = InterfaceKind()
    /// Each built-in kind's prefix, read once: a lookup compares bytes, not existentials.
    private static let builtInPrefixes = builtIn.map { $0.prefix ?? ":" }
}
