/* Open-loop schedules: when the g-th request (0-based, across all
 * workers) falls due, for a fixed rate, a linear ramp, or steps.  Pure
 * arithmetic: no clocks, no I/O. */
#ifndef YB_SCHEDULE_H
#define YB_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#define YB_SCHED_MAX_STEPS 64

typedef enum { YB_SCHED_NONE = 0, YB_SCHED_RATE, YB_SCHED_RAMP, YB_SCHED_STEP } yb_sched_kind;

typedef struct {
    yb_sched_kind kind;
    double rate;            /* RATE: requests/s */
    double from, to;        /* RAMP: requests/s at 0 and at dur_ns */
    uint64_t dur_ns;        /* RAMP: ramp length (then `to` holds) */
    size_t n_steps;         /* STEP */
    double step_rate[YB_SCHED_MAX_STEPS];
    uint64_t step_ns[YB_SCHED_MAX_STEPS];
} yb_schedule;

/* Parses "R", "ramp:FROM..TO/DURATION" or "step:R1@D1,R2@D2,...".
 * Returns 0, or -1 with a message in err. */
int yb_sched_parse(const char *spec, yb_schedule *s, char *err, size_t errlen);

/* Sets *t_ns to the offset from the start at which request g falls due.
 * Returns 0, or -1 when g is beyond the schedule's end (steps only; a ramp
 * holds its final rate). */
int yb_sched_due(const yb_schedule *s, uint64_t g, uint64_t *t_ns);

/* Total length of a schedule that ends by itself (steps: sum of the
 * durations; ramp: its duration), 0 for an open-ended one. */
uint64_t yb_sched_length(const yb_schedule *s);

/* The target rate at offset t_ns (requests/s), for progress reports. */
double yb_sched_rate_at(const yb_schedule *s, uint64_t t_ns);

#endif
