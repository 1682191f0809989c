import IfMeterCore
import IfMeterJSON
@testable import IfMeterCLI
import IfMeterTestSupport
import Testing

/// Each subject kind's view (``SubjectSection/view``) is a command the client has, and the
/// view that lists several kinds names each of them in its help.
@Suite("The views of the subject kinds", .ownThread, .timeLimit(.minutes(1)))
struct SubjectViewTests {
    @Test("every section's view is an ifmeter command, whose --json lists its subjects under that name; containers' help names every owner kind")
    func views() {
        let commands = Set(Subcommands.all.map { $0.name })
        for kind in SubjectKinds.builtIn {
            #expect(commands.contains(kind.section.view), "\(kind.plural): no command \(kind.section.view)")
        }
        let owners = String(decoding: ContainersView.Result(containers: [], footnote: "").jsonBytes, as: UTF8.self)
        let networks = String(decoding: NetworksView.Result(networks: [], footnote: "").jsonBytes, as: UTF8.self)
        let split = String(decoding: SplitView.Result(entries: [], footnote: "").jsonBytes, as: UTF8.self)
        #expect(owners.contains("\"\(SubjectSection.owners.view)\":[") && networks.contains("\"\(SubjectSection.networks.view)\":["))
        #expect(split.contains("\"\(SubjectSection.scopes.view)\":["))
        let about = (ContainersCommand.summary + " " + ContainersCommand.about).replacingOccurrences(of: "\n", with: " ")
        for kind in SubjectKinds.kinds(in: .owners) {
            #expect(about.contains(kind.noun), "containers' help does not name \(kind.plural)")
        }
    }
}
