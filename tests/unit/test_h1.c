/* Unit tests for the HTTP/1.1 codec (src/codec/h1.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/h1.h"
#include "corpus/corpus.h"

#define S(lit) (const uint8_t *)(lit), (sizeof(lit) - 1)

/* ---- request serialization ------------------------------------------- */

static void mkreq(yb_request *r, const char *method, const char *path, const char *authority)
{
    yb_request_init(r);
    assert_int_equal(yb_request_set_str(&r->method, method), 0);
    assert_int_equal(yb_request_set_str(&r->path, path), 0);
    assert_int_equal(yb_request_set_str(&r->authority, authority), 0);
    assert_int_equal(yb_request_set_str(&r->scheme, "https"), 0);
}

static void hdr(yb_request *r, const char *name, const char *value)
{
    assert_int_equal(yb_request_add_header(r, name, value, strlen(value)), 0);
}

/* Fails unless out[0..len) is want; frees out. */
static void expect_wire(uint8_t *out, size_t len, const char *want)
{
    assert_non_null(out);
    if (len != strlen(want) || memcmp(out, want, len) != 0)
        fail_msg("serialized:\n%.*s\nwanted:\n%s", (int)len, (const char *)out, want);
    free(out);
}

static void expect_ser(const yb_request *r, const char *host, const char *auth, int close,
                       const char *want)
{
    uint8_t *out = NULL;
    size_t len = 0;
    assert_int_equal(yb_h1_serialize(r, host, auth, close, &out, &len), 0);
    expect_wire(out, len, want);
}

static void test_ser_get(void **state)
{
    (void)state;
    yb_request r;
    mkreq(&r, "GET", "/restconf/data/openconfig-acl:acl", "sw1:443");
    hdr(&r, "Accept", "application/yang-data+json");
    expect_ser(&r, NULL, NULL, 0,
               "GET /restconf/data/openconfig-acl:acl HTTP/1.1\r\n"
               "Host: sw1:443\r\n"
               "Accept: application/yang-data+json\r\n"
               "\r\n");
    yb_request_cleanup(&r);
}

static void test_ser_patch_body(void **state)
{
    (void)state;
    yb_request r;
    mkreq(&r, "PATCH", "/restconf/data/openconfig-acl:acl/acl-sets", "10.0.0.1");
    hdr(&r, "Content-Type", "application/yang-data+json");
    hdr(&r, "Accept", "application/yang-data+json");
    hdr(&r, "Authorization", "Basic YWRtaW46YWRtaW4=");
    const char *body = "{\"openconfig-acl:acl-sets\":{}}";
    assert_int_equal(yb_request_set_body(&r, body, strlen(body)), 0);
    expect_ser(&r, NULL, NULL, 0,
               "PATCH /restconf/data/openconfig-acl:acl/acl-sets HTTP/1.1\r\n"
               "Host: 10.0.0.1\r\n"
               "Content-Type: application/yang-data+json\r\n"
               "Accept: application/yang-data+json\r\n"
               "Authorization: Basic YWRtaW46YWRtaW4=\r\n"
               "Content-Length: 30\r\n"
               "\r\n"
               "{\"openconfig-acl:acl-sets\":{}}");
    yb_request_cleanup(&r);
}

static void test_ser_host_override(void **state)
{
    (void)state;
    yb_request r;
    mkreq(&r, "GET", "/x", "recorded.example:443");
    hdr(&r, "host", "recorded.example:443");
    expect_ser(&r, "127.0.0.1:8443", NULL, 0,
               "GET /x HTTP/1.1\r\nHost: 127.0.0.1:8443\r\n\r\n");
    yb_request_cleanup(&r);
}

static void test_ser_filtering(void **state)
{
    (void)state;
    yb_request r;
    mkreq(&r, "DELETE", "/restconf/data/a=b", "sw");
    hdr(&r, ":authority", "sw");
    hdr(&r, "X-First", "1");
    hdr(&r, "HOST", "other");
    hdr(&r, "content-length", "999");
    hdr(&r, "Connection", "keep-alive");
    hdr(&r, "TRANSFER-encoding", "chunked");
    hdr(&r, "X-Host-Like", "kept");
    hdr(&r, "Content-Lengthy", "kept too");
    hdr(&r, "x-last", "");
    expect_ser(&r, NULL, NULL, 0,
               "DELETE /restconf/data/a=b HTTP/1.1\r\n"
               "Host: sw\r\n"
               "X-First: 1\r\n"
               "X-Host-Like: kept\r\n"
               "Content-Lengthy: kept too\r\n"
               "x-last: \r\n"
               "\r\n");
    yb_request_cleanup(&r);
}

static void test_ser_auth_override(void **state)
{
    (void)state;
    yb_request r;
    mkreq(&r, "GET", "/a", "sw");
    hdr(&r, "authorization", "Basic cmVjb3JkZWQ=");
    hdr(&r, "Accept", "*/*");
    /* Without an override the recorded credentials travel as recorded. */
    expect_ser(&r, NULL, NULL, 0,
               "GET /a HTTP/1.1\r\nHost: sw\r\nauthorization: Basic cmVjb3JkZWQ=\r\n"
               "Accept: */*\r\n\r\n");
    expect_ser(&r, NULL, "Basic bmV3", 0,
               "GET /a HTTP/1.1\r\nHost: sw\r\nAccept: */*\r\n"
               "Authorization: Basic bmV3\r\n\r\n");
    yb_request_cleanup(&r);
}

static void test_ser_close_and_lengths(void **state)
{
    (void)state;
    yb_request r;
    mkreq(&r, "POST", "/p", "sw");
    expect_ser(&r, NULL, NULL, 1,
               "POST /p HTTP/1.1\r\nHost: sw\r\nContent-Length: 0\r\n"
               "Connection: close\r\n\r\n");
    yb_request_cleanup(&r);

    mkreq(&r, "PUT", "/p", "sw");
    expect_ser(&r, NULL, NULL, 0, "PUT /p HTTP/1.1\r\nHost: sw\r\nContent-Length: 0\r\n\r\n");
    yb_request_cleanup(&r);

    /* A GET with a body still says how long it is. */
    mkreq(&r, "GET", "", "sw");
    assert_int_equal(yb_request_set_body(&r, "xyz", 3), 0);
    expect_ser(&r, NULL, NULL, 1,
               "GET / HTTP/1.1\r\nHost: sw\r\nContent-Length: 3\r\n"
               "Connection: close\r\n\r\nxyz");
    yb_request_cleanup(&r);
}

static void expect_ser_rc(const yb_request *r, const char *host, const char *auth, int rc)
{
    uint8_t *out = (uint8_t *)"untouched";
    size_t len = 7;
    assert_int_equal(yb_h1_serialize(r, host, auth, 0, &out, &len), rc);
    assert_string_equal((const char *)out, "untouched");
    assert_int_equal(len, 7);
}

static void test_ser_invalid(void **state)
{
    (void)state;
    yb_request r;
    mkreq(&r, "GET", "/a", "sw");
    hdr(&r, "X-Evil", "a\r\nInjected: 1");
    expect_ser_rc(&r, NULL, NULL, -EINVAL);
    yb_request_cleanup(&r);

    mkreq(&r, "GET", "/a b", "sw");
    expect_ser_rc(&r, NULL, NULL, -EINVAL);
    yb_request_cleanup(&r);

    mkreq(&r, "", "/a", "sw");
    expect_ser_rc(&r, NULL, NULL, -EINVAL);
    yb_request_cleanup(&r);

    mkreq(&r, "GET", "/a", "sw");
    expect_ser_rc(&r, "sw\r\nX: y", NULL, -EINVAL);
    expect_ser_rc(&r, NULL, "Basic\n", -EINVAL);
    hdr(&r, "Bad Name", "v");
    expect_ser_rc(&r, NULL, NULL, -EINVAL);
    yb_request_cleanup(&r);

    mkreq(&r, "GET", "/a", "sw");
    hdr(&r, "Bad:Name", "v");
    expect_ser_rc(&r, NULL, NULL, -EINVAL);
    yb_request_cleanup(&r);
}

/* CR, LF or NUL at every place of a header value, of the path and of the
 * Host override, lengths 1..40 (line_safe takes 8 bytes at a time, then
 * the rest one by one): refused; the bytes next to them (0x0b, 0x0c,
 * 0x0e, 0x8a, 0x8d, 0x80, 0x01, 0xff) are not.  Every byte value in a
 * header name: refused exactly when it is a control byte, SP, ':' or DEL. */
static void test_ser_checks_bytewise(void **state)
{
    (void)state;
    static const char BAD[] = {'\r', '\n', '\0'};
    static const unsigned char NEAR[] = {0x0b, 0x0c, 0x0e, 0x8a, 0x8d, 0x80, 0x01, 0xff};
    char v[41];
    for (size_t len = 1; len <= 40; len++)
        for (size_t at = 0; at < len; at++) {
            for (size_t k = 0; k < sizeof BAD + sizeof NEAR; k++) {
                int bad = k < sizeof BAD;
                memset(v, 'a', len);
                v[at] = bad ? BAD[k] : (char)NEAR[k - sizeof BAD];
                yb_request r;
                mkreq(&r, "GET", "/a", "sw");
                assert_int_equal(yb_request_add_header(&r, "X-V", v, len), 0);
                uint8_t *out = NULL;
                size_t n = 0;
                if (yb_h1_serialize(&r, NULL, NULL, 0, &out, &n) != (bad ? -EINVAL : 0))
                    fail_msg("header value of %zu bytes, byte %zu = 0x%02x: %s", len, at,
                             (unsigned char)v[at], bad ? "accepted" : "refused");
                free(out);
                yb_request_cleanup(&r);
                if (!bad || !BAD[k])
                    continue; /* (a NUL ends the path and the Host: C strings) */
                char path[42] = "/";
                memcpy(path + 1, v, len);
                path[len + 1] = 0;
                mkreq(&r, "GET", path, "sw");
                expect_ser_rc(&r, NULL, NULL, -EINVAL);
                expect_ser_rc(&r, v, NULL, -EINVAL); /* (path refused first) */
                yb_request_cleanup(&r);
                v[len] = 0;
                mkreq(&r, "GET", "/a", "sw");
                expect_ser_rc(&r, v, NULL, -EINVAL);
                expect_ser_rc(&r, NULL, v, -EINVAL);
                yb_request_cleanup(&r);
            }
        }
    for (unsigned c = 1; c < 256; c++) {
        char name[4] = {'X', (char)c, 'Y', 0};
        yb_request r;
        mkreq(&r, "GET", "/a", "sw");
        hdr(&r, name, "v");
        uint8_t *out = NULL;
        size_t n = 0;
        int refused = c <= 0x20 || c == ':' || c == 0x7f;
        if (yb_h1_serialize(&r, NULL, NULL, 0, &out, &n) != (refused ? -EINVAL : 0))
            fail_msg("header name byte 0x%02x: %s", c, refused ? "accepted" : "refused");
        free(out);
        yb_request_cleanup(&r);
    }
}

/* yb_h1_serialize_with: the record's headers less its User-Agent (any
 * case; only when one is given), then the extra ones, then User-Agent,
 * then the Authorization override; the extra ones dropped and checked as
 * the record's are; a dropped name is one of the owned ones whatever its
 * case, and names of the same lengths that differ are kept. */
static void test_ser_with(void **state)
{
    (void)state;
    yb_request r;
    mkreq(&r, "PUT", "/a", "sw");
    hdr(&r, "user-AGENT", "recorded/1");
    hdr(&r, "Accept", "*/*");
    hdr(&r, "user-agenx", "kept"); /* (10 bytes, as user-agent and connection) */
    hdr(&r, "hosx", "kept");
    hdr(&r, "authorizatioN", "Basic cmVj");
    hdr(&r, "Content-Lengtx", "kept");
    hdr(&r, "Transfer-Encodinx", "kept");
    const yb_header extra[] = {
        {.name = "X-Extra", .value = (uint8_t *)"1", .value_len = 1},
        {.name = "CONNECTION", .value = (uint8_t *)"close", .value_len = 5},
        {.name = "User-Agent", .value = (uint8_t *)"extra/1", .value_len = 7},
    };
    yb_h1_extra x = {.host = "h", .extra = extra, .n_extra = 3, .user_agent = "yangblast/9"};
    uint8_t *out = NULL;
    size_t n = 0;
    assert_int_equal(yb_h1_serialize_with(&r, &x, &out, &n), 0);
    expect_wire(out, n,
                "PUT /a HTTP/1.1\r\nHost: h\r\nAccept: */*\r\nuser-agenx: kept\r\n"
                "hosx: kept\r\nauthorizatioN: Basic cmVj\r\nContent-Lengtx: kept\r\n"
                "Transfer-Encodinx: kept\r\nX-Extra: 1\r\nUser-Agent: extra/1\r\n"
                "User-Agent: yangblast/9\r\nContent-Length: 0\r\n\r\n");
    /* an Authorization override drops the record's; no User-Agent given:
     * the record's travels */
    x = (yb_h1_extra){.auth = "Basic bmV3", .extra = extra, .n_extra = 1, .close = 1};
    assert_int_equal(yb_h1_serialize_with(&r, &x, &out, &n), 0);
    expect_wire(out, n,
                "PUT /a HTTP/1.1\r\nHost: sw\r\nuser-AGENT: recorded/1\r\nAccept: */*\r\n"
                "user-agenx: kept\r\nhosx: kept\r\nContent-Lengtx: kept\r\n"
                "Transfer-Encodinx: kept\r\nX-Extra: 1\r\nAuthorization: Basic bmV3\r\n"
                "Content-Length: 0\r\nConnection: close\r\n\r\n");
    /* an extra header that would break the framing, or a User-Agent */
    const yb_header evil = {.name = "X-E", .value = (uint8_t *)"a\nb", .value_len = 3};
    x = (yb_h1_extra){.extra = &evil, .n_extra = 1};
    out = (uint8_t *)"untouched";
    assert_int_equal(yb_h1_serialize_with(&r, &x, &out, &n), -EINVAL);
    assert_string_equal((const char *)out, "untouched");
    x = (yb_h1_extra){.user_agent = "ua\r\nX: 1"};
    assert_int_equal(yb_h1_serialize_with(&r, &x, &out, &n), -EINVAL);
    yb_request_cleanup(&r);
}

/* ---- response parsing --------------------------------------------------- */

typedef struct {
    yb_h1_rc rc;
    int status, keep_alive, truncated;
    uint64_t body;
    size_t used;
} result;

/* Feeds msg in pieces ending at the offsets in cuts (ascending, the last
 * is len); stops at the first non-MORE answer.  eof: signal EOF when all
 * bytes went in and the parser still wants more. */
static result run_resp_cuts(const uint8_t *msg, size_t len, const size_t *cuts, size_t ncuts,
                            int head, uint64_t cap, int eof)
{
    yb_h1_resp *p = yb_h1_resp_new(cap);
    assert_non_null(p);
    yb_h1_resp_reset(p, head);
    result res = {.rc = YB_H1_MORE};
    size_t pos = 0;
    for (size_t c = 0; c < ncuts && res.rc == YB_H1_MORE; c++) {
        size_t end = cuts[c];
        while (pos < end) {
            size_t used = 12345;
            res.rc = yb_h1_resp_feed(p, msg + pos, end - pos, &used);
            assert_true(used <= end - pos);
            if (res.rc == YB_H1_MORE)
                assert_int_equal(used, end - pos);
            pos += used;
            if (res.rc != YB_H1_MORE)
                break;
        }
    }
    if (res.rc == YB_H1_MORE && eof)
        res.rc = yb_h1_resp_eof(p);
    res.used = pos;
    res.status = yb_h1_resp_status(p);
    res.keep_alive = yb_h1_resp_keep_alive(p);
    res.body = yb_h1_resp_body_len(p);
    res.truncated = yb_h1_resp_truncated(p);
    if (res.rc == YB_H1_ERROR)
        assert_true(yb_h1_resp_error(p)[0] != '\0');
    else
        assert_string_equal(yb_h1_resp_error(p), "");
    yb_h1_resp_free(p);
    return res;
}

static void same(const result *a, const result *b, const char *how, size_t k)
{
    if (a->rc != b->rc)
        fail_msg("%s %zu: rc %d != %d", how, k, a->rc, b->rc);
    if (a->rc != YB_H1_COMPLETE)
        return;
    if (a->status != b->status || a->keep_alive != b->keep_alive || a->body != b->body ||
        a->used != b->used)
        fail_msg("%s %zu: status %d/%d ka %d/%d body %llu/%llu used %zu/%zu", how, k, a->status,
                 b->status, a->keep_alive, b->keep_alive, (unsigned long long)a->body,
                 (unsigned long long)b->body, a->used, b->used);
}

/* Parses msg whole, byte by byte and in two pieces at every offset; all
 * must agree.  Returns the whole-buffer result. */
static result resp_all_ways(const uint8_t *msg, size_t len, int head, uint64_t cap, int eof)
{
    size_t whole[1] = {len};
    result ref = run_resp_cuts(msg, len, whole, 1, head, cap, eof);

    size_t *cuts = malloc((len ? len : 1) * sizeof *cuts);
    assert_non_null(cuts);
    for (size_t i = 0; i < len; i++)
        cuts[i] = i + 1;
    result r = run_resp_cuts(msg, len, cuts, len, head, cap, eof);
    same(&ref, &r, "byte-by-byte", 0);
    free(cuts);

    for (size_t k = 1; k < len; k++) {
        size_t two[2] = {k, len};
        r = run_resp_cuts(msg, len, two, 2, head, cap, eof);
        same(&ref, &r, "split at", k);
    }
    return ref;
}

/* ---- the fast path against http_parser ----------------------------------- */

/* Everything a caller can see of a response parser after a run. */
typedef struct {
    yb_h1_rc rc;
    size_t used;
    int status, keep_alive, truncated, too_large, head_done, fast;
    uint64_t body, expected;
    char err[128];
    uint8_t body_head[64], kept[16];
    size_t body_head_len, kept_len;
} seen;

/* Feeds msg to a parser (slow: http_parser only) in pieces ending at the
 * offsets in cuts, the same way as run_resp_cuts, then EOF when asked. */
static seen run_seen(const uint8_t *msg, size_t len, const size_t *cuts, size_t ncuts, int head,
                     uint64_t cap, int keep, int eof, int slow)
{
    yb_h1_resp *p = yb_h1_resp_new(cap);
    assert_non_null(p);
    yb_h1_resp_slow_only(p, slow);
    if (keep)
        assert_int_equal(yb_h1_resp_keep_body(p, sizeof ((seen *)0)->kept), 0);
    yb_h1_resp_reset(p, head);
    seen r;
    memset(&r, 0, sizeof r);
    r.rc = YB_H1_MORE;
    size_t pos = 0;
    for (size_t c = 0; c < ncuts && r.rc == YB_H1_MORE; c++)
        while (pos < cuts[c] && r.rc == YB_H1_MORE) {
            size_t used = 12345;
            r.rc = yb_h1_resp_feed(p, msg + pos, cuts[c] - pos, &used);
            assert_true(used <= cuts[c] - pos);
            pos += used;
        }
    r.fast = yb_h1_resp_fast(p);
    if (r.rc == YB_H1_MORE && eof)
        r.rc = yb_h1_resp_eof(p);
    r.used = pos;
    r.status = yb_h1_resp_status(p);
    r.keep_alive = yb_h1_resp_keep_alive(p);
    r.truncated = yb_h1_resp_truncated(p);
    r.too_large = yb_h1_resp_too_large(p);
    r.head_done = yb_h1_resp_head_done(p);
    r.body = yb_h1_resp_body_len(p);
    r.expected = yb_h1_resp_body_expected(p);
    snprintf(r.err, sizeof r.err, "%s", yb_h1_resp_error(p));
    size_t n;
    const uint8_t *b = yb_h1_resp_body_head(p, &n);
    r.body_head_len = n;
    if (b)
        memcpy(r.body_head, b, n < sizeof r.body_head ? n : sizeof r.body_head);
    b = yb_h1_resp_body(p, &n);
    r.kept_len = n;
    if (b)
        memcpy(r.kept, b, n);
    yb_h1_resp_free(p);
    return r;
}

static void same_seen(const seen *f, const seen *s, const char *msg, size_t k)
{
    if (f->rc != s->rc || f->used != s->used || f->status != s->status ||
        f->keep_alive != s->keep_alive || f->truncated != s->truncated ||
        f->too_large != s->too_large || f->head_done != s->head_done || f->body != s->body ||
        f->expected != s->expected || strcmp(f->err, s->err) ||
        f->body_head_len != s->body_head_len || f->kept_len != s->kept_len ||
        memcmp(f->body_head, s->body_head, sizeof f->body_head) ||
        memcmp(f->kept, s->kept, sizeof f->kept))
        fail_msg("fast path and http_parser differ (cut at %zu) on \"%s\": rc %d/%d used %zu/%zu "
                 "status %d/%d ka %d/%d trunc %d/%d large %d/%d head %d/%d body %llu/%llu "
                 "expected %llu/%llu err \"%s\"/\"%s\" head %zu/%zu kept %zu/%zu",
                 k, msg, f->rc, s->rc, f->used, s->used, f->status, s->status, f->keep_alive,
                 s->keep_alive, f->truncated, s->truncated, f->too_large, s->too_large,
                 f->head_done, s->head_done, (unsigned long long)f->body,
                 (unsigned long long)s->body, (unsigned long long)f->expected,
                 (unsigned long long)s->expected, f->err, s->err, f->body_head_len,
                 s->body_head_len, f->kept_len, s->kept_len);
}

/* Responses the fast path takes (1) or leaves to http_parser (0), each
 * parsed by both, whole and in two pieces at every offset, with and
 * without EOF after it, as the answer to GET and to HEAD, with a body cap
 * of 64 bytes and of 1 MiB, keeping 2xx bodies or not: every outcome must
 * be the same. */
static const struct {
    int fast; /* taken by the fast path as the answer to GET, whole, cap 1 MiB */
    const char *m;
} fast_cases[] = {
    {1, "HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Tue, 01 Dec 2026 03:18:10 GMT\r\n"
        "Content-Type: application/yang-data+json\r\nContent-Length: 10\r\n"
        "Connection: keep-alive\r\n\r\n0123456789"},
    {1, "HTTP/1.1 204 No Content\r\nServer: nginx\r\nConnection: keep-alive\r\n\r\n"},
    {1, "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nabc"},
    {1, "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 3\r\n\r\nabc"},
    {1, "HTTP/1.1 200 OK\r\nCONNECTION: CLOSE\r\ncontent-LENGTH: 3\r\n\r\nabc"},
    {1, "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found"},
    {1, "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n"
        "Content-Length: 5\r\nConnection: close\r\n\r\nboom!"},
    {1, "HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok"},
    {1, "HTTP/1.1 200 \r\nContent-Length: 2\r\n\r\nok"},
    {1, "HTTP/1.1 200 OK\r\nContent-Length: \t 007  \r\nConnection:  close \r\n\r\n1234567"},
    {0, "HTTP/1.1 200 OK\r\nContent-Length: 007 \t\r\n\r\n1234567"},
    {0, "HTTP/1.1 200 OK\r\nContent-Length: 7\r\nConnection: close\t\r\n\r\n1234567"},
    {1, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
    {1, "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n"},
    {1, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcEXTRA"},
    {1, "HTTP/1.1 200 OK\r\nX-A: b\tc\x80\xff d\r\nContent-Length: 1\r\n\r\nz"},
    {1, "HTTP/1.1 200 OK\r\nX-Empty:\r\nX-B:   \r\nContent-Length: 3\r\n\r\nabc"},
    {1, "HTTP/1.1 200 OK\r\nX-Long: aaaaaaaaaaaaaaaabbbbbbbbccccccccdddddddd~~~~\r\n"
        "Content-Length: 1\r\n\r\nz"},
    {1, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab"},
    {1, "HTTP/1.1 200 OK\r\nUpgradeX: h2c\r\nConnectionX: close\r\nContent-Length: 1\r\n\r\nz"},
    {1, "HTTP/1.1 200 OK\r\n!#$%&'*+-.^_`|~09azAZ: x\r\nContent-Length: 1\r\n\r\nz"},
    {1, "HTTP/1.1 999 Whatever\r\nContent-Length: 1\r\n\r\nz"},
    {1, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"
        "0123456789012345678901234567890123456789012345678901234567890123456789"
        "012345678901234567890123456789"},
    {0, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc"},
    {0, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"},
    {0, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"},
    {0, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: identity\r\n\r\nabc"},
    {0, "HTTP/1.1 200 OK\r\nX-A: b\x01" "c\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.1 200 OK\r\nX-A: bbbbbbbbbbbbbbbbbbbbbbbb\x7f" "cccccc\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.1 200 OK\r\nX-A: bbbbbbb\x1f\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.1 200 O\x01K\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.1 200 OK\nContent-Length: 1\n\nz"},
    {0, "HTTP/1.1 200 OK\r\nContent-Length: 1\n\r\nz"},
    {0, "HTTP/1.1 200 OK\r\nX-A: b\r\n c\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n"},
    {0, "HTTP/1.1 200 OK\r\nConnection: upgrade\r\nUpgrade: h2c\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.1 200 OK\r\nUpgrade: h2c\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.1 200 OK\r\nProxy-Connection: close\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.1 200 OK\r\nConnection: close\r\nConnection: close\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\nz"},
    {0, "HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\nz"},
    {0, "HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\nz"},
    {0, "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\nz"},
    {0, "HTTP/1.1 200 OK\r\nContent-Length : 3\r\n\r\nabc"},
    {0, "HTTP/1.1 200 OK\r\nBad Name: x\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.1 200 OK\r\n: x\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.1 200 OK\r\n\r\nclose-delimited"},
    {0, "HTTP/1.0 200 OK\r\n\r\nclose-delimited"},
    {0, "HTTP/2.0 200 OK\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.2 200 OK\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.1 099 Low\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.1 2000 OK\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.1 20 OK\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.1 200OK\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\rabc"},
    {0, "http/1.1 200 OK\r\nContent-Length: 1\r\n\r\nz"},
    {0, "HTTP/1.1 200 OK\r\n"},
    {0, ""},
};

static void test_resp_fast_path(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof fast_cases / sizeof fast_cases[0]; c++) {
        const uint8_t *m = (const uint8_t *)fast_cases[c].m;
        size_t len = strlen(fast_cases[c].m);
        size_t whole[1] = {len};
        seen f = run_seen(m, len, whole, 1, 0, 1 << 20, 0, 0, 0);
        if (f.fast != fast_cases[c].fast)
            fail_msg("case %zu: fast path %s \"%s\"", c, f.fast ? "took" : "declined",
                     fast_cases[c].m);
        for (int v = 0; v < 16; v++) {
            int head = v & 1, keep = v & 4, eof = v & 8;
            uint64_t cap = v & 2 ? 64 : 1 << 20;
            for (size_t k = 0; k <= len; k++) {
                size_t cuts[2] = {k, len};
                seen a = run_seen(m, len, cuts, 2, head, cap, keep, eof, 0);
                seen b = run_seen(m, len, cuts, 2, head, cap, keep, eof, 1);
                assert_false(b.fast);
                same_seen(&a, &b, fast_cases[c].m, k);
            }
        }
    }
}

/* A head longer than the fast path looks at goes to http_parser whole. */
static void test_resp_fast_long_head(void **state)
{
    (void)state;
    size_t vlen = 5000, n = 0;
    uint8_t *m = malloc(vlen + 128);
    assert_non_null(m);
    memcpy(m, "HTTP/1.1 200 OK\r\nX-Big: ", 25);
    n = 25;
    memset(m + n, 'v', vlen);
    n += vlen;
    memcpy(m + n, "\r\nContent-Length: 2\r\n\r\nok", 25);
    n += 25;
    size_t whole[1] = {n};
    seen a = run_seen(m, n, whole, 1, 0, 1 << 20, 0, 0, 0);
    seen b = run_seen(m, n, whole, 1, 0, 1 << 20, 0, 0, 1);
    assert_false(a.fast);
    assert_int_equal(a.rc, YB_H1_COMPLETE);
    assert_int_equal(a.body, 2);
    same_seen(&a, &b, "5000-byte field", 0);
    free(m);
}

static void test_resp_content_length(void **state)
{
    (void)state;
    static const char m[] = "HTTP/1.1 200 OK\r\nContent-Type: application/yang-data+json\r\n"
                            "Content-Length: 13\r\n\r\n{\"a\":\"hello\"}";
    result r = resp_all_ways(S(m), 0, 1 << 20, 0);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.keep_alive, 1);
    assert_int_equal(r.body, 13);
    assert_int_equal(r.used, sizeof m - 1);
}

static void test_resp_chunked(void **state)
{
    (void)state;
    static const char m[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                            "5;foo=bar\r\nhello\r\n"
                            "7;name=\"quoted\"\r\n, world\r\n"
                            "A\r\n0123456789\r\n"
                            "0\r\nX-Trailer: yes\r\nX-Other: 2\r\n\r\n";
    result r = resp_all_ways(S(m), 0, 1 << 20, 0);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.keep_alive, 1);
    assert_int_equal(r.body, 22);
    assert_int_equal(r.used, sizeof m - 1);

    static const char plain[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                "3\r\nabc\r\n0\r\n\r\n";
    r = resp_all_ways(S(plain), 0, 1 << 20, 0);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    assert_int_equal(r.body, 3);
    assert_int_equal(r.used, sizeof plain - 1);
}

static void test_resp_close_delimited(void **state)
{
    (void)state;
    static const char m[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nabcdefghij";
    result r = resp_all_ways(S(m), 0, 1 << 20, 0);
    assert_int_equal(r.rc, YB_H1_MORE); /* waits for the close */
    r = resp_all_ways(S(m), 0, 1 << 20, 1);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.keep_alive, 0);
    assert_int_equal(r.body, 10);

    /* An empty close-delimited body is complete too. */
    static const char e[] = "HTTP/1.1 200 OK\r\n\r\n";
    r = resp_all_ways(S(e), 0, 1 << 20, 1);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    assert_int_equal(r.body, 0);
}

static void test_resp_interim(void **state)
{
    (void)state;
    static const char m[] = "HTTP/1.1 100 Continue\r\n\r\n"
                            "HTTP/1.1 201 Created\r\nLocation: /restconf/data/x\r\n"
                            "Content-Length: 0\r\n\r\n";
    result r = resp_all_ways(S(m), 0, 1 << 20, 0);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    assert_int_equal(r.status, 201);
    assert_int_equal(r.keep_alive, 1);
    assert_int_equal(r.body, 0);
    assert_int_equal(r.used, sizeof m - 1);

    static const char hints[] = "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"
                                "HTTP/1.1 100 Continue\r\n\r\n"
                                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    r = resp_all_ways(S(hints), 0, 1 << 20, 0);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.body, 2);
    assert_int_equal(r.used, sizeof hints - 1);

    /* Only an interim response so far: still waiting. */
    static const char only[] = "HTTP/1.1 100 Continue\r\n\r\n";
    r = resp_all_ways(S(only), 0, 1 << 20, 0);
    assert_int_equal(r.rc, YB_H1_MORE);
    assert_int_equal(r.status, 0);

    /* We never asked to switch protocols. */
    static const char sw[] = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
                             "Upgrade: h2c\r\n\r\n";
    r = resp_all_ways(S(sw), 0, 1 << 20, 0);
    assert_int_equal(r.rc, YB_H1_ERROR);
}

static void test_resp_no_body(void **state)
{
    (void)state;
    static const char m204[] = "HTTP/1.1 204 No Content\r\nServer: x\r\n\r\n";
    result r = resp_all_ways(S(m204), 0, 1 << 20, 0);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    assert_int_equal(r.status, 204);
    assert_int_equal(r.keep_alive, 1);
    assert_int_equal(r.body, 0);
    assert_int_equal(r.used, sizeof m204 - 1);

    /* 304 carries the entity's length but never a body. */
    static const char m304[] = "HTTP/1.1 304 Not Modified\r\nContent-Length: 500\r\n\r\n";
    r = resp_all_ways(S(m304), 0, 1 << 20, 0);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    assert_int_equal(r.status, 304);
    assert_int_equal(r.body, 0);
    assert_int_equal(r.used, sizeof m304 - 1);

    /* HEAD: Content-Length describes the GET body, none follows; the cap
     * does not apply to a body that is never sent. */
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n";
    r = resp_all_ways(S(head), 1, 100, 0);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.keep_alive, 1);
    assert_int_equal(r.body, 0);
    assert_int_equal(r.used, sizeof head - 1);
    /* The same bytes without HEAD wait for the body. */
    r = resp_all_ways(S(head), 0, 1 << 20, 0);
    assert_int_equal(r.rc, YB_H1_MORE);
}

static void test_resp_keep_alive(void **state)
{
    (void)state;
    static const char close[] = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx";
    result r = resp_all_ways(S(close), 0, 1 << 20, 0);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    assert_int_equal(r.keep_alive, 0);

    static const char h10[] = "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx";
    r = resp_all_ways(S(h10), 0, 1 << 20, 0);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    assert_int_equal(r.keep_alive, 0);

    static const char h10ka[] = "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n"
                                "Content-Length: 1\r\n\r\nx";
    r = resp_all_ways(S(h10ka), 0, 1 << 20, 0);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    assert_int_equal(r.keep_alive, 1);

    static const char h11[] = "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx";
    r = resp_all_ways(S(h11), 0, 1 << 20, 0);
    assert_int_equal(r.keep_alive, 1);
}

static void test_resp_malformed(void **state)
{
    (void)state;
    static const char *bad[] = {
        "garbage\r\n\r\n",
        "HTTP/1.1 2x0 OK\r\n\r\n",
        "HTTP/x.1 200 OK\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 12abc\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n-1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nBad Header\r\n\r\n",
        "\x00\x01\x02\xff",
        "HTTP/1.1 099 Low\r\nContent-Length: 0\r\n\r\n",
        "HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *m = bad[i];
        size_t len = i == 7 ? 4 : strlen(m); /* case 7 holds a NUL */
        result r = resp_all_ways((const uint8_t *)m, len, 0, 1 << 20, 1);
        if (r.rc != YB_H1_ERROR)
            fail_msg("case %zu: rc %d", i, r.rc);
        assert_int_equal(r.truncated, 0);
    }

    /* Body over the cap: declared, chunked and close-delimited. */
    static const char big[] = "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n0123456789a";
    result r = resp_all_ways(S(big), 0, 10, 0);
    assert_int_equal(r.rc, YB_H1_ERROR);
    r = resp_all_ways(S(big), 0, 11, 0);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    static const char bigc[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                               "6\r\n012345\r\n5\r\n6789a\r\n0\r\n\r\n";
    r = resp_all_ways(S(bigc), 0, 10, 0);
    assert_int_equal(r.rc, YB_H1_ERROR);
    static const char bige[] = "HTTP/1.1 200 OK\r\n\r\n0123456789a";
    r = resp_all_ways(S(bige), 0, 10, 1);
    assert_int_equal(r.rc, YB_H1_ERROR);
    assert_int_equal(r.truncated, 0);

    /* Truncated, then EOF. */
    static const char trunc[] = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc";
    r = resp_all_ways(S(trunc), 0, 1 << 20, 1);
    assert_int_equal(r.rc, YB_H1_ERROR);
    assert_int_equal(r.truncated, 1);
    static const char trunc_head[] = "HTTP/1.1 200 OK\r\nContent-Le";
    r = resp_all_ways(S(trunc_head), 0, 1 << 20, 1);
    assert_int_equal(r.rc, YB_H1_ERROR);
    assert_int_equal(r.truncated, 1);
    static const char trunc_chunk[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab";
    r = resp_all_ways(S(trunc_chunk), 0, 1 << 20, 1);
    assert_int_equal(r.rc, YB_H1_ERROR);
    assert_int_equal(r.truncated, 1);

    /* EOF before any byte. */
    yb_h1_resp *p = yb_h1_resp_new(100);
    assert_non_null(p);
    assert_int_equal(yb_h1_resp_eof(p), YB_H1_ERROR);
    assert_int_equal(yb_h1_resp_truncated(p), 1);
    /* Errors stick until reset. */
    size_t used = 99;
    assert_int_equal(yb_h1_resp_feed(p, S("HTTP/1.1 200 OK\r\n\r\n"), &used), YB_H1_ERROR);
    assert_int_equal(used, 0);
    yb_h1_resp_reset(p, 0);
    assert_string_equal(yb_h1_resp_error(p), "");
    assert_int_equal(yb_h1_resp_feed(p, S("HTTP/1.1 204 No Content\r\n\r\n"), &used),
                     YB_H1_COMPLETE);
    /* Feeding past COMPLETE without a reset is refused. */
    assert_int_equal(yb_h1_resp_feed(p, S("HTTP/1.1 204 No Content\r\n\r\n"), &used),
                     YB_H1_ERROR);
    assert_int_equal(used, 0);
    yb_h1_resp_free(p);
}

static void test_resp_back_to_back(void **state)
{
    (void)state;
    static const char a[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                            "4\r\nabcd\r\n0\r\n\r\n";
    static const char b[] = "HTTP/1.1 100 Continue\r\n\r\n"
                            "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nnope";
    static const char c[] = "HTTP/1.1 204 No Content\r\n\r\n";
    /* b says 3 but carries 4 bytes: the 'e' is left over for the caller. */
    char buf[sizeof a + sizeof b + sizeof c];
    size_t la = sizeof a - 1, lb = sizeof b - 1, lc = sizeof c - 1;
    memcpy(buf, a, la);
    memcpy(buf + la, b, lb);
    memcpy(buf + la + lb, c, lc);
    size_t total = la + lb + lc;

    yb_h1_resp *p = yb_h1_resp_new(1 << 20);
    assert_non_null(p);
    size_t used = 0, pos = 0;
    assert_int_equal(yb_h1_resp_feed(p, (uint8_t *)buf, total, &used), YB_H1_COMPLETE);
    assert_int_equal(used, la);
    assert_int_equal(yb_h1_resp_status(p), 200);
    assert_int_equal(yb_h1_resp_body_len(p), 4);
    pos += used;

    yb_h1_resp_reset(p, 0);
    assert_int_equal(yb_h1_resp_feed(p, (uint8_t *)buf + pos, total - pos, &used), YB_H1_COMPLETE);
    assert_int_equal(used, lb - 1);
    assert_int_equal(yb_h1_resp_status(p), 404);
    assert_int_equal(yb_h1_resp_body_len(p), 3);
    pos += used;
    assert_int_equal(buf[pos], 'e');

    /* A stray byte is not the start of a response. */
    yb_h1_resp_reset(p, 0);
    assert_int_equal(yb_h1_resp_feed(p, (uint8_t *)buf + pos, total - pos, &used), YB_H1_ERROR);
    pos++;
    yb_h1_resp_reset(p, 0);
    assert_int_equal(yb_h1_resp_feed(p, (uint8_t *)buf + pos, total - pos, &used), YB_H1_COMPLETE);
    assert_int_equal(used, lc);
    assert_int_equal(yb_h1_resp_status(p), 204);
    yb_h1_resp_free(p);

    /* Same with a HEAD response followed by a full one. */
    static const char h[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
                            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
    p = yb_h1_resp_new(1 << 20);
    assert_non_null(p);
    yb_h1_resp_reset(p, 1);
    assert_int_equal(yb_h1_resp_feed(p, S(h), &used), YB_H1_COMPLETE);
    assert_int_equal(used, 38);
    assert_int_equal(yb_h1_resp_body_len(p), 0);
    yb_h1_resp_reset(p, 0);
    assert_int_equal(yb_h1_resp_feed(p, (const uint8_t *)h + used, sizeof h - 1 - used, &used),
                     YB_H1_COMPLETE);
    assert_int_equal(used, 43);
    assert_int_equal(yb_h1_resp_body_len(p), 5);
    yb_h1_resp_free(p);
}

/* ---- response serialization -------------------------------------------- */

static void expect_resp_ser(int status, const char *reason, const yb_h1_header *h, size_t n,
                            const char *body, size_t body_len, int ka, const char *want)
{
    uint8_t *out = NULL;
    size_t len = 0;
    assert_int_equal(yb_h1_serialize_response(status, reason, h, n, (const uint8_t *)body,
                                              body_len, ka, &out, &len), 0);
    if (len != strlen(want) || memcmp(out, want, len) != 0)
        fail_msg("serialized:\n%.*s\nwanted:\n%s", (int)len, (const char *)out, want);
    free(out);
}

#define H(n, v) {(n), sizeof(n) - 1, (v), sizeof(v) - 1}

static void test_resp_serialize(void **state)
{
    (void)state;
    const yb_h1_header hs[] = {
        H("Content-Type", "application/yang-data+json"),
        H("content-length", "77"),
        H("Connection", "keep-alive"),
        H("Transfer-Encoding", "chunked"),
        H("X-Served-By", "yangblast"),
    };
    expect_resp_ser(200, NULL, hs, 5, "{}", 2, 1,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/yang-data+json\r\n"
                    "X-Served-By: yangblast\r\nContent-Length: 2\r\n\r\n{}");
    expect_resp_ser(201, "Made", NULL, 0, NULL, 0, 0,
                    "HTTP/1.1 201 Made\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    expect_resp_ser(204, NULL, NULL, 0, NULL, 0, 1, "HTTP/1.1 204 No Content\r\n\r\n");
    expect_resp_ser(304, NULL, NULL, 0, NULL, 0, 0,
                    "HTTP/1.1 304 Not Modified\r\nConnection: close\r\n\r\n");
    expect_resp_ser(100, NULL, NULL, 0, NULL, 0, 0, "HTTP/1.1 100 Continue\r\n\r\n");
    expect_resp_ser(599, NULL, NULL, 0, "x", 1, 1, "HTTP/1.1 599 \r\nContent-Length: 1\r\n\r\nx");
    /* HEAD: length announced, no body. */
    expect_resp_ser(200, NULL, NULL, 0, NULL, 1234, 1,
                    "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n");

    uint8_t *out = NULL;
    size_t len = 0;
    const yb_h1_header evil[] = {H("X-A", "1\r\nX-B: 2")};
    const yb_h1_header badname[] = {H("X A", "1")};
    assert_int_equal(yb_h1_serialize_response(200, NULL, evil, 1, NULL, 0, 1, &out, &len), -EINVAL);
    assert_int_equal(yb_h1_serialize_response(200, NULL, badname, 1, NULL, 0, 1, &out, &len),
                     -EINVAL);
    assert_int_equal(yb_h1_serialize_response(200, "O\nK", NULL, 0, NULL, 0, 1, &out, &len),
                     -EINVAL);
    assert_int_equal(yb_h1_serialize_response(99, NULL, NULL, 0, NULL, 0, 1, &out, &len), -EINVAL);
    assert_int_equal(yb_h1_serialize_response(1000, NULL, NULL, 0, NULL, 0, 1, &out, &len), -EINVAL);
    assert_int_equal(yb_h1_serialize_response(204, NULL, NULL, 0, (const uint8_t *)"x", 1, 1, &out,
                                              &len), -EINVAL);
    assert_null(out);

    /* Round trip through the client parser. */
    assert_int_equal(yb_h1_serialize_response(200, NULL, hs, 5, (const uint8_t *)"hello", 5, 0,
                                              &out, &len), 0);
    size_t all[1] = {len};
    result r = run_resp_cuts(out, len, all, 1, 0, 100, 0);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.body, 5);
    assert_int_equal(r.keep_alive, 0);
    assert_int_equal(r.used, len);
    free(out);
}

/* ---- request parsing ----------------------------------------------------- */

/* A parsed request flattened for comparison. */
typedef struct {
    yb_h1_rc rc;
    int err_status, keep_alive;
    char text[160 * 1024]; /* method, path, headers, body */
    size_t text_len;
    size_t used;
} req_result;

static void append(req_result *r, const void *s, size_t n)
{
    assert_true(n <= sizeof r->text - r->text_len);
    memcpy(r->text + r->text_len, s, n);
    r->text_len += n;
}

static req_result run_req_cuts(yb_h1_req *p, const uint8_t *msg, const size_t *cuts, size_t ncuts,
                               int eof)
{
    req_result res;
    memset(&res, 0, sizeof res);
    res.rc = YB_H1_MORE;
    size_t pos = 0;
    for (size_t c = 0; c < ncuts && res.rc == YB_H1_MORE; c++) {
        while (pos < cuts[c]) {
            size_t used = 0;
            res.rc = yb_h1_req_feed(p, msg + pos, cuts[c] - pos, &used);
            assert_true(used <= cuts[c] - pos);
            if (res.rc == YB_H1_MORE)
                assert_int_equal(used, cuts[c] - pos);
            pos += used;
            if (res.rc != YB_H1_MORE)
                break;
        }
    }
    if (eof)
        res.rc = yb_h1_req_eof(p);
    res.used = pos;
    res.err_status = yb_h1_req_error_status(p);
    if (res.rc == YB_H1_ERROR) {
        assert_true(res.err_status >= 400);
        assert_true(yb_h1_req_error(p)[0] != '\0');
    }
    if (res.rc != YB_H1_COMPLETE)
        return res;
    res.keep_alive = yb_h1_req_keep_alive(p);
    const char *m = yb_h1_req_method(p);
    append(&res, m, strlen(m) + 1);
    size_t plen;
    const char *path = yb_h1_req_path(p, &plen);
    assert_int_equal(strlen(path), plen);
    append(&res, path, plen + 1);
    size_t n;
    const yb_h1_header *h = yb_h1_req_headers(p, &n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(strlen(h[i].name), h[i].name_len);
        assert_int_equal(strlen(h[i].value), h[i].value_len);
        append(&res, h[i].name, h[i].name_len + 1);
        append(&res, h[i].value, h[i].value_len + 1);
    }
    size_t blen;
    const uint8_t *b = yb_h1_req_body(p, &blen);
    if (blen)
        append(&res, b, blen);
    return res;
}

static req_result req_once(const uint8_t *msg, size_t len, uint64_t cap, int eof)
{
    yb_h1_req *p = yb_h1_req_new(cap);
    assert_non_null(p);
    size_t whole[1] = {len};
    req_result r = run_req_cuts(p, msg, whole, 1, eof);
    yb_h1_req_free(p);
    return r;
}

static void req_same(const req_result *a, const req_result *b, const char *how, size_t k)
{
    if (a->rc != b->rc)
        fail_msg("%s %zu: rc %d != %d", how, k, a->rc, b->rc);
    if (a->rc == YB_H1_ERROR && a->err_status != b->err_status)
        fail_msg("%s %zu: status %d != %d", how, k, a->err_status, b->err_status);
    if (a->rc != YB_H1_COMPLETE)
        return;
    if (a->used != b->used || a->keep_alive != b->keep_alive || a->text_len != b->text_len ||
        memcmp(a->text, b->text, a->text_len) != 0)
        fail_msg("%s %zu: parsed differently", how, k);
}

/* Whole, byte by byte, and split in two at every offset, reusing one
 * parser (reset between runs) to exercise reset too. */
static req_result req_all_ways(const uint8_t *msg, size_t len, uint64_t cap)
{
    yb_h1_req *p = yb_h1_req_new(cap);
    assert_non_null(p);
    size_t whole[1] = {len};
    req_result ref = run_req_cuts(p, msg, whole, 1, 0);

    size_t *cuts = malloc((len ? len : 1) * sizeof *cuts);
    assert_non_null(cuts);
    for (size_t i = 0; i < len; i++)
        cuts[i] = i + 1;
    yb_h1_req_reset(p);
    req_result r = run_req_cuts(p, msg, cuts, len, 0);
    req_same(&ref, &r, "byte-by-byte", 0);
    free(cuts);
    for (size_t k = 1; k < len; k++) {
        size_t two[2] = {k, len};
        yb_h1_req_reset(p);
        r = run_req_cuts(p, msg, two, 2, 0);
        req_same(&ref, &r, "split at", k);
    }
    yb_h1_req_free(p);
    return ref;
}

static void test_req_get(void **state)
{
    (void)state;
    static const char m[] = "GET /restconf/data/openconfig-acl:acl?depth=2 HTTP/1.1\r\n"
                            "Host: sw1\r\n"
                            "Accept: application/yang-data+json\r\n"
                            "X-Empty:\r\n"
                            "Authorization: Basic YWRtaW46YWRtaW4=\r\n\r\n";
    req_result r = req_all_ways(S(m), 1024);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    assert_int_equal(r.used, sizeof m - 1);

    yb_h1_req *p = yb_h1_req_new(1024);
    assert_non_null(p);
    assert_int_equal(yb_h1_req_headers_done(p), 0);
    size_t used;
    assert_int_equal(yb_h1_req_feed(p, S(m), &used), YB_H1_COMPLETE);
    assert_string_equal(yb_h1_req_method(p), "GET");
    size_t plen;
    assert_string_equal(yb_h1_req_path(p, &plen), "/restconf/data/openconfig-acl:acl?depth=2");
    int major, minor;
    yb_h1_req_version(p, &major, &minor);
    assert_int_equal(major, 1);
    assert_int_equal(minor, 1);
    size_t n;
    const yb_h1_header *h = yb_h1_req_headers(p, &n);
    assert_int_equal(n, 4);
    assert_string_equal(h[0].name, "Host");
    assert_string_equal(h[0].value, "sw1");
    assert_string_equal(h[2].name, "X-Empty");
    assert_int_equal(h[2].value_len, 0);
    assert_string_equal(h[2].value, "");
    const yb_h1_header *a = yb_h1_req_header(p, "authorization");
    assert_non_null(a);
    assert_string_equal(a->value, "Basic YWRtaW46YWRtaW4=");
    assert_null(yb_h1_req_header(p, "Content-Type"));
    size_t blen;
    assert_null(yb_h1_req_body(p, &blen));
    assert_int_equal(blen, 0);
    assert_int_equal(yb_h1_req_keep_alive(p), 1);
    assert_int_equal(yb_h1_req_eof(p), YB_H1_COMPLETE);
    yb_h1_req_free(p);
}

static void test_req_bodies(void **state)
{
    (void)state;
    static const char patch[] = "PATCH /restconf/data/openconfig-acl:acl/acl-sets HTTP/1.1\r\n"
                                "Host: sw1\r\nContent-Type: application/yang-data+json\r\n"
                                "Content-Length: 30\r\n\r\n{\"openconfig-acl:acl-sets\":{}}";
    req_result r = req_all_ways(S(patch), 1024);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    assert_int_equal(r.used, sizeof patch - 1);

    yb_h1_req *p = yb_h1_req_new(1024);
    assert_non_null(p);
    size_t used, blen;
    assert_int_equal(yb_h1_req_feed(p, S(patch), &used), YB_H1_COMPLETE);
    assert_string_equal(yb_h1_req_method(p), "PATCH");
    const uint8_t *b = yb_h1_req_body(p, &blen);
    assert_int_equal(blen, 30);
    assert_memory_equal(b, "{\"openconfig-acl:acl-sets\":{}}", 30);

    static const char chunked[] = "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                                  "3;ext=1\r\nabc\r\n4\r\ndefg\r\n0\r\nX-Trailer: t\r\n\r\n";
    r = req_all_ways(S(chunked), 1024);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    assert_int_equal(r.used, sizeof chunked - 1);
    yb_h1_req_reset(p);
    assert_int_equal(yb_h1_req_feed(p, S(chunked), &used), YB_H1_COMPLETE);
    b = yb_h1_req_body(p, &blen);
    assert_int_equal(blen, 7);
    assert_memory_equal(b, "abcdefg", 7);
    const yb_h1_header *t = yb_h1_req_header(p, "x-trailer");
    assert_non_null(t);
    assert_string_equal(t->value, "t");
    /* Host and Transfer-Encoding came in the head, X-Trailer after. */
    size_t nh;
    (void)yb_h1_req_headers(p, &nh);
    assert_int_equal(nh, 3);
    assert_int_equal(yb_h1_req_head_count(p), 2);
    yb_h1_req_reset(p);
    assert_int_equal(yb_h1_req_head_count(p), 0);

    /* A large body grows the buffer in steps and arrives intact. */
    size_t big = 100000;
    char head[128];
    int hl = snprintf(head, sizeof head, "PUT /big HTTP/1.1\r\nContent-Length: %zu\r\n\r\n", big);
    assert_true(hl > 0);
    uint8_t *msg = malloc((size_t)hl + big);
    assert_non_null(msg);
    memcpy(msg, head, (size_t)hl);
    for (size_t i = 0; i < big; i++)
        msg[(size_t)hl + i] = (uint8_t)(i * 7);
    yb_h1_req_free(p);
    p = yb_h1_req_new(big);
    assert_non_null(p);
    size_t pos = 0;
    yb_h1_rc rc = YB_H1_MORE;
    while (rc == YB_H1_MORE && pos < (size_t)hl + big) {
        size_t step = (size_t)hl + big - pos < 1000 ? (size_t)hl + big - pos : 1000;
        rc = yb_h1_req_feed(p, msg + pos, step, &used);
        pos += used;
    }
    assert_int_equal(rc, YB_H1_COMPLETE);
    b = yb_h1_req_body(p, &blen);
    assert_int_equal(blen, big);
    assert_memory_equal(b, msg + hl, big);
    free(msg);
    yb_h1_req_free(p);
}

static void test_req_pipelined(void **state)
{
    (void)state;
    static const char m[] = "POST /a HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi"
                            "GET /b HTTP/1.1\r\nConnection: close\r\n\r\n";
    yb_h1_req *p = yb_h1_req_new(100);
    assert_non_null(p);
    size_t used, blen;
    assert_int_equal(yb_h1_req_feed(p, S(m), &used), YB_H1_COMPLETE);
    assert_int_equal(used, 41);
    assert_string_equal(yb_h1_req_path(p, NULL), "/a");
    assert_memory_equal(yb_h1_req_body(p, &blen), "hi", 2);
    assert_int_equal(yb_h1_req_keep_alive(p), 1);
    /* Feeding on without a reset is refused. */
    size_t u2 = 7;
    assert_int_equal(yb_h1_req_feed(p, S(m) , &u2), YB_H1_ERROR);
    assert_int_equal(u2, 0);
    yb_h1_req_reset(p);
    assert_int_equal(yb_h1_req_feed(p, (const uint8_t *)m + used, sizeof m - 1 - used, &used),
                     YB_H1_COMPLETE);
    assert_int_equal(used, sizeof m - 1 - 41);
    assert_string_equal(yb_h1_req_method(p), "GET");
    assert_string_equal(yb_h1_req_path(p, NULL), "/b");
    assert_null(yb_h1_req_body(p, &blen));
    assert_int_equal(yb_h1_req_keep_alive(p), 0);
    yb_h1_req_reset(p);
    /* Clean close between requests. */
    assert_int_equal(yb_h1_req_eof(p), YB_H1_MORE);
    yb_h1_req_free(p);
}

static void test_req_keep_alive(void **state)
{
    (void)state;
    req_result r = req_once(S("GET / HTTP/1.0\r\n\r\n"), 0, 0);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    assert_int_equal(r.keep_alive, 0);
    r = req_once(S("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"), 0, 0);
    assert_int_equal(r.keep_alive, 1);
    r = req_once(S("GET / HTTP/1.1\r\nConnection: close\r\n\r\n"), 0, 0);
    assert_int_equal(r.keep_alive, 0);
    r = req_once(S("GET / HTTP/1.1\r\n\r\n"), 0, 0);
    assert_int_equal(r.keep_alive, 1);
}

static void test_req_expect_continue(void **state)
{
    (void)state;
    static const char head[] = "PUT /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n";
    yb_h1_req *p = yb_h1_req_new(100);
    assert_non_null(p);
    size_t used;
    assert_int_equal(yb_h1_req_feed(p, S(head), &used), YB_H1_MORE);
    assert_int_equal(used, sizeof head - 1);
    assert_int_equal(yb_h1_req_headers_done(p), 1);
    const yb_h1_header *e = yb_h1_req_header(p, "EXPECT");
    assert_non_null(e);
    assert_string_equal(e->value, "100-continue");
    assert_int_equal(yb_h1_req_feed(p, S("data"), &used), YB_H1_COMPLETE);
    /* Cut short: EOF is an error with 400. */
    yb_h1_req_reset(p);
    assert_int_equal(yb_h1_req_feed(p, S(head), &used), YB_H1_MORE);
    assert_int_equal(yb_h1_req_feed(p, S("da"), &used), YB_H1_MORE);
    assert_int_equal(yb_h1_req_eof(p), YB_H1_ERROR);
    assert_int_equal(yb_h1_req_error_status(p), 400);
    yb_h1_req_free(p);
}

static void expect_req_error(const uint8_t *msg, size_t len, uint64_t cap, int status,
                             const char *err)
{
    yb_h1_req *p = yb_h1_req_new(cap);
    assert_non_null(p);
    size_t used;
    yb_h1_rc rc = yb_h1_req_feed(p, msg, len, &used);
    if (rc == YB_H1_MORE)
        rc = yb_h1_req_eof(p);
    assert_int_equal(rc, YB_H1_ERROR);
    assert_int_equal(yb_h1_req_error_status(p), status);
    if (err)
        assert_string_equal(yb_h1_req_error(p), err);
    yb_h1_req_free(p);
    /* Byte by byte it must fail the same way. */
    p = yb_h1_req_new(cap);
    assert_non_null(p);
    rc = YB_H1_MORE;
    for (size_t i = 0; i < len && rc == YB_H1_MORE; i++)
        rc = yb_h1_req_feed(p, msg + i, 1, &used);
    if (rc == YB_H1_MORE)
        rc = yb_h1_req_eof(p);
    assert_int_equal(rc, YB_H1_ERROR);
    assert_int_equal(yb_h1_req_error_status(p), status);
    yb_h1_req_free(p);
}

static void test_req_errors(void **state)
{
    (void)state;
    expect_req_error(S("PUT /x HTTP/1.1\r\nContent-Length: 11\r\n\r\n0123456789a"), 10, 413,
                     "body too large");
    expect_req_error(S("PUT /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                       "6\r\n012345\r\n5\r\n6789a\r\n0\r\n\r\n"), 10, 413, "body too large");
    expect_req_error(S("PUT /x HTTP/1.1\r\nContent-Length: 1\r\n\r\nx"), 0, 413, "body too large");
    expect_req_error(S("GARBAGE / HTTP/1.1\r\n\r\n"), 10, 400, NULL);
    expect_req_error(S("GET / HTTP/2.0\r\n\r\n"), 10, 505, NULL);
    expect_req_error(S("GET / HTTP/1.1\r\nBad Header\r\n\r\n"), 10, 400, NULL);
    expect_req_error(S("GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n"), 10, 400, NULL);
    expect_req_error(S("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nq\r\n"), 10, 400,
                     NULL);
    expect_req_error(S("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 10, 400, NULL);
    expect_req_error(S("GET / HTTP/1.1\r\nHost: a\r\n"), 10, 400, NULL);

    /* 100 headers fit, 101 do not. */
    char *m = malloc(100000);
    assert_non_null(m);
    for (int count = 100; count <= 101; count++) {
        size_t n = 0;
        n += (size_t)snprintf(m + n, 100000 - n, "GET / HTTP/1.1\r\n");
        for (int i = 0; i < count; i++)
            n += (size_t)snprintf(m + n, 100000 - n, "X-H%d: %d\r\n", i, i);
        n += (size_t)snprintf(m + n, 100000 - n, "\r\n");
        if (count == 100) {
            req_result r = req_once((uint8_t *)m, n, 0, 0);
            assert_int_equal(r.rc, YB_H1_COMPLETE);
        } else {
            expect_req_error((uint8_t *)m, n, 0, 431, "too many request header fields");
        }
    }
    /* Too many header bytes (under http_parser's own limit). */
    size_t n = (size_t)snprintf(m, 100000, "GET / HTTP/1.1\r\nX-Big: ");
    memset(m + n, 'a', 70000);
    n += 70000;
    memcpy(m + n, "\r\n\r\n", 4);
    n += 4;
    expect_req_error((uint8_t *)m, n, 0, 431, "request header fields too large");
    /* URL too long. */
    n = (size_t)snprintf(m, 100000, "GET /");
    memset(m + n, 'u', 70000);
    n += 70000;
    memcpy(m + n, " HTTP/1.1\r\n\r\n", 13);
    n += 13;
    expect_req_error((uint8_t *)m, n, 0, 414, "request URL too long");
    /* Exactly at the arena's edge: a header filling it to the last byte
     * (the URL "/" + NUL, name "X" + NUL, value + NUL = 65536) fits. */
    size_t vlen = YB_H1_REQ_MAX_HEAD_BYTES - 2 - 2 - 1;
    n = (size_t)snprintf(m, 100000, "GET / HTTP/1.1\r\nX: ");
    memset(m + n, 'v', vlen);
    n += vlen;
    memcpy(m + n, "\r\n\r\n", 4);
    n += 4;
    req_result r = req_once((uint8_t *)m, n, 0, 0);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    /* One more byte does not. */
    n = (size_t)snprintf(m, 100000, "GET / HTTP/1.1\r\nX: ");
    memset(m + n, 'v', vlen + 1);
    n += vlen + 1;
    memcpy(m + n, "\r\n\r\n", 4);
    n += 4;
    expect_req_error((uint8_t *)m, n, 0, 431, NULL);
    /* An empty value at the very edge has no room for its terminator. */
    n = (size_t)snprintf(m, 100000, "GET / HTTP/1.1\r\nX: ");
    memset(m + n, 'v', vlen - 2);
    n += vlen - 2;
    n += (size_t)snprintf(m + n, 100000 - n, "\r\nY:\r\n\r\n");
    expect_req_error((uint8_t *)m, n, 0, 431, NULL);
    free(m);
}

static void test_req_roundtrip(void **state)
{
    (void)state;
    yb_request rq;
    mkreq(&rq, "PATCH", "/restconf/data/openconfig-acl:acl", "sw1:443");
    hdr(&rq, "Content-Type", "application/yang-data+json");
    hdr(&rq, "X-Empty", "");
    assert_int_equal(yb_request_set_body(&rq, "{\"k\":1}", 7), 0);
    uint8_t *out;
    size_t len;
    assert_int_equal(yb_h1_serialize(&rq, NULL, "Basic Zm9v", 1, &out, &len), 0);
    req_result r = req_all_ways(out, len, 100);
    assert_int_equal(r.rc, YB_H1_COMPLETE);
    assert_int_equal(r.used, len);
    assert_int_equal(r.keep_alive, 0);
    static const char want[] = "PATCH\0/restconf/data/openconfig-acl:acl\0"
                               "Host\0sw1:443\0Content-Type\0application/yang-data+json\0"
                               "X-Empty\0\0Authorization\0Basic Zm9v\0Content-Length\0007\0"
                               "Connection\0close\0{\"k\":1}";
    assert_int_equal(r.text_len, sizeof want - 1);
    assert_memory_equal(r.text, want, sizeof want - 1);
    free(out);
    yb_request_cleanup(&rq);
}

/* ---- random input ---------------------------------------------------------- */

static uint64_t rng_state;
static uint64_t rnd(void)
{
    /* xorshift64*: deterministic across platforms */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static const char *const seeds_req[] = {
    "GET /a HTTP/1.1\r\nHost: x\r\n\r\n",
    "POST /b HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
    "PUT /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;e=1\r\nabc\r\n0\r\nT: 1\r\n\r\n",
    "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
};
static const char *const seeds_resp[] = {
    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;e=1\r\nabc\r\n0\r\nT: 1\r\n\r\n",
    "HTTP/1.0 200 OK\r\n\r\nclose-delimited",
    "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: application/yang-data+json\r\n"
    "Content-Length: 5\r\nConnection: keep-alive\r\n\r\nhello",
    "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n",
};

/* Random bytes, or a valid message with random bytes overwritten,
 * inserted or cut; fed in random pieces, several messages per buffer. */
static size_t make_input(uint8_t *buf, size_t cap, const char *const *seeds, size_t nseeds)
{
    size_t n = 0;
    if (rnd() % 4 == 0) {
        n = rnd() % cap;
        for (size_t i = 0; i < n; i++)
            buf[i] = (uint8_t)rnd();
        return n;
    }
    int msgs = 1 + (int)(rnd() % 3);
    for (int k = 0; k < msgs; k++) {
        const char *s = seeds[rnd() % nseeds];
        size_t l = strlen(s);
        if (l > cap - n)
            break;
        memcpy(buf + n, s, l);
        n += l;
    }
    int edits = (int)(rnd() % 4);
    for (int e = 0; e < edits && n > 0; e++) {
        size_t at = rnd() % n;
        switch (rnd() % 3) {
        case 0:
            buf[at] = (uint8_t)rnd();
            break;
        case 1: /* cut */
            n = at;
            break;
        default: /* duplicate a run */
            if (n < cap) {
                size_t run = 1 + rnd() % 8;
                if (run > cap - n)
                    run = cap - n;
                if (run > n - at)
                    run = n - at;
                memmove(buf + at + run, buf + at, n - at);
                n += run;
            }
            break;
        }
    }
    return n;
}

static void test_fuzz_req(void **state)
{
    (void)state;
    rng_state = 0x9e3779b97f4a7c15ull;
    uint8_t buf[512];
    yb_h1_req *p = yb_h1_req_new(64);
    assert_non_null(p);
    for (int iter = 0; iter < 20000; iter++) {
        size_t n = make_input(buf, sizeof buf, seeds_req, 4);
        size_t pos = 0;
        yb_h1_req_reset(p);
        while (pos < n) {
            size_t piece = 1 + rnd() % (n - pos);
            size_t used = SIZE_MAX;
            yb_h1_rc rc = yb_h1_req_feed(p, buf + pos, piece, &used);
            assert_true(used <= piece);
            if (rc == YB_H1_ERROR) {
                assert_true(yb_h1_req_error_status(p) >= 400);
                break;
            }
            if (rc == YB_H1_COMPLETE) {
                size_t len, hn;
                (void)yb_h1_req_method(p);
                (void)yb_h1_req_path(p, &len);
                const yb_h1_header *h = yb_h1_req_headers(p, &hn);
                for (size_t i = 0; i < hn; i++)
                    assert_int_equal(strlen(h[i].name), h[i].name_len);
                (void)yb_h1_req_body(p, &len);
                assert_true(len <= 64);
                yb_h1_req_reset(p);
            } else {
                assert_int_equal(used, piece);
            }
            pos += used;
        }
        (void)yb_h1_req_eof(p);
    }
    yb_h1_req_free(p);
}

/* Mutated responses in random pieces, to a parser with its fast path and
 * to one with http_parser only, side by side: the same answers. */
static void test_fuzz_resp(void **state)
{
    (void)state;
    rng_state = 0x2545f4914f6cdd1dull;
    uint8_t buf[512];
    yb_h1_resp *p = yb_h1_resp_new(64), *q = yb_h1_resp_new(64);
    assert_non_null(p);
    assert_non_null(q);
    yb_h1_resp_slow_only(q, 1);
    for (int iter = 0; iter < 20000; iter++) {
        size_t n = make_input(buf, sizeof buf, seeds_resp, sizeof seeds_resp / sizeof *seeds_resp);
        size_t pos = 0;
        int head = (int)(rnd() % 5 == 0);
        yb_h1_resp_reset(p, head);
        yb_h1_resp_reset(q, head);
        while (pos < n) {
            size_t piece = 1 + rnd() % (n - pos);
            size_t used = SIZE_MAX, qused = SIZE_MAX;
            yb_h1_rc rc = yb_h1_resp_feed(p, buf + pos, piece, &used);
            yb_h1_rc qrc = yb_h1_resp_feed(q, buf + pos, piece, &qused);
            assert_int_equal(rc, qrc);
            assert_string_equal(yb_h1_resp_error(p), yb_h1_resp_error(q));
            assert_true(used <= piece);
            if (rc == YB_H1_ERROR) {
                assert_true(yb_h1_resp_error(p)[0] != '\0');
                assert_int_equal(yb_h1_resp_too_large(p), yb_h1_resp_too_large(q));
                break;
            }
            assert_int_equal(used, qused);
            assert_int_equal(yb_h1_resp_head_done(p), yb_h1_resp_head_done(q));
            assert_int_equal(yb_h1_resp_body_len(p), yb_h1_resp_body_len(q));
            assert_int_equal(yb_h1_resp_body_expected(p), yb_h1_resp_body_expected(q));
            if (rc == YB_H1_COMPLETE) {
                assert_true(yb_h1_resp_body_len(p) <= 64);
                assert_true(yb_h1_resp_status(p) >= 100);
                assert_int_equal(yb_h1_resp_status(p), yb_h1_resp_status(q));
                assert_int_equal(yb_h1_resp_keep_alive(p), yb_h1_resp_keep_alive(q));
                yb_h1_resp_reset(p, 0);
                yb_h1_resp_reset(q, 0);
            } else {
                assert_int_equal(used, piece);
            }
            pos += used;
        }
        assert_int_equal(yb_h1_resp_eof(p), yb_h1_resp_eof(q));
        assert_int_equal(yb_h1_resp_truncated(p), yb_h1_resp_truncated(q));
        assert_string_equal(yb_h1_resp_error(p), yb_h1_resp_error(q));
    }
    yb_h1_resp_free(p);
    yb_h1_resp_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ser_get),
        cmocka_unit_test(test_ser_patch_body),
        cmocka_unit_test(test_ser_host_override),
        cmocka_unit_test(test_ser_filtering),
        cmocka_unit_test(test_ser_auth_override),
        cmocka_unit_test(test_ser_close_and_lengths),
        cmocka_unit_test(test_ser_invalid),
        cmocka_unit_test(test_ser_checks_bytewise),
        cmocka_unit_test(test_ser_with),
        cmocka_unit_test(test_resp_fast_path),
        cmocka_unit_test(test_resp_fast_long_head),
        cmocka_unit_test(test_resp_content_length),
        cmocka_unit_test(test_resp_chunked),
        cmocka_unit_test(test_resp_close_delimited),
        cmocka_unit_test(test_resp_interim),
        cmocka_unit_test(test_resp_no_body),
        cmocka_unit_test(test_resp_keep_alive),
        cmocka_unit_test(test_resp_malformed),
        cmocka_unit_test(test_resp_back_to_back),
        cmocka_unit_test(test_resp_serialize),
        cmocka_unit_test(test_req_get),
        cmocka_unit_test(test_req_bodies),
        cmocka_unit_test(test_req_pipelined),
        cmocka_unit_test(test_req_keep_alive),
        cmocka_unit_test(test_req_expect_continue),
        cmocka_unit_test(test_req_errors),
        cmocka_unit_test(test_req_roundtrip),
        cmocka_unit_test(test_fuzz_req),
        cmocka_unit_test(test_fuzz_resp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
