// Moves one process's wall clock (and, for a suspend, its boot clock) for the clock tests
// (Tests/EndToEndTests/ClockTests.swift), preloaded with LD_PRELOAD. CLOCK_REALTIME has no
// namespace, and libfaketime breaks a Swift daemon (../shared/notes/clock-in-a-test.md): it
// moves environ, where the Swift runtime finds argv, and rewrites absolute monotonic timers.
//
// The file named by IFMETER_CLOCK_SHIFT holds "WALL BOOT SYNC": seconds added to the wall
// clocks, seconds added to the boot clocks (a suspend moves both; a clock set by hand only the
// first), and `sync` or `unsync`, what adjtimex(2) says of the kernel's NTP state. The test
// rewrites it (a new file renamed over the old); it is read again whenever it changed.
// CLOCK_MONOTONIC is never moved, so the daemon's timers stay true.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <time.h>

static pthread_mutex_t shift_lock = PTHREAD_MUTEX_INITIALIZER;
static struct stat shift_seen;
static long long shift_wall_ns, shift_boot_ns;
static int shift_sync = 1;

static int (*real_clock_gettime)(clockid_t, struct timespec *);
static int (*real_adjtimex)(struct timex *);

// The offsets now, read again when the file's inode or change time differs from the last read.
static void shift_now(long long *wall, long long *boot, int *sync) {
    const char *path = getenv("IFMETER_CLOCK_SHIFT");
    struct stat now;
    pthread_mutex_lock(&shift_lock);
    if (path && stat(path, &now) == 0 &&
        (now.st_ino != shift_seen.st_ino || now.st_ctim.tv_sec != shift_seen.st_ctim.tv_sec ||
         now.st_ctim.tv_nsec != shift_seen.st_ctim.tv_nsec)) {
        FILE *file = fopen(path, "r");
        double w = 0, b = 0;
        char state[16] = "sync";
        if (file) {
            if (fscanf(file, "%lf %lf %15s", &w, &b, state) >= 2) {
                shift_wall_ns = (long long)(w * 1e9);
                shift_boot_ns = (long long)(b * 1e9);
                shift_sync = strcmp(state, "unsync") != 0;
                shift_seen = now;
            }
            fclose(file);
        }
    }
    *wall = shift_wall_ns;
    *boot = shift_boot_ns;
    *sync = shift_sync;
    pthread_mutex_unlock(&shift_lock);
}

static void add(struct timespec *ts, long long ns) {
    long long total = (long long)ts->tv_nsec + ns % 1000000000LL;
    ts->tv_sec += ns / 1000000000LL + total / 1000000000LL;
    ts->tv_nsec = total % 1000000000LL;
    if (ts->tv_nsec < 0) {
        ts->tv_nsec += 1000000000LL;
        ts->tv_sec -= 1;
    }
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
    if (!real_clock_gettime) real_clock_gettime = dlsym(RTLD_NEXT, "clock_gettime");
    int result = real_clock_gettime(clock, ts);
    if (result != 0) return result;
    long long wall, boot;
    int sync;
    switch (clock) {
    case CLOCK_REALTIME:
    case CLOCK_REALTIME_COARSE:
    case CLOCK_REALTIME_ALARM:
        shift_now(&wall, &boot, &sync);
        add(ts, wall);
        break;
    case CLOCK_BOOTTIME:
    case CLOCK_BOOTTIME_ALARM:
        shift_now(&wall, &boot, &sync);
        add(ts, boot);
        break;
    default:
        break;
    }
    return 0;
}

int gettimeofday(struct timeval *restrict tv, void *restrict zone) {
    (void)zone;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
    return 0;
}

time_t time(time_t *out) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out) *out = ts.tv_sec;
    return ts.tv_sec;
}

// Read-only calls answer with the file's NTP state; anything that would set the clock is
// passed on (and refused: tests hold no CAP_SYS_TIME to give).
int adjtimex(struct timex *state) {
    if (!real_adjtimex) real_adjtimex = dlsym(RTLD_NEXT, "adjtimex");
    unsigned int modes = state->modes;
    int result = real_adjtimex(state);
    if (result < 0 || modes != 0) return result;
    long long wall, boot;
    int sync;
    shift_now(&wall, &boot, &sync);
    if (sync) {
        state->status &= ~STA_UNSYNC;
        return TIME_OK;
    }
    state->status |= STA_UNSYNC;
    return TIME_ERROR;
}

int ntp_adjtime(struct timex *state) { return adjtimex(state); }
