import IfMeterCore
import IfMeterHTTP
import IfMeterPlatform
import IfMeterServer
import IfMeterMetrics
#if canImport(Glibc)
import Glibc
#endif

/// The `process_*` figures Prometheus client libraries export, read from the kernel at scrape
/// time. A figure that cannot be read is reported as 0 only where clients do the same (an
/// unreadable /proc is not a state worth failing a scrape for).
enum ProcessStats {
    static func read(startTime: Double) -> ProcessFigures {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        // statm: size resident shared … in pages.
        let pages = readSmallFile("/proc/self/statm").split(separator: " ").prefix(2).compactMap { UInt64($0) }
        let pageSize = UInt64(sysconf(Int32(_SC_PAGESIZE)))
        var limit = rlimit()
        let maxFDs: UInt64? = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 && limit.rlim_cur != rlim_t.max ? UInt64(limit.rlim_cur) : nil
        return ProcessFigures(
            cpuSeconds: cpu, residentBytes: (pages.count > 1 ? pages[1] : 0) * pageSize,
            virtualBytes: (pages.first ?? 0) * pageSize, startTime: startTime, openFDs: openDescriptors(),
            maxFDs: maxFDs)
    }

    /// Entries of /proc/self/fd, less the one the listing itself holds open.
    static func openDescriptors() -> Int {
        guard let directory = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            if entry.pointee.d_name.0 != UInt8(ascii: ".") { count += 1 }
        }
        return max(count - 1, 0)
    }

    private static func readSmallFile(_ path: String) -> Substring {
        Substring(decoding: (try? WholeFile.read(path, limit: 4096)) ?? [], as: UTF8.self)
    }
}
