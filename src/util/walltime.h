/* Wall-clock time, for starting several processes at one instant
 * (--start-at): the time parser, the host clock's synchronisation state
 * (adjtimex(2)) and a wait for an instant that a stop flag can cut short.
 * Everything else in the engine measures with the monotonic clock
 * (uv_hrtime); wall-clock time is only where processes meet. */
#ifndef YB_WALLTIME_H
#define YB_WALLTIME_H

#include <signal.h>
#include <stdint.h>

#define YB_FORMS_WALLTIME                                                                  \
    "RFC 3339 (e.g. 2026-11-30T18:00:00Z, 2026-11-30T19:00:00.250+01:00) or Unix time " \
    "(e.g. @1796061600 or 1796061600.25)"

/* Parses text s: RFC 3339 date-time (YYYY-MM-DD, 'T' (or 't' or a
 * space), hh:mm:ss, an optional fraction of up to 9 digits, then 'Z' or
 * +hh:mm / -hh:mm; years 1970..2200, no leap second) or Unix time in
 * seconds (digits with an optional '@' before and an optional fraction of
 * up to 9 digits), the whole string.  Returns 0 with *unix_ns set, or -1
 * for anything else (untrusted text: bounded, never reads past the NUL). */
int yb_parse_walltime(const char *s, int64_t *unix_ns);

/* The wall clock now (CLOCK_REALTIME), in ns since the Unix epoch. */
int64_t yb_walltime_now(void);

/* The host clock's state as the kernel keeps it (adjtimex(2), read
 * only): whether an NTP/PTP daemon has it synchronised (not STA_UNSYNC,
 * not TIME_ERROR) and its maximum and estimated errors. */
typedef struct {
    int known;              /* 0: adjtimex failed (fields below meaningless) */
    int synchronised;
    int64_t maxerror_us, esterror_us;
} yb_clock_state;

void yb_clock_read(yb_clock_state *c);

/* Sleeps until the wall clock reads unix_ns (at once when it is past),
 * looking at *stop (may be NULL) at least every 50 ms.  Returns 0 when the
 * instant came, -1 when *stop was set first. */
int yb_walltime_sleep_until(int64_t unix_ns, volatile sig_atomic_t *stop);

#endif
