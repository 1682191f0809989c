// The kernel's NTP state, which Swift's Glibc module does not import (sys/timex.h). No
// policy: the daemon decides what a synchronised clock allows (ClockTrust).
#ifndef IFM_CLOCK_H
#define IFM_CLOCK_H

/// adjtimex(2) read-only (modes 0): 1 when the kernel's clock is synchronised (STA_UNSYNC
/// clear), 0 when it is not, -errno when the call is refused (EPERM under systemd's
/// ProtectClock=, which filters the call even to read).
int ifm_clock_synchronised(void);

#endif
