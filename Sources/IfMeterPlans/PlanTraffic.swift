import IfMeterCore

extension Plan {
    /// Which of its subjects' traffic a plan counts (`plan[NAME].traffic`, docs/PLANS.md): all
    /// of it, or only what went to and came from the internet (docs/SCOPES.md).
    public enum Counting: String, Hashable, Sendable, CaseIterable {
        case all, internet

        /// `plan[NAME].traffic`'s value: `all` or `internet`.
        public init(parsing text: String) throws(PlanError) {
            guard let counting = Counting(rawValue: text) else {
                throw PlanError("expected internet or all, got \"\(text)\"")
            }
            self = counting
        }
    }

    /// The subject whose traffic counts toward this plan for `subject`, one the plan would
    /// count (an interface's, a network's or an application's): itself, or on a plan on the
    /// internet its `scope:internet/SUBJECT`, so local bytes never move it.
    public func counted(_ subject: String) -> String {
        switch traffic {
        case .all: subject
        case .internet: ScopeKind.subject(subject, scope: .internet)
        }
    }
}
