// glibc's malloc tuning, which Swift's Glibc module does not import (malloc.h). No policy:
// the daemon decides when to call these.
#ifndef IFM_MEMORY_H
#define IFM_MEMORY_H

#include <stddef.h>

/// One malloc arena for every thread: the daemon has two (the loop and the store's), and a
/// second arena keeps its own free memory that the first cannot reuse. 0 on success, -1 if
/// glibc refused.
int ifm_malloc_single_arena(void);

/// Allocations of at least `bytes` are mapped by themselves and unmapped when freed, and the
/// threshold stays there. glibc's default starts at 128 KiB but rises to the size of each large
/// block freed (up to 32 MiB), after which arrays of thousands of links are carved from the
/// heap and leave holes in it. 0 on success, -1 if glibc refused (above 32 MiB).
int ifm_malloc_mmap_threshold(size_t bytes);

/// Returns free heap memory to the kernel (malloc_trim(0)). 1 if some was released, else 0.
int ifm_malloc_trim(void);

#endif
