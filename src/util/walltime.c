/* Wall-clock time for synchronised starts (see walltime.h). */
#include "config.h"
#include "util/walltime.h"

#include <errno.h>
#include <string.h>
#include <sys/timex.h>
#include <time.h>

#define NS 1000000000LL
#define MAX_UNIX_S 7258118399LL /* 2199-12-31T23:59:59Z: far from int64 ns's end */

/* Reads exactly n digits at *p (advancing it).  Returns 0 with *v, or -1. */
static int digits(const char **p, int n, int64_t *v)
{
    int64_t x = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return -1; /* also the NUL: nothing is read past it */
        x = x * 10 + (c - '0');
    }
    *p += n;
    *v = x;
    return 0;
}

/* An optional fraction ".d{1,9}" at *p (advancing it) into *ns. */
static int fraction(const char **p, int64_t *ns)
{
    *ns = 0;
    if (**p != '.')
        return 0;
    (*p)++;
    int n = 0;
    int64_t scale = NS / 10;
    while ((*p)[n] >= '0' && (*p)[n] <= '9') {
        if (n == 9)
            return -1; /* finer than a nanosecond is a typo, not a time */
        *ns += ((*p)[n] - '0') * scale;
        scale /= 10;
        n++;
    }
    if (!n)
        return -1;
    *p += n;
    return 0;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; H. Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int month_days(int64_t y, int64_t m)
{
    static const int D[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return D[m - 1] + (m == 2 && leap);
}

static int parse_rfc3339(const char *p, int64_t *unix_ns)
{
    int64_t y, mo, d, h, mi, s, frac, oh = 0, om = 0, sign = 0;
    if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' ||
        digits(&p, 2, &d))
        return -1;
    if (*p != 'T' && *p != 't' && *p != ' ')
        return -1;
    p++;
    if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi) || *p++ != ':' ||
        digits(&p, 2, &s) || fraction(&p, &frac))
        return -1;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        sign = *p++ == '+' ? 1 : -1;
        if (digits(&p, 2, &oh) || *p++ != ':' || digits(&p, 2, &om) || oh > 23 || om > 59)
            return -1;
    } else {
        return -1; /* no zone: a local time would mean different instants on different hosts */
    }
    if (*p || y < 1970 || y > 2200 || mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo) ||
        h > 23 || mi > 59 || s > 59)
        return -1;
    int64_t t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
    t -= sign * (oh * 3600 + om * 60); /* 19:00+01:00 is 18:00Z */
    if (t < 0 || t > MAX_UNIX_S)
        return -1;
    *unix_ns = t * NS + frac;
    return 0;
}

static int parse_unix(const char *p, int64_t *unix_ns)
{
    if (*p == '@')
        p++;
    int64_t t = 0, frac;
    int n = 0;
    while (p[n] >= '0' && p[n] <= '9') {
        if (n == 10)
            return -1; /* beyond MAX_UNIX_S in any case */
        t = t * 10 + (p[n] - '0');
        n++;
    }
    p += n;
    if (!n || fraction(&p, &frac) || *p || t > MAX_UNIX_S)
        return -1;
    *unix_ns = t * NS + frac;
    return 0;
}

int yb_parse_walltime(const char *s, int64_t *unix_ns)
{
    if (!s || !*s)
        return -1;
    /* a date has '-' at its fifth byte; Unix time never has one */
    if (strlen(s) > 4 && s[4] == '-')
        return parse_rfc3339(s, unix_ns);
    return parse_unix(s, unix_ns);
}

int64_t yb_walltime_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

void yb_clock_read(yb_clock_state *c)
{
    struct timex tx;
    memset(&tx, 0, sizeof tx);
    memset(c, 0, sizeof *c);
    tx.modes = 0; /* read only: needs no privilege */
    int state = adjtimex(&tx);
    if (state < 0)
        return;
    c->known = 1;
    c->synchronised = state != TIME_ERROR && !(tx.status & STA_UNSYNC);
    c->maxerror_us = tx.maxerror;
    c->esterror_us = tx.esterror;
}

int yb_walltime_sleep_until(int64_t unix_ns, volatile sig_atomic_t *stop)
{
    for (;;) {
        if (stop && *stop)
            return -1;
        int64_t left = unix_ns - yb_walltime_now();
        if (left <= 0)
            return 0;
        if (left > 50000000LL) {
            struct timespec ts = {0, 50000000L};
            nanosleep(&ts, NULL);
            continue;
        }
        /* the last stretch to the instant itself, on the wall clock (a
         * signal ends it early with EINTR: looked at again above) */
        struct timespec at = {(time_t)(unix_ns / NS), (long)(unix_ns % NS)};
        if (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &at, NULL) == 0 &&
            !(stop && *stop))
            return 0;
    }
}
