import CSystemd
import IfMeterCore
import IfMeterPlatform
#if canImport(Glibc)
import Glibc
#endif

/// A connection to a message bus, attached to the daemon's loop: method calls and signal
/// matches, all asynchronous, so nothing here ever waits for the bus or a peer on it. Each
/// handler lives as long as its sd-bus slot. Loop thread only.
final class BusConnection {
    /// What `sd_bus_open_system` connects to without `DBUS_SYSTEM_BUS_ADDRESS`.
    static let defaultSystemBus = "unix:path=/run/dbus/system_bus_socket"

    private let handle: OpaquePointer
    /// The matches and the disconnect filter: for the connection's whole life.
    private var kept: [BusSlot] = []

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS` honoured), or to the bus at
    /// `address`, and attaches to `loop`. The error names the address and errno.
    init(address: String?, loop: EventLoop) throws(PlatformError) {
        var bus: OpaquePointer?
        var failed: (call: String, result: Int32)?
        func step(_ call: String, _ body: () -> Int32) {
            guard failed == nil else { return }
            let result = body()
            if result < 0 { failed = (call, result) }
        }
        if let address {
            step("sd_bus_new") { sd_bus_new(&bus) }
            step("sd_bus_set_address") { sd_bus_set_address(bus, address) }
            step("sd_bus_set_bus_client") { sd_bus_set_bus_client(bus, 1) }
            step("sd_bus_start") { sd_bus_start(bus) }
        } else {
            step("sd_bus_open_system") { sd_bus_open_system(&bus) }
        }
        // Else the loop's exit flushes the bus first, and a flush waits with no timeout; nothing
        // is sent here that must outlive the daemon.
        step("sd_bus_set_close_on_exit") { sd_bus_set_close_on_exit(bus, 0) }
        step("sd_bus_attach_event") { sd_bus_attach_event(bus, loop.handle, Int32(SD_EVENT_PRIORITY_NORMAL)) }
        guard failed == nil, let bus else {
            sd_bus_close_unref(bus)
            let (call, result) = failed ?? ("sd_bus_new", -ENOMEM)
            let shown = address ?? getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) } ?? Self.defaultSystemBus
            throw PlatformError(
                .unavailable,
                "cannot connect to the system bus at \(shown): \(call) failed: \(Errno(-result)); "
                    + "which network each interface is on will not be known",
                call: call, errno: -result)
        }
        handle = bus
    }

    deinit {
        kept.removeAll()
        sd_bus_detach_event(handle)
        sd_bus_close_unref(handle)
    }

    /// Calls `member` with string `arguments` and hands `reply` the answer or the failure (a
    /// timeout after `timeout` microseconds is a failure too). The call is cancelled, and
    /// `reply` never called, once the slot returned is released; a call that could not be sent
    /// is a failure returned at once.
    func call(_ destination: String, _ path: String, _ interface: String, _ member: String, _ arguments: [String] = [],
              timeout: UInt64, reply: @escaping (Result<BusMessageReader, BusFailure>) -> Void) -> Result<BusSlot, BusFailure> {
        var message: OpaquePointer?
        var result = sd_bus_message_new_method_call(handle, &message, destination, path, interface, member)
        defer { sd_bus_message_unref(message) }
        for argument in arguments where result >= 0 {
            result = argument.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
        }
        guard result >= 0 else { return .failure(Self.unsent(member, result)) }
        return slot({ reader in reply(reader.failure.map { .failure($0) } ?? .success(reader)) }) { userdata, slot in
            sd_bus_call_async(handle, &slot, message, { message, userdata, _ in
                BusConnection.dispatch(message, userdata)
            }, userdata, timeout)
        }.mapError { Self.unsent(member, $0.code) }
    }

    /// Calls `handler` with every signal `rule` matches, for the connection's life. The match
    /// is installed asynchronously; if the bus refuses it, sd-bus closes the connection.
    func addMatch(_ rule: String, _ handler: @escaping (BusMessageReader) -> Void) throws(PlatformError) {
        let added = slot(handler) { userdata, slot in
            sd_bus_add_match_async(handle, &slot, rule, { message, userdata, _ in
                BusConnection.dispatch(message, userdata)
            }, nil, userdata)
        }
        switch added {
        case .success(let slot): kept.append(slot)
        case .failure(let code): throw PlatformError.system("sd_bus_add_match_async", code.code)
        }
    }

    /// Calls `handler` once the connection is lost (the bus went away, or refused a match).
    func onDisconnect(_ handler: @escaping () -> Void) throws(PlatformError) {
        let added = slot({ reader in
            if reader.isSignal("org.freedesktop.DBus.Local", "Disconnected") { handler() }
        }) { userdata, slot in
            sd_bus_add_filter(handle, &slot, { message, userdata, _ in BusConnection.dispatch(message, userdata) }, userdata)
        }
        switch added {
        case .success(let slot): kept.append(slot)
        case .failure(let code): throw PlatformError.system("sd_bus_add_filter", code.code)
        }
    }

    /// A slot made by `make` with `handler` as its userdata, which the slot's destruction
    /// releases; the errno if sd-bus refused.
    private func slot(_ handler: @escaping (BusMessageReader) -> Void,
                      _ make: (UnsafeMutableRawPointer, inout OpaquePointer?) -> Int32) -> Result<BusSlot, Errno> {
        let box = Unmanaged.passRetained(MessageHandler(handler))
        var slot: OpaquePointer?
        let result = make(box.toOpaque(), &slot)
        guard result >= 0, let slot else {
            box.release()
            return .failure(Errno(result < 0 ? -result : EINVAL))
        }
        sd_bus_slot_set_destroy_callback(slot) { userdata in
            if let userdata { Unmanaged<MessageHandler>.fromOpaque(userdata).release() }
        }
        return .success(BusSlot(slot))
    }

    /// Returns 0: a filter or match handler never stops other handlers from seeing the message.
    private static func dispatch(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?) -> Int32 {
        guard let message, let userdata else { return 0 }
        Unmanaged<MessageHandler>.fromOpaque(userdata).takeUnretainedValue().body(BusMessageReader(message: message))
        return 0
    }

    private static func unsent(_ member: String, _ code: Int32) -> BusFailure {
        let errno = code < 0 ? -code : code
        return BusFailure(name: "ifmeter.Unsent", message: "\(member) could not be sent: \(Errno(errno))", errno: errno)
    }
}

/// An sd-bus slot: a pending call, a match or a filter, which ends (a call is cancelled) when
/// released.
final class BusSlot {
    private let handle: OpaquePointer

    fileprivate init(_ handle: OpaquePointer) { self.handle = handle }

    deinit { sd_bus_slot_unref(handle) }
}

/// A slot's handler, kept alive by the slot (released from its destroy callback).
private final class MessageHandler {
    let body: (BusMessageReader) -> Void
    init(_ body: @escaping (BusMessageReader) -> Void) { self.body = body }
}
