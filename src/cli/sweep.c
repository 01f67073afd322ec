/* yangblast experiment sweep: find the capacity.  Runs the corpus against
 * one target at increasing concurrency (-c LIST) or open-loop rate (--rate
 * LIST), each step a run of --warmup + --step whose figures are those of
 * the step's whole seconds after the warm-up; stops when an --slo fails or
 * the throughput stops growing, then bisects between the last good and the
 * first bad level.  Prints a table per step and the knee (the most
 * throughput meeting every SLO) in one line; --json and --html write them. */
#include "config.h"
#include "cli/cli.h"
#include "cli/devtelemetry.h"
#include "cli/fleet.h"
#include "cli/plan.h"
#include "cli/runcommon.h"
#include "cli/runopts.h"
#include "engine/engine.h"
#include "report/html.h"
#include "report/report.h"
#include "report/threshold.h"
#include "stats/hdr.h"
#include "util/util.h"

#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_LEVELS 64
#define MAX_STEPS (MAX_LEVELS + 16)

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig) { stop_flag = sig; }

static void help(void)
{
    printf("Usage: yangblast experiment sweep CORPUS --target URL (-c LEVELS | --rate LEVELS)\n"
           "                                 [--slo EXPR]... [OPTIONS]\n"
           "       yangblast experiment sweep CORPUS --targets FILE --fan-out (-c ... | --rate ...)\n"
           "       yangblast experiment sweep --plan FILE --workload NAME (-c ... | --rate ...)\n\n"
           "Find the capacity: run CORPUS at each level for --step after a --warmup, stop\n"
           "when an SLO fails or the throughput stops growing, then bisect between the\n"
           "last good and the first bad level; print a table per step and the knee.\n"
           "With --targets FILE --fan-out the fleet steps together: a row per target under\n"
           "each step, unscoped SLOs judged on each target too, each target's knee stated.\n"
           "With --plan FILE --workload NAME the levels set that workload's sessions or rate\n"
           "while the plan's other workloads run beside it as the plan says.\n\n"
           "  -c, --concurrency LEVELS  closed loop: sessions per step, as 1,2,4 or\n"
           "                            1..512x2 (geometric) or 10..100/+10 (linear)\n"
           "      --rate LEVELS         open loop: requests/s per step, as 50,100 or\n"
           "                            50..2000/+50 or 50..3200x2 (with --rate, -c N\n"
           "                            is the sessions of every step)\n"
           "      --step D              measured length of a step (default 10s)\n"
           "      --warmup D            run before each step's measure (default 2s)\n"
           "      --slo EXPR            the service level a step must meet, as\n"
           "                            --threshold: 'e2e.p99<100ms', 'errors<0.1%%'\n"
           "                            (repeatable; target=NAME: one target's,\n"
           "                            workload=NAME: one workload's of a plan)\n"
           "      --workload NAME       with --plan: the workload the levels set\n"
           "      --bisect N            bisection steps after the first bad (default 3)\n"
           "  -h, --help                this help\n\n"
           "The options of 'yangblast run' that apply (--json and --html write the\n"
           "sweep; --telemetry adds the device's CPU per step):\n");
    yb_runopts_help(stdout, YB_RO_SWEEP);
}

/* ---- levels ----------------------------------------------------------------- */

/* Parses "A,B,C", "A..BxK" (geometric) or "A..B/+K" (linear) into out
 * (ascending, at most MAX_LEVELS), each level a count (integers) or a rate
 * (yb_parse_rate).  Returns the number of levels, or -1. */
static int parse_levels(const char *s, int rate, double *out)
{
    const char *dots = strstr(s, "..");
    int n = 0;
    if (!dots) {
        for (const char *p = s;;) {
            size_t l = strcspn(p, ",");
            double v;
            uint64_t u;
            if (n == MAX_LEVELS || !l)
                return -1;
            if (rate ? yb_parse_rate_n(p, l, &v) < 0 || v <= 0
                     : yb_parse_u64_n(p, l, 1, 100000, &u) < 0)
                return -1;
            out[n] = rate ? v : (double)u;
            if (n && out[n] <= out[n - 1])
                return -1;      /* ascending, so that "first bad" means something */
            n++;
            if (!p[l])
                return n;
            p += l + 1;
        }
    }
    const char *x = strchr(dots, 'x'), *plus = strstr(dots, "/+");
    if ((x != NULL) == (plus != NULL))
        return -1;
    const char *sep = x ? x : plus;
    double a, b, k;
    uint64_t ua, ub;
    if (rate) {
        if (yb_parse_rate_n(s, (size_t)(dots - s), &a) < 0 ||
            yb_parse_rate_n(dots + 2, (size_t)(sep - dots - 2), &b) < 0)
            return -1;
    } else {
        if (yb_parse_u64_n(s, (size_t)(dots - s), 1, 100000, &ua) < 0 ||
            yb_parse_u64_n(dots + 2, (size_t)(sep - dots - 2), 1, 100000, &ub) < 0)
            return -1;
        a = (double)ua;
        b = (double)ub;
    }
    if (yb_parse_double(x ? x + 1 : plus + 2, &k) < 0 || a <= 0 || b < a ||
        (x && k <= 1) || (!x && k <= 0))
        return -1;
    for (double v = a; v <= b * (1 + 1e-9); v = x ? v * k : v + k) {
        if (n == MAX_LEVELS)
            return -1;
        double r = rate ? v : floor(v + 0.5);
        if (!n || r > out[n - 1])
            out[n++] = r;
    }
    return n;
}

/* ---- parts: what a step is judged on ---------------------------------------------- */

/* The figures of one part of a step over its measured seconds. */
typedef struct {
    double achieved;        /* successful requests per second */
    uint64_t ok, errors;
    double err_pct;
    double p50_ms, p99_ms, p999_ms;
    double device_cpu;      /* telemetry: mean CPU in the window, -1 none */
    int pass;               /* every SLO that applies to it met */
    char why[200];          /* why not */
} figs;

/* A part of the run the sweep reports and judges: part 0 is the sweep's
 * own (the run's, a fleet's whole, or the swept workload's); with several
 * targets each device is one (unscoped SLOs are checked on it too), with a
 * plan each target and each workload (SLOs scoped to them). */
typedef struct {
    const char *kind;       /* NULL (part 0), "target" or "workload" */
    const char *name, *url; /* its scope names (url: a target's other one, or NULL) */
    size_t *pairs, n_pairs; /* its pairs (part 0 of one target: none, the run's) */
    int each;               /* unscoped SLOs apply (a device of a fleet) */
    int device;             /* a device: its knee is stated, its telemetry shown */
} part;

typedef struct {
    double level;           /* sessions or requests/s */
    int bisect;             /* found by bisection */
    double secs;            /* measured seconds */
    uint64_t from, to;      /* uv_hrtime of the measured window */
    figs *f;                /* per part; f[0] the sweep's */
    int pass;               /* every part passed and the throughput grew */
    char why[260];          /* why not */
} step;

typedef struct {
    yb_runopts *ro;
    int rate;               /* 1: --rate levels; 0: -c levels */
    uint64_t warmup_ns, step_ns;
    yb_thresholds *slo;
    /* several targets (a fleet or a plan): the pairs the levels set, all
     * pairs' recorders, the plan to run */
    yb_fleet *fl;           /* --targets --fan-out (or NULL) */
    yb_planfile *pf;        /* --plan (or NULL) */
    size_t swept;           /* --workload: its index in pf */
    yb_engine_opts **level_o; /* the pairs a level applies to */
    size_t n_level_o;
    yb_recorder *pair_rec;
    size_t n_pair_rec;
    yb_plan *plan;
    unsigned sessions;      /* with --rate: -c, each pair's sessions (0: as configured) */
    part *parts;
    size_t n_parts;
} sweep_cfg;

static int multi(const sweep_cfg *c) { return c->fl || c->pf; }

/* The figures of recs[0..n) (pairs' recorders, or the run's) over the
 * seconds [w, e); the window's end-to-end histogram into *h (new; NULL on
 * ENOMEM). */
static void window_figs(const yb_recorder *const *recs, size_t n, size_t w, size_t e, figs *f,
                        yb_hdr **h)
{
    memset(f, 0, sizeof *f);
    f->device_cpu = -1;
    *h = yb_hdr_new_default();
    for (size_t r = 0; *h && r < n; r++)
        for (size_t i = w; i < e && i < recs[r]->n_iv; i++) {
            const yb_interval *iv = &recs[r]->iv[i];
            f->ok += iv->requests - (iv->errors < iv->requests ? iv->errors : iv->requests);
            f->errors += iv->errors;
            if (iv->hist) {
                yb_hdr *x = yb_hdr_decode_compressed(iv->hist, iv->hist_len);
                if (x)
                    yb_hdr_add(*h, x);
                yb_hdr_free(x);
            }
        }
    double secs = e > w ? (double)(e - w) : 0;
    f->achieved = secs > 0 ? (double)f->ok / secs : 0;
    f->err_pct = f->ok + f->errors ? 100.0 * (double)f->errors / (double)(f->ok + f->errors) : 0;
    if (*h && yb_hdr_count(*h)) {
        f->p50_ms = (double)yb_hdr_percentile(*h, 50) / 1e3;
        f->p99_ms = (double)yb_hdr_percentile(*h, 99) / 1e3;
        f->p999_ms = (double)yb_hdr_percentile(*h, 99.9) / 1e3;
    }
}

/* The figure of one SLO over the measured window (e2e from h, the counts,
 * the rate; else the part's whole step, rec).  Returns 1 with *v, else 0. */
static int slo_value(const yb_threshold *t, const figs *f, double secs, const yb_hdr *h,
                     const yb_recorder *rec, double *v)
{
    const yb_metric *m = &t->m;
    if (m->kind == YB_M_LATENCY && m->hist == YB_H_E2E) {
        if (!yb_hdr_count(h))
            return 0;
        *v = m->stat == YB_STAT_PCT    ? (double)yb_hdr_percentile(h, m->pct)
             : m->stat == YB_STAT_MIN  ? (double)yb_hdr_min(h)
             : m->stat == YB_STAT_MAX  ? (double)yb_hdr_max(h)
                                       : yb_hdr_mean(h);
        return 1;
    }
    if (m->kind == YB_M_ERRORS && m->err == YB_ERR_NONE) {
        uint64_t n = f->ok + f->errors;
        if (t->percent && !n)
            return 0;
        *v = t->percent ? 100.0 * (double)f->errors / (double)n : (double)f->errors;
        return 1;
    }
    if (m->kind == YB_M_RATE) {
        *v = f->achieved;
        return secs > 0;
    }
    return rec && yb_metric_value(m, rec, t->percent, v); /* other phases: the whole step */
}

static int holds(yb_th_op op, double v, double limit)
{
    return op == YB_TH_LT ? v < limit : op == YB_TH_LE ? v <= limit : op == YB_TH_GT ? v > limit
                                                                                    : v >= limit;
}

/* 1 when SLO t is judged on part p. */
static int slo_applies(const yb_threshold *t, const part *p, int first)
{
    if (!t->scope_kind[0])
        return first || p->each;
    return p->kind && !strcmp(t->scope_kind, p->kind) &&
           (!strcmp(t->scope_name, p->name) || (p->url && !strcmp(t->scope_name, p->url)));
}

/* Judges part p's figures f (window histogram h, whole-step recorder rec)
 * against every SLO that applies to it. */
static void judge(const sweep_cfg *c, const part *p, int first, double secs, const yb_hdr *h,
                  const yb_recorder *rec, figs *f)
{
    int applies = 0;
    for (size_t i = 0; i < c->slo->n; i++)
        applies |= slo_applies(&c->slo->t[i], p, first);
    f->pass = 1;
    if (first || p->each || applies) { /* a background part with no SLO of its own is not judged */
        f->pass = secs > 0 && f->ok > 0;
        if (!f->pass)
            snprintf(f->why, sizeof f->why, "nothing succeeded in the measured seconds");
    }
    for (size_t i = 0; f->pass && h && i < c->slo->n; i++) {
        const yb_threshold *t = &c->slo->t[i];
        double v;
        if (!slo_applies(t, p, first))
            continue;
        if (!slo_value(t, f, secs, h, rec, &v)) {
            f->pass = 0;
            snprintf(f->why, sizeof f->why, "SLO '%s': nothing to measure", t->expr);
        } else if (!holds(t->op, v, t->limit)) {
            f->pass = 0;
            int lat = t->m.kind == YB_M_LATENCY;
            snprintf(f->why, sizeof f->why, "SLO '%s' failed: %.*f%s", t->expr, lat ? 2 : 3,
                     lat ? v / 1e3 : v,
                     lat ? " ms" : t->m.kind == YB_M_RATE ? "/s" : t->percent ? "%" : "");
        }
    }
}

/* Part p's figures of the step just run (run: the run's recorder). */
static int part_figs(const sweep_cfg *c, const part *p, int first, const yb_recorder *run,
                     size_t w, size_t e, double secs, figs *f)
{
    const yb_recorder *one[1] = {run}, **recs = one;
    size_t n = 1;
    yb_recorder merged;
    int have_merged = 0, rc = 0;
    if (p->n_pairs) {
        if (!(recs = calloc(p->n_pairs, sizeof *recs)))
            return -1;
        for (size_t i = 0; i < p->n_pairs; i++)
            recs[i] = &c->pair_rec[p->pairs[i]];
        n = p->n_pairs;
    }
    yb_hdr *h;
    window_figs(recs, n, w, e, f, &h);
    /* an SLO on another phase reads the part's whole step: one recorder */
    const yb_recorder *whole = n == 1 ? recs[0] : NULL;
    if (n > 1 && yb_recorder_init(&merged) == 0) {
        have_merged = 1;
        for (size_t i = 0; i < n; i++)
            if (yb_recorder_merge(&merged, recs[i]) < 0)
                rc = -1;
        whole = &merged;
    }
    if (!h || (n > 1 && !have_merged))
        rc = -1;
    if (!rc)
        judge(c, p, first, secs, h, whole, f);
    if (have_merged)
        yb_recorder_cleanup(&merged);
    yb_hdr_free(h);
    if (recs != one)
        free(recs);
    return rc;
}

/* ---- one step ------------------------------------------------------------------ */

/* Runs one level on several targets: the level set on the pairs it
 * applies to, every pair's recorder fresh.  Returns 0 or -1 (err). */
static int run_pairs(const sweep_cfg *c, double level, yb_engine_opts *base, yb_recorder *rec,
                     char *err, size_t errlen)
{
    double cu, cs;
    for (size_t i = 0; i < c->n_level_o; i++) {
        yb_engine_opts *o = c->level_o[i];
        if (c->rate) {
            memset(&o->sched, 0, sizeof o->sched);
            o->sched.kind = YB_SCHED_RATE;
            o->sched.rate = level;
            if (c->sessions)
                o->concurrency = c->sessions;
        } else {
            o->concurrency = (unsigned)level;
        }
        o->duration_ns = c->warmup_ns + c->step_ns;
        o->requests = 0;
    }
    for (size_t i = 0; i < c->n_pair_rec; i++) {
        yb_recorder_cleanup(&c->pair_rec[i]);
        if (yb_recorder_init(&c->pair_rec[i]) < 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    memset(c->plan, 0, sizeof *c->plan);
    if (c->pf ? yb_planfile_plan(c->pf, base, c->plan) < 0 : yb_fleet_plan(c->fl, base, c->plan) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return yb_run_plan_timed(c->plan, rec, c->pair_rec, &cu, &cs, err, errlen);
}

/* Runs one level.  Returns 0, or -1 with a message printed (the engine
 * could not run). */
static int run_step(const sweep_cfg *c, double level, step *s)
{
    yb_engine_opts o = c->ro->o;
    figs *f = s->f;
    memset(s, 0, sizeof *s);
    s->f = f;
    s->level = level;
    o.duration_ns = c->warmup_ns + c->step_ns;
    o.requests = 0;
    if (!multi(c) && c->rate) {
        memset(&o.sched, 0, sizeof o.sched);
        o.sched.kind = YB_SCHED_RATE;
        o.sched.rate = level;
    } else if (!multi(c)) {
        o.concurrency = (unsigned)level;
        if (o.threads > o.concurrency)
            o.threads = o.concurrency;
    }
    yb_recorder rec;
    char err[512];
    double cu, cs;
    if (yb_recorder_init(&rec) < 0) {
        yb_errorf("out of memory");
        return -1;
    }
    if ((multi(c) ? run_pairs(c, level, &o, &rec, err, sizeof err)
                  : yb_run_timed(&o, &rec, &cu, &cs, err, sizeof err)) < 0) {
        yb_errorf("%s", err);
        yb_recorder_cleanup(&rec);
        return -1;
    }
    /* the whole seconds after the warm-up, within the step */
    size_t w = (size_t)((c->warmup_ns + 999999999u) / 1000000000u);
    size_t e = (size_t)((c->warmup_ns + c->step_ns) / 1000000000u);
    s->secs = e > w ? (double)(e - w) : 0;
    s->from = rec.run_start + w * 1000000000ull;
    s->to = rec.run_start + e * 1000000000ull;
    s->pass = 1;
    int rc = 0;
    for (size_t p = 0; p < c->n_parts && !rc; p++) {
        rc = part_figs(c, &c->parts[p], p == 0, &rec, w, e, s->secs, &f[p]);
        if (!rc && s->pass && !f[p].pass) {
            s->pass = 0;
            if (p == 0)
                snprintf(s->why, sizeof s->why, "%s", f[p].why);
            else
                snprintf(s->why, sizeof s->why, "%s %s: %s", c->parts[p].kind,
                         c->parts[p].name, f[p].why);
        }
    }
    yb_recorder_cleanup(&rec);
    if (rc)
        yb_errorf("out of memory");
    return rc;
}

/* The throughput grew enough from prev to s: by at least a quarter of the
 * level's own relative increase (a doubled level must bring 25 % more; a
 * level 5 % higher, 1.25 % more). */
static int grew(double prev_level, double prev_achieved, double level, double achieved)
{
    double want = (level / prev_level - 1) / 4;
    return achieved >= prev_achieved * (1 + want);
}

static void judge_growth(const step *prev, step *s)
{
    if (s->pass && prev && !grew(prev->level, prev->f[0].achieved, s->level, s->f[0].achieved)) {
        s->pass = 0;
        snprintf(s->why, sizeof s->why,
                 "throughput stopped growing: %.1f/s, against %.1f/s at %g", s->f[0].achieved,
                 prev->f[0].achieved, prev->level);
    }
}

/* ---- knees ---------------------------------------------------------------------- */

typedef struct {
    long step;              /* its step (in level order), -1 none */
    int lower_bound;        /* the device never failed: it can take more */
} knee;

/* Device part p's knee over the steps (in level order): the most of its
 * throughput among the steps in which it met its SLOs and its own
 * throughput grew from its previous good step (a row where it did not
 * grow is marked so). */
static knee device_knee(step *st, size_t n, size_t p)
{
    knee k = {-1, 1};
    long prev = -1;
    for (size_t i = 0; i < n; i++) {
        figs *f = &st[i].f[p];
        int good = f->pass && (prev < 0 || grew(st[prev].level, st[prev].f[p].achieved,
                                                st[i].level, f->achieved));
        if (!good) {
            k.lower_bound = 0;
            if (f->pass) { /* its row says why */
                f->pass = 0;
                snprintf(f->why, sizeof f->why, "its throughput stopped growing: %.1f/s, "
                         "against %.1f/s at %g", f->achieved, st[prev].f[p].achieved,
                         st[prev].level);
            }
            continue;
        }
        prev = (long)i;
        if (k.step < 0 || f->achieved > st[k.step].f[p].achieved)
            k.step = (long)i;
    }
    return k;
}

/* ---- reports ---------------------------------------------------------------------- */

static const char *unit_of(int rate) { return rate ? "req/s" : "sessions"; }

static void print_row(FILE *f, const char *lead, const figs *x, const char *verdict,
                      const char *tail)
{
    char cpu[16] = "-";
    if (x->device_cpu >= 0)
        snprintf(cpu, sizeof cpu, "%.1f", x->device_cpu);
    fprintf(f, "  %-14s %10.1f %10llu %9.2f %9.2f %9.2f %8.3f %8s  %s%s\n", lead, x->achieved,
            (unsigned long long)x->ok, x->p50_ms, x->p99_ms, x->p999_ms, x->err_pct, cpu,
            verdict, tail);
}

static void print_table(FILE *f, const sweep_cfg *c, const step *st, size_t n, long knee_i,
                        const knee *dk)
{
    fprintf(f, "\nSweep: %s%s%s, %.3g s per step after %.3g s of warm-up\n",
            c->rate ? "open-loop rate" : "concurrency (closed loop)",
            c->pf ? " of workload " : c->fl ? " of every target" : "",
            c->pf ? c->pf->w[c->swept].name : "", (double)c->step_ns / 1e9,
            (double)c->warmup_ns / 1e9);
    fprintf(f, "  %-14s %10s %10s %9s %9s %9s %8s %8s  %s\n", c->rate ? "offered/s" : "sessions",
            "achieved/s", "ok", "p50 ms", "p99 ms", "p99.9 ms", "errors%", "dev CPU%", "verdict");
    for (size_t i = 0; i < n; i++) {
        const step *s = &st[i];
        char lead[40], tail[40];
        snprintf(lead, sizeof lead, "%g", s->level);
        snprintf(tail, sizeof tail, "%s%s", s->bisect ? " (bisection)" : "",
                 (long)i == knee_i ? "  <- knee" : "");
        print_row(f, lead, &s->f[0], s->pass ? "ok" : s->why, tail);
        for (size_t p = 1; p < c->n_parts; p++) { /* each device, each workload */
            const part *q = &c->parts[p];
            snprintf(lead, sizeof lead, "  %s%.10s", c->pf && !q->device ? "w:" : "", q->name);
            print_row(f, lead, &s->f[p], s->f[p].pass ? "ok" : s->f[p].why,
                      q->device && dk[p].step == (long)i ? "  <- its knee" : "");
        }
    }
    if (knee_i < 0)
        fprintf(f, "Knee: none: no step met every SLO.\n");
    else
        fprintf(f, "Knee: %.1f requests/s at %g %s (p99 %.2f ms, errors %.3f%%): the most "
                   "throughput meeting every SLO%s.\n",
                st[knee_i].f[0].achieved, st[knee_i].level, unit_of(c->rate), st[knee_i].f[0].p99_ms,
                st[knee_i].f[0].err_pct, c->fl ? " on every target" : "");
    for (size_t p = 1; p < c->n_parts; p++) {
        const part *q = &c->parts[p];
        if (!q->device)
            continue;
        if (dk[p].step < 0)
            fprintf(f, "Knee of %s: none: no step met its SLOs.\n", q->name);
        else
            fprintf(f, "Knee of %s: %s%.1f requests/s at %g %s (p99 %.2f ms)%s.\n", q->name,
                    dk[p].lower_bound ? "at least " : "", st[dk[p].step].f[p].achieved,
                    st[dk[p].step].level, unit_of(c->rate), st[dk[p].step].f[p].p99_ms,
                    dk[p].lower_bound ? ": it never failed; the sweep stopped for another "
                                        "target or the last level"
                                      : "");
    }
}

static json_t *figs_json(const figs *x)
{
    return json_pack("{s:f, s:I, s:I, s:f, s:f, s:f, s:f, s:o, s:b, s:s?}", "achieved_per_s",
                     x->achieved, "ok", (json_int_t)x->ok, "errors", (json_int_t)x->errors,
                     "errors_pct", x->err_pct, "p50_us", x->p50_ms * 1e3, "p99_us",
                     x->p99_ms * 1e3, "p999_us", x->p999_ms * 1e3, "device_cpu_pct",
                     x->device_cpu >= 0 ? json_real(x->device_cpu) : json_null(), "pass",
                     x->pass, "why", x->pass ? NULL : x->why);
}

/* The --json document (yangblast-report(5), SWEEPS).  Returns a new
 * reference or NULL on ENOMEM. */
static json_t *sweep_json(const sweep_cfg *c, const char *corpus, const char *target,
                          const step *st, size_t n, long knee_i, const knee *dk)
{
    json_t *steps = json_array(), *slo = json_array(), *devs = json_array();
    int bad = !steps || !slo || !devs;
    for (size_t i = 0; !bad && i < c->slo->n; i++)
        bad = json_array_append_new(slo, json_string(c->slo->t[i].expr)) < 0;
    for (size_t i = 0; !bad && i < n; i++) {
        const step *s = &st[i];
        json_t *o = figs_json(&s->f[0]), *parts = json_array();
        bad = !o || !parts || json_array_append_new(steps, o) < 0;
        if (bad) {
            json_decref(parts);
            break;
        }
        bad = json_object_set_new(o, "level", json_real(s->level)) < 0 ||
              json_object_set_new(o, "bisection", json_boolean(s->bisect)) < 0 ||
              json_object_set_new(o, "pass", json_boolean(s->pass)) < 0 ||
              json_object_set_new(o, "why", s->pass ? json_null() : json_string(s->why)) < 0 ||
              json_object_set_new(o, "parts", parts) < 0;
        for (size_t p = 1; !bad && p < c->n_parts; p++) {
            json_t *x = figs_json(&s->f[p]);
            bad = !x || json_array_append_new(parts, x) < 0 ||
                  json_object_set_new(x, "kind", json_string(c->parts[p].kind)) < 0 ||
                  json_object_set_new(x, "name", json_string(c->parts[p].name)) < 0;
        }
    }
    for (size_t p = 1; !bad && p < c->n_parts; p++) {
        if (!c->parts[p].device)
            continue;
        long k = dk[p].step;
        json_t *kn = k < 0 ? json_null()
                           : json_pack("{s:f, s:f, s:f, s:b}", "level", st[k].level,
                                       "achieved_per_s", st[k].f[p].achieved, "p99_us",
                                       st[k].f[p].p99_ms * 1e3, "lower_bound",
                                       dk[p].lower_bound);
        bad = !kn || json_array_append_new(devs, json_pack("{s:s, s:o}", "name",
                                                           c->parts[p].name, "knee", kn)) < 0;
    }
    json_t *k = NULL;
    if (!bad)
        k = knee_i < 0 ? json_null()
                       : json_pack("{s:f, s:f, s:f}", "level", st[knee_i].level,
                                   "achieved_per_s", st[knee_i].f[0].achieved, "p99_us",
                                   st[knee_i].f[0].p99_ms * 1e3);
    if (bad || !k) {
        json_decref(steps);
        json_decref(slo);
        json_decref(devs);
        return NULL;
    }
    return json_pack("{s:s, s:{s:s, s:s, s:s?, s:s, s:s, s:f, s:f, s:o, s:o, s:o, s:o}}", "schema",
                     "yangblast-sweep/1", "sweep", "corpus", corpus, "target", target,
                     "workload", c->pf ? c->pf->w[c->swept].name : NULL, "mode",
                     c->rate ? "rate" : "concurrency", "level_unit", unit_of(c->rate), "step_s",
                     (double)c->step_ns / 1e9, "warmup_s", (double)c->warmup_ns / 1e9, "slo",
                     slo, "steps", steps, "knee", k, "devices", devs);
}

/* ---- setting up several targets ---------------------------------------------------- */

/* Adds a part (pairs given by the caller).  Returns it, or NULL on ENOMEM. */
static part *add_part(sweep_cfg *c, const char *kind, const char *name, const char *url,
                      int each, int device)
{
    part *p = &c->parts[c->n_parts];
    *p = (part){kind, name, url, NULL, 0, each, device};
    if (!(p->pairs = calloc(c->n_pair_rec ? c->n_pair_rec : 1, sizeof *p->pairs)))
        return NULL;
    c->n_parts++;
    return p;
}

/* A fleet (--targets FILE --fan-out, or two --target for a mixed corpus):
 * the level applies to every pair; part 0 is the whole fleet, then a part
 * per target, each judged on the unscoped SLOs.  Returns 0 or -1. */
static int fleet_parts(sweep_cfg *c, yb_fleet *fl)
{
    c->fl = fl;
    c->pair_rec = fl->rec;
    c->n_pair_rec = fl->n;
    c->n_level_o = fl->n;
    c->level_o = calloc(fl->n, sizeof *c->level_o);
    c->parts = calloc(fl->n + 1, sizeof *c->parts);
    part *all = c->level_o && c->parts ? add_part(c, NULL, fl->desc, NULL, 0, 0) : NULL;
    if (!all)
        return -1;
    for (size_t i = 0; i < fl->n; i++) {
        c->level_o[i] = &fl->o[i];
        fl->o[i].pair_series_latency = 1; /* each target judged on its measured seconds */
        all->pairs[all->n_pairs++] = i;
        part *p = add_part(c, "target", fl->label[i], fl->url[i], 1, 1);
        if (!p)
            return -1;
        p->pairs[p->n_pairs++] = i;
    }
    return 0;
}

/* A plan (--plan FILE --workload NAME): the level applies to the swept
 * workload's pairs; part 0 is that workload, then each of its targets
 * (when it has several; their knees stated) and each other workload
 * (judged on the SLOs scoped to it).  The other workloads keep their
 * start offsets and run at most to the end of each step.  Returns 0, or
 * YB_EXIT_USAGE / -1 (ENOMEM) with a message printed. */
static int plan_parts(sweep_cfg *c, yb_planfile *pf, const char *name)
{
    size_t sw = 0, np = pf->n_pairs;
    while (sw < pf->n && strcmp(pf->w[sw].name, name))
        sw++;
    if (sw == pf->n)
        return yb_usage_error("experiment sweep", "--workload '%s': no such workload in %s",
                              name, pf->path);
    yb_plan_workload *w = &pf->w[sw];
    if (w->ro.o.timing_original || w->ro.subscriptions)
        return yb_usage_error("experiment sweep", "--workload '%s': %s has no concurrency or "
                              "rate to sweep", name, w->ro.o.timing_original
                              ? "a workload at the recorded timing" : "a subscriptions workload");
    uint64_t total = c->warmup_ns + c->step_ns;
    for (size_t i = 0; i < pf->n; i++) {
        yb_plan_workload *x = &pf->w[i];
        if (i != sw && x->start_ns >= total)
            return yb_usage_error("experiment sweep", "%s: workload '%s' starts at %.3g s, "
                                  "after a step (--warmup + --step) ends", pf->path, x->name,
                                  (double)x->start_ns / 1e9);
        for (size_t k = 0; k < x->fleet.n; k++) {
            yb_engine_opts *o = &x->fleet.o[k];
            o->pair_series_latency = 1; /* each part judged on its measured seconds */
            if (i == sw)
                o->start_ns = 0; /* the step's window is the swept workload's */
            else if (!o->duration_ns || o->start_ns + o->duration_ns > total)
                o->duration_ns = total - o->start_ns;
        }
    }
    c->pf = pf;
    c->swept = sw;
    c->pair_rec = pf->pair_rec;
    c->n_pair_rec = np;
    c->n_level_o = w->fleet.n;
    c->level_o = calloc(w->fleet.n, sizeof *c->level_o);
    c->parts = calloc(1 + pf->targets.n + pf->n, sizeof *c->parts);
    part *all = c->level_o && c->parts ? add_part(c, "workload", w->name, NULL, 0, 0) : NULL;
    if (!all)
        return -1;
    for (size_t k = 0; k < w->fleet.n; k++)
        c->level_o[k] = &w->fleet.o[k];
    for (size_t p = 0; p < np; p++)
        if (pf->pair_wl[p] == sw)
            all->pairs[all->n_pairs++] = p;
    for (size_t t = 0; w->fleet.n > 1 && t < pf->targets.n; t++) {
        part *q = NULL;
        for (size_t p = 0; p < np; p++)
            if (pf->pair_wl[p] == sw && pf->pair_tgt[p] == t) {
                if (!q && !(q = add_part(c, "target", pf->targets.label[t], pf->targets.url[t],
                                         0, 1)))
                    return -1;
                q->pairs[q->n_pairs++] = p;
            }
    }
    for (size_t i = 0; i < pf->n; i++) {
        if (i == sw)
            continue;
        part *q = add_part(c, "workload", pf->w[i].name, NULL, 0, 0);
        if (!q)
            return -1;
        for (size_t p = 0; p < np; p++)
            if (pf->pair_wl[p] == i)
                q->pairs[q->n_pairs++] = p;
    }
    return 0;
}

/* Refuses an SLO scope that names no part of the sweep. */
static int check_slo_scopes(const sweep_cfg *c)
{
    yb_th_scope *sc = calloc(2 * c->n_parts, sizeof *sc);
    size_t n = 0;
    char err[600];
    if (!sc) {
        yb_errorf("out of memory");
        return YB_EXIT_RUNTIME;
    }
    for (size_t p = 0; p < c->n_parts; p++) {
        if (!c->parts[p].kind)
            continue;
        sc[n++] = (yb_th_scope){c->parts[p].kind, c->parts[p].name, NULL, NULL};
        if (c->parts[p].url)
            sc[n++] = (yb_th_scope){c->parts[p].kind, c->parts[p].url, NULL, NULL};
    }
    int rc = yb_thresholds_check_scopes(c->slo, sc, n, err, sizeof err) < 0
                 ? yb_usage_error("experiment sweep", "--slo: %s", err)
                 : 0;
    free(sc);
    return rc;
}

static void cfg_free(sweep_cfg *c)
{
    for (size_t p = 0; c->parts && p < c->n_parts; p++)
        free(c->parts[p].pairs);
    free(c->parts);
    free(c->level_o);
    free(c->plan);
}

/* The telemetry's mean CPU over each step's window on each part that is
 * a watched device (part 0: when one device is watched). */
static void step_cpu(const sweep_cfg *c, const yb_telemetry *tm, step *st, size_t n)
{
    const yb_tm_device *d;
    size_t nd = yb_telemetry_devices(tm, &d);
    for (size_t k = 0; k < nd; k++) {
        if (!d[k].supported)
            continue;
        for (size_t p = 0; p < c->n_parts; p++) {
            const part *q = &c->parts[p];
            int mine = p == 0 ? nd == 1 : q->device && !strcmp(q->name, d[k].tg->label);
            for (size_t i = 0; mine && i < n; i++)
                st[i].f[p].device_cpu = yb_telemetry_load_cpu(&d[k], st[i].from, st[i].to);
        }
    }
}

/* ---- the command ----------------------------------------------------------------- */

int yb_cmd_sweep(int argc, char **argv)
{
    enum { O_RATE = YB_RO_END, O_STEP, O_WARMUP, O_SLO, O_BISECT, O_WORKLOAD };
    static const struct option own[] = {
        {"concurrency", required_argument, NULL, 'c'}, {"rate", required_argument, NULL, O_RATE},
        {"step", required_argument, NULL, O_STEP}, {"warmup", required_argument, NULL, O_WARMUP},
        {"slo", required_argument, NULL, O_SLO}, {"bisect", required_argument, NULL, O_BISECT},
        {"workload", required_argument, NULL, O_WORKLOAD},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    struct option opts[112];
    char shortopts[96];
    if (yb_runopts_getopt(YB_RO_SWEEP, own, "c:h", opts, sizeof opts / sizeof opts[0], shortopts,
                          sizeof shortopts) < 0)
        return YB_EXIT_RUNTIME;
    yb_runopts ro;
    yb_runopts_init(&ro);
    yb_thresholds slo;
    yb_thresholds_init(&slo);
    const char *conc = NULL, *rate = NULL, *workload = NULL;
    uint64_t bisect = 3;
    sweep_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.ro = &ro;
    cfg.warmup_ns = 2000000000ull;
    cfg.step_ns = 10000000000ull;
    cfg.slo = &slo;
    int c, rc, ret = YB_EXIT_OK;
    char err[600];
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
        switch (c) {
        case 'c': conc = optarg; break;
        case O_RATE: rate = optarg; break;
        case O_WORKLOAD: workload = optarg; break;
        case O_STEP:
        case O_WARMUP: {
            uint64_t *d = c == O_STEP ? &cfg.step_ns : &cfg.warmup_ns;
            if (yb_parse_duration(optarg, d) < 0 || (c == O_STEP && *d < 1000000000ull) ||
                *d > 3600000000000ull) {
                yb_thresholds_cleanup(&slo);
                return yb_usage_error("experiment sweep", "%s '%s': expected a duration (%s..1h)",
                                      c == O_STEP ? "--step" : "--warmup", optarg,
                                      c == O_STEP ? "1s" : "0s");
            }
            break;
        }
        case O_SLO:
            if (yb_thresholds_add(&slo, optarg, err, sizeof err) < 0) {
                yb_thresholds_cleanup(&slo);
                return yb_usage_error("experiment sweep", "--slo: %s", err);
            }
            break;
        case O_BISECT:
            if (yb_parse_u64(optarg, 0, 20, &bisect) < 0) {
                yb_thresholds_cleanup(&slo);
                return yb_usage_error("experiment sweep", "--bisect '%s': expected 0..20", optarg);
            }
            break;
        case 'h': help(); yb_thresholds_cleanup(&slo); return YB_EXIT_OK;
        case '?': case ':': yb_thresholds_cleanup(&slo); return yb_bad_option("experiment sweep", c, argv);
        default:
            if ((rc = yb_runopts_apply(YB_RO_SWEEP, "experiment sweep", c, optarg, &ro)) != 0) {
                yb_thresholds_cleanup(&slo);
                return rc == 1 ? yb_bad_option("experiment sweep", '?', argv) : rc;
            }
        }
    }
#define FAIL(...)                                                                  \
    do {                                                                           \
        ret = yb_usage_error("experiment sweep", __VA_ARGS__);                     \
        goto out;                                                                  \
    } while (0)
    double levels[MAX_LEVELS];
    int n_levels = 0;
    yb_credentials cred;
    memset(&cred, 0, sizeof cred);
    yb_telemetry *tm = NULL;
    yb_tm_target *tm_tgs = NULL, tm_tg;
    yb_engine_opts *tm_opts = NULL;
    yb_tm_cfg tm_cfg;
    step *st = NULL;
    figs *fbuf = NULL;
    knee *dk = NULL;
    yb_fleet fleet;
    yb_planfile pf;
    int have_fleet = 0, have_plan = 0;
    const char *target = ro.target;
    int several = ro.inventory || ro.n_targets > 1;
    if (ro.plan ? optind != argc : optind + 1 != argc)
        FAIL(ro.plan ? "--plan takes no CORPUS: each workload names its corpus or synth spec"
                     : "expected exactly one CORPUS");
    if (ro.plan && !workload)
        FAIL("--plan needs --workload NAME: the workload whose load the levels set (the others "
             "run as the plan says)");
    if (workload && !ro.plan)
        FAIL("--workload goes with --plan FILE");
    if (!target && !ro.inventory && !ro.plan)
        FAIL("missing --target URL (or --targets FILE --fan-out, or --plan FILE)");
    if (ro.inventory && !ro.fan_out && !ro.plan)
        FAIL("--targets needs --fan-out: the fleet steps together (each target gets the level; "
             "each target's SLOs and knee are stated)");
    if (several && !ro.plan && (ro.connect_to || ro.servername || ro.host_header))
        FAIL("%s applies to one --target", ro.connect_to ? "--connect-to" : ro.servername
                                                                           ? "--servername"
                                                                           : "-H 'Host: ...'");
    if (!conc && !rate)
        FAIL("give the levels: -c LEVELS (closed loop) or --rate LEVELS (open loop)");
    if (conc && rate) {
        /* open loop: -c is the sessions every step has */
        uint64_t v;
        if (yb_parse_u64(conc, 1, 100000, &v) < 0)
            FAIL("-c '%s' with --rate: the sessions of every step, one number (the levels "
                 "are the rates)", conc);
        ro.o.concurrency = (unsigned)v;
        cfg.sessions = (unsigned)v;
        conc = NULL;
    }
    cfg.rate = rate != NULL;
    if (cfg.rate) {
        n_levels = parse_levels(rate, 1, levels);
        if (n_levels < 1)
            FAIL("--rate '%s': expected rates like 50,100,200 or 50..2000/+50 or 50..3200x2 "
                 "(ascending, at most %d)", rate, MAX_LEVELS);
    } else {
        n_levels = parse_levels(conc, 0, levels);
        if (n_levels < 1)
            FAIL("-c '%s': expected sessions like 1,2,4 or 1..512x2 or 10..100/+10 "
                 "(ascending, 1..100000, at most %d)", conc, MAX_LEVELS);
    }
    if (!strcmp(ro.sessions, "per-request"))
        ro.o.policy = YB_SESS_PER_REQUEST;
    else if (!strcmp(ro.sessions, "reuse"))
        ro.o.policy = YB_SESS_REUSE;
    else
        FAIL("--sessions '%s': a sweep takes reuse or per-request", ro.sessions);
    if ((rc = yb_check_shared("experiment sweep", &ro))) {
        ret = rc;
        goto out;
    }
    const char *outs[] = {ro.json, ro.html};
    FILE *text;
    if ((rc = yb_check_outputs("experiment sweep", outs, 2, NULL, &text))) {
        ret = rc;
        goto out;
    }
    if (ro.plan) {
        ro.o.concurrency = ro.o.threads; /* each workload's is its own */
        if ((rc = yb_planfile_prepare("experiment sweep", &ro, &pf))) {
            ret = rc;
            goto out;
        }
        have_plan = 1;
        target = pf.desc;
        if ((rc = plan_parts(&cfg, &pf, workload))) {
            ret = rc < 0 ? YB_EXIT_RUNTIME : rc;
            goto out;
        }
    } else if (several) {
        ro.o.corpus_path = argv[optind];
        if ((rc = yb_fleet_prepare("experiment sweep", &ro, &fleet))) {
            ret = rc;
            goto out;
        }
        have_fleet = 1;
        target = fleet.desc;
        if (fleet_parts(&cfg, &fleet) < 0) {
            yb_errorf("out of memory");
            ret = YB_EXIT_RUNTIME;
            goto out;
        }
    } else {
        ro.o.corpus_path = argv[optind];
        if (yb_target_parse_via(target, ro.connect_to, &ro.o.target, err, sizeof err) < 0) {
            yb_errorf("%s", err);
            ret = YB_EXIT_USAGE;
            goto out;
        }
        if (ro.servername)
            ro.o.target.servername = ro.servername;
        if (!ro.o.target.tls && (rc = yb_check_tls_applies("experiment sweep", &ro, target))) {
            ret = rc;
            goto out;
        }
        if (ro.o.target.tls && (rc = yb_check_plain_applies("experiment sweep", &ro, target))) {
            ret = rc;
            goto out;
        }
        const char *proto;
        char redacted[256];
        if ((rc = yb_pick_codec(ro.o.corpus_path, &ro.o.ops, &proto, redacted, sizeof redacted,
                                NULL)) ||
            (rc = yb_check_corpus_target("experiment sweep", ro.o.corpus_path, proto,
                                         ro.o.ops == &yb_h2_client_ops, &ro.o.target, target,
                                         ro.given['m'] ? ro.o.streams : 1))) {
            ret = rc;
            goto out;
        }
        if (yb_credentials_load(ro.user, ro.pwfile, ro.tokfile, &cred) < 0) {
            ret = YB_EXIT_USAGE;
            goto out;
        }
        if ((rc = yb_check_redactions("experiment sweep", ro.o.corpus_path, redacted, &cred,
                                      ro.no_credentials))) {
            ret = rc;
            goto out;
        }
        yb_engine_bind(&ro.o, &cred, ro.user);
        cfg.parts = calloc(1, sizeof *cfg.parts);
        if (!cfg.parts || !add_part(&cfg, NULL, target, NULL, 0, 0)) {
            yb_errorf("out of memory");
            ret = YB_EXIT_RUNTIME;
            goto out;
        }
    }
    if ((rc = check_slo_scopes(&cfg))) {
        ret = rc;
        goto out;
    }
    /* the rewrites, tried on every record now (a plan's workloads have
     * theirs already) */
    if (!ro.plan && (rc = yb_runopts_rewrite("experiment sweep", &ro, &ro.o))) {
        ret = rc;
        goto out;
    }
    yb_runopts_bind_headers(&ro, &ro.o);
    ro.o.stop = &stop_flag;
    st = calloc(MAX_STEPS, sizeof *st);
    fbuf = calloc(MAX_STEPS * cfg.n_parts, sizeof *fbuf);
    dk = calloc(cfg.n_parts, sizeof *dk);
    if (!st || !fbuf || !dk || (multi(&cfg) && !(cfg.plan = calloc(1, sizeof *cfg.plan)))) {
        yb_errorf("out of memory");
        ret = YB_EXIT_RUNTIME;
        goto out;
    }
    for (size_t i = 0; i < MAX_STEPS; i++)
        st[i].f = &fbuf[i * cfg.n_parts];
    yb_cli_catch_stop(on_signal);

    if (ro.telemetry) {
        /* one session per device: the target, each of the fleet's, each
         * the plan goes to (as `run --telemetry` does) */
        char label[80];
        const yb_engine_opts *o = &ro.o;
        const char(*labels)[80] = (const char(*)[80])label;
        size_t n = 1;
        snprintf(label, sizeof label, "%.79s", target);
        tm_tgs = &tm_tg;
        if (have_plan) {
            n = pf.targets.n;
            labels = (const char(*)[80])pf.targets.label;
            tm_opts = calloc(n, sizeof *tm_opts);
            tm_tgs = calloc(n, sizeof *tm_tgs);
            for (size_t i = 0; tm_opts && tm_tgs && i < n; i++)
                tm_opts[i] = *yb_planfile_target_opts(&pf, i);
            o = tm_opts;
        } else if (have_fleet) {
            n = fleet.n;
            labels = (const char(*)[80])fleet.label;
            o = fleet.o;
            tm_tgs = calloc(n, sizeof *tm_tgs);
        }
        if (!tm_tgs || !o) {
            yb_errorf("out of memory");
            ret = YB_EXIT_RUNTIME;
            goto out;
        }
        if (!(tm = yb_telemetry_for("experiment sweep", ro.tele_interval_ns, ro.tele_baseline_ns,
                                    ro.tele_paths, ro.n_tele_paths, o, labels, n,
                                    have_fleet && !ro.inventory, tm_tgs, &tm_cfg))) {
            ret = YB_EXIT_USAGE;
            goto out;
        }
        yb_telemetry_baseline(tm, (volatile const int *)&stop_flag);
    }

    /* the steps, in order, until one is bad */
    size_t n = 0;
    long good = -1, bad = -1;
    for (int i = 0; i < n_levels && !stop_flag; i++) {
        if (!ro.quiet)
            fprintf(stderr, "sweep: %g %s ...\n", levels[i], unit_of(cfg.rate));
        if (run_step(&cfg, levels[i], &st[n]) < 0) {
            ret = YB_EXIT_RUNTIME;
            goto report;
        }
        judge_growth(good >= 0 ? &st[good] : NULL, &st[n]);
        if (st[n].pass) {
            good = (long)n++;
            continue;
        }
        bad = (long)n++;
        break;
    }
    /* bisection between the last good and the first bad level */
    for (uint64_t b = 0; b < bisect && good >= 0 && bad >= 0 && !stop_flag; b++) {
        double lo = st[good].level, hi = st[bad].level;
        double mid = cfg.rate ? (lo + hi) / 2 : floor((lo + hi) / 2);
        if (cfg.rate ? (hi - lo) / lo < 0.02 : mid <= lo)
            break;
        if (!ro.quiet)
            fprintf(stderr, "sweep: %g %s (bisection) ...\n", mid, unit_of(cfg.rate));
        if (run_step(&cfg, mid, &st[n]) < 0) {
            ret = YB_EXIT_RUNTIME;
            goto report;
        }
        st[n].bisect = 1;
        judge_growth(&st[good], &st[n]);
        if (st[n].pass)
            good = (long)n;
        else
            bad = (long)n;
        n++;
    }
report:
    yb_telemetry_stop(tm, (volatile const int *)&stop_flag);
    if (tm)
        step_cpu(&cfg, tm, st, n);
    /* the table in level order */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && st[j].level < st[j - 1].level; j--) {
            step t = st[j];
            st[j] = st[j - 1];
            st[j - 1] = t;
        }
    /* the knee: the most throughput among the steps that met every SLO */
    long knee_i = -1;
    for (size_t i = 0; i < n; i++)
        if (st[i].pass && (knee_i < 0 || st[i].f[0].achieved > st[knee_i].f[0].achieved))
            knee_i = (long)i;
    for (size_t p = 1; p < cfg.n_parts; p++)
        if (cfg.parts[p].device)
            dk[p] = device_knee(st, n, p);
    print_table(text, &cfg, st, n, knee_i, dk);
    if (tm) {
        const yb_tm_device *d;
        size_t nd = yb_telemetry_devices(tm, &d);
        for (size_t k = 0; k < nd; k++)
            if (!d[k].supported)
                fprintf(text, "Device CPU%s%s: %s\n", nd > 1 ? " of " : "",
                        nd > 1 ? d[k].tg->label : "", d[k].note);
    }
    if (stop_flag && ret == YB_EXIT_OK)
        ret = YB_EXIT_INTERRUPTED;
    if (ro.json || ro.html) {
        json_t *j = sweep_json(&cfg, ro.plan ? ro.plan : ro.o.corpus_path, target, st, n, knee_i,
                               dk);
        if (!j) {
            yb_errorf("cannot build the JSON report");
            ret = YB_EXIT_RUNTIME;
        }
        if (j && ro.json && yb_write_json_file(ro.json, j, err, sizeof err) < 0) {
            yb_errorf("%s", err);
            ret = YB_EXIT_RUNTIME;
        }
        /* the page renders the sweep's own JSON: one interface */
        const char *name = ro.json ? ro.json : "this sweep";
        if (j && ro.html && yb_html_report(ro.html, &j, &name, 1, NULL, err, sizeof err) < 0) {
            yb_errorf("%s", err);
            ret = YB_EXIT_RUNTIME;
        }
        json_decref(j);
    }
out:
#undef FAIL
    yb_telemetry_free(tm);
    if (tm_tgs != &tm_tg)
        free(tm_tgs);
    free(tm_opts);
    free(st);
    free(fbuf);
    free(dk);
    cfg_free(&cfg);
    if (have_plan)
        yb_planfile_free(&pf);
    if (have_fleet)
        yb_fleet_free(&fleet);
    yb_credentials_cleanup(&cred);
    yb_thresholds_cleanup(&slo);
    yb_thresholds_cleanup(&ro.th);
    yb_runopts_cleanup(&ro);
    return ret;
}
