/* The plan and its sharing out among workers (see plan.h). */
#include "config.h"
#include "engine/plan.h"

#include <string.h>

void yb_plan_single(yb_plan *p, const yb_engine_opts *o)
{
    memset(p, 0, sizeof *p);
    p->workers = o->threads;
    p->n_pairs = 1;
    p->pair[0].workload = o;
    p->pair[0].target = &o->target;
}

int yb_plan_add(yb_plan *p, const yb_engine_opts *o)
{
    if (!p->n_pairs) {
        yb_plan_single(p, o);
        return 0;
    }
    if (p->n_pairs == YB_PLAN_MAX_PAIRS)
        return -1;
    /* next to the previous pair, round the workers: pairs of one session
     * each go to one worker after another, so the threads share them evenly */
    size_t i = p->n_pairs;
    p->pair[i].workload = o;
    p->pair[i].target = &o->target;
    p->pair[i].first = (p->pair[i - 1].first + yb_plan_span(p, i - 1)) % p->workers;
    p->n_pairs++;
    return 0;
}

/* The pair's sessions in this process: its shard's part of -c (shard.h),
 * at least one (an open loop of recorded sessions has no -c of its own to
 * divide; the commands refuse fewer sessions than shards elsewhere). */
static unsigned sessions_of(const yb_engine_opts *o)
{
    uint64_t c = yb_shard_part(&o->shard, o->concurrency);
    return c ? (unsigned)c : 1;
}

unsigned yb_plan_span(const yb_plan *p, size_t pair)
{
    unsigned c = sessions_of(p->pair[pair].workload);
    unsigned n = c < p->workers ? c : p->workers;
    return n ? n : 1;
}

unsigned yb_plan_workers(const yb_plan *p)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < p->n_pairs && sum < p->workers; i++)
        sum += yb_plan_span(p, i);
    return sum < p->workers ? (unsigned)sum : p->workers;
}

int yb_plan_place(const yb_plan *p, size_t pair, unsigned w)
{
    unsigned place = (w + p->workers - p->pair[pair].first) % p->workers;
    return place < yb_plan_span(p, pair) ? (int)place : -1;
}

/* Worker i's part of total among n: the first total % n get one more. */
static unsigned split(unsigned total, unsigned n, unsigned i)
{
    return total / n + (i < total % n ? 1 : 0);
}

double yb_plan_rate_at(const yb_plan *p, uint64_t t_ns, int *any)
{
    double sum = 0;
    if (any)
        *any = 0;
    for (size_t i = 0; i < p->n_pairs; i++) {
        const yb_engine_opts *o = p->pair[i].workload;
        if (o->timing_original || o->sched.kind == YB_SCHED_NONE)
            continue;
        if (any)
            *any = 1;
        uint64_t end = o->duration_ns ? o->duration_ns
                       : o->requests  ? 0
                                      : yb_sched_length(&o->sched);
        if (t_ns < o->start_ns || (end && t_ns - o->start_ns >= end))
            continue;
        /* a --split part or a shard: every so-many-th due time */
        double parts = (o->split_n > 1 ? o->split_n : 1) *
                       (yb_shard_divides(&o->shard) ? o->shard.count : 1);
        sum += yb_sched_rate_at(&o->sched, t_ns - o->start_ns) / parts;
    }
    return sum;
}

void yb_plan_share(const yb_plan *p, size_t pair, unsigned worker, yb_share *s)
{
    const yb_engine_opts *o = p->pair[pair].workload;
    unsigned n = yb_plan_span(p, pair);
    memset(s, 0, sizeof *s);
    if (o->split_n > 1) {
        /* one part of a load model divided among targets: its workers
         * are workers place x split_n + split_i of span x split_n */
        worker = worker * o->split_n + o->split_i;
        n *= o->split_n;
    }
    /* h2load's -c N -m M: N sessions, M requests in flight on each, so
     * the closed loop keeps N x M in flight; a shard's sessions are its
     * part of -c, shared among its own workers */
    unsigned sessions = split(sessions_of(o), n, worker);
    /* a shard's workers take the items of the whole run k * n' + worker'
     * (shard.h), so that the shards interleave as the workers do */
    yb_shard_lane(&o->shard, worker, n, &worker, &n);
    s->worker = worker;
    s->workers = n;
    s->by_conn = o->policy == YB_SESS_ORIGINAL;
    s->slots = sessions * (o->streams ? o->streams : 1);
    switch (o->policy) {
    case YB_SESS_REUSE: s->sess_limit = sessions; break;
    case YB_SESS_ORIGINAL: s->sess_limit = UINT32_MAX; break;
    default: s->sess_limit = 0; break;
    }
    s->open_loop = o->sched.kind != YB_SCHED_NONE || o->timing_original;
    uint64_t sched_len = s->open_loop ? yb_sched_length(&o->sched) : 0;
    if (o->requests) {
        s->budget = o->requests / n + (worker < o->requests % n ? 1 : 0);
        s->cycle = 1;
    } else {
        s->budget = UINT64_MAX;
        s->cycle = o->duration_ns > 0 || sched_len > 0;
    }
    s->start_ns = o->start_ns;
    if (o->duration_ns)
        s->run_ns = o->duration_ns;
    else if (sched_len && !o->requests)
        s->run_ns = sched_len; /* a ramp or steps end by themselves */
    /* the closed loop never has more waiting than its slots; the open loop
     * fails what waits beyond --max-backlog as an overflow */
    s->max_wait = s->open_loop ? o->max_backlog : UINT64_MAX;
    s->max_wait_bytes = s->open_loop ? o->max_backlog_bytes : UINT64_MAX;
}
