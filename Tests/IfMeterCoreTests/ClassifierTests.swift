@testable import IfMeterCore
import IfMeterTestSupport
import Testing

/// One row of the classification table: an interface as the kernel and sysfs show it, and the
/// class and reason it must get.
struct ClassifierCase: Sendable, CustomTestStringConvertible {
    var name: String
    var kind = ""
    var arpType: UInt16 = ARPHRD.ether
    var flags: InterfaceFlags = []
    var sysfs = FakeSysfs.Interface(device: "pci0000:00/0000:00:03.0", driver: "e1000e")
    var expected: InterfaceClass
    var reason: String

    var testDescription: String { "\(name) → \(expected.rawValue) (\(reason))" }
}

private let usbModemDevice = "usb1/1-1/1-1:1.0"

let classifierCases: [ClassifierCase] = [
    ClassifierCase(name: "lo", arpType: ARPHRD.loopback, flags: [.loopback, .up],
                   sysfs: .init(), expected: .loopback, reason: "IFF_LOOPBACK"),
    ClassifierCase(name: "lo2", arpType: ARPHRD.loopback, sysfs: .init(),
                   expected: .loopback, reason: "ARPHRD_LOOPBACK"),
    ClassifierCase(name: "wlp2s0", sysfs: .init(directories: ["phy80211"], device: "pci/wifi",
                                                 driver: "iwlwifi"),
                   expected: .wifi, reason: "sysfs phy80211"),
    ClassifierCase(name: "eth1", sysfs: .init(directories: ["wireless"], device: "pci/wext",
                                               driver: "ipw2200"),
                   expected: .wifi, reason: "sysfs wireless/"),
    ClassifierCase(name: "wlan0", sysfs: .init(files: ["uevent": "INTERFACE=wlan0\nIFINDEX=3\nDEVTYPE=wlan\n"],
                                                device: "sdio/mmc1", driver: "brcmfmac"),
                   expected: .wifi, reason: "uevent DEVTYPE=wlan"),
    ClassifierCase(name: "mon0", arpType: ARPHRD.ieee80211Radiotap, sysfs: .init(),
                   expected: .wifi, reason: "ARPHRD_IEEE80211_RADIOTAP (monitor mode)"),
    ClassifierCase(name: "mbim0", sysfs: .init(files: ["uevent": "DEVTYPE=wwan\n"], device: "usb/m",
                                                driver: "cdc_mbim"),
                   expected: .cellular, reason: "uevent DEVTYPE=wwan"),
    ClassifierCase(name: "usb1", sysfs: .init(device: "usb/q", driver: "qmi_wwan"),
                   expected: .cellular, reason: "driver qmi_wwan"),
    ClassifierCase(name: "mdm0", kind: "rmnet", arpType: ARPHRD.rawIP, sysfs: .init(),
                   expected: .cellular, reason: "netlink kind rmnet"),
    ClassifierCase(name: "mhi0", arpType: ARPHRD.rawIP, sysfs: .init(device: "pci/mhi", driver: "mhi_net"),
                   expected: .cellular, reason: "ARPHRD_RAWIP"),
    ClassifierCase(name: "ppp0", arpType: ARPHRD.ppp, flags: [.pointToPoint], sysfs: .init(),
                   expected: .cellular, reason: "ARPHRD_PPP"),
    ClassifierCase(name: "usb0", sysfs: .init(device: "usb/rndis", driver: "rndis_host"),
                   expected: .cellular, reason: "USB tethering driver rndis_host"),
    ClassifierCase(name: "usb2", sysfs: .init(device: usbModemDevice, driver: "cdc_ether",
                                               extraDevicePaths: ["usb1/1-1/1-1:1.2/tty/ttyACM0"]),
                   expected: .cellular, reason: "driver cdc_ether with a sibling tty (modem)"),
    ClassifierCase(name: "enx001122", sysfs: .init(device: "usb2/2-1/2-1:1.0", driver: "cdc_ether",
                                                    extraDevicePaths: ["usb2/2-1/2-1:1.1"]),
                   expected: .ethernet, reason: "ARPHRD_ETHER on a device, driver cdc_ether"),
    ClassifierCase(name: "vpn0", arpType: ARPHRD.none, sysfs: .init(files: ["tun_flags": "0x1001\n"]),
                   expected: .tunnel, reason: "sysfs tun_flags (tun)"),
    ClassifierCase(name: "vm-tap", kind: "tun", sysfs: .init(files: ["tun_flags": "0x1002\n"]),
                   expected: .tunnel, reason: "sysfs tun_flags (tap)"),
    ClassifierCase(name: "office", kind: "wireguard", arpType: ARPHRD.none, sysfs: .init(),
                   expected: .tunnel, reason: "netlink kind wireguard"),
    ClassifierCase(name: "gre1", kind: "gre", arpType: ARPHRD.ipgre, sysfs: .init(),
                   expected: .tunnel, reason: "netlink kind gre"),
    ClassifierCase(name: "weird0", arpType: ARPHRD.none, sysfs: .init(),
                   expected: .tunnel, reason: "ARPHRD_NONE"),
    ClassifierCase(name: "veth7", kind: "veth", sysfs: .init(), expected: .virtual,
                   reason: "netlink kind veth"),
    ClassifierCase(name: "wg-test", kind: "veth", sysfs: .init(), expected: .virtual,
                   reason: "netlink kind veth"),
    ClassifierCase(name: "br0", kind: "bridge", sysfs: .init(files: ["uevent": "DEVTYPE=bridge\n"]),
                   expected: .virtual, reason: "netlink kind bridge"),
    ClassifierCase(name: "wwan0", sysfs: .init(device: "pci/x", driver: "unknown_modem"),
                   expected: .cellular, reason: "name wwan*"),
    ClassifierCase(name: "utun3", arpType: 0xFFFF, sysfs: .init(), expected: .tunnel,
                   reason: "name utun*"),
    ClassifierCase(name: "nodev0", sysfs: .init(), expected: .virtual,
                   reason: "no sysfs device link"),
    ClassifierCase(name: "enp3s0", expected: .ethernet,
                   reason: "ARPHRD_ETHER on a device, driver e1000e"),
    ClassifierCase(name: "can0", arpType: 280, sysfs: .init(device: "spi/can", driver: "mcp251x"),
                   expected: .other, reason: "no rule matched (ARPHRD 280)"),
    ClassifierCase(name: "ib0", kind: "ipoib", arpType: 32, sysfs: .init(device: "pci/ib", driver: "mlx5"),
                   expected: .other, reason: "no rule matched (ARPHRD 32, kind ipoib)"),
]

@Suite("Classifier", .ownThread, .timeLimit(.minutes(3)))
struct ClassifierTests {
    @Test("each detection rule, over a fake sysfs tree", arguments: classifierCases)
    func detection(_ row: ClassifierCase) throws {
        let sysfs = try FakeSysfs()
        try sysfs.add(row.name, row.sysfs)
        let link = Link(ifindex: 5, name: row.name, kind: row.kind, arpType: row.arpType, flags: row.flags,
                        sysfs: SysfsReader(root: sysfs.root).facts(for: row.name))
        #expect(Classifier().classify(link) == .classified(row.expected, reason: row.reason))
    }

    @Test("an interface missing from sysfs is classified from netlink alone")
    func missingFromSysfs() throws {
        let sysfs = try FakeSysfs()
        let reader = SysfsReader(root: sysfs.root)
        let veth = Link(ifindex: 9, name: "gone", kind: "veth", arpType: ARPHRD.ether)
        #expect(Classifier().classify(veth, facts: reader.facts(for: veth.name)) == .classified(.virtual, reason: "netlink kind veth"))
        let ether = Link(ifindex: 9, name: "../../etc", arpType: ARPHRD.ether)
        #expect(Classifier().classify(ether, facts: reader.facts(for: ether.name)) == .classified(.virtual, reason: "no sysfs device link"))
    }

    @Test("override rules come first, in order, and the first match wins")
    func overrideOrder() throws {
        let sysfs = try FakeSysfs()
        try sysfs.add("usb0", .init(device: "usb/x", driver: "cdc_ether"))
        try sysfs.add("veth3", .init())
        try sysfs.add("eth0", .init(device: "pci/e", driver: "igb"))
        let rules = try [
            ClassRule(parsing: "usb0 = cellular"),
            ClassRule(parsing: "usb* = ignore"),
            ClassRule(parsing: "veth* = ignore"),
            ClassRule(parsing: "veth3 = ethernet"),
        ]
        let classifier = Classifier(rules: rules)
        let reader = SysfsReader(root: sysfs.root)
        let usb0 = Link(ifindex: 2, name: "usb0", arpType: ARPHRD.ether, sysfs: reader.facts(for: "usb0"))
        let usb1 = Link(ifindex: 3, name: "usb1", arpType: ARPHRD.ether, sysfs: reader.facts(for: "usb1"))
        let veth3 = Link(ifindex: 4, name: "veth3", kind: "veth", arpType: ARPHRD.ether, sysfs: reader.facts(for: "veth3"))
        let eth0 = Link(ifindex: 5, name: "eth0", arpType: ARPHRD.ether, sysfs: reader.facts(for: "eth0"))
        #expect(classifier.classify(usb0) == .classified(.cellular, reason: "config rule 1: usb0 = cellular"))
        #expect(classifier.classify(usb1) == .ignored(reason: "config rule 2: usb* = ignore"))
        #expect(classifier.classify(veth3) == .ignored(reason: "config rule 3: veth* = ignore"))
        #expect(classifier.classify(eth0) == .classified(.ethernet, reason: "ARPHRD_ETHER on a device, driver igb"))

        let reversed = Classifier(rules: rules.reversed())
        #expect(reversed.classify(veth3) == .classified(.ethernet, reason: "config rule 1: veth3 = ethernet"))
        #expect(reversed.classify(usb0) == .ignored(reason: "config rule 3: usb* = ignore"))
    }

    @Test("rules use shell globs", arguments: [
        ("wwan[0-9]", "wwan3", true), ("wwan[0-9]", "wwan10", false), ("veth*", "veth", true),
        ("?th0", "eth0", true), ("eth0", "eth01", false),
    ])
    func globs(pattern: String, name: String, matches: Bool) {
        #expect(ClassRule(pattern: pattern, action: .ignore).matches(name) == matches)
    }

    @Test("a bad rule says what is wrong")
    func badRules() throws {
        #expect(throws: ClassRuleError.missingEquals("usb0 cellular")) {
            try ClassRule(parsing: "usb0 cellular")
        }
        #expect(throws: ClassRuleError.emptyPattern(" = wifi")) { try ClassRule(parsing: " = wifi") }
        #expect(throws: ClassRuleError.unknownClass("modem")) { try ClassRule(parsing: "usb0 = modem") }
        #expect(ClassRuleError.unknownClass("modem").description.contains("cellular"))
        #expect(try ClassRule(parsing: "  tun*=tunnel ") == ClassRule(pattern: "tun*", action: .assign(.tunnel)))
    }

    @Test("sysfs attribute parsing")
    func sysfsParsing() throws {
        #expect(SysfsReader.parseNumber("0x1002\n") == 0x1002)
        #expect(SysfsReader.parseNumber("17") == 17)
        #expect(SysfsReader.parseNumber("zz") == nil)
        let sysfs = try FakeSysfs()
        try sysfs.add("t0", .init(files: ["tun_flags": "0x1001\n", "uevent": "DEVTYPE=wlan\n",
                                          "speed": "10\n"]))
        let facts = SysfsReader(root: sysfs.root).facts(for: "t0")
        #expect(facts == SysfsFacts(devtype: "wlan", tunFlags: 0x1001, speedBitsPerSecond: 10_000_000))
        try sysfs.add("e0", .init(files: ["speed": "-1\n"]))
        #expect(SysfsReader(root: sysfs.root).facts(for: "e0").speedBitsPerSecond == nil)
    }
}
