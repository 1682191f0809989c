import IfMeterCore

/// Names a cgroup of the unified hierarchy, by its path from the root (`/system.slice/nginx.service`),
/// as people know what runs in it: a service (`service:NAME`) or a user's application
/// (`app:UID/NAME`). The one grammar (docs/APPS.md, "Names"):
///
///     /system.slice/nginx.service[/…]                    service:nginx.service
///     /system.slice/system-getty.slice/getty@tty1.service service:getty@tty1.service
///     /init.scope                                         service:init.scope
///     /system.slice/docker-ID.scope, /docker/ID           service:container/NAME
///     /machine.slice/libpod-ID.scope, /libpod_parent/libpod-ID
///                                                         service:container/NAME
///     /system.slice/run-u12.service (systemd-run)         service:COMM, else service:run
///     /kubepods.slice/…/X.scope, /lxc.payload.web         service:X.scope, service:lxc.payload.web
///     /user.slice/user-1000.slice/session-3.scope         app:1000/session
///     …/user-1000.slice/user@1000.service[/init.scope]    app:1000/manager
///     …/user@1000.service/app.slice/app-gnome-firefox-1234.scope
///     …/user@1000.service/app.slice/app-firefox@0a1b2c.service
///                                                         app:1000/firefox
///     …/app.slice/app-org.gnome.Terminal.slice/vte-spawn-UUID.scope
///                                                         app:1000/org.gnome.Terminal
///     …/user@1000.service/app.slice/foo.service[/…]       app:1000/foo.service
///     …/user@1000.service/app.slice/tmux-spawn-UUID.scope app:1000/tmux-spawn.scope
///     …/user@1000.service/app.slice/run-r1a2b.scope       app:1000/COMM, else app:1000/run
///     …/user@1000.service/user.slice/libpod-ID.scope[/…]  app:1000/container/NAME
///     anything else in a user's slice                     app:UID/other
///     /, only slices, or no unit in the first 32 levels   service:other
///
/// A unit is the first component below the slices that is not a slice; whatever is below it
/// counts as it (a service restarted makes a new cgroup of the same path, so the same name).
/// The uid is taken only from `/user.slice/user-UID.slice`, which only root makes: below
/// `user@UID.service` the user names everything (a delegated subtree), so a cgroup there named
/// like another user's, or like a system service, is still counted as that uid's application.
///
/// The path comes in as bytes, as the kernel gives it, in no encoding. Each unit's name is
/// read as systemd escapes it (`\x2d` is `-`), then escaped and cut by ``AppName`` (at most
/// 64 bytes, `%HH` for any byte but letters, digits, `_`, `.`, `-`, `@`). A container's name
/// and a process's command come from the lookups the daemon passes (the owner sources' state,
/// `/proc/PID/comm`): hostile too, they are escaped alike.
public struct CgroupNaming {
    /// A container's name as its runtime knows it, if it does: a short id stands in otherwise.
    public typealias ContainerNames = (CgroupContainer) -> String?
    /// The command (`comm`) of a process in the cgroup at this path, as read; nil if none.
    public typealias FirstCommand = ([UInt8]) -> [UInt8]?

    /// How many components deep a unit is looked for: systemd nests slices a few deep, and a
    /// deeper path is a user's, named as one that names nothing.
    public static let maximumDepth = 32

    private let containerName: ContainerNames
    private let firstCommand: FirstCommand

    public init(containerName: @escaping ContainerNames = { _ in nil }, firstCommand: @escaping FirstCommand = { _ in nil }) {
        self.containerName = containerName
        self.firstCommand = firstCommand
    }

    /// The subject of the cgroup at `path`, e.g. `/system.slice/nginx.service`: never more than
    /// ``AppName``'s bound, accepted by its kind, the same for the same path and lookups.
    public func subject(ofPath path: [UInt8]) -> AppSubject {
        let parts = Self.components(path)
        if parts.count > 1, parts[0].elementsEqual("user.slice".utf8), let uid = Self.userSliceUID(parts[1]) {
            return user(uid, parts, path)
        }
        return system(parts, path)
    }

    // MARK: the system's cgroups

    private func system(_ parts: [ArraySlice<UInt8>], _ path: [UInt8]) -> AppSubject {
        guard let index = Self.belowSlices(parts, from: 0) else { return .service(Self.other) }
        if let container = Self.rootfulContainer(parts, at: index) {
            return .service(name(of: container))
        }
        let unit = parts[index]
        if Self.isRun(unit) {
            return .service(command(at: unit, of: path) ?? Self.run)
        }
        return .service(Self.name(unit) ?? Self.other)
    }

    /// The container of `docker-ID.scope` right under `system.slice`, `/docker/ID`,
    /// `libpod-ID[.scope]` right under `machine.slice` or `/libpod_parent`: where the runtimes
    /// put them (as the owner sources read a process's cgroup).
    private static func rootfulContainer(_ parts: [ArraySlice<UInt8>], at index: Int) -> CgroupContainer? {
        let unit = parts[index]
        if index == 0, parts.count > 1 {
            if unit.elementsEqual("docker".utf8), ContainerID.isValid(String(decoding: parts[1], as: UTF8.self)) {
                return CgroupContainer(runtime: .docker, id: String(decoding: parts[1], as: UTF8.self), uid: nil)
            }
            if unit.elementsEqual("libpod_parent".utf8), let id = libpodID(parts[1]) {
                return CgroupContainer(runtime: .podman, id: id, uid: nil)
            }
        }
        guard index > 0 else { return nil }
        let parent = parts[index - 1]
        if parent.elementsEqual("system.slice".utf8), let id = containerID(unit, prefix: "docker-", scopeRequired: true) {
            return CgroupContainer(runtime: .docker, id: id, uid: nil)
        }
        if parent.elementsEqual("machine.slice".utf8), let id = libpodID(unit) {
            return CgroupContainer(runtime: .podman, id: id, uid: nil)
        }
        return nil
    }

    // MARK: a user's cgroups

    /// Below `/user.slice/user-UID.slice`: a session, or the user's manager and what it runs.
    private func user(_ uid: UInt32, _ parts: [ArraySlice<UInt8>], _ path: [UInt8]) -> AppSubject {
        guard parts.count > 2 else { return .app(uid, Self.other) }
        let unit = parts[2]
        if unit.starts(with: "session-".utf8), Self.has(unit, suffix: ".scope") { return .app(uid, "session") }
        guard unit.starts(with: "user@".utf8), Self.has(unit, suffix: ".service") else { return .app(uid, Self.other) }
        guard parts.count > 3, !parts[3].elementsEqual("init.scope".utf8) else { return .app(uid, "manager") }
        return manager(uid, parts, path)
    }

    /// Below `user@UID.service`, where the user names everything.
    private func manager(_ uid: UInt32, _ parts: [ArraySlice<UInt8>], _ path: [UInt8]) -> AppSubject {
        guard let index = Self.belowSlices(parts, from: 3) else { return .app(uid, Self.other) }
        let unit = parts[index]
        // The deepest `app-ID.slice` above: what the desktop started the unit from.
        let slice = parts[3..<index].last(where: { $0.starts(with: "app-".utf8) }).flatMap(Self.applicationID)
        if index > 3, let id = Self.libpodID(unit) {
            return .app(uid, name(of: CgroupContainer(runtime: .podman, id: id, uid: uid)))
        }
        guard Self.has(unit, suffix: ".service") || Self.has(unit, suffix: ".scope") else {
            return .app(uid, slice ?? Self.other)
        }
        if unit.starts(with: "app-".utf8), let id = Self.applicationID(unit) { return .app(uid, id) }
        if Self.isRun(unit) { return .app(uid, command(at: unit, of: path) ?? Self.run) }
        if let slice { return .app(uid, slice) }
        if Self.has(unit, suffix: ".service") { return .app(uid, Self.name(unit) ?? Self.other) }
        return .app(uid, Self.scopeName(unit) ?? Self.other)
    }

    // MARK: names

    /// `container/NAME` as the runtime names it, else `container/` and its short id.
    private func name(of container: CgroupContainer) -> String {
        let known = containerName(container).flatMap { AppName.escaped($0.utf8) }
        return AppName.containerQualifier + (known ?? container.shortID)
    }

    /// The command of a process in the unit whose component of `path` `unit` is, without
    /// `comm`'s line feed.
    private func command(at unit: ArraySlice<UInt8>, of path: [UInt8]) -> String? {
        guard var comm = firstCommand(Array(path[..<unit.endIndex])) else { return nil }
        while comm.last == UInt8(ascii: "\n") { comm.removeLast() }
        return AppName.escaped(comm)
    }

    /// A unit's name as systemd means it (`\xHH` read), escaped for a subject.
    private static func name(_ unit: ArraySlice<UInt8>) -> String? {
        AppName.escaped(unescaped(unit))
    }

    /// The ApplicationID of systemd's desktop naming (its "Desktop Environment Integration"):
    /// `app[-LAUNCHER]-ID[@RANDOM].service`, `app[-LAUNCHER]-ID-RANDOM.scope` and
    /// `app[-LAUNCHER]-ID.slice`. The id is escaped by the launcher (`-` is `\x2d`), so it is
    /// the last `-` part before the random one.
    private static func applicationID(_ unit: ArraySlice<UInt8>) -> String? {
        var body = unit.dropFirst("app-".utf8.count)
        var scope = false
        if has(body, suffix: ".service") {
            body = body.dropLast(".service".utf8.count)
            body = body.prefix { $0 != UInt8(ascii: "@") }
        } else if has(body, suffix: ".scope") {
            (body, scope) = (body.dropLast(".scope".utf8.count), true)
        } else {
            body = body.dropLast(".slice".utf8.count)
        }
        var parts = body.split(separator: UInt8(ascii: "-"))
        if scope, parts.count > 1 { parts.removeLast() }
        return parts.last.flatMap(name)
    }

    /// A scope's name without its random tail (`tmux-spawn-UUID.scope` is `tmux-spawn.scope`):
    /// the `-` parts at its end that are hex digits.
    private static func scopeName(_ unit: ArraySlice<UInt8>) -> String? {
        var parts = unit.dropLast(".scope".utf8.count).split(separator: UInt8(ascii: "-"))
        while parts.count > 1, let last = parts.last, last.allSatisfy(isHexDigit) { parts.removeLast() }
        return name(ArraySlice(Array(parts.joined(separator: "-".utf8)) + ".scope".utf8))
    }

    // MARK: components

    static let other = "other"
    static let run = "run"

    /// The path's components, empty ones left out, up to one more than ``maximumDepth``: none
    /// deeper is read, however deep the path.
    static func components(_ path: [UInt8]) -> [ArraySlice<UInt8>] {
        var parts: [ArraySlice<UInt8>] = []
        var start = path.startIndex
        while start < path.endIndex, parts.count <= maximumDepth {
            let end = path[start...].firstIndex(of: UInt8(ascii: "/")) ?? path.endIndex
            if end > start { parts.append(path[start..<end]) }
            start = end + 1
        }
        return parts
    }

    /// The first component from `start` on that is not a slice, within ``maximumDepth``.
    private static func belowSlices(_ parts: [ArraySlice<UInt8>], from start: Int) -> Int? {
        var index = start
        while index < min(parts.count, maximumDepth), has(parts[index], suffix: ".slice") { index += 1 }
        return index < min(parts.count, maximumDepth) ? index : nil
    }

    /// `user-UID.slice`'s uid.
    private static func userSliceUID(_ part: ArraySlice<UInt8>) -> UInt32? {
        guard part.starts(with: "user-".utf8), has(part, suffix: ".slice") else { return nil }
        return AppKind.uid(part.dropFirst("user-".utf8.count).dropLast(".slice".utf8.count))
    }

    /// `systemd-run`'s names without `--unit`: `run-uN.service`, `run-rHEX.scope`,
    /// `run-pPID-iN.scope`.
    private static func isRun(_ unit: ArraySlice<UInt8>) -> Bool {
        guard unit.starts(with: "run-".utf8) else { return false }
        let suffix = has(unit, suffix: ".service") ? ".service" : ".scope"
        guard has(unit, suffix: suffix) else { return false }
        let body = unit.dropFirst("run-".utf8.count).dropLast(suffix.utf8.count)
        guard let kind = body.first, body.count > 1, [UInt8(ascii: "u"), UInt8(ascii: "r"), UInt8(ascii: "p")].contains(kind) else {
            return false
        }
        return body.dropFirst().allSatisfy { isHexDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "i") }
    }

    /// Podman's `libpod-ID` or `libpod-ID.scope`.
    private static func libpodID(_ part: ArraySlice<UInt8>) -> String? {
        containerID(part, prefix: "libpod-", scopeRequired: false)
    }

    private static func containerID(_ part: ArraySlice<UInt8>, prefix: String, scopeRequired: Bool) -> String? {
        guard part.starts(with: prefix.utf8) else { return nil }
        var id = part.dropFirst(prefix.utf8.count)
        if has(id, suffix: ".scope") {
            id = id.dropLast(".scope".utf8.count)
        } else if scopeRequired {
            return nil
        }
        let text = String(decoding: id, as: UTF8.self)
        return ContainerID.isValid(text) ? text : nil
    }

    /// `bytes` with systemd's `\xHH` escapes read.
    private static func unescaped(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        guard bytes.contains(UInt8(ascii: "\\")) else { return Array(bytes) }
        var result: [UInt8] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let rest = bytes[index...]
            let digits = rest.dropFirst(2).prefix(2)
            if rest.starts(with: "\\x".utf8), digits.count == 2, digits.allSatisfy(isHexDigit),
               let value = UInt8(String(decoding: digits, as: UTF8.self), radix: 16) {
                result.append(value)
                index += 4
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return result
    }

    private static func has(_ part: ArraySlice<UInt8>, suffix: String) -> Bool {
        part.count > suffix.utf8.count && part.suffix(suffix.utf8.count).elementsEqual(suffix.utf8)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) || (0x41...0x46).contains(byte)
    }
}
