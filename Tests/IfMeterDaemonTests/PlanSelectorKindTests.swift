import IfMeterCore
@testable import IfMeterDaemon
import IfMeterPlans
import IfMeterTestSupport
import Testing

/// Every subject kind can be named by a plan the way it declares (``SubjectKind/planSelector``):
/// among the interfaces (`plan[p] = container:web`) or by a key of its own
/// (`plan[p].network = …`), and the config reads it so.
@Suite("Plans name every subject kind", .ownThread, .timeLimit(.minutes(1)))
struct PlanSelectorKindTests {
    @Test("each kind's plan selector is read by the config")
    func everyKind() throws {
        for kind in SubjectKinds.builtIn {
            let line = switch kind.planSelector {
            case .interfaces: "plan[p] = \(kind.subject("web"))"
            case .key(let key): "plan[p].\(key) = web"
            // The one narrowing kind, the scopes: a plan on web counts web's internet scope.
            case .narrowing(let key): "plan[p] = web\nplan[p].\(key) = internet"
            }
            let config = try DaemonConfig.parse(line + "\nplan[p].limit = 1G\n", file: "test.conf")
            let plan = try #require(config.plans.first, "\(line)")
            #expect(plan.selectors.count == 1, "\(line)")
            if case .interfaces = kind.planSelector {
                #expect(plan.includes(kind.subject("web"), interfaceClass: nil), "\(line)")
            }
            if case .narrowing = kind.planSelector {
                #expect(plan.counted("web") == kind.subject("internet/web"), "\(line)")
            }
        }
    }

    @Test("a name no kind takes is refused with every form a plan's interfaces take")
    func refusedNamesTheForms() {
        do {
            _ = try Plan.Selector(parsing: "gadget:web")
            Issue.record("gadget:web was taken")
        } catch {
            for kind in SubjectKinds.builtIn where kind.prefix != nil && kind.planSelector == .interfaces {
                #expect(error.description.contains(kind.form), "\(error.description)")
            }
        }
    }
}
