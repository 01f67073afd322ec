#include "config.h"
#include "engine/schedule.h"
#include "util/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct yb_sched_steps {
    size_t refs;         /* holders (schedule.h) */
    size_t n;
    struct {
        double rate;     /* requests/s */
        uint64_t ns;     /* how long */
    } step[];
};

/* "step:R1@D1,R2@D2,...": the steps into a new table (one reference) in
 * *out.  Returns 0, or -1 with a message in err. */
static int parse_steps(const char *spec, yb_sched_steps **out, char *err, size_t errlen)
{
    size_t n = 1;
    for (const char *p = spec + 5; *p; p++)
        n += *p == ',';
    if (n > YB_SCHED_MAX_STEPS)
        n = YB_SCHED_MAX_STEPS + 1; /* refused below, at the first one too many */
    yb_sched_steps *t = malloc(sizeof *t + n * sizeof t->step[0]);
    if (!t) {
        snprintf(err, errlen, "--rate '%s': out of memory", spec);
        return -1;
    }
    t->refs = 1;
    t->n = 0;
    const char *p = spec + 5;
    while (*p) {
        const char *at = strchr(p, '@');
        size_t len = strcspn(p, ",");
        if (!at || at > p + len || t->n == YB_SCHED_MAX_STEPS ||
            yb_parse_rate_n(p, (size_t)(at - p), &t->step[t->n].rate) ||
            yb_parse_duration_n(at + 1, (size_t)(p + len - at - 1), &t->step[t->n].ns) ||
            t->step[t->n].ns == 0) {
            snprintf(err, errlen, "--rate '%s': expected step:R1@D1,R2@D2,... (at most %d)",
                     spec, YB_SCHED_MAX_STEPS);
            free(t);
            return -1;
        }
        t->n++;
        p += len;
        if (*p == ',' && !*++p) { /* a trailing comma: a step left out? */
            snprintf(err, errlen, "--rate '%s': a comma with no step after it", spec);
            free(t);
            return -1;
        }
    }
    if (!t->n) {
        snprintf(err, errlen, "--rate '%s': no steps", spec);
        free(t);
        return -1;
    }
    *out = t;
    return 0;
}

void yb_sched_copy(yb_schedule *dst, const yb_schedule *src)
{
    *dst = *src;
    if (dst->steps)
        dst->steps->refs++;
}

void yb_sched_release(yb_schedule *s)
{
    if (s->steps && --s->steps->refs == 0)
        free(s->steps);
    memset(s, 0, sizeof *s);
}

size_t yb_sched_n_steps(const yb_schedule *s)
{
    return s->steps ? s->steps->n : 0;
}

/* yb_sched_parse but for emptying *s on failure. */
static int parse(const char *spec, yb_schedule *s, char *err, size_t errlen)
{
    if (!strncmp(spec, "ramp:", 5)) {
        const char *p = spec + 5, *dots = strstr(p, ".."), *slash = strchr(p, '/');
        if (!dots || !slash || slash < dots || yb_parse_rate_n(p, (size_t)(dots - p), &s->from) ||
            yb_parse_rate_n(dots + 2, (size_t)(slash - dots - 2), &s->to) ||
            yb_parse_duration_n(slash + 1, strlen(slash + 1), &s->dur_ns) || s->dur_ns == 0 ||
            (s->from <= 0 && s->to <= 0)) {
            snprintf(err, errlen, "--rate '%s': expected ramp:FROM..TO/DURATION", spec);
            return -1;
        }
        s->kind = YB_SCHED_RAMP;
        return 0;
    }
    if (!strncmp(spec, "step:", 5)) {
        if (parse_steps(spec, &s->steps, err, errlen) < 0)
            return -1;
        s->kind = YB_SCHED_STEP;
        return 0;
    }
    if (yb_parse_rate(spec, &s->rate) < 0 || s->rate <= 0) {
        snprintf(err, errlen, "--rate '%s': expected requests/s (" YB_FORMS_RATE "), "
                 "ramp:FROM..TO/DURATION or step:R1@D1,R2@D2,...", spec);
        return -1;
    }
    s->kind = YB_SCHED_RATE;
    return 0;
}

int yb_sched_parse(const char *spec, yb_schedule *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (parse(spec, s, err, errlen) < 0) {
        memset(s, 0, sizeof *s); /* a ramp's bounds read before the error */
        return -1;
    }
    return 0;
}

/* Time (s) at which a linear rate a + b t (b = slope) has produced n
 * requests: solves a t + b t^2 / 2 = n. */
static double linear_time(double a, double b, double n)
{
    if (fabs(b) < 1e-12)
        return a > 0 ? n / a : INFINITY;
    double disc = a * a + 2 * b * n;
    if (disc < 0)
        return INFINITY; /* a falling ramp that never gets there */
    return (-a + sqrt(disc)) / b;
}

int yb_sched_due(const yb_schedule *s, uint64_t g, uint64_t *t_ns)
{
    double n = (double)g, t;
    switch (s->kind) {
    case YB_SCHED_RATE:
        t = n / s->rate;
        break;
    case YB_SCHED_RAMP: {
        double d = (double)s->dur_ns / 1e9, slope = (s->to - s->from) / d;
        double in_ramp = s->from * d + slope * d * d / 2;
        if (n <= in_ramp) {
            t = linear_time(s->from, slope, n);
        } else {
            if (s->to <= 0)
                return -1;
            t = d + (n - in_ramp) / s->to;
        }
        break;
    }
    case YB_SCHED_STEP: {
        double start = 0;
        for (size_t i = 0; i < s->steps->n; i++) {
            double d = (double)s->steps->step[i].ns / 1e9, rate = s->steps->step[i].rate;
            double in_step = rate * d;
            if (n < in_step) {
                *t_ns = (uint64_t)llround((start + n / rate) * 1e9);
                return 0;
            }
            n -= in_step;
            start += d;
        }
        return -1;
    }
    default:
        return -1;
    }
    if (!isfinite(t) || t > 1e9)
        return -1;
    *t_ns = (uint64_t)llround(t * 1e9);
    return 0;
}

uint64_t yb_sched_length(const yb_schedule *s)
{
    uint64_t sum = 0;
    if (s->kind == YB_SCHED_STEP)
        for (size_t i = 0; i < s->steps->n; i++)
            sum += s->steps->step[i].ns;
    else if (s->kind == YB_SCHED_RAMP)
        sum = s->dur_ns;
    return sum;
}

double yb_sched_rate_at(const yb_schedule *s, uint64_t t_ns)
{
    switch (s->kind) {
    case YB_SCHED_RATE:
        return s->rate;
    case YB_SCHED_RAMP:
        if (t_ns >= s->dur_ns)
            return s->to;
        return s->from + (s->to - s->from) * (double)t_ns / (double)s->dur_ns;
    case YB_SCHED_STEP: {
        uint64_t end = 0;
        for (size_t i = 0; i < s->steps->n; i++) {
            end += s->steps->step[i].ns;
            if (t_ns < end)
                return s->steps->step[i].rate;
        }
        return 0;
    }
    default:
        return 0;
    }
}
