import IfMeterCLI
#if canImport(Glibc)
import Glibc
#endif

exit(CLI.main())
