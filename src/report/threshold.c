/* Thresholds: parsing, the per-second check of --abort-on-fail, the
 * verdicts at the end and their text and JSON (see threshold.h). */
#include "config.h"
#include "report/threshold.h"
#include "report/report.h"
#include "stats/hdr.h"
#include "util/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- metrics ------------------------------------------------------------- */

static int name_is(const char *s, size_t len, const char *name)
{
    return strlen(name) == len && !memcmp(s, name, len);
}

int yb_metric_parse(const char *s, size_t len, yb_metric *m)
{
    memset(m, 0, sizeof *m);
    if (len == 0 || len >= sizeof m->name)
        return -1;
    const char *dot = memchr(s, '.', len);
    size_t head = dot ? (size_t)(dot - s) : len;
    if (name_is(s, len, "rate") || name_is(s, len, "requests")) {
        m->kind = name_is(s, len, "rate") ? YB_M_RATE : YB_M_REQUESTS;
        snprintf(m->name, sizeof m->name, "%.*s", (int)len, s);
        return 0;
    }
    if (name_is(s, head, "errors")) {
        m->kind = YB_M_ERRORS;
        m->err = YB_ERR_NONE;
        if (dot) {
            size_t cl = len - head - 1;
            int c = YB_ERR_NONE + 1;
            for (; c < YB_ERR__COUNT && !name_is(dot + 1, cl, yb_err_name((yb_err_class)c)); c++)
                ;
            if (c == YB_ERR__COUNT)
                return -1;
            m->err = (yb_err_class)c;
        }
        snprintf(m->name, sizeof m->name, "%.*s", (int)len, s);
        return 0;
    }
    if (!dot)
        return -1;
    int h = 0;
    for (; h < YB_H__COUNT && !name_is(s, head, yb_hist_name((yb_hist_id)h)); h++)
        ;
    if (h == YB_H__COUNT)
        return -1;
    m->kind = YB_M_LATENCY;
    m->hist = (yb_hist_id)h;
    const char *st = dot + 1;
    size_t sl = len - head - 1;
    if (name_is(st, sl, "min"))
        m->stat = YB_STAT_MIN;
    else if (name_is(st, sl, "max"))
        m->stat = YB_STAT_MAX;
    else if (name_is(st, sl, "mean"))
        m->stat = YB_STAT_MEAN;
    else if (sl > 1 && st[0] == 'p' && yb_parse_double_n(st + 1, sl - 1, &m->pct) == 0 &&
             m->pct > 0 && m->pct <= 100)
        m->stat = YB_STAT_PCT;
    else
        return -1;
    if (m->stat == YB_STAT_PCT)
        snprintf(m->name, sizeof m->name, "%s.p%g", yb_hist_name(m->hist), m->pct);
    else
        snprintf(m->name, sizeof m->name, "%.*s", (int)len, s);
    return 0;
}

/* A latency figure of histogram h (µs); 0 when h is empty. */
static int hist_value(const yb_metric *m, const yb_hdr *h, double *v)
{
    if (!h || yb_hdr_count(h) == 0)
        return 0;
    switch (m->stat) {
    case YB_STAT_PCT: *v = (double)yb_hdr_percentile(h, m->pct); break;
    case YB_STAT_MIN: *v = (double)yb_hdr_min(h); break;
    case YB_STAT_MAX: *v = (double)yb_hdr_max(h); break;
    case YB_STAT_MEAN: *v = yb_hdr_mean(h); break;
    }
    return 1;
}

int yb_metric_value(const yb_metric *m, const yb_recorder *r, int percent, double *v)
{
    switch (m->kind) {
    case YB_M_LATENCY: return hist_value(m, r->h[m->hist], v);
    case YB_M_ERRORS: {
        uint64_t n = m->err == YB_ERR_NONE ? r->completed - r->ok : r->errors[m->err];
        if (!percent) {
            *v = (double)n;
            return 1;
        }
        if (!r->completed)
            return 0;
        *v = (double)n * 100.0 / (double)r->completed;
        return 1;
    }
    case YB_M_RATE: {
        double d = yb_report_duration_s(r);
        if (d <= 0)
            return 0;
        *v = (double)r->ok / d;
        return 1;
    }
    case YB_M_REQUESTS: *v = (double)r->ok; return 1;
    }
    return 0;
}

/* ---- parsing ------------------------------------------------------------- */

static void trim(const char **s, size_t *len)
{
    while (*len && isspace((unsigned char)**s)) {
        (*s)++;
        (*len)--;
    }
    while (*len && isspace((unsigned char)(*s)[*len - 1]))
        (*len)--;
}

static int count_n(const char *s, size_t len, double *out)
{
    char buf[32];
    uint64_t v;
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = 0;
    if (yb_parse_u64(buf, 0, UINT64_MAX / 2, &v) < 0)
        return -1;
    *out = (double)v;
    return 0;
}

/* Parses the limit at s for t->m.  Returns 0, or -1 with what the metric
 * takes in err. */
static int parse_value(yb_threshold *t, const char *s, size_t len, char *err, size_t errlen)
{
    switch (t->m.kind) {
    case YB_M_LATENCY: {
        uint64_t ns;
        if (len == 0 || !isalpha((unsigned char)s[len - 1]) ||
            yb_parse_duration_n(s, len, &ns) < 0) {
            snprintf(err, errlen, "%s takes a duration with its unit (e.g. 50ms, 1.5s, 200us)",
                     t->m.name);
            return -1;
        }
        t->limit = (double)ns / 1000.0;
        return 0;
    }
    case YB_M_ERRORS:
        if (len && s[len - 1] == '%') {
            t->percent = 1;
            if (yb_parse_double_n(s, len - 1, &t->limit) == 0 && t->limit <= 100)
                return 0;
        } else if (count_n(s, len, &t->limit) == 0) {
            return 0;
        }
        snprintf(err, errlen, "%s takes a percentage of the completed requests (0.1%%) or a "
                 "count (5)", t->m.name);
        return -1;
    case YB_M_RATE:
        if (len > 2 && !memcmp(s + len - 2, "/s", 2))
            len -= 2;
        if (yb_parse_rate_n(s, len, &t->limit) == 0)
            return 0;
        snprintf(err, errlen, "rate takes successful requests per second (990/s, 1.5k/s)");
        return -1;
    case YB_M_REQUESTS:
        if (count_n(s, len, &t->limit) == 0)
            return 0;
        snprintf(err, errlen, "requests takes a count of successful requests (1000)");
        return -1;
    }
    return -1;
}

static int parse_scope(yb_threshold *t, const char *s, size_t len)
{
    const char *eq = memchr(s, '=', len);
    if (!eq)
        return -1;
    size_t kl = (size_t)(eq - s), nl = len - kl - 1;
    if (!(name_is(s, kl, "target") || name_is(s, kl, "workload") ||
          name_is(s, kl, "operation")) || nl == 0 || nl >= sizeof t->scope_name)
        return -1;
    snprintf(t->scope_kind, sizeof t->scope_kind, "%.*s", (int)kl, s);
    snprintf(t->scope_name, sizeof t->scope_name, "%.*s", (int)nl, eq + 1);
    return 0;
}

static int parse_expr(yb_threshold *t, const char *expr, char *err, size_t errlen)
{
    char why[200] = "";
    size_t len = strlen(expr);
    const char *op = expr + strcspn(expr, "<>");
    if (!*op) {
        snprintf(why, sizeof why, "no comparison (<, <=, > or >=)");
        goto bad;
    }
    int eq = op[1] == '=';
    t->op = op[0] == '<' ? (eq ? YB_TH_LE : YB_TH_LT) : (eq ? YB_TH_GE : YB_TH_GT);
    const char *lhs = expr, *rhs = op + 1 + eq;
    size_t ll = (size_t)(op - expr), rl = len - (size_t)(rhs - expr);
    /* the scope ends at the last ':' (a target may be a URL) */
    const char *colon = NULL;
    for (const char *p = lhs; p < lhs + ll; p++)
        if (*p == ':')
            colon = p;
    if (colon) {
        const char *sc = lhs;
        size_t sl = (size_t)(colon - lhs);
        trim(&sc, &sl);
        if (parse_scope(t, sc, sl) < 0) {
            snprintf(why, sizeof why, "scope '%.*s': expected target=NAME, workload=NAME or "
                     "operation=NAME", (int)(sl > 120 ? 120 : sl), sc);
            goto bad;
        }
        ll -= (size_t)(colon + 1 - lhs);
        lhs = colon + 1;
    }
    trim(&lhs, &ll);
    trim(&rhs, &rl);
    if (yb_metric_parse(lhs, ll, &t->m) < 0) {
        snprintf(why, sizeof why, "unknown metric '%.*s'%s", (int)(ll > 60 ? 60 : ll), lhs,
                 memchr(lhs, '.', ll) && memchr(lhs, 'p', ll) ? " (a percentile is above 0 and at most 100)" : "");
        goto bad;
    }
    if (rl == 0 || memchr(rhs, '<', rl) || memchr(rhs, '>', rl)) {
        snprintf(why, sizeof why, "expected one value after the comparison");
        goto bad;
    }
    if (parse_value(t, rhs, rl, why, sizeof why) < 0)
        goto bad;
    return 0;
bad: {
    char phases[300] = "";
    size_t used = 0;
    for (int h = 0; h < YB_H__COUNT && used < sizeof phases; h++) {
        int w = snprintf(phases + used, sizeof phases - used, "%s%s", h ? ", " : "",
                         yb_hist_name((yb_hist_id)h));
        used += w > 0 ? (size_t)w : 0;
    }
    snprintf(err, errlen,
             "--threshold '%.*s': %s.  A threshold is [target|workload|operation=NAME:]METRIC "
             "OP VALUE, METRIC one of PHASE.STAT (PHASE %s; STAT pN such as p50 or p99.9, "
             "min, max, mean), errors, errors.CLASS, rate, requests; OP <, <=, > or >=; VALUE "
             "a duration with its unit (e2e.p99<50ms), a percentage or count (errors<0.1%%, "
             "errors<=5), a rate (rate>=990/s) or a count (requests>=1000)",
             (int)(strlen(expr) > 200 ? 200 : strlen(expr)), expr, why, phases);
    return -1;
}
}

void yb_thresholds_init(yb_thresholds *ts)
{
    memset(ts, 0, sizeof *ts);
    ts->stopped_by = -1;
}

void yb_thresholds_cleanup(yb_thresholds *ts)
{
    yb_hdr_free(ts->cum);
    ts->cum = NULL;
}

int yb_thresholds_add(yb_thresholds *ts, const char *expr, char *err, size_t errlen)
{
    if (ts->n == YB_TH_MAX) {
        snprintf(err, errlen, "--threshold '%s': at most %d thresholds", expr, YB_TH_MAX);
        return -1;
    }
    yb_threshold *t = &ts->t[ts->n];
    memset(t, 0, sizeof *t);
    t->expr = expr;
    if (parse_expr(t, expr, err, errlen) < 0)
        return -1;
    ts->n++;
    return 0;
}

/* ---- scopes -------------------------------------------------------------- */

static const yb_th_scope *find_scope(const yb_threshold *t, const yb_th_scope *sc, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(sc[i].kind, t->scope_kind) && !strcmp(sc[i].name, t->scope_name))
            return &sc[i];
    return NULL;
}

/* Says in buf which parts of kind the run has. */
static void scope_names(const char *kind, const yb_th_scope *sc, size_t n, char *buf, size_t len)
{
    size_t used = 0, k = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n && used + 1 < len; i++)
        if (!strcmp(sc[i].kind, kind)) {
            int w = snprintf(buf + used, len - used, "%s'%s'", k++ ? ", " : "", sc[i].name);
            if (w < 0)
                break;
            used += (size_t)w < len - used ? (size_t)w : len - used - 1;
        }
    if (!k)
        snprintf(buf, len, "this run has no per-%s figures", kind);
}

static int scope_missing(const yb_threshold *t, const yb_th_scope *sc, size_t n, char *msg,
                         size_t len)
{
    if (!t->scope_kind[0] || find_scope(t, sc, n))
        return 0;
    char names[400];
    scope_names(t->scope_kind, sc, n, names, sizeof names);
    if (!strncmp(names, "this run", 8))
        snprintf(msg, len, "no %s '%s': %s", t->scope_kind, t->scope_name, names);
    else
        snprintf(msg, len, "no %s '%s' in this run (its %ss: %s)", t->scope_kind, t->scope_name,
                 t->scope_kind, names);
    return 1;
}

int yb_thresholds_check_scopes(const yb_thresholds *ts, const yb_th_scope *sc, size_t n,
                               char *err, size_t errlen)
{
    char msg[600];
    for (size_t i = 0; i < ts->n; i++)
        if (scope_missing(&ts->t[i], sc, n, msg, sizeof msg)) {
            snprintf(err, errlen, "--threshold '%s': %s", ts->t[i].expr, msg);
            return -1;
        }
    return 0;
}

/* ---- verdicts ------------------------------------------------------------ */

static int holds(const yb_threshold *t, double v)
{
    switch (t->op) {
    case YB_TH_LT: return v < t->limit;
    case YB_TH_LE: return v <= t->limit;
    case YB_TH_GT: return v > t->limit;
    case YB_TH_GE: return v >= t->limit;
    }
    return 0;
}

int yb_thresholds_arm(yb_thresholds *ts, volatile sig_atomic_t *stop)
{
    ts->abort_on_fail = 1;
    ts->stop = stop;
    if (!ts->cum && !(ts->cum = yb_hdr_new_default()))
        return -1;
    return 0;
}

/* The figure of t over the seconds so far, when it can be judged before
 * the end: returns 1 with *v, else 0. */
static int so_far(const yb_thresholds *ts, const yb_threshold *t, double *v)
{
    if (t->scope_kind[0])
        return 0;
    switch (t->m.kind) {
    case YB_M_LATENCY: return t->m.hist == YB_H_E2E && hist_value(&t->m, ts->cum, v);
    case YB_M_ERRORS:
        if (t->m.err != YB_ERR_NONE)
            return 0;
        if (!t->percent) { /* a count only grows: only an upper bound can fail early */
            *v = (double)ts->cum_errors;
            return t->op == YB_TH_LT || t->op == YB_TH_LE;
        }
        if (!ts->cum_requests)
            return 0;
        *v = (double)ts->cum_errors * 100.0 / (double)ts->cum_requests;
        return 1;
    case YB_M_RATE:
        *v = (double)(ts->cum_requests - ts->cum_errors) / (double)ts->cum_seconds;
        return 1;
    case YB_M_REQUESTS: return 0;
    }
    return 0;
}

size_t yb_thresholds_checked_per_second(const yb_thresholds *ts)
{
    /* so_far on figures that always have a value says which it judges */
    yb_thresholds probe = {.cum_requests = 1, .cum_seconds = 1};
    yb_hdr *h = yb_hdr_new_default();
    size_t n = 0;
    double v;
    if (!h)
        return ts->n; /* cannot tell: do not refuse */
    yb_hdr_record(h, 1);
    probe.cum = h;
    for (size_t i = 0; i < ts->n; i++)
        n += (size_t)so_far(&probe, &ts->t[i], &v);
    yb_hdr_free(h);
    return n;
}

void yb_thresholds_second(const yb_interval *iv, void *ud)
{
    yb_thresholds *ts = ud;
    if (!ts->cum || ts->stopped_by >= 0)
        return;
    ts->cum_seconds = iv->t + 1;
    ts->cum_requests += iv->requests;
    ts->cum_errors += iv->errors;
    if (iv->hist) {
        yb_hdr *h = yb_hdr_decode_compressed(iv->hist, iv->hist_len);
        if (h)
            yb_hdr_add(ts->cum, h);
        yb_hdr_free(h);
    }
    for (size_t i = 0; i < ts->n; i++) {
        double v;
        if (so_far(ts, &ts->t[i], &v) && !holds(&ts->t[i], v)) {
            ts->stopped_by = (int)i;
            ts->stopped_at_s = (double)ts->cum_seconds;
            ts->stopped_measured = v;
            if (ts->stop)
                *ts->stop = YB_TH_STOPPED;
            return;
        }
    }
}

size_t yb_thresholds_eval(yb_thresholds *ts, const yb_recorder *whole, const yb_th_scope *sc,
                          size_t n)
{
    size_t failed = 0;
    for (size_t i = 0; i < ts->n; i++) {
        yb_threshold *t = &ts->t[i];
        const yb_recorder *r = whole;
        t->note[0] = 0;
        t->measured_ok = 0;
        t->measured = 0;
        t->skipped = 0;
        const yb_th_scope *own = t->scope_kind[0] ? find_scope(t, sc, n) : NULL;
        if (own && own->elsewhere) { /* not this process' part: no verdict here */
            t->skipped = t->pass = 1;
            snprintf(t->note, sizeof t->note, "%s", own->elsewhere);
            continue;
        }
        if (scope_missing(t, sc, n, t->note, sizeof t->note)) {
            r = NULL;
        } else if (t->scope_kind[0]) {
            r = own->rec;
            if (!r)
                snprintf(t->note, sizeof t->note, "no figures for %s '%s'", t->scope_kind,
                         t->scope_name);
        }
        if (r && !(t->measured_ok = yb_metric_value(&t->m, r, t->percent, &t->measured)))
            snprintf(t->note, sizeof t->note, "%s",
                     t->m.kind == YB_M_LATENCY ? "no data: no successful request went through "
                                                 "this phase"
                                               : "no data: nothing completed");
        t->pass = t->measured_ok && holds(t, t->measured);
        failed += !t->pass;
    }
    return failed;
}

/* ---- output -------------------------------------------------------------- */

static const char *unit_key(const yb_threshold *t)
{
    switch (t->m.kind) {
    case YB_M_LATENCY: return "us";
    case YB_M_ERRORS: return t->percent ? "percent" : "count";
    case YB_M_RATE: return "per_s";
    case YB_M_REQUESTS: return "count";
    }
    return "";
}

static void fmt_value(const yb_threshold *t, double v, char *buf, size_t len)
{
    switch (t->m.kind) {
    case YB_M_LATENCY: snprintf(buf, len, "%.3f ms", v / 1000.0); break;
    case YB_M_ERRORS:
        if (t->percent)
            snprintf(buf, len, "%.3f %%", v);
        else
            snprintf(buf, len, "%.0f", v);
        break;
    case YB_M_RATE: snprintf(buf, len, "%.1f/s", v); break;
    case YB_M_REQUESTS: snprintf(buf, len, "%.0f", v); break;
    }
}

int yb_thresholds_text(FILE *f, const yb_thresholds *ts, const char *label)
{
    if (!ts->n)
        return 0;
    fprintf(f, "\nThresholds%s%s:\n", label ? ", " : "", label ? label : "");
    for (size_t i = 0; i < ts->n; i++) {
        const yb_threshold *t = &ts->t[i];
        char v[64];
        if (t->measured_ok)
            fmt_value(t, t->measured, v, sizeof v);
        fprintf(f, "  %-4s  %-30s  %s%s\n", t->skipped ? "skip" : t->pass ? "pass" : "FAIL", t->expr,
                t->measured_ok ? "measured " : "", t->measured_ok ? v : t->note);
    }
    if (ts->stopped_by >= 0) {
        const yb_threshold *t = &ts->t[ts->stopped_by];
        char v[64];
        fmt_value(t, ts->stopped_measured, v, sizeof v);
        fprintf(f, "STOPPED EARLY by --abort-on-fail: '%s' failed on the first %.0f s "
                "(%s %s); the figures cover the part that ran\n",
                t->expr, ts->stopped_at_s, t->m.name, v);
    }
    return ferror(f) ? -1 : 0;
}

static const char *const OPS[] = {"<", "<=", ">", ">="};

int yb_thresholds_json(json_t *report, const yb_thresholds *ts)
{
    json_t *a = json_array();
    if (!a)
        return -1;
    int bad = 0;
    for (size_t i = 0; i < ts->n && !bad; i++) {
        const yb_threshold *t = &ts->t[i];
        /* argv need not be UTF-8, which JSON strings must be: such text is null */
        json_t *sname = t->scope_kind[0] ? json_string(t->scope_name) : NULL;
        json_t *scope = t->scope_kind[0] ? json_pack("{s:s, s:o}", "kind", t->scope_kind, "name",
                                                     sname ? sname : json_null())
                                         : json_null();
        json_t *e = json_object(), *ex = json_string(t->expr);
        bad |= !e || !scope;
        bad |= json_object_set_new(e, "expr", ex ? ex : json_null()) < 0;
        bad |= json_object_set_new(e, "scope", scope) < 0;
        bad |= json_object_set_new(e, "metric", json_string(t->m.name)) < 0;
        bad |= json_object_set_new(e, "op", json_string(OPS[t->op])) < 0;
        bad |= json_object_set_new(e, "limit", json_real(t->limit)) < 0;
        bad |= json_object_set_new(e, "measured",
                                   t->measured_ok ? json_real(t->measured) : json_null()) < 0;
        bad |= json_object_set_new(e, "unit", json_string(unit_key(t))) < 0;
        bad |= json_object_set_new(e, "pass", json_boolean(t->pass)) < 0;
        bad |= json_object_set_new(e, "skipped", json_boolean(t->skipped)) < 0;
        bad |= json_object_set_new(e, "note", t->note[0] ? json_string(t->note) : json_null()) < 0;
        bad |= json_object_set_new(e, "stopped_run", json_boolean(ts->stopped_by == (int)i)) < 0;
        bad |= json_array_append_new(a, e) < 0;
    }
    json_t *stopped = json_null();
    if (ts->stopped_by >= 0) {
        const yb_threshold *t = &ts->t[ts->stopped_by];
        json_t *ex = json_string(t->expr);
        json_decref(stopped);
        stopped = json_pack("{s:o, s:s, s:f, s:f}", "expr", ex ? ex : json_null(), "metric",
                            t->m.name, "t_s", ts->stopped_at_s, "measured", ts->stopped_measured);
    }
    if (bad || !stopped) {
        json_decref(a);
        json_decref(stopped);
        return -1;
    }
    if (json_object_set_new(report, "thresholds", a) < 0 ||
        json_object_set_new(report, "stopped_by_threshold", stopped) < 0)
        return -1;
    return 0;
}
