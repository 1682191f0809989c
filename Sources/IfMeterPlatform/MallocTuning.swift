import CMemory

/// How the daemon sets glibc's malloc up, once, before its threads start; benchmarks of its
/// parts do the same, so they measure the allocations the daemon makes.
public enum MallocTuning {
    public static func applyDaemonSettings() {
        // Before the store's thread starts: its allocations then share the loop's arena.
        _ = ifm_malloc_single_arena()
        // Per-link arrays, save batches and large answers come and go in their own mappings
        // instead of fragmenting the heap, which kept what they had used.
        _ = ifm_malloc_mmap_threshold(32 * 1024)
    }
}
