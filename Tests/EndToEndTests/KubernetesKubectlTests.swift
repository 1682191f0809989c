import Foundation
import IfMeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Kubernetes' own types, offline: `kubectl set env --local` decodes the DaemonSet into them
/// (a field of the wrong type is an error) and writes it back (a field they do not have is gone),
/// with no cluster. What it cannot check without one: values (a capability's name, a path), the
/// API server's validation, and the PodMonitor, whose type only the operator's CRD defines.
@Suite("The Kubernetes DaemonSet through kubectl", .enabled(if: YAMLFiles.available, YAMLFiles.skipReason),
       .enabled(if: (try? Command.resolve("kubectl")) != nil, "no kubectl (Debian package kubernetes-client; scripts/install-deps --test installs it)"),
       .ownThread, .timeLimit(.minutes(3)))
struct KubernetesKubectlTests {
    /// What of `written` kubectl's output lacks or changed; Go leaves out false, 0 and "" it was given.
    static func lost(_ written: Any, _ read: Any?, at path: String = "") -> [String] {
        switch written {
        case let object as [String: Any]:
            return object.sorted { $0.key < $1.key }.flatMap { key, value in
                if let read = read as? [String: Any], read[key] == nil {
                    let zero = (value as? Bool) == false || (value as? Int) == 0 || (value as? String) == ""
                    return zero ? [] : ["\(path)/\(key)"]
                }
                return lost(value, (read as? [String: Any])?[key], at: "\(path)/\(key)")
            }
        case let array as [Any]:
            let readArray = read as? [Any] ?? []
            return array.enumerated().flatMap { index, value in
                index < readArray.count ? lost(value, readArray[index], at: "\(path)/\(index)") : ["\(path)/\(index)"]
            }
        default:
            return "\(written)" == "\(read ?? "nil")" ? [] : ["\(path): \(written) became \(read ?? "nil")"]
        }
    }

    /// The DaemonSet of ifmeterd.yaml as JSON, after `change` to its text, and what kubectl makes of it.
    static func roundTrip(_ change: (String) -> String = { $0 }) throws -> (written: [String: Any], result: CommandResult) {
        let directory = try TemporaryDirectory()
        let text = try String(contentsOfFile: KubernetesManifestTests.directory + "/ifmeterd.yaml", encoding: .utf8)
        try change(text).write(toFile: directory.path + "/ifmeterd.yaml", atomically: true, encoding: .utf8)
        let documents = try #require(try YAMLFiles.read([directory.path + "/ifmeterd.yaml"]).first)
        let daemonSet = try #require(documents.first { $0["kind"] as? String == "DaemonSet" })
        let file = directory.path + "/daemonset.json"
        try JSONSerialization.data(withJSONObject: daemonSet).write(to: URL(fileURLWithPath: file))
        let result = try Command.run(["kubectl", "set", "env", "--local", "-f", file, "IFMETER_KUBECTL_CHECK=1", "-o", "json"],
                                     environment: ["KUBECONFIG": directory.path + "/no-cluster"])
        return (daemonSet, result)
    }

    @Test("kubectl decodes the DaemonSet into Kubernetes' types with no cluster, and nothing written is lost")
    func decodes() throws {
        let (written, result) = try Self.roundTrip()
        #expect(result.status == 0, "\(result.stderr)")
        let read = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        #expect(Self.lost(written, read) == [])
    }

    @Test("a field Kubernetes does not have is seen lost, and one of the wrong type refused")
    func catches() throws {
        let (written, result) = try Self.roundTrip { $0.replacingOccurrences(of: "readOnlyRootFilesystem:", with: "readOnlyRootFileSystem:") }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.lost(written, try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)))
            == ["/spec/template/spec/containers/0/securityContext/readOnlyRootFileSystem"])
        let wrongType = try Self.roundTrip { $0.replacingOccurrences(of: "hostNetwork: true", with: "hostNetwork: \"yes\"") }.result
        #expect(wrongType.status != 0 && wrongType.stderr.contains("hostNetwork"), "\(wrongType.stdout)\(wrongType.stderr)")
    }
}
