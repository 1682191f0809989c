/// A value whose members are declared once, in ``fields``: the reader, the writer, the range
/// checks and the HTTP API's arguments all work from that list (a command's request, or an
/// object inside one).
public protocol RequestFields: Hashable, Sendable {
    /// Every member absent.
    init()
    /// The members, each with its key, type and place in the value.
    static var fields: [RequestField<Self>] { get }
}

/// A command's request (docs/PROTOCOL.md, "Commands"): its members besides the envelope (`v`,
/// `id`, `cmd`, common to all), and its place in the daemon. A new member is a line in its
/// ``fields`` and its use where the command is answered.
public protocol CommandRequestType: RequestFields {
    static var command: Command { get }
    /// Who may ask it and what its answer costs.
    static var policy: CommandPolicy { get }
}

/// One member of a ``RequestFields`` value: where the value keeps it, and how it is given.
public struct RequestField<Root>: Sendable {
    public let member: Member
    let get: @Sendable (Root) -> MemberValue?
    let set: @Sendable (inout Root, MemberValue) -> Void

    // Plain closures, not key paths: a key path is made by the runtime from its mangled
    // pattern the first time it is evaluated, and the tables of every command's fields cost
    // the client half a millisecond at each start (2.2 M instructions of 4.0 M for `days -i`).
    private init<Value>(_ key: String, _ kind: MemberKind, _ form: HTTPForm, get: @escaping @Sendable (Root) -> Value?,
                        set: @escaping @Sendable (inout Root, Value?) -> Void,
                        wrap: @escaping @Sendable (Value) -> MemberValue, unwrap: @escaping @Sendable (MemberValue) -> Value?) {
        member = Member(key: key, kind: kind, form: form)
        self.get = { root in get(root).map(wrap) }
        self.set = { root, value in set(&root, unwrap(value)) }
    }

    /// A member read and written by `get` and `set`, the same property in both.
    public typealias Get<Value> = @Sendable (Root) -> Value?
    public typealias Set<Value> = @Sendable (inout Root, Value?) -> Void

    public static func string(_ key: String, _ get: @escaping Get<String>, _ set: @escaping Set<String>) -> Self {
        Self(key, .string, .key, get: get, set: set, wrap: MemberValue.string) { if case .string(let value) = $0 { value } else { nil } }
    }

    public static func bool(_ key: String, _ get: @escaping Get<Bool>, _ set: @escaping Set<Bool>) -> Self {
        Self(key, .bool, .key, get: get, set: set, wrap: MemberValue.bool) { if case .bool(let value) = $0 { value } else { nil } }
    }

    public static func time(_ key: String, _ get: @escaping Get<TimeArgument>, _ set: @escaping Set<TimeArgument>) -> Self {
        Self(key, .time, .key, get: get, set: set, wrap: MemberValue.time) { if case .time(let value) = $0 { value } else { nil } }
    }

    /// A whole number; a peer's must lie in `range`, checked where the line is read.
    public static func integer(_ key: String, _ get: @escaping Get<Int>, _ set: @escaping Set<Int>, range: ClosedRange<Int>? = nil) -> Self {
        Self(key, .integer(range: range), .key, get: get, set: set, wrap: MemberValue.integer) {
            if case .integer(let value) = $0 { value } else { nil }
        }
    }

    public static func strings(_ key: String, _ get: @escaping Get<[String]>, _ set: @escaping Set<[String]>, form: HTTPForm) -> Self {
        Self(key, .strings, form, get: get, set: set, wrap: MemberValue.strings) { if case .strings(let value) = $0 { value } else { nil } }
    }

    /// An array of objects with members of their own.
    public static func objects<Entry: RequestFields>(_ key: String, _ get: @escaping Get<[Entry]>, _ set: @escaping Set<[Entry]>,
                                                    form: HTTPForm) -> Self {
        Self(key, .objects(MemberTable(Entry.fields.map { $0.member })), form, get: get, set: set,
             wrap: { entries in .objects(entries.map { $0.memberValues }) },
             unwrap: { if case .objects(let entries) = $0 { entries.map(Entry.init(memberValues:)) } else { nil } })
    }
}

extension RequestFields {
    /// The members each field declares, in order.
    static var members: [Member] { fields.map { $0.member } }

    /// The value with the members of `values`, each at its field's place.
    init(memberValues values: [MemberValue?]) {
        self.init()
        for (field, value) in zip(Self.fields, values) {
            if let value { field.set(&self, value) }
        }
    }

    /// Each field's value, at its place.
    var memberValues: [MemberValue?] { Self.fields.map { $0.get(self) } }
}

extension CommandRequestType {
    /// The request a line holds, taken as this command: its own members, every other left out.
    /// The line was checked as it was read; what its values mean is checked where the command
    /// is answered.
    public init(_ line: RequestLine) {
        self.init()
        let places = RequestMembers.places(of: Self.command)
        for (field, place) in zip(Self.fields, places) {
            if let value = line.members[place] { field.set(&self, value) }
        }
    }
}
