import IfMeterApps
import IfMeterCore

/// `cgroup-naming`: a cgroup's path as anyone with a delegated subtree may make it, and what
/// the lookups the daemon passes may answer (a container's name, a process's `comm`).
extension FuzzTargets {
    /// The input is the path; the lookups answer its first 300 bytes reversed. Invariants: no
    /// trap; the name is its kind's (``SubjectKind/accepts(_:)``), within the bound, printable
    /// ASCII, the same when asked again; a uid only for an application.
    public static func cgroupNaming(_ bytes: [UInt8]) {
        let answer = Array(bytes.prefix(300).reversed())
        let naming = CgroupNaming(containerName: { _ in String(decoding: answer, as: UTF8.self) }, firstCommand: { _ in answer })
        let subject = naming.subject(ofPath: bytes)
        let kind = subject.kind.subjectKind
        guard let prefix = kind.prefix, subject.name.hasPrefix(prefix + ":"),
              kind.accepts(subject.name.dropFirst(prefix.utf8.count + 1)) else { fatalError("\(subject) is not its kind's") }
        guard subject.name.utf8.count <= prefix.utf8.count + 1 + "4294967294/container/".utf8.count + AppName.maximumLength,
              subject.name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { fatalError("\(subject) is unbounded or unprintable") }
        guard (subject.uid != nil) == (subject.kind == .app), naming.subject(ofPath: bytes) == subject else {
            fatalError("\(subject) has the wrong uid, or is named otherwise again")
        }
    }
}
