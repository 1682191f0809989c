import IfMeterOwners
import IfMeterTestSupport
import Testing

/// libvirt's live status files as libvirtd 9.0 writes them, and as anyone else might: what is
/// read, and what makes a file or a value unusable.
@Suite("libvirt status", .ownThread, .timeLimit(.minutes(3)))
struct LibvirtStatusTests {
    /// A status file as libvirtd 9.0 wrote it for a diskless domain, its capability flags cut
    /// to two; a second NIC (user networking, no tap) and a third added.
    static let status = """
    <!--
    WARNING: THIS IS AN AUTO-GENERATED FILE. CHANGES TO IT ARE LIKELY TO BE
    OVERWRITTEN AND LOST. Changes to this xml configuration should be made using:
      virsh edit ifmt-a
    -->

    <domstatus state='running' reason='booted' pid='27156'>
      <monitor path='/var/lib/libvirt/qemu/domain-2-ifmt-a/monitor.sock' type='unix'/>
      <qemuCaps>
        <flag name='kvm'/>
        <flag name='sdl'/>
      </qemuCaps>
      <devices>
        <device alias='net0'/>
      </devices>
      <domain type='qemu' id='2'>
        <name>ifmt-a</name>
        <uuid>ae25cd81-9c70-4c91-9c74-481c24be67a4</uuid>
        <description>a &amp; b</description>
        <os>
          <type arch='x86_64' machine='pc-i440fx-7.2'>hvm</type>
          <boot dev='network'/>
        </os>
        <devices>
          <emulator>/usr/bin/qemu-system-x86_64</emulator>
          <interface type='bridge'>
            <mac address='52:54:00:50:6b:de'/>
            <source bridge='br0'/>
            <target dev='vnet1'/>
            <model type='virtio'/>
            <alias name='net0'/>
          </interface>
          <interface type='user'>
            <mac address='52:54:00:00:00:02'/>
          </interface>
          <interface type="network">
            <mac address="52:54:00:aa:bb:cc"/>
            <target dev="vnet7"/>
          </interface>
        </devices>
      </domain>
    </domstatus>
    """

    @Test("name, UUID and each NIC's tap and MAC, in the file's order; comments, other elements and entities elsewhere pass")
    func reads() throws {
        let domain = try #require(LibvirtSource.domain(statusXML: Array(Self.status.utf8)))
        #expect(domain.name == "ifmt-a")
        #expect(domain.uuid == "ae25cd81-9c70-4c91-9c74-481c24be67a4")
        #expect(domain.interfaces == [
            LibvirtDomain.Interface(target: "vnet1", mac: [0x52, 0x54, 0x00, 0x50, 0x6b, 0xde]),
            LibvirtDomain.Interface(target: nil, mac: [0x52, 0x54, 0x00, 0x00, 0x00, 0x02]),
            LibvirtDomain.Interface(target: "vnet7", mac: [0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc]),
        ])
    }

    @Test("a tap is a NIC's by its name and its address: libvirt's fe-prefixed MAC or the guest's own")
    func nicOfTap() throws {
        let domain = try #require(LibvirtSource.domain(statusXML: Array(Self.status.utf8)))
        #expect(domain.nic(tap: "vnet1", address: "fe:54:00:50:6b:de") == 1)
        #expect(domain.nic(tap: "vnet1", address: "52:54:00:50:6b:de") == 1)
        #expect(domain.nic(tap: "vnet7", address: "fe:54:00:aa:bb:cc") == 3)
        // The next domain's tap under a name this stale file still lists.
        #expect(domain.nic(tap: "vnet1", address: "fe:54:00:11:22:33") == nil)
        // A guest MAC of its own beginning with fe: libvirt gives the tap fa.
        let fe = LibvirtDomain(name: "f", uuid: domain.uuid, interfaces: [.init(target: "t48fetap", mac: [0xfe, 0x54, 0, 0x48, 0, 0x21])])
        #expect(fe.nic(tap: "t48fetap", address: "fa:54:00:48:00:21") == 1)
        #expect(fe.nic(tap: "t48fetap", address: "fe:54:00:48:00:21") == 1)
        #expect(fe.nic(tap: "t48fetap", address: "fb:54:00:48:00:21") == nil)
        #expect(domain.nic(tap: "vnet1", address: "12:54:00:50:6b:de") == nil)
        #expect(domain.nic(tap: "vnet2", address: "fe:54:00:50:6b:de") == nil)
        #expect(domain.nic(tap: "vnet1", address: "") == nil)
    }

    @Test("what makes a file unusable: bad nesting, another root, a DOCTYPE, CDATA, a name no owner may have, a bad UUID, 65 levels")
    func refused() {
        func parse(_ text: String) -> LibvirtDomain? { LibvirtSource.domain(statusXML: Array(text.utf8)) }
        func file(name: String = "a", uuid: String = "ae25cd81-9c70-4c91-9c74-481c24be67a4", inner: String = "") -> String {
            "<domstatus><domain><name>\(name)</name><uuid>\(uuid)</uuid>\(inner)</domain></domstatus>"
        }
        #expect(parse(file())?.name == "a")
        #expect(parse(file()).map { $0.interfaces.isEmpty } == true)
        #expect(parse("<domstatus><domain><name>a</name><uuid>ae25cd81-9c70-4c91-9c74-481c24be67a4</uuid></domstatus>") == nil)
        #expect(parse("<domain><name>a</name><uuid>ae25cd81-9c70-4c91-9c74-481c24be67a4</uuid></domain>") == nil)
        #expect(parse("<!DOCTYPE x>" + file()) == nil)
        #expect(parse(file(inner: "<x><![CDATA[ <y> ]]></x>")) == nil)
        #expect(parse(file(name: "a&amp;b")) == nil)
        #expect(parse(file(name: "a b")) == nil)
        #expect(parse(file(name: "")) == nil)
        #expect(parse(file(uuid: "AE25CD81-9C70-4C91-9C74-481C24BE67A4")) == nil)
        #expect(parse(file(uuid: "not-a-uuid")) == nil)
        #expect(parse(file(inner: String(repeating: "<x>", count: 62) + String(repeating: "</x>", count: 62))) != nil, "64 levels")
        #expect(parse(file(inner: String(repeating: "<x>", count: 63) + String(repeating: "</x>", count: 63))) == nil, "65 levels")
        #expect(parse(file() + "<!-- unterminated") == nil)
        #expect(parse(file(inner: "<x a='1' b=\"2\" c='<'/>")) == nil)
        #expect(parse(String(file().dropLast())) == nil)
        #expect(parse("") == nil)
    }

    @Test("a NIC's value that is not one is left out, the NIC kept in its place")
    func badValues() throws {
        let inner = """
        <devices><interface><mac address='52:54:00:50:6b'/><target dev='a/b'/></interface>\
        <interface><mac address='52:54:00:50:6b:zz'/><target dev='sixteen-bytes-xx'/></interface>\
        <interface><mac address='52:54:00:50:6b:de'/><target dev='v&amp;1'/></interface>\
        <interface><mac address='52:54:00:50:6b:df'/><target dev='vnet3'/></interface></devices>
        """
        let text = "<domstatus><domain><name>a</name><uuid>ae25cd81-9c70-4c91-9c74-481c24be67a4</uuid>\(inner)</domain></domstatus>"
        let domain = try #require(LibvirtSource.domain(statusXML: Array(text.utf8)))
        #expect(domain.interfaces.map(\.target) == [nil, nil, nil, "vnet3"])
        #expect(domain.interfaces.map { $0.mac != nil } == [false, false, true, true])
        #expect(domain.nic(tap: "vnet3", address: "fe:54:00:50:6b:df") == 4)
    }
}
