import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What docs/PROTOCOL.md, CONFIG.md and SECURITY.md promise and no other test held the daemon
/// to: framing, unknown fields, default limits, the idle timeout against a trickle, symlinks
/// planted for its files, directories above its own, and the socket and admin groups.
@Suite("Documented behaviour", .enabled(if: NetworkNamespace.available, NetworkNamespace.skipReason), .ownThread, .timeLimit(.minutes(10)))
struct DocumentedBehaviourTests {
    func started(_ config: String = "interval = 3600\n") throws -> (NetworkNamespace, DaemonProcess) {
        let namespace = try NetworkNamespace()
        let daemon = try DaemonProcess(namespace: namespace, config: config)
        try daemon.start()
        return (namespace, daemon)
    }

    @Test("a request ended by \\r\\n is a request; unknown members are ignored; query of an unknown name is unknown_interface")
    func framingAndFields() throws {
        let (_, daemon) = try started()
        let client = try daemon.client()
        try client.send(#"{"v":1,"id":1,"cmd":"status"}"# + "\r\n")
        let crlf = try SocketClient.decode(try #require(try client.readLine()))
        #expect(crlf["id"] as? Int == 1 && crlf["ok"] as? Bool == true, "\(crlf)")
        let future = try client.request(#"{"v":1,"id":2,"cmd":"status","since_v9":{"a":[1,{"b":null}]},"note":"x"}"#)
        #expect(future["id"] as? Int == 2 && future[path: "result.ready"] as? Bool == true, "\(future)")
        let query = try client.request(#"{"v":1,"id":3,"cmd":"query","interfaces":["lo","wlan9"],"usage":[{"period":"day"}]}"#)
        #expect(query.string("error.code") == "unknown_interface", "\(query)")
        #expect(query.string("error.message")?.contains("wlan9") == true, "\(query)")
    }

    @Test("events answers at most 1000 without a limit, and more when asked")
    func eventsDefaultLimit() throws {
        // owner_grace = 0: a veth pair with both ends here is counted at the next sample
        // instead of waiting for a runtime to move an end away (docs/NAMESPACES.md).
        let (namespace, daemon) = try started("interval = 3600\nowner_grace = 0\n")
        // 510 veth pairs appearing: 1020 `appeared` events, just past the default (every link
        // made or deleted holds the RTNL lock other tests' namespaces need too).
        try namespace.ipBatch((0..<510).map { "link add d\($0)a type veth peer name d\($0)b" })
        let client = try daemon.client()
        _ = try client.request(#"{"v":1,"cmd":"sample"}"#)
        let byDefault = try client.request(#"{"v":1,"cmd":"events","kind":"appeared"}"#)
        #expect((byDefault[path: "result.events"] as? [Any])?.count == 1000, "\(byDefault.string("error.message") ?? "")")
        let asked = try client.request(#"{"v":1,"cmd":"events","kind":"appeared","limit":5000}"#)
        #expect((asked[path: "result.events"] as? [Any])?.count == 1020)
    }

    @Test("idle_timeout counts from the last complete request: a client trickling bytes is disconnected")
    func trickleIsIdle() throws {
        let (_, daemon) = try started("interval = 3600\nidle_timeout = 1\n")
        let trickler = try daemon.client()
        try trickler.send(#"{"v":1,"#)
        var notice: String?
        let deadline = Date().addingTimeInterval(60)
        // A byte every 100 ms, never a newline: far more often than the timeout, and no request.
        while notice == nil && Date() < deadline {
            if let line = try? trickler.readLine(timeoutMilliseconds: 100) {
                notice = line
                break
            }
            // The daemon may close the connection between the poll and this send (EPIPE): its
            // notice was written before, and is read next.
            do { try trickler.send(" ") } catch {
                notice = try trickler.readLine(timeoutMilliseconds: 30_000)
                break
            }
        }
        let reply = try SocketClient.decode(try #require(notice, "still connected after 30 s of trickling"))
        #expect(reply.string("error.code") == "idle_timeout", "\(reply)")
        // A client that asks is still served meanwhile.
        #expect(try daemon.client().request(#"{"v":1,"cmd":"status"}"#)["ok"] as? Bool == true)
    }

    @Test("a symlink planted as the database is refused (73) and as the estimate log is not written through; the target is untouched")
    func plantedSymlinks() throws {
        let daemon = try DaemonProcess(namespace: try NetworkNamespace(), config: "interval = 3600\n")
        let victim = daemon.directory + "/victim"
        try "precious\n".write(toFile: victim, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: daemon.stateDirectory, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: daemon.stateDirectory + "/ifmeter.db", withDestinationPath: victim)
        let refused = try daemon.runToExit([])
        #expect(refused.status == 73, "\(refused)")
        #expect(refused.stderr.contains("cannot open database \(daemon.stateDirectory)/ifmeter.db") && refused.stderr.contains("symbolic link"),
                "\(refused.stderr)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")

        try FileManager.default.removeItem(atPath: daemon.stateDirectory + "/ifmeter.db")
        // The refused start made the log directory and an empty log; a symlink takes its place.
        try FileManager.default.createDirectory(atPath: daemon.logDirectory, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: daemon.logDirectory + "/estimates.jsonl")
        try FileManager.default.createSymbolicLink(atPath: daemon.logDirectory + "/estimates.jsonl", withDestinationPath: victim)
        try daemon.start()
        _ = try daemon.client().request(#"{"v":1,"cmd":"sample"}"#)
        #expect(try daemon.stop() == 0)
        #expect(daemon.stderrText.contains("cannot open estimate log \(daemon.logDirectory)/estimates.jsonl"), "\(daemon.stderrText)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
    }

    @Test("a directory above the state directory that others may write is refused, unless sticky like /tmp")
    func parentDirectories() throws {
        let daemon = try DaemonProcess(namespace: try NetworkNamespace(), config: "interval = 3600\n")
        let open = daemon.directory + "/open"
        try FileManager.default.createDirectory(atPath: open + "/state", withIntermediateDirectories: true)
        _ = try Command.check(["chmod", "0777", open])
        let refused = try daemon.runToExit(["--state-dir", open + "/state"])
        #expect(refused.status == 78, "\(refused)")
        #expect(refused.stderr.contains(open) && refused.stderr.contains("writable by group or others"), "\(refused.stderr)")
        _ = try Command.check(["chmod", "1777", open])
        try daemon.start(extraArguments: ["--state-dir", open + "/state"])
        #expect(FileManager.default.fileExists(atPath: open + "/state/ifmeter.db"))
        #expect(try daemon.stop() == 0)
    }

    @Test("socket_group owns the socket; a member of admin_group may run admin commands, another user may not")
    func groups() throws {
        // getgrnam_r: getgrnam's entry is one buffer for the whole process, and other tests
        // (a config naming another group) overwrite it meanwhile.
        var entry = group(), found: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 4096)
        getgrnam_r("nogroup", &entry, &buffer, buffer.count, &found)
        let nogroup = try #require(found, "the nogroup group").pointee.gr_gid
        let (_, daemon) = try started("interval = 3600\nsocket_group = nogroup\nadmin_group = nogroup\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: daemon.directory)
        var info = stat()
        #expect(lstat(daemon.socket, &info) == 0 && info.st_gid == nogroup)
        let reload = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.send(b'{"v":1,"cmd":"reload"}\\n')
            print(s.makefile("rb").readline().decode().strip())
            """
        let member = try Command.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                                      "/usr/bin/python3", "-c", reload, daemon.socket])
        #expect(try SocketClient.decode(member.stdout)["ok"] as? Bool == true, "\(member)")
        let other = try Command.run(["setpriv", "--reuid=daemon", "--regid=daemon", "--clear-groups",
                                     "/usr/bin/python3", "-c", reload, daemon.socket])
        #expect(try SocketClient.decode(other.stdout).string("error.code") == "permission_denied", "\(other)")
    }

    @Test("the log and the socket stay where their checked directories were: a link repointed after the start moves neither")
    func resolvedPaths() throws {
        let daemon = try DaemonProcess(namespace: try NetworkNamespace(), config: "interval = 3600\n")
        let (first, second, link) = (daemon.directory + "/first", daemon.directory + "/second", daemon.directory + "/current")
        for directory in [first, second] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: first)
        try daemon.start(extraArguments: ["--log-dir", link, "--socket", link + "/ifmeterd.sock"], waitForReady: false)
        _ = try eventually("ready on the linked socket") {
            (try? SocketClient(path: link + "/ifmeterd.sock").request(#"{"v":1,"cmd":"status"}"#))?[path: "result.ready"] as? Bool == true ? true : nil
        }
        try FileManager.default.removeItem(atPath: link)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: second)
        // Reached through the directory it was bound in, not through the link now.
        let client = try SocketClient(path: first + "/ifmeterd.sock")
        _ = try client.request(#"{"v":1,"cmd":"sample"}"#)
        daemon.signal(SIGHUP)  // reopens the log: by the path resolved at the start
        _ = try client.request(#"{"v":1,"cmd":"status"}"#)
        #expect(try daemon.stop() == 0)
        #expect(FileManager.default.fileExists(atPath: first + "/estimates.jsonl"))
        #expect(!FileManager.default.fileExists(atPath: second + "/estimates.jsonl"))
        #expect(!FileManager.default.fileExists(atPath: first + "/ifmeterd.sock"), "removed at stop, from where it was bound")
    }
}
