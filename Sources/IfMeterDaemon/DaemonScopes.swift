import IfMeterCore
import IfMeterKernel
import IfMeterPlatform
import IfMeterWire

/// The daemon's part in traffic scopes (docs/SCOPES.md): the local prefixes kept written, the
/// counted links covered by the tc programs through the attach socket, and what `status` says.
extension Daemon {
    /// At start, with `apps = yes`: the first write of the prefixes (until it, every packet is
    /// unknown) and the coverage of the start dump's links. A part that cannot start is said,
    /// and the rest is counted as before.
    static func startScopes(_ metering: Metering, config: DaemonConfig, links: [Link], scopes: ScopeCounts?, loop: EventLoop) {
        guard config.apps else { return }
        do throws(PlatformError) {
            let sync = try PrefixSync(pinDirectory: config.appsPins, configured: config.scopes.localPrefixes, loop: loop)
            metering.prefixSync = sync
            sync.sync()
            let coverage = try ScopeCoverage(socketPath: config.scopes.attachSocket, classifier: Classifier(rules: config.rules),
                                             loop: loop)
            metering.coverage = coverage
            coverage.start(links: links, scopes: scopes)
        } catch {
            Diagnostics.warning("interfaces' traffic is not split by scope: \(error)")
        }
    }

    /// On reload: `local_prefixes` written again, the classes' rules for the next links.
    /// (`attach_socket` is read at start only.)
    static func reconfigureScopes(_ metering: Metering, config: DaemonConfig) {
        metering.coverage?.classifier = Classifier(rules: config.rules)
        guard let sync = metering.prefixSync else { return }
        sync.configured = config.scopes.localPrefixes
        sync.sync()
    }

    /// `status`'s `scopes`; nil with `apps = no`.
    static func scopesHealth(_ metering: Metering?, config: DaemonConfig) -> ScopesHealth? {
        guard config.apps, let metering else { return nil }
        let problem = metering.sampler.scopes?.problem
        let detail = metering.lastScopes.map { "map \($0.mapID) pinned in \(config.appsPins)" } ?? problem ?? "not read yet"
        let coverage = metering.coverage
        let names = coverage?.candidates ?? [:]
        return ScopesHealth(
            counting: problem == nil && metering.lastScopes != nil, detail: detail,
            covered: (coverage?.covered ?? []).compactMap { names[$0] }.sorted(),
            uncovered: names.filter { !(coverage?.covered.contains($0.key) ?? false) }.map(\.value).sorted(),
            prefixes: metering.prefixSync?.written, prefixError: metering.prefixSync?.lastError,
            attachError: coverage?.lastError)
    }
}
