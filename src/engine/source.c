#include "config.h"
#include "engine/source.h"
#include "engine/opname.h"
#include "engine/route.h"
#include "corpus/rewrite.h"
#include "tmpl/pick.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct yb_source {
    yb_corpus_reader *rd;
    unsigned worker, n;
    int by_conn;
    int route;             /* YB_ROUTE_*: 0 = every record */
    const yb_authmap *authmap; /* --route authority: records naming auth_target */
    int auth_target;
    uint64_t passes;
    const yb_codec_ops *ops;
    const yb_codec_cfg *cfg;
    uint64_t budget, cached_bytes; /* (never lowered: the cache's peak) */
    yb_prepared **cache;   /* the share, prepared, while it fits the budget */
    size_t n_cache, cap_cache;
    int caching;           /* still filling the cache (first pass) */
    int scanned;           /* scan_fit has decided whether the share fits */
    uint64_t uses;         /* requests the run may take from it (UINT64_MAX = no limit) */
    int cycling;           /* serving from the cache */
    size_t pos;            /* next cache index when cycling */
    uint64_t pass_yield;   /* requests produced in the current pass */
    uint64_t pass_taken;   /* records of this workload seen in the current pass
                            * (any worker's): the index records are shared by */
    yb_ops *optab;         /* where operations are named, or NULL */
    /* the last RESTCONF record's method and path and their operation: a
     * streamed corpus names each request as it is prepared, and its
     * records mostly repeat the one before (memo_op valid when memo_len) */
    char memo_method[16], memo_path[256];
    size_t memo_len;       /* strlen(memo_path) + 1, 0 = nothing kept */
    uint32_t memo_op;
    /* prepared requests let go, kept for the next ones (a streamed
     * record is prepared per request): linked by next_step, n_spare of
     * them */
    yb_prepared *spare;
    unsigned n_spare;
    const yb_rewrite *rw;  /* rules applied before preparing, or NULL */
    struct yb_blobs *blobs;/* shares what the cache keeps (yb_source_blobs), or NULL */
};

void yb_source_ops(yb_source *s, yb_ops *t)
{
    s->optab = t;
}

void yb_source_blobs(yb_source *s, struct yb_blobs *t)
{
    s->blobs = t;
}

yb_source *yb_source_new(const char *path, unsigned worker, unsigned n, int by_conn,
                         const yb_codec_ops *ops, const yb_codec_cfg *cfg, uint64_t cache_bytes,
                         char *err, size_t errlen)
{
    yb_source *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->rd = yb_corpus_reader_open(path, err, errlen);
    if (!s->rd) {
        free(s);
        return NULL;
    }
    yb_corpus_reader_drop_redacted(s->rd); /* the placeholder never goes on the wire */
    s->worker = worker;
    s->n = n;
    s->by_conn = by_conn;
    s->ops = ops;
    s->cfg = cfg;
    s->budget = cache_bytes;
    s->caching = cache_bytes > 0;
    s->uses = UINT64_MAX;
    return s;
}

void yb_source_uses(yb_source *s, uint64_t n)
{
    s->uses = n;
}

void yb_source_route(yb_source *s, int route)
{
    s->route = route;
}

void yb_source_authority(yb_source *s, const yb_authmap *m, int target)
{
    s->authmap = m;
    s->auth_target = target;
}

void yb_source_rewrite(yb_source *s, const yb_rewrite *rw)
{
    s->rw = rw;
}

/* The record's own accepted statuses as a policy (codec/accept.h), or
 * NULL when out of memory. */
static const yb_accept *record_accept(const yb_request *r)
{
    yb_accept *a = calloc(1, sizeof *a);
    if (a) {
        yb_accept_add_codes(a, 0, r->accept_status, r->n_accept_status);
        yb_accept_add_codes(a, 1, r->accept_grpc, r->n_accept_grpc);
    }
    return a;
}

/* Names the operation of the request as sent (engine/opname.h).  A
 * RESTCONF operation is its method and path's template, so a record with
 * the last one's method and path has its operation (a gNMI Set's depends
 * on its body: named every time). */
static void name_op(yb_source *s, const yb_request *r, yb_prepared *p)
{
    p->op = YB_OP_NONE;
    if (!s->optab)
        return;
    int h2 = yb_proto_is_h2(r->protocol);
    size_t ml = strlen(r->method), pl = strlen(r->path) + 1;
    if (!h2 && s->memo_len == pl && !strcmp(r->method, s->memo_method) &&
        !memcmp(r->path, s->memo_path, pl)) {
        p->op = s->memo_op;
        return;
    }
    char name[YB_OP_NAME_MAX];
    yb_op_name(r, name, sizeof name);
    p->op = yb_ops_index(s->optab, name);
    s->memo_len = 0;
    if (!h2 && ml < sizeof s->memo_method && pl <= sizeof s->memo_path) {
        memcpy(s->memo_method, r->method, ml + 1);
        memcpy(s->memo_path, r->path, pl);
        s->memo_len = pl;
        s->memo_op = p->op;
    }
}

/* A templated record's {{prev....}} values (tmpl/pick.h), compiled into
 * p->pick.  Returns 0, -ENOMEM, or -EBADMSG with err (the run checks the
 * corpus' templates before it starts, so this is a corpus that changed
 * under it). */
static int picks(const yb_request *r, yb_prepared *p, char *err, size_t errlen)
{
    if (!p->templated)
        return 0;
    int rc = yb_pick_compile(r, &p->pick, err, errlen);
    return rc == -EINVAL ? -EBADMSG : rc;
}

/* Prepares r, rewritten first when there are rules (the rewritten copy
 * lives only as long as the preparation), and names its operation.
 * Returns the codec's result, or -EBADMSG with err set when a rule cannot
 * rewrite r (the run checks the corpus with the rules before it starts,
 * so this is a corpus that changed under it). */
static int prepare(yb_source *s, const yb_request *r, yb_prepared *p, char *err, size_t errlen)
{
    int rc;
    if (!s->rw) {
        if ((rc = s->ops->prepare(s->cfg, r, p)) == 0 && (rc = picks(r, p, err, errlen)) == 0)
            name_op(s, r, p);
        return rc;
    }
    yb_request rr;
    int mapped;
    yb_request_init(&rr);
    if (yb_rewrite_apply(s->rw, r, &rr, &mapped, NULL, err, errlen) < 0) {
        yb_request_cleanup(&rr);
        return -EBADMSG;
    }
    yb_codec_cfg mc;
    const yb_codec_cfg *cfg = s->cfg;
    if (mapped) { /* --map-authority: sent for the record's new authority */
        mc = *s->cfg;
        mc.authority = rr.authority;
        cfg = &mc;
    }
    if ((rc = s->ops->prepare(cfg, &rr, p)) == 0 && /* (it copies what it keeps) */
        (rc = picks(&rr, p, err, errlen)) == 0)
        name_op(s, &rr, p);
    yb_request_cleanup(&rr);
    return rc;
}

#define SPARE_MAX 32u

/* Frees p and the steps linked behind it (a chain); keeps up to SPARE_MAX
 * of the structs for prepare_one. */
static void prepared_drop(yb_source *s, yb_prepared *p)
{
    while (p) {
        yb_prepared *next = p->next_step;
        s->ops->prepared_free(p);
        yb_pick_free(p->pick);
        free((yb_accept *)p->accept);
        if (s->n_spare < SPARE_MAX) {
            p->next_step = s->spare;
            s->spare = p;
            s->n_spare++;
        } else {
            free(p);
        }
        p = next;
    }
}

static void drop_cache(yb_source *s)
{
    for (size_t i = 0; i < s->n_cache; i++)
        prepared_drop(s, s->cache[i]);
    free(s->cache);
    s->cache = NULL;
    s->n_cache = s->cap_cache = 0;
    s->caching = 0;
}

/* The share does not fit: stream every pass from now on.  Entries still
 * in flight are freed by their last release. */
static void abandon_cache(yb_source *s)
{
    for (size_t i = 0; i < s->n_cache; i++) {
        s->cache[i]->cached = 0;
        if (s->cache[i]->refs == 0)
            prepared_drop(s, s->cache[i]);
    }
    free(s->cache);
    s->cache = NULL;
    s->n_cache = s->cap_cache = 0;
    s->caching = 0;
}

/* Keeps p in the cache while the budget allows.  Returns 1 when cached. */
static int cache_add(yb_source *s, yb_prepared *p)
{
    if (!s->caching)
        return 0;
    uint64_t sz = yb_prepared_cost(p);
    if (s->cached_bytes + sz > s->budget) {
        abandon_cache(s);
        return 0;
    }
    if (s->n_cache == s->cap_cache) {
        /* from 2: a fleet's target has a lane, and a share, each */
        size_t nc = s->cap_cache ? s->cap_cache * 2 : 2;
        yb_prepared **c = realloc(s->cache, nc * sizeof *c);
        if (!c) {
            abandon_cache(s);
            return 0;
        }
        s->cache = c;
        s->cap_cache = nc;
    }
    p->cached = 1;
    s->cache[s->n_cache++] = p;
    s->cached_bytes += sz;
    return 1;
}

/* Prepares record r (index k) into a new *out: rewritten, named, with its
 * own accepted statuses.  Returns 0, or -1 with err. */
static int prepare_one(yb_source *s, const yb_request *r, uint64_t k, yb_prepared **out,
                       char *err, size_t errlen)
{
    /* one let go before, else a new one (glibc's calloc, which GCC makes
     * of malloc and memset, skips the thread's cache of small blocks, and
     * a streamed record is prepared per request) */
    yb_prepared *p = s->spare;
    if (p) {
        s->spare = p->next_step;
        s->n_spare--;
    } else if (!(p = malloc(sizeof *p))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memset(p, 0, sizeof *p);
    char why[700];
    /* what the cache may keep for the run is shared with the other
     * sources of the thread (a fleet: the same corpus per target); what
     * is streamed is freed at once, so it is not worth a lookup */
    if (s->caching)
        p->blobs = s->blobs;
    int rc = prepare(s, r, p, why, sizeof why);
    if (rc == -EBADMSG) {
        free(p);
        snprintf(err, errlen, "record %llu: %s", (unsigned long long)k, why);
        return -1;
    }
    if (rc < 0) {
        /* A record the codec cannot send stops the run: skipping it
         * would count a request that never started (the run checks the
         * corpus' protocols before it starts, so this is a corpus that
         * changed under it, or a field the codec refuses). */
        free(p);
        if (rc == -EPROTONOSUPPORT)
            snprintf(err, errlen, "record %llu: a %s record cannot be sent by the %s codec",
                     (unsigned long long)k, yb_proto_name(r->protocol), s->ops->name);
        else
            snprintf(err, errlen, "record %llu: cannot prepare the %s request: %s",
                     (unsigned long long)k, yb_proto_name(r->protocol),
                     rc == -EINVAL ? "a field would break the message framing"
                                   : strerror(-rc));
        return -1;
    }
    p->record = k;
    p->conn_id = r->conn_id;
    p->timestamp_ns = r->timestamp_ns;
    p->expected_status = r->expected_status;
    p->expected_grpc = r->expected_grpc;
    if ((r->n_accept_status || r->n_accept_grpc) && !(p->accept = record_accept(r))) {
        prepared_drop(s, p);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    *out = p;
    return 0;
}

/* Reads past the steps of a chain of n records starting at record k that
 * is not this source's.  Returns 0, or -1 with err. */
static int skip_steps(yb_source *s, uint64_t k, uint32_t n, char *err, size_t errlen)
{
    for (uint32_t i = 1; i < n; i++) {
        const yb_request *r;
        int rc = yb_corpus_reader_next(s->rd, &r, err, errlen);
        if (rc <= 0) {
            if (rc == 0)
                snprintf(err, errlen, "record %llu: the corpus ends inside its chain of %u "
                         "records", (unsigned long long)k, n);
            return -1;
        }
    }
    return 0;
}

/* Whether record r (the first of its chain) is this source's: not routed
 * to another target's workload, not recorded for another target, not
 * another worker's.  Counts it among the workload's records of this pass. */
static int is_ours(yb_source *s, const yb_request *r)
{
    if ((s->route && (yb_proto_is_h2(r->protocol) != 0) != (s->route == 2)) ||
        (s->authmap && yb_authmap_find(s->authmap, r->scheme, r->authority) != s->auth_target))
        return 0;
    /* shared by the index among this workload's records (a chain counts
     * once), so that each worker's share is as even as the records allow */
    uint64_t j = s->pass_taken++;
    return (s->by_conn ? r->conn_id : j) % s->n == s->worker;
}

/* What keeping r prepared costs, about: its serialized request (the
 * body, the request line and the headers) and the bookkeeping around it.
 * The same measure as yb_prepared_cost, before anything is prepared. */
static uint64_t request_size(const yb_request *r)
{
    uint64_t n = sizeof(yb_prepared) + 256 + r->body_len + strlen(r->method) +
                 (r->path ? strlen(r->path) : 0) + (r->authority ? strlen(r->authority) : 0);
    for (size_t i = 0; i < r->n_headers; i++)
        n += (r->headers[i].name ? strlen(r->headers[i].name) : 0) + r->headers[i].value_len + 4;
    return n;
}

/* Before the cache fills: reads the share once without preparing it and
 * keeps caching on only when all of it fits the budget and the run may
 * take some record of it twice (yb_source_uses).  A share that
 * does not fit is streamed from the start, so the cache never grows to
 * its budget only to be thrown away (a memory peak that outlives it,
 * since the allocator keeps what was freed).  The scan stops as soon as
 * the budget is passed, or the run's requests are all seen: it costs at
 * most the budget's worth of decoding.
 * Returns 0 or -1 with err. */
static int scan_fit(yb_source *s, char *err, size_t errlen)
{
    uint64_t sum = 0, n = 0;
    int fits = 1;
    for (;;) {
        const yb_request *r;
        int rc = yb_corpus_reader_next(s->rd, &r, err, errlen);
        if (rc < 0)
            return -1;
        if (rc == 0)
            break;
        uint32_t chain = r->chain;
        int ours = is_ours(s, r);
        if (ours) {
            sum += request_size(r);
            n++;
        }
        for (uint32_t i = 1; i < chain; i++) {
            if ((rc = yb_corpus_reader_next(s->rd, &r, err, errlen)) < 0)
                return -1;
            if (rc == 0)
                break; /* the real pass says what is wrong with it */
            if (ours)
                sum += request_size(r);
        }
        if (sum > s->budget) {
            fits = 0;
            break;
        }
        if (n >= s->uses)
            break; /* no record sent twice: it will not be cached anyway */
    }
    if (yb_corpus_reader_rewind(s->rd, err, errlen) < 0)
        return -1;
    s->pass_taken = 0;
    /* a run that takes no record twice gains nothing from keeping them */
    if (!fits || n >= s->uses)
        s->caching = 0;
    return 0;
}

/* Whether the corpus' summary shows, without reading it, that the run
 * takes no unit of the share twice: the share is every n-th unit from
 * the worker's (no routing, no sharing by connection), so at least
 * units / n of them, and the run takes at most `uses`.  scan_fit would
 * then read up to the budget's worth of records to find as much.  A
 * summary that lies costs only the cache (streaming is always right);
 * the reader finds the lie at the trailer. */
static int takes_none_twice(const yb_source *s)
{
    const yb_corpus_summary *sum = yb_corpus_reader_summary(s->rd);
    return sum && sum->units && !s->route && !s->authmap && !s->by_conn &&
           s->uses != UINT64_MAX && sum->units / s->n >= s->uses;
}

int yb_source_next(yb_source *s, int cycle, yb_prepared **out, char *err, size_t errlen)
{
    if (s->caching && !s->scanned) {
        s->scanned = 1;
        if (takes_none_twice(s))
            s->caching = 0; /* (what scan_fit would have found) */
        else if (scan_fit(s, err, errlen) < 0)
            return -1;
    }
    if (s->cycling) {
        if (s->n_cache == 0)
            return 0; /* an empty share */
        if (s->pos == s->n_cache) {
            if (!cycle)
                return 0;
            s->pos = 0;
            s->passes++;
        }
        *out = s->cache[s->pos++];
        (*out)->refs++;
        return 1;
    }
    for (;;) {
        const yb_request *r;
        int rc = yb_corpus_reader_next(s->rd, &r, err, errlen);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            s->passes++;
            if (s->caching) {
                s->caching = 0;
                s->cycling = 1;
                s->pos = 0;
                if (!cycle || s->n_cache == 0)
                    return 0;
                *out = s->cache[s->pos++];
                (*out)->refs++;
                return 1;
            }
            if (!cycle || s->pass_yield == 0)
                return 0;
            if (yb_corpus_reader_rewind(s->rd, err, errlen) < 0)
                return -1;
            s->pass_yield = 0;
            s->pass_taken = 0;
            continue;
        }
        uint64_t k = yb_corpus_reader_index(s->rd) - 1;
        uint32_t chain = r->chain;
        if (!is_ours(s, r)) {
            if (chain > 1 && skip_steps(s, k, chain, err, errlen) < 0)
                return -1;
            continue;
        }
        yb_prepared *p;
        if (prepare_one(s, r, k, &p, err, errlen) < 0)
            return -1;
        if (p->pick) {
            snprintf(err, errlen, "record %llu: its {{prev....}} placeholders take values from "
                     "the previous step's response, but it is not a later step of a chain",
                     (unsigned long long)k);
            prepared_drop(s, p);
            return -1;
        }
        /* a chain: its steps prepared now, linked behind it */
        yb_prepared *last = p;
        for (uint32_t i = 1; i < chain; i++) {
            if ((rc = yb_corpus_reader_next(s->rd, &r, err, errlen)) <= 0) {
                if (rc == 0)
                    snprintf(err, errlen, "record %llu: the corpus ends inside its chain of %u "
                             "records", (unsigned long long)k, chain);
                prepared_drop(s, p);
                return -1;
            }
            if (r->chain) {
                snprintf(err, errlen, "record %llu: a chain inside the chain of %u records "
                         "that starts at record %llu", (unsigned long long)(k + i), chain,
                         (unsigned long long)k);
                prepared_drop(s, p);
                return -1;
            }
            if (prepare_one(s, r, k + i, &last->next_step, err, errlen) < 0) {
                prepared_drop(s, p);
                return -1;
            }
            last->keep_resp = last->next_step->pick != NULL; /* its response feeds this step */
            last = last->next_step;
        }
        s->pass_yield++;
        cache_add(s, p);
        p->refs = 1;
        *out = p;
        return 1;
    }
}

void yb_source_release(yb_source *s, yb_prepared *p)
{
    if (--p->refs == 0 && !p->cached)
        prepared_drop(s, p);
}

int yb_source_warm(yb_source *s, char *err, size_t errlen)
{
    if (!s->caching)
        return 0;
    for (;;) {
        yb_prepared *p;
        int rc = yb_source_next(s, 0, &p, err, errlen);
        if (rc < 0)
            return -1;
        if (rc == 0)
            break;
        yb_source_release(s, p);
        if (!s->caching && !s->cycling) {
            /* too big to keep: stream it from the start instead */
            if (yb_corpus_reader_rewind(s->rd, err, errlen) < 0)
                return -1;
            s->pass_yield = 0;
            s->pass_taken = 0;
            break;
        }
    }
    s->passes = 0; /* the warm-up read is not a pass of the run */
    if (s->cycling) {
        /* the whole share is prepared: the reader (its decompression
         * window is the biggest part of a source) is not needed again */
        yb_corpus_reader_close(s->rd);
        s->rd = NULL;
    }
    return 0;
}

uint64_t yb_source_cache_peak(const yb_source *s)
{
    return s->cached_bytes;
}

uint64_t yb_source_passes(const yb_source *s)
{
    return s->passes;
}

void yb_source_free(yb_source *s)
{
    if (!s)
        return;
    drop_cache(s);
    yb_corpus_reader_close(s->rd);
    while (s->spare) {
        yb_prepared *n = s->spare->next_step;
        free(s->spare);
        s->spare = n;
    }
    free(s);
}
