import IfMeterCore
import IfMeterTestSupport
import Testing

/// What counts as local (docs/SCOPES.md): prefixes as the config and the kernel give them, and
/// the rule the BPF programs apply, checked against Python's `ipaddress` as the reference.
@Suite("Local prefixes", .ownThread, .timeLimit(.minutes(1)))
struct LocalPrefixTests {
    @Test("prefixes as people write them, bits past the length cleared, written back in one form", arguments: [
        ("10.0.0.0/8", "10.0.0.0/8"), ("192.168.1.77/24", "192.168.1.0/24"), ("192.0.2.1", "192.0.2.1/32"),
        ("0.0.0.0/0", "0.0.0.0/0"), ("fd00::/8", "fd00::/8"), ("2001:DB8:0:0:1::/64", "2001:db8::/64"),
        ("2001:db8::1", "2001:db8::1/128"), ("::/0", "::/0"), ("fe80::1/10", "fe80::/10"), ("10.1.2.3/31", "10.1.2.2/31"),
    ])
    func parsed(text: String, written: String) throws {
        let prefix = try #require(LocalPrefix(parsing: text))
        #expect(prefix.description == written)
        #expect(LocalPrefix(parsing: written) == prefix, "what it writes reads back as itself")
    }

    @Test("not prefixes", arguments: [
        "", "/", "10.0.0.0/", "10.0.0.0/33", "fd00::/129", "10.1", "10.0.0.0/8/8", "10.0.0.0/-1", "10.0.0.0/ 8",
        "10.0.0.0/+8", "10.0.0.0/0008", "fe80::1%eth0/64", "example.org/24", "10.0.0.0/8 ", " 10.0.0.0/8", "1.2.3.4.5",
        "::ffff:10.0.0.0x", "10.0.0.0\u{0}/8",
    ])
    func refused(text: String) {
        #expect(LocalPrefix(parsing: text) == nil, "\(text)")
    }

    @Test("an IPv4 prefix is the mapped IPv6 one: one trie keys both families")
    func mapped() throws {
        let v4 = try #require(LocalPrefix(parsing: "10.0.0.0/8"))
        #expect(v4.length == 104 && v4.isIPv4)
        #expect(v4.address == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 0])
        #expect(try #require(LocalPrefix(parsing: "fd00::/8")).isIPv4 == false)
        #expect(v4.contains([10, 200, 3, 4]) && !v4.contains([11, 0, 0, 1]))
        #expect(try #require(LocalPrefix(parsing: "2001:db8::/32")).contains(IPAddressText.parse("2001:db8:ffff::9")!))
    }

    @Test("a packet is local when both its ends are: the host's own traffic by its far end, forwarded traffic by both")
    func rule() throws {
        let prefixes = LocalPrefixes(onLink: [LocalPrefix(parsing: "192.168.1.0/24")!, LocalPrefix(parsing: "2001:db8:1::/64")!],
                                     configured: [LocalPrefix(parsing: "10.8.0.0/16")!])
        func scope(_ source: String, _ destination: String) -> TrafficScope {
            prefixes.scope(source: IPAddressText.parse(source)!, destination: IPAddressText.parse(destination)!)
        }
        #expect(scope("192.168.1.10", "192.168.1.20") == .local)
        #expect(scope("192.168.1.10", "198.51.100.7") == .internet)
        #expect(scope("198.51.100.7", "192.168.1.10") == .internet)
        #expect(scope("192.168.1.10", "10.8.3.4") == .local, "local_prefixes")
        #expect(scope("192.168.1.10", "224.0.0.251") == .local, "multicast")
        #expect(scope("0.0.0.0", "255.255.255.255") == .local, "a DHCP discover")
        #expect(scope("fe80::1", "ff02::1") == .local, "link-local to multicast")
        #expect(scope("2001:db8:1::5", "2001:db8:2::5") == .internet)
        #expect(scope("2001:db8:1::5", "2001:db8:1::6") == .local)
    }

    @Test("against Python's ipaddress: 2,000 random prefixes and addresses, both families")
    func reference() throws {
        let seed = TestSeed("LocalPrefix against ipaddress")
        var random = seed.generator
        var lines: [String] = []
        var cases: [(LocalPrefix, [UInt8])] = []
        for _ in 0..<2000 {
            let v4 = random.next() % 2 == 0
            let prefixBytes = (0..<(v4 ? 4 : 16)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            var address = prefixBytes
            // Half the addresses share the prefix's first bytes, so both answers are common.
            for index in address.indices where random.next() % 2 == 0 || index > address.count / 2 {
                address[index] = UInt8(truncatingIfNeeded: random.next())
            }
            let length = Int(random.next() % UInt64(v4 ? 33 : 129))
            let prefix = try #require(LocalPrefix(bytes: prefixBytes, length: length))
            cases.append((prefix, address))
            lines.append("\(prefix) \(IPAddressText.format(address))")
        }
        let script = """
            import ipaddress, sys
            for line in sys.stdin:
                net, addr = line.split()
                print(int(ipaddress.ip_address(addr) in ipaddress.ip_network(net)))
            """
        let result = try Command.run(["python3", "-c", script], stdin: lines.joined(separator: "\n") + "\n")
        let expected = result.stdout.split(separator: "\n").map { $0 == "1" }
        try #require(expected.count == cases.count, "\(result.stderr)")
        for ((prefix, address), inside) in zip(cases, expected) {
            #expect(prefix.contains(address) == inside, "\(prefix) \(IPAddressText.format(address)), \(seed)")
        }
    }
}
