import IfMeterDaemon
#if canImport(Glibc)
import Glibc
#endif

exit(DaemonMain.run(arguments: Array(CommandLine.arguments.dropFirst())))
