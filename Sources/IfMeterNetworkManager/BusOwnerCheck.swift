#if canImport(Glibc)
import Glibc
#endif

/// Who owns a well-known bus name, and whether to believe them. On a bus where anyone may own
/// any name (a misconfigured policy, a test bus), a process of another user can claim
/// `org.freedesktop.NetworkManager`: the owner is believed only if the bus says its uid is the
/// one allowed (`GetConnectionUnixUser`, which the bus daemon answers from the socket's peer
/// credentials, not from anything the owner says). The outcome names the owner's unique name,
/// the one address its calls go to and its signals are accepted from. Asynchronous; releasing
/// the check cancels it.
final class BusOwnerCheck {
    enum Outcome: Equatable {
        case believed(owner: String)
        case notRunning
        case impostor(owner: String, uid: UInt32)
        /// The bus did not answer, or answered nonsense; or the owner left while it was asked about.
        case failed(String)
    }

    static let busName = "org.freedesktop.DBus"
    static let busPath = "/org/freedesktop/DBus"
    static let noOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"

    private let bus: BusConnection
    private let allowedUID: UInt32
    private let timeout: UInt64
    private let done: (Outcome) -> Void
    private var pending: BusSlot?

    /// Checks the owner of `name`: `owner` when a NameOwnerChanged already said who it is, else
    /// whoever the bus says owns it now. `done` is called once, on the loop, unless the check
    /// is released first.
    init(_ name: String, owner: String? = nil, bus: BusConnection, allowedUID: UInt32, timeout: UInt64,
         done: @escaping (Outcome) -> Void) {
        self.bus = bus
        self.allowedUID = allowedUID
        self.timeout = timeout
        self.done = done
        if let owner {
            askUID(of: owner)
        } else {
            ask("GetNameOwner", name) { [weak self] result in
                switch result {
                case .failure(let failure) where failure.name == Self.noOwner: self?.finish(.notRunning)
                case .failure(let failure): self?.finish(.failed("GetNameOwner(\(name)) failed: \(failure)"))
                case .success(let reply):
                    do throws(BusShapeError) { self?.askUID(of: try reply.string()) } catch {
                        self?.finish(.failed("GetNameOwner(\(name)) answered \(error)"))
                    }
                }
            }
        }
    }

    private func askUID(of owner: String) {
        ask("GetConnectionUnixUser", owner) { [weak self] result in
            guard let self else { return }
            switch result {
            case .failure(let failure): finish(.failed("GetConnectionUnixUser(\(owner)) failed: \(failure)"))
            case .success(let reply):
                do throws(BusShapeError) {
                    let uid = try reply.uint32()
                    finish(uid == allowedUID ? .believed(owner: owner) : .impostor(owner: owner, uid: uid))
                } catch {
                    finish(.failed("GetConnectionUnixUser(\(owner)) answered \(error)"))
                }
            }
        }
    }

    private func ask(_ member: String, _ argument: String, _ reply: @escaping (Result<BusMessageReader, BusFailure>) -> Void) {
        switch bus.call(Self.busName, Self.busPath, Self.busName, member, [argument], timeout: timeout, reply: reply) {
        case .success(let slot): pending = slot
        case .failure(let failure): finish(.failed("\(member) could not be sent: \(failure)"))
        }
    }

    private func finish(_ outcome: Outcome) {
        pending = nil
        done(outcome)
    }
}
