/* Two JSON reports side by side (see compare.h). */
#include "config.h"
#include "report/compare.h"
#include "report/reader.h"
#include "report/threshold.h"
#include "stats/recorder.h"
#include "util/json_type.h"
#include "util/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SCHEMA "yangblast-report/1"

/* ---- limits -------------------------------------------------------------- */

void yb_compare_opts_init(yb_compare_opts *o)
{
    memset(o, 0, sizeof *o);
    o->global_pct = -1;
}

/* The latency statistics a report holds, as figure suffixes and keys. */
static const struct {
    const char *stat, *key;
} STATS[] = {{"p50", "p50"}, {"p90", "p90"}, {"p99", "p99"}, {"p99.9", "p99_9"},
             {"max", "max"}, {"mean", "mean"}};
#define N_STATS (sizeof STATS / sizeof STATS[0])

/* 1 when name is a figure compare can show: rate, errors, cpu, or a
 * phase's statistic that the report holds. */
static int figure_known(const char *name)
{
    if (!strcmp(name, "rate") || !strcmp(name, "errors") || !strcmp(name, "cpu"))
        return 1;
    yb_metric m;
    if (yb_metric_parse(name, strlen(name), &m) < 0 || m.kind != YB_M_LATENCY)
        return 0;
    const char *dot = strchr(name, '.');
    for (size_t i = 0; i < N_STATS; i++)
        if (!strcmp(dot + 1, STATS[i].stat))
            return 1;
    return 0;
}

#define LIMIT_FORMS                                                                      \
    "P% (every gated figure) or FIGURE=P%, FIGURE one of rate, errors, cpu or "           \
    "PHASE.STAT with STAT p50, p90, p99, p99.9, max or mean (e.g. e2e.p99=5%)"

int yb_compare_add_limit(yb_compare_opts *o, const char *arg, char *err, size_t errlen)
{
    const char *eq = strchr(arg, '='), *val = eq ? eq + 1 : arg;
    size_t vl = strlen(val);
    double pct;
    if (vl < 2 || val[vl - 1] != '%' || yb_parse_double_n(val, vl - 1, &pct) < 0) {
        snprintf(err, errlen, "--max-regression '%s': expected %s", arg, LIMIT_FORMS);
        return -1;
    }
    if (!eq) {
        o->global_pct = pct;
        return 0;
    }
    size_t nl = (size_t)(eq - arg);
    if (o->n_per == YB_CMP_MAX_LIMITS || nl == 0 || nl >= sizeof o->per[0].name) {
        snprintf(err, errlen, "--max-regression '%s': expected %s (at most %d)", arg,
                 LIMIT_FORMS, YB_CMP_MAX_LIMITS);
        return -1;
    }
    char name[sizeof o->per[0].name];
    memcpy(name, arg, nl);
    name[nl] = 0;
    if (!figure_known(name)) {
        snprintf(err, errlen, "--max-regression '%s': no figure '%s'; expected %s", arg, name,
                 LIMIT_FORMS);
        return -1;
    }
    snprintf(o->per[o->n_per].name, sizeof o->per[0].name, "%s", name);
    o->per[o->n_per++].pct = pct;
    return 0;
}

/* ---- reading a report ---------------------------------------------------- */

int yb_compare_check(const char *path, const json_t *j, char *err, size_t errlen)
{
    if (!json_is_object(j)) {
        snprintf(err, errlen, "%s: expected a JSON object (a yangblast report), found %s", path,
                 yb_json_type_name(j));
        return -1;
    }
    json_t *schema = yb_report_member(path, j, "", "schema", JSON_STRING, err, errlen);
    if (!schema)
        return -1;
    if (strcmp(json_string_value(schema), SCHEMA)) {
        const char *s = json_string_value(schema);
        snprintf(err, errlen, "%s: schema: '%.80s' is not a run report (expected '%s'%s)", path,
                 yb_utf8_valid((const uint8_t *)s, strlen(s)) ? s : "?", SCHEMA,
                 !strcmp(s, "yangblast-experiment/1")
                     ? "; an experiment's runs are in its 'runs' array" : "");
        return -1;
    }
    static const char *const SUMMARY[] = {"rate_per_s", "requests_ok", "requests_completed",
                                          "requests_error", "duration_s"};
    json_t *run = yb_report_member(path, j, "", "run", JSON_OBJECT, err, errlen);
    json_t *sum = yb_report_member(path, j, "", "summary", JSON_OBJECT, err, errlen);
    json_t *cpu = run && sum ? yb_report_member(path, j, "", "cpu", JSON_OBJECT, err, errlen)
                             : NULL;
    json_t *lat = cpu ? yb_report_member(path, j, "", "latency_us", JSON_OBJECT, err, errlen)
                      : NULL;
    if (!lat)
        return -1;
    for (size_t i = 0; i < sizeof SUMMARY / sizeof SUMMARY[0]; i++)
        if (!yb_report_member(path, sum, "summary.", SUMMARY[i], JSON_REAL, err, errlen))
            return -1;
    if (!yb_report_member(path, cpu, "cpu.", "per_request_us", JSON_REAL, err, errlen) ||
        !yb_report_member(path, lat, "latency_us.", "e2e", JSON_OBJECT, err, errlen))
        return -1;
    /* every phase compare knows, when present */
    for (int h = 0; h < YB_H__COUNT; h++) {
        const char *name = yb_hist_name((yb_hist_id)h);
        char prefix[64];
        snprintf(prefix, sizeof prefix, "latency_us.%s.", name);
        json_t *ph = json_object_get(lat, name);
        if (!ph)
            continue;
        if (!yb_report_member(path, lat, "latency_us.", name, JSON_OBJECT, err, errlen) ||
            !yb_report_member(path, ph, prefix, "count", JSON_REAL, err, errlen))
            return -1;
        for (size_t s = 0; s < N_STATS; s++)
            if (!yb_report_member(path, ph, prefix, STATS[s].key, JSON_REAL, err, errlen))
                return -1;
    }
    json_t *intr = json_object_get(j, "interrupted");
    if (intr && !json_is_boolean(intr)) {
        snprintf(err, errlen, "%s: interrupted: expected a boolean, found %s", path,
                 yb_json_type_name(intr));
        return -1;
    }
    return 0;
}

json_t *yb_compare_load(const char *path, char *err, size_t errlen)
{
    json_t *j = yb_report_read(path, "compare", err, errlen);
    if (j && yb_compare_check(path, j, err, errlen) < 0) {
        json_decref(j);
        return NULL;
    }
    return j;
}

/* ---- the comparison ------------------------------------------------------ */

typedef struct {
    char name[48];
    const char *unit;     /* "per_s", "percent", "us" */
    int better;           /* -1: lower is better, +1: higher */
    int has_base, has_new;
    double base, new;
    double limit;         /* % worse allowed; < 0 = not gated */
    int regression;
} figure;

typedef struct {
    const char *key;      /* borrowed from base or new */
    const json_t *b, *n;  /* NULL when absent */
    int unlike;
} setting;

struct yb_comparison {
    const char *bn, *nn;
    const json_t *brun, *nrun;
    figure *f;
    size_t n, cap;
    setting *s;
    size_t ns;
    char warn[8][400];
    size_t nwarn;
    int gated;            /* any limit given */
};

/* Settings that name the same load in another place or words: listed when
 * they differ, but the runs stay alike (a corpus is compared by its file
 * name: the same corpus may live in another directory). */
static int informational(const char *key, const json_t *b, const json_t *n)
{
    if (!strcmp(key, "target") || !strcmp(key, "unit") || !strcmp(key, "max_errors"))
        return 1;
    if (!strcmp(key, "corpus") && json_is_string(b) && json_is_string(n)) {
        const char *x = strrchr(json_string_value(b), '/'), *y = strrchr(json_string_value(n), '/');
        x = x ? x + 1 : json_string_value(b);
        y = y ? y + 1 : json_string_value(n);
        return !strcmp(x, y);
    }
    return 0;
}

static int add_setting(yb_comparison *c, const char *key, const json_t *b, const json_t *n)
{
    if (b && n && json_equal((json_t *)b, (json_t *)n))
        return 0;
    setting *s = realloc(c->s, (c->ns + 1) * sizeof *s);
    if (!s)
        return -1;
    c->s = s;
    s[c->ns++] = (setting){key, b, n, !informational(key, b, n)};
    return 0;
}

static double limit_for(const yb_compare_opts *o, const char *name, int gated_by_default)
{
    for (size_t i = o->n_per; i-- > 0;)
        if (!strcmp(o->per[i].name, name))
            return o->per[i].pct;
    return gated_by_default ? o->global_pct : -1;
}

/* The relative change in %, new over base; INFINITY when base is 0 and
 * new is not. */
static double rel_pct(double base, double new)
{
    if (base == new)
        return 0;
    if (base == 0)
        return new > 0 ? INFINITY : -INFINITY;
    return (new - base) * 100.0 / base;
}

static int add_figure(yb_comparison *c, const yb_compare_opts *o, const char *name,
                      const char *unit, int better, int gated, int hb, double b, int hn,
                      double n)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        figure *f = realloc(c->f, cap * sizeof *f);
        if (!f)
            return -1;
        c->f = f;
        c->cap = cap;
    }
    figure *f = &c->f[c->n++];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    f->unit = unit;
    f->better = better;
    f->has_base = hb;
    f->has_new = hn;
    f->base = b;
    f->new = n;
    f->limit = limit_for(o, name, gated);
    if (f->limit >= 0 && hb && hn)
        f->regression = rel_pct(b, n) * -better > f->limit;
    return 0;
}

static double num1(const json_t *j, const char *key)
{
    return json_number_value(json_object_get(j, key));
}

static double num_at(const json_t *j, const char *a, const char *b)
{
    return json_number_value(json_object_get(json_object_get(j, a), b));
}

static double error_pct(const json_t *j)
{
    double done = num_at(j, "summary", "requests_completed");
    return done > 0 ? num_at(j, "summary", "requests_error") * 100.0 / done : 0;
}

yb_comparison *yb_compare_new(const json_t *base, const json_t *new, const char *base_name,
                              const char *new_name, const yb_compare_opts *o)
{
    yb_comparison *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->bn = base_name;
    c->nn = new_name;
    c->brun = json_object_get(base, "run");
    c->nrun = json_object_get(new, "run");
    c->gated = o->global_pct >= 0 || o->n_per > 0;
    const char *key;
    json_t *v;
    int bad = 0;
    json_object_foreach((json_t *)c->brun, key, v)
        bad |= add_setting(c, key, v, json_object_get(c->nrun, key)) < 0;
    json_object_foreach((json_t *)c->nrun, key, v)
        if (!json_object_get(c->brun, key))
            bad |= add_setting(c, key, NULL, v) < 0;
    /* the I/O path (cpu.io) changes the CPU and latency figures too; a
     * report from before it was recorded says nothing, which is no change */
    const json_t *bio = json_object_get(json_object_get(base, "cpu"), "io"),
                 *nio = json_object_get(json_object_get(new, "cpu"), "io");
    if (bio && nio)
        bad |= add_setting(c, "io", bio, nio) < 0;
    const json_t *side[2] = {base, new};
    const char *names[2] = {base_name, new_name};
    for (int i = 0; i < 2; i++) {
        if (json_is_true(json_object_get(side[i], "interrupted")))
            snprintf(c->warn[c->nwarn++], sizeof c->warn[0], "%s %s was interrupted: its "
                     "figures cover part of a run", i ? "NEW" : "BASE", names[i]);
        else if (json_is_object(json_object_get(side[i], "stopped_by_threshold")))
            snprintf(c->warn[c->nwarn++], sizeof c->warn[0], "%s %s was stopped early by "
                     "--abort-on-fail: its figures cover part of a run", i ? "NEW" : "BASE",
                     names[i]);
        /* the instrument's check on itself: the generator, not the target,
         * may be what changed */
        const json_t *sc = json_object_get(side[i], "self_check");
        static const char *const SC[][2] = {
            {"behind_schedule", "its generator was behind schedule"},
            {"cpu_saturated", "its generator was CPU-saturated"},
            {"cpu_starved", "its generator was starved of CPU by other processes"}};
        for (size_t k = 0; k < sizeof SC / sizeof SC[0]; k++)
            if (json_is_true(json_object_get(sc, SC[k][0])))
                snprintf(c->warn[c->nwarn++], sizeof c->warn[0], "%s %s: %s (self_check.%s): "
                         "its latencies may be the generator's", i ? "NEW" : "BASE", names[i],
                         SC[k][1], SC[k][0]);
    }

    bad |= add_figure(c, o, "rate", "per_s", +1, 1, 1, num_at(base, "summary", "rate_per_s"),
                      1, num_at(new, "summary", "rate_per_s")) < 0;
    bad |= add_figure(c, o, "errors", "percent", -1, 1, 1, error_pct(base), 1,
                      error_pct(new)) < 0;
    const json_t *bl = json_object_get(base, "latency_us"), *nl = json_object_get(new, "latency_us");
    for (int h = 0; h < YB_H__COUNT && !bad; h++) {
        const char *ph = yb_hist_name((yb_hist_id)h);
        const json_t *bp = json_object_get(bl, ph), *np = json_object_get(nl, ph);
        int hb = bp && num_at(bl, ph, "count") > 0, hn = np && num_at(nl, ph, "count") > 0;
        if (!hb && !hn)
            continue; /* a phase neither run went through */
        for (size_t s = 0; s < N_STATS; s++) {
            char name[48];
            snprintf(name, sizeof name, "%s.%s", ph, STATS[s].stat);
            /* end-to-end is what users feel: gated by the global limit
             * (but its max, a single request); other phases when named */
            int gated = h == YB_H_E2E && strcmp(STATS[s].stat, "max");
            bad |= add_figure(c, o, name, "us", -1, gated, hb, hb ? num1(bp, STATS[s].key) : 0, hn,
                              hn ? num1(np, STATS[s].key) : 0) < 0;
        }
    }
    bad |= add_figure(c, o, "cpu", "us", -1, 0, 1, num_at(base, "cpu", "per_request_us"), 1,
                      num_at(new, "cpu", "per_request_us")) < 0;
    if (bad) {
        yb_compare_free(c);
        return NULL;
    }
    return c;
}

/* A setting's value as text, into buf. */
static const char *setting_text(const json_t *v, char *buf, size_t len)
{
    if (!v)
        return "(absent)";
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        snprintf(buf, len, "%s", yb_utf8_valid((const uint8_t *)s, strlen(s)) ? s : "?");
        return buf;
    }
    char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    snprintf(buf, len, "%s", t ? t : "?");
    free(t);
    return buf;
}

size_t yb_compare_unlike(const yb_comparison *c, char *buf, size_t len)
{
    size_t n = 0, used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < c->ns; i++) {
        if (!c->s[i].unlike)
            continue;
        char b[96], v[96];
        int w = snprintf(buf + used, len - used, "%s%s: %s vs %s", n ? "; " : "", c->s[i].key,
                         setting_text(c->s[i].b, b, sizeof b), setting_text(c->s[i].n, v, sizeof v));
        n++;
        if (w > 0)
            used += (size_t)w < len - used ? (size_t)w : len - used - 1;
    }
    return n;
}

size_t yb_compare_regressions(const yb_comparison *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        n += c->f[i].regression;
    return n;
}

/* ---- output -------------------------------------------------------------- */

/* A figure's value in the text's unit (ms for latency). */
static double shown(const figure *f, double v)
{
    return !strcmp(f->unit, "us") && strcmp(f->name, "cpu") ? v / 1000.0 : v;
}

static const char *shown_unit(const figure *f)
{
    if (!strcmp(f->name, "cpu"))
        return "us/req";
    return !strcmp(f->unit, "us") ? "ms" : !strcmp(f->unit, "percent") ? "%" : "/s";
}

int yb_compare_text(FILE *f, const yb_comparison *c)
{
    char b[96], v[96], unlike[1024];
    fprintf(f, "BASE %s\nNEW  %s\n", c->bn, c->nn);
    if (c->ns) {
        fprintf(f, "\nSettings that differ:\n");
        for (size_t i = 0; i < c->ns; i++)
            fprintf(f, "  %-20s %-28s %-28s%s\n", c->s[i].key, setting_text(c->s[i].b, b, sizeof b),
                    setting_text(c->s[i].n, v, sizeof v), c->s[i].unlike ? "  (unlike)" : "");
    }
    if (yb_compare_unlike(c, unlike, sizeof unlike))
        fprintf(f, "WARNING: unlike runs (%s): the deltas below mix the change under test with "
                "these\n", unlike);
    for (size_t i = 0; i < c->nwarn; i++)
        fprintf(f, "WARNING: %s\n", c->warn[i]);
    fprintf(f, "\n%-24s %12s %12s %12s %9s  %-6s  %6s  %s\n", "figure", "base", "new", "delta",
            "delta%", "better", "limit", "verdict");
    for (size_t i = 0; i < c->n; i++) {
        const figure *x = &c->f[i];
        char name[64], bs[24] = "-", ns[24] = "-", ds[24] = "-", rs[24] = "-", ls[16] = "-";
        snprintf(name, sizeof name, "%s (%s)", x->name, shown_unit(x));
        int prec = !strcmp(x->unit, "per_s") ? 1 : 3;
        if (x->has_base)
            snprintf(bs, sizeof bs, "%.*f", prec, shown(x, x->base));
        if (x->has_new)
            snprintf(ns, sizeof ns, "%.*f", prec, shown(x, x->new));
        if (x->has_base && x->has_new) {
            double r = rel_pct(x->base, x->new);
            snprintf(ds, sizeof ds, "%+.*f", prec, shown(x, x->new) - shown(x, x->base));
            if (isinf(r))
                snprintf(rs, sizeof rs, "%s", r > 0 ? "+inf" : "-inf");
            else
                snprintf(rs, sizeof rs, "%+.1f%%", r);
        }
        if (x->limit >= 0)
            snprintf(ls, sizeof ls, "%g%%", x->limit);
        fprintf(f, "%-30s %12s %12s %12s %9s  %-6s  %6s  %s\n", name, bs, ns, ds, rs,
                x->better > 0 ? "higher" : "lower", ls,
                x->regression ? "REGRESSION" : x->limit >= 0 && x->has_base && x->has_new ? "ok"
                                                                                        : "-");
    }
    size_t nr = yb_compare_regressions(c);
    if (!c->gated)
        fprintf(f, "\nNo --max-regression given: nothing is gated.\n");
    else if (nr)
        fprintf(f, "\n%zu REGRESSION%s beyond the limits (latency and errors up, rate down)\n", nr,
                nr > 1 ? "S" : "");
    else
        fprintf(f, "\nNo regression beyond the limits.\n");
    return ferror(f) ? -1 : 0;
}

static json_t *jnum_or_null(int has, double v)
{
    return has && isfinite(v) ? json_real(v) : json_null();
}

static json_t *jside(const char *file, const json_t *run)
{
    json_t *fs = json_string(file);
    return json_pack("{s:o, s:O}", "file", fs ? fs : json_null(), "run", (json_t *)run);
}

json_t *yb_compare_json(const yb_comparison *c)
{
    json_t *top = json_object(), *settings = json_array(), *figs = json_array(),
           *warns = json_array();
    char unlike[1024];
    int bad = !top || !settings || !figs || !warns;
    for (size_t i = 0; i < c->ns && !bad; i++) {
        json_t *e = json_pack("{s:s, s:O?, s:O?, s:b}", "key", c->s[i].key, "base",
                              (json_t *)c->s[i].b, "new", (json_t *)c->s[i].n, "unlike",
                              c->s[i].unlike);
        bad |= json_array_append_new(settings, e) < 0;
    }
    for (size_t i = 0; i < c->n && !bad; i++) {
        const figure *x = &c->f[i];
        int both = x->has_base && x->has_new;
        double r = both ? rel_pct(x->base, x->new) : 0;
        json_t *e = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:b}", "figure", x->name,
                              "unit", x->unit, "better", x->better > 0 ? "higher" : "lower",
                              "base", jnum_or_null(x->has_base, x->base), "new",
                              jnum_or_null(x->has_new, x->new), "delta",
                              jnum_or_null(both, x->new - x->base), "delta_pct",
                              jnum_or_null(both, r), "limit_pct",
                              jnum_or_null(x->limit >= 0, x->limit), "regression",
                              x->regression);
        bad |= json_array_append_new(figs, e) < 0;
    }
    for (size_t i = 0; i < c->nwarn && !bad; i++)
        bad |= json_array_append_new(warns, json_string(c->warn[i])) < 0;
    if (!bad) {
        bad |= json_object_set_new(top, "schema", json_string("yangblast-compare/1")) < 0;
        bad |= json_object_set_new(top, "base", jside(c->bn, c->brun)) < 0;
        bad |= json_object_set_new(top, "new", jside(c->nn, c->nrun)) < 0;
        bad |= json_object_set_new(top, "unlike",
                                   json_boolean(yb_compare_unlike(c, unlike, sizeof unlike))) < 0;
        bad |= json_object_set(top, "settings_differ", settings) < 0;
        bad |= json_object_set(top, "warnings", warns) < 0;
        bad |= json_object_set(top, "figures", figs) < 0;
        bad |= json_object_set_new(top, "regressions",
                                   json_integer((json_int_t)yb_compare_regressions(c))) < 0;
    }
    json_decref(settings);
    json_decref(figs);
    json_decref(warns);
    if (bad) {
        json_decref(top);
        return NULL;
    }
    return top;
}

void yb_compare_free(yb_comparison *c)
{
    if (!c)
        return;
    free(c->f);
    free(c->s);
    free(c);
}
