/* libFuzzer target: the live metrics listener's request judge
 * (report/metrics_http.h) on what a scraper sends.  Input: byte 0 bit 0 =
 * the peer closed after the rest; the rest = the bytes received.
 * Oracles: the answer is one of the statuses the listener gives; 200 only
 * for a GET; judging the bytes as they arrive in pieces gives, once
 * decided, the verdict the whole input gets (a request that is complete
 * stays what it was whatever follows it); the Accept check never reads
 * past its input. */
#include "config.h"
#include "report/metrics_http.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static yb_h1_req *parser;

static void fail(const char *what)
{
    fprintf(stderr, "metrics_http oracle: %s\n", what);
    abort();
}

static int allowed(int st)
{
    static const int ok[] = {200, 400, 404, 405, 413, 414, 431, 500, 505};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (st == ok[i])
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!parser && !(parser = yb_h1_req_new(YB_METRICS_REQ_MAX)))
        abort();
    if (size < 1)
        return 0;
    int eof = data[0] & 1;
    const uint8_t *buf = data + 1;
    size_t len = size - 1;

    yb_metrics_verdict whole;
    int rc = yb_metrics_http_judge(parser, buf, len, eof, &whole);
    if (rc == 1 && !allowed(whole.status))
        fail("a status the listener never gives");
    size_t lead = 0; /* blank lines before a request are allowed */
    while (lead < len && (buf[lead] == '\r' || buf[lead] == '\n'))
        lead++;
    if (rc == 1 && whole.status == 200 && (len - lead < 4 || memcmp(buf + lead, "GET ", 4)))
        fail("200 for a request that is no GET");
    /* no answer only when no request began (HTTP/1.1 lets blank lines
     * precede one) */
    for (size_t i = 0; rc == -1 && i < len; i++)
        if (buf[i] != '\r' && buf[i] != '\n')
            fail("no answer although a request began");

    /* as the bytes arrive: 1, then doubling pieces */
    for (size_t cut = 1; cut < len && len <= YB_METRICS_REQ_MAX; cut = cut * 2 + 1) {
        yb_metrics_verdict part;
        int prc = yb_metrics_http_judge(parser, buf, cut, 0, &part);
        if (prc == -1)
            fail("no answer to a partial request");
        if (prc == 1 && part.status == 200 && (rc != 1 || whole.status != 200 ||
                                               whole.openmetrics != part.openmetrics))
            fail("a complete request judged otherwise once more bytes came");
        if (prc == 1)
            break;
    }

    /* the Accept check on raw bytes (a copy of exactly len bytes, so ASan
     * sees any read past them) */
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        abort();
    memcpy(copy, buf, len);
    (void)yb_metrics_wants_openmetrics((const char *)copy, len);
    free(copy);
    return 0;
}
