import IfMeterHTTP

/// `http-host`: the `Host` header of a request to the HTTP listener, as any client (a web page
/// rebinding its name among them) may send it.
extension FuzzTargets {
    /// The header through ``HostAllowList``, and as a `http_allowed_hosts` entry. Invariants:
    /// no trap; a name it reads is a name as compared (lowercase letters, digits, `-` and `.`,
    /// read again the same); a header the defaults answer names an address, `localhost` or the
    /// host's name; `*` answers every header that is a host, and no more; a name configured is
    /// answered.
    public static func httpHost(_ bytes: [UInt8]) {
        let header = String(decoding: bytes, as: UTF8.self)
        let defaults = try! HostAllowList(hostName: "fuzzhost")
        let any = try! HostAllowList(hostName: nil, configured: ["*"])
        switch HostAllowList.host(of: header) {
        case .name(let name)?:
            guard name.utf8.allSatisfy({ $0 == 0x2D || $0 == 0x2E || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) }),
                  HostAllowList.host(of: name) == .name(name) else { fatalError("\(header) read as the name \(name)") }
            guard defaults.allows(header) == (name == "localhost" || name.hasSuffix(".localhost") || name == "fuzzhost") else {
                fatalError("the defaults decided \(header) wrongly")
            }
            guard any.allows(header) else { fatalError("* refused the name \(name)") }
        case .address?:
            guard defaults.allows(header) else { fatalError("the address \(header) was refused") }
        case nil:
            guard !defaults.allows(header), !any.allows(header) else { fatalError("\(header) is no host, yet answered") }
        }
        if let configured = try? HostAllowList(hostName: nil, configured: [header]), !configured.anyName {
            guard configured.names.count == 1, configured.allows(header) else { fatalError("the entry \(header) is not answered") }
        }
    }
}
