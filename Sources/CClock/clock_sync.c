#include "CClock.h"

#include <errno.h>
#include <sys/timex.h>

int ifm_clock_synchronised(void) {
    struct timex state = {0};  // modes 0: reads, never sets, so no privilege is needed
    if (adjtimex(&state) < 0) return -errno;
    // Setting the clock (settimeofday, clock_settime) sets STA_UNSYNC; an NTP daemon clears it.
    return (state.status & STA_UNSYNC) ? 0 : 1;
}
