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
           "                                 [--slo EXPR]... [OPTIONS]\n\n"
           "Find the capacity: run CORPUS at each level for --step after a --warmup, stop\n"
           "when an SLO fails or the throughput stops growing, then bisect between the\n"
           "last good and the first bad level; print a table per step and the knee.\n\n"
           "  -c, --concurrency LEVELS  closed loop: sessions per step, as 1,2,4 or\n"
           "                            1..512x2 (geometric) or 10..100/+10 (linear)\n"
           "      --rate LEVELS         open loop: requests/s per step, as 50,100 or\n"
           "                            50..2000/+50 or 50..3200x2 (with --rate, -c N\n"
           "                            is the sessions of every step)\n"
           "      --step D              measured length of a step (default 10s)\n"
           "      --warmup D            run before each step's measure (default 2s)\n"
           "      --slo EXPR            the service level a step must meet, as\n"
           "                            --threshold: 'e2e.p99<100ms', 'errors<0.1%%'\n"
           "                            (repeatable; unscoped)\n"
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

/* ---- one step ------------------------------------------------------------------ */

typedef struct {
    double level;           /* sessions or requests/s */
    int bisect;             /* found by bisection */
    double achieved;        /* successful requests per second, measured window */
    uint64_t ok, errors;
    double err_pct;
    double p50_ms, p99_ms, p999_ms;
    double secs;            /* measured seconds */
    uint64_t from, to;      /* uv_hrtime of the measured window */
    double device_cpu;      /* telemetry: mean CPU in the window, -1 none */
    int pass;               /* every SLO met and the throughput grew */
    char why[200];          /* why not */
} step;

typedef struct {
    yb_runopts *ro;
    int rate;               /* 1: --rate levels; 0: -c levels */
    uint64_t warmup_ns, step_ns;
    yb_thresholds *slo;
} sweep_cfg;

/* The figure of one SLO over the measured window (window: e2e from h, the
 * counts; else the whole step's recorder).  Returns 1 with *v, else 0. */
static int slo_value(const yb_threshold *t, const step *s, const yb_hdr *h, const yb_recorder *rec,
                     double *v)
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
        uint64_t n = s->ok + s->errors;
        if (t->percent && !n)
            return 0;
        *v = t->percent ? 100.0 * (double)s->errors / (double)n : (double)s->errors;
        return 1;
    }
    if (m->kind == YB_M_RATE) {
        *v = s->achieved;
        return s->secs > 0;
    }
    return yb_metric_value(m, rec, t->percent, v); /* other phases: the whole step */
}

static int holds(yb_th_op op, double v, double limit)
{
    return op == YB_TH_LT ? v < limit : op == YB_TH_LE ? v <= limit : op == YB_TH_GT ? v > limit
                                                                                    : v >= limit;
}

/* Runs one level.  Returns 0, or -1 with a message printed (the engine
 * could not run). */
static int run_step(const sweep_cfg *c, double level, step *s)
{
    yb_engine_opts o = c->ro->o;
    memset(s, 0, sizeof *s);
    s->level = level;
    s->device_cpu = -1;
    o.duration_ns = c->warmup_ns + c->step_ns;
    o.requests = 0;
    if (c->rate) {
        memset(&o.sched, 0, sizeof o.sched);
        o.sched.kind = YB_SCHED_RATE;
        o.sched.rate = level;
    } else {
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
    if (yb_run_timed(&o, &rec, &cu, &cs, err, sizeof err) < 0) {
        yb_errorf("%s", err);
        yb_recorder_cleanup(&rec);
        return -1;
    }
    /* the whole seconds after the warm-up, within the step */
    size_t w = (size_t)((c->warmup_ns + 999999999u) / 1000000000u);
    size_t e = (size_t)((c->warmup_ns + c->step_ns) / 1000000000u);
    if (e > rec.n_iv)
        e = rec.n_iv;
    yb_hdr *h = yb_hdr_new_default();
    for (size_t i = w; h && i < e; i++) {
        const yb_interval *iv = &rec.iv[i];
        s->ok += iv->requests - (iv->errors < iv->requests ? iv->errors : iv->requests);
        s->errors += iv->errors;
        if (iv->hist) {
            yb_hdr *x = yb_hdr_decode_compressed(iv->hist, iv->hist_len);
            if (x)
                yb_hdr_add(h, x);
            yb_hdr_free(x);
        }
    }
    s->secs = e > w ? (double)(e - w) : 0;
    s->from = rec.run_start + w * 1000000000ull;
    s->to = rec.run_start + e * 1000000000ull;
    s->achieved = s->secs > 0 ? (double)s->ok / s->secs : 0;
    s->err_pct = s->ok + s->errors ? 100.0 * (double)s->errors / (double)(s->ok + s->errors) : 0;
    if (h && yb_hdr_count(h)) {
        s->p50_ms = (double)yb_hdr_percentile(h, 50) / 1e3;
        s->p99_ms = (double)yb_hdr_percentile(h, 99) / 1e3;
        s->p999_ms = (double)yb_hdr_percentile(h, 99.9) / 1e3;
    }
    s->pass = s->secs > 0 && s->ok > 0;
    if (!s->pass)
        snprintf(s->why, sizeof s->why, "nothing succeeded in the measured seconds");
    for (size_t i = 0; s->pass && h && i < c->slo->n; i++) {
        const yb_threshold *t = &c->slo->t[i];
        double v;
        if (!slo_value(t, s, h, &rec, &v)) {
            s->pass = 0;
            snprintf(s->why, sizeof s->why, "SLO '%s': nothing to measure", t->expr);
        } else if (!holds(t->op, v, t->limit)) {
            s->pass = 0;
            int lat = t->m.kind == YB_M_LATENCY;
            snprintf(s->why, sizeof s->why, "SLO '%s' failed: %.*f%s", t->expr, lat ? 2 : 3,
                     lat ? v / 1e3 : v,
                     lat ? " ms" : t->m.kind == YB_M_RATE ? "/s" : t->percent ? "%" : "");
        }
    }
    yb_hdr_free(h);
    yb_recorder_cleanup(&rec);
    return 0;
}

/* The throughput grew enough from prev to s: by at least a quarter of the
 * level's own relative increase (a doubled level must bring 25 % more; a
 * level 5 % higher, 1.25 % more). */
static int grew(const step *prev, const step *s)
{
    if (!prev)
        return 1;
    double want = (s->level / prev->level - 1) / 4;
    return s->achieved >= prev->achieved * (1 + want);
}

static void judge_growth(const step *prev, step *s)
{
    if (s->pass && !grew(prev, s)) {
        s->pass = 0;
        snprintf(s->why, sizeof s->why,
                 "throughput stopped growing: %.1f/s, against %.1f/s at %g", s->achieved,
                 prev->achieved, prev->level);
    }
}

/* ---- reports ---------------------------------------------------------------------- */

static const char *unit_of(int rate) { return rate ? "req/s" : "sessions"; }

static void print_table(FILE *f, const sweep_cfg *c, const step *st, size_t n, long knee)
{
    fprintf(f, "\nSweep: %s, %.3g s per step after %.3g s of warm-up\n",
            c->rate ? "open-loop rate" : "concurrency (closed loop)", (double)c->step_ns / 1e9,
            (double)c->warmup_ns / 1e9);
    fprintf(f, "  %-10s %10s %10s %9s %9s %9s %8s %8s  %s\n", c->rate ? "offered/s" : "sessions",
            "achieved/s", "ok", "p50 ms", "p99 ms", "p99.9 ms", "errors%", "dev CPU%", "verdict");
    for (size_t i = 0; i < n; i++) {
        const step *s = &st[i];
        char cpu[16] = "-";
        if (s->device_cpu >= 0)
            snprintf(cpu, sizeof cpu, "%.1f", s->device_cpu);
        fprintf(f, "  %-10g %10.1f %10llu %9.2f %9.2f %9.2f %8.3f %8s  %s%s%s\n", s->level,
                s->achieved, (unsigned long long)s->ok, s->p50_ms, s->p99_ms, s->p999_ms,
                s->err_pct, cpu, s->pass ? "ok" : s->why, s->bisect ? " (bisection)" : "",
                (long)i == knee ? "  <- knee" : "");
    }
    if (knee < 0)
        fprintf(f, "Knee: none: no step met every SLO.\n");
    else
        fprintf(f, "Knee: %.1f requests/s at %g %s (p99 %.2f ms, errors %.3f%%): the most "
                   "throughput meeting every SLO.\n",
                st[knee].achieved, st[knee].level, unit_of(c->rate), st[knee].p99_ms,
                st[knee].err_pct);
}

/* The --json document (yangblast-report(5), SWEEPS).  Returns a new
 * reference or NULL on ENOMEM. */
static json_t *sweep_json(const sweep_cfg *c, const char *corpus, const char *target,
                          const step *st, size_t n, long knee)
{
    json_t *steps = json_array(), *slo = json_array();
    if (!steps || !slo) {
        json_decref(steps);
        json_decref(slo);
        return NULL;
    }
    for (size_t i = 0; i < c->slo->n; i++)
        json_array_append_new(slo, json_string(c->slo->t[i].expr));
    for (size_t i = 0; i < n; i++) {
        const step *s = &st[i];
        json_array_append_new(
            steps, json_pack("{s:f, s:b, s:f, s:I, s:I, s:f, s:f, s:f, s:f, s:o, s:b, s:s?}",
                             "level", s->level, "bisection", s->bisect, "achieved_per_s",
                             s->achieved, "ok", (json_int_t)s->ok, "errors",
                             (json_int_t)s->errors, "errors_pct", s->err_pct, "p50_us",
                             s->p50_ms * 1e3, "p99_us", s->p99_ms * 1e3, "p999_us",
                             s->p999_ms * 1e3, "device_cpu_pct",
                             s->device_cpu >= 0 ? json_real(s->device_cpu) : json_null(),
                             "pass", s->pass, "why", s->pass ? NULL : s->why));
    }
    json_t *k = knee < 0 ? json_null()
                         : json_pack("{s:f, s:f, s:f}", "level", st[knee].level,
                                     "achieved_per_s", st[knee].achieved, "p99_us",
                                     st[knee].p99_ms * 1e3);
    json_t *j = json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:f, s:f, s:o, s:o, s:o}}", "schema",
                          "yangblast-sweep/1", "sweep", "corpus", corpus, "target", target,
                          "mode", c->rate ? "rate" : "concurrency", "level_unit",
                          unit_of(c->rate), "step_s", (double)c->step_ns / 1e9, "warmup_s",
                          (double)c->warmup_ns / 1e9, "slo", slo, "steps", steps, "knee", k);
    return j;
}

/* ---- the command ----------------------------------------------------------------- */

int yb_cmd_sweep(int argc, char **argv)
{
    enum { O_RATE = YB_RO_END, O_STEP, O_WARMUP, O_SLO, O_BISECT };
    static const struct option own[] = {
        {"concurrency", required_argument, NULL, 'c'}, {"rate", required_argument, NULL, O_RATE},
        {"step", required_argument, NULL, O_STEP}, {"warmup", required_argument, NULL, O_WARMUP},
        {"slo", required_argument, NULL, O_SLO}, {"bisect", required_argument, NULL, O_BISECT},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    struct option opts[96];
    char shortopts[96];
    if (yb_runopts_getopt(YB_RO_SWEEP, own, "c:h", opts, sizeof opts / sizeof opts[0], shortopts,
                          sizeof shortopts) < 0)
        return YB_EXIT_RUNTIME;
    yb_runopts ro;
    yb_runopts_init(&ro);
    yb_thresholds slo;
    yb_thresholds_init(&slo);
    const char *conc = NULL, *rate = NULL;
    uint64_t bisect = 3;
    sweep_cfg cfg = {&ro, 0, 2000000000ull, 10000000000ull, &slo};
    int c, rc, ret = YB_EXIT_OK;
    char err[600];
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
        switch (c) {
        case 'c': conc = optarg; break;
        case O_RATE: rate = optarg; break;
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
            if (slo.t[slo.n - 1].scope_kind[0]) {
                yb_thresholds_cleanup(&slo);
                return yb_usage_error("experiment sweep", "--slo '%s': a sweep has one target "
                                      "and one workload: no scope", optarg);
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
    yb_tm_target tm_tg;
    yb_tm_cfg tm_cfg;
    step *st = NULL;
    const char *target = ro.target;
    if (optind + 1 != argc)
        FAIL("expected exactly one CORPUS");
    if (!target)
        FAIL("missing --target URL (a sweep has one target)");
    if (ro.n_targets > 1)
        FAIL("one --target: a sweep measures one device");
    if (!conc && !rate)
        FAIL("give the levels: -c LEVELS (closed loop) or --rate LEVELS (open loop)");
    if (conc && rate) {
        /* open loop: -c is the sessions every step has */
        uint64_t v;
        if (yb_parse_u64(conc, 1, 100000, &v) < 0)
            FAIL("-c '%s' with --rate: the sessions of every step, one number (the levels "
                 "are the rates)", conc);
        ro.o.concurrency = (unsigned)v;
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
    ro.o.corpus_path = argv[optind];
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
    if (yb_target_parse_via(target, ro.connect_to, &ro.o.target, err, sizeof err) < 0) {
        yb_errorf("%s", err);
        ret = YB_EXIT_USAGE;
        goto out;
    }
    if (ro.servername)
        snprintf(ro.o.target.servername, sizeof ro.o.target.servername, "%s", ro.servername);
    if (!ro.o.target.tls && (rc = yb_check_tls_applies("experiment sweep", &ro, target))) {
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
    const char *outs[] = {ro.json, ro.html};
    FILE *text;
    if ((rc = yb_check_outputs("experiment sweep", outs, 2, NULL, &text))) {
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
    yb_runopts_bind_headers(&ro, &ro.o);
    ro.o.stop = &stop_flag;
    if (!(st = calloc(MAX_STEPS, sizeof *st))) {
        ret = YB_EXIT_RUNTIME;
        goto out;
    }
    yb_cli_catch_stop(on_signal);

    if (ro.telemetry) {
        char label[80];
        snprintf(label, sizeof label, "%.79s", target);
        if (!(tm = yb_telemetry_for("experiment sweep", ro.tele_interval_ns, ro.tele_baseline_ns,
                                    ro.tele_paths, ro.n_tele_paths, &ro.o,
                                    (const char(*)[80])label, 1, 0, &tm_tg, &tm_cfg))) {
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
    if (tm) {
        const yb_tm_device *d;
        if (yb_telemetry_devices(tm, &d) == 1 && d->supported)
            for (size_t i = 0; i < n; i++)
                st[i].device_cpu = yb_telemetry_load_cpu(d, st[i].from, st[i].to);
    }
    /* the knee: the most throughput among the steps that met every SLO */
    long knee = -1;
    for (size_t i = 0; i < n; i++)
        if (st[i].pass && (knee < 0 || st[i].achieved > st[knee].achieved))
            knee = (long)i;
    /* the table in level order */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && st[j].level < st[j - 1].level; j--) {
            step t = st[j];
            st[j] = st[j - 1];
            st[j - 1] = t;
            knee = knee == (long)j ? (long)j - 1 : knee == (long)j - 1 ? (long)j : knee;
        }
    print_table(text, &cfg, st, n, knee);
    if (tm) {
        const yb_tm_device *d;
        if (yb_telemetry_devices(tm, &d) == 1 && !d->supported)
            fprintf(text, "Device CPU: %s\n", d->note);
    }
    if (stop_flag && ret == YB_EXIT_OK)
        ret = YB_EXIT_INTERRUPTED;
    if (ro.json || ro.html) {
        json_t *j = sweep_json(&cfg, ro.o.corpus_path, target, st, n, knee);
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
    free(st);
    yb_credentials_cleanup(&cred);
    yb_thresholds_cleanup(&slo);
    yb_thresholds_cleanup(&ro.th);
    return ret;
}
