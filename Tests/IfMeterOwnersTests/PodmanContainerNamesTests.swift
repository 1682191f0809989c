import Foundation
import IfMeterApps
import IfMeterCore
import IfMeterOwners
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A rootless Podman container's name from its user's own storage (docs/APPS.md, "Names"): the
/// file is the user's, so it is believed only as a regular file that user owns, bounded, and
/// parsed as Podman's own state is.
@Suite("Podman containers' names for applications", .ownThread, .timeLimit(.minutes(2)))
struct PodmanContainerNamesTests {
    static let id = "03d2fa1039788a76c95a07a5b722fedcc612c666126e1c7f9da61530692c0883"
    /// What podman 4.3.1 wrote for `podman run -d --name ifmt-rl …` run by an ordinary user on
    /// these machines (vfs driver: `~/.local/share/containers/storage/vfs-containers/containers.json`).
    static let written = """
        [{"id":"\(id)","names":["ifmt-rl"],"image":"abb908468f3f864468033f78e90ecf56e9e9eab53d9ec7d7c49e29e7e38327db",\
        "layer":"8d2a2e9044f3ef9c8ef4b180c4c7c44a79df7b38beb163a6137b697382bc02b0","metadata":"{\\"image-name\\":\
        \\"localhost/ifmt-bb:1\\",\\"image-id\\":\\"abb908468f3f864468033f78e90ecf56e9e9eab53d9ec7d7c49e29e7e38327db\\",\
        \\"name\\":\\"ifmt-rl\\",\\"created-at\\":1796592337}","created":"2026-12-06T21:25:37.882450072Z",\
        "flags":{"MountLabel":"","ProcessLabel":""}}]
        """

    /// A home with a storage, the uid its files belong to (as root: another user's; otherwise
    /// the test's own), and the lookup over it.
    struct Home {
        let directory = try! TemporaryDirectory()
        let uid: UInt32 = getuid() == 0 ? 4242 : getuid()
        var storage: String { directory.path + "/.local/share/containers/storage" }
        var names: PodmanContainerNames { PodmanContainerNames(rootStorage: "/nonexistent", home: { [path = directory.path, uid] in $0 == uid ? path : nil }) }

        /// Writes `text` as `DRIVER-containers/containers.json`, the user's.
        func write(_ text: String, driver: String = "vfs") throws {
            let directory = storage + "/" + driver + "-containers"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let path = directory + "/containers.json"
            // Replaced as Podman replaces it (a new file renamed over the old).
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            #expect(chown(path, uid, uid) == 0)
        }
    }

    @Test("the file podman 4.3 writes for an ordinary user names the container; another uid's ids do not")
    func namesFromTheUsersStorage() throws {
        let home = Home()
        try home.write(Self.written)
        let names = home.names
        #expect(names.name(id: Self.id, uid: home.uid) == "ifmt-rl")
        #expect(names.name(id: Self.id, uid: home.uid &+ 1) == nil, "another user's storage is theirs")
        #expect(names.name(id: Self.id, uid: nil) == nil, "a rootful container is named from Podman's own storage")
        #expect(names.name(id: String(Self.id.prefix(12)), uid: home.uid) == nil)
    }

    @Test("overlay-containers is looked at before vfs-containers; the file is read again when it changes")
    func driversAndChanges() throws {
        let home = Home()
        try home.write(Self.written)
        try home.write(#"[{"id":"\#(Self.id)","names":["on-overlay"]}]"#, driver: "overlay")
        let names = home.names
        #expect(names.name(id: Self.id, uid: home.uid) == "on-overlay")
        try home.write(#"[{"id":"\#(Self.id)","names":["renamed"]}]"#, driver: "overlay")
        names.newRound()
        #expect(names.name(id: Self.id, uid: home.uid) == "renamed")
        try FileManager.default.removeItem(atPath: home.storage + "/overlay-containers/containers.json")
        names.newRound()
        #expect(names.name(id: Self.id, uid: home.uid) == "ifmt-rl")
    }

    @Test("the user's file is believed only as a regular file of theirs, within the bound; hostile entries are left out")
    func hostileFiles() throws {
        let home = Home()
        let path = home.storage + "/vfs-containers/containers.json"
        // Names Podman would not make, and ids that are not ids, are dropped; the rest stand.
        let other = String(repeating: "a", count: 64), slash = String(repeating: "b", count: 64)
        try home.write("""
            [{"id":"\(Self.id)","names":["web"]},{"id":"\(slash)","names":["../../etc"]},
             {"id":"\(other)","names":["\\u001b[31mred"]},{"id":"ABC","names":["x"]}]
            """)
        let names = home.names
        names.newRound()
        #expect(names.name(id: Self.id, uid: home.uid) == "web")
        names.newRound()
        #expect(names.name(id: slash, uid: home.uid) == nil && names.name(id: other, uid: home.uid) == nil)

        // Not the user's: as root, a file of another uid in their storage is not believed.
        if getuid() == 0 {
            #expect(chown(path, home.uid &+ 1, home.uid &+ 1) == 0)
            names.newRound()
            #expect(names.name(id: Self.id, uid: home.uid) == nil)
        }

        // A link as the last component (to a file the daemon could read and they could not).
        let target = home.directory.path + "/elsewhere.json"
        try FileManager.default.removeItem(atPath: path)
        try Data(Self.written.utf8).write(to: URL(fileURLWithPath: target))
        #expect(chown(target, home.uid, home.uid) == 0)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
        names.newRound()
        #expect(names.name(id: Self.id, uid: home.uid) == nil)

        // A FIFO is not waited on.
        try FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o600) == 0 && chown(path, home.uid, home.uid) == 0)
        names.newRound()
        #expect(names.name(id: Self.id, uid: home.uid) == nil)

        // Past the bound: not read at all.
        try FileManager.default.removeItem(atPath: path)
        let padding = String(repeating: " ", count: PodmanContainerNames.userFileLimit)
        try home.write("[" + padding + #"{"id":"\#(Self.id)","names":["big"]}]"#)
        names.newRound()
        #expect(names.name(id: Self.id, uid: home.uid) == nil)

        // Not JSON, or cut short: nothing named, nothing thrown.
        try home.write(#"[{"id":"\#(Self.id)","names":["cut"#)
        names.newRound()
        #expect(names.name(id: Self.id, uid: home.uid) == nil)
    }

    @Test("a file is read at most once a round: a user who changes it between lookups gets no parse each (#59)")
    func onceARound() throws {
        let home = Home()
        let other = String(repeating: "e", count: 64)
        try home.write(Self.written)
        let names = home.names
        names.newRound()
        #expect(names.name(id: Self.id, uid: home.uid) == "ifmt-rl")
        // Changed within the round: what the round read stands, for every id asked.
        try home.write(#"[{"id":"\#(other)","names":["later"]}]"#)
        #expect(names.name(id: other, uid: home.uid) == nil)
        #expect(names.name(id: Self.id, uid: home.uid) == "ifmt-rl")
        // Gone and back within the round: still no read.
        let path = home.storage + "/vfs-containers/containers.json"
        try FileManager.default.removeItem(atPath: path)
        #expect(names.name(id: Self.id, uid: home.uid) == "ifmt-rl")
        try home.write(#"[{"id":"\#(other)","names":["later"]}]"#)
        // The next round reads it again.
        names.newRound()
        #expect(names.name(id: other, uid: home.uid) == "later")
        #expect(names.name(id: Self.id, uid: home.uid) == nil)
    }

    @Test("uid 0, a home of / or a relative one, and no home at all name nothing")
    func homes() throws {
        let home = Home()
        try home.write(Self.written)
        for answer in [nil, "/", "relative/home"] as [String?] {
            let names = PodmanContainerNames(rootStorage: "/nonexistent", home: { _ in answer })
            #expect(names.name(id: Self.id, uid: home.uid) == nil)
        }
        let rootless = PodmanContainerNames(rootStorage: "/nonexistent", home: { _ in home.directory.path })
        #expect(rootless.name(id: Self.id, uid: 0) == nil, "root's containers are rootful")
    }

    @Test("CgroupNaming with the lookup: a rootless container's cgroup is app:UID/container/NAME, else its short id")
    func cgroupNames() throws {
        let home = Home()
        try home.write(Self.written)
        let names = home.names
        let naming = CgroupNaming(containerName: { names.name(id: $0.id, uid: $0.uid) })
        let scope = "/user.slice/user-\(home.uid).slice/user@\(home.uid).service/user.slice/libpod-\(Self.id).scope"
        #expect(naming.subject(ofPath: Array(scope.utf8)).name == "app:\(home.uid)/container/ifmt-rl")
        #expect(naming.subject(ofPath: Array((scope + "/container").utf8)).name == "app:\(home.uid)/container/ifmt-rl")
        // The same id in another user's tree is theirs, and their storage does not name it.
        let other = home.uid &+ 1
        let theirs = "/user.slice/user-\(other).slice/user@\(other).service/user.slice/libpod-\(Self.id).scope"
        #expect(naming.subject(ofPath: Array(theirs.utf8)).name == "app:\(other)/container/\(Self.id.prefix(12))")
    }

    @Test("the password database gives root's home")
    func passwd() {
        #expect(PodmanContainerNames.passwdHome(0) == "/root")
    }
}
