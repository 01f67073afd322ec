/* Unit tests of the capture pipeline fed from memory: packets built here,
 * records collected through the emit callback. */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>

#include "capture/capture.h"
#include "capture/capture_priv.h"

typedef struct {
    int n;
    char path[8][128];
    uint32_t status[8];
    int redacted[8];
    uint64_t ts[8];
} got;

static int emit(void *ud, const yb_request *r)
{
    got *g = ud;
    if (g->n < 8) {
        snprintf(g->path[g->n], sizeof g->path[0], "%s %s", r->method, r->path);
        g->status[g->n] = r->expected_status;
        g->ts[g->n] = r->timestamp_ns;
        for (size_t i = 0; i < r->n_headers; i++)
            if (!strcasecmp(r->headers[i].name, "authorization") &&
                r->headers[i].value_len == 10 && !memcmp(r->headers[i].value, "<redacted>", 10))
                g->redacted[g->n] = 1;
    }
    g->n++;
    return 0;
}

/* Raw IPv4/TCP packet (YB_LINK_RAW). */
static size_t pkt(uint8_t *b, int from_client, uint32_t seq, uint8_t flags, const char *payload)
{
    size_t n = payload ? strlen(payload) : 0;
    memset(b, 0, 40);
    b[0] = 0x45;
    b[2] = (uint8_t)((40 + n) >> 8);
    b[3] = (uint8_t)(40 + n);
    b[8] = 64;
    b[9] = 6;
    uint8_t a[4] = {10, 0, 0, 1}, s[4] = {10, 0, 0, 2};
    memcpy(b + 12, from_client ? a : s, 4);
    memcpy(b + 16, from_client ? s : a, 4);
    uint16_t cp = 40000, sp = 8443;
    uint16_t src = from_client ? cp : sp, dst = from_client ? sp : cp;
    b[20] = (uint8_t)(src >> 8); b[21] = (uint8_t)src;
    b[22] = (uint8_t)(dst >> 8); b[23] = (uint8_t)dst;
    b[24] = (uint8_t)(seq >> 24); b[25] = (uint8_t)(seq >> 16);
    b[26] = (uint8_t)(seq >> 8); b[27] = (uint8_t)seq;
    b[32] = 5 << 4;
    b[33] = flags;
    if (n)
        memcpy(b + 40, payload, n);
    return 40 + n;
}

static void feed(yb_capture *c, uint64_t ts, int cl, uint32_t seq, uint8_t fl, const char *p)
{
    uint8_t b[2048];
    size_t n = pkt(b, cl, seq, fl, p);
    assert_int_equal(yb_capture_packet(c, YB_LINK_RAW, ts, b, n, n), 0);
}

/* Like feed, for binary payloads of len bytes. */
static void feed_bin(yb_capture *c, uint64_t ts, int cl, uint32_t seq, const uint8_t *p,
                     size_t len)
{
    uint8_t b[2048];
    assert_true(len <= sizeof b - 40);
    size_t n = pkt(b, cl, seq, YB_TCP_ACK, NULL);
    memcpy(b + 40, p, len);
    b[2] = (uint8_t)((40 + len) >> 8);
    b[3] = (uint8_t)(40 + len);
    n += len;
    assert_int_equal(yb_capture_packet(c, YB_LINK_RAW, ts, b, n, n), 0);
}

/* Appends an HTTP/2 frame header (and the payload) to b at *off. */
static void h2frame(uint8_t *b, size_t *off, uint8_t type, uint8_t flags, uint32_t sid,
                    const uint8_t *pay, size_t len)
{
    uint8_t h[9] = {(uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len, type, flags,
                    (uint8_t)(sid >> 24), (uint8_t)(sid >> 16), (uint8_t)(sid >> 8), (uint8_t)sid};
    memcpy(b + *off, h, 9);
    *off += 9;
    if (len)
        memcpy(b + *off, pay, len);
    *off += len;
}

/* An HTTP/2 request whose header block is empty (HEADERS with END_HEADERS
 * and no fragment) is no record, counted as invalid; the connection goes
 * on and the next stream's request is extracted.  The empty block once
 * did arithmetic on a null pointer (clang UBSan; tests/fuzz/regress has
 * the fuzzer's input). */
static void test_h2_empty_header_block(void **state)
{
    (void)state;
    got g;
    memset(&g, 0, sizeof g);
    yb_capture_opts o;
    memset(&o, 0, sizeof o);
    yb_capture *c = yb_capture_new(&o, emit, &g);
    assert_non_null(c);
    uint8_t cb[256], sb[64];
    size_t cn = 0, sn = 0;
    memcpy(cb, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24);
    cn = 24;
    h2frame(cb, &cn, 4, 0, 0, NULL, 0);                 /* SETTINGS */
    h2frame(cb, &cn, 1, 0x4 | 0x1, 1, NULL, 0);         /* empty HEADERS, END_STREAM */
    /* :method GET, :scheme http, :path /, :authority sw (HPACK static table) */
    static const uint8_t get[] = {0x82, 0x86, 0x84, 0x41, 2, 's', 'w'};
    h2frame(cb, &cn, 1, 0x4 | 0x1, 3, get, sizeof get);
    h2frame(sb, &sn, 4, 0, 0, NULL, 0);
    static const uint8_t ok[] = {0x88};                 /* :status 200 */
    h2frame(sb, &sn, 1, 0x4 | 0x1, 1, NULL, 0);         /* empty response block */
    h2frame(sb, &sn, 1, 0x4 | 0x1, 3, ok, sizeof ok);
    feed(c, 1000, 1, 100, YB_TCP_SYN, NULL);
    feed(c, 1100, 0, 500, YB_TCP_SYN | YB_TCP_ACK, NULL);
    feed_bin(c, 2000, 1, 101, cb, cn);
    feed_bin(c, 3000, 0, 501, sb, sn);
    assert_int_equal(yb_capture_finish(c), 0);
    assert_int_equal(g.n, 1);
    assert_string_equal(g.path[0], "GET /");
    assert_int_equal(g.status[0], 200);
    const yb_capture_stats *st = yb_capture_get_stats(c);
    assert_int_equal(st->flows_h2, 1);
    assert_int_equal(st->drop_invalid, 1);
    assert_int_equal(st->hpack_errors, 0);
    yb_capture_free(c);
}

static const char REQ1[] = "PATCH /restconf/data/x HTTP/1.1\r\nHost: sw\r\n"
                           "Authorization: Basic YTpi\r\nContent-Length: 2\r\n\r\n{}";
static const char REQ2[] = "GET /other HTTP/1.1\r\nHost: sw\r\n\r\n";
static const char RESP1[] = "HTTP/1.1 204 No Content\r\n\r\n";
static const char RESP2[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";

static void test_h1_pairs_and_redacts(void **state)
{
    (void)state;
    got g;
    memset(&g, 0, sizeof g);
    yb_capture_opts o;
    memset(&o, 0, sizeof o);
    yb_capture *c = yb_capture_new(&o, emit, &g);
    assert_non_null(c);
    feed(c, 1000, 1, 100, YB_TCP_SYN, NULL);
    feed(c, 1100, 0, 500, YB_TCP_SYN | YB_TCP_ACK, NULL);
    uint32_t cs = 101, ss = 501;
    /* Out of order: the second request first. */
    feed(c, 2000, 1, cs + (uint32_t)strlen(REQ1), YB_TCP_ACK, REQ2);
    feed(c, 2100, 1, cs, YB_TCP_ACK, REQ1);
    feed(c, 2200, 1, cs, YB_TCP_ACK, REQ1); /* retransmission */
    feed(c, 3000, 0, ss, YB_TCP_ACK, RESP1);
    feed(c, 3100, 0, ss + (uint32_t)strlen(RESP1), YB_TCP_ACK, RESP2);
    assert_int_equal(yb_capture_finish(c), 0);
    assert_int_equal(g.n, 2);
    assert_string_equal(g.path[0], "PATCH /restconf/data/x");
    assert_int_equal(g.status[0], 204);
    assert_int_equal(g.redacted[0], 1);
    assert_string_equal(g.path[1], "GET /other");
    assert_int_equal(g.status[1], 404);
    const yb_capture_stats *st = yb_capture_get_stats(c);
    assert_int_equal(st->req_restconf, 1);
    assert_int_equal(st->req_http1, 1);
    assert_true(st->retrans_bytes >= strlen(REQ1));
    size_t nr;
    const char *const *red = yb_capture_redactions(c, &nr);
    assert_int_equal(nr, 1);
    assert_string_equal(red[0], "authorization");
    yb_capture_free(c);
}

/* Records of many pipelined requests, by path: the status each got. */
typedef struct {
    int n;
    uint32_t status[512];
} piped;

static int emit_piped(void *ud, const yb_request *r)
{
    piped *g = ud;
    unsigned k;
    assert_int_equal(sscanf(r->path, "/k%u", &k), 1);
    assert_true(k < 512);
    g->status[k] = r->expected_status;
    g->n++;
    return 0;
}

/* HTTP/1.1 pipelining: requests wait in a ring that starts small and
 * grows while its oldest entry is anywhere in it (bursts of 7 requests,
 * then 4 responses); every response goes to its own request. */
static void test_h1_pipelined_ring(void **state)
{
    (void)state;
    enum { N = 400 };
    static piped g;
    memset(&g, 0, sizeof g);
    yb_capture_opts o;
    memset(&o, 0, sizeof o);
    yb_capture *c = yb_capture_new(&o, emit_piped, &g);
    assert_non_null(c);
    feed(c, 1000, 1, 100, YB_TCP_SYN, NULL);
    feed(c, 1100, 0, 500, YB_TCP_SYN | YB_TCP_ACK, NULL);
    uint32_t cs = 101, ss = 501;
    uint64_t ts = 2000;
    unsigned sent = 0, answered = 0;
    char m[128];
    while (answered < N) {
        for (int i = 0; i < 7 && sent < N; i++, sent++) {
            snprintf(m, sizeof m, "GET /k%u HTTP/1.1\r\nHost: x\r\n\r\n", sent);
            feed(c, ts++, 1, cs, YB_TCP_ACK, m);
            cs += (uint32_t)strlen(m);
        }
        for (int i = 0; i < (sent == N ? N : 4) && answered < sent; i++, answered++) {
            snprintf(m, sizeof m, "HTTP/1.1 %u X\r\nContent-Length: 0\r\n\r\n",
                     200 + answered % 300);
            feed(c, ts++, 0, ss, YB_TCP_ACK, m);
            ss += (uint32_t)strlen(m);
        }
    }
    assert_int_equal(yb_capture_finish(c), 0);
    assert_int_equal(g.n, N);
    for (unsigned k = 0; k < N; k++)
        assert_int_equal(g.status[k], 200 + k % 300);
    yb_capture_free(c);
}

static void test_short_and_foreign_packets(void **state)
{
    (void)state;
    yb_capture_opts o;
    memset(&o, 0, sizeof o);
    yb_capture *c = yb_capture_new(&o, NULL, NULL);
    uint8_t b[64];
    memset(b, 0x45, sizeof b);
    for (size_t n = 0; n < sizeof b; n++)
        assert_int_equal(yb_capture_packet(c, YB_LINK_ETHERNET, 1, b, n, n), 0);
    assert_int_equal(yb_capture_packet(c, 9999, 1, b, sizeof b, sizeof b), 0);
    assert_int_equal(yb_capture_finish(c), 0);
    const yb_capture_stats *st = yb_capture_get_stats(c);
    assert_int_equal(st->bad_link, 1);
    assert_int_equal(st->requests, 0);
    yb_capture_free(c);
}

static int add_count(void *ud, const uint8_t *t, size_t n)
{
    (void)t;
    *(size_t *)ud += n;
    return 0;
}

static void test_dsb_walker(void **state)
{
    (void)state;
    /* SHB (28 bytes) + DSB with 8 bytes of "TLSK" secrets. */
    uint8_t f[28 + 32];
    memset(f, 0, sizeof f);
    uint32_t shb[7] = {0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0xffffffff, 0xffffffff, 28};
    memcpy(f, shb, 28);
    uint32_t dsb[4] = {0x0000000A, 32, 0x544c534b, 8};
    memcpy(f + 28, dsb, 16);
    memcpy(f + 44, "ABCDEFGH", 8);
    uint32_t tail = 32;
    memcpy(f + 56, &tail, 4);
    size_t total = 0;
    assert_int_equal(yb_cap_pcapng_dsb_mem(f, sizeof f, add_count, &total), 1);
    assert_int_equal(total, 8);
    /* A lying secrets length is refused. */
    uint32_t bad = 4000;
    memcpy(f + 40, &bad, 4);
    assert_int_equal(yb_cap_pcapng_dsb_mem(f, sizeof f, add_count, &total), -1);
}

/* A gRPC body's buffer starts at the size its first message's prefix
 * claims; a claim over --max-flow-buffer must not drop a body that fits:
 * the request is written (its framing counted as broken), as it was
 * before the claim was used. */
static void test_h2_grpc_claim_over_cap(void **state)
{
    (void)state;
    got g;
    memset(&g, 0, sizeof g);
    yb_capture_opts o;
    memset(&o, 0, sizeof o);
    o.max_flow_buffer = 64 << 10;
    yb_capture *c = yb_capture_new(&o, emit, &g);
    assert_non_null(c);
    uint8_t cb[256], sb[64];
    size_t cn = 24, sn = 0;
    memcpy(cb, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24);
    h2frame(cb, &cn, 4, 0, 0, NULL, 0); /* SETTINGS */
    /* :method POST, :scheme http, :path /gnmi.gNMI/Set, :authority sw,
     * content-type application/grpc (literals by static name index) */
    static const uint8_t hb[] = {0x83, 0x86, 0x04, 14, '/', 'g', 'n', 'm', 'i', '.', 'g', 'N',
                                 'M', 'I', '/', 'S', 'e', 't', 0x41, 2, 's', 'w', 0x0f, 0x10,
                                 16, 'a', 'p', 'p', 'l', 'i', 'c', 'a', 't', 'i', 'o', 'n', '/',
                                 'g', 'r', 'p', 'c'};
    h2frame(cb, &cn, 1, 0x4, 1, hb, sizeof hb);
    /* one message claiming 100,000 bytes, 10 sent, END_STREAM */
    static const uint8_t data[] = {0, 0, 0x01, 0x86, 0xa0, '0', '1', '2', '3', '4',
                                   '5', '6', '7', '8', '9'};
    h2frame(cb, &cn, 0, 0x1, 1, data, sizeof data);
    h2frame(sb, &sn, 4, 0, 0, NULL, 0);
    static const uint8_t ok[] = {0x88}; /* :status 200 */
    h2frame(sb, &sn, 1, 0x4 | 0x1, 1, ok, sizeof ok);
    feed(c, 1000, 1, 100, YB_TCP_SYN, NULL);
    feed(c, 1100, 0, 500, YB_TCP_SYN | YB_TCP_ACK, NULL);
    feed_bin(c, 2000, 1, 101, cb, cn);
    feed_bin(c, 3000, 0, 501, sb, sn);
    assert_int_equal(yb_capture_finish(c), 0);
    const yb_capture_stats *st = yb_capture_get_stats(c);
    assert_int_equal(st->drop_too_large, 0);
    assert_int_equal(g.n, 1);
    assert_string_equal(g.path[0], "POST /gnmi.gNMI/Set");
    assert_int_equal(g.status[0], 200);
    assert_int_equal(st->grpc_framing_errors, 1);
    yb_capture_free(c);
}

/* ---- a classic pcap file cut short while capture reads it ------------ */

typedef struct {
    const char *path;
    off_t cut_to;
    int n;
} cutter;

/* At the first record, cuts the file being read. */
static int emit_and_cut(void *ud, const yb_request *r)
{
    (void)r;
    cutter *k = ud;
    if (k->n++ == 0)
        assert_int_equal(truncate(k->path, k->cut_to), 0);
    return 0;
}

static void put32(FILE *f, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    assert_int_equal(fwrite(b, 1, 4, f), 4);
}

/* One Ethernet packet of the test's connection as a pcap record. */
static void put_packet(FILE *f, uint32_t t, int cl, uint32_t seq, uint8_t fl, const char *p)
{
    uint8_t b[2048] = {0};
    size_t n = pkt(b + 14, cl, seq, fl, p);
    b[12] = 0x08; /* IPv4 */
    put32(f, t);
    put32(f, 0);
    put32(f, (uint32_t)n + 14);
    put32(f, (uint32_t)n + 14);
    assert_int_equal(fwrite(b, 1, n + 14, f), n + 14);
}

/* The file is read a block at a time: cut short while the first block's
 * records are used, the next read finds it shorter than it was when
 * opened.  The capture must stop there with a warning, the file counted
 * as failed, the records read before kept, none read after the cut, and
 * not crash (it did once, when the file was mapped). */
static void test_file_cut_while_read(void **state)
{
    (void)state;
    char path[] = "/tmp/yb-test-cut-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    assert_non_null(f);
    uint32_t hdr[6] = {0xa1b2c3d4u, 2 | (4u << 16), 0, 0, 65535, 1};
    for (int i = 0; i < 6; i++)
        put32(f, hdr[i]);
    const char *rq = "GET /x HTTP/1.1\r\nHost: a\r\n\r\n";
    const char *rs = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    uint32_t cs = 1000, ss = 5000;
    put_packet(f, 1, 1, cs - 1, YB_TCP_SYN, NULL);
    put_packet(f, 1, 0, ss - 1, YB_TCP_SYN | YB_TCP_ACK, NULL);
    enum { EXCHANGES = 20000 }; /* about 4 MB: many blocks past the cut */
    for (uint32_t i = 0; i < EXCHANGES; i++) {
        put_packet(f, 2 + i, 1, cs, YB_TCP_ACK, rq);
        cs += (uint32_t)strlen(rq);
        put_packet(f, 2 + i, 0, ss, YB_TCP_ACK, rs);
        ss += (uint32_t)strlen(rs);
    }
    assert_int_equal(fclose(f), 0);

    yb_capture_opts o;
    memset(&o, 0, sizeof o);
    cutter k = {path, 20000, 0};
    yb_capture *c = yb_capture_new(&o, emit_and_cut, &k);
    assert_non_null(c);
    char err[256] = "";
    FILE *warn = tmpfile();
    assert_non_null(warn);
    assert_int_equal(yb_capture_read_file(c, path, NULL, warn, err, sizeof err), 0);
    assert_int_equal(yb_capture_finish(c), 0);
    const yb_capture_stats *st = yb_capture_get_stats(c);
    assert_int_equal(st->file_errors, 1);
    /* what was read before the cut was used (the first block's records,
     * at most 1 MB of the 4 MB), nothing after it */
    assert_true(k.n > 10);
    assert_true(k.n < EXCHANGES / 4);
    assert_true(st->packets < EXCHANGES / 2);
    char text[512] = "";
    rewind(warn);
    size_t tn = fread(text, 1, sizeof text - 1, warn);
    text[tn] = 0;
    assert_non_null(strstr(text, "cut short while being read"));
    fclose(warn);
    yb_capture_free(c);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_h1_pairs_and_redacts),
        cmocka_unit_test(test_h1_pipelined_ring),
        cmocka_unit_test(test_short_and_foreign_packets),
        cmocka_unit_test(test_dsb_walker),
        cmocka_unit_test(test_h2_empty_header_block),
        cmocka_unit_test(test_file_cut_while_read),
        cmocka_unit_test(test_h2_grpc_claim_over_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
