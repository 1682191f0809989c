import IfMeterCore

/// What a cgroup's traffic is counted under (``CgroupNaming``): a service's or a user's
/// application's subject.
public struct AppSubject: Hashable, Sendable, CustomStringConvertible {
    /// Which kind of subject it is.
    public enum Kind: Hashable, Sendable {
        /// A system service or a rootful container: ``ServiceKind``.
        case service
        /// A user's application, session, manager or rootless container: ``AppKind``.
        case app

        /// The ``SubjectKind`` its names are checked and labelled by.
        public var subjectKind: any SubjectKind {
            switch self {
            case .service: ServiceKind()
            case .app: AppKind()
            }
        }
    }

    /// The whole subject: `service:nginx.service`, `app:1000/firefox`.
    public let name: String
    public let kind: Kind
    /// The user whose slice the cgroup is in (`user-UID.slice`); nil for a service.
    public let uid: UInt32?

    /// A service's subject; `name` must be an ``AppName``.
    static func service(_ name: String) -> AppSubject {
        AppSubject(name: ServiceKind().subject(name), kind: .service, uid: nil)
    }

    /// A user's application's subject; `name` must be an ``AppName``.
    static func app(_ uid: UInt32, _ name: String) -> AppSubject {
        AppSubject(name: AppKind().subject("\(uid)/\(name)"), kind: .app, uid: uid)
    }

    public var description: String { name }
}

/// A container a cgroup's name claims to run (`docker-ID.scope`, `libpod-ID.scope`), for the
/// daemon to look its name up as the owner sources do (docs/NAMESPACES.md).
public struct CgroupContainer: Hashable, Sendable {
    /// The runtimes whose cgroups are recognised.
    public enum Runtime: String, Hashable, Sendable {
        case docker, podman
    }

    public let runtime: Runtime
    /// 64 lowercase hex digits (``ContainerID``).
    public let id: String
    /// The user running it rootless, whose own storage names it; nil for a rootful one.
    public let uid: UInt32?

    public init(runtime: Runtime, id: String, uid: UInt32?) {
        (self.runtime, self.id, self.uid) = (runtime, id, uid)
    }

    /// Its id as `docker ps` shows it: the first 12 digits.
    public var shortID: String { String(id.prefix(12)) }
}
