import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// A reply or signal whose body is not of the shape asked for: an error for the object it
/// came from, never a crash.
struct BusShapeError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Reads one sd-bus message's body, value by value. Each read looks at the type that is there
/// before reading it, so a body of another shape throws ``BusShapeError``; sd-bus has already
/// checked that the message is well formed (strings UTF-8 without NUL, object paths valid).
/// Everything read is copied out: a reader lives no longer than the handler it was given to.
/// Sizes are capped, so a hostile reply costs bounded memory beyond the message itself.
struct BusMessageReader {
    let message: OpaquePointer

    /// Entries of a dictionary (an object's properties, a profile's settings), and elements of
    /// an array of object paths, at most: NetworkManager's largest have a few dozen.
    static let maxEntries = 4096
    /// Bytes of a string value or byte array kept; longer ones are cut (names are cut much
    /// shorter when believed). Object paths and property names that long are refused instead.
    static let maxBytes = 4096

    var sender: String? { sd_bus_message_get_sender(message).map { String(cString: $0) } }

    func isSignal(_ interface: String, _ member: String) -> Bool {
        sd_bus_message_is_signal(message, interface, member) > 0
    }

    /// The error a method call failed with, if it did.
    var failure: BusFailure? {
        guard sd_bus_message_is_method_error(message, nil) > 0, let error = sd_bus_message_get_error(message) else { return nil }
        return BusFailure(name: error.pointee.name.map { String(cString: $0) } ?? "",
                          message: error.pointee.message.map { String(cString: $0) } ?? "",
                          errno: sd_bus_message_get_errno(message))
    }

    func string() throws(BusShapeError) -> String { try basicString("s", tooLong: .cut) }

    func objectPath() throws(BusShapeError) -> String { try basicString("o", tooLong: .refuse) }

    func uint32() throws(BusShapeError) -> UInt32 {
        try expect("u")
        var value: UInt32 = 0
        try check(sd_bus_message_read_basic(message, Self.code("u"), &value), "reading a u")
        return value
    }

    /// An `ao`.
    func objectPaths() throws(BusShapeError) -> [String] {
        try expect("ao")
        try enter("a", "o")
        var paths: [String] = []
        while try peek() != nil {
            guard paths.count < Self.maxEntries else { throw BusShapeError("more than \(Self.maxEntries) object paths") }
            paths.append(try objectPath())
        }
        try exit()
        return paths
    }

    /// An `ay`.
    func bytes() throws(BusShapeError) -> [UInt8] {
        try expect("ay")
        var pointer: UnsafeRawPointer?
        var size = 0
        try check(sd_bus_message_read_array(message, Self.code("y"), &pointer, &size), "reading an ay")
        guard let pointer else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: min(size, Self.maxBytes)))
    }

    /// A `v`: its value if it is of a type ``BusValue`` carries, else skipped and named by its
    /// signature.
    func variant() throws(BusShapeError) -> BusValue {
        guard let (type, contents) = try peekType(), type == Self.code("v"), let contents else {
            throw BusShapeError("\(try describeNext()) where v was expected")
        }
        try enter("v", contents)
        let value: BusValue
        switch contents {
        case "s": value = .string(try string())
        case "o": value = .objectPath(try objectPath())
        case "u": value = .uint32(try uint32())
        case "(uu)":
            try enter("r", "uu")
            value = .uint32Pair(try uint32(), try uint32())
            try exit()
        case "ay": value = .bytes(try bytes())
        default:
            try check(sd_bus_message_skip(message, contents), "skipping a \(contents)")
            value = .other(contents)
        }
        try exit()
        return value
    }

    /// An `a{sv}`: an object's properties of one interface.
    func properties() throws(BusShapeError) -> BusProperties {
        try expect("a{sv}")
        try enter("a", "{sv}")
        var properties: BusProperties = [:]
        while try enterEntry("sv") {
            let name = try basicString("s", tooLong: .refuse)
            let value = try variant()
            try exit()
            guard properties.count < Self.maxEntries else { throw BusShapeError("more than \(Self.maxEntries) properties") }
            properties[name] = value
        }
        try exit()
        return properties
    }

    /// An `a{sa{sv}}`: a connection profile's settings, by setting name.
    func settings() throws(BusShapeError) -> [String: BusProperties] {
        try expect("a{sa{sv}}")
        try enter("a", "{sa{sv}}")
        var settings: [String: BusProperties] = [:]
        while try enterEntry("sa{sv}") {
            let name = try basicString("s", tooLong: .refuse)
            let properties = try properties()
            try exit()
            guard settings.count < Self.maxEntries else { throw BusShapeError("more than \(Self.maxEntries) settings") }
            settings[name] = properties
        }
        try exit()
        return settings
    }

    /// A `PropertiesChanged` signal's body (`sa{sv}as`): the interface, and the names of the
    /// properties changed or invalidated; the values are skipped, since a change leads to a read.
    func changedProperties() throws(BusShapeError) -> (interface: String, names: Set<String>) {
        let interface = try string()
        var names: Set<String> = []
        try expect("a{sv}")
        try enter("a", "{sv}")
        while try enterEntry("sv") {
            names.insert(try basicString("s", tooLong: .refuse))
            try check(sd_bus_message_skip(message, "v"), "skipping a v")
            try exit()
            guard names.count <= Self.maxEntries else { throw BusShapeError("more than \(Self.maxEntries) properties") }
        }
        try exit()
        try expect("as")
        try enter("a", "s")
        while try peek() != nil {
            names.insert(try basicString("s", tooLong: .refuse))
            guard names.count <= Self.maxEntries else { throw BusShapeError("more than \(Self.maxEntries) properties") }
        }
        try exit()
        return (interface, names)
    }

    private enum TooLong { case cut, refuse }

    private func basicString(_ type: Character, tooLong: TooLong) throws(BusShapeError) -> String {
        try expect(String(type))
        var pointer: UnsafePointer<CChar>?
        try check(sd_bus_message_read_basic(message, Self.code(type), &pointer), "reading an \(type)")
        guard let pointer else { throw BusShapeError("an \(type) without a value") }
        let length = strnlen(pointer, Self.maxBytes + 1)
        if length > Self.maxBytes && tooLong == .refuse { throw BusShapeError("an \(type) longer than \(Self.maxBytes) bytes") }
        // Cut between bytes: whatever is left of a split character decodes as U+FFFD.
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: min(length, Self.maxBytes)), as: UTF8.self)
        }
    }

    /// The next value's type code and, for a container, its contents' signature; nil at the end
    /// of the current container.
    private func peekType() throws(BusShapeError) -> (type: CChar, contents: String?)? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        let result = sd_bus_message_peek_type(message, &type, &contents)
        try check(result, "looking at the next value")
        return result == 0 ? nil : (type, contents.map { String(cString: $0) })
    }

    /// The next value's full signature; nil at the end of the current container.
    private func peek() throws(BusShapeError) -> String? {
        guard let (type, contents) = try peekType() else { return nil }
        let code = Character(Unicode.Scalar(UInt8(bitPattern: type)))
        switch code {
        case "a": return "a" + (contents ?? "")
        case "(": return "(" + (contents ?? "") + ")"
        case "{": return "{" + (contents ?? "") + "}"
        default: return String(code)
        }
    }

    private func describeNext() throws(BusShapeError) -> String {
        try peek().map { "found \($0)" } ?? "the body ends"
    }

    private func expect(_ signature: String) throws(BusShapeError) {
        guard try peek() == signature else { throw BusShapeError("\(try describeNext()) where \(signature) was expected") }
    }

    private func enter(_ type: Character, _ contents: String) throws(BusShapeError) {
        let result = sd_bus_message_enter_container(message, Self.code(type), contents)
        try check(result, "entering an \(type) of \(contents)")
        guard result > 0 else { throw BusShapeError("no \(type) of \(contents) to enter") }
    }

    /// Enters the next dictionary entry; false at the end of the dictionary.
    private func enterEntry(_ contents: String) throws(BusShapeError) -> Bool {
        let result = sd_bus_message_enter_container(message, Self.code("e"), contents)
        try check(result, "entering a dictionary entry of \(contents)")
        return result > 0
    }

    private func exit() throws(BusShapeError) {
        try check(sd_bus_message_exit_container(message), "leaving a container")
    }

    private func check(_ result: Int32, _ what: String) throws(BusShapeError) {
        guard result >= 0 else { throw BusShapeError("\(what) failed: \(String(cString: strerror(-result)))") }
    }

    private static func code(_ type: Character) -> CChar { CChar(bitPattern: type.asciiValue ?? 0) }
}

/// Why a method call got no answer: the D-Bus error it failed with (a timeout is
/// `org.freedesktop.DBus.Error.NoReply`), or a call that could not even be sent.
struct BusFailure: Error, CustomStringConvertible {
    var name: String
    var message: String
    var errno: Int32

    /// Cut short and without control characters: the peer chose both strings, and they go to the
    /// journal.
    var description: String {
        let text = message.isEmpty ? name : "\(name): \(message)"
        return NetworkManagerReading.capped(String(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
    }
}
