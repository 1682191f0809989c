import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Files, directories and sockets that another user or program holds: where notify writes its
/// state, a state directory and its lock, the socket path, the database.
extension HostileTests {
    @Test("notify writes its state only in a directory nobody else can write, and never through a link found there")
    func notifyStateLinks() throws {
        let (_, daemon) = try daemon("interval = 3600\n")
        let victim = daemon.directory + "/victim"
        try "precious\n".write(toFile: victim, atomically: true, encoding: .utf8)
        func notify(_ state: String) throws -> CommandResult {
            try Command.run([CLIBinary.path, "--socket", daemon.socket, "notify", "--once", "--exec", "true", "--state", state])
        }
        // nobody's own directory, with the link nobody planted where root's notify writes its state.
        let foreign = daemon.directory + "/nobody"
        try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: false)
        _ = try Command.check(["chown", "nobody:nogroup", foreign])
        _ = try asNobody(["/bin/ln", "-s", victim, foreign + "/notify.state.new"])
        let refused = try notify(foreign + "/notify.state")
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("refusing the notify state directory \(foreign): \(foreign) belongs to uid"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        // In a directory of its own, a link left there is replaced, not written through.
        let own = daemon.directory + "/own"
        try FileManager.default.createDirectory(atPath: own, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createSymbolicLink(atPath: own + "/notify.state.new", withDestinationPath: victim)
        let saved = try notify(own + "/notify.state")
        #expect(saved.status == 0, "\(saved)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        #expect(try String(contentsOfFile: own + "/notify.state", encoding: .utf8).hasPrefix("ifmeter-notify 1\n"))
        var info = stat()
        #expect(lstat(own + "/notify.state", &info) == 0 && info.st_mode & S_IFMT == S_IFREG)
        #expect(lstat(own + "/notify.state.new", &info) != 0, "the link is gone")
    }

    @Test("a state directory another user owns is refused, and a planted lock symlink's target is never written")
    func foreignStateDirectory() throws {
        let base = try DaemonProcess(namespace: try NetworkNamespace(), config: "interval = 3600\n")
        let victim = base.directory + "/victim"
        try "precious\n".write(toFile: victim, atomically: true, encoding: .utf8)
        for owner in ["nobody", "root"] {
            let state = base.directory + "/state-\(owner)"
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
            _ = try Command.check(["chown", owner, state])
            try FileManager.default.createSymbolicLink(atPath: state + "/ifmeter.db.lock", withDestinationPath: victim)
            // Later flags win: the refused directory, a socket and log directory of its own.
            let result = try base.runToExit(["--state-dir", state, "--socket", base.directory + "/\(owner).sock",
                                             "--log-dir", base.directory + "/log-\(owner)"])
            // A directory another user owns is a configuration to fix (78); a planted symlink
            // makes the lock file impossible to create (73).
            #expect(result.status == (owner == "nobody" ? 78 : 73))
            #expect(result.stderr.contains(owner == "nobody" ? "belongs to uid" : "lock file"), "\(result.stderr)")
            #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        }
        let open = base.directory + "/open-log"
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: true)
        _ = try Command.check(["chmod", "0777", open])
        let result = try base.runToExit(["--state-dir", base.directory + "/s", "--socket", base.directory + "/o.sock",
                                         "--log-dir", open])
        #expect(result.status == 78 && result.stderr.contains("writable by group or others"), "\(result.stderr)")
    }

    @Test("a second daemon on a socket where one answers refuses to start; the first keeps its socket")
    func secondDaemonSameSocket() throws {
        let (_, first) = try daemon("interval = 3600\n")
        let other = try DaemonProcess(namespace: try NetworkNamespace(), config: "interval = 3600\n")
        let result = try other.runToExit(["--socket", first.socket])
        #expect(result.status == 69 && result.stderr.contains("is listening on \(first.socket)"), "\(result.stderr)")
        #expect(try first.client().request(#"{"v":1,"cmd":"status"}"#)["ok"] as? Bool == true)
    }

    @Test("a database another program holds: saves fail fast and are retried, the loop keeps answering")
    func busyDatabase() throws {
        let (_, daemon) = try daemon("interval = 1\nsave_interval = 1\nfold_interval = 0\n")
        let client = try daemon.client()
        let holder = try DatabaseHolder(path: daemon.stateDirectory + "/ifmeter.db", writerOnly: true)
        // Answered while the file is held, again and again: saves fail and the loop goes on
        // (how fast it answers meanwhile is bench-daemon's "round trips while saves run").
        var unhealthy: [String: Any]?
        var answered = 0
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && (unhealthy == nil || answered < 10) {
            let status = try client.request(#"{"v":1,"cmd":"status"}"#)
            answered += 1
            if status[path: "result.store.healthy"] as? Bool == false { unhealthy = status }
            usleep(50_000)
        }
        #expect(answered >= 10)
        let error = try #require(unhealthy, "the held database was never reported").string("result.store.error")
        #expect(error?.contains("locked") == true || error?.contains("busy") == true, "\(String(describing: error))")
        holder.release()
        var healthy = false
        let recovery = Date().addingTimeInterval(60)
        while !healthy && Date() < recovery {
            healthy = try client.request(#"{"v":1,"cmd":"status"}"#)[path: "result.store.healthy"] as? Bool == true
            if !healthy { usleep(100_000) }
        }
        #expect(healthy, "saving works again once the lock is released")
    }
}
