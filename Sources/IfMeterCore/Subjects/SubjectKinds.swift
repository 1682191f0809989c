#if canImport(Glibc)
import Glibc
#endif

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
        ServiceKind(),
        AppKind(),
        RemainderKind(),
        NetworkAppKind(),
        ScopeKind(),
    ]

    /// Kinds declared outside this list (a test's), for the work `registering(_:_:)` runs on
    /// the current thread: bound to that work alone, so tests that run beside it see the
    /// built-in list. A thread's own value, not a task-local one: those would link Swift's
    /// concurrency runtime into every program (2 MB more in the static client).
    private static var registered: [any SubjectKind] {
        guard let raw = pthread_getspecific(registeredKey) else { return [] }
        return Unmanaged<Registered>.fromOpaque(raw).takeUnretainedValue().kinds
    }

    private final class Registered {
        let kinds: [any SubjectKind]
        init(_ kinds: [any SubjectKind]) { self.kinds = kinds }
    }

    private static let registeredKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()

    /// Runs `body` with `kind` listed after the built-in kinds, on this thread. Its prefix
    /// must be new: a prefix names one kind.
    public static func registering<Result>(_ kind: any SubjectKind, _ body: () throws -> Result) rethrows -> Result {
        precondition(kind.prefix != nil && !all.contains { $0.prefix == kind.prefix }, "a subject kind needs a prefix no other kind has")
        let previous = pthread_getspecific(registeredKey)
        let listed = Registered(registered + [kind])
        pthread_setspecific(registeredKey, Unmanaged.passUnretained(listed).toOpaque())
        defer { pthread_setspecific(registeredKey, previous) }
        return try withExtendedLifetime(listed) { try body() }
    }

    /// Every kind: the built-in ones, then any registered.
    public static var all: [any SubjectKind] {
        let registered = registered
        return registered.isEmpty ? builtIn : builtIn + registered
    }

    /// The kind with this prefix (nil: interfaces), if there is one.
    public static func kind(prefix: some StringProtocol) -> (any SubjectKind)? {
        // The built-in kinds first: an interface's name or a built-in prefix, all but every
        // lookup, reads no thread's value.
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

    /// Whether `subject` is another view of the interfaces' bytes (a network's, an
    /// application's, a link's remainder, a scope's): a sum of interfaces or of the estimate log's records
    /// never adds it.
    public static func isAnotherView(_ subject: String) -> Bool {
        guard subject.utf8.contains(UInt8(ascii: ":")), let section = kind(of: subject)?.kind.section else { return false }
        return section == .networks || section == .apps || section == .networkApps || section == .scopes
    }

    /// The kinds listed in `section`.
    public static func kinds(in section: SubjectSection) -> [any SubjectKind] {
        all.filter { $0.section == section }
    }

    private static let interface = InterfaceKind()
    /// Each built-in kind's prefix, read once: a lookup compares bytes, not existentials.
    private static let builtInPrefixes = builtIn.map { $0.prefix ?? ":" }
}
