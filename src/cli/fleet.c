/* Several targets in one run (see fleet.h). */
#include "config.h"
#include "cli/fleet.h"
#include "cli/cli.h"
#include "codec/codec.h"
#include "engine/route.h"
#include "report/report.h"

#include <stdlib.h>
#include <string.h>

int yb_fleet_wanted(const yb_runopts *ro)
{
    return ro->inventory || ro->n_targets > 1 || ro->fan_out || ro->split ||
           ro->route_authority;
}

/* The two kinds of record a corpus may mix, by the codec that sends them. */
enum { K_H1, K_H2, K_N };
static const char *const KIND_NAME[K_N] = {"HTTP/1.1 (RESTCONF)", "HTTP/2 (gNMI)"};

/* "restconf 2, gnmi 3": the protocols of kind k with their counts. */
static void kind_list(const uint64_t *n, int k, char *buf, size_t len)
{
    size_t l = 0;
    buf[0] = 0;
    for (size_t i = 0; i < YB_CENSUS_N && l < len; i++)
        if (n[i] && (yb_proto_is_h2((yb_proto)i) != 0) == (k == K_H2))
            l += (size_t)snprintf(buf + l, len - l, "%s%s %llu", l ? ", " : "",
                                  yb_proto_name((yb_proto)i), (unsigned long long)n[i]);
}

static int alloc_pairs(yb_fleet *f, size_t n)
{
    f->o = calloc(n, sizeof *f->o);
    f->label = calloc(n, sizeof *f->label);
    f->url = calloc(n, sizeof *f->url);
    f->cred = calloc(n, sizeof *f->cred);
    f->rec = calloc(n, sizeof *f->rec);
    f->cap = n;
    return f->o && f->label && f->url && f->cred && f->rec ? 0 : -1;
}

/* Sets pair i up for kind k of records at url: a copy of the run's
 * options with its own target, codec and route.  Returns 0 or
 * YB_EXIT_USAGE with a message printed (prefixed by where, when given). */
static int pair_init(const char *cmd, yb_runopts *ro, yb_fleet *f, size_t i, int k, int routed,
                     const char *url, const char *where)
{
    char err[512];
    yb_engine_opts *o = &f->o[i];
    *o = ro->o;
    o->ops = k == K_H2 ? &yb_h2_client_ops : &yb_h1_client_ops;
    o->route = routed ? (k == K_H2 ? YB_ROUTE_H2 : YB_ROUTE_H1) : YB_ROUTE_ALL;
    f->url[i] = url;
    if (yb_target_parse(url, &o->target, err, sizeof err) < 0) {
        yb_errorf("%s%s", where, err);
        return YB_EXIT_USAGE;
    }
    int rc = yb_check_corpus_target(cmd, o->corpus_path, k == K_H2 ? "gnmi" : "restconf",
                                    k == K_H2, &o->target, url, ro->given['m'] ? o->streams : 1);
    return rc;
}

/* --target URL --target URL: each kind of record to the URL of its kind. */
static int route_urls(const char *cmd, yb_runopts *ro, yb_fleet *f, const uint64_t *n,
                      const uint64_t *kind_n, const char *redacted)
{
    const char *by_kind[K_N] = {NULL, NULL};
    int any_tls = 0, any_plain = 0;
    for (size_t i = 0; i < ro->n_targets; i++) {
        yb_target t;
        char err[512];
        if (yb_target_parse_url(ro->targets[i], &t, err, sizeof err) < 0) {
            yb_errorf("%s", err);
            return YB_EXIT_USAGE;
        }
        any_tls |= t.tls;
        any_plain |= !t.tls;
        int k = !strcmp(t.scheme, "grpc") || !strcmp(t.scheme, "grpcs") ? K_H2 : K_H1;
        if (by_kind[k])
            return yb_usage_error(cmd, "two --target URLs for the same records (%s): a run "
                                  "routes HTTP/1.1 (RESTCONF) records to its http:// or https:// "
                                  "target and gNMI records to its grpc:// or grpcs:// target; "
                                  "several switches go in an inventory (--targets FILE "
                                  "--fan-out)", KIND_NAME[k]);
        by_kind[k] = ro->targets[i];
    }
    for (int k = 0; k < K_N; k++) {
        char list[200];
        kind_list(n, k, list, sizeof list);
        if (kind_n[k] && !by_kind[k])
            return yb_usage_error(cmd, "%llu records of %s have no target (%s): give a --target "
                                  "%s URL for them", (unsigned long long)kind_n[k],
                                  ro->o.corpus_path, list,
                                  k == K_H2 ? "grpc:// or grpcs://" : "http:// or https://");
        if (!kind_n[k] && by_kind[k])
            return yb_usage_error(cmd, "--target %s would receive no record: %s has no %s "
                                  "records", by_kind[k], ro->o.corpus_path, KIND_NAME[k]);
    }
    int rc;
    if (!any_tls && (rc = yb_check_tls_applies(cmd, ro, ro->targets[0])))
        return rc;
    if (!any_plain && (rc = yb_check_plain_applies(cmd, ro, ro->targets[0])))
        return rc;
    if (alloc_pairs(f, K_N) < 0)
        return yb_usage_error(cmd, "out of memory");
    for (int k = 0; k < K_N; k++) {
        size_t i = f->n;
        if (!kind_n[k]) /* one URL for a corpus of one kind (a plan's workload) */
            continue;
        rc = pair_init(cmd, ro, f, i, k, 1, by_kind[k], "");
        if (rc)
            return rc;
        snprintf(f->label[i], sizeof f->label[i], "%s", by_kind[k]);
        f->n++;
        if (yb_credentials_load(ro->user, ro->pwfile, ro->tokfile, &f->cred[i]) < 0)
            return YB_EXIT_USAGE;
        if ((rc = yb_check_redactions(cmd, ro->o.corpus_path, redacted, &f->cred[i],
                                      ro->no_credentials)))
            return rc;
        yb_engine_bind(&f->o[i], &f->cred[i], ro->user);
    }
    if (by_kind[K_H1] && by_kind[K_H2])
        snprintf(f->desc, sizeof f->desc, "%s + %s", by_kind[K_H1], by_kind[K_H2]);
    else
        snprintf(f->desc, sizeof f->desc, "%s", by_kind[K_H1] ? by_kind[K_H1] : by_kind[K_H2]);
    return 0;
}

/* Refuses the command line's TLS and credential options with --targets,
 * where they would compete with the inventory's.  Returns 0 or
 * YB_EXIT_USAGE with the message printed. */
static int refuse_cli_settings(const char *cmd, const yb_runopts *ro)
{
    static const int FROM_INVENTORY[] = {YB_RO_CACERT, 'k', YB_RO_CERT, YB_RO_KEY, YB_RO_USER,
                                         YB_RO_PWFILE, YB_RO_TOKFILE, YB_RO_SERVERNAME};
    for (size_t i = 0; i < sizeof FROM_INVENTORY / sizeof FROM_INVENTORY[0]; i++)
        if (ro->given[FROM_INVENTORY[i]])
            return yb_usage_error(cmd, "%s does not apply with --targets: each target's TLS "
                                  "settings and credentials come from the inventory",
                                  yb_runopts_name(FROM_INVENTORY[i]));
    return 0;
}

int yb_fleet_devices(const char *cmd, yb_runopts *ro, yb_inventory *inv)
{
    char err[1024];
    int rc = refuse_cli_settings(cmd, ro);
    if (rc)
        return rc;
    if (yb_inventory_load(ro->inventory, inv, err, sizeof err) < 0) {
        yb_errorf("%s", err);
        return YB_EXIT_USAGE;
    }
    for (size_t i = 0; i < inv->n && !rc; i++) {
        const yb_inv_target *t = &inv->target[i];
        if (t->user && t->secret != YB_SECRET_PASSWORD)
            rc = yb_usage_error(cmd, "%s:%u: target '%s' has a user but no password-env or "
                                "password-file", ro->inventory, t->line, t->name);
    }
    if (rc)
        yb_inventory_free(inv);
    return rc;
}

int yb_fleet_credentials(const yb_inv_target *t, yb_credentials *c)
{
    memset(c, 0, sizeof *c);
    if (!t->secret)
        return 0;
    return yb_credentials_from(t->secret == YB_SECRET_PASSWORD ? t->user : NULL,
                               t->secret_env ? t->secret_env : "", t->secret_file, c);
}

/* --split: checks that the run's load model divides among the inventory's
 * targets (each target's workers take their shares of it as if they were
 * workers of one workload: plan.h) and sets the closed loop's default
 * concurrency to -t sessions per target.  Returns 0 or YB_EXIT_USAGE with
 * the message printed. */
static int split_check(const char *cmd, yb_runopts *ro, const yb_inventory *inv,
                       const uint64_t *kind_n)
{
    uint64_t parts = (uint64_t)inv->n * ro->o.threads;
    if (ro->o.policy == YB_SESS_ORIGINAL)
        return yb_usage_error(cmd, "--split does not apply with --sessions original (recorded "
                              "connections are not divided among targets)");
    for (size_t t = 0; t < inv->n; t++) {
        const yb_inv_target *it = &inv->target[t];
        if (it->concurrency || it->rate)
            return yb_usage_error(cmd, "%s:%u: target '%s' has its own %s: --split divides "
                                  "the run's load model among the targets", ro->inventory,
                                  it->line, it->name, it->concurrency ? "concurrency" : "rate");
    }
    for (int k = 0; k < K_N; k++)
        if (kind_n[k] && kind_n[k] < parts)
            return yb_usage_error(cmd, "--split: the %llu %s records of %s cannot be divided "
                                  "among %zu targets x -t %u (each needs at least one)",
                                  (unsigned long long)kind_n[k], KIND_NAME[k],
                                  ro->o.corpus_path, inv->n, ro->o.threads);
    if (!ro->given['c'] && parts <= 100000)
        ro->o.concurrency = (unsigned)parts; /* -t sessions per target */
    else if (ro->o.concurrency < parts)
        return yb_usage_error(cmd, "--split: -c %u cannot be divided among %zu targets x -t %u "
                              "(at least one session each): give -c %llu or more",
                              ro->o.concurrency, inv->n, ro->o.threads,
                              (unsigned long long)parts);
    return 0;
}

/* Adds the pair of inventory target it (index t, messages prefixed by
 * where) for kind k of records (routed: the corpus mixes both kinds):
 * its URL, TLS settings, concurrency, rate and credentials from the
 * inventory.  Sets *tls_used when its URL is TLS.  Returns 0, or
 * YB_EXIT_USAGE with the message printed. */
static int target_pair(const char *cmd, yb_runopts *ro, yb_fleet *f, size_t t, int k,
                       int routed, uint64_t n_records, const char *where, const char *redacted,
                       int *tls_used)
{
    const yb_inv_target *it = &f->inv.target[t];
    const char *url = k == K_H2 ? it->gnmi : it->restconf;
    if (!url) {
        yb_errorf("%shas no %s URL for the %llu %s records of %s", where,
                  k == K_H2 ? "gnmi:" : "restconf:", (unsigned long long)n_records,
                  KIND_NAME[k], ro->o.corpus_path);
        return YB_EXIT_USAGE;
    }
    size_t i = f->n;
    int rc = pair_init(cmd, ro, f, i, k, routed, url, where);
    if (rc)
        return rc;
    yb_engine_opts *o = &f->o[i];
    if (ro->split) {
        o->split_i = (unsigned)t;
        o->split_n = (unsigned)f->inv.n;
    }
    snprintf(f->label[i], sizeof f->label[i], "%s%s", it->name,
             !routed ? "" : k == K_H2 ? "/gnmi" : "/restconf");
    f->n++;
    if (o->target.tls) {
        *tls_used = 1;
        o->tls.cacert = it->tls_ca;
        o->tls.insecure = it->tls_insecure;
        o->tls.cert = it->tls_cert;
        o->tls.key = it->tls_key;
        if (it->tls_server_name) /* checked by the inventory, which outlives the run */
            o->target.servername = it->tls_server_name;
    }
    if (it->concurrency)
        o->concurrency = it->concurrency; /* below -t: on fewer threads (plan.h) */
    if (it->rate) {
        if (o->timing_original) {
            yb_errorf("%sa rate excludes --timing original", where);
            return YB_EXIT_USAGE;
        }
        o->sched = *it->rate;
    }
    const char *user = it->secret == YB_SECRET_PASSWORD ? it->user : NULL;
    if (it->user && it->secret != YB_SECRET_PASSWORD) {
        yb_errorf("%shas a user but no password-env or password-file", where);
        return YB_EXIT_USAGE;
    }
    if (yb_fleet_credentials(it, &f->cred[i]) < 0)
        return YB_EXIT_USAGE;
    if ((rc = yb_check_redactions(cmd, ro->o.corpus_path, redacted, &f->cred[i],
                                  ro->no_credentials)))
        return rc;
    yb_engine_bind(o, &f->cred[i], user);
    o->codec.target_name = it->name; /* {{target}} */
    return 0;
}

/* Refuses TLS settings of a target none of whose pairs is TLS (as -k or
 * --cacert with a plain target: refused, not ignored). */
static int tls_unused(const yb_inv_target *it, const char *where)
{
    if (it->tls_ca || it->tls_cert || it->tls_insecure || it->tls_server_name) {
        yb_errorf("%shas TLS settings, but the URL it is sent to is not TLS (https://, "
                  "grpcs://)", where);
        return YB_EXIT_USAGE;
    }
    return 0;
}

/* "FILE:LINE: target 'NAME': " into where. */
static void target_where(const yb_runopts *ro, const yb_inv_target *it, char *where, size_t len)
{
    snprintf(where, len, "%s:%u: target '%s': ", ro->inventory, it->line, it->name);
}

/* 1 when target t is among those ro picks (all, when it picks none). */
static int picked(const yb_runopts *ro, const yb_inv_target *t)
{
    if (!ro->pick)
        return 1;
    for (size_t i = 0; i < ro->n_pick; i++)
        if (!strcmp(ro->pick[i], t->name) ||
            yb_inventory_find(&(yb_inventory){(yb_inv_target *)t, 1, 0}, ro->pick[i]))
            return 1;
    return 0;
}

/* --targets FILE --fan-out: the workload to every target (or those
 * ro->pick names), one pair per target and kind of record (--split: each a
 * part of the load model). */
static int fan_out(const char *cmd, yb_runopts *ro, yb_fleet *f, const uint64_t *kind_n,
                   const char *redacted)
{
    int rc = refuse_cli_settings(cmd, ro);
    if (rc)
        return rc;
    const yb_inventory *inv = &f->inv;
    if (ro->split && (rc = split_check(cmd, ro, inv, kind_n)))
        return rc;
    int routed = kind_n[K_H1] && kind_n[K_H2];
    size_t per = routed ? 2 : 1;
    if (inv->n * per > YB_PLAN_MAX_PAIRS)
        return yb_usage_error(cmd, "%s: %zu targets: a run fans out to at most %d target "
                              "workloads", ro->inventory, inv->n, YB_PLAN_MAX_PAIRS);
    if (alloc_pairs(f, inv->n * per) < 0)
        return yb_usage_error(cmd, "out of memory");
    /* --shard I/N: the targets are divided among the shards (target j of
     * those the run sends to, in inventory order, is shard j mod N's), each
     * with its whole load model; a plan's workloads divide their load
     * instead (each pair keeps o.shard), so that a plan of a few targets
     * shards too */
    yb_shard by_target = ro->plan ? (yb_shard){0, 0} : ro->o.shard;
    size_t n_picked = 0;
    for (size_t t = 0; t < inv->n; t++)
        n_picked += picked(ro, &inv->target[t]);
    if (yb_shard_divides(&by_target) && n_picked < by_target.count)
        return yb_usage_error(cmd, "%s: %zu shards, but --fan-out has %zu target%s to divide "
                              "among them (target j goes to shard j mod N)",
                              yb_runopts_name(ro->shard_opt), (size_t)by_target.count, n_picked,
                              n_picked == 1 ? "" : "s");
    for (size_t t = 0, j = 0; t < inv->n; t++) {
        if (!picked(ro, &inv->target[t]))
            continue;
        if (!yb_shard_takes(&by_target, j++))
            continue;
        char where[400];
        target_where(ro, &inv->target[t], where, sizeof where);
        int tls_used = 0;
        for (int k = 0; k < K_N; k++)
            if (kind_n[k] && (rc = target_pair(cmd, ro, f, t, k, routed, kind_n[k], where,
                                               redacted, &tls_used)))
                return rc;
            else if (kind_n[k] && yb_shard_divides(&by_target))
                f->o[f->n - 1].shard = (yb_shard){0, 0}; /* the whole load model */
        if (!tls_used && (rc = tls_unused(&inv->target[t], where)))
            return rc;
    }
    if (yb_shard_divides(&by_target))
        snprintf(f->desc, sizeof f->desc, "%zu of %zu targets (%s, shard %u/%u)%s",
                 (size_t)yb_shard_part(&by_target, n_picked), n_picked, ro->inventory,
                 by_target.index, by_target.count, ro->split ? ", load split" : "");
    else
        snprintf(f->desc, sizeof f->desc, "%zu targets (%s)%s", ro->pick ? ro->n_pick : inv->n,
                 ro->inventory, ro->split ? ", load split" : "");
    return 0;
}

/* Records --route authority found no target for, by authority and kind. */
#define MISS_SHOWN 8
typedef struct {
    char authority[80];
    int k;
    int t;          /* the target it names, which lacks a URL of kind k; -1 = none */
    uint64_t n;
} miss;

/* Counts record q of kind k that has no target (t: see miss.t). */
static void miss_add(miss *m, size_t *n_m, uint64_t *more, const yb_request *q, int k, int t)
{
    for (size_t i = 0; i < *n_m; i++)
        if (m[i].k == k && m[i].t == t && !strncmp(m[i].authority, q->authority,
                                                   sizeof m[i].authority - 1)) {
            m[i].n++;
            return;
        }
    if (*n_m == MISS_SHOWN) {
        (*more)++;
        return;
    }
    snprintf(m[*n_m].authority, sizeof m[*n_m].authority, "%s", q->authority);
    m[*n_m].k = k;
    m[*n_m].t = t;
    m[(*n_m)++].n = 1;
}

/* Reads the corpus once: per (target, kind) how many records name the
 * target (counts[t * K_N + k]); the records without one are printed as an
 * error.  Returns 0, or YB_EXIT_USAGE with the message printed. */
static int authority_census(const char *cmd, const yb_runopts *ro, const yb_fleet *f,
                            uint64_t *counts)
{
    char err[512];
    yb_corpus_reader *r = yb_corpus_reader_open(ro->o.corpus_path, err, sizeof err);
    if (!r) {
        yb_errorf("%s", err);
        return YB_EXIT_USAGE;
    }
    miss m[MISS_SHOWN];
    size_t n_m = 0;
    uint64_t more = 0, n_miss = 0;
    const yb_request *q;
    int rc;
    while ((rc = yb_corpus_reader_next(r, &q, err, sizeof err)) == 1) {
        int k = yb_proto_is_h2(q->protocol) ? K_H2 : K_H1;
        int t = yb_authmap_find(f->authmap, q->scheme, q->authority);
        const yb_inv_target *it = t >= 0 ? &f->inv.target[t] : NULL;
        if (it && (k == K_H2 ? it->gnmi : it->restconf)) {
            counts[(size_t)t * K_N + (size_t)k]++;
            continue;
        }
        n_miss++;
        miss_add(m, &n_m, &more, q, k, t);
    }
    yb_corpus_reader_close(r);
    if (rc < 0) {
        yb_errorf("%s", err);
        return YB_EXIT_USAGE;
    }
    if (!n_miss)
        return 0;
    char list[1400];
    size_t l = 0;
    for (size_t i = 0; i < n_m && l < sizeof list; i++) {
        const yb_inv_target *it = m[i].t >= 0 ? &f->inv.target[m[i].t] : NULL;
        char named[160] = "";
        if (it)
            snprintf(named, sizeof named, " (target '%s', which has no %s URL)", it->name,
                     m[i].k == K_H2 ? "gnmi:" : "restconf:");
        /* untrusted bytes made printable, an empty authority named */
        char shown[sizeof m[i].authority];
        snprintf(shown, sizeof shown, "%.*s", (int)sizeof shown - 1,
                 m[i].authority[0] ? m[i].authority : "(none)");
        for (char *c = shown; *c; c++)
            if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
                *c = '?';
        l += (size_t)snprintf(list + l, sizeof list - l, "%s'%s' %s %llu%s", i ? "; " : "",
                              shown, KIND_NAME[m[i].k], (unsigned long long)m[i].n, named);
    }
    if (more && l < sizeof list)
        snprintf(list + l, sizeof list - l, "; %llu more", (unsigned long long)more);
    return yb_usage_error(cmd, "--route authority: %llu records of %s have no target in %s: "
                          "%s (give the target an alias with the recorded host[:port])",
                          (unsigned long long)n_miss, ro->o.corpus_path, ro->inventory, list);
}

/* --targets FILE --route authority: each record to the target its
 * recorded authority names, one pair per (target, kind of record) that
 * has records. */
static int route_authority(const char *cmd, yb_runopts *ro, yb_fleet *f, const uint64_t *kind_n,
                           const char *redacted)
{
    int rc = refuse_cli_settings(cmd, ro);
    if (rc)
        return rc;
    const yb_inventory *inv = &f->inv;
    char err[1024];
    if (!(f->authmap = yb_authmap_new(inv, ro->inventory, err, sizeof err))) {
        yb_errorf("%s", err);
        return YB_EXIT_USAGE;
    }
    uint64_t *counts = calloc(inv->n * K_N, sizeof *counts);
    if (!counts)
        return yb_usage_error(cmd, "out of memory");
    if ((rc = authority_census(cmd, ro, f, counts)))
        goto out;
    size_t pairs = 0;
    for (size_t i = 0; i < inv->n * K_N; i++)
        pairs += counts[i] != 0;
    if (pairs > YB_PLAN_MAX_PAIRS) {
        rc = yb_usage_error(cmd, "%s: records for %zu target workloads: a run has at most %d",
                            ro->inventory, pairs, YB_PLAN_MAX_PAIRS);
        goto out;
    }
    if (alloc_pairs(f, pairs) < 0) {
        rc = yb_usage_error(cmd, "out of memory");
        goto out;
    }
    int routed = kind_n[K_H1] && kind_n[K_H2];
    size_t used = 0;
    for (size_t t = 0; t < inv->n; t++) {
        char where[400];
        target_where(ro, &inv->target[t], where, sizeof where);
        int tls_used = 0, any = 0;
        for (int k = 0; k < K_N; k++) {
            uint64_t n = counts[t * K_N + (size_t)k];
            if (!n)
                continue;
            any = 1;
            if ((rc = target_pair(cmd, ro, f, t, k, routed, n, where, redacted, &tls_used)))
                goto out;
            f->o[f->n - 1].authmap = f->authmap;
            f->o[f->n - 1].auth_target = (int)t;
        }
        used += any;
        if (any && !tls_used && (rc = tls_unused(&inv->target[t], where)))
            goto out;
    }
    snprintf(f->desc, sizeof f->desc, "%zu of %zu targets (%s), by recorded authority", used,
             inv->n, ro->inventory);
out:
    free(counts);
    return rc;
}

int yb_fleet_prepare(const char *cmd, yb_runopts *ro, yb_fleet *f)
{
    memset(f, 0, sizeof *f);
    int rc;
    if (ro->fan_out && !ro->inventory)
        return yb_usage_error(cmd, "--fan-out goes with --targets FILE");
    if (ro->split && !ro->fan_out)
        return yb_usage_error(cmd, "--split goes with --targets FILE --fan-out (it divides the "
                              "load model among the targets)");
    if (ro->route_authority && !ro->inventory)
        return yb_usage_error(cmd, "--route authority goes with --targets FILE (the targets "
                              "the recorded authorities name)");
    if (ro->route_authority && ro->fan_out)
        return yb_usage_error(cmd, "--route authority and --fan-out exclude each other: each "
                              "record goes to the target it names, or every record to every "
                              "target");
    if (ro->inventory && ro->n_targets)
        return yb_usage_error(cmd, "--targets and --target exclude each other");
    if (ro->inventory) {
        /* the inventory first: its errors stop the run before anything else */
        char err[1024];
        if (yb_inventory_load(ro->inventory, &f->inv, err, sizeof err) < 0) {
            yb_errorf("%s", err);
            return YB_EXIT_USAGE;
        }
        if (!ro->fan_out && !ro->route_authority) {
            rc = yb_usage_error(cmd, "--targets needs --fan-out (every target gets the "
                                "workload) or --route authority (each record goes to the "
                                "target its recorded authority names)");
            goto fail;
        }
    }
    uint64_t n[YB_CENSUS_N], kind_n[K_N] = {0, 0};
    yb_proto first;
    char redacted[256];
    yb_census_tmpl tc = {.all = ro->o.codec.templates};
    if ((rc = yb_corpus_census(ro->o.corpus_path, n, &first, redacted, sizeof redacted, &tc)) ||
        (rc = yb_check_templates(cmd, ro->o.corpus_path, ro->given[YB_RO_SEED], &tc)))
        goto fail;
    for (size_t i = 0; i < YB_CENSUS_N; i++)
        kind_n[yb_proto_is_h2((yb_proto)i) ? K_H2 : K_H1] += n[i];
    f->proto = kind_n[K_H1] && kind_n[K_H2] ? "mixed" : yb_proto_name(first);
    rc = ro->route_authority ? route_authority(cmd, ro, f, kind_n, redacted)
         : ro->inventory     ? fan_out(cmd, ro, f, kind_n, redacted)
                             : route_urls(cmd, ro, f, n, kind_n, redacted);
    if (rc)
        goto fail;
    for (; f->n_rec < f->n; f->n_rec++)
        if (yb_recorder_init_lazy(&f->rec[f->n_rec]) < 0) {
            rc = yb_usage_error(cmd, "out of memory");
            goto fail;
        }
    return 0;
fail:
    yb_fleet_free(f);
    return rc;
}

int yb_fleet_plan(yb_fleet *f, const yb_engine_opts *base, yb_plan *plan)
{
    for (size_t i = 0; i < f->n; i++) {
        yb_engine_opts *o = &f->o[i];
        o->stop = base->stop;
        o->progress = base->progress;
        o->progress_ud = base->progress_ud;
        o->on_reason = base->on_reason;
        o->reason_ud = base->reason_ud;
        o->stream = base->stream;
        o->start_at_ns = base->start_at_ns;
        o->started_unix_ns = base->started_unix_ns;
        o->metrics = base->metrics;
        o->target_name = f->label[i];
        o->codec.extra = base->codec.extra;
        o->codec.n_extra = base->codec.n_extra;
        o->codec.user_agent = base->codec.user_agent; /* -H User-Agent */
        if (base->rewrite) /* run's rules, built after the pairs were set up */
            o->rewrite = base->rewrite;
        o->log_target = (unsigned)i; /* its row of the targets array */
        if (yb_plan_add(plan, o) < 0)
            return -1;
    }
    return 0;
}

static double pct_ms(const yb_recorder *r, double p)
{
    return r->ok ? (double)yb_hdr_percentile(r->h[YB_H_E2E], p) / 1e3 : 0.0;
}

void yb_fleet_report_text(FILE *out, const yb_fleet *f)
{
    fprintf(out, "\nTargets:\n  %-32s %10s %10s %10s %10s %10s %9s %9s\n", "target", "requests",
            "ok", "errors", "p50 ms", "p99 ms", "sessions", "backoffs");
    for (size_t i = 0; i < f->n; i++) {
        const yb_recorder *r = &f->rec[i];
        fprintf(out, "  %-32s %10llu %10llu %10llu %10.2f %10.2f %9llu %9llu\n", f->label[i],
                (unsigned long long)r->completed, (unsigned long long)r->ok,
                (unsigned long long)(r->completed - r->ok), pct_ms(r, 50), pct_ms(r, 99),
                (unsigned long long)r->sessions_opened,
                (unsigned long long)r->reconnect_backoffs);
    }
}

int yb_fleet_report_json(json_t *report, const yb_fleet *f)
{
    json_t *a = json_array();
    if (!a)
        return -1;
    for (size_t i = 0; i < f->n; i++) {
        const yb_recorder *r = &f->rec[i];
        json_t *t = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:f, s:f, s:I, s:I}", "name",
                              f->label[i], "url", f->url[i], "started", (json_int_t)r->started,
                              "requests", (json_int_t)r->completed, "ok", (json_int_t)r->ok,
                              "errors", (json_int_t)(r->completed - r->ok), "p50_ms",
                              pct_ms(r, 50), "p99_ms", pct_ms(r, 99), "sessions_opened",
                              (json_int_t)r->sessions_opened, "reconnect_backoffs",
                              (json_int_t)r->reconnect_backoffs);
        /* the exact end-to-end histogram, so merged shards' rows are exact */
        static const char *const E2E[] = {"e2e"};
        const yb_hdr *h[] = {r->h[YB_H_E2E]};
        json_t *hs = t ? yb_report_hists_json(h, E2E, 1) : NULL;
        if (t && (!hs || json_object_set_new(t, "histograms", hs) < 0)) {
            json_decref(t); /* set_new freed hs */
            t = NULL;
        }
        if (!t || json_array_append_new(a, t) < 0) {
            json_decref(a);
            return -1;
        }
    }
    return json_object_set_new(report, "targets", a);
}

void yb_fleet_free(yb_fleet *f)
{
    for (size_t i = 0; i < f->n_rec; i++)
        yb_recorder_cleanup(&f->rec[i]);
    for (size_t i = 0; f->cred && i < f->cap; i++)
        yb_credentials_cleanup(&f->cred[i]);
    free(f->o);
    free(f->label);
    free(f->url);
    free(f->cred);
    free(f->rec);
    yb_authmap_free(f->authmap);
    yb_inventory_free(&f->inv);
    memset(f, 0, sizeof *f);
}
