/* Open-loop schedules: when the g-th request (0-based, across all
 * workers) falls due, for a fixed rate, a linear ramp, or steps.  Pure
 * arithmetic: no clocks, no I/O.
 *
 * A step schedule's steps live out of line, immutable, shared by
 * reference count, so that a schedule is a few words wherever options are
 * copied (one copy per target of a fleet).  Who holds a reference: the
 * schedule yb_sched_parse filled and each one yb_sched_copy made; each
 * gives it back with yb_sched_release.  A plain struct assignment is a
 * view: it holds no reference, must not outlive a holder and is never
 * cleaned up (the engine's per-target copies of the options are views of
 * the options the command parsed).  The count is not atomic: references
 * are taken and given back on the thread that parses and frees options,
 * before and after a run; the run's threads only read the steps. */
#ifndef YB_SCHEDULE_H
#define YB_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#define YB_SCHED_MAX_STEPS 64

typedef enum { YB_SCHED_NONE = 0, YB_SCHED_RATE, YB_SCHED_RAMP, YB_SCHED_STEP } yb_sched_kind;

typedef struct yb_sched_steps yb_sched_steps; /* STEP's table (schedule.c) */

typedef struct {
    yb_sched_kind kind;
    double rate;            /* RATE: requests/s */
    double from, to;        /* RAMP: requests/s at 0 and at dur_ns */
    uint64_t dur_ns;        /* RAMP: ramp length (then `to` holds) */
    yb_sched_steps *steps;  /* STEP: the steps (shared, read-only), else NULL */
} yb_schedule;

/* Parses "R", "ramp:FROM..TO/DURATION" or "step:R1@D1,R2@D2,..." into *s,
 * which is overwritten (give back what it held first: yb_sched_release).
 * Returns 0 (a step schedule then holds a reference to its new steps), or
 * -1 with a message in err (*s empty, nothing held). */
int yb_sched_parse(const char *spec, yb_schedule *s, char *err, size_t errlen);

/* Sets *dst to src, holding a reference of its own to src's steps (dst is
 * overwritten: give back what it held first).  Never fails. */
void yb_sched_copy(yb_schedule *dst, const yb_schedule *src);

/* Gives back s's reference to its steps (freed with the last one) and
 * empties s (YB_SCHED_NONE).  Only for a schedule yb_sched_parse or
 * yb_sched_copy filled, never for a view (see above). */
void yb_sched_release(yb_schedule *s);

/* The number of steps of a step schedule (0 for the other kinds). */
size_t yb_sched_n_steps(const yb_schedule *s);

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
