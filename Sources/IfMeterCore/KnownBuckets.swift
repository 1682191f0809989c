import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The local-zone buckets a ``BucketCalendar`` has worked out, for every thread using copies of
/// it. Forgotten when the zone may have changed: `TZ` is read once per process by glibc, so
/// that is `/etc/localtime` replaced (`timedatectl set-timezone`), checked at most once a
/// second, as glibc's own `mktime` would have noticed it on its next call.
final class KnownBuckets: Sendable {
    struct Kind: Hashable {
        var resolution: Resolution
        var monthStartDay: Int
    }

    private struct Bucket: Hashable {
        var kind: Kind
        var start: Int64
    }

    /// What the zone's file looked like when the buckets were worked out.
    private struct ZoneFile: Equatable {
        var device: UInt64, inode: UInt64, size: Int64, modified: Int, modifiedNanoseconds: Int

        static func now() -> ZoneFile? {
            guard getenv("TZ") == nil else { return nil }  // a TZ zone is read once and kept
            var info = stat()
            guard stat("/etc/localtime", &info) == 0 else { return nil }
            return ZoneFile(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                            modified: info.st_mtim.tv_sec, modifiedNanoseconds: info.st_mtim.tv_nsec)
        }
    }

    private struct State {
        var ends: [Bucket: Int64] = [:]
        /// The bucket last asked for, per kind: most questions fall in it.
        var last: [Kind: ClosedRange<Int64>] = [:]
        var zoneFile: ZoneFile?
        var checkedAt = Int.min
    }

    /// Bounds the memory: a history import may ask for every day of years.
    private static let capacity = 16_384
    private let state = Mutex(State())

    func start(_ kind: Kind, containing time: Int64) -> Int64? {
        state.withLock { state in
            Self.forgetIfZoneChanged(&state)
            guard let bucket = state.last[kind], bucket.contains(time) else { return nil }
            return bucket.lowerBound
        }
    }

    func end(_ kind: Kind, startingAt start: Int64) -> Int64? {
        state.withLock { state in
            Self.forgetIfZoneChanged(&state)
            return state.ends[Bucket(kind: kind, start: start)]
        }
    }

    /// The bucket [start, end) holding `asked`, as the C library worked it out.
    func learn(_ kind: Kind, start: Int64, end: Int64, asked: Int64) {
        // A zone whose rules make no sense here (a start after the time asked) is not cached.
        guard start <= asked, asked < end else { return }
        state.withLock { state in
            if state.ends.count >= Self.capacity { state.ends.removeAll(keepingCapacity: true) }
            state.ends[Bucket(kind: kind, start: start)] = end
            state.last[kind] = start...(end - 1)
        }
    }

    private static func forgetIfZoneChanged(_ state: inout State) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
        guard now.tv_sec != state.checkedAt else { return }
        state.checkedAt = now.tv_sec
        let file = ZoneFile.now()
        if file != state.zoneFile {
            state.zoneFile = file
            state.ends.removeAll()
            state.last.removeAll()
        }
    }
}
