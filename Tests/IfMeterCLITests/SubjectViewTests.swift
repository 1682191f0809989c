import IfMeterCore
@testable import IfMeterCLI
import IfMeterTestSupport
import Testing

/// Each subject kind's view (``SubjectSection/view``) is a command the client has, and the
/// view that lists several kinds names each of them in its help.
@Suite("The views of the subject kinds", .ownThread, .timeLimit(.minutes(1)))
struct SubjectViewTests {
    @Test("every section's view is an ifmeter command; containers' help names every owner kind")
    func views() {
        let commands = Set(Subcommands.all.map { $0.name })
        for kind in SubjectKinds.builtIn {
            #expect(commands.contains(kind.section.view), "\(kind.plural): no command \(kind.section.view)")
        }
        let about = (ContainersCommand.summary + " " + ContainersCommand.about).replacingOccurrences(of: "\n", with: " ")
        for kind in SubjectKinds.kinds(in: .owners) {
            #expect(about.contains(kind.noun), "containers' help does not name \(kind.plural)")
        }
    }
}
