/// A name the store has history for.
public struct StoredInterface: Hashable, Sendable {
    public var name: String
    public var interfaceClass: String?
    public var kind: String
    public var firstSeen: Double
    public var lastSeen: Double

    public init(name: String, interfaceClass: String?, kind: String, firstSeen: Double, lastSeen: Double) {
        self.name = name
        self.interfaceClass = interfaceClass
        self.kind = kind
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }
}
