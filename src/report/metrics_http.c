/* The live metrics listener's request judge (see metrics_http.h): the
 * project's HTTP/1.1 request parser (codec/h1.h, on libhttp-parser) reads
 * the head; this file only decides the answer. */
#include "config.h"
#include "report/metrics_http.h"
#include "util/util.h"

#include <string.h>
#include <strings.h>

#define OPENMETRICS "application/openmetrics-text"

static int is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* Trims spaces and tabs around [*s, *s + *n). */
static void trim(const char **s, size_t *n)
{
    while (*n && is_space(**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n && is_space((*s)[*n - 1]))
        (*n)--;
}

/* One media range of an Accept header ("type/sub;p=v;q=0.5"): 1 when it
 * is OpenMetrics with a q-value above 0. */
static int range_wants(const char *s, size_t n)
{
    const char *semi = memchr(s, ';', n);
    size_t tl = semi ? (size_t)(semi - s) : n;
    const char *t = s;
    trim(&t, &tl);
    if (tl != strlen(OPENMETRICS) || strncasecmp(t, OPENMETRICS, tl))
        return 0;
    while (semi) {
        const char *p = semi + 1;
        size_t rest = n - (size_t)(p - s);
        semi = memchr(p, ';', rest);
        size_t pl = semi ? (size_t)(semi - p) : rest;
        trim(&p, &pl);
        if (pl >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
            double q;
            /* a malformed q-value is no consent */
            if (yb_parse_double_n(p + 2, pl - 2, &q) < 0 || q <= 0)
                return 0;
        }
    }
    return 1;
}

int yb_metrics_wants_openmetrics(const char *val, size_t len)
{
    while (len) {
        const char *comma = memchr(val, ',', len);
        size_t n = comma ? (size_t)(comma - val) : len;
        if (range_wants(val, n))
            return 1;
        if (!comma)
            break;
        len -= n + 1;
        val = comma + 1;
    }
    return 0;
}

/* The answer to a complete request head. */
static void decide(const yb_h1_req *p, yb_metrics_verdict *v)
{
    size_t plen;
    const char *path = yb_h1_req_path(p, &plen);
    const char *q = memchr(path, '?', plen);
    size_t base = q ? (size_t)(q - path) : plen;
    if (base != strlen("/metrics") || memcmp(path, "/metrics", base)) {
        v->status = 404;
        return;
    }
    if (strcmp(yb_h1_req_method(p), "GET")) {
        v->status = 405;
        return;
    }
    v->status = 200;
    const yb_h1_header *a = yb_h1_req_header(p, "accept");
    v->openmetrics = a && yb_metrics_wants_openmetrics(a->value, a->value_len);
}

int yb_metrics_http_judge(yb_h1_req *p, const uint8_t *buf, size_t len, int eof,
                          yb_metrics_verdict *v)
{
    memset(v, 0, sizeof *v);
    if (len > YB_METRICS_REQ_MAX) {
        v->status = 431;
        return 1;
    }
    yb_h1_req_reset(p);
    size_t used = 0;
    yb_h1_rc rc = len ? yb_h1_req_feed(p, buf, len, &used) : YB_H1_MORE;
    if (rc == YB_H1_MORE && eof) {
        if (!len)
            return -1;
        rc = yb_h1_req_eof(p);
        if (rc == YB_H1_MORE)
            return -1;
    }
    if (rc == YB_H1_ERROR) {
        int st = yb_h1_req_error_status(p);
        v->status = st ? st : 400;
        return 1;
    }
    if (rc == YB_H1_MORE)
        return 0;
    decide(p, v);
    return 1;
}
