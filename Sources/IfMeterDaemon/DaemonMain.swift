import IfMeterHTTP
import IfMeterPlatform
import IfMeterServer
import IfMeterCore
import IfMeterKernel
import IfMeterWire
#if canImport(Glibc)
import Glibc
#endif

/// `ifmeterd`'s entry point; returns the process exit status.
public enum DaemonMain {
    public static func run(arguments: [String]) -> Int32 {
        let options: DaemonOptions
        do {
            options = try DaemonOptions(arguments: arguments)
        } catch {
            printError("ifmeterd: \(error)\n\(DaemonOptions.usage)")
            return PlatformError.Kind.usage.rawValue
        }
        switch options.mode {
        case .help:
            print(DaemonOptions.usage)
            return 0
        case .version:
            print("ifmeterd \(IfMeterVersion.string)")
            return 0
        case .probe:
            return probe(options)
        case .attachApps, .detachApps:
            let paths = Paths.resolve(options: options, environment: processEnvironment(), uid: getuid())
            do {
                let config = try DaemonConfig.load(path: paths.config, required: paths.configRequired)
                return AppsAttachment(pinDirectory: config.appsPins, enabled: config.apps, mapEntries: config.appsMapEntries)
                    .run(detaching: options.mode == .detachApps, user: options.appsUser)
            } catch {
                Diagnostics.error("\(error)")
                return PlatformError.Kind.configuration.rawValue
            }
        case .attachLink, .attachLinkStdin:
            let paths = Paths.resolve(options: options, environment: processEnvironment(), uid: getuid())
            let attachment: LinkAttachment
            do {
                let config = try DaemonConfig.load(path: paths.config, required: paths.configRequired)
                attachment = LinkAttachment(pinDirectory: config.appsPins)
            } catch {
                Diagnostics.error("\(error)")
                if options.mode == .attachLinkStdin { print("error: \(error)") }
                return PlatformError.Kind.configuration.rawValue
            }
            return options.mode == .attachLinkStdin ? attachment.runStdin() : attachment.run(ifindex: options.attachIfindex ?? 0)
        case .checkConfig, .serve:
            let paths = Paths.resolve(options: options, environment: processEnvironment(), uid: getuid())
            let config: DaemonConfig
            do {
                config = try DaemonConfig.load(path: paths.config, required: paths.configRequired)
            } catch {
                Diagnostics.error("\(error)")
                return PlatformError.Kind.configuration.rawValue
            }
            if options.mode == .checkConfig {
                print("\(paths.config): ok")
                return 0
            }
            // A peer or a stderr reader that goes away must cost a write error, not the daemon.
            signal(SIGPIPE, SIG_IGN)
            MallocTuning.applyDaemonSettings()
            do {
                return try Daemon(options: options, paths: paths, config: config).run()
            } catch {
                Diagnostics.error("\(error)")
                return error.exitStatus
            }
        }
    }

    static func probe(_ options: DaemonOptions) -> Int32 {
        do {
            let listing = try LinkLister.list(from: options.source)
            for warning in listing.warnings { printError("ifmeterd: warning: \(warning)") }
            var bootID: String?
            do {
                bootID = try SystemClock.bootID()
            } catch {
                printError("ifmeterd: warning: \(error); epochs are shown without a boot id")
            }
            var report = ProbeReport(
                listing: listing, classifier: Classifier(), sysfs: SysfsReader(root: options.sysfsRoot),
                bootID: bootID)
            // The config's pins if it reads, else the default's: a probe needs no config.
            let paths = Paths.resolve(options: options, environment: processEnvironment(), uid: getuid())
            let config = (try? DaemonConfig.load(path: paths.config, required: false)) ?? DaemonConfig()
            report.apps = ProbeReport.apps(pinDirectory: config.apps ? config.appsPins : nil)
            report.scopes = report.scopes(pinDirectory: config.apps ? config.appsPins : nil)
            print(options.json ? report.json() : report.table())
            return 0
        } catch {
            printError("ifmeterd: \(error)")
            return PlatformError.Kind.unavailable.rawValue
        }
    }

    /// One `write(2)` per message, so lines from concurrent writers never interleave.
    static func printError(_ message: String) {
        var line = message + "\n"
        line.withUTF8 { bytes in _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
    }
}
