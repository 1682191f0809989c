import IfMeterCore
import IfMeterWire

/// `ifmeter alias IFACE NAME`: the daemon keeps NAME as IFACE's alias in its database (admin
/// only, as `forget`); `ifmeter alias IFACE ''` removes it. An alias in the config file
/// (`alias[IFACE]`) wins, so the daemon refuses to set one for an interface the config names.
struct AliasCommand: Subcommand {
    static let name = "alias"
    static let summary = "set an interface's alias, shown beside its name (admin)"
    static let usage = "ifmeter alias IFACE NAME"
    static let about = """
        Gives IFACE the alias NAME: the views show "NAME (IFACE)", --json an "alias"
        member, the page and /metrics the alias too, and -i takes NAME wherever it takes
        IFACE. ifmeterd keeps it in its database; an empty NAME ('') removes it. An alias is
        printable text of at most 64 bytes, without , or +. alias[IFACE] = NAME in
        ifmeterd.conf wins: an interface the config gives an alias is refused here.
        Root, ifmeterd's user or admin_group only.
        """
    static let options: [OptionSpec] = []
    static let arguments = [ArgumentSpec(name: "IFACE"), ArgumentSpec(name: "NAME")]

    var interface: String
    var alias: String?

    init(_ parsed: ParsedArguments) throws(CLIError) {
        interface = parsed.arguments[0]
        let given = parsed.arguments[1]
        if !given.isEmpty, let problem = InterfaceAlias.problem(given) { throw .usage("alias: \(problem)") }
        alias = given.isEmpty ? nil : given
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let session = try Session(socketCandidates: context.socketCandidates)
        let result = try session.client.call(AliasRequest(interface: interface, alias: alias), reading: AdminResult.self)
        context.write(result) { "\($0.done)\n" }
        return 0
    }
}
