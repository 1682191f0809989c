import IfMeterCore
@testable import IfMeterDaemon
import IfMeterTestSupport
import Testing

/// `alias[NAME] = ALIAS` (#61): checked as hostile input where it enters, one name an alias.
@Suite("Config file: aliases", .ownThread, .timeLimit(.minutes(3)))
struct AliasConfigTests {
    @Test("aliases are read per interface, white space around them trimmed, and handed to the service")
    func parsed() throws {
        let config = try DaemonConfig.parse("""
            alias[enp3s0f1] = Home uplink   # the fibre
            alias[wwan0]=Phone 📱
            alias[wlan0] = <script>alert("x")</script>
            """, file: "test.conf")
        let expected = ["enp3s0f1": "Home uplink", "wwan0": "Phone 📱", "wlan0": "<script>alert(\"x\")</script>"]
        #expect(config.aliases == expected)
        #expect(config.serviceConfiguration.aliases == expected)
        // A reload hands the service the new file's aliases: they replace the old ones whole.
        let reloaded = try DaemonConfig.parse("alias[wwan0] = Phone\n", file: "test.conf")
        var aliases = InterfaceAliases(configured: config.serviceConfiguration.aliases, stored: ["eth1": "Spare"])
        aliases.replaceConfigured(reloaded.serviceConfiguration.aliases)
        #expect(aliases.inForce == ["wwan0": "Phone", "eth1": "Spare"])
        #expect(aliases.name(for: "Home uplink") { _ in false } == "Home uplink")
    }

    static let refused: [(String, String)] = [
        ("alias[eth0] = a\u{7}b", "test.conf:1: alias[eth0]: an alias is printable text; U+0007 is not printable"),
        ("alias[eth0] = \u{202e}gnp.exe", "test.conf:1: alias[eth0]: an alias is printable text; U+202E is not printable"),
        ("alias[eth0] = a\u{85}b", "test.conf:1: alias[eth0]: an alias is printable text; U+0085 is not printable"),
        ("alias[eth0] =", "test.conf:1: alias[eth0]: an alias cannot be empty"),
        ("alias[eth0] = " + String(repeating: "é", count: 33),
         "test.conf:1: alias[eth0]: an alias is at most 64 bytes of UTF-8, got 66"),
        ("alias[eth0] = a,b", "test.conf:1: alias[eth0]: an alias cannot hold \",\": -i uses it between names"),
        ("alias[eth0] = eth1+eth2", "test.conf:1: alias[eth0]: an alias cannot hold \"+\": -i uses it between names"),
        ("alias[] = x", "test.conf:1: alias[]: expected an interface's name in the brackets (up to 15 bytes, no /, : or white space)"),
        ("alias[container:web] = x",
         "test.conf:1: alias[container:web]: expected an interface's name in the brackets (up to 15 bytes, no /, : or white space)"),
        ("alias[abcdefghijklmnop] = x",
         "test.conf:1: alias[abcdefghijklmnop]: expected an interface's name in the brackets (up to 15 bytes, no /, : or white space)"),
        ("alias[eth0] = Home\nalias[eth1] = Home",
         "test.conf:2: alias[eth1]: \"Home\" is already the alias of eth0; an alias names one interface"),
    ]

    @Test("a hostile or ambiguous alias is refused with the file, the line and why", arguments: refused)
    func refusals(line: String, message: String) {
        #expect(throws: ConfigError.self) { try DaemonConfig.parse(line + "\n", file: "test.conf") }
        do {
            _ = try DaemonConfig.parse(line + "\n", file: "test.conf")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test("a name ifmeter knows is itself, never hidden by an alias; the config's alias wins over a stored one")
    func resolution() {
        var aliases = InterfaceAliases(configured: ["eth0": "Home"], stored: ["eth1": "Home", "eth2": "eth0", "eth3": "Lab"])
        #expect(aliases.name(for: "Home") { _ in false } == "eth0")
        #expect(aliases.alias(of: "eth1") == "Home")
        #expect(aliases.name(for: "eth0") { $0 == "eth0" } == "eth0")
        #expect(aliases.name(for: "Lab") { ["eth0", "eth3"].contains($0) } == "eth3")
        #expect(aliases.name(for: "nothing") { _ in false } == "nothing")
        aliases.store(nil, for: "eth3")
        #expect(aliases.name(for: "Lab") { _ in false } == "Lab")
        aliases.replaceConfigured([:])
        #expect(aliases.name(for: "Home") { _ in false } == "eth1")
    }
}
