import IfMeterCore
import IfMeterOwners

/// What the daemon's parts are configured with, derived from the config's keys.
extension DaemonConfig {
    /// Where the owner directory looks, from the runtimes' roots.
    public var ownerPaths: OwnerPaths {
        OwnerPaths(namedNamespaces: ["/run/netns", dockerExecRoot + "/netns"], podmanStorage: podmanStorage, dockerRoot: dockerRoot,
                   dockerNamespaces: dockerExecRoot + "/netns", cniResults: cniCacheDirectory + "/results")
    }

    public var meterConfiguration: MeterConfiguration {
        var configuration = MeterConfiguration()
        configuration.maxBytesPerSecond = maxBytesPerSecond
        configuration.speedMargin = speedMargin
        return configuration
    }
}
