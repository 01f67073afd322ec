/* The run: builds the plan, prepares one worker per thread, starts them
 * on one clock, reports progress while they run, and merges their
 * recorders once they have joined. */
#include "config.h"
#include "engine/engine.h"
#include "engine/plan.h"
#include "engine/worker.h"
#include "report/metrics.h"
#include "report/stream.h"
#include "util/util.h"
#include "util/walltime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* -v: announces each distinct error reason once, across workers.  It
 * keeps pointers to the workers' own published entries (immutable, alive
 * until yb_worker_free): at most YB_REASONS per worker. */
typedef struct {
    const yb_engine_opts *o;
    uint64_t start;
    size_t *seen;                   /* per worker: entries already looked at */
    const yb_reason_count **told;   /* announced, YB_REASONS x workers */
    size_t n_told;
} reason_watch;

static void reason_seen(const yb_reason_count *e, void *ud)
{
    reason_watch *rw = ud;
    for (size_t i = 0; i < rw->n_told; i++)
        if (rw->told[i]->cls == e->cls && !strcmp(rw->told[i]->text, e->text))
            return;
    rw->told[rw->n_told++] = e;
    double t = e->first > rw->start ? (double)(e->first - rw->start) / 1e9 : 0.0;
    rw->o->on_reason(t, e->cls, e->text, rw->o->reason_ud);
}

static void reasons_poll(reason_watch *rw, yb_worker **ws, unsigned n)
{
    if (rw->told)
        for (unsigned i = 0; i < n; i++)
            yb_worker_new_reasons(ws[i], &rw->seen[i], reason_seen, rw);
}

/* Until every worker has ended: calls o->progress about once a second and
 * announces new error reasons (rw) every 50 ms. */
static void watch_loop(const yb_plan *plan, yb_worker **ws, unsigned n, uint64_t start,
                       reason_watch *rw)
{
    const yb_engine_opts *o = plan->pair[0].workload;
    uint64_t next = start + 1000000000ull;
    for (;;) {
        reasons_poll(rw, ws, n);
        yb_worker_live l;
        unsigned running = 0;
        for (unsigned i = 0; i < n; i++) {
            yb_worker_live_read(ws[i], &l);
            running += (unsigned)l.running;
        }
        if (!running)
            return;
        uint64_t now = uv_hrtime();
        if (o->progress && now >= next) {
            yb_progress p;
            memset(&p, 0, sizeof p);
            p.elapsed_s = (double)(now - start) / 1e9;
            p.target_rate = yb_plan_rate_at(plan, now - start, NULL); /* every pair's */
            double p50w = 0;
            for (unsigned i = 0; i < n; i++) {
                yb_worker_live_read(ws[i], &l);
                uint64_t cnt = l.sec_count;
                p.completed += l.completed;
                p.errors += l.errors;
                p.backlog += l.backlog;
                p.last_completed += cnt;
                double p50 = (double)l.p50_us / 1e3;
                double p99 = (double)l.p99_us / 1e3;
                p50w += p50 * (double)cnt;
                if (p99 > p.p99_ms)
                    p.p99_ms = p99;
            }
            p.p50_ms = p.last_completed ? p50w / (double)p.last_completed : 0;
            o->progress(&p, o->progress_ud);
            next += 1000000000ull;
            if (next < now)
                next = now + 1000000000ull;
        }
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* The workload's name in per-workload figures: its own, or its corpus
 * file's. */
static const char *workload_name(const yb_engine_opts *w)
{
    const char *slash;
    if (w->workload_name)
        return w->workload_name;
    return (slash = strrchr(w->corpus_path, '/')) ? slash + 1 : w->corpus_path;
}

/* Turns every '/' of s into '_'; returns s. */
static char *no_slash(char *s)
{
    for (char *c = s; *c; c++)
        if (*c == '/')
            *c = '_';
    return s;
}

/* Has every lane of every worker tag its seconds "WORKLOAD/TARGET/" +
 * operation (the target's name, or its authority; '/' inside either
 * becomes '_', so a tag splits at its first two '/'). */
static int tag_seconds(const yb_plan *plan, yb_worker **ws, unsigned nw, char *err,
                       size_t errlen)
{
    for (unsigned i = 0; i < nw; i++)
        for (size_t k = 0; k < yb_worker_lanes(ws[i]); k++) {
            size_t pair = yb_worker_lane_pair(ws[i], k);
            const yb_engine_opts *w = plan->pair[pair].workload;
            const yb_target *t = plan->pair[pair].target;
            char prefix[400];
            snprintf(prefix, sizeof prefix, "%s", workload_name(w));
            size_t at = strlen(no_slash(prefix));
            snprintf(prefix + at, sizeof prefix - at, "/%s",
                     w->target_name ? w->target_name : t->authority);
            if (at + 1 < sizeof prefix) /* (a workload name that filled it: nothing after) */
                no_slash(prefix + at + 1);
            at = strlen(prefix);
            snprintf(prefix + at, sizeof prefix - at, "/");
            if (yb_worker_set_tag(ws[i], k, prefix) < 0) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
        }
    return 0;
}

/* Gives every lane of every worker its lane of the live metrics, named
 * after its pair. */
static int metrics_lanes(yb_metrics *m, const yb_plan *plan, yb_worker **ws, unsigned nw,
                         char *err, size_t errlen)
{
    for (unsigned i = 0; i < nw; i++)
        for (size_t k = 0; k < yb_worker_lanes(ws[i]); k++) {
            size_t pair = yb_worker_lane_pair(ws[i], k);
            const yb_engine_opts *w = plan->pair[pair].workload;
            const yb_target *t = plan->pair[pair].target;
            char tn[320];
            snprintf(tn, sizeof tn, "%s://%s", t->scheme, t->authority);
            yb_metrics_lane *l = yb_metrics_lane_new(m, workload_name(w),
                                                     w->target_name ? w->target_name : tn, err,
                                                     errlen);
            if (!l || yb_worker_set_metrics(ws[i], k, l) < 0) {
                if (l)
                    snprintf(err, errlen, "out of memory");
                return -1;
            }
        }
    return 0;
}

int yb_engine_run(const yb_engine_opts *o, yb_recorder *out, char *err, size_t errlen)
{
    yb_plan plan;
    yb_plan_single(&plan, o);
    return yb_engine_run_plan(&plan, out, NULL, err, errlen);
}

int yb_engine_run_plan(const yb_plan *plan, yb_recorder *out, yb_recorder *per_pair, char *err,
                       size_t errlen)
{
    /* what belongs to the run (stop flag, progress, streams, grace) is
     * read from the first pair: every pair's workload carries the same */
    const yb_engine_opts *o = plan->pair[0].workload;
    uint64_t ticks0 = 0, steal0 = 0, ticks1, steal1;
    int have_ticks = yb_cpu_ticks(&ticks0, &steal0) == 0;
    /* the pairs share the plan's workers, each worker a lane per pair it
     * takes part in (plan.h) */
    unsigned nw = yb_plan_workers(plan);
    yb_worker **ws = calloc(nw, sizeof *ws);
    if (!ws) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    unsigned started = 0;
    for (unsigned i = 0; i < nw && !rc; i++)
        /* live metrics label each pair's figures: lanes keep their own */
        if (!(ws[i] = yb_worker_new(plan, i, o->progress != NULL, per_pair,
                                    o->metrics && plan->n_pairs > 1, err, errlen)))
            rc = -1;
    if (o->stream && !rc && yb_stream_lanes(o->stream, nw, err, errlen) < 0)
        rc = -1;
    if (o->metrics && !rc && metrics_lanes(o->metrics, plan, ws, nw, err, errlen) < 0)
        rc = -1;
    if (yb_stream_tagged(o->stream) && !rc && tag_seconds(plan, ws, nw, err, errlen) < 0)
        rc = -1;
    if (o->stream && !rc && yb_stream_launch(o->stream, err, errlen) < 0)
        rc = -1;
    /* the threads prepare (io_uring, timer slack) and wait at their gate */
    for (unsigned i = 0; i < nw && !rc; i++) {
        if (yb_worker_start(ws[i]) < 0) {
            snprintf(err, errlen, "cannot start worker thread %u", i);
            rc = -1;
        } else {
            started++;
        }
    }
    for (unsigned i = 0; i < started; i++)
        yb_worker_ready(ws[i]);
    /* --start-at: everything is prepared; now the wall clock's instant
     * (several processes meet there), unless a stop comes first */
    if (!rc && o->start_at_ns && yb_walltime_sleep_until(o->start_at_ns, o->stop) < 0) {
        snprintf(err, errlen, "stopped while waiting for the start time: nothing was sent");
        rc = YB_ENGINE_NOT_STARTED;
    }
    /* one clock for every worker, read once they are all prepared */
    uint64_t start = uv_hrtime();
    if (o->started_unix_ns)
        *o->started_unix_ns = yb_walltime_now();
    if (o->stream && !rc)
        yb_stream_start(o->stream, start);
    for (unsigned i = 0; i < nw && !rc; i++) {
        yb_worker_set_start(ws[i], start);
        if (o->stream)
            yb_worker_set_lane(ws[i], yb_stream_lane_of(o->stream, i));
    }
    for (unsigned i = 0; i < started; i++)
        (rc ? yb_worker_cancel : yb_worker_go)(ws[i]);
    if (rc) { /* nothing ran: as if no thread had started */
        for (unsigned i = 0; i < started; i++)
            yb_worker_join(ws[i]);
        started = 0;
    }
    reason_watch rw = {o, start, NULL, NULL, 0};
    if (o->on_reason && !rc) {
        rw.seen = calloc(started ? started : 1, sizeof *rw.seen);
        rw.told = calloc((size_t)YB_REASONS * (started ? started : 1), sizeof *rw.told);
        if (!rw.seen || !rw.told) { /* -v is a courtesy: the run goes on */
            free(rw.seen);
            free(rw.told);
            rw.seen = NULL;
            rw.told = NULL;
        }
    }
    if ((o->progress || rw.told) && !rc)
        watch_loop(plan, ws, started, start, &rw);
    for (unsigned i = 0; i < started; i++)
        yb_worker_join(ws[i]);
    reasons_poll(&rw, ws, started); /* those of the last moments */
    free(rw.seen);
    free(rw.told);
    out->run_start = start;
    if (have_ticks && yb_cpu_ticks(&ticks1, &steal1) == 0 && ticks1 >= ticks0 && steal1 >= steal0) {
        out->cpu_ticks += ticks1 - ticks0;
        out->cpu_steal_ticks += steal1 - steal0;
    }
    for (unsigned i = 0; i < started; i++) {
        size_t pair = 0;
        const char *werr = yb_worker_error(ws[i], &pair);
        if (werr && !rc) {
            const char *corpus = plan->pair[pair].workload->corpus_path;
            /* corpus reader errors already start with the file's name */
            size_t pl = strlen(corpus);
            if (!strncmp(werr, corpus, pl) && werr[pl] == ':')
                snprintf(err, errlen, "%s", werr);
            else
                snprintf(err, errlen, "%s: %s", corpus, werr);
            rc = -1;
        }
        yb_recorder *r = yb_worker_recorder(ws[i]);
        if ((yb_recorder_finish(r) < 0 || yb_recorder_merge(out, r) < 0) && !rc) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
        for (size_t k = 0; per_pair && k < yb_worker_lanes(ws[i]); k++) {
            int own;
            yb_recorder *lr = yb_worker_lane_recorder(ws[i], k, &pair, &own);
            per_pair[pair].run_start = start;
            if ((yb_recorder_finish(lr) < 0 || (own && yb_recorder_merge(&per_pair[pair], lr) < 0)) &&
                !rc) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
            }
        }
    }
    /* every per-pair histogram exists for the reports (the fleet's are
     * made lazily: yb_recorder_init_lazy) */
    for (size_t k = 0; per_pair && k < plan->n_pairs; k++)
        if (yb_recorder_fill(&per_pair[k]) < 0 && !rc) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
    /* the streamed outputs end with what the workers measured in all */
    char serr[256];
    if (o->stream && yb_stream_end(o->stream, out, serr, sizeof serr) < 0 && !rc) {
        snprintf(err, errlen, "%s", serr);
        rc = -1;
    }
    for (unsigned i = 0; i < nw; i++)
        yb_worker_free(ws[i]);
    free(ws);
    return rc;
}
