#include "CMemory.h"

#include <malloc.h>

int ifm_malloc_single_arena(void) {
    // mallopt returns 1 on success and 0 on error (its own convention); ours is 0 / -1.
    return mallopt(M_ARENA_MAX, 1) == 1 ? 0 : -1;
}

int ifm_malloc_trim(void) {
    return malloc_trim(0);
}
