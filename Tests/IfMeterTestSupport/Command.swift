import Foundation

/// The outcome of a finished child process.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }
}

public struct CommandFailed: Error, CustomStringConvertible {
    public var command: [String]
    public var result: CommandResult
    public init(command: [String], result: CommandResult) {
        self.command = command
        self.result = result
    }
    public var description: String {
        "\(command.joined(separator: " ")) exited \(result.status): \(result.stderr)"
    }
}

/// Runs programs for tests: `run` returns whatever happened, `check` throws unless it exited 0.
public enum Command {
    public static func run(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> CommandResult {
        let process = Process()
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        process.executableURL = URL(fileURLWithPath: try resolve(arguments[0]))
        process.arguments = Array(arguments.dropFirst())
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Read both pipes to the end before waiting, so a chatty child cannot fill one and block.
        let group = DispatchGroup()
        nonisolated(unsafe) var errData = Data()
        DispatchQueue.global().async(group: group) {
            errData = err.fileHandleForReading.readDataToEndOfFile()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return CommandResult(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }

    @discardableResult
    public static func check(_ arguments: [String], stdin: String? = nil) throws -> String {
        let result = try run(arguments, stdin: stdin)
        guard result.status == 0 else { throw CommandFailed(command: arguments, result: result) }
        return result.stdout
    }

    /// Finds a program on PATH (and in /usr/sbin, /sbin, where `ip` lives).
    public static func resolve(_ program: String) throws -> String {
        if program.hasPrefix("/") { return program }
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/sbin:/sbin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(program)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw CommandFailed(
            command: [program],
            result: CommandResult(status: 127, stdout: "", stderr: "\(program): not found on PATH"))
    }

    /// The directory holding the products of this build (`ifmeterd` sits next to the tests).
    public static var buildProductsDirectory: String {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        return (executable as NSString).deletingLastPathComponent
    }
}
