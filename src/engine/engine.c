/* The run: builds the plan, prepares one worker per thread, starts them
 * on one clock, reports progress while they run, and merges their
 * recorders once they have joined. */
#include "config.h"
#include "engine/engine.h"
#include "engine/plan.h"
#include "engine/worker.h"
#include "report/stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Calls o->progress about once a second until every worker has ended. */
static void progress_loop(const yb_engine_opts *o, yb_worker **ws, unsigned n, uint64_t start)
{
    uint64_t next = start + 1000000000ull;
    for (;;) {
        yb_worker_live l;
        unsigned running = 0;
        for (unsigned i = 0; i < n; i++) {
            yb_worker_live_read(ws[i], &l);
            running += (unsigned)l.running;
        }
        if (!running)
            return;
        uint64_t now = uv_hrtime();
        if (now >= next) {
            yb_progress p;
            memset(&p, 0, sizeof p);
            p.elapsed_s = (double)(now - start) / 1e9;
            p.target_rate = o->sched.kind ? yb_sched_rate_at(&o->sched, now - start) : 0;
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

int yb_engine_run(const yb_engine_opts *o, yb_recorder *out, char *err, size_t errlen)
{
    yb_plan plan;
    yb_plan_single(&plan, o);
    yb_worker **ws = calloc(plan.workers, sizeof *ws);
    if (!ws) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    unsigned started = 0;
    for (unsigned i = 0; i < plan.workers && !rc; i++)
        if (!(ws[i] = yb_worker_new(&plan, i, o->progress != NULL, err, errlen)))
            rc = -1;
    if (o->stream && !rc && yb_stream_lanes(o->stream, plan.workers, err, errlen) < 0)
        rc = -1;
    /* one clock for every worker, read once they are all prepared */
    uint64_t start = uv_hrtime();
    if (o->stream && !rc && yb_stream_start(o->stream, start, err, errlen) < 0)
        rc = -1;
    for (unsigned i = 0; i < plan.workers && !rc; i++) {
        yb_worker_set_start(ws[i], start);
        if (o->stream)
            yb_worker_set_lane(ws[i], yb_stream_lane_of(o->stream, i));
    }
    for (unsigned i = 0; i < plan.workers && !rc; i++) {
        if (yb_worker_start(ws[i]) < 0) {
            snprintf(err, errlen, "cannot start worker thread %u", i);
            rc = -1;
        } else {
            started++;
        }
    }
    if (o->progress && !rc)
        progress_loop(o, ws, started, start);
    for (unsigned i = 0; i < started; i++)
        yb_worker_join(ws[i]);
    out->run_start = start;
    for (unsigned i = 0; i < started; i++) {
        const char *werr = yb_worker_error(ws[i]);
        if (werr && !rc) {
            /* corpus reader errors already start with the file's name */
            size_t pl = strlen(o->corpus_path);
            if (!strncmp(werr, o->corpus_path, pl) && werr[pl] == ':')
                snprintf(err, errlen, "%s", werr);
            else
                snprintf(err, errlen, "%s: %s", o->corpus_path, werr);
            rc = -1;
        }
        yb_recorder *r = yb_worker_recorder(ws[i]);
        if ((yb_recorder_finish(r) < 0 || yb_recorder_merge(out, r) < 0) && !rc) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
    }
    /* the streamed outputs end with what the workers measured in all */
    char serr[256];
    if (o->stream && yb_stream_end(o->stream, out, serr, sizeof serr) < 0 && !rc) {
        snprintf(err, errlen, "%s", serr);
        rc = -1;
    }
    for (unsigned i = 0; i < plan.workers; i++)
        yb_worker_free(ws[i]);
    free(ws);
    return rc;
}
