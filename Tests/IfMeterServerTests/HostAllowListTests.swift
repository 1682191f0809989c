import IfMeterHTTP
import IfMeterTestSupport
import Testing

/// The `Host` headers the HTTP listener answers (docs/SECURITY.md, "DNS rebinding").
@Suite("Host allow-list", .ownThread, .timeLimit(.minutes(3)))
struct HostAllowListTests {
    static let defaults = try! HostAllowList(hostName: "Router7")

    @Test("answered by default: addresses with or without a port, localhost and names under it, the host's name, no Host at all",
          arguments: [nil, "127.0.0.1", "127.0.0.1:10951", "192.0.2.7:80", "[::1]", "[::1]:10951", "[fe80::1]:1",
                      "localhost", "localhost:10951", "LOCALHOST.", "grafana.localhost:3000", "router7", "ROUTER7.:10951", " router7\t"])
    func answered(_ header: String?) {
        #expect(Self.defaults.allows(header))
    }

    @Test("refused by default: any other name (a rebinding page's), and whatever is no host",
          arguments: ["rebind.attacker.example", "rebind.attacker.example:10951", "127.0.0.1.nip.io", "localhost.attacker.example",
                      "router7.attacker.example", "", " ", "[::1", "[::1]x", "::1", "127.0.0.1:", "127.0.0.1:port", "a..b", ".router7",
                      "router7:123456", "a b", "ro\u{FF}uter7", "under_score", "[127.0.0.1]"])
    func refused(_ header: String) {
        #expect(!Self.defaults.allows(header))
    }

    /// Found by the `http-host` fuzz target: "a.." lost one trailing dot and was read as the
    /// name "a.", which is read again as "a"; `*` answered it.
    @Test("a name with an empty label is no host, trailing dots included", arguments: ["a..", "localhost..", "a..:80", "."])
    func emptyLabel(_ header: String) throws {
        #expect(HostAllowList.host(of: header) == nil)
        #expect(!(try HostAllowList(hostName: nil, configured: ["*"])).allows(header))
    }

    /// Found by the `http-host` fuzz target: "1.0.0.0." was read as the name "1.0.0.0", which is
    /// read again as an address. A browser reads it as the address, as it reads "1.0.0.0".
    @Test("an IPv4 address with a trailing dot is that address; a host whose last label is digits is no name",
          arguments: [("1.0.0.0.", true), ("127.0.0.1.:80", true), ("999.1.", false), ("a.1", false), ("router7.", true)])
    func numericLastLabel(_ header: String, answered: Bool) throws {
        #expect(HostAllowList.host(of: header) == (answered ? (header.first!.isNumber ? .address : .name("router7")) : nil))
    }

    @Test("configured names are answered, without case or a trailing dot; * answers every host, never what is no host")
    func configured() throws {
        let list = try HostAllowList(hostName: "router7", configured: ["Metrics.Example.ORG.", "grafana-1"])
        #expect(list.allows("metrics.example.org:10951") && list.allows("GRAFANA-1") && list.allows("router7"))
        #expect(!list.allows("example.org") && !list.allows("other.example.org"))
        let any = try HostAllowList(hostName: nil, configured: ["*"])
        #expect(any.allows("anything.example") && !any.allows("[::1") && !any.allows("a b"))
    }

    @Test("a configured entry that is no name is refused, saying what a name is", arguments: ["metrics.example.org:80", "a b", "", "*.example.org", "[::1]"])
    func badEntry(_ entry: String) {
        #expect(throws: HostAllowListError.self) { try HostAllowList(hostName: nil, configured: [entry]) }
        #expect(HostAllowListError(entry).description.contains("is not a host name"))
    }
}
