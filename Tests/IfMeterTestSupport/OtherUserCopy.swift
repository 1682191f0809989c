import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A program a test runs as another user (`nobody`), copied where that user can reach it.
///
/// The checkout's own programs (the built `ifmeter`, `Tests/tools/…`) lie under whatever
/// directory root cloned into: `/root` (0700 on Debian) or a `mktemp -d` directory (0700), which
/// another user cannot search, so `setpriv --reuid=nobody <checkout>/…` fails with EACCES (126)
/// before the program runs. The copy lies in a directory the test makes and sets to 0755, under
/// a temporary directory every user can search; every directory on the way is checked.
public enum OtherUserCopy {
    /// Copies `program` into `directory/bin` (made 0755, as is `directory`) and returns the
    /// copy's path; throws, naming the directory, if another user still could not reach it.
    public static func of(_ program: String, in directory: String) throws -> String {
        let bin = directory + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        // Set explicitly: a directory's mode at creation depends on the process's umask.
        for path in [directory, bin] where chmod(path, 0o755) != 0 {
            throw CommandFailed(command: ["chmod", "0755", path],
                                result: CommandResult(status: errno, stdout: "", stderr: String(cString: strerror(errno))))
        }
        let copy = bin + "/" + (program as NSString).lastPathComponent
        // Written by another process: a descriptor this process opened for writing would be
        // inherited by whatever another test spawns meanwhile, and executing the copy would
        // then fail with ETXTBSY ("Text file busy") for as long as that child lives.
        if !FileManager.default.fileExists(atPath: copy) {
            try Command.check(["install", "-m", "0755", program, copy])
        }
        if let closed = firstClosedDirectory(above: copy) {
            throw CommandFailed(command: ["copy of \(program)"], result: CommandResult(
                status: 1, stdout: "", stderr: "\(closed) is not searchable by other users: put the test's directory elsewhere"))
        }
        return copy
    }

    /// The first directory from `/` down to `path`'s that other users cannot search, if any.
    public static func firstClosedDirectory(above path: String) -> String? {
        var directory = ""
        for component in (path as NSString).deletingLastPathComponent.split(separator: "/") {
            directory += "/" + component
            var info = stat()
            if stat(directory, &info) != 0 || info.st_mode & S_IXOTH == 0 { return directory }
        }
        return nil
    }
}
