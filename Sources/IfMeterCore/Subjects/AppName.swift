/// The grammar of the names after `service:` and `app:UID/` (docs/APPS.md, "Names"): what
/// ``ServiceKind`` and ``AppKind`` accept, and the one escaping that makes any bytes such a
/// name. The bytes come from cgroup directories and process names, which anyone with a
/// delegated subtree chooses, so a name holds only ``OwnerName``'s bytes (letters, digits,
/// `_`, `.`, `-`, `@`) and `%HH` for every other byte: plain ASCII that no label, JSON string,
/// page, terminal or plan line needs to quote, and distinct bytes stay distinct up to the bound.
public enum AppName {
    /// Most bytes of one name, escapes included: long enough for any unit or application id
    /// people use, short enough for a table's column and a label.
    public static let maximumLength = 64
    /// What comes before a container's name (`service:container/web`,
    /// `app:1000/container/web`): no escaped name holds a `/`, so no other name starts so.
    public static let containerQualifier = "container/"

    /// `bytes` escaped and cut at ``maximumLength``, never inside an escape; nil when empty.
    public static func escaped(_ bytes: some Collection<UInt8>) -> String? {
        var name: [UInt8] = []
        for byte in bytes {
            let escape = !OwnerName.isNameByte(byte)
            guard name.count + (escape ? 3 : 1) <= maximumLength else { break }
            if escape {
                name += [UInt8(ascii: "%"), hexDigit(byte >> 4), hexDigit(byte & 0xf)]
            } else {
                name.append(byte)
            }
        }
        return name.isEmpty ? nil : String(decoding: name, as: UTF8.self)
    }

    /// Whether `name` is one ``escaped(_:)`` can give, or a container's: `container/` and one.
    public static func isValid(_ name: Substring) -> Bool {
        let utf8 = name.utf8
        let plain = utf8.starts(with: containerQualifier.utf8) ? utf8.dropFirst(containerQualifier.utf8.count) : utf8[...]
        guard !plain.isEmpty, plain.count <= maximumLength else { return false }
        var index = plain.startIndex
        while index != plain.endIndex {
            let byte = plain[index]
            if byte == UInt8(ascii: "%") {
                // An escape is two uppercase hex digits of a byte a name may not hold as is.
                let digits = plain[plain.index(after: index)...].prefix(2)
                guard digits.count == 2, let value = UInt8(String(decoding: digits, as: UTF8.self), radix: 16),
                      digits.elementsEqual([hexDigit(value >> 4), hexDigit(value & 0xf)]), !OwnerName.isNameByte(value)
                else { return false }
                index = digits.endIndex
            } else {
                guard OwnerName.isNameByte(byte) else { return false }
                index = plain.index(after: index)
            }
        }
        return true
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }
}
