/* The HTML report (see html.h).  Two passes: every input document is
 * checked and indexed into run views (errors name the file and the key),
 * then the page is written from the views: tables, per-second plots, the
 * percentile distributions on HdrHistogram's 1/(1-p) axis with the runs
 * overlaid, the phase breakdown as stacked bars, errors, and the
 * per-target / per-workload / per-operation tables a report carries. */
#include "config.h"
#include "report/html.h"
#include "report/svg.h"
#include "util/json_type.h"
#include "util/outfile.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_RUNS 4096      /* runs in one page */
#define MAX_POINTS 1200    /* per-second points per series; longer runs are bucketed */
#define MAX_OVERLAY 24     /* runs overlaid in one percentile plot */
#define COLLAPSE_ROWS 20   /* longer tables are folded into <details> */
#define MAX_COLUMNS 24     /* columns of a per-target/workload/operation table */
#define MAX_CELL 200       /* bytes of a string shown in a table cell */
#define MAX_FIGURE 1e19    /* above any count or time a report holds (2^63 ~ 9.2e18) */

/* One run, checked: pointers into its JSON (borrowed from the document). */
typedef struct {
    const char *name;   /* the file it came from */
    char where[32];     /* key prefix inside the file ("runs[2]." or "") */
    char label[200];
    json_t *j, *run, *summary, *latency, *intervals, *errors;
    json_t *rate_curve; /* run.target_rate_curve, or NULL */
    json_t *telemetry;  /* telemetry (run --telemetry), or NULL */
    double ok, completed, nerr, duration, rate, mbps, data_bytes, rate_target;
    const char *protocol, *sessions, *load, *unit;
    int resume, interrupted;
} run_view;

typedef struct {
    const char *name, *where;
    char *err;
    size_t errlen;
} vctx;

/* ---- checking ---------------------------------------------------------- */

static int bad(vctx *v, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(vctx *v, const char *key, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(v->err, v->errlen, "%s: %s%s: %s", v->name, v->where, key, what);
    return -1;
}

static void join_key(char *out, size_t len, const char *path, const char *key)
{
    snprintf(out, len, "%s%s%s", path, *path ? "." : "", key);
}

/* A number >= 0 at path.key (0 when absent or null and not required).
 * Returns 0 or -1 with the error in v. */
static int want_num(vctx *v, const json_t *o, const char *path, const char *key, int required,
                    double *out)
{
    json_t *x = json_object_get(o, key);
    char full[200];
    *out = 0;
    join_key(full, sizeof full, path, key);
    if (!x || json_is_null(x))
        return required ? bad(v, full, "missing") : 0;
    if (!json_is_number(x))
        return bad(v, full, "expected a number, got %s", yb_json_type_name(x));
    double d = json_number_value(x);
    if (!isfinite(d) || d < 0 || d > MAX_FIGURE)
        return bad(v, full, "expected a number >= 0 (up to 1e19), got %g", d);
    *out = d;
    return 0;
}

/* Each of the n keys at path is a number as want_num checks it (values not
 * kept).  Returns 0 or -1 with the error in v. */
static int want_nums(vctx *v, const json_t *o, const char *path, const char *const *keys,
                     size_t n, int required)
{
    double d;
    for (size_t i = 0; i < n; i++)
        if (want_num(v, o, path, keys[i], required, &d) < 0)
            return -1;
    return 0;
}

/* A value of JSON type t (JSON_OBJECT, JSON_ARRAY, JSON_STRING) at
 * path.key, or NULL when absent or null and not required. */
static int want(vctx *v, const json_t *o, const char *path, const char *key, json_type t,
                int required, json_t **out)
{
    json_t *x = json_object_get(o, key);
    char full[200];
    static const char *const NAME[] = {[JSON_OBJECT] = "an object", [JSON_ARRAY] = "an array",
                                       [JSON_STRING] = "a string"};
    *out = NULL;
    join_key(full, sizeof full, path, key);
    if (!x || json_is_null(x))
        return required ? bad(v, full, "missing") : 0;
    if (json_typeof(x) != t)
        return bad(v, full, "expected %s, got %s", NAME[t], yb_json_type_name(x));
    *out = x;
    return 0;
}

static int want_str(vctx *v, const json_t *o, const char *path, const char *key, const char **out)
{
    json_t *x;
    *out = NULL;
    if (want(v, o, path, key, JSON_STRING, 0, &x) < 0)
        return -1;
    *out = x ? json_string_value(x) : NULL;
    return 0;
}

static int want_bool(vctx *v, const json_t *o, const char *path, const char *key, int *out)
{
    json_t *x = json_object_get(o, key);
    char full[200];
    *out = 0;
    if (!x || json_is_null(x))
        return 0;
    join_key(full, sizeof full, path, key);
    if (!json_is_boolean(x))
        return bad(v, full, "expected a boolean, got %s", yb_json_type_name(x));
    *out = json_is_true(x);
    return 0;
}

/* Every member of o (path) is a number >= 0, but `except`. */
static int all_numbers(vctx *v, const json_t *o, const char *path, const char *except)
{
    const char *k;
    json_t *x;
    double d;
    json_object_foreach((json_t *)o, k, x)
        if ((!except || strcmp(k, except)) && want_num(v, o, path, k, 0, &d) < 0)
            return -1;
    return 0;
}

static int check_phase(vctx *v, const json_t *h, const char *key)
{
    char path[200];
    static const char *const NUMS[] = {"count", "min", "p50", "p90", "p99", "p99_9", "max", "mean",
                                       "stddev"};
    json_t *curve;
    snprintf(path, sizeof path, "latency_us.%s", key);
    if (!json_is_object(h))
        return bad(v, path, "expected an object, got %s", yb_json_type_name(h));
    if (want_nums(v, h, path, NUMS, sizeof NUMS / sizeof NUMS[0], 0) < 0)
        return -1;
    if (want(v, h, path, "percentile_curve", JSON_ARRAY, 0, &curve) < 0)
        return -1;
    if (!curve)
        return 0;
    size_t i;
    json_t *pt;
    json_array_foreach(curve, i, pt) {
        char pp[240];
        snprintf(pp, sizeof pp, "%s.percentile_curve[%zu]", path, i);
        if (!json_is_array(pt) || json_array_size(pt) != 2 || !json_is_number(json_array_get(pt, 0)) ||
            !json_is_number(json_array_get(pt, 1)))
            return bad(v, pp, "expected [percentile, value]");
        double p = json_number_value(json_array_get(pt, 0)), val = json_number_value(json_array_get(pt, 1));
        if (!(p >= 0 && p <= 100) || !(val >= 0 && val <= MAX_FIGURE))
            return bad(v, pp, "expected a percentile in 0..100 and a value >= 0");
    }
    return 0;
}

static int check_intervals(vctx *v, const json_t *a)
{
    static const char *const NUMS[] = {"requests", "errors", "p50_us", "p99_us", "max_us"};
    size_t i;
    json_t *e;
    double d;
    json_array_foreach((json_t *)a, i, e) {
        char path[64];
        snprintf(path, sizeof path, "intervals[%zu]", i);
        if (!json_is_object(e))
            return bad(v, path, "expected an object, got %s", yb_json_type_name(e));
        if (want_num(v, e, path, "t_s", 1, &d) < 0)
            return -1;
        if (want_nums(v, e, path, NUMS, sizeof NUMS / sizeof NUMS[0], 0) < 0)
            return -1;
    }
    return 0;
}

static int check_errors(vctx *v, const json_t *o)
{
    json_t *reasons, *e;
    size_t i;
    double d;
    const char *s;
    if (all_numbers(v, o, "errors", "reasons") < 0 ||
        want(v, o, "errors", "reasons", JSON_ARRAY, 0, &reasons) < 0)
        return -1;
    json_array_foreach(reasons, i, e) {
        char path[64];
        snprintf(path, sizeof path, "errors.reasons[%zu]", i);
        if (!json_is_object(e))
            return bad(v, path, "expected an object, got %s", yb_json_type_name(e));
        if (want_str(v, e, path, "class", &s) < 0 || want_str(v, e, path, "reason", &s) < 0 ||
            want_num(v, e, path, "count", 0, &d) < 0 || want_num(v, e, path, "first_s", 0, &d) < 0)
            return -1;
    }
    return 0;
}

/* thresholds (run --threshold): [{expr, metric, op, limit, measured,
 * unit, pass, note, scope}]. */
static int check_thresholds(vctx *v, const json_t *a)
{
    size_t i;
    json_t *e, *x;
    double d;
    const char *str;
    int b;
    json_array_foreach((json_t *)a, i, e) {
        char path[64];
        snprintf(path, sizeof path, "thresholds[%zu]", i);
        if (!json_is_object(e))
            return bad(v, path, "expected an object, got %s", yb_json_type_name(e));
        if (want_str(v, e, path, "expr", &str) < 0 || want_str(v, e, path, "metric", &str) < 0 ||
            want_str(v, e, path, "op", &str) < 0 || want_str(v, e, path, "unit", &str) < 0 ||
            want_str(v, e, path, "note", &str) < 0 || want_bool(v, e, path, "pass", &b) < 0 ||
            want_num(v, e, path, "limit", 0, &d) < 0 || want_num(v, e, path, "measured", 0, &d) < 0 ||
            want(v, e, path, "scope", JSON_OBJECT, 0, &x) < 0 ||
            (x && (want_str(v, x, path, "kind", &str) < 0 || want_str(v, x, path, "name", &str) < 0)))
            return -1;
    }
    return 0;
}

/* targets / workloads / operations: an array of objects, or an object of
 * objects (keyed by name). */
static int check_breakdown(vctx *v, const json_t *j, const char *key)
{
    json_t *x = json_object_get(j, key), *e;
    if (!x || json_is_null(x))
        return 0;
    if (json_is_array(x)) {
        size_t i;
        json_array_foreach(x, i, e) {
            char path[64];
            snprintf(path, sizeof path, "%s[%zu]", key, i);
            if (!json_is_object(e))
                return bad(v, path, "expected an object, got %s", yb_json_type_name(e));
        }
        return 0;
    }
    if (!json_is_object(x))
        return bad(v, key, "expected an array or an object, got %s", yb_json_type_name(x));
    const char *k;
    json_object_foreach(x, k, e)
        if (!json_is_object(e)) {
            char path[200];
            snprintf(path, sizeof path, "%s.%s", key, k);
            return bad(v, path, "expected an object, got %s", yb_json_type_name(e));
        }
    return 0;
}

static const char *const BREAKDOWNS[][2] = {
    {"targets", "Per target"}, {"workloads", "Per workload"}, {"operations", "Per operation"}};

/* Checks report j (from name, keys prefixed with where) into r. */
/* ---- device telemetry and sweeps: checking ------------------------------- */

#define MAX_SWEEP_STEPS 256
#define MAX_SWEEP_PARTS 4096 /* rows under a step (targets, workloads); devices with a knee */
#define MAX_TM_DEVICES 4096
#define MAX_TM_SECONDS 100000

/* A finite number within +-1e9 at path.key (a second, which may be
 * negative: the baseline before the load). */
static int want_second(vctx *v, const json_t *o, const char *path, const char *key, double *out)
{
    json_t *x = json_object_get(o, key);
    char full[200];
    join_key(full, sizeof full, path, key);
    if (!json_is_number(x) || !isfinite(json_number_value(x)) ||
        fabs(json_number_value(x)) > 1e9)
        return bad(v, full, "expected a number of seconds (-1e9..1e9), got %s",
                   x ? yb_json_type_name(x) : "nothing");
    *out = json_number_value(x);
    return 0;
}

static int check_telemetry(vctx *v, const json_t *t)
{
    json_t *devs, *d;
    size_t i;
    double x;
    if (want(v, t, "telemetry", "devices", JSON_ARRAY, 1, &devs) < 0)
        return -1;
    if (json_array_size(devs) > MAX_TM_DEVICES)
        return bad(v, "telemetry.devices", "more than %d devices", MAX_TM_DEVICES);
    json_array_foreach(devs, i, d) {
        char path[64], sub[128];
        const char *str;
        int b;
        json_t *arr, *e, *o;
        size_t k;
        snprintf(path, sizeof path, "telemetry.devices[%zu]", i);
        if (!json_is_object(d))
            return bad(v, path, "expected an object, got %s", yb_json_type_name(d));
        if (want_str(v, d, path, "target", &str) < 0 || want_str(v, d, path, "note", &str) < 0 ||
            want_str(v, d, path, "saturation", &str) < 0 ||
            want_bool(v, d, path, "supported", &b) < 0 ||
            want(v, d, path, "series", JSON_ARRAY, 0, &arr) < 0)
            return -1;
        if (!json_string_value(json_object_get(d, "target")))
            return bad(v, path, "target: missing");
        if (arr && json_array_size(arr) > MAX_TM_SECONDS)
            return bad(v, path, "series: more than %d seconds", MAX_TM_SECONDS);
        json_array_foreach(arr, k, e) {
            snprintf(sub, sizeof sub, "%s.series[%zu]", path, k);
            if (!json_is_object(e))
                return bad(v, sub, "expected an object, got %s", yb_json_type_name(e));
            if (want_second(v, e, sub, "t_s", &x) < 0 ||
                want_num(v, e, sub, "cpu_pct", 0, &x) < 0 ||
                want_num(v, e, sub, "mem_used_bytes", 0, &x) < 0 ||
                want_num(v, e, sub, "requests", 0, &x) < 0 ||
                want_num(v, e, sub, "p99_us", 0, &x) < 0 ||
                want(v, e, sub, "top_process", JSON_OBJECT, 0, &o) < 0)
                return -1;
            char tp[160];
            snprintf(tp, sizeof tp, "%s.top_process", sub);
            if (o && (want_num(v, o, tp, "cpu_pct", 1, &x) < 0 ||
                      want_str(v, o, tp, "name", &str) < 0))
                return -1;
        }
        if (want(v, d, path, "top_processes", JSON_ARRAY, 0, &arr) < 0)
            return -1;
        json_array_foreach(arr, k, e) {
            snprintf(sub, sizeof sub, "%s.top_processes[%zu]", path, k);
            if (!json_is_object(e))
                return bad(v, sub, "expected an object, got %s", yb_json_type_name(e));
            if (want_str(v, e, sub, "name", &str) < 0 || want_num(v, e, sub, "pid", 1, &x) < 0 ||
                want_num(v, e, sub, "cpu_pct_mean", 1, &x) < 0 ||
                want_num(v, e, sub, "cpu_pct_max", 1, &x) < 0 ||
                want_num(v, e, sub, "memory_bytes", 0, &x) < 0)
                return -1;
        }
        static const char *const PARTS[] = {"baseline", "load"};
        for (size_t p = 0; p < 2; p++) {
            if (want(v, d, path, PARTS[p], JSON_OBJECT, 0, &o) < 0)
                return -1;
            snprintf(sub, sizeof sub, "%s.%s", path, PARTS[p]);
            if (o && (want_num(v, o, sub, "cpu_pct_mean", 0, &x) < 0 ||
                      want_num(v, o, sub, "cpu_pct_max", 0, &x) < 0 ||
                      want_num(v, o, sub, "mem_used_bytes", 0, &x) < 0))
                return -1;
        }
    }
    return 0;
}

/* One experiment sweep (yangblast-sweep/1), checked. */
typedef struct {
    const char *name;
    const char *mode, *unit, *target;
    json_t *steps, *knee;
    json_t *devices;        /* each target's knee (a fleet's or a plan's), or NULL */
} sweep_view;

/* A step's row (the step itself, or one of its parts), checked. */
static int check_sweep_row(vctx *v, const json_t *e, const char *path, int part)
{
    static const char *const NUMS[] = {"achieved_per_s", "p50_us", "p99_us", "p999_us",
                                       "errors_pct"};
    const char *why, *kind;
    json_t *name;
    int b;
    double x;
    if (!json_is_object(e))
        return bad(v, path, "expected an object, got %s", yb_json_type_name(e));
    if (want_nums(v, e, path, NUMS, sizeof NUMS / sizeof NUMS[0], 1) < 0 ||
        want_num(v, e, path, "device_cpu_pct", 0, &x) < 0 ||
        want_bool(v, e, path, "pass", &b) < 0 || want_str(v, e, path, "why", &why) < 0)
        return -1;
    if (part)
        return want(v, e, path, "name", JSON_STRING, 1, &name) < 0 ||
                       want_str(v, e, path, "kind", &kind) < 0
                   ? -1
                   : 0;
    return want_num(v, e, path, "level", 1, &x) < 0 || want_bool(v, e, path, "bisection", &b) < 0
               ? -1
               : 0;
}

static int check_sweep(vctx *v, const json_t *doc, sweep_view *sv)
{
    json_t *sw, *e;
    size_t i;
    double x;
    memset(sv, 0, sizeof *sv);
    sv->name = v->name;
    if (want(v, doc, "", "sweep", JSON_OBJECT, 1, &sw) < 0 ||
        want_str(v, sw, "sweep", "mode", &sv->mode) < 0 ||
        want_str(v, sw, "sweep", "level_unit", &sv->unit) < 0 ||
        want_str(v, sw, "sweep", "target", &sv->target) < 0 ||
        want(v, sw, "sweep", "steps", JSON_ARRAY, 1, &sv->steps) < 0 ||
        want(v, sw, "sweep", "knee", JSON_OBJECT, 0, &sv->knee) < 0)
        return -1;
    if (json_array_size(sv->steps) > MAX_SWEEP_STEPS)
        return bad(v, "sweep.steps", "more than %d steps", MAX_SWEEP_STEPS);
    json_array_foreach(sv->steps, i, e) {
        char path[80];
        json_t *parts, *p;
        size_t k;
        snprintf(path, sizeof path, "sweep.steps[%zu]", i);
        if (check_sweep_row(v, e, path, 0) < 0 ||
            want(v, e, path, "parts", JSON_ARRAY, 0, &parts) < 0)
            return -1;
        if (json_array_size(parts) > MAX_SWEEP_PARTS)
            return bad(v, path, "more than %d parts", MAX_SWEEP_PARTS);
        json_array_foreach(parts, k, p) {
            snprintf(path, sizeof path, "sweep.steps[%zu].parts[%zu]", i, k);
            if (check_sweep_row(v, p, path, 1) < 0)
                return -1;
        }
    }
    if (want(v, sw, "sweep", "devices", JSON_ARRAY, 0, &sv->devices) < 0)
        return -1;
    if (json_array_size(sv->devices) > MAX_SWEEP_PARTS)
        return bad(v, "sweep.devices", "more than %d devices", MAX_SWEEP_PARTS);
    json_array_foreach(sv->devices, i, e) {
        char path[48];
        json_t *name, *k;
        int b;
        snprintf(path, sizeof path, "sweep.devices[%zu]", i);
        if (!json_is_object(e))
            return bad(v, path, "expected an object, got %s", yb_json_type_name(e));
        if (want(v, e, path, "name", JSON_STRING, 1, &name) < 0 ||
            want(v, e, path, "knee", JSON_OBJECT, 0, &k) < 0)
            return -1;
        if (k && (want_num(v, k, path, "level", 1, &x) < 0 ||
                  want_num(v, k, path, "achieved_per_s", 1, &x) < 0 ||
                  want_num(v, k, path, "p99_us", 1, &x) < 0 ||
                  want_bool(v, k, path, "lower_bound", &b) < 0))
            return -1;
    }
    if (sv->knee && (want_num(v, sv->knee, "sweep.knee", "level", 1, &x) < 0 ||
                     want_num(v, sv->knee, "sweep.knee", "achieved_per_s", 1, &x) < 0 ||
                     want_num(v, sv->knee, "sweep.knee", "p99_us", 1, &x) < 0))
        return -1;
    return 0;
}

static int check_run(vctx *v, json_t *j, run_view *r)
{
    json_t *x, *h;
    const char *s, *k;
    double d;
    memset(r, 0, sizeof *r);
    r->name = v->name;
    snprintf(r->where, sizeof r->where, "%s", v->where);
    r->j = j;
    if (!json_is_object(j))
        return bad(v, "(report)", "expected an object, got %s", yb_json_type_name(j));
    if (want_str(v, j, "", "schema", &s) < 0)
        return -1;
    if (!s || strcmp(s, "yangblast-report/1"))
        return bad(v, "schema", "expected \"yangblast-report/1\"");
    if (want(v, j, "", "run", JSON_OBJECT, 1, &r->run) < 0 ||
        want_str(v, r->run, "run", "protocol", &r->protocol) < 0 ||
        want_str(v, r->run, "run", "sessions", &r->sessions) < 0 ||
        want_str(v, r->run, "run", "load", &r->load) < 0 ||
        want_str(v, r->run, "run", "unit", &r->unit) < 0 ||
        want_bool(v, r->run, "run", "tls_resume", &r->resume) < 0 ||
        want_num(v, r->run, "run", "rate_target_per_s", 0, &r->rate_target) < 0 ||
        want(v, r->run, "run", "target_rate_curve", JSON_ARRAY, 0, &r->rate_curve) < 0)
        return -1;
    for (size_t i = 0; r->rate_curve && i < json_array_size(r->rate_curve); i++) {
        const json_t *pt = json_array_get(r->rate_curve, i);
        char key[64];
        snprintf(key, sizeof key, "target_rate_curve[%zu]", i);
        if (!json_is_array(pt) || json_array_size(pt) != 2 ||
            !json_is_number(json_array_get(pt, 0)) || !json_is_number(json_array_get(pt, 1)))
            return bad(v, key, "expected [seconds, requests/s]");
        double t = json_number_value(json_array_get(pt, 0));
        double q = json_number_value(json_array_get(pt, 1));
        if (!(t >= 0 && t <= MAX_FIGURE && q >= 0 && q <= MAX_FIGURE))
            return bad(v, key, "expected [seconds, requests/s] within 0..%g", MAX_FIGURE);
    }
    if (want(v, j, "", "summary", JSON_OBJECT, 1, &r->summary) < 0 ||
        want_num(v, r->summary, "summary", "requests_ok", 1, &r->ok) < 0 ||
        want_num(v, r->summary, "summary", "requests_completed", 1, &r->completed) < 0 ||
        want_num(v, r->summary, "summary", "duration_s", 1, &r->duration) < 0 ||
        want_num(v, r->summary, "summary", "requests_error", 0, &r->nerr) < 0 ||
        want_num(v, r->summary, "summary", "rate_per_s", 0, &r->rate) < 0 ||
        want_num(v, r->summary, "summary", "avg_speed_mbps", 0, &r->mbps) < 0 ||
        want_num(v, r->summary, "summary", "data_bytes", 0, &r->data_bytes) < 0)
        return -1;
    if (want(v, j, "", "latency_us", JSON_OBJECT, 1, &r->latency) < 0)
        return -1;
    json_object_foreach(r->latency, k, h)
        if (check_phase(v, h, k) < 0)
            return -1;
    if (want(v, j, "", "intervals", JSON_ARRAY, 0, &r->intervals) < 0 ||
        (r->intervals && check_intervals(v, r->intervals) < 0))
        return -1;
    if (want(v, j, "", "errors", JSON_OBJECT, 0, &r->errors) < 0 ||
        (r->errors && check_errors(v, r->errors) < 0))
        return -1;
    static const char *const COUNTS[] = {"status", "grpc_status", "sessions", "cpu", "subscribe"};
    for (size_t i = 0; i < sizeof COUNTS / sizeof COUNTS[0]; i++) {
        /* (cpu.io: the I/O path's name, a string) */
        int cpu = !strcmp(COUNTS[i], "cpu");
        json_t *io;
        if (want(v, j, "", COUNTS[i], JSON_OBJECT, 0, &x) < 0 ||
            (x && all_numbers(v, x, COUNTS[i], cpu ? "io" : NULL) < 0) ||
            (x && cpu && want(v, x, "cpu", "io", JSON_STRING, 0, &io) < 0))
            return -1;
    }
    int b;
    if (want_bool(v, j, "", "interrupted", &r->interrupted) < 0 ||
        want(v, j, "", "self_check", JSON_OBJECT, 0, &x) < 0 ||
        (x && (want_bool(v, x, "self_check", "behind_schedule", &b) < 0 ||
               want_bool(v, x, "self_check", "cpu_saturated", &b) < 0 ||
               want_num(v, x, "self_check", "lateness_p99_ms", 0, &d) < 0 ||
               want_num(v, x, "self_check", "cpu_utilization", 0, &d) < 0)))
        return -1;
    for (size_t i = 0; i < sizeof BREAKDOWNS / sizeof BREAKDOWNS[0]; i++)
        if (check_breakdown(v, j, BREAKDOWNS[i][0]) < 0)
            return -1;
    if (want(v, j, "", "thresholds", JSON_ARRAY, 0, &x) < 0 || (x && check_thresholds(v, x) < 0))
        return -1;
    if (want(v, j, "", "telemetry", JSON_OBJECT, 0, &r->telemetry) < 0 ||
        (r->telemetry && check_telemetry(v, r->telemetry) < 0))
        return -1;
    return 0;
}

/* A short name for run r: what varies between the runs of a study. */
static void make_label(run_view *r)
{
    char what[64] = "";
    double n = 0, dur = 0;
    json_t *x;
    if ((x = json_object_get(r->run, "planned_requests")) && json_is_number(x))
        n = json_number_value(x);
    if ((x = json_object_get(r->run, "planned_duration_s")) && json_is_number(x))
        dur = json_number_value(x);
    if (r->rate_target > 0)
        snprintf(what, sizeof what, " %g/s", r->rate_target);
    else if (r->load)
        snprintf(what, sizeof what, " %.40s", r->load);
    size_t len = strlen(what);
    if (n > 0)
        snprintf(what + len, sizeof what - len, " n=%.0f", n);
    else if (dur > 0)
        snprintf(what + len, sizeof what - len, " %gs", dur);
    snprintf(r->label, sizeof r->label, "%.40s %.40s%s%s", r->protocol ? r->protocol : "?",
             r->sessions ? r->sessions : "?", r->resume ? " +resume" : "", what);
}

/* Labels that would be the same get the file's name, then a number. */
static void unique_labels(run_view *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        make_label(&r[i]);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            int dup = 0;
            for (size_t k = 0; k < n && !dup; k++)
                dup = k != i && !strcmp(r[k].label, r[i].label);
            if (!dup)
                continue;
            size_t len = strlen(r[i].label);
            if (pass == 0) {
                const char *base = strrchr(r[i].name, '/');
                snprintf(r[i].label + len, sizeof r[i].label - len, " (%.60s%s%.20s)",
                         base ? base + 1 : r[i].name, *r[i].where ? " " : "", r[i].where);
                if (*r[i].where && r[i].label[strlen(r[i].label) - 2] == '.')
                    r[i].label[strlen(r[i].label) - 2] = 0, strcat(r[i].label, ")");
            } else {
                snprintf(r[i].label + len, sizeof r[i].label - len, " #%zu", i + 1);
            }
        }
}

/* Checks docs into views (*out, *n_out; caller frees *out). */
static int index_docs(json_t *const *docs, const char *const *names, size_t n, run_view **out,
                      size_t *n_out, sweep_view **sw_out, size_t *nsw_out, char *err,
                      size_t errlen)
{
    run_view *r = calloc(MAX_RUNS, sizeof *r);
    sweep_view *sw = calloc(n ? n : 1, sizeof *sw);
    size_t nr = 0, nsw = 0;
    if (!r || !sw) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (size_t d = 0; d < n; d++) {
        vctx v = {names[d], "", err, errlen};
        json_t *schema = json_object_get(docs[d], "schema");
        const char *s = json_string_value(schema);
        if (!json_is_object(docs[d])) {
            bad(&v, "(document)", "expected a JSON object, got %s", yb_json_type_name(docs[d]));
            goto fail;
        }
        if (s && !strcmp(s, "yangblast-experiment/1")) {
            json_t *runs, *e;
            size_t i;
            if (want(&v, docs[d], "", "runs", JSON_ARRAY, 1, &runs) < 0)
                goto fail;
            json_array_foreach(runs, i, e) {
                char where[32];
                snprintf(where, sizeof where, "runs[%zu].", i);
                v.where = where;
                if (nr == MAX_RUNS) {
                    snprintf(err, errlen, "%s: more than %d runs in one report", names[d], MAX_RUNS);
                    goto fail;
                }
                if (check_run(&v, e, &r[nr]) < 0)
                    goto fail;
                nr++;
            }
            continue;
        }
        if (!s) {
            bad(&v, "schema", "missing: not a yangblast report");
            goto fail;
        }
        if (!strcmp(s, "yangblast-sweep/1")) {
            if (check_sweep(&v, docs[d], &sw[nsw]) < 0)
                goto fail;
            nsw++;
            continue;
        }
        if (nr == MAX_RUNS) {
            snprintf(err, errlen, "%s: more than %d runs in one report", names[d], MAX_RUNS);
            goto fail;
        }
        if (strcmp(s, "yangblast-report/1")) {
            bad(&v, "schema", "expected \"yangblast-report/1\", \"yangblast-experiment/1\" or "
                              "\"yangblast-sweep/1\"");
            goto fail;
        }
        if (check_run(&v, docs[d], &r[nr]) < 0)
            goto fail;
        nr++;
    }
    if (nr == 0 && nsw == 0) {
        snprintf(err, errlen, "no runs to report");
        goto fail;
    }
    unique_labels(r, nr);
    *out = r;
    *n_out = nr;
    *sw_out = sw;
    *nsw_out = nsw;
    return 0;
fail:
    free(r);
    free(sw);
    return -1;
}

/* ---- reading the checked views ----------------------------------------- */

/* A checked number (0 when absent). */
static double num(const json_t *o, const char *key)
{
    json_t *x = json_object_get(o, key);
    return json_is_number(x) ? json_number_value(x) : 0;
}

static double phase_num(const run_view *r, const char *phase, const char *key)
{
    return num(json_object_get(r->latency, phase), key);
}

/* Mean time per successful request spent in phase, ms: the phase's total
 * (mean x count) spread over every successful request, as the text
 * report's phase breakdown computes it. */
static double per_request_ms(const run_view *r, const char *phase)
{
    if (r->ok <= 0)
        return 0;
    return phase_num(r, phase, "mean") * phase_num(r, phase, "count") / r->ok / 1000.0;
}

/* ---- HTML pieces -------------------------------------------------------- */

static const char CSS[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
    "color:#222;margin:24px auto;max-width:1000px;padding:0 16px;line-height:1.4}"
    "h1{font-size:1.6em;margin-bottom:0}h2{font-size:1.25em;margin-top:2em;"
    "border-bottom:1px solid #ccc}h3{font-size:1.05em}"
    ".sub{color:#555;margin-top:4px}"
    ".scroll{overflow-x:auto}"
    "table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}"
    "th,td{border:1px solid #ccc;padding:3px 8px;vertical-align:top}"
    "th{background:#f2f2f2;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums;"
    "white-space:nowrap}"
    "td.s{max-width:420px;overflow-wrap:break-word}td.l{white-space:nowrap}"
    "caption{text-align:left;font-weight:bold;padding:4px 0}"
    "details{margin:8px 0}summary{cursor:pointer;color:#0072B2}"
    ".warn{border-left:4px solid #D55E00;background:#fff4ec;padding:6px 10px;margin:8px 0}"
    "tr.fail td{background:#fff4ec}"
    "svg.plot{display:block;max-width:100%;height:auto;margin:12px 0 20px}"
    "svg.plot text{font-size:12px;fill:#222}"
    "svg.plot .title{font-size:14px;font-weight:bold}"
    "svg.plot .xtick,svg.plot .xlabel{text-anchor:middle}"
    "svg.plot .ytick,svg.plot .barlabel{text-anchor:end}"
    "svg.plot .ylabel{text-anchor:middle}"
    "svg.plot .grid line{stroke:#e2e2e2;stroke-width:1}"
    "svg.plot .grid line.minor{stroke-dasharray:2 3}"
    "svg.plot .area{fill:none;stroke:#888}"
    "@media print{details>*{display:block}body{max-width:none}}";

#define E(s) yb_svg_escape(f, (s))

/* Opens a table (folded into <details> when it has more than
 * COLLAPSE_ROWS rows); close it with table_end(f, rows). */
static void table_begin(FILE *f, const char *caption, size_t rows)
{
    if (rows > COLLAPSE_ROWS) {
        fprintf(f, "<details class=\"table\"><summary>");
        E(caption);
        fprintf(f, " (%zu rows)</summary>\n", rows);
    }
    fprintf(f, "<div class=\"scroll\"><table><caption>");
    E(caption);
    fprintf(f, "</caption>\n");
}

static void table_end(FILE *f, size_t rows)
{
    fprintf(f, "</table></div>\n%s", rows > COLLAPSE_ROWS ? "</details>\n" : "");
}

static void th(FILE *f, const char *s)
{
    fprintf(f, "<th>");
    E(s);
    fprintf(f, "</th>");
}

/* A number with dec decimals, right-aligned. */
static void td_num(FILE *f, int dec, double v)
{
    fprintf(f, "<td class=\"n\">%.*f</td>", dec, v);
}

static void td_str(FILE *f, const char *s)
{
    fprintf(f, "<td class=\"s\">");
    if (s && strlen(s) > MAX_CELL) {
        char buf[MAX_CELL + 4];
        size_t m = MAX_CELL;
        while (m > 0 && ((unsigned char)s[m] & 0xc0) == 0x80)
            m--;
        memcpy(buf, s, m);
        memcpy(buf + m, "\xe2\x80\xa6", 4);
        E(buf);
    } else {
        E(s);
    }
    fprintf(f, "</td>");
}

/* A sweep row's last cells: the device CPU (cpu: a number, else "-") and
 * the verdict of row e ("ok", or its "why"); ends the row. */
static void td_cpu_verdict(FILE *f, const json_t *cpu, const json_t *e)
{
    if (json_is_number(cpu))
        td_num(f, 1, json_number_value(cpu));
    else
        td_str(f, "-");
    td_str(f, json_is_true(json_object_get(e, "pass")) ? "ok"
                                                      : json_string_value(json_object_get(e, "why")));
    fprintf(f, "</tr>\n");
}

/* A run's label: never wrapped, so rows stay one line high. */
static void td_label(FILE *f, const run_view *r)
{
    fprintf(f, "<td class=\"l\">");
    E(r->label);
    fprintf(f, "</td>");
}

/* A JSON scalar in a cell. */
static void td_json(FILE *f, const json_t *x)
{
    char b[64];
    if (json_is_integer(x))
        snprintf(b, sizeof b, "%lld", (long long)json_integer_value(x));
    else if (json_is_real(x))
        snprintf(b, sizeof b, "%.6g", json_real_value(x));
    else if (json_is_boolean(x))
        snprintf(b, sizeof b, "%s", json_is_true(x) ? "yes" : "no");
    else if (json_is_string(x)) {
        td_str(f, json_string_value(x));
        return;
    } else if (json_is_array(x) || json_is_object(x)) { /* a structured setting, as JSON */
        char *txt = json_dumps(x, JSON_COMPACT | JSON_PRESERVE_ORDER);
        td_str(f, txt ? txt : "");
        free(txt);
        return;
    } else
        snprintf(b, sizeof b, "%s", "");
    fprintf(f, "<td class=\"n\">%s</td>", b);
}

/* ---- sections ------------------------------------------------------------ */

static const char *rate_unit(const run_view *r)
{
    return r->unit ? r->unit : "Requests";
}

static int streq0(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

/* Runs of the same configuration share a study table. */
static int same_config(const run_view *a, const run_view *b)
{
    return streq0(a->protocol, b->protocol) && streq0(a->sessions, b->sessions) &&
           a->resume == b->resume && streq0(a->unit, b->unit);
}

/* The study's tables: one per configuration (protocol, sessions, TLS
 * resumption), a row per run, the text report's columns.  Returns 0 or
 * -1 (ENOMEM). */
static int study_tables(FILE *f, const run_view *r, size_t n)
{
    char *done = calloc(n, 1);
    if (!done)
        return -1;
    fprintf(f, "<h2 id=\"study\">Study</h2>\n");
    for (size_t i = 0; i < n; i++) {
        if (done[i])
            continue;
        size_t rows = 0;
        for (size_t k = i; k < n; k++)
            rows += !done[k] && same_config(&r[k], &r[i]);
        char cap[160], col[80];
        snprintf(cap, sizeof cap, "%.60s, %.60s%s", r[i].protocol ? r[i].protocol : "?",
                 r[i].sessions ? r[i].sessions : "?", r[i].resume ? ", TLS resumed" : "");
        snprintf(col, sizeof col, "%.60s/s", rate_unit(&r[i]));
        table_begin(f, cap, rows);
        fprintf(f, "<tr>");
        static const char *const H[] = {"Run", "# Requests", "Avg Speed (MB/s)", "Data (MB)",
                                        "Duration (s)"};
        for (size_t c = 0; c < sizeof H / sizeof H[0]; c++)
            th(f, H[c]);
        th(f, col);
        th(f, "Errors");
        fprintf(f, "</tr>\n");
        for (size_t k = i; k < n; k++) {
            if (done[k] || !same_config(&r[k], &r[i]))
                continue;
            done[k] = 1;
            fprintf(f, "<tr>");
            td_label(f, &r[k]);
            td_num(f, 0, r[k].ok);
            td_num(f, 2, r[k].mbps);
            td_num(f, 2, r[k].data_bytes / 1e6);
            td_num(f, 3, r[k].duration);
            td_num(f, 1, r[k].rate);
            td_num(f, 0, r[k].nerr);
            fprintf(f, "</tr>\n");
        }
        table_end(f, rows);
    }
    free(done);
    return 0;
}

/* Appends s to list (*n of cap) unless it is there already. */
static void add_unique(const char **list, size_t *n, size_t cap, const char *s)
{
    size_t c = 0;
    while (c < *n && strcmp(list[c], s))
        c++;
    if (c == *n && *n < cap)
        list[(*n)++] = s;
}

/* The runs' settings: the scalar keys of each run object. */
static void settings_table(FILE *f, const run_view *r, size_t n)
{
    const char *cols[64];
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) {
        const char *k;
        json_t *x;
        json_object_foreach(r[i].run, k, x)
            add_unique(cols, &nc, sizeof cols / sizeof cols[0], k);
    }
    fprintf(f, "<h2 id=\"settings\">Settings</h2>\n");
    if (n <= 8) { /* a column per run: long values get room to wrap */
        table_begin(f, "What was run", nc);
        fprintf(f, "<tr><th></th>");
        for (size_t i = 0; i < n; i++)
            th(f, r[i].label);
        fprintf(f, "</tr>\n");
        for (size_t c = 0; c < nc; c++) {
            fprintf(f, "<tr>");
            th(f, cols[c]);
            for (size_t i = 0; i < n; i++)
                td_json(f, json_object_get(r[i].run, cols[c]));
            fprintf(f, "</tr>\n");
        }
        table_end(f, nc);
    } else { /* a row per run */
        table_begin(f, "What was run", n);
        fprintf(f, "<tr>");
        th(f, "Run");
        for (size_t c = 0; c < nc; c++)
            th(f, cols[c]);
        fprintf(f, "</tr>\n");
        for (size_t i = 0; i < n; i++) {
            fprintf(f, "<tr>");
            td_label(f, &r[i]);
            for (size_t c = 0; c < nc; c++)
                td_json(f, json_object_get(r[i].run, cols[c]));
            fprintf(f, "</tr>\n");
        }
        table_end(f, n);
    }
    for (size_t i = 0; i < n; i++) {
        json_t *sc = json_object_get(r[i].j, "self_check");
        if (r[i].interrupted) {
            fprintf(f, "<p class=\"warn\">");
            E(r[i].label);
            fprintf(f, ": INTERRUPTED; the figures cover the part that ran.</p>\n");
        }
        if (json_is_true(json_object_get(sc, "behind_schedule")) ||
            json_is_true(json_object_get(sc, "cpu_saturated"))) {
            fprintf(f, "<p class=\"warn\">");
            E(r[i].label);
            fprintf(f, ": the generator %s (lateness p99 %.3f ms, CPU %.0f %%): the figures may "
                       "show the client's limit, not the target's.</p>\n",
                    json_is_true(json_object_get(sc, "behind_schedule")) ? "fell behind its schedule"
                                                                        : "saturated its CPU",
                    num(sc, "lateness_p99_ms"), 100 * num(sc, "cpu_utilization"));
        }
    }
}

/* Each run's thresholds (--threshold) with the measured figure and the
 * verdict, in words (not by colour alone). */
static void thresholds_section(FILE *f, const run_view *r, size_t n)
{
    int heading = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *a = json_object_get(r[i].j, "thresholds"), *e;
        size_t rows = json_array_size(a), k;
        if (!rows)
            continue;
        if (!heading++)
            fprintf(f, "<h2 id=\"thresholds\">Thresholds</h2>\n");
        char cap[300];
        snprintf(cap, sizeof cap, "%s: thresholds", r[i].label);
        table_begin(f, cap, rows);
        fprintf(f, "<tr>");
        static const char *const H[] = {"Threshold", "Scope", "Measured", "Limit", "Unit", "Verdict"};
        for (size_t c = 0; c < sizeof H / sizeof H[0]; c++)
            th(f, H[c]);
        fprintf(f, "</tr>\n");
        json_array_foreach(a, k, e) {
            json_t *scope = json_object_get(e, "scope"), *m = json_object_get(e, "measured");
            int pass = json_is_true(json_object_get(e, "pass"));
            char sc[200] = "run";
            if (json_is_object(scope))
                snprintf(sc, sizeof sc, "%.40s %.150s",
                         json_string_value(json_object_get(scope, "kind")) ?: "?",
                         json_string_value(json_object_get(scope, "name")) ?: "?");
            fprintf(f, "<tr class=\"%s\">", pass ? "pass" : "fail");
            td_str(f, json_string_value(json_object_get(e, "expr")));
            td_str(f, sc);
            if (json_is_number(m))
                fprintf(f, "<td class=\"n\">%.6g</td>", json_number_value(m));
            else
                td_str(f, json_string_value(json_object_get(e, "note")));
            fprintf(f, "<td class=\"n\">");
            E(json_string_value(json_object_get(e, "op")));
            fprintf(f, " %.6g</td>", num(e, "limit"));
            td_str(f, json_string_value(json_object_get(e, "unit")));
            fprintf(f, "<td>%s</td></tr>\n", json_is_true(json_object_get(e, "skipped")) ? "skip"
                                               : pass ? "pass"
                                                      : "<strong>FAIL</strong>");
        }
        table_end(f, rows);
    }
}

/* Per-second series of one run, bucketed to at most MAX_POINTS points:
 * x = first second of the bucket; rates are bucket means, latencies the
 * bucket's largest.  Returns the point count (0: none or ENOMEM). */
typedef struct {
    double *t, *req, *err, *p50, *p99, *max;
    size_t n, bucket;
} series;

static void series_free(series *s)
{
    free(s->t);
    free(s->req);
    free(s->err);
    free(s->p50);
    free(s->p99);
    free(s->max);
}

static int series_make(const run_view *r, series *s)
{
    memset(s, 0, sizeof *s);
    size_t n = r->intervals ? json_array_size(r->intervals) : 0;
    if (!n)
        return 0;
    s->bucket = (n + MAX_POINTS - 1) / MAX_POINTS;
    size_t m = (n + s->bucket - 1) / s->bucket;
    double **cols[] = {&s->t, &s->req, &s->err, &s->p50, &s->p99, &s->max};
    for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++)
        if (!(*cols[c] = calloc(m, sizeof(double)))) {
            series_free(s);
            return -1;
        }
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(r->intervals, i);
        size_t b = i / s->bucket;
        if (i % s->bucket == 0)
            s->t[b] = num(e, "t_s");
        s->req[b] += num(e, "requests") / (double)s->bucket;
        s->err[b] += num(e, "errors") / (double)s->bucket;
        double p50 = num(e, "p50_us") / 1000, p99 = num(e, "p99_us") / 1000,
               mx = num(e, "max_us") / 1000;
        s->p50[b] = p50 > s->p50[b] ? p50 : s->p50[b];
        s->p99[b] = p99 > s->p99[b] ? p99 : s->p99[b];
        s->max[b] = mx > s->max[b] ? mx : s->max[b];
    }
    s->n = m;
    return 0;
}

static double max_of(const double *v, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

/* The target rate of an open loop at sample points over the run: the
 * fixed rate, or the load model's curve as the run recorded it
 * (run.target_rate_curve), up to t_end.  Returns the point count (0 for a
 * closed loop, or when the report has no curve). */
static size_t target_rate(const run_view *r, double t_end, double *x, double *y, size_t cap)
{
    if (t_end <= 0)
        t_end = 1;
    if (r->rate_target > 0) {
        x[0] = 0, y[0] = r->rate_target;
        x[1] = t_end, y[1] = r->rate_target;
        return 2;
    }
    size_t n = 0, m = r->rate_curve ? json_array_size(r->rate_curve) : 0;
    for (size_t i = 0; i < m && n < cap; i++) {
        const json_t *pt = json_array_get(r->rate_curve, i);
        double t = json_number_value(json_array_get(pt, 0));
        if (t > t_end)
            break;
        x[n] = t;
        y[n++] = json_number_value(json_array_get(pt, 1));
    }
    return n;
}

static int timeseries(FILE *f, const run_view *r, size_t idx)
{
    series s;
    char title[300], kind[48];
    if (series_make(r, &s) < 0)
        return -1;
    if (!s.n) {
        fprintf(f, "<p>");
        E(r->label);
        fprintf(f, ": no per-second figures.</p>\n");
        return 0;
    }
    double tx[200], ty[200];
    double t_end = s.t[s.n - 1] + (double)s.bucket;
    size_t nt = target_rate(r, t_end, tx, ty, sizeof tx / sizeof tx[0]);
    double ymax = max_of(s.req, s.n);
    double tmax = max_of(ty, nt);
    ymax = tmax > ymax ? tmax : ymax;
    const char *names[] = {"completed/s", "errors/s", "target rate/s"};
    char xlabel[64];
    if (s.bucket > 1)
        snprintf(xlabel, sizeof xlabel, "time (s; %zu s per point)", s.bucket);
    else
        snprintf(xlabel, sizeof xlabel, "time (s)");

    snprintf(title, sizeof title, "Throughput: %s", r->label);
    snprintf(kind, sizeof kind, "timeseries-rate");
    yb_svg_plot_spec sp = {.kind = kind, .title = title, .xlabel = xlabel,
                           .ylabel = "requests per second", .xmin = 0, .xmax = t_end,
                           .ymax = ymax, .legend = names, .n_legend = nt ? 3 : 2};
    yb_svg_plot p;
    fprintf(f, "<div data-run=\"%zu\">\n", idx);
    yb_svg_plot_begin(&p, f, &sp);
    yb_svg_series(&p, 0, names[0], s.t, s.req, s.n);
    yb_svg_series(&p, 1, names[1], s.t, s.err, s.n);
    if (nt)
        yb_svg_series(&p, 2, names[2], tx, ty, nt);
    yb_svg_plot_end(&p);

    const char *lnames[] = {"p50", "p99", "max"};
    snprintf(title, sizeof title, "Latency per second (end to end, successful requests): %s",
             r->label);
    yb_svg_plot_spec sl = {.kind = "timeseries-latency", .title = title, .xlabel = xlabel,
                           .ylabel = "latency (ms)", .xmin = 0, .xmax = t_end,
                           .ymax = max_of(s.max, s.n), .legend = lnames, .n_legend = 3};
    yb_svg_plot_begin(&p, f, &sl);
    yb_svg_series(&p, 0, "p50", s.t, s.p50, s.n);
    yb_svg_series(&p, 1, "p99", s.t, s.p99, s.n);
    yb_svg_series(&p, 2, "max", s.t, s.max, s.n);
    yb_svg_plot_end(&p);
    fprintf(f, "</div>\n");
    series_free(&s);
    return 0;
}

static const struct {
    const char *key, *title;
} PHASES[] = {
    {"e2e", "end to end (from the due time)"},
    {"service", "service time (from the first byte handed to the session)"},
    {"connect", "TCP connect"},
    {"tls", "TLS handshake"},
    {"h2", "HTTP/2 set-up (SETTINGS exchange)"},
    {"write", "writing the request"},
    {"ttfb", "time to first byte"},
    {"lateness", "send lateness (the generator)"},
    {"sync", "gNMI Subscribe: time to sync_response"},
    {"sample_lateness", "gNMI Subscribe: sample lateness"},
    {"e2e_failed", "end to end of the failed requests"},
};

static const char *phase_title(const char *key)
{
    for (size_t i = 0; i < sizeof PHASES / sizeof PHASES[0]; i++)
        if (!strcmp(PHASES[i].key, key))
            return PHASES[i].title;
    return key;
}

/* The phases present in any run, known ones first in their order, then
 * new ones in the order found.  Returns the count. */
static size_t phase_list(const run_view *r, size_t n, const char **out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < sizeof PHASES / sizeof PHASES[0] && k < cap; i++)
        for (size_t j = 0; j < n; j++)
            if (json_object_get(r[j].latency, PHASES[i].key)) {
                out[k++] = PHASES[i].key;
                break;
            }
    for (size_t j = 0; j < n; j++) {
        const char *key;
        json_t *h;
        json_object_foreach(r[j].latency, key, h)
            add_unique(out, &k, cap, key);
    }
    return k;
}

/* The curve of run r's phase: percentile_curve without its 100% point
 * (infinitely far right on a 1/(1-p) axis; the maximum is in the table),
 * or the summary percentiles of a report without a curve.  Values in ms.
 * Returns the point count (cap at most). */
static size_t curve_of(const run_view *r, const char *phase, double *x, double *y, size_t cap)
{
    json_t *h = json_object_get(r->latency, phase), *c = json_object_get(h, "percentile_curve");
    size_t n = 0, i;
    json_t *pt;
    if (num(h, "count") <= 0)
        return 0;
    if (json_is_array(c) && json_array_size(c)) {
        json_array_foreach(c, i, pt) {
            double p = json_number_value(json_array_get(pt, 0));
            if (p >= 100 || n == cap)
                continue;
            x[n] = p;
            y[n++] = json_number_value(json_array_get(pt, 1)) / 1000;
        }
        return n;
    }
    static const struct {
        const char *key;
        double p;
    } S[] = {{"min", 0}, {"p50", 50}, {"p90", 90}, {"p99", 99}, {"p99_9", 99.9}};
    for (i = 0; i < sizeof S / sizeof S[0] && n < cap; i++)
        if (json_object_get(h, S[i].key)) {
            x[n] = S[i].p;
            y[n++] = num(h, S[i].key) / 1000;
        }
    return n;
}

#define CURVE_CAP 4096

static int percentile_plots(FILE *f, const run_view *r, size_t n)
{
    const char *phases[64];
    size_t np = phase_list(r, n, phases, 64);
    double *x = malloc(CURVE_CAP * MAX_OVERLAY * sizeof *x), *y = malloc(CURVE_CAP * MAX_OVERLAY * sizeof *y);
    if (!x || !y) {
        free(x);
        free(y);
        return -1;
    }
    fprintf(f, "<h2 id=\"percentiles\">Latency distribution</h2>\n<p>Percentiles of the "
               "successful requests on HdrHistogram's axis: each step right is ten times rarer "
               "(90%%, 99%%, 99.9%%, ...).%s</p>\n",
            n > MAX_OVERLAY ? " Only the first runs are overlaid in each plot." : "");
    for (size_t k = 0; k < np; k++) {
        const char *names[MAX_OVERLAY];
        size_t cnt[MAX_OVERLAY], ns = 0;
        double ymax = 0, xmax = 0;
        for (size_t i = 0; i < n && ns < MAX_OVERLAY; i++) {
            size_t c = curve_of(&r[i], phases[k], x + ns * CURVE_CAP, y + ns * CURVE_CAP, CURVE_CAP);
            if (!c)
                continue;
            for (size_t j = 0; j < c; j++) {
                ymax = y[ns * CURVE_CAP + j] > ymax ? y[ns * CURVE_CAP + j] : ymax;
                xmax = x[ns * CURVE_CAP + j] > xmax ? x[ns * CURVE_CAP + j] : xmax;
            }
            names[ns] = r[i].label;
            cnt[ns++] = c;
        }
        if (!ns)
            continue;
        char title[200], kind[96];
        snprintf(title, sizeof title, "Latency by percentile: %s", phase_title(phases[k]));
        snprintf(kind, sizeof kind, "percentile %.60s", phases[k]);
        yb_svg_plot_spec sp = {.kind = kind, .title = title, .xlabel = "percentile",
                               .ylabel = "latency (ms)", .xaxis = YB_AXIS_PERCENTILE,
                               .xmax = xmax, .ymax = ymax, .legend = names, .n_legend = ns};
        yb_svg_plot p;
        yb_svg_plot_begin(&p, f, &sp);
        for (size_t s = 0; s < ns; s++)
            yb_svg_series(&p, s, names[s], x + s * CURVE_CAP, y + s * CURVE_CAP, cnt[s]);
        yb_svg_plot_end(&p);
    }
    free(x);
    free(y);
    return 0;
}

static void phase_bars(FILE *f, const run_view *r, size_t n)
{
    static const char *const SEG[] = {"connect", "TLS", "HTTP/2", "TTFB", "rest"};
    static const char *const KEY[] = {"connect", "tls", "h2", "ttfb"};
    const char **labels = calloc(n, sizeof *labels);
    double *v = calloc(n * 5, sizeof *v);
    size_t rows = 0;
    if (!labels || !v)
        goto out;
    for (size_t i = 0; i < n; i++) {
        double e2e = per_request_ms(&r[i], "e2e"), sum = 0;
        if (e2e <= 0)
            continue;
        for (size_t k = 0; k < 4; k++)
            sum += v[rows * 5 + k] = per_request_ms(&r[i], KEY[k]);
        v[rows * 5 + 4] = e2e > sum ? e2e - sum : 0;
        labels[rows++] = r[i].label;
    }
    if (!rows)
        goto out;
    fprintf(f, "<h2 id=\"phases\">Where the time goes</h2>\n<p>Mean time per successful request "
               "in each phase: a phase's total time spread over every request, so set-up paid by "
               "a new session per request shows against one persistent session. "
               "<em>rest</em> is the remainder of end to end: waiting to be sent, writing, and "
               "the response after its first byte.</p>\n");
    yb_svg_stacked_bars(f, "phases", "Mean per request by phase", "time per request (ms)", labels,
                        rows, SEG, 5, v);
out:
    free(labels);
    free(v);
}

static void latency_table(FILE *f, const run_view *r, size_t n)
{
    const char *phases[64];
    size_t np = phase_list(r, n, phases, 64), rows = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < np; k++)
            rows += phase_num(&r[i], phases[k], "count") > 0;
    if (!rows)
        return;
    table_begin(f, "Latency percentiles (ms)", rows);
    fprintf(f, "<tr>");
    static const char *const H[] = {"Run", "Phase", "count", "min", "p50", "p90", "p99", "p99.9",
                                    "max", "mean"};
    for (size_t k = 0; k < sizeof H / sizeof H[0]; k++)
        th(f, H[k]);
    fprintf(f, "</tr>\n");
    static const char *const K[] = {"min", "p50", "p90", "p99", "p99_9", "max", "mean"};
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < np; k++) {
            if (phase_num(&r[i], phases[k], "count") <= 0)
                continue;
            fprintf(f, "<tr>");
            td_label(f, &r[i]);
            td_str(f, phases[k]);
            td_num(f, 0, phase_num(&r[i], phases[k], "count"));
            for (size_t c = 0; c < sizeof K / sizeof K[0]; c++)
                td_num(f, 3, phase_num(&r[i], phases[k], K[c]) / 1000);
            fprintf(f, "</tr>\n");
        }
    table_end(f, rows);
}

static void errors_section(FILE *f, const run_view *r, size_t n)
{
    size_t any = 0;
    for (size_t i = 0; i < n; i++)
        any += r[i].nerr > 0 || json_object_size(json_object_get(r[i].j, "status")) > 0;
    if (!any)
        return;
    fprintf(f, "<h2 id=\"errors\">Status and errors</h2>\n");
    for (size_t i = 0; i < n; i++) {
        json_t *st = json_object_get(r[i].j, "status"), *gs = json_object_get(r[i].j, "grpc_status"),
               *reasons = json_object_get(r[i].errors, "reasons"), *x;
        const char *k;
        size_t rows = json_object_size(st) + json_object_size(gs);
        json_object_foreach(r[i].errors, k, x) rows += json_is_number(x) && json_number_value(x) > 0;
        if (!rows)
            continue;
        char cap[300];
        snprintf(cap, sizeof cap, "%s: counts", r[i].label);
        table_begin(f, cap, rows);
        fprintf(f, "<tr>");
        th(f, "What");
        th(f, "Code or class");
        th(f, "Requests");
        fprintf(f, "</tr>\n");
        json_object_foreach(st, k, x) {
            fprintf(f, "<tr><td>HTTP status</td>");
            td_str(f, k);
            td_num(f, 0, json_number_value(x));
            fprintf(f, "</tr>\n");
        }
        json_object_foreach(gs, k, x) {
            fprintf(f, "<tr><td>gRPC status</td>");
            td_str(f, k);
            td_num(f, 0, json_number_value(x));
            fprintf(f, "</tr>\n");
        }
        json_object_foreach(r[i].errors, k, x) {
            if (!json_is_number(x) || json_number_value(x) <= 0)
                continue;
            fprintf(f, "<tr><td>error</td>");
            td_str(f, k);
            td_num(f, 0, json_number_value(x));
            fprintf(f, "</tr>\n");
        }
        table_end(f, rows);
        size_t nr = json_array_size(reasons), j;
        json_t *e;
        if (!nr)
            continue;
        snprintf(cap, sizeof cap, "%s: error reasons", r[i].label);
        table_begin(f, cap, nr);
        fprintf(f, "<tr>");
        th(f, "Class");
        th(f, "Reason");
        th(f, "Requests");
        th(f, "First (s)");
        fprintf(f, "</tr>\n");
        json_array_foreach(reasons, j, e) {
            fprintf(f, "<tr>");
            td_str(f, json_string_value(json_object_get(e, "class")));
            td_str(f, json_string_value(json_object_get(e, "reason")));
            td_num(f, 0, num(e, "count"));
            if (json_object_get(e, "first_s"))
                td_num(f, 3, num(e, "first_s"));
            else
                fprintf(f, "<td></td>");
            fprintf(f, "</tr>\n");
        }
        table_end(f, nr);
    }
}

/* Collects the dotted paths of e's scalar leaves (objects two levels
 * deep; arrays skipped) into cols. */
static void leaf_columns(const json_t *e, const char *prefix, int depth, char (*cols)[96],
                         size_t *nc)
{
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)e, k, x) {
        char path[96];
        snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", k);
        if (depth == 0 && !strcmp(k, "histograms"))
            continue; /* exact histograms (base64) are for merges, not for people */
        if (json_is_object(x)) {
            if (depth < 2)
                leaf_columns(x, path, depth + 1, cols, nc);
            continue;
        }
        if (json_is_array(x))
            continue;
        size_t c = 0;
        while (c < *nc && strcmp(cols[c], path))
            c++;
        if (c == *nc && *nc < MAX_COLUMNS)
            snprintf(cols[(*nc)++], 96, "%s", path);
    }
}

/* The value at dotted path in e (NULL when absent). */
static json_t *at_path(json_t *e, const char *path)
{
    char buf[96];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok && e;
         tok = strtok_r(NULL, ".", &save))
        e = json_object_get(e, tok);
    return e;
}

static void breakdown_tables(FILE *f, const run_view *r, size_t n)
{
    static char cols[MAX_COLUMNS][96];
    for (size_t b = 0; b < sizeof BREAKDOWNS / sizeof BREAKDOWNS[0]; b++) {
        int heading = 0;
        for (size_t i = 0; i < n; i++) {
            json_t *x = json_object_get(r[i].j, BREAKDOWNS[b][0]), *e;
            size_t rows = json_is_array(x) ? json_array_size(x) : json_object_size(x), nc = 0, j;
            const char *k;
            if (!rows)
                continue;
            if (!heading++) {
                fprintf(f, "<h2 id=\"%s\">", BREAKDOWNS[b][0]);
                E(BREAKDOWNS[b][1]);
                fprintf(f, "</h2>\n");
            }
            if (json_is_array(x))
                json_array_foreach(x, j, e) leaf_columns(e, "", 0, cols, &nc);
            else
                json_object_foreach(x, k, e) leaf_columns(e, "", 0, cols, &nc);
            char cap[300];
            snprintf(cap, sizeof cap, "%s: %zu %s", r[i].label, rows, BREAKDOWNS[b][0]);
            table_begin(f, cap, rows);
            fprintf(f, "<tr>");
            if (!json_is_array(x))
                th(f, "name");
            for (size_t c = 0; c < nc; c++)
                th(f, cols[c]);
            fprintf(f, "</tr>\n");
            if (json_is_array(x)) {
                json_array_foreach(x, j, e) {
                    fprintf(f, "<tr>");
                    for (size_t c = 0; c < nc; c++)
                        td_json(f, at_path(e, cols[c]));
                    fprintf(f, "</tr>\n");
                }
            } else {
                json_object_foreach(x, k, e) {
                    fprintf(f, "<tr>");
                    td_str(f, k);
                    for (size_t c = 0; c < nc; c++)
                        td_json(f, at_path(e, cols[c]));
                    fprintf(f, "</tr>\n");
                }
            }
            table_end(f, rows);
        }
    }
}

/* ---- the page -------------------------------------------------------------- */

/* ---- device telemetry and sweeps: drawing -------------------------------- */

/* Non-null numbers key (scaled) of the objects in arr against their t_s,
 * at most MAX_POINTS (every k-th when more).  Returns the count. */
static size_t tm_points(const json_t *arr, const char *obj, const char *key, double scale,
                        double *x, double *y)
{
    size_t n = json_array_size(arr), step = n > MAX_POINTS ? (n + MAX_POINTS - 1) / MAX_POINTS : 1;
    size_t m = 0;
    for (size_t i = 0; i < n && m < MAX_POINTS; i += step) {
        const json_t *e = json_array_get(arr, i);
        const json_t *o = obj ? json_object_get(e, obj) : e;
        const json_t *val = json_object_get(o, key);
        if (!json_is_number(val))
            continue;
        x[m] = json_number_value(json_object_get(e, "t_s"));
        y[m++] = json_number_value(val) * scale;
    }
    return m;
}

static int telemetry_section(FILE *f, const run_view *r, size_t idx)
{
    json_t *devs = json_object_get(r->telemetry, "devices"), *d;
    size_t i;
    double *x = malloc(4 * MAX_POINTS * sizeof *x);
    if (!x)
        return -1;
    double *y = x + MAX_POINTS, *x2 = y + MAX_POINTS, *y2 = x2 + MAX_POINTS;
    fprintf(f, "<h2 id=\"telemetry-%zu\">Device telemetry: ", idx);
    E(r->label);
    fprintf(f, "</h2>\n<p>The device's CPU (the ALL entry, else the mean of its CPUs) and its "
               "busiest process per second, on the seconds of the run (0 is the load's first; "
               "the baseline is negative), with the run's p99 latency of the same seconds.</p>\n");
    json_array_foreach(devs, i, d) {
        const char *target = json_string_value(json_object_get(d, "target"));
        const char *note = json_string_value(json_object_get(d, "note"));
        const char *sat = json_string_value(json_object_get(d, "saturation"));
        json_t *ser = json_object_get(d, "series");
        fprintf(f, "<h3>");
        E(target);
        fprintf(f, "</h3>\n");
        if (!json_is_true(json_object_get(d, "supported"))) {
            fprintf(f, "<p>");
            E(note ? note : "no telemetry");
            fprintf(f, "</p>\n");
            continue;
        }
        size_t n1 = tm_points(ser, NULL, "cpu_pct", 1, x, y);
        size_t n2 = tm_points(ser, "top_process", "cpu_pct", 1, x2, y2);
        if (n1 || n2) {
            double lo = n1 ? x[0] : x2[0], hi = n1 ? x[n1 - 1] : x2[n2 - 1];
            if (n2 && x2[0] < lo)
                lo = x2[0];
            if (n2 && x2[n2 - 1] > hi)
                hi = x2[n2 - 1];
            double ym = max_of(y, n1), ym2 = max_of(y2, n2);
            const char *names[] = {"device CPU %", "busiest process % of a core"};
            char title[300];
            snprintf(title, sizeof title, "Device CPU per second: %.200s", target);
            yb_svg_plot_spec sp = {.kind = "telemetry-cpu", .title = title,
                                   .xlabel = "time (s; 0 = the load's start)",
                                   .ylabel = "percent", .xmin = lo, .xmax = hi > lo ? hi : lo + 1,
                                   .ymax = ym2 > ym ? ym2 : ym > 0 ? ym : 100,
                                   .legend = names, .n_legend = 2};
            yb_svg_plot p;
            fprintf(f, "<div data-run=\"%zu\">\n", idx);
            yb_svg_plot_begin(&p, f, &sp);
            yb_svg_series(&p, 0, names[0], x, y, n1);
            yb_svg_series(&p, 1, names[1], x2, y2, n2);
            yb_svg_plot_end(&p);
            size_t n3 = tm_points(ser, NULL, "p99_us", 1e-3, x2, y2);
            if (n3) {
                const char *ln[] = {"p99"};
                snprintf(title, sizeof title, "p99 latency of the same seconds: %.200s", target);
                yb_svg_plot_spec sl = {.kind = "telemetry-latency", .title = title,
                                       .xlabel = "time (s; 0 = the load's start)",
                                       .ylabel = "latency (ms)", .xmin = lo,
                                       .xmax = hi > lo ? hi : lo + 1, .ymax = max_of(y2, n3),
                                       .legend = ln, .n_legend = 1};
                yb_svg_plot_begin(&p, f, &sl);
                yb_svg_series(&p, 0, "p99", x2, y2, n3);
                yb_svg_plot_end(&p);
            }
            fprintf(f, "</div>\n");
        }
        json_t *top = json_object_get(d, "top_processes"), *e;
        size_t k, rows = json_array_size(top);
        if (rows) {
            table_begin(f, "Top processes by CPU under load", rows);
            fprintf(f, "<tr>");
            th(f, "process");
            th(f, "pid");
            th(f, "CPU % mean");
            th(f, "CPU % max");
            th(f, "memory (MB)");
            fprintf(f, "</tr>\n");
            json_array_foreach(top, k, e) {
                fprintf(f, "<tr>");
                td_str(f, json_string_value(json_object_get(e, "name")));
                td_num(f, 0, num(e, "pid"));
                td_num(f, 1, num(e, "cpu_pct_mean"));
                td_num(f, 1, num(e, "cpu_pct_max"));
                td_num(f, 1, num(e, "memory_bytes") / 1e6);
                fprintf(f, "</tr>\n");
            }
            table_end(f, rows);
        }
        if (sat) {
            fprintf(f, "<p><strong>");
            E(sat);
            fprintf(f, "</strong></p>\n");
        }
    }
    free(x);
    return 0;
}

static int sweep_section(FILE *f, const sweep_view *sv, size_t idx)
{
    size_t n = json_array_size(sv->steps), order[MAX_SWEEP_STEPS];
    double x[MAX_SWEEP_STEPS], y[3][MAX_SWEEP_STEPS];
    for (size_t i = 0; i < n; i++) { /* level order: the curve as the load grew */
        size_t k = i;
        double lv = num(json_array_get(sv->steps, i), "level");
        while (k > 0 && num(json_array_get(sv->steps, order[k - 1]), "level") > lv) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = i;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(sv->steps, order[i]);
        x[i] = num(e, "achieved_per_s");
        y[0][i] = num(e, "p50_us") / 1e3;
        y[1][i] = num(e, "p99_us") / 1e3;
        y[2][i] = num(e, "p999_us") / 1e3;
    }
    fprintf(f, "<h2 id=\"sweep-%zu\">Capacity sweep: ", idx);
    E(sv->target ? sv->target : sv->name);
    fprintf(f, "</h2>\n<p>");
    if (sv->knee)
        fprintf(f, "Knee: %.1f requests/s at %g %s (p99 %.2f ms): the most throughput meeting "
                   "every SLO.",
                num(sv->knee, "achieved_per_s"), num(sv->knee, "level"),
                streq0(sv->unit, "req/s") ? "req/s offered" : "sessions",
                num(sv->knee, "p99_us") / 1e3);
    else
        fprintf(f, "Knee: none: no step met every SLO.");
    fprintf(f, "</p>\n");
    size_t di;
    const json_t *dv;
    json_array_foreach(sv->devices, di, dv) { /* each target's own knee */
        const json_t *k = json_object_get(dv, "knee");
        fprintf(f, "<p>Knee of ");
        E(json_string_value(json_object_get(dv, "name")));
        if (json_is_object(k))
            fprintf(f, ": %s%.1f requests/s at %g %s (p99 %.2f ms).</p>\n",
                    json_is_true(json_object_get(k, "lower_bound")) ? "at least " : "",
                    num(k, "achieved_per_s"), num(k, "level"),
                    streq0(sv->unit, "req/s") ? "req/s offered" : "sessions",
                    num(k, "p99_us") / 1e3);
        else
            fprintf(f, ": none: no step met its SLOs.</p>\n");
    }
    if (n) {
        const char *names[] = {"p50", "p99", "p99.9"};
        yb_svg_plot_spec sp = {.kind = "sweep-curve", .title = "Throughput and latency, step by step",
                               .xlabel = "achieved (successful requests per second)",
                               .ylabel = "latency (ms)", .xmin = 0, .xmax = max_of(x, n) > 0 ? max_of(x, n) : 1,
                               .ymax = max_of(y[2], n), .legend = names, .n_legend = 3};
        yb_svg_plot p;
        yb_svg_plot_begin(&p, f, &sp);
        for (int s = 0; s < 3; s++)
            yb_svg_series(&p, (size_t)s, names[s], x, y[s], n);
        yb_svg_plot_end(&p);
    }
    table_begin(f, "Steps", n);
    fprintf(f, "<tr>");
    th(f, streq0(sv->unit, "req/s") ? "offered/s" : "sessions");
    th(f, "achieved/s");
    th(f, "p50 ms");
    th(f, "p99 ms");
    th(f, "p99.9 ms");
    th(f, "errors %");
    th(f, "device CPU %");
    th(f, "verdict");
    fprintf(f, "</tr>\n");
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(sv->steps, order[i]);
        const json_t *cpu = json_object_get(e, "device_cpu_pct");
        fprintf(f, "<tr>");
        td_num(f, streq0(sv->unit, "req/s") ? 1 : 0, num(e, "level"));
        td_num(f, 1, x[i]);
        td_num(f, 2, y[0][i]);
        td_num(f, 2, y[1][i]);
        td_num(f, 2, y[2][i]);
        td_num(f, 3, num(e, "errors_pct"));
        td_cpu_verdict(f, cpu, e);
        size_t k;
        const json_t *p;
        json_array_foreach(json_object_get(e, "parts"), k, p) { /* its targets, workloads */
            const json_t *pc = json_object_get(p, "device_cpu_pct");
            const char *kind = json_string_value(json_object_get(p, "kind"));
            fprintf(f, "<tr data-kind=\"sweep-part\"><td>&nbsp;&nbsp;%s",
                    streq0(kind, "workload") ? "workload " : "");
            E(json_string_value(json_object_get(p, "name")));
            fprintf(f, "</td>");
            td_num(f, 1, num(p, "achieved_per_s"));
            td_num(f, 2, num(p, "p50_us") / 1e3);
            td_num(f, 2, num(p, "p99_us") / 1e3);
            td_num(f, 2, num(p, "p999_us") / 1e3);
            td_num(f, 3, num(p, "errors_pct"));
            td_cpu_verdict(f, pc, p);
        }
    }
    table_end(f, n);
    return 0;
}

int yb_html_write(FILE *f, json_t *const *docs, const char *const *names, size_t n,
                  const char *title, char *err, size_t errlen)
{
    run_view *r;
    sweep_view *sw;
    size_t nr, nsw;
    int rc = 0;
    if (index_docs(docs, names, n, &r, &nr, &sw, &nsw, err, errlen) < 0)
        return -1;
    if (!title)
        title = "yangblast report";
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
               "<meta name=\"generator\" content=\"" PACKAGE_NAME " " PACKAGE_VERSION "\">\n"
               "<title>");
    E(title);
    fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", CSS);
    E(title);
    fprintf(f, "</h1>\n<p class=\"sub\">");
    if (nr)
        fprintf(f, "%zu run%s", nr, nr == 1 ? "" : "s");
    if (nsw)
        fprintf(f, "%s%zu sweep%s", nr ? ", " : "", nsw, nsw == 1 ? "" : "s");
    fprintf(f, " from ");
    for (size_t d = 0; d < n; d++) {
        fprintf(f, "%s", d ? ", " : "");
        E(names[d]);
    }
    fprintf(f, ".</p>\n");
    for (size_t i = 0; i < nsw && rc == 0; i++)
        rc = sweep_section(f, &sw[i], i);
    if (nr && rc == 0) {
        rc = study_tables(f, r, nr);
        thresholds_section(f, r, nr);
        settings_table(f, r, nr);
        fprintf(f, "<h2 id=\"time\">Over time</h2>\n<p>Per second: requests completed (ok or "
                   "not), errors, and for an open loop the target rate; end-to-end latency p50, "
                   "p99 and maximum of the successful requests completed in that second.  The "
                   "last second is partial.</p>\n");
        for (size_t i = 0; i < nr && rc == 0; i++)
            rc = timeseries(f, &r[i], i);
        for (size_t i = 0; i < nr && rc == 0; i++)
            if (r[i].telemetry)
                rc = telemetry_section(f, &r[i], i);
        if (rc == 0)
            rc = percentile_plots(f, r, nr);
        latency_table(f, r, nr);
        phase_bars(f, r, nr);
        errors_section(f, r, nr);
        breakdown_tables(f, r, nr);
    }
    fprintf(f, "<p class=\"sub\">Generated by " PACKAGE_NAME " " PACKAGE_VERSION
               "; JSON schema: yangblast-report(5).</p>\n</body>\n</html>\n");
    free(r);
    free(sw);
    if (rc < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "write failed: %s", strerror(errno));
        return -1;
    }
    return 0;
}

json_t *yb_html_load(const char *path, char *err, size_t errlen)
{
    struct stat st;
    json_error_t je;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
        (unsigned long long)st.st_size > YB_HTML_MAX_INPUT) {
        snprintf(err, errlen, "%s: larger than %u MiB: not a report", path, YB_HTML_MAX_INPUT >> 20);
        fclose(f);
        return NULL;
    }
    json_t *j = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    fclose(f);
    if (!j)
        snprintf(err, errlen, "%s:%d:%d: not valid JSON: %s", path, je.line, je.column, je.text);
    return j;
}

int yb_html_report(const char *path, json_t *const *docs, const char *const *names, size_t n,
                   const char *title, char *err, size_t errlen)
{
    yb_outfile o;
    char werr[512] = "";
    /* Checked before the output is opened: bad input leaves no file. */
    run_view *r;
    sweep_view *sw;
    size_t nr, nsw;
    if (index_docs(docs, names, n, &r, &nr, &sw, &nsw, err, errlen) < 0)
        return -1;
    free(r);
    free(sw);
    if (yb_outfile_open(&o, path, 0, err, errlen) < 0)
        return -2;
    if (yb_html_write(o.f, docs, names, n, title, werr, sizeof werr) < 0) {
        snprintf(err, errlen, "%s: %s", path, werr);
        yb_outfile_abort(&o);
        return -2;
    }
    return yb_outfile_commit(&o, err, errlen) < 0 ? -2 : 0;
}
