import IfMeterCore
import IfMeterJSON

/// Who owns the namespace a present interface leads into (docs/NAMESPACES.md): its kind
/// (`podman`, `docker`, `kubernetes`, `nspawn`, `lxc`, `libvirt`, `netns`, `process`), its own name
/// and id (a pod's `NAMESPACE/NAME` and UID), and the link's
/// kernel name now (`alias`). The interface's name is then the owner's subject and its figures
/// are from the owner's point of view.
public struct OwnerResult: Hashable, Sendable {
    public var kind: String
    public var name: String
    public var id: String
    public var alias: String

    public init(kind: String, name: String, id: String, alias: String) {
        self.kind = kind
        self.name = name
        self.id = id
        self.alias = alias
    }

    public init(_ owner: LinkOwner) {
        self.init(kind: owner.kind.rawValue, name: owner.name, id: owner.id, alias: owner.alias)
    }
}

extension OwnerResult: JSONWritable, JSONReadable {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("alias"); w.string(alias)
        w.key("id"); w.string(id)
        w.key("kind"); w.string(kind)
        w.key("name"); w.string(name)
        w.endObject()
    }

    public init(reading r: inout JSONReader) throws {
        self.init(kind: "", name: "", id: "", alias: "")
        try r.readObject { r, key in
            switch key {
            case "alias": alias = try r.readString()
            case "id": id = try r.readString()
            case "kind": kind = try r.readString()
            case "name": name = try r.readString()
            default: try r.skipValue()
            }
        }
    }
}
