/* run --plan FILE: the plan file, its workloads as fleets of pairs, and
 * the per-workload report (see plan.h). */
#include "config.h"
#include "cli/plan.h"
#include "cli/cli.h"
#include "engine/inventory.h"
#include "report/report.h"
#include "util/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static const yb_ytree_limits LIMITS = {"a plan", YB_PLAN_MAX_BYTES, 8, 100000, 4096};

/* What messages call the place being read (kept for yb_cli_where). */
static char where_buf[600];

typedef struct {
    const char *cmd;
    const char *file;
    size_t dirlen;          /* of file's directory, for relative paths (0 = none) */
} pctx;

static int perr(const pctx *c, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int perr(const pctx *c, unsigned line, const char *fmt, ...)
{
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    yb_cli_where(NULL);
    yb_usage_error(c->cmd, "%s:%u: %s", c->file, line, msg);
    return YB_EXIT_USAGE;
}

/* Sets where checks shared with the command line say they are. */
static void set_where(const pctx *c, unsigned line, const char *what, const char *wname)
{
    snprintf(where_buf, sizeof where_buf, "%s:%u: %s '%s'", c->file, line, what, wname);
    yb_cli_where(where_buf);
}

/* A path as written, relative to the plan's directory; kept in w. */
static const char *resolve(const pctx *c, yb_plan_workload *w, const char *path)
{
    if (path[0] == '/' || !c->dirlen)
        return path;
    if (w->n_owned == (int)(sizeof w->owned / sizeof w->owned[0]))
        return NULL;
    size_t l = c->dirlen + 1 + strlen(path) + 1;
    char *s = malloc(l);
    if (!s)
        return NULL;
    snprintf(s, l, "%.*s/%s", (int)c->dirlen, c->file, path);
    w->owned[w->n_owned++] = s;
    return s;
}

static int valid_name(const char *s)
{
    size_t n = strlen(s);
    if (!n || n > 64)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '_' || *s == '-'))
            return 0;
    return 1;
}

/* Keys of a mapping: plain names, each once. */
static int check_keys(const pctx *c, const yb_ynode *m, const char *in)
{
    for (size_t i = 0; i + 1 < m->n; i += 2) {
        const yb_ynode *k = m->kid[i];
        if (k->type != YB_YN_SCALAR || yb_ynode_is_null(k))
            return perr(c, k->line, "%s: a key must be a name", in);
        for (size_t j = 0; j < i; j += 2)
            if (!strcmp(m->kid[j]->s, k->s))
                return perr(c, k->line, "key '%s' %s: given twice (first at line %u)", k->s, in,
                            m->kid[j]->line);
    }
    return 0;
}

static int scalar(const pctx *c, const yb_ynode *k, const yb_ynode *v, const char *in)
{
    if (v->type != YB_YN_SCALAR || yb_ynode_is_null(v))
        return perr(c, v->line, "key '%s' %s: expected a value", k->s, in);
    return 0;
}

/* ---- synth: the keys of `synth acl` / `synth gnmi`, as its options ------ */

/* Plan key -> synth option; kind is the workload (acl or gnmi). */
static const char *const SYNTH_KEYS[][2] = {
    {"protocol", "--proto"},     {"op", "--op"},         {"count", "--count"},
    {"rules", "--rules"},        {"seed", "--seed"},     {"method", "--method"},
    {"mode", "--mode"},          {"sample-interval", "--sample-interval"},
    {"polls", "--polls"},        {"name-prefix", "--name-prefix"},
    {"authority", "--authority"}, {"scheme", "--scheme"},
    {"set-request", "--set-request"}, {"encoding", "--encoding"},
};
#define N_SYNTH_KEYS (sizeof SYNTH_KEYS / sizeof SYNTH_KEYS[0])

static int read_synth(const pctx *c, const yb_ynode *k, const yb_ynode *v, yb_plan_workload *w)
{
    char in[100];
    snprintf(in, sizeof in, "in synth of workload '%s'", w->name);
    if (v->type != YB_YN_MAP)
        return perr(c, v->line, "key 'synth' in workload '%s': expected a mapping (kind, "
                    "protocol, op, count, ...)", w->name);
    int rc = check_keys(c, v, in);
    if (rc)
        return rc;
    const yb_ynode *kind = yb_ynode_get(v, "kind");
    w->synth_line = k->line;
    w->synth_argv[w->synth_argc++] = "synth";
    w->synth_argv[w->synth_argc++] = kind ? kind->s : "acl";
    if (kind && (kind->type != YB_YN_SCALAR || (strcmp(kind->s, "acl") && strcmp(kind->s, "gnmi"))))
        return perr(c, kind->line, "key 'kind' %s: expected acl or gnmi", in);
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        const yb_ynode *sk = v->kid[i], *sv = v->kid[i + 1];
        if (!strcmp(sk->s, "kind"))
            continue;
        size_t j = 0;
        while (j < N_SYNTH_KEYS && strcmp(SYNTH_KEYS[j][0], sk->s))
            j++;
        if (j == N_SYNTH_KEYS)
            return perr(c, sk->line, "unknown key '%s' %s (known: kind, protocol, op, count, "
                        "rules, seed, method, mode, sample-interval, polls, name-prefix, "
                        "authority, scheme, set-request, encoding)", sk->s, in);
        if ((rc = scalar(c, sk, sv, in)))
            return rc;
        const char *val = sv->s;
        if (!strcmp(sk->s, "op") && !strcmp(val, "set"))
            val = "create"; /* a gNMI Set update, as `synth acl --op create` */
        if (!strcmp(sk->s, "set-request") && !(val = resolve(c, w, val)))
            return perr(c, sv->line, "out of memory");
        w->synth_argv[w->synth_argc++] = (char *)SYNTH_KEYS[j][1];
        w->synth_argv[w->synth_argc++] = (char *)val;
    }
    /* -o FILE comes when the plan is prepared */
    int l = snprintf(w->source, sizeof w->source, "synth");
    for (int i = 1; i < w->synth_argc && l > 0 && (size_t)l < sizeof w->source; i++)
        l += snprintf(w->source + l, sizeof w->source - (size_t)l, " %s", w->synth_argv[i]);
    return 0;
}

/* ---- one workload ---------------------------------------------------------- */

static int read_targets(const pctx *c, const yb_ynode *k, const yb_ynode *v, yb_plan_workload *w)
{
    const yb_ynode *const *items = &v;
    size_t n = 1;
    if (v->type == YB_YN_SEQ) {
        items = (const yb_ynode *const *)v->kid;
        n = v->n;
    }
    if (!n || n > YB_PLAN_MAX_TARGETS)
        return perr(c, v->line, "key 'targets' in workload '%s': expected a target name or URL, "
                    "or a list of 1 to %d", w->name, YB_PLAN_MAX_TARGETS);
    for (size_t i = 0; i < n; i++) {
        const yb_ynode *t = items[i];
        if (t->type != YB_YN_SCALAR || yb_ynode_is_null(t))
            return perr(c, t->line, "key 'targets' in workload '%s': expected a target name "
                        "(from --targets) or a URL", w->name);
        int url = strstr(t->s, "://") != NULL;
        if (i && url != w->urls)
            return perr(c, t->line, "key 'targets' in workload '%s': '%s': a workload's targets "
                        "are all inventory names or all URLs", w->name, t->s);
        w->urls = url;
        for (size_t j = 0; j < w->n_tnames; j++)
            if (!strcmp(w->tnames[j], t->s))
                return perr(c, t->line, "key 'targets' in workload '%s': '%s' given twice",
                            w->name, t->s);
        w->tlines[w->n_tnames] = t->line;
        w->tnames[w->n_tnames++] = t->s;
    }
    if (w->urls && n > 2)
        return perr(c, k->line, "key 'targets' in workload '%s': at most two URLs (an http(s):// "
                    "and a grpc(s):// one: a mixed corpus' records go by protocol); several "
                    "switches go in an inventory (--targets FILE)", w->name);
    return 0;
}

/* Applies option key k: v (YB_RO_PLAN) to w's options.  Returns 0 or
 * YB_EXIT_USAGE with the message printed. */
static int apply_option(const pctx *c, int id, const yb_ynode *k, const yb_ynode *v,
                        yb_plan_workload *w, const char *in)
{
    int rc = scalar(c, k, v, in);
    if (rc)
        return rc;
    if (id == YB_RO_TLS_RESUME) { /* a flag on the command line: true or false here */
        if (!strcasecmp(v->s, "false") || !strcasecmp(v->s, "no") || !strcasecmp(v->s, "off"))
            return 0;
        if (strcasecmp(v->s, "true") && strcasecmp(v->s, "yes") && strcasecmp(v->s, "on"))
            return perr(c, v->line, "key '%s' %s: expected true or false", k->s, in);
    }
    snprintf(where_buf, sizeof where_buf, "%s:%u: key '%s' %s", c->file, v->line, k->s, in);
    yb_cli_where(where_buf);
    rc = yb_runopts_apply(YB_RO_PLAN, c->cmd, id, id == YB_RO_TLS_RESUME ? NULL : v->s, &w->ro);
    yb_cli_where(NULL);
    return rc ? YB_EXIT_USAGE : 0;
}

/* Applies every key of m (a workload, or the defaults when w->name is "")
 * to w. */
static int read_keys(const pctx *c, const yb_ynode *m, yb_plan_workload *w, int defaults)
{
    char in[100];
    if (defaults)
        snprintf(in, sizeof in, "in defaults");
    else
        snprintf(in, sizeof in, "in workload '%s'", w->name);
    int rc = check_keys(c, m, in);
    if (rc)
        return rc;
    for (size_t i = 0; i + 1 < m->n; i += 2) {
        const yb_ynode *k = m->kid[i], *v = m->kid[i + 1];
        int id = yb_runopts_id(YB_RO_PLAN, k->s);
        if (id >= 0 && v->type == YB_YN_SEQ && yb_runopts_repeatable(id)) {
            /* a rule per item, in order (after the defaults' own) */
            if (!v->n)
                rc = perr(c, v->line, "key '%s' %s: expected a value or a list of values",
                          k->s, in);
            for (size_t j = 0; j < v->n && !rc; j++)
                rc = apply_option(c, id, k, v->kid[j], w, in);
        } else if (id >= 0) {
            rc = apply_option(c, id, k, v, w, in);
        } else if (!strcmp(k->s, "name")) {
            rc = 0; /* read first */
        } else if (!strcmp(k->s, "start")) {
            if (!(rc = scalar(c, k, v, in)) && yb_parse_duration(v->s, &w->start_ns) < 0)
                rc = perr(c, v->line, "key 'start' %s: '%s': expected " YB_FORMS_DURATION, in,
                          v->s);
        } else if (!defaults && !strcmp(k->s, "corpus")) {
            if ((rc = scalar(c, k, v, in)))
                return rc;
            if (!(w->corpus = resolve(c, w, v->s)))
                return perr(c, v->line, "out of memory");
            snprintf(w->source, sizeof w->source, "%s", v->s);
        } else if (!defaults && !strcmp(k->s, "synth")) {
            rc = read_synth(c, k, v, w);
        } else if (!strcmp(k->s, "targets")) {
            w->n_tnames = 0; /* a workload's own replace the defaults' */
            rc = read_targets(c, k, v, w);
        } else {
            rc = perr(c, k->line, "unknown key '%s' %s (known: name, corpus, synth, targets, "
                      "start, and the load and session options: requests, duration, "
                      "concurrency, streams, subscriptions, rate, timing, speed, spin, "
                      "max-backlog, max-backlog-bytes, sessions, tls-resume, timeout, max-body, "
                      "accept, "
                      "accept-grpc, expect, and the rewrites: rewrite-path, set-header, "
                      "drop-header, rewrite-body, map-authority)", k->s, in);
        }
        if (rc)
            return rc;
    }
    return 0;
}

static int read_workload(const pctx *c, const yb_ynode *m, const yb_ynode *defaults,
                         const yb_runopts *base, yb_planfile *pf, size_t idx)
{
    yb_plan_workload *w = &pf->w[idx];
    char label[32];
    snprintf(label, sizeof label, "#%zu", idx + 1);
    w->line = m->line;
    if (m->type != YB_YN_MAP)
        return perr(c, m->line, "workload %s: expected a mapping (name, corpus or synth, "
                    "targets, start, rate, ...)", label);
    const yb_ynode *nm = yb_ynode_get(m, "name");
    if (!nm)
        return perr(c, m->line, "workload %s has no key 'name'", label);
    if (nm->type != YB_YN_SCALAR || !valid_name(nm->s))
        return perr(c, nm->line, "key 'name' in workload %s: '%s': expected 1 to 64 of A-Z a-z "
                    "0-9 . _ -", label, nm->type == YB_YN_SCALAR ? nm->s : "");
    for (size_t j = 0; j < idx; j++)
        if (!strcmp(pf->w[j].name, nm->s))
            return perr(c, nm->line, "key 'name': duplicate workload name '%s' (first at line "
                        "%u)", nm->s, pf->w[j].line);
    snprintf(w->name, sizeof w->name, "%s", nm->s);
    yb_runopts_copy(&w->ro, base);
    int rc;
    if (defaults && (rc = read_keys(c, defaults, w, 1)))
        return rc;
    if ((rc = read_keys(c, m, w, 0)))
        return rc;
    const yb_ynode *cp = yb_ynode_get(m, "corpus"), *sy = yb_ynode_get(m, "synth");
    if (!cp && !sy)
        return perr(c, m->line, "workload '%s' has neither 'corpus' nor 'synth'", w->name);
    if (cp && sy)
        return perr(c, sy->line, "key 'synth' in workload '%s': a workload has a corpus or a "
                    "synth spec, not both (corpus at line %u)", w->name, cp->line);
    return 0;
}

int yb_planfile_parse(const char *cmd, const char *name, const uint8_t *buf, size_t len,
                      const yb_runopts *base, yb_planfile *pf)
{
    const char *slash = strrchr(name, '/');
    pctx c = {cmd, name, slash ? (size_t)(slash - name) : 0};
    if (slash == name)
        c.dirlen = 1;
    char err[600];
    memset(pf, 0, sizeof *pf);
    pf->path = name;
    if (yb_ytree_parse(name, buf, len, &LIMITS, &pf->root, err, sizeof err) < 0) {
        yb_usage_error(cmd, "%s", err);
        return YB_EXIT_USAGE;
    }
    const yb_ynode *root = pf->root, *ws = NULL, *defaults = NULL;
    int rc;
    if (!root || root->type != YB_YN_MAP) {
        rc = perr(&c, root ? root->line : 1, "expected a mapping with key 'workloads' (a list "
                  "of workloads)");
        goto fail;
    }
    if ((rc = check_keys(&c, root, "at the top level")))
        goto fail;
    for (size_t i = 0; i + 1 < root->n; i += 2)
        if (strcmp(root->kid[i]->s, "workloads") && strcmp(root->kid[i]->s, "defaults")) {
            rc = perr(&c, root->kid[i]->line, "unknown key '%s' at the top level (known: "
                      "defaults, workloads)", root->kid[i]->s);
            goto fail;
        }
    ws = yb_ynode_get(root, "workloads");
    defaults = yb_ynode_get(root, "defaults");
    if (!ws || ws->type != YB_YN_SEQ || !ws->n || ws->n > YB_PLAN_MAX_WORKLOADS) {
        rc = perr(&c, ws ? ws->line : root->line, "key 'workloads': expected a list of 1 to %d "
                  "workloads", YB_PLAN_MAX_WORKLOADS);
        goto fail;
    }
    if (defaults && defaults->type != YB_YN_MAP) {
        rc = perr(&c, defaults->line, "key 'defaults': expected a mapping of workload keys");
        goto fail;
    }
    if (defaults) /* keys only a workload can have */
        for (size_t i = 0; i + 1 < defaults->n; i += 2)
            if (!strcmp(defaults->kid[i]->s, "name") || !strcmp(defaults->kid[i]->s, "corpus") ||
                !strcmp(defaults->kid[i]->s, "synth")) {
                rc = perr(&c, defaults->kid[i]->line, "key '%s' in defaults: belongs to one "
                          "workload", defaults->kid[i]->s);
                goto fail;
            }
    if (!(pf->w = calloc(ws->n, sizeof *pf->w))) {
        rc = perr(&c, ws->line, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < ws->n; i++) {
        pf->n = i + 1;
        if ((rc = read_workload(&c, ws->kid[i], defaults, base, pf, i)))
            goto fail;
    }
    return 0;
fail:
    yb_cli_where(NULL);
    yb_planfile_free(pf);
    return rc;
}

/* ---- preparing the run --------------------------------------------------------- */

/* Synthesizes w's corpus into the plan's directory with `synth`'s own
 * code (its checks, its messages). */
static int synthesize(const pctx *c, yb_planfile *pf, yb_plan_workload *w, size_t idx)
{
    if (!pf->tmpdir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(pf->tmpdir, sizeof pf->tmpdir, "%s/yangblast-plan-XXXXXX",
                 tmp && *tmp && strlen(tmp) < 200 ? tmp : "/tmp");
        if (!mkdtemp(pf->tmpdir)) {
            pf->tmpdir[0] = 0;
            return perr(c, w->synth_line, "cannot create a directory for the synthesized "
                        "corpora: %s", strerror(errno));
        }
    }
    char out[300];
    snprintf(out, sizeof out, "%s/w%zu.ybc", pf->tmpdir, idx);
    if (!(w->owned[w->n_owned++] = strdup(out)))
        return perr(c, w->synth_line, "out of memory");
    w->corpus = w->owned[w->n_owned - 1];
    char *argv[52];
    int argc = 0;
    for (int i = 0; i < w->synth_argc; i++)
        argv[argc++] = w->synth_argv[i];
    argv[argc++] = "-o";
    argv[argc++] = (char *)w->corpus;
    argv[argc] = NULL;
    snprintf(where_buf, sizeof where_buf, "%s:%u: key 'synth' in workload '%s'", c->file,
             w->synth_line, w->name);
    yb_cli_where(where_buf);
    int rc = yb_cmd_synth(argc, argv);
    yb_cli_where(NULL);
    return rc ? YB_EXIT_USAGE : 0;
}

/* Checks that the names w gives are inventory targets (inv may be empty). */
static int check_names(const pctx *c, const yb_plan_workload *w, const yb_inventory *inv,
                       const char *inv_path)
{
    for (size_t i = 0; i < w->n_tnames && !w->urls; i++) {
        if (!inv_path)
            return perr(c, w->tlines[i], "key 'targets' in workload '%s': '%s' is not a URL, "
                        "and no inventory names targets (--targets FILE)", w->name,
                        w->tnames[i]);
        if (!yb_inventory_find(inv, w->tnames[i]))
            return perr(c, w->tlines[i], "key 'targets' in workload '%s': unknown target '%s' "
                        "(not in %s)", w->name, w->tnames[i], inv_path);
    }
    return 0;
}

/* The workload's load model, its targets, its fleet. */
static int prepare_workload(const pctx *c, yb_planfile *pf, size_t idx, const yb_runopts *base)
{
    yb_plan_workload *w = &pf->w[idx];
    yb_runopts *r = &w->ro;
    int rc;
    if (w->synth_argc && (rc = synthesize(c, pf, w, idx)))
        return rc;
    struct stat st;
    if (!w->synth_argc && stat(w->corpus, &st) < 0) {
        const yb_ynode *m = pf->root ? yb_ynode_get(pf->root, "workloads") : NULL;
        const yb_ynode *cp = m && idx < m->n ? yb_ynode_get(m->kid[idx], "corpus") : NULL;
        return perr(c, cp ? cp->line : w->line, "key 'corpus' in workload '%s': cannot read "
                    "'%s': %s", w->name, w->corpus, strerror(errno));
    }
    r->o.corpus_path = w->corpus;
    r->o.start_ns = w->start_ns;
    set_where(c, w->line, "workload", w->name);
    if ((rc = yb_runopts_load_model(c->cmd, r)) || (rc = yb_check_shared(c->cmd, r)))
        goto out;
    /* its rewrite rules, tried on each of its records now (every pair
     * gets them with r->o) */
    if ((rc = yb_runopts_rewrite(c->cmd, r, &r->o)))
        goto out;
    /* its targets: those it names, else the command line's */
    r->fan_out = 0;
    r->pick = NULL;
    r->n_pick = 0;
    if (w->n_tnames && w->urls) {
        r->inventory = NULL;
        r->n_targets = w->n_tnames;
        r->target = w->tnames[0];
        for (size_t i = 0; i < w->n_tnames; i++)
            r->targets[i] = w->tnames[i];
    } else if (base->inventory) {
        r->fan_out = 1;
        if (w->n_tnames) {
            r->pick = w->tnames;
            r->n_pick = w->n_tnames;
        }
    } else if (!base->n_targets) {
        rc = yb_usage_error(c->cmd, "has no targets: give 'targets:' (URLs, or names with "
                            "--targets FILE), or --target URL / --targets FILE for every "
                            "workload");
        goto out;
    }
    if ((rc = yb_fleet_prepare(c->cmd, r, &w->fleet)))
        goto out;
    /* what the workload says of its load wins over an inventory target's
     * concurrency and rate: 100 subscriptions are 100 on every target */
    for (size_t k = 0; k < w->fleet.n; k++) {
        yb_engine_opts *o = &w->fleet.o[k];
        if (r->given['c'] || r->subscriptions)
            o->concurrency = r->o.concurrency;
        if (r->rate)
            o->sched = r->o.sched;
    }
    if (r->subscriptions && strcmp(w->fleet.proto, "gnmi"))
        rc = yb_usage_error(c->cmd, "subscriptions hold gNMI Subscribe calls open, but its "
                            "source is a %s corpus", w->fleet.proto);
out:
    yb_cli_where(NULL);
    return rc;
}

/* Index of the distinct target labelled label in pf->targets (added when new). */
static size_t target_index(yb_planfile *pf, const char *label, const char *url)
{
    yb_fleet *t = &pf->targets;
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->label[i], label))
            return i;
    snprintf(t->label[t->n], sizeof t->label[t->n], "%s", label);
    t->url[t->n] = url;
    return t->n++;
}

/* The plan's pairs in workload order, and the distinct targets. */
static int index_pairs(const pctx *c, yb_planfile *pf)
{
    size_t n = 0;
    for (size_t i = 0; i < pf->n; i++)
        n += pf->w[i].fleet.n;
    if (n > YB_PLAN_MAX_PAIRS)
        return perr(c, 1, "%zu (workload, target) pairs: a plan runs at most %d", n,
                    YB_PLAN_MAX_PAIRS);
    yb_fleet *t = &pf->targets;
    pf->pair_rec = calloc(n, sizeof *pf->pair_rec);
    pf->pair_wl = calloc(n, sizeof *pf->pair_wl);
    pf->pair_tgt = calloc(n, sizeof *pf->pair_tgt);
    t->label = calloc(n, sizeof *t->label);
    t->url = calloc(n, sizeof *t->url);
    t->rec = calloc(n, sizeof *t->rec);
    if (!pf->pair_rec || !pf->pair_wl || !pf->pair_tgt || !t->label || !t->url || !t->rec)
        return perr(c, 1, "out of memory");
    t->cap = n;
    const char *proto = NULL;
    for (size_t i = 0; i < pf->n; i++) {
        yb_plan_workload *w = &pf->w[i];
        if (proto && strcmp(proto, w->fleet.proto))
            proto = "mixed";
        else if (!proto)
            proto = w->fleet.proto;
        for (size_t k = 0; k < w->fleet.n; k++, pf->n_pairs++) {
            if (yb_recorder_init(&pf->pair_rec[pf->n_pairs]) < 0)
                return perr(c, 1, "out of memory");
            pf->pair_wl[pf->n_pairs] = i;
            pf->pair_tgt[pf->n_pairs] = target_index(pf, w->fleet.label[k], w->fleet.url[k]);
        }
        if (yb_recorder_init(&w->rec) < 0)
            return perr(c, 1, "out of memory");
        w->rec_ok = 1;
        uint64_t end = w->start_ns + w->ro.o.duration_ns;
        if (w->ro.o.duration_ns && end > pf->planned_ns)
            pf->planned_ns = end;
    }
    for (; t->n_rec < t->n; t->n_rec++)
        if (yb_recorder_init(&t->rec[t->n_rec]) < 0)
            return perr(c, 1, "out of memory");
    pf->proto = proto ? proto : "";
    snprintf(pf->desc, sizeof pf->desc, "%zu workloads on %zu targets (%s)", pf->n, t->n,
             pf->path);
    return 0;
}

int yb_planfile_prepare(const char *cmd, const yb_runopts *ro, yb_planfile *pf)
{
    uint8_t *buf;
    size_t len;
    char err[600];
    yb_inventory inv;
    memset(&inv, 0, sizeof inv);
    memset(pf, 0, sizeof *pf);
    if (yb_ytree_read_file(ro->plan, YB_PLAN_MAX_BYTES, &buf, &len, err, sizeof err) < 0)
        return yb_usage_error(cmd, "--plan %s", err);
    int rc = yb_planfile_parse(cmd, ro->plan, buf, len, ro, pf);
    free(buf);
    if (rc)
        return rc;
    const char *slash = strrchr(ro->plan, '/');
    pctx c = {cmd, ro->plan, slash ? (size_t)(slash - ro->plan) : 0};
    if (slash == ro->plan)
        c.dirlen = 1;
    /* every name first: a typo is found before any corpus is synthesized */
    if (ro->inventory && yb_inventory_load(ro->inventory, &inv, err, sizeof err) < 0) {
        rc = yb_usage_error(cmd, "%s", err);
        goto fail;
    }
    for (size_t i = 0; i < pf->n; i++)
        if ((rc = check_names(&c, &pf->w[i], &inv, ro->inventory)))
            goto fail;
    /* targets given on the command line that no workload goes to would
     * be silently ignored */
    size_t unnamed = 0;
    for (size_t i = 0; i < pf->n; i++)
        unnamed += !pf->w[i].urls;
    if ((ro->inventory || ro->n_targets) && !unnamed) {
        rc = yb_usage_error(cmd, "%s %s: no workload goes to it (each names its own URLs in "
                            "'targets')", ro->inventory ? "--targets" : "--target",
                            ro->inventory ? ro->inventory : ro->target);
        goto fail;
    }
    for (size_t i = 0; i < pf->n; i++)
        if ((rc = prepare_workload(&c, pf, i, ro)))
            goto fail;
    if ((rc = index_pairs(&c, pf)))
        goto fail;
    yb_inventory_free(&inv);
    return 0;
fail:
    yb_inventory_free(&inv);
    yb_planfile_free(pf);
    return rc;
}

int yb_planfile_plan(yb_planfile *pf, const yb_engine_opts *base, yb_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    for (size_t i = 0, p = 0; i < pf->n; i++) {
        yb_fleet *f = &pf->w[i].fleet;
        if (yb_fleet_plan(f, base, plan) < 0)
            return -1;
        for (size_t k = 0; k < f->n; k++, p++) { /* as the report lists them */
            f->o[k].log_workload = (unsigned)i;
            f->o[k].log_target = (unsigned)pf->pair_tgt[p];
            f->o[k].workload_name = pf->w[i].name; /* live metrics' label */
        }
    }
    return 0;
}

int yb_planfile_merge(yb_planfile *pf)
{
    for (size_t p = 0; p < pf->n_pairs; p++) {
        yb_recorder *r = &pf->pair_rec[p], *w = &pf->w[pf->pair_wl[p]].rec,
                    *t = &pf->targets.rec[pf->pair_tgt[p]];
        w->run_start = t->run_start = r->run_start;
        if (yb_recorder_merge(w, r) < 0 || yb_recorder_merge(t, r) < 0)
            return -1;
    }
    return 0;
}

const yb_engine_opts *yb_planfile_target_opts(const yb_planfile *pf, size_t t)
{
    const yb_engine_opts *best = NULL;
    for (size_t i = 0, p = 0; i < pf->n; i++)
        for (size_t k = 0; k < pf->w[i].fleet.n; k++, p++) {
            const yb_engine_opts *o = &pf->w[i].fleet.o[k];
            if (pf->pair_tgt[p] == t && (!best || (o->ops == &yb_h2_client_ops &&
                                                   best->ops != &yb_h2_client_ops)))
                best = o;
        }
    return best;
}

int yb_planfile_open_loop(const yb_planfile *pf)
{
    for (size_t i = 0; i < pf->n; i++)
        if (pf->w[i].ro.rate || pf->w[i].ro.o.timing_original)
            return 1;
    return 0;
}

/* ---- the report ------------------------------------------------------------------ */

static double pct_ms(const yb_recorder *r, yb_hist_id h, double p)
{
    return yb_hdr_count(r->h[h]) ? (double)yb_hdr_percentile(r->h[h], p) / 1e3 : 0.0;
}

/* The workload's own span: from its start to its last completion (s). */
static double span_s(const yb_plan_workload *w)
{
    const yb_recorder *r = &w->rec;
    uint64_t from = r->run_start + w->start_ns;
    return r->run_end > from ? (double)(r->run_end - from) / 1e9 : 0.0;
}

static double per_s(uint64_t n, double s)
{
    return s > 0 ? (double)n / s : 0.0;
}

void yb_planfile_report_text(FILE *out, const yb_planfile *pf)
{
    int subs = 0;
    for (size_t i = 0; i < pf->n; i++)
        subs |= pf->w[i].rec.notifications > 0 || yb_hdr_count(pf->w[i].rec.h[YB_H_SYNC]) > 0;
    fprintf(out, "\nWorkloads:\n  %-20s %7s %9s %9s %7s %9s %9s %9s", "workload", "start s",
            "requests", "ok", "errors", "req/s", "p50 ms", "p99 ms");
    if (subs)
        fprintf(out, " %9s %9s %9s %9s", "notif/s", "sync p50", "late p50", "late p99");
    fputc('\n', out);
    for (size_t i = 0; i < pf->n; i++) {
        const yb_plan_workload *w = &pf->w[i];
        const yb_recorder *r = &w->rec;
        double s = span_s(w);
        fprintf(out, "  %-20s %7.1f %9llu %9llu %7llu %9.1f %9.2f %9.2f", w->name,
                (double)w->start_ns / 1e9, (unsigned long long)r->completed,
                (unsigned long long)r->ok, (unsigned long long)(r->completed - r->ok),
                per_s(r->completed, s), pct_ms(r, YB_H_E2E, 50), pct_ms(r, YB_H_E2E, 99));
        if (subs)
            fprintf(out, " %9.1f %9.2f %9.2f %9.2f", per_s(r->notifications, s),
                    pct_ms(r, YB_H_SYNC, 50), pct_ms(r, YB_H_SAMPLE_LATENESS, 50),
                    pct_ms(r, YB_H_SAMPLE_LATENESS, 99));
        fputc('\n', out);
    }
}

int yb_planfile_report_json(json_t *report, const yb_planfile *pf)
{
    json_t *a = json_array();
    if (!a)
        return -1;
    for (size_t i = 0; i < pf->n; i++) {
        const yb_plan_workload *w = &pf->w[i];
        const yb_recorder *r = &w->rec;
        char tl[1024] = "";
        size_t l = 0;
        for (size_t k = 0; k < w->fleet.n && l < sizeof tl; k++)
            l += (size_t)snprintf(tl + l, sizeof tl - l, "%s%s", k ? ", " : "",
                                  w->fleet.label[k]);
        double s = span_s(w);
        json_t *o = json_pack(
            "{s:s, s:s, s:s, s:f, s:f, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:I, s:f, s:f, s:f, "
            "s:f, s:f}",
            "name", w->name, "source", w->source, "targets", tl, "start_s",
            (double)w->start_ns / 1e9, "duration_s", (double)w->ro.o.duration_ns / 1e9,
            "started", (json_int_t)r->started, "requests", (json_int_t)r->completed, "ok",
            (json_int_t)r->ok, "errors", (json_int_t)(r->completed - r->ok), "rate_per_s",
            per_s(r->completed, s), "p50_ms", pct_ms(r, YB_H_E2E, 50), "p99_ms",
            pct_ms(r, YB_H_E2E, 99), "notifications", (json_int_t)r->notifications,
            "notifications_per_s", per_s(r->notifications, s), "sync_p50_ms",
            pct_ms(r, YB_H_SYNC, 50), "sync_p99_ms", pct_ms(r, YB_H_SYNC, 99),
            "sample_lateness_p50_ms", pct_ms(r, YB_H_SAMPLE_LATENESS, 50),
            "sample_lateness_p99_ms", pct_ms(r, YB_H_SAMPLE_LATENESS, 99));
        /* the exact histograms of the figures above, so merged shards'
         * rows are exact */
        static const char *const NAMES[] = {"e2e", "sync", "sample_lateness"};
        const yb_hdr *h[] = {r->h[YB_H_E2E], r->h[YB_H_SYNC], r->h[YB_H_SAMPLE_LATENESS]};
        json_t *hs = o ? yb_report_hists_json(h, NAMES, 3) : NULL;
        if (o && (!hs || json_object_set_new(o, "histograms", hs) < 0)) {
            json_decref(o); /* set_new freed hs */
            o = NULL;
        }
        if (!o || json_array_append_new(a, o) < 0) {
            json_decref(a);
            return -1;
        }
    }
    return json_object_set_new(report, "workloads", a);
}

void yb_planfile_free(yb_planfile *pf)
{
    for (size_t i = 0; pf->w && i < pf->n; i++) {
        yb_plan_workload *w = &pf->w[i];
        yb_fleet_free(&w->fleet);
        yb_runopts_cleanup(&w->ro);
        if (w->rec_ok)
            yb_recorder_cleanup(&w->rec);
        if (w->synth_argc && w->corpus)
            unlink(w->corpus);
        for (int k = 0; k < w->n_owned; k++)
            free(w->owned[k]);
    }
    if (pf->tmpdir[0])
        rmdir(pf->tmpdir);
    for (size_t p = 0; p < pf->n_pairs; p++)
        yb_recorder_cleanup(&pf->pair_rec[p]);
    free(pf->pair_rec);
    free(pf->pair_wl);
    free(pf->pair_tgt);
    yb_fleet_free(&pf->targets);
    free(pf->w);
    yb_ynode_free(pf->root);
    memset(pf, 0, sizeof *pf);
}
