#include "CMemory.h"

#include <malloc.h>

int ifm_malloc_single_arena(void) {
    // mallopt returns 1 on success and 0 on error (its own convention); ours is 0 / -1.
    return mallopt(M_ARENA_MAX, 1) == 1 ? 0 : -1;
}

int ifm_malloc_mmap_threshold(size_t bytes) {
    // Setting it at all also stops glibc from raising it each time an mmapped block is freed.
    return mallopt(M_MMAP_THRESHOLD, (int)bytes) == 1 ? 0 : -1;
}

int ifm_malloc_trim(void) {
    return malloc_trim(0);
}
