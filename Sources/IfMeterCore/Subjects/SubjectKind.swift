/// A kind of subject: the names history is kept under (docs/ARCHITECTURE.md, "Where a change
/// goes"). An interface is named as the kernel names it (`wwan0`); every other kind by a prefix
/// and its own grammar (`container:web`, `pod:team-a/web-0`, `network:UUID`). Each kind is one
/// type that says everything the rest of ifmeter asks of it, and ``SubjectKinds`` lists them:
/// the store, the views, `/metrics`, the page and the plans iterate that list instead of
/// naming kinds.
public protocol SubjectKind: Sendable {
    /// What comes before the `:` of its subjects' names (`container`); nil for interfaces, the
    /// one kind without (no interface name holds a `:`, so the two never meet).
    var prefix: String? { get }
    /// How its subjects are written, for people: `container:NAME`, `pod:NAMESPACE/NAME`.
    var form: String { get }
    /// One of them in a sentence ("virtual machine"), and several ("virtual machines").
    var noun: String { get }
    var plural: String { get }
    /// Where its subjects are listed: a `query` selection, a section of the page, an
    /// `ifmeter` view.
    var section: SubjectSection { get }
    /// How a plan names its subjects.
    var planSelector: PlanSelectorKey { get }
    /// Whether `name`, the text after `PREFIX:`, names a subject of this kind (a config's or
    /// a request's text is checked by it before anything is looked up).
    func accepts(_ name: Substring) -> Bool
    /// The labels besides `interface` and `class` that say in `/metrics` whose a subject is
    /// (`container="web"`), so that a query needs no join.
    func metricLabels(_ name: Substring) -> [(key: String, value: String)]
    /// The label a figure of `name` carries for where it was counted (`host-side-veth`), if
    /// any: it goes where ``EstimateLabel/labels(base:tunnel:resets:gaps:implausibleDropped:eventsLost:imported:hostSide:)``
    /// puts it.
    func countedLabel(_ name: Substring) -> EstimateLabel?
    /// A label of `name`'s figures after all the others (`network-unknown`), if any.
    func closingLabel(_ name: Substring) -> EstimateLabel?
    /// The labels every figure of the kind carries first: what counted it
    /// (``EstimateLabel/always`` for interface counters).
    var baseLabels: [EstimateLabel] { get }
}

extension SubjectKind {
    public func accepts(_ name: Substring) -> Bool { !name.isEmpty }
    public func metricLabels(_ name: Substring) -> [(key: String, value: String)] { [] }
    public func countedLabel(_ name: Substring) -> EstimateLabel? { nil }
    public func closingLabel(_ name: Substring) -> EstimateLabel? { nil }
    public var baseLabels: [EstimateLabel] { EstimateLabel.always }

    /// `container:web`.
    public func subject(_ name: String) -> String { prefix.map { $0 + ":" + name } ?? name }
}

/// Where a kind's subjects are listed. Kinds that share one are listed together: every owner
/// kind in `ifmeter containers`, `select: owners` and the page's owners section.
public struct SubjectSection: Hashable, Sendable, CustomStringConvertible {
    /// Its `select` in `query` and its section's id on the page: `owners`, `networks`.
    public let id: String
    /// The `ifmeter` command that lists it (`containers`), and the member its `--json` lists
    /// them in.
    public let view: String

    public init(id: String, view: String) {
        (self.id, self.view) = (id, view)
    }

    /// Interfaces: the default views (`select: shown`).
    public static let interfaces = SubjectSection(id: "shown", view: "summary")
    /// Containers, pods, virtual machines and namespaces (docs/NAMESPACES.md).
    public static let owners = SubjectSection(id: "owners", view: "containers")
    /// Networks (docs/NETWORKS.md).
    public static let networks = SubjectSection(id: "networks", view: "networks")
    /// Services and users' applications, counted per cgroup (docs/APPS.md).
    public static let apps = SubjectSection(id: "apps", view: "apps")
    /// Applications on each network (docs/APPS.md, "By network"): `ifmeter apps --network`.
    public static let networkApps = SubjectSection(id: "network-apps", view: "apps")
    /// Local, internet and unknown traffic of interfaces, networks and applications
    /// (docs/SCOPES.md): the columns of `--split`.
    public static let scopes = SubjectSection(id: "scopes", view: "split")

    /// "Containers, pods, virtual machines and namespaces": its kinds' plurals, in list order.
    public var heading: String {
        let plurals = SubjectKinds.all.filter { $0.section == self }.map(\.plural)
        let listed = plurals.count < 2 ? plurals.joined() : plurals.dropLast().joined(separator: ", ") + " and " + plurals.last!
        return listed.prefix(1).uppercased() + listed.dropFirst()
    }

    public var description: String { id }
}

/// How a plan names a kind's subjects (docs/PLANS.md).
public enum PlanSelectorKey: Hashable, Sendable {
    /// In `plan[NAME].interfaces`, as `PREFIX:NAME` or a glob of it.
    case interfaces
    /// By a key of its own (`plan[NAME].network`), its value read by the plan.
    case key(String)
    /// Never chosen by itself: a key of its own (`plan[NAME].traffic = internet`) makes a plan
    /// count, of each subject it chooses otherwise, that subject's of this kind
    /// (`scope:internet/wwan0` for `wwan0`).
    case narrowing(String)
}
