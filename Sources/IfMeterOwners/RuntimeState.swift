import IfMeterJSON

/// What a container runtime's own state files say, read as the hostile input they are (another
/// program writes them; docs/NAMESPACES.md lists each one): every parser takes any bytes and
/// answers nil or an empty result for what it cannot use.
public enum RuntimeState {
    /// Podman's `overlay-containers/containers.json` (containers/storage): each container's id
    /// and its first name (the one `podman ps` shows), in the file's order — the order they
    /// were created in, which names the owner of a namespace several containers share.
    public static func podmanContainers(containersJSON bytes: [UInt8]) -> [(id: String, name: String)] {
        var names: [(id: String, name: String)] = []
        var reader = JSONReader(bytes)
        do {
            try reader.readArray { element in
                var id: String?
                var first: String?
                try element.readObject { member, key in
                    switch key {
                    case "id": id = try member.readString()
                    case "names": first = try member.readStrings().first
                    default: try member.skipValue()
                    }
                }
                if let id, let first, isContainerID(id), OwnerName.isAcceptable(first) { names.append((id, first)) }
            }
        } catch {
            return names
        }
        return names
    }

    /// The network namespace path of an OCI runtime spec (a Podman container's
    /// `userdata/config.json`): `linux.namespaces[type == "network"].path`.
    public static func networkNamespacePath(ociConfig bytes: [UInt8]) -> String? {
        var reader = JSONReader(bytes)
        var path: String?
        do {
            try reader.readObject { top, key in
                guard key == "linux" else { return try top.skipValue() }
                try top.readObject { linux, key in
                    guard key == "namespaces" else { return try linux.skipValue() }
                    try linux.readArray { element in
                        var type: String?
                        var found: String?
                        try element.readObject { member, key in
                            switch key {
                            case "type": type = try member.readString()
                            case "path": found = try member.readString()
                            default: try member.skipValue()
                            }
                        }
                        if type == "network", let found, !found.isEmpty { path = found }
                    }
                }
            }
        } catch {
            return nil
        }
        return path
    }

    /// A Docker container's `config.v2.json`: its id, its name (Docker writes `/web`) and its
    /// network namespace (`NetworkSettings.SandboxKey`, `/var/run/docker/netns/…`).
    public static func dockerContainer(configV2 bytes: [UInt8]) -> (id: String, name: String, sandbox: String)? {
        var reader = JSONReader(bytes)
        var id: String?
        var name: String?
        var sandbox: String?
        do {
            try reader.readObject { top, key in
                switch key {
                case "ID": id = try top.readString()
                case "Name": name = try top.readString()
                case "NetworkSettings":
                    try top.readObject { settings, key in
                        if key != "SandboxKey" {
                            try settings.skipValue()
                        } else if !(try settings.readNull()) {
                            sandbox = try settings.readString()
                        }
                    }
                default: try top.skipValue()
                }
            }
        } catch {
            return nil
        }
        guard let id, isContainerID(id), let name, let sandbox, !sandbox.isEmpty else { return nil }
        let trimmed = name.hasPrefix("/") ? String(name.dropFirst()) : name
        guard OwnerName.isAcceptable(trimmed) else { return nil }
        return (id, trimmed, sandbox)
    }

    /// What a process's `/proc/PID/cgroup` says about who started it: the container id of a
    /// Podman (`libpod-ID`) or Docker (`docker-ID.scope`, `/docker/ID`) container, or else the
    /// systemd unit (`….service`, `….scope`) of the unified or `name=systemd` hierarchy.
    ///
    /// Anyone can name a cgroup (`systemd-run --user --scope --unit libpod-ID`), so a container
    /// id counts only where its runtime puts it: `libpod-ID` right under `machine.slice`,
    /// `libpod_parent` or (rootless) a `user.slice`; `docker-ID.scope` right under
    /// `system.slice`; `/docker/ID` at the top. Even then it is a claim: ``OwnerDirectory``
    /// believes it only when the runtime's own state puts that container in this namespace.
    public static func cgroupOwner(_ text: String) -> CgroupOwner? {
        var unit: String?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, fields[1].isEmpty || fields[1] == "name=systemd" else { continue }
            let components = fields[2].split(separator: "/")
            for index in components.indices.reversed() {
                let component = components[index]
                let parent = index > components.startIndex ? components[index - 1] : ""
                if let id = containerID(in: component, prefix: "libpod-"),
                   parent == "machine.slice" || parent == "libpod_parent" || parent == "user.slice" {
                    return .podman(id: id)
                }
                if let id = containerID(in: component, prefix: "docker-"), parent == "system.slice" { return .docker(id: id) }
                if isContainerID(String(component)), parent == "docker", index == components.startIndex + 1 {
                    return .docker(id: String(component))
                }
                if unit == nil, component.hasSuffix(".service") || component.hasSuffix(".scope") { unit = String(component) }
            }
        }
        return unit.map { .unit($0) }
    }

    /// An LXC monitor's `/proc/PID/cmdline`, `[lxc monitor] LXCPATH NAME`: the container's path
    /// and name; nil for any other process.
    public static func lxcMonitor(cmdline bytes: [UInt8]) -> (path: String, name: String)? {
        let prefix = Array("[lxc monitor] ".utf8)
        guard bytes.count <= 8192, bytes.starts(with: prefix) else { return nil }
        var rest = bytes.dropFirst(prefix.count)
        while rest.last == 0 || rest.last == UInt8(ascii: " ") { rest = rest.dropLast() }
        guard let space = rest.lastIndex(of: UInt8(ascii: " ")) else { return nil }
        let path = String(decoding: rest[..<space], as: UTF8.self)
        let name = String(decoding: rest[(space + 1)...], as: UTF8.self)
        guard path.hasPrefix("/"), !path.utf8.contains(0), OwnerName.isAcceptable(name) else { return nil }
        return (path, name)
    }

    /// A process's `/proc/PID/stat`: its command (`comm`, which may hold spaces and parentheses)
    /// and its parent's pid.
    public static func processStat(_ bytes: [UInt8]) -> (command: String, parent: Int32)? {
        guard let open = bytes.firstIndex(of: UInt8(ascii: "(")), let close = bytes.lastIndex(of: UInt8(ascii: ")")),
              open < close else { return nil }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count >= 2, let parent = Int32(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        return (String(decoding: bytes[(open + 1)..<close], as: UTF8.self), parent)
    }

    public enum CgroupOwner: Hashable, Sendable {
        case podman(id: String)
        case docker(id: String)
        case unit(String)
    }

    private static func containerID(in component: Substring, prefix: String) -> String? {
        guard component.hasPrefix(prefix) else { return nil }
        var id = component.dropFirst(prefix.count)
        if id.hasSuffix(".scope") { id = id.dropLast(".scope".count) }
        return isContainerID(String(id)) ? String(id) : nil
    }

    /// Both runtimes' ids are 64 lowercase hex digits.
    static func isContainerID(_ id: String) -> Bool {
        id.utf8.count == 64 && id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}

/// The names an owner may be known by in a subject (`container:NAME`): what Podman, Docker,
/// machined and `ip netns` accept — letters, digits, `_`, `.`, `-`, `@`, up to 253 bytes —
/// so nothing a runtime's file says can put a `:`, a `/`, a space or a control character in a
/// subject, a label or a log line.
public enum OwnerName {
    public static let maximumLength = 253

    public static func isAcceptable(_ name: String) -> Bool {
        let bytes = name.utf8
        guard !bytes.isEmpty, bytes.count <= maximumLength else { return false }
        return bytes.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "@")
        }
    }
}
