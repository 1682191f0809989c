// `make bench`. usage: ifmeter-bench links [ROUNDS] | store DIRECTORY | year DATABASE LINKS | daemon SOCKET [SECONDS] | plans | containers | networks
#if canImport(Glibc)
import Glibc
#endif
import IfMeterPlatform

// The daemon's malloc settings: a sample's arrays are mapped and unmapped as in the daemon.
MallocTuning.applyDaemonSettings()
let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "links": try linkBenchmark(rounds: arguments.dropFirst().first.flatMap { Int($0) } ?? 300)
    case "store" where arguments.count == 2: try storeBenchmark(directory: arguments[1])
    case "year" where arguments.count == 3 && Int(arguments[2]) != nil: try yearOfHistory(path: arguments[1], links: Int(arguments[2])!)
    case "plans": try planBenchmark()
    case "containers": try containerBenchmark()
    case "networks": try networkBenchmark()
    case "daemon" where arguments.count == 2 || arguments.count == 3:
        try daemonBenchmark(socket: arguments[1], seconds: arguments.count == 3 ? Double(arguments[2]) ?? 5 : 5)
    default:
        print("usage: ifmeter-bench links [ROUNDS] | store DIRECTORY | year DATABASE LINKS | daemon SOCKET [SECONDS] | plans | containers | networks")
        exit(64)
    }
} catch {
    print("ifmeter-bench: \(error)")
    exit(1)
}
