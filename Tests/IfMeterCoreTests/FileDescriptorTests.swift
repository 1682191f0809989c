#if canImport(Glibc)
import Glibc
#endif
import IfMeterCore
import IfMeterTestSupport
import Testing

@Suite("File descriptors", .ownThread, .timeLimit(.minutes(1)))
struct FileDescriptorTests {
    /// A file of this test's own, opened.
    static func openFile(_ directory: TemporaryDirectory) throws -> FileDescriptor {
        guard let fd = FileDescriptor(adopting: open(directory.path + "/file", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)) else {
            throw Errno.current
        }
        return fd
    }

    /// Whether `fd` still names the test's file: a closed number may already be another
    /// test's descriptor, for another file.
    static func isOpen(_ fd: Int32, _ directory: TemporaryDirectory) -> Bool {
        var file = stat(), named = stat()
        return fstat(fd, &file) == 0 && stat(directory.path + "/file", &named) == 0
            && (file.st_dev, file.st_ino) == (named.st_dev, named.st_ino)
    }

    @Test("closed when the value ends, at close(), or never once released; a failed call's result is no descriptor")
    func ownership() throws {
        let directory = try TemporaryDirectory()
        var raw: Int32 = -1
        do {
            let fd = try Self.openFile(directory)
            raw = fd.rawValue
            #expect(Self.isOpen(raw, directory))
        }
        #expect(!Self.isOpen(raw, directory), "closed at the end of its scope")

        let closed = try Self.openFile(directory)
        raw = closed.rawValue
        closed.close()
        #expect(!Self.isOpen(raw, directory), "closed at close()")

        let released = try Self.openFile(directory)
        raw = released.release()
        #expect(Self.isOpen(raw, directory), "left open once released")
        Glibc.close(raw)

        let missing = FileDescriptor(adopting: open(directory.path + "/missing", O_RDONLY | O_CLOEXEC)) == nil
        let error = errno
        #expect(missing && error == ENOENT, "nil, and errno still says why")
    }
}
