import IfMeterCore
import IfMeterService
import IfMeterStore
import IfMeterWire

/// Aliases in requests: the one place a word a peer gave for an interface (`-i`, the HTTP
/// API's `interface`) is taken as the name whose alias it is (``InterfaceAliases``), and the
/// `alias` command, which keeps one in the database.
extension RequestHandlers {
    /// `request` with every name it gives resolved: a name ifmeter knows is itself; an alias in
    /// force, its interface's name; anything else is left for the command to refuse.
    func resolvingAliases(_ request: CommandRequest) -> CommandRequest {
        guard let service = context.service, !service.aliases.inForce.isEmpty else { return request }
        let name = { (word: String) in service.aliases.name(for: word) { service.isKnown($0) } }
        switch request {
        case .usage(var usage):
            usage.interface = usage.interface.map(name)
            return .usage(usage)
        case .query(let query): return .query(resolvingAliases(query, name))
        case .events(var events):
            events.interface = events.interface.map(name)
            return .events(events)
        case .forget(var forget):
            forget.interface = forget.interface.map(name)
            return .forget(forget)
        case .alias(var alias):
            alias.interface = alias.interface.map(name)
            return .alias(alias)
        case .percentile(var percentile):
            percentile.interfaces = percentile.interfaces?.map(name)
            return .percentile(percentile)
        case .status, .interfaces, .sample, .watch, .plans, .metrics, .reload, .importHistory: return request
        }
    }

    /// A `query` (the page's, too) with its names resolved.
    func resolvingAliases(_ request: QueryRequest) -> QueryRequest {
        guard case .query(let resolved) = resolvingAliases(.query(request)) else { return request }
        return resolved
    }

    private func resolvingAliases(_ request: QueryRequest, _ name: (String) -> String) -> QueryRequest {
        var request = request
        request.interfaces = request.interfaces?.map(name)
        return request
    }

    /// `alias`: `name`'s alias kept in the database (or removed), then in force at once. The
    /// config's wins: a name the config gives an alias is refused, and so is an alias another
    /// name has or an interface's name (it could never be used in `-i`).
    func alias(_ request: (interface: String, alias: String?), _ id: RequestID?) throws -> Answer {
        let service = try running()
        let (name, alias) = request
        guard !name.contains(":") else {
            throw WireError(.badRequest, "\"\(name)\" is not an interface: aliases are for interfaces' names")
        }
        guard service.isKnown(name) else { throw Self.unknownInterface(name) }
        if let configured = service.aliases.configured[name] {
            throw WireError(.badRequest, "alias[\(name)] = \(configured) in the config file gives \(name) its alias, and the "
                + "config's wins; change it there and reload")
        }
        if let alias {
            if let owner = service.aliases.owner(of: alias), owner != name {
                throw WireError(.badRequest, "\"\(alias)\" is already the alias of \(owner)")
            }
            if service.isKnown(alias) { throw WireError(.badRequest, "\"\(alias)\" is an interface's name, so it cannot be an alias") }
        }
        let now = context.now
        return .fromStore { store in
            let line = Self.line(id) {
                try store.retention.setAlias(alias, of: name, at: now)
                let done = alias.map { "alias of \(name) set to \"\($0)\"" } ?? "alias of \(name) removed"
                return LineEncoder.success(AdminResult(done: done), id: id)
            }
            return StoreAnswer(line: line, update: { service, _ in service.storeAlias(alias, for: name) })
        }
    }
}
