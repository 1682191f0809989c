import Foundation
import PackagePlugin

/// Compiles the application counter's BPF program (Sources/CAppCounters/bpf) with the
/// toolchain's clang for the BPF target, then has `bpf-object-embed` write the object as a Swift
/// source of the target this is applied to (IfMeterKernel): `swift build` alone makes it, and
/// the binary carries it (docs/APPS.md, "The BPF program").
@main
struct AppCountersObject: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let shim = context.package.directoryURL.appending(path: "Sources/CAppCounters")
        let source = shim.appending(path: "bpf/app_counters.bpf.c")
        let layout = shim.appending(path: "include/app_counters_layout.h")
        let object = context.pluginWorkDirectoryURL.appending(path: "app_counters.bpf.o")
        let generated = context.pluginWorkDirectoryURL.appending(path: "AppCountersObject.swift")
        let clang = try context.tool(named: "clang")
        let embed = try context.tool(named: "bpf-object-embed")
        // <linux/bpf.h> includes <asm/types.h>, which Debian keeps under the host's multiarch
        // directory: a BPF compile does not search it by itself.
        let multiarch = ["x86_64-linux-gnu", "aarch64-linux-gnu", "arm-linux-gnueabihf", "riscv64-linux-gnu"]
            .map { "/usr/include/\($0)" }
            .filter { FileManager.default.fileExists(atPath: $0 + "/asm/types.h") }
        return [
            .buildCommand(
                displayName: "Compiling the BPF program app_counters.bpf.c",
                executable: clang.url,
                arguments: ["-target", "bpf", "-O2", "-g", "-Wall", "-c", source.path,
                            "-o", object.path] + multiarch.flatMap { ["-idirafter", $0] },
                inputFiles: [source, layout],
                outputFiles: [object]),
            .buildCommand(
                displayName: "Embedding app_counters.bpf.o",
                executable: embed.url,
                arguments: [object.path, generated.path, "appCountersObjectHex"],
                inputFiles: [object],
                outputFiles: [generated]),
        ]
    }
}
