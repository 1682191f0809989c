import IfMeterCore
@testable import IfMeterCLI
import IfMeterWire
import IfMeterTestSupport
import Testing

@Suite("The first five minutes", .ownThread, .timeLimit(.minutes(3)))
struct FirstMinutesTests {
    func interface(_ name: String, _ interfaceClass: String, operstate: String = "up", bytes: UInt64 = 0) -> InterfaceResult {
        InterfaceResult(InterfaceFields(name: name, ifindex: 1, class: interfaceClass, classReason: "", kind: "",
                                        operstate: operstate, epoch: nil, rate: nil, continuity: Continuity(), labels: []),
                        traffic: Traffic(rxBytes: bytes))
    }

    @Test("physical, Wi-Fi and cellular first; idle down virtual links left out unless --all")
    func defaultOrder() {
        let known = [
            interface("lo", "loopback", bytes: 9), interface("ifb0", "virtual", operstate: "down"),
            interface("br0", "virtual", bytes: 5), interface("wg0", "tunnel", bytes: 7), interface("eth0", "ethernet"),
            interface("usb0", "other"), interface("wwan0", "cellular", operstate: "absent", bytes: 3),
            interface("wlan0", "wifi", bytes: 1), interface("veth1", "virtual", operstate: "lowerlayerdown", bytes: 2),
        ]
        #expect(QuerySelection.shown.pick(known).map(\.name)
                == ["eth0", "wlan0", "wwan0", "usb0", "wg0", "br0", "veth1"])
        #expect(QuerySelection.all.pick(known).map(\.name)
                == ["eth0", "wlan0", "wwan0", "usb0", "wg0", "ifb0", "br0", "veth1"])
    }

    @Test("daemon errors get their own exit statuses and one prefix", arguments: [
        (ErrorCode.tooManyClients, IfMeterCLI.ExitStatus.busy), (.idleTimeout, .connectionLost), (.slowClient, .connectionLost),
        (.storeError, .daemonFailed), (.notReady, .starting), (.permissionDenied, .noPermission), (.badRequest, .usage),
        (.unknownCommand, .protocolMismatch), (.unknownInterface, .usage),
    ])
    func exitStatuses(code: ErrorCode, status: IfMeterCLI.ExitStatus) {
        let error = DaemonClient.describe(WireError(code, "ifmeterd already serves 512 clients (max_clients); try again later"),
                                          command: "status")
        #expect(error.status == status)
        #expect(!error.message.hasPrefix("ifmeterd: ifmeterd"))
    }
}
