/* The live metrics listener's HTTP side (report/metrics.h): what to answer
 * to the bytes a scraper sent.  No I/O: bytes in, a verdict out, so the
 * fuzz target (tests/fuzz/fuzz_metrics_http.c) drives exactly what the
 * listener runs. */
#ifndef YB_METRICS_HTTP_H
#define YB_METRICS_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include "codec/h1.h"

/* Bytes of a request the listener reads; a request head longer than this
 * is answered 431 and the connection closed. */
#define YB_METRICS_REQ_MAX 8192

typedef struct {
    /* 200 (GET /metrics), 404 (another path), 405 (another method on
     * /metrics), or the parser's error status (400, 413, 414, 431, 505) */
    int status;
    int openmetrics; /* 200: the Accept header asks for OpenMetrics text */
} yb_metrics_verdict;

/* Judges buf[0..len), every byte received on a connection so far (eof: the
 * peer closed its side), with parser p (yb_h1_req_new(YB_METRICS_REQ_MAX);
 * reset here).
 * Returns 1 with *v filled when the answer is known, 0 when more bytes
 * are needed, or -1 when the peer closed before a request began (no byte,
 * or blank lines only: no answer). */
int yb_metrics_http_judge(yb_h1_req *p, const uint8_t *buf, size_t len, int eof,
                          yb_metrics_verdict *v);

/* 1 when the Accept header value val (len bytes) lists OpenMetrics text
 * (application/openmetrics-text) with a q-value above 0, else 0. */
int yb_metrics_wants_openmetrics(const char *val, size_t len);

#endif
