/* A stub session for the client codec fuzz targets: the codec's host
 * interface (codec.h) with no sockets, checking what the codec reports.
 *
 * Oracles (abort on violation): an exchange completes at most once, only
 * while it is in flight, with res.done set and its times in order; the
 * response bytes it counts never exceed the bytes fed; the codec writes
 * nothing after asking for a fatal close. */
#ifndef YB_FUZZ_STUB_HOST_H
#define YB_FUZZ_STUB_HOST_H

#include "codec/codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STUB_MAX_X 16

typedef struct {
    yb_exchange x[STUB_MAX_X];
    int state[STUB_MAX_X]; /* 0 unused, 1 in flight, 2 done, 3 abandoned */
    int n;                 /* exchanges submitted */
    int closed, fatal;     /* close asked (fatal = at once) */
    int queue_writes;      /* write returns 0 (queued) instead of 1 */
    uint64_t fed;          /* server bytes given to on_read */
    uint64_t written;      /* client bytes the codec wrote */
    uint64_t now;
} stub;

static void stub_fail(const char *what)
{
    fprintf(stderr, "codec oracle: %s\n", what);
    abort();
}

static int stub_index(stub *s, const yb_exchange *x)
{
    for (int i = 0; i < s->n; i++)
        if (&s->x[i] == x)
            return i;
    stub_fail("completion of an exchange never submitted");
    return -1;
}

static int stub_write(void *h, const uv_buf_t *bufs, unsigned n)
{
    stub *s = h;
    if (s->fatal)
        stub_fail("write after a fatal close");
    for (unsigned i = 0; i < n; i++)
        s->written += bufs[i].len;
    return s->queue_writes ? 0 : 1;
}

static void stub_done(void *h, yb_exchange *x)
{
    stub *s = h;
    int i = stub_index(s, x);
    if (s->state[i] != 1)
        stub_fail(s->state[i] == 2 ? "an exchange completed twice"
                                   : "an abandoned exchange completed");
    s->state[i] = 2;
    const yb_result *r = &x->res;
    if (!r->done)
        stub_fail("completed without res.done");
    if ((r->sent && r->sent > r->done) || (r->first_byte && r->first_byte > r->done))
        stub_fail("times out of order");
    if (r->bytes_in > s->fed)
        stub_fail("more response bytes counted than received");
}

static void stub_close(void *h, int fatal, yb_err_class why)
{
    stub *s = h;
    (void)why;
    s->closed = 1;
    s->fatal |= fatal;
}

static void stub_ready(void *h)
{
    (void)h;
}

static void stub_notify(void *h, uint64_t now, int64_t lateness_ns, uint64_t n_updates)
{
    (void)h;
    (void)now;
    (void)lateness_ns;
    (void)n_updates;
}

static const yb_codec_host STUB_HOST = {stub_write, stub_done, stub_close, stub_ready,
                                        stub_notify};

/* Submits p as a new exchange; returns its index, or -1. */
static int stub_submit(stub *s, const yb_codec_ops *ops, yb_codec *c, const yb_prepared *p)
{
    if (s->n == STUB_MAX_X || !ops->capacity(c))
        return -1;
    int i = s->n;
    memset(&s->x[i], 0, sizeof s->x[i]);
    s->x[i].req = p;
    s->x[i].res.grpc_status = -1;
    if (ops->submit(c, &s->x[i], ++s->now) < 0)
        return -1;
    s->state[i] = 1;
    s->n++;
    return i;
}

#endif
