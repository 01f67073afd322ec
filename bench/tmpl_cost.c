/* bench/tmpl_cost CORPUS [ROUNDS]: what templating adds to each request's
 * submit, measured through the real client codec (the one the corpus'
 * protocol takes) on a stub session that takes every byte written (no
 * sockets): the first record is prepared twice, as it is and as a
 * template (as marked, or --templates), and each round submits a batch of each,
 * interleaved; HTTP/1.1 answers each with a canned 204, HTTP/2 flushes the
 * batch (HEADERS + DATA frames) and drops the session.  Prints one line per
 * kind: "plain NS" and "templated NS" (median ns per request over the
 * rounds) and "added NS".  Built on demand: make bench/tmpl_cost. */
#include "config.h"
#include "codec/codec.h"
#include "corpus/corpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#define BATCH 200

static uint64_t done_n;

static int h_write(void *h, const uv_buf_t *b, unsigned n)
{
    (void)h;
    (void)b;
    (void)n;
    return 1; /* "written" */
}
static void h_done(void *h, yb_exchange *x)
{
    (void)h;
    (void)x;
    done_n++;
}
static void h_close(void *h, int fatal, yb_err_class why, const char *reason)
{
    (void)h;
    (void)fatal;
    (void)why;
    (void)reason;
}
static void h_ready(void *h)
{
    (void)h;
}

static const yb_codec_host HOST = {.write = h_write, .done = h_done, .close = h_close,
                                   .ready = h_ready};

/* ns per request for one batch of p on a fresh session. */
static double batch(const yb_codec_ops *ops, const yb_codec_cfg *cfg, const yb_prepared *p,
                    yb_exchange *xs)
{
    static const char resp[] = "HTTP/1.1 204 No Content\r\n\r\n";
    yb_codec *c = ops->create(cfg, &HOST, NULL);
    if (!c || ops->start(c) < 0)
        exit(3);
    uint64_t t0 = uv_hrtime();
    for (int i = 0; i < BATCH; i++) {
        yb_exchange *x = &xs[i];
        memset(x, 0, sizeof *x);
        x->req = p;
        x->res.session = 1;
        x->res.grpc_status = -1;
        x->tv.index = (uint64_t)i;
        x->tv.iter = (uint64_t)i / 7;
        x->workers = 1;
        if (ops->submit(c, x, t0) < 0)
            exit(3);
        if (!ops->flush) /* HTTP/1.1: one at a time, answered */
            ops->on_read(c, (const uint8_t *)resp, sizeof resp - 1, t0);
    }
    if (ops->flush)
        ops->flush(c, t0);
    uint64_t t1 = uv_hrtime();
    ops->destroy(c);
    return (double)(t1 - t0) / BATCH;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: tmpl_cost CORPUS [ROUNDS]\n");
        return 2;
    }
    int rounds = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 200;
    if (rounds < 1 || rounds > 100000)
        rounds = 200;
    char err[512];
    yb_corpus_reader *rd = yb_corpus_reader_open(argv[1], err, sizeof err);
    const yb_request *r;
    if (!rd || yb_corpus_reader_next(rd, &r, err, sizeof err) != 1) {
        fprintf(stderr, "tmpl_cost: %s\n", err);
        return 2;
    }
    const yb_codec_ops *ops = yb_proto_is_h2(r->protocol) ? &yb_h2_client_ops : &yb_h1_client_ops;
    yb_codec_cfg plain = {.authority = "127.0.0.1:1", .scheme = "http", .max_body = 1 << 20,
                          .streams = BATCH, .user_agent = "yangblast/bench", .seed = 1,
                          .target_name = "sw1"};
    yb_codec_cfg tmpl = plain;
    tmpl.templates = 1;
    yb_request r0 = *r; /* the same record, sent as it is */
    r0.templated = 0;
    yb_prepared pp, pt;
    if (ops->prepare(&plain, &r0, &pp) < 0 || ops->prepare(&tmpl, r, &pt) < 0) {
        fprintf(stderr, "tmpl_cost: cannot prepare the first record\n");
        return 2;
    }
    yb_exchange *xs = calloc(BATCH, sizeof *xs);
    double *a = calloc((size_t)rounds, sizeof *a), *b = calloc((size_t)rounds, sizeof *b);
    if (!xs || !a || !b)
        return 3;
    for (int i = 0; i < rounds; i++) {
        a[i] = batch(ops, &plain, &pp, xs);
        b[i] = batch(ops, &tmpl, &pt, xs);
    }
    qsort(a, (size_t)rounds, sizeof *a, cmp);
    qsort(b, (size_t)rounds, sizeof *b, cmp);
    printf("%s request of %zu body bytes, %d rounds of %d\n", yb_proto_name(r->protocol),
           r->body_len, rounds, BATCH);
    printf("plain %.0f\ntemplated %.0f\nadded %.0f\n", a[rounds / 2], b[rounds / 2],
           b[rounds / 2] - a[rounds / 2]);
    ops->prepared_free(&pp);
    ops->prepared_free(&pt);
    free(xs);
    free(a);
    free(b);
    yb_corpus_reader_close(rd);
    return ops->flush || done_n == 2ull * (uint64_t)rounds * BATCH ? 0 : 3;
}
