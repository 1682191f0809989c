/// The ids Podman and Docker give their containers: 64 lowercase hex digits.
public enum ContainerID {
    public static func isValid(_ id: String) -> Bool {
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
        return bytes.allSatisfy(isNameByte)
    }

    /// A byte a name may hold as it is. Application names (``AppName``) are escaped to these
    /// too, so every kind's names are safe in the same places.
    public static func isNameByte(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: "@")
    }
}
