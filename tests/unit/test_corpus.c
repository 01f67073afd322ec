/* Unit tests for the .ybc corpus reader/writer (src/corpus/corpus.c):
 * round trips, truncation and corruption, writer atomicity, record
 * validation, forward compatibility, streaming in bounded memory. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "corpus/corpus.h"
#include "corpus/corpus.pb-c.h"
#include "util/blkcache.h"

/* ------------------------------------------------------------------ */
/* helpers                                                             */

static char *g_dir; /* per-test temporary directory */

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static int setup_dir(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/yb-corpus-test.XXXXXX", base && *base ? base : "/tmp");
    g_dir = strdup(tmpl);
    if (!g_dir || !mkdtemp(g_dir))
        return -1;
    return 0;
}

static int teardown_dir(void **state)
{
    (void)state;
    if (g_dir) {
        nftw(g_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        free(g_dir);
        g_dir = NULL;
    }
    return 0;
}

/* Returns a static path name inside the test directory (two slots). */
static const char *tpath(const char *name)
{
    static char bufs[4][1024];
    static int slot;
    char *b = bufs[slot++ & 3];
    snprintf(b, sizeof bufs[0], "%s/%s", g_dir, name);
    return b;
}

/* Number of directory entries (excluding . and ..) in the test dir. */
static int dir_entries(void)
{
    DIR *d = opendir(g_dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t *b = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            b = realloc(b, cap);
            assert_non_null(b);
        }
        size_t k = fread(b + n, 1, cap - n, f);
        if (k == 0)
            break;
        n += k;
    }
    fclose(f);
    *len = n;
    return b;
}

static void spit(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (n)
        assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* Deterministic pseudo-random bytes. */
static uint64_t rng_state = 42;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void fill_random(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rnd();
}

static void set_strs(yb_request *r, const char *method, const char *scheme, const char *auth,
                     const char *path)
{
    assert_int_equal(yb_request_set_str(&r->method, method), 0);
    assert_int_equal(yb_request_set_str(&r->scheme, scheme), 0);
    assert_int_equal(yb_request_set_str(&r->authority, auth), 0);
    assert_int_equal(yb_request_set_str(&r->path, path), 0);
}

/* A small valid request; variant k changes the contents. */
static void small_req(yb_request *r, unsigned k, size_t body_len)
{
    yb_request_init(r);
    r->protocol = k % 2 ? YB_PROTO_GNMI : YB_PROTO_RESTCONF;
    set_strs(r, k % 2 ? "POST" : "PATCH", "https", "sw1:443", k % 2 ? "/gnmi.gNMI/Set" : "/x/y");
    assert_int_equal(yb_request_add_header(r, "content-type", "application/grpc", 16), 0);
    uint8_t *b = malloc(body_len ? body_len : 1);
    assert_non_null(b);
    fill_random(b, body_len);
    assert_int_equal(yb_request_set_body(r, b, body_len), 0);
    free(b);
    r->timestamp_ns = 1000u * k;
    r->conn_id = k / 2;
    r->conn_order = k % 2;
    r->expected_status = 200;
    r->expected_grpc = k % 2 ? 0 : -1;
}

static void write_corpus(const char *path, yb_request *reqs, size_t n,
                         const yb_corpus_header *h)
{
    yb_corpus_header def;
    yb_corpus_header_init(&def);
    char err[512] = "";
    yb_corpus_writer *w = yb_corpus_writer_open(path, h ? h : &def, err, sizeof err);
    if (!w)
        fail_msg("writer_open: %s", err);
    /* every other record through the path for records already checked:
     * the records read back must be the same */
    for (size_t i = 0; i < n; i++)
        assert_int_equal(i % 2 ? yb_corpus_writer_add_checked(w, &reqs[i])
                               : yb_corpus_writer_add(w, &reqs[i]), 0);
    assert_int_equal(yb_corpus_writer_count(w), n);
    if (yb_corpus_writer_close(w, err, sizeof err) != 0)
        fail_msg("writer_close: %s", err);
}

/* Reads path to the end.  Returns 0 when the corpus read cleanly (count in
 * *n), -1 when open failed, -2 when a record failed; err holds the message. */
static int read_all(const char *path, uint64_t *n, char *err, size_t errlen)
{
    err[0] = 0;
    *n = 0;
    yb_corpus_reader *r = yb_corpus_reader_open(path, err, errlen);
    if (!r)
        return -1;
    const yb_request *q;
    int rc;
    while ((rc = yb_corpus_reader_next(r, &q, err, errlen)) == 1)
        (*n)++;
    yb_corpus_reader_close(r);
    return rc == 0 ? 0 : -2;
}

/* ---- hand-built streams (magic + varint-prefixed entries, zstd) ---- */

typedef struct {
    uint8_t *p;
    size_t n, cap;
} buf;

static void buf_put(buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        size_t nc = b->cap ? b->cap : 256;
        while (nc < b->n + n)
            nc *= 2;
        b->p = realloc(b->p, nc);
        assert_non_null(b->p);
        b->cap = nc;
    }
    if (n)
        memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void buf_varint(buf *b, uint64_t v)
{
    do {
        uint8_t c = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            c |= 0x80;
        buf_put(b, &c, 1);
    } while (v);
}

static void buf_magic(buf *b)
{
    static const uint8_t m[4] = {0x89, 'Y', 'B', 'C'};
    buf_put(b, m, 4);
}

/* Appends varint(len) + packed message. */
static void buf_msg(buf *b, const ProtobufCMessage *m)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *tmp = malloc(n ? n : 1);
    assert_non_null(tmp);
    assert_int_equal(protobuf_c_message_pack(m, tmp), n);
    buf_varint(b, n);
    buf_put(b, tmp, n);
    free(tmp);
}

static void buf_header_entry(buf *b, uint32_t version)
{
    Yangblast__Header h = YANGBLAST__HEADER__INIT;
    h.format_version = version;
    h.producer = (char *)"hand-built";
    h.source = (char *)"test_corpus";
    Yangblast__Entry e = YANGBLAST__ENTRY__INIT;
    e.kind_case = YANGBLAST__ENTRY__KIND_HEADER;
    e.header = &h;
    buf_msg(b, &e.base);
}

static void buf_request_entry(buf *b, const char *path)
{
    Yangblast__Request q = YANGBLAST__REQUEST__INIT;
    q.protocol = YANGBLAST__PROTOCOL__PROTOCOL_RESTCONF;
    q.method = (char *)"GET";
    q.scheme = (char *)"https";
    q.authority = (char *)"h";
    q.path = (char *)path;
    Yangblast__Entry e = YANGBLAST__ENTRY__INIT;
    e.kind_case = YANGBLAST__ENTRY__KIND_REQUEST;
    e.request = &q;
    buf_msg(b, &e.base);
}

static void buf_trailer_entry(buf *b, uint64_t count)
{
    Yangblast__Trailer t = YANGBLAST__TRAILER__INIT;
    t.request_count = count;
    Yangblast__Entry e = YANGBLAST__ENTRY__INIT;
    e.kind_case = YANGBLAST__ENTRY__KIND_TRAILER;
    e.trailer = &t;
    buf_msg(b, &e.base);
}

/* Compresses b as one zstd frame into path and frees b. */
static void buf_write_zstd(buf *b, const char *path)
{
    size_t cap = ZSTD_compressBound(b->n);
    uint8_t *z = malloc(cap);
    assert_non_null(z);
    size_t zn = ZSTD_compress(z, cap, b->p, b->n, 3);
    assert_false(ZSTD_isError(zn));
    spit(path, z, zn);
    free(z);
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ------------------------------------------------------------------ */
/* round trips                                                         */

static void test_roundtrip_all_fields(void **state)
{
    (void)state;
    enum { N = 5 };
    yb_request in[N];

    /* 0: every field set, binary body with NULs, many headers, non-UTF-8
     * header values, gRPC status 0 (OK, distinct from unknown). */
    yb_request_init(&in[0]);
    in[0].protocol = YB_PROTO_GNMI;
    set_strs(&in[0], "POST", "https", "[2001:db8::1]:8080", "/gnmi.gNMI/Set");
    for (int i = 0; i < 40; i++) {
        char name[32];
        uint8_t val[8] = {0xff, 0xfe, 'v', (uint8_t)i, 0x80, 0xc3, 0x28, 0x7f};
        snprintf(name, sizeof name, "x-header-%d", i);
        if (val[3] == 0 || val[3] == '\r' || val[3] == '\n')
            val[3] = 'z';
        assert_int_equal(yb_request_add_header(&in[0], name, val, sizeof val), 0);
    }
    assert_int_equal(yb_request_add_header(&in[0], "empty", "", 0), 0);
    uint8_t body[300];
    fill_random(body, sizeof body);
    body[0] = 0;
    body[1] = 0;
    body[150] = 0;
    body[299] = 0;
    assert_int_equal(yb_request_set_body(&in[0], body, sizeof body), 0);
    in[0].timestamp_ns = UINT64_MAX;
    in[0].conn_id = UINT64_MAX - 1;
    in[0].conn_order = UINT32_MAX;
    in[0].expected_status = 200;
    in[0].expected_grpc = 0;

    /* 1: empty body, everything unknown. */
    yb_request_init(&in[1]);
    in[1].protocol = YB_PROTO_RESTCONF;
    set_strs(&in[1], "DELETE", "http", "sw1", "/restconf/data/x=a%2Fb");
    in[1].expected_status = 0;
    in[1].expected_grpc = -1;

    /* 2: largest gRPC status and a 3-digit HTTP status. */
    yb_request_init(&in[2]);
    in[2].protocol = YB_PROTO_HTTP2;
    set_strs(&in[2], "POST", "https", "h", "/a.B/C");
    assert_int_equal(yb_request_set_body(&in[2], "\0\0\0\0\0", 5), 0);
    in[2].expected_status = 999;
    in[2].expected_grpc = 16;

    /* 3: HTTP/1, "*" path, empty scheme and authority. */
    yb_request_init(&in[3]);
    in[3].protocol = YB_PROTO_HTTP1;
    set_strs(&in[3], "OPTIONS", "", "", "*");
    in[3].expected_status = 204;

    /* 4: unspecified protocol, text body. */
    yb_request_init(&in[4]);
    set_strs(&in[4], "PUT", "https", "h:1", "/");
    assert_int_equal(yb_request_set_body(&in[4], "{\"a\": 1}", 8), 0);
    in[4].expected_grpc = 2;

    yb_corpus_header h;
    yb_corpus_header_init(&h);
    assert_int_equal(yb_request_set_str(&h.producer, "yangblast test"), 0);
    assert_int_equal(yb_request_set_str(&h.source, "capture x.pcapng \xe2\x9c\x93"), 0);
    assert_int_equal(yb_corpus_header_add_redaction(&h, "authorization"), 0);
    assert_int_equal(yb_corpus_header_add_redaction(&h, "password"), 0);
    assert_int_equal(yb_corpus_header_add_redaction(&h, "authorization"), 0); /* dup ignored */
    assert_int_equal(h.n_redactions, 2);
    h.created_unix_ns = 1767225600123456789ull;

    const char *p = tpath("rt.ybc");
    write_corpus(p, in, N, &h);

    char err[512];
    yb_corpus_reader *r = yb_corpus_reader_open(p, err, sizeof err);
    if (!r)
        fail_msg("%s", err);
    const yb_corpus_header *rh = yb_corpus_reader_header(r);
    assert_int_equal(rh->format_version, YB_CORPUS_FORMAT_VERSION);
    assert_true(rh->created_unix_ns == h.created_unix_ns);
    assert_string_equal(rh->producer, "yangblast test");
    assert_string_equal(rh->source, h.source);
    assert_int_equal(rh->n_redactions, 2);
    assert_string_equal(rh->redactions[0], "authorization");
    assert_string_equal(rh->redactions[1], "password");

    const yb_request *q;
    for (int i = 0; i < N; i++) {
        assert_int_equal(yb_corpus_reader_index(r), i);
        int rc = yb_corpus_reader_next(r, &q, err, sizeof err);
        if (rc != 1)
            fail_msg("record %d: rc %d: %s", i, rc, err);
        assert_true(yb_request_equal(q, &in[i]));
    }
    assert_int_equal(q->expected_grpc, 2);
    assert_int_equal(yb_corpus_reader_next(r, &q, err, sizeof err), 0);
    assert_int_equal(yb_corpus_reader_next(r, &q, err, sizeof err), 0); /* stays at end */
    yb_corpus_reader_close(r);

    /* Spot checks that equality is not vacuous. */
    yb_request c;
    yb_request_init(&c);
    assert_false(yb_request_equal(&c, &in[1]));
    in[0].expected_grpc = -1;
    r = yb_corpus_reader_open(p, err, sizeof err);
    assert_non_null(r);
    assert_int_equal(yb_corpus_reader_next(r, &q, err, sizeof err), 1);
    assert_false(yb_request_equal(q, &in[0]));
    yb_corpus_reader_close(r);

    for (int i = 0; i < N; i++)
        yb_request_cleanup(&in[i]);
    yb_corpus_header_cleanup(&h);
}

/* A record's fields are the reader's until the next record is read: under
 * ASan a use of them after that is caught (the reader unpacks into
 * arenas it reuses, and poisons the one let go). */
#ifdef YB_BLK_ASAN /* (the poisoning exists only under ASan) */
static void test_record_let_go_is_poisoned(void **state)
{
    (void)state;
    enum { N = 3 };
    yb_request in[N];
    for (int i = 0; i < N; i++) {
        yb_request_init(&in[i]);
        in[i].protocol = YB_PROTO_RESTCONF;
        set_strs(&in[i], "GET", "https", "sw1:443", i == 1 ? "/b" : "/restconf/data/a-longer-path");
    }
    const char *p = tpath("letgo.ybc");
    write_corpus(p, in, N, NULL);
    for (int i = 0; i < N; i++)
        yb_request_cleanup(&in[i]);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char err[512];
        const yb_request *q;
        yb_corpus_reader *r = yb_corpus_reader_open(p, err, sizeof err);
        if (!r || yb_corpus_reader_next(r, &q, err, sizeof err) != 1)
            _exit(3);
        const volatile char *old = q->path;
        if (old[0] != '/' || yb_corpus_reader_next(r, &q, err, sizeof err) != 1)
            _exit(3);
        char c = old[1]; /* the first record's path, let go */
        (void)c;
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    /* not a clean exit, nor the child's own failure to read */
    assert_false(WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 3));
}
#endif

static void test_empty_corpus_and_creation_time(void **state)
{
    (void)state;
    const char *p = tpath("empty.ybc");
    setenv("SOURCE_DATE_EPOCH", "1767225600", 1);
    write_corpus(p, NULL, 0, NULL);
    unsetenv("SOURCE_DATE_EPOCH");
    char err[512];
    yb_corpus_reader *r = yb_corpus_reader_open(p, err, sizeof err);
    if (!r)
        fail_msg("%s", err);
    assert_true(yb_corpus_reader_header(r)->created_unix_ns == 1767225600ull * 1000000000ull);
    assert_string_equal(yb_corpus_reader_header(r)->producer, "");
    assert_int_equal(yb_corpus_reader_header(r)->n_redactions, 0);
    const yb_request *q;
    assert_int_equal(yb_corpus_reader_next(r, &q, err, sizeof err), 0);
    yb_corpus_reader_close(r);
}

/* ------------------------------------------------------------------ */
/* truncation and corruption                                           */

/* Reads every prefix of the file at src; each must fail with a message
 * naming the file (and a record index once the header was read). */
static void check_prefixes(const char *src, size_t stride)
{
    size_t n;
    uint8_t *full = slurp(src, &n);
    assert_true(n > 16);
    const char *p = tpath("prefix.ybc");
    char err[512];
    uint64_t cnt;
    size_t next;
    for (size_t len = 0; len < n; len = next) {
        next = len + stride;
        if (next >= n && len != n - 1)
            next = n - 1; /* always try the longest prefix too */
        spit(p, full, len);
        int rc = read_all(p, &cnt, err, sizeof err);
        if (rc == 0)
            fail_msg("prefix of %zu/%zu bytes read successfully (%llu records)", len, n,
                     (unsigned long long)cnt);
        if (!strstr(err, p))
            fail_msg("prefix %zu: message does not name the file: %s", len, err);
        if (len > 0 && !strstr(err, "record "))
            fail_msg("prefix %zu: message does not name a record: %s", len, err);
    }
    free(full);
}

static void test_truncated_every_offset(void **state)
{
    (void)state;
    enum { N = 4 };
    yb_request in[N];
    for (unsigned i = 0; i < N; i++)
        small_req(&in[i], i, 40 + 30 * i);
    const char *src = tpath("small.ybc");
    write_corpus(src, in, N, NULL);
    check_prefixes(src, 1);
    for (unsigned i = 0; i < N; i++)
        yb_request_cleanup(&in[i]);
}

/* A multi-block corpus (incompressible bodies larger than a zstd block),
 * so truncation also lands after some records were decompressed. */
static void test_truncated_multiblock(void **state)
{
    (void)state;
    enum { N = 6 };
    yb_request in[N];
    for (unsigned i = 0; i < N; i++)
        small_req(&in[i], i, 50000);
    const char *src = tpath("big.ybc");
    write_corpus(src, in, N, NULL);
    check_prefixes(src, 2999);

    /* A prefix ending after some complete records names a later record. */
    size_t n;
    uint8_t *full = slurp(src, &n);
    const char *p = tpath("cut.ybc");
    spit(p, full, n * 3 / 4);
    char err[512];
    uint64_t cnt;
    assert_int_equal(read_all(p, &cnt, err, sizeof err), -2);
    assert_true(cnt > 0);
    char want[64];
    snprintf(want, sizeof want, "record %llu", (unsigned long long)cnt);
    if (!strstr(err, want))
        fail_msg("expected \"%s\" in: %s", want, err);
    free(full);
    for (unsigned i = 0; i < N; i++)
        yb_request_cleanup(&in[i]);
}

static void test_flipped_bytes(void **state)
{
    (void)state;
    enum { N = 3 };
    yb_request in[N];
    for (unsigned i = 0; i < N; i++)
        small_req(&in[i], i, 30);
    const char *src = tpath("flip-src.ybc");
    write_corpus(src, in, N, NULL);
    size_t n;
    uint8_t *full = slurp(src, &n);
    uint8_t *mod = malloc(n);
    assert_non_null(mod);
    const char *p = tpath("flip.ybc");
    static const uint8_t masks[] = {0x01, 0x80, 0xff};
    unsigned errors = 0, successes = 0;
    char err[512];
    uint64_t cnt;
    for (size_t off = 0; off < n; off++)
        for (size_t m = 0; m < sizeof masks; m++) {
            memcpy(mod, full, n);
            mod[off] ^= masks[m];
            spit(p, mod, n);
            if (read_all(p, &cnt, err, sizeof err) == 0) {
                successes++;
            } else {
                errors++;
                if (!strstr(err, p))
                    fail_msg("flip at %zu: message does not name the file: %s", off, err);
            }
        }
    /* The zstd checksum catches nearly every flip. */
    assert_true(errors > 0);
    assert_true(successes <= errors / 10);
    free(mod);
    free(full);
    for (unsigned i = 0; i < N; i++)
        yb_request_cleanup(&in[i]);
}

/* A frame found corrupt while the reader wanted an entry's bytes (format
 * 1) or a block's parts (format 2) is reported as corrupt, not as a file
 * cut short: zstd's checksum of the last frame (its last 4 bytes, before
 * the summary's frame) damaged, at level 3 (format 1), 1 and 15 (format
 * 2: frames, one stream). */
static void test_corrupt_not_truncated(void **state)
{
    (void)state;
    enum { N = 8 };
    yb_request in[N];
    for (unsigned i = 0; i < N; i++)
        small_req(&in[i], i, 60000);
    static const unsigned levels[] = {3, 1, 15};
    for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
        const char *src = tpath("corrupt-src.ybc"), *p = tpath("corrupt.ybc");
        yb_corpus_header h;
        yb_corpus_header_init(&h);
        h.level = levels[l];
        write_corpus(src, in, N, &h);
        size_t n;
        uint8_t *full = slurp(src, &n);
        size_t sum = full[n - 8] | (size_t)full[n - 7] << 8; /* the summary's length */
        full[n - 16 - sum - 2] ^= 0x01;
        spit(p, full, n);
        char err[512];
        uint64_t cnt;
        assert_int_equal(read_all(p, &cnt, err, sizeof err), -2);
        if (!strstr(err, p) || !strstr(err, "corrupt compressed data (") || strstr(err, "truncated"))
            fail_msg("level %u: %s", levels[l], err);
        free(full);
    }
    for (unsigned i = 0; i < N; i++)
        yb_request_cleanup(&in[i]);
}

static void test_not_a_corpus(void **state)
{
    (void)state;
    char err[512];
    uint64_t cnt;
    const char *p = tpath("plain.txt");
    spit(p, "hello, world\n", 13);
    assert_int_equal(read_all(p, &cnt, err, sizeof err), -1);
    assert_non_null(strstr(err, p));
    assert_non_null(strstr(err, "not a yangblast corpus"));

    /* zstd, but not our magic. */
    buf b = {0};
    buf_put(&b, "PK\3\4 and more bytes", 20);
    buf_write_zstd(&b, p);
    assert_int_equal(read_all(p, &cnt, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a yangblast corpus"));

    /* zstd holding fewer bytes than the magic. */
    buf_put(&b, "x", 1);
    buf_write_zstd(&b, p);
    assert_int_equal(read_all(p, &cnt, err, sizeof err), -1);
    assert_non_null(strstr(err, p));
    assert_non_null(strstr(err, "not a yangblast corpus"));

    spit(p, "", 0);
    assert_int_equal(read_all(p, &cnt, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a yangblast corpus"));

    assert_int_equal(read_all(tpath("does-not-exist.ybc"), &cnt, err, sizeof err), -1);
    assert_non_null(strstr(err, "does-not-exist.ybc"));
}

/* ------------------------------------------------------------------ */
/* structural errors in hand-built streams                             */

static void expect_read_error(const char *p, const char *needle)
{
    char err[512];
    uint64_t cnt;
    int rc = read_all(p, &cnt, err, sizeof err);
    if (rc == 0)
        fail_msg("read succeeded, expected an error with \"%s\"", needle);
    if (!strstr(err, needle) || !strstr(err, p))
        fail_msg("expected \"%s\" and the file name in: %s", needle, err);
}

static void test_trailer_mismatch(void **state)
{
    (void)state;
    const char *p = tpath("mismatch.ybc");
    buf b = {0};
    buf_magic(&b);
    buf_header_entry(&b, 1);
    buf_request_entry(&b, "/a");
    buf_request_entry(&b, "/b");
    buf_trailer_entry(&b, 3);
    buf_write_zstd(&b, p);
    expect_read_error(p, "record 2");
    expect_read_error(p, "end marker says 3");

    buf_magic(&b);
    buf_header_entry(&b, 1);
    buf_request_entry(&b, "/a");
    buf_request_entry(&b, "/b");
    buf_trailer_entry(&b, 1);
    buf_write_zstd(&b, p);
    expect_read_error(p, "end marker says 1");

    /* Correct count reads fine (control). */
    buf_magic(&b);
    buf_header_entry(&b, 1);
    buf_request_entry(&b, "/a");
    buf_request_entry(&b, "/b");
    buf_trailer_entry(&b, 2);
    buf_write_zstd(&b, p);
    char err[512];
    uint64_t cnt;
    assert_int_equal(read_all(p, &cnt, err, sizeof err), 0);
    assert_int_equal(cnt, 2);
}

static void test_structural_errors(void **state)
{
    (void)state;
    const char *p = tpath("struct.ybc");
    buf b = {0};

    /* No trailer, but a complete zstd frame. */
    buf_magic(&b);
    buf_header_entry(&b, 1);
    buf_request_entry(&b, "/a");
    buf_write_zstd(&b, p);
    expect_read_error(p, "record 1");
    expect_read_error(p, "end marker missing");

    /* Data after the trailer. */
    buf_magic(&b);
    buf_header_entry(&b, 1);
    buf_trailer_entry(&b, 0);
    buf_request_entry(&b, "/a");
    buf_write_zstd(&b, p);
    expect_read_error(p, "after end marker");

    /* A second header. */
    buf_magic(&b);
    buf_header_entry(&b, 1);
    buf_header_entry(&b, 1);
    buf_trailer_entry(&b, 0);
    buf_write_zstd(&b, p);
    expect_read_error(p, "second header");

    /* First entry is not a header. */
    buf_magic(&b);
    buf_request_entry(&b, "/a");
    buf_trailer_entry(&b, 1);
    buf_write_zstd(&b, p);
    expect_read_error(p, "not a header");

    /* A newer format version is refused. */
    buf_magic(&b);
    buf_header_entry(&b, YB_CORPUS_FORMAT_NEWEST + 1);
    buf_trailer_entry(&b, 0);
    buf_write_zstd(&b, p);
    expect_read_error(p, "newer");

    /* An entry longer than the 64 MiB limit. */
    buf_magic(&b);
    buf_header_entry(&b, 1);
    buf_varint(&b, (uint64_t)YB_CORPUS_MAX_ENTRY + 1);
    buf_put(&b, "\x12\x00", 2);
    buf_write_zstd(&b, p);
    expect_read_error(p, "limit");

    /* An over-long varint. */
    buf_magic(&b);
    buf_header_entry(&b, 1);
    buf_put(&b, "\xff\xff\xff\xff\xff\xff\x01", 7);
    buf_write_zstd(&b, p);
    expect_read_error(p, "record 0");

    /* An entry that is not valid protobuf. */
    buf_magic(&b);
    buf_header_entry(&b, 1);
    buf_varint(&b, 3);
    buf_put(&b, "\x12\x7f\x00", 3); /* request of 127 bytes, only 1 present */
    buf_trailer_entry(&b, 0);
    buf_write_zstd(&b, p);
    expect_read_error(p, "record 0");

    /* A stored record the writer would refuse (path without '/'). */
    buf_magic(&b);
    buf_header_entry(&b, 1);
    buf_request_entry(&b, "no-slash");
    buf_trailer_entry(&b, 1);
    buf_write_zstd(&b, p);
    expect_read_error(p, "invalid record");
}

/* ------------------------------------------------------------------ */
/* forward compatibility                                               */

static void test_unknown_fields_and_entries(void **state)
{
    (void)state;
    const char *p = tpath("future.ybc");
    buf b = {0};
    buf_magic(&b);

    /* A header with an unknown field 9 (string) appended. */
    {
        Yangblast__Header h = YANGBLAST__HEADER__INIT;
        h.format_version = 1;
        h.producer = (char *)"future yangblast";
        size_t n = yangblast__header__get_packed_size(&h);
        uint8_t hb[256];
        assert_true(n < 200);
        yangblast__header__pack(&h, hb);
        memcpy(hb + n, "\x4a\x03xyz", 5);
        n += 5;
        buf_varint(&b, 1 + 1 + n); /* Entry: tag 0x0a, len, header */
        buf_put(&b, "\x0a", 1);
        buf_varint(&b, n);
        buf_put(&b, hb, n);
    }
    /* An entry of an unknown kind (field 9, length-delimited). */
    buf_varint(&b, 7);
    buf_put(&b, "\x4a\x05hello", 7);
    /* An entry of an unknown kind (field 10, varint) next to nothing else. */
    buf_varint(&b, 2);
    buf_put(&b, "\x50\x07", 2);
    /* A request with unknown fields of every wire type appended. */
    {
        Yangblast__Request q = YANGBLAST__REQUEST__INIT;
        q.protocol = YANGBLAST__PROTOCOL__PROTOCOL_GNMI;
        q.method = (char *)"POST";
        q.scheme = (char *)"https";
        q.authority = (char *)"sw1:8080";
        q.path = (char *)"/gnmi.gNMI/Get";
        q.body.data = (uint8_t *)"\0\0\0\0\0";
        q.body.len = 5;
        q.expected_status = 200;
        q.expected_grpc_status = 1; /* OK */
        size_t n = yangblast__request__get_packed_size(&q);
        uint8_t *rb = malloc(n + 64);
        assert_non_null(rb);
        yangblast__request__pack(&q, rb);
        static const uint8_t extra[] = {
            0x98, 0x06, 0x2a,                   /* field 99, varint 42 */
            0xa2, 0x06, 0x03, 'a', 'b', 'c',    /* field 100, bytes "abc" */
            0xa9, 0x06, 1, 2, 3, 4, 5, 6, 7, 8, /* field 101, fixed64 */
            0xb5, 0x06, 1, 2, 3, 4,             /* field 102, fixed32 */
            0x68, 0x01,                         /* field 13, varint 1 */
        };
        memcpy(rb + n, extra, sizeof extra);
        n += sizeof extra;
        buf b2 = {0};
        buf_put(&b2, "\x12", 1);
        buf_varint(&b2, n);
        buf_put(&b2, rb, n);
        buf_put(&b2, "\x78\x05", 2); /* Entry field 15, varint */
        buf_varint(&b, b2.n);
        buf_put(&b, b2.p, b2.n);
        free(b2.p);
        free(rb);
    }
    buf_varint(&b, 7);
    buf_put(&b, "\x4a\x05world", 7);
    buf_trailer_entry(&b, 1);
    buf_write_zstd(&b, p);

    char err[512];
    yb_corpus_reader *r = yb_corpus_reader_open(p, err, sizeof err);
    if (!r)
        fail_msg("%s", err);
    assert_string_equal(yb_corpus_reader_header(r)->producer, "future yangblast");
    const yb_request *q;
    int rc = yb_corpus_reader_next(r, &q, err, sizeof err);
    if (rc != 1)
        fail_msg("rc %d: %s", rc, err);
    assert_int_equal(q->protocol, YB_PROTO_GNMI);
    assert_string_equal(q->method, "POST");
    assert_string_equal(q->authority, "sw1:8080");
    assert_string_equal(q->path, "/gnmi.gNMI/Get");
    assert_int_equal(q->body_len, 5);
    assert_int_equal(q->expected_status, 200);
    assert_int_equal(q->expected_grpc, 0);
    assert_int_equal(q->n_headers, 0);
    rc = yb_corpus_reader_next(r, &q, err, sizeof err);
    if (rc != 0)
        fail_msg("rc %d: %s", rc, err);
    yb_corpus_reader_close(r);
}

/* ------------------------------------------------------------------ */
/* writer                                                              */

static void test_writer_abort_leaves_nothing(void **state)
{
    (void)state;
    yb_request q;
    small_req(&q, 0, 100);
    char err[512];
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    yb_corpus_writer *w = yb_corpus_writer_open(tpath("out.ybc"), &h, err, sizeof err);
    assert_non_null(w);
    assert_int_equal(dir_entries(), 1); /* the temporary file */
    assert_int_equal(yb_corpus_writer_add(w, &q), 0);
    assert_int_equal(access(tpath("out.ybc"), F_OK), -1);
    yb_corpus_writer_abort(w);
    assert_int_equal(dir_entries(), 0);
    yb_corpus_writer_abort(NULL);
    yb_request_cleanup(&q);
}

static void test_writer_preexisting_untouched(void **state)
{
    (void)state;
    const char *p = tpath("keep.ybc");
    spit(p, "OLD CONTENT", 11);
    yb_request q;
    small_req(&q, 1, 100);
    char err[512];
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    size_t n;
    uint8_t *b;

    /* Abort: the old file stays as it was. */
    yb_corpus_writer *w = yb_corpus_writer_open(p, &h, err, sizeof err);
    assert_non_null(w);
    assert_int_equal(yb_corpus_writer_add(w, &q), 0);
    b = slurp(p, &n);
    assert_int_equal(n, 11);
    assert_memory_equal(b, "OLD CONTENT", 11);
    free(b);
    yb_corpus_writer_abort(w);
    b = slurp(p, &n);
    assert_int_equal(n, 11);
    assert_memory_equal(b, "OLD CONTENT", 11);
    free(b);
    assert_int_equal(dir_entries(), 1);

    /* Success: replaced. */
    w = yb_corpus_writer_open(p, &h, err, sizeof err);
    assert_non_null(w);
    assert_int_equal(yb_corpus_writer_add(w, &q), 0);
    b = slurp(p, &n);
    assert_int_equal(n, 11);
    free(b);
    assert_int_equal(yb_corpus_writer_close(w, err, sizeof err), 0);
    assert_int_equal(dir_entries(), 1);
    uint64_t cnt;
    assert_int_equal(read_all(p, &cnt, err, sizeof err), 0);
    assert_int_equal(cnt, 1);
    yb_request_cleanup(&q);
}

static void test_writer_failed_close(void **state)
{
    (void)state;
    char err[512] = "";
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    yb_request q;
    small_req(&q, 0, 10);

    /* A directory is refused when the writer opens, naming it. */
    const char *d = tpath("adir");
    assert_int_equal(mkdir(d, 0755), 0);
    spit(tpath("adir/inside"), "x", 1);
    yb_corpus_writer *w = yb_corpus_writer_open(d, &h, err, sizeof err);
    assert_null(w);
    assert_non_null(strstr(err, d));
    assert_int_equal(dir_entries(), 1); /* only adir: no temporary file left */
    struct stat st;
    assert_int_equal(stat(d, &st), 0);
    assert_true(S_ISDIR(st.st_mode));

    /* A refused record poisons the writer: close discards, and a
     * pre-existing file stays untouched. */
    const char *p = tpath("poison.ybc");
    spit(p, "OLD", 3);
    w = yb_corpus_writer_open(p, &h, err, sizeof err);
    assert_non_null(w);
    assert_int_equal(yb_corpus_writer_add(w, &q), 0);
    yb_request bad;
    small_req(&bad, 0, 10);
    assert_int_equal(yb_request_set_str(&bad.path, "no-slash"), 0);
    assert_int_equal(yb_corpus_writer_add(w, &bad), -EINVAL);
    assert_true(yb_corpus_writer_add(w, &q) < 0); /* stays poisoned */
    assert_true(yb_corpus_writer_add_checked(w, &q) < 0); /* for the unchecked path too */
    assert_true(yb_corpus_writer_close(w, err, sizeof err) < 0);
    assert_non_null(strstr(err, p));
    size_t n;
    uint8_t *b = slurp(p, &n);
    assert_int_equal(n, 3);
    assert_memory_equal(b, "OLD", 3);
    free(b);
    assert_int_equal(dir_entries(), 2);

    /* A missing directory fails at open, leaving nothing. */
    w = yb_corpus_writer_open(tpath("missing/out.ybc"), &h, err, sizeof err);
    assert_null(w);
    assert_non_null(strstr(err, "missing/out.ybc"));
    assert_int_equal(dir_entries(), 2);

    yb_request_cleanup(&bad);
    yb_request_cleanup(&q);
}

/* Opens a writer, adds r, expects -EINVAL, aborts. */
static void expect_refused(yb_request *r, const char *what)
{
    char err[512];
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    yb_corpus_writer *w = yb_corpus_writer_open(tpath("inval.ybc"), &h, err, sizeof err);
    assert_non_null(w);
    int rc = yb_corpus_writer_add(w, r);
    if (rc != -EINVAL)
        fail_msg("%s: writer_add returned %d, want -EINVAL", what, rc);
    assert_int_equal(yb_corpus_writer_count(w), 0);
    yb_corpus_writer_abort(w);
    yb_request_cleanup(r);
}

static void test_writer_refuses_invalid(void **state)
{
    (void)state;
    yb_request r;

    small_req(&r, 0, 4);
    assert_int_equal(yb_request_set_str(&r.method, "GE T"), 0);
    expect_refused(&r, "method with a space");

    small_req(&r, 0, 4);
    assert_int_equal(yb_request_set_str(&r.method, ""), 0);
    expect_refused(&r, "empty method");

    small_req(&r, 0, 4);
    assert_int_equal(yb_request_add_header(&r, "x-a", "ok\r\nInjected: 1", 16), 0);
    expect_refused(&r, "header value with CR/LF");

    small_req(&r, 0, 4);
    assert_int_equal(yb_request_add_header(&r, "x-a", "line\nbreak", 10), 0);
    expect_refused(&r, "header value with LF");

    small_req(&r, 0, 4);
    assert_int_equal(yb_request_add_header(&r, "x-a", "nul\0byte", 8), 0);
    expect_refused(&r, "header value with NUL");

    small_req(&r, 0, 4);
    assert_int_equal(yb_request_add_header(&r, "bad name", "v", 1), 0);
    expect_refused(&r, "header name with a space");

    small_req(&r, 0, 4);
    assert_int_equal(yb_request_add_header(&r, ":path", "/", 1), 0);
    expect_refused(&r, "pseudo-header");

    small_req(&r, 0, 4);
    assert_int_equal(yb_request_set_str(&r.path, "restconf/data"), 0);
    expect_refused(&r, "path without '/'");

    small_req(&r, 0, 4);
    assert_int_equal(yb_request_set_str(&r.path, "/a b"), 0);
    expect_refused(&r, "path with a space");

    small_req(&r, 0, 4);
    assert_int_equal(yb_request_set_str(&r.authority, "a b"), 0);
    expect_refused(&r, "authority with a space");

    small_req(&r, 0, 4);
    r.expected_status = 1000;
    expect_refused(&r, "4-digit status");
}

/* ------------------------------------------------------------------ */
/* streaming, rewind                                                   */

static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static void test_streaming_bounded_memory(void **state)
{
    (void)state;
    enum { N = 20000, BODY = 1024 };
    const char *p = tpath("stream.ybc");
    char err[512];
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    yb_corpus_writer *w = yb_corpus_writer_open(p, &h, err, sizeof err);
    assert_non_null(w);
    yb_request q;
    small_req(&q, 0, BODY);
    for (unsigned i = 0; i < N; i++) {
        /* Vary part of the body so the stream does not collapse to nothing. */
        fill_random(q.body, 64);
        q.conn_order = i;
        assert_int_equal(yb_corpus_writer_add(w, &q), 0);
    }
    assert_int_equal(yb_corpus_writer_close(w, err, sizeof err), 0);
    yb_request_cleanup(&q);

    size_t base = heap_in_use();
    yb_corpus_reader *r = yb_corpus_reader_open(p, err, sizeof err);
    assert_non_null(r);
    size_t peak = 0;
    const yb_request *out;
    uint64_t n = 0;
    int rc;
    while ((rc = yb_corpus_reader_next(r, &out, err, sizeof err)) == 1) {
        if (out->conn_order != n || out->body_len != BODY)
            fail_msg("record %llu: conn_order %u body %zu", (unsigned long long)n,
                     out->conn_order, out->body_len);
        n++;
        size_t u = heap_in_use();
        if (u > peak)
            peak = u;
    }
    if (rc != 0)
        fail_msg("%s", err);
    assert_int_equal(n, N);
    yb_corpus_reader_close(r);
    /* The stream decompresses to > 20 MB; the reader keeps about one record
     * plus its I/O buffers and a zstd window. */
    if (getenv("YB_TEST_VERBOSE"))
        fprintf(stderr, "# streaming: reader peak %zu bytes\n", peak - base);
    if (base > 0 && peak > 0 && peak > base)
        if (peak - base > 4u * 1024 * 1024)
            fail_msg("reader held %zu bytes", peak - base);
}

static void test_large_records_stream(void **state)
{
    (void)state;
    enum { N = 200, BODY = 64 * 1024 };
    yb_request in;
    small_req(&in, 1, BODY);
    for (size_t i = 64; i < BODY; i++) /* compressible: fast to write */
        in.body[i] = (uint8_t)("0123456789abcdef"[i % 16] + i / 4096);
    const char *p = tpath("large.ybc");
    char err[512];
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    yb_corpus_writer *w = yb_corpus_writer_open(p, &h, err, sizeof err);
    assert_non_null(w);
    for (unsigned i = 0; i < N; i++) {
        in.body[0] = (uint8_t)i;
        assert_int_equal(yb_corpus_writer_add(w, &in), 0);
    }
    assert_int_equal(yb_corpus_writer_close(w, err, sizeof err), 0);

    size_t base = heap_in_use(), peak = 0;
    yb_corpus_reader *r = yb_corpus_reader_open(p, err, sizeof err);
    assert_non_null(r);
    const yb_request *q;
    unsigned n = 0;
    while (yb_corpus_reader_next(r, &q, err, sizeof err) == 1) {
        in.body[0] = (uint8_t)n;
        assert_true(yb_request_equal(q, &in));
        n++;
        size_t u = heap_in_use();
        if (u > peak)
            peak = u;
    }
    assert_int_equal(n, N);
    yb_corpus_reader_close(r);
    /* 13 MB of records went through; the reader holds one record, its I/O
     * buffers and the zstd window (2 MiB at level 3), far less. */
    if (getenv("YB_TEST_VERBOSE"))
        fprintf(stderr, "# large records: reader peak %zu bytes\n", peak - base);
    if (base > 0 && peak > base && peak - base > 4u * 1024 * 1024)
        fail_msg("reader held %zu bytes for %u records of %u bytes", peak - base, N, BODY);
    yb_request_cleanup(&in);
}

static void test_rewind(void **state)
{
    (void)state;
    enum { N = 5 };
    yb_request in[N];
    for (unsigned i = 0; i < N; i++)
        small_req(&in[i], i, 20 + i);
    const char *p = tpath("rewind.ybc");
    write_corpus(p, in, N, NULL);
    char err[512];
    yb_corpus_reader *r = yb_corpus_reader_open(p, err, sizeof err);
    assert_non_null(r);
    const yb_request *q;
    for (int pass = 0; pass < 3; pass++) {
        unsigned stop = pass == 0 ? 2 : N; /* rewind mid-way, then after the end */
        for (unsigned i = 0; i < stop; i++) {
            assert_int_equal(yb_corpus_reader_next(r, &q, err, sizeof err), 1);
            assert_true(yb_request_equal(q, &in[i]));
        }
        assert_int_equal(yb_corpus_reader_index(r), stop);
        if (stop == N)
            assert_int_equal(yb_corpus_reader_next(r, &q, err, sizeof err), 0);
        assert_int_equal(yb_corpus_reader_rewind(r, err, sizeof err), 0);
        assert_int_equal(yb_corpus_reader_index(r), 0);
        assert_string_equal(yb_corpus_reader_header(r)->producer, "");
    }
    yb_corpus_reader_close(r);
    for (unsigned i = 0; i < N; i++)
        yb_request_cleanup(&in[i]);
}

/* A corpus gets a new header with its records copied compressed: read
 * back, the new header and the same records; a file whose header does not
 * end its first frame (one frame for everything, as writers made before)
 * is refused and nothing is left under the new name. */
/* Reads the n records of r, which must equal in[], then its clean end;
 * closes r. */
static void expect_rest(yb_corpus_reader *r, const yb_request *in, size_t n)
{
    char err[512] = "";
    const yb_request *q;
    for (size_t i = 0; i < n; i++) {
        if (yb_corpus_reader_next(r, &q, err, sizeof err) != 1)
            fail_msg("record %zu: %s", i, err);
        assert_true(yb_request_equal(q, &in[i]));
    }
    assert_int_equal(yb_corpus_reader_next(r, &q, err, sizeof err), 0);
    yb_corpus_reader_close(r);
}

static void test_splice(void **state)
{
    (void)state;
    enum { N = 40 };
    yb_request in[N];
    for (unsigned i = 0; i < N; i++)
        small_req(&in[i], i, 100 + 37 * i);
    char a[1024], b[1024], l[1024]; /* (tpath's slots are reused) */
    snprintf(a, sizeof a, "%s", tpath("a.ybc"));
    snprintf(b, sizeof b, "%s", tpath("b.ybc"));
    snprintf(l, sizeof l, "%s", tpath("l.ybc"));
    write_corpus(a, in, N, NULL);
    /* the level: refused out of range, recorded in the header */
    char lerr[512] = "";
    yb_corpus_header lh;
    yb_corpus_header_init(&lh);
    lh.level = 20;
    assert_null(yb_corpus_writer_open(l, &lh, lerr, sizeof lerr));
    assert_non_null(strstr(lerr, "compression level 20"));
    assert_int_equal(access(l, F_OK), -1);
    lh.level = 19;
    write_corpus(l, in, N, &lh);
    yb_corpus_reader *lr = yb_corpus_reader_open(l, lerr, sizeof lerr);
    assert_non_null(lr);
    assert_int_equal(yb_corpus_reader_header(lr)->level, 19);
    yb_corpus_reader_close(lr);
    lr = yb_corpus_reader_open(a, lerr, sizeof lerr);
    assert_non_null(lr);
    assert_int_equal(yb_corpus_reader_header(lr)->level, 0);
    yb_corpus_reader_close(lr);
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    h.producer = (char *)"spliced";
    h.created_unix_ns = 12345;
    char err[512] = "";
    yb_corpus_writer *w = yb_corpus_writer_open(b, &h, err, sizeof err);
    assert_non_null(w);
    assert_int_equal(yb_corpus_header_add_redaction(&h, "authorization"), 0);
    if (yb_corpus_writer_splice(w, a, err, sizeof err) < 0)
        fail_msg("splice: %s", err);
    assert_int_equal(yb_corpus_writer_add(w, &in[0]), -EINVAL); /* only close may follow */
    yb_corpus_writer_abort(w);
    assert_int_equal(access(b, F_OK), -1);

    w = yb_corpus_writer_open(b, &h, err, sizeof err);
    assert_non_null(w);
    if (yb_corpus_writer_splice(w, a, err, sizeof err) < 0 ||
        yb_corpus_writer_close(w, err, sizeof err) < 0)
        fail_msg("splice: %s", err);
    yb_corpus_reader *r = yb_corpus_reader_open(b, err, sizeof err);
    if (!r)
        fail_msg("%s", err);
    assert_string_equal(yb_corpus_reader_header(r)->producer, "spliced");
    assert_true(yb_corpus_reader_header(r)->created_unix_ns == 12345);
    assert_int_equal(yb_corpus_reader_header(r)->n_redactions, 1);
    expect_rest(r, in, N);
    free(h.redactions[0]);
    free(h.redactions);

    /* a one-frame corpus (header not in a frame of its own) is refused */
    const char *old = YB_SRCDIR "/tests/cli/old-corpora/restconf-v1.ybc";
    const char *c = tpath("c.ybc");
    yb_corpus_header_init(&h);
    w = yb_corpus_writer_open(c, &h, err, sizeof err);
    assert_non_null(w);
    assert_int_equal(yb_corpus_writer_splice(w, old, err, sizeof err), -1);
    assert_non_null(strstr(err, "header frame"));
    assert_true(yb_corpus_writer_close(w, err, sizeof err) < 0);
    assert_int_equal(access(c, F_OK), -1);
    for (unsigned i = 0; i < N; i++)
        yb_request_cleanup(&in[i]);
}

/* Writes reqs at `level` with `threads` zstd threads (0: the writer's
 * default). */
static void write_threads(const char *path, yb_request *reqs, size_t n, unsigned level,
                          unsigned threads)
{
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    h.created_unix_ns = 1; /* the same header every time */
    h.level = level;
    char err[512] = "";
    yb_corpus_writer *w = yb_corpus_writer_open(path, &h, err, sizeof err);
    if (!w)
        fail_msg("writer_open: %s", err);
    assert_int_equal(yb_corpus_writer_set_threads(w, 0), -EINVAL);
    assert_int_equal(yb_corpus_writer_set_threads(w, YB_CORPUS_THREADS_MAX + 1), -EINVAL);
    if (threads)
        assert_int_equal(yb_corpus_writer_set_threads(w, threads), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(yb_corpus_writer_add(w, &reqs[i]), 0);
    /* only before the first record */
    assert_int_equal(yb_corpus_writer_set_threads(w, 1), -EINVAL);
    if (yb_corpus_writer_close(w, err, sizeof err) != 0)
        fail_msg("writer_close: %s", err);
}

/* Records compressed in worker threads (level 1): the same records, and
 * the same bytes whatever the number of threads, over several of zstd's
 * jobs (with one thread, the caller's thread compresses the blocks that
 * come while one waits for it: blocks compressed by either, written in
 * order); at level 3 the threads change nothing. */
static void test_writer_threads(void **state)
{
    (void)state;
    enum { N = 2500 }; /* 2,500 x 2 KB: 5 MB, three of zstd's 2 MB jobs at level 1 */
    yb_request *in = calloc(N, sizeof *in);
    assert_non_null(in);
    for (unsigned i = 0; i < N; i++)
        small_req(&in[i], i, 2048);
    static const struct {
        const char *name;
        unsigned level, threads;
    } RUNS[] = {{"l1.ybc", 1, 0},  {"l1t3.ybc", 1, 3}, {"l3.ybc", 3, 0}, {"l3t3.ybc", 3, 3},
                {"l1t1.ybc", 1, 1}, {"l1t2.ybc", 1, 2}};
    enum { NRUNS = sizeof RUNS / sizeof RUNS[0] };
    uint8_t *bytes[NRUNS];
    size_t len[NRUNS];
    for (int t = 0; t < NRUNS; t++) {
        const char *path = tpath(RUNS[t].name);
        write_threads(path, in, N, RUNS[t].level, RUNS[t].threads);
        char err[512];
        yb_corpus_reader *r = yb_corpus_reader_open(path, err, sizeof err);
        if (!r)
            fail_msg("%s", err);
        expect_rest(r, in, N);
        bytes[t] = slurp(path, &len[t]);
    }
    assert_true(len[0] == len[1]);
    assert_memory_equal(bytes[0], bytes[1], len[0]);
    assert_true(len[2] == len[3]);
    assert_memory_equal(bytes[2], bytes[3], len[2]);
    for (int t = 4; t < NRUNS; t++) {
        assert_true(len[0] == len[t]);
        assert_memory_equal(bytes[0], bytes[t], len[0]);
    }
    for (int t = 0; t < NRUNS; t++)
        free(bytes[t]);

    /* refused after a splice */
    char err[512];
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    h.level = 1;
    yb_corpus_writer *w = yb_corpus_writer_open(tpath("x.ybc"), &h, err, sizeof err);
    assert_non_null(w);
    if (yb_corpus_writer_splice(w, tpath("l1.ybc"), err, sizeof err) < 0)
        fail_msg("splice: %s", err);
    assert_int_equal(yb_corpus_writer_set_threads(w, 2), -EINVAL);
    yb_corpus_writer_abort(w);
    for (unsigned i = 0; i < N; i++)
        yb_request_cleanup(&in[i]);
    free(in);
}

/* Format 2 (levels YB_CORPUS_SPLIT_LEVEL and above: digits apart, in
 * blocks): records of digits, '0' bytes, binary and a body larger than a
 * block read back as written, across several blocks, after a rewind too;
 * every prefix fails; splicing it behind a header of the other format is
 * refused. */
static void test_split_roundtrip(void **state)
{
    (void)state;
    enum { N = 120 };
    yb_request *in = calloc(N, sizeof *in);
    assert_non_null(in);
    for (unsigned i = 0; i < N; i++) {
        small_req(&in[i], i, i == 7 ? 3u << 20 : 20000); /* one body of 3 MiB */
        for (size_t j = 0; j < in[i].body_len; j += 7) /* runs of digits and '0's */
            in[i].body[j] = (uint8_t)('0' + (j / 7 + i) % 10);
        if (i % 3 == 0)
            memcpy(in[i].body, "0000123abc9", 11);
        char path[32];
        snprintf(path, sizeof path, "/a/%u/0%u", i * 1000u, i);
        assert_int_equal(yb_request_set_str(&in[i].path, path), 0);
    }
    char a[1024], err[512];
    snprintf(a, sizeof a, "%s", tpath("split.ybc"));
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    h.level = YB_CORPUS_SPLIT_LEVEL;
    write_corpus(a, in, N, &h);
    for (int pass = 0; pass < 2; pass++) {
        yb_corpus_reader *r = yb_corpus_reader_open(a, err, sizeof err);
        assert_non_null(r);
        assert_int_equal(yb_corpus_reader_header(r)->format_version, YB_CORPUS_FORMAT_SPLIT);
        assert_int_equal(yb_corpus_reader_header(r)->level, YB_CORPUS_SPLIT_LEVEL);
        const yb_request *q;
        for (int round = 0; round < 2; round++) {
            for (unsigned i = 0; i < N; i++) {
                if (yb_corpus_reader_next(r, &q, err, sizeof err) != 1)
                    fail_msg("record %u: %s", i, err);
                if (!yb_request_equal(q, &in[i]))
                    fail_msg("record %u differs", i);
            }
            assert_int_equal(yb_corpus_reader_next(r, &q, err, sizeof err), 0);
            assert_int_equal(yb_corpus_reader_rewind(r, err, sizeof err), 0);
        }
        yb_corpus_reader_close(r);
    }
    /* below the split level: format 1, the same records */
    h.level = YB_CORPUS_SPLIT_LEVEL - 1;
    char b[1024];
    snprintf(b, sizeof b, "%s", tpath("plain.ybc"));
    write_corpus(b, in, 3, &h);
    yb_corpus_reader *r = yb_corpus_reader_open(b, err, sizeof err);
    assert_non_null(r);
    assert_int_equal(yb_corpus_reader_header(r)->format_version, YB_CORPUS_FORMAT_VERSION);
    yb_corpus_reader_close(r);
    /* splice refuses records of the other format */
    yb_corpus_writer *w = yb_corpus_writer_open(tpath("sp.ybc"), &h, err, sizeof err);
    assert_non_null(w);
    assert_int_equal(yb_corpus_writer_splice(w, a, err, sizeof err), -1);
    assert_non_null(strstr(err, "format 2"));
    yb_corpus_writer_abort(w);
    /* every prefix of a small format-2 corpus fails, naming a record */
    h.level = 19;
    write_corpus(b, in + 1, 3, &h);
    check_prefixes(b, 7);
    for (unsigned i = 0; i < N; i++)
        yb_request_cleanup(&in[i]);
    free(in);
}

/* Level 1 writes each block as zstd frames of their own, which the
 * reader decodes whole, straight into its buffer: frames larger than the
 * reader's input chunk (incompressible bodies: its input grows to hold
 * them), frames that cross a chunk's end, and one larger than it decodes
 * whole (a 9 MiB body: streamed) read back equal, also after a rewind;
 * every prefix and nearly every flipped byte fails naming the file. */
static void test_whole_frames(void **state)
{
    (void)state;
    enum { N = 14 };
    yb_request in[N];
    for (unsigned i = 0; i < N; i++)
        small_req(&in[i], i, i == 12 ? 9u << 20 : 150000 + 1000 * i);
    char a[1024], b[1024], err[512];
    snprintf(a, sizeof a, "%s", tpath("whole.ybc"));
    snprintf(b, sizeof b, "%s", tpath("whole-cut.ybc"));
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    h.level = 1;
    write_corpus(a, in, N, &h);
    yb_corpus_reader *r = yb_corpus_reader_open(a, err, sizeof err);
    if (!r)
        fail_msg("%s", err);
    assert_int_equal(yb_corpus_reader_header(r)->format_version, YB_CORPUS_FORMAT_SPLIT);
    const yb_request *q;
    for (int round = 0; round < 2; round++) {
        for (unsigned i = 0; i < N; i++) {
            if (yb_corpus_reader_next(r, &q, err, sizeof err) != 1)
                fail_msg("round %d, record %u: %s", round, i, err);
            if (!yb_request_equal(q, &in[i]))
                fail_msg("round %d, record %u differs", round, i);
        }
        assert_int_equal(yb_corpus_reader_next(r, &q, err, sizeof err), 0);
        assert_int_equal(yb_corpus_reader_rewind(r, err, sizeof err), 0);
    }
    yb_corpus_reader_close(r);

    /* without the 9 MiB body: cut at every 24001st byte, bytes flipped */
    write_corpus(a, in, 12, &h);
    check_prefixes(a, 24001);
    size_t n;
    uint8_t *full = slurp(a, &n);
    unsigned errors = 0, successes = 0;
    uint64_t cnt;
    for (size_t off = 0; off < n; off += 7919) {
        full[off] ^= 0x40;
        spit(b, full, n);
        full[off] ^= 0x40;
        if (read_all(b, &cnt, err, sizeof err) == 0) {
            successes++;
        } else {
            errors++;
            if (!strstr(err, b))
                fail_msg("flip at %zu: message does not name the file: %s", off, err);
        }
    }
    assert_true(errors > 100);
    assert_true(successes <= errors / 10);
    free(full);
    for (unsigned i = 0; i < N; i++)
        yb_request_cleanup(&in[i]);
}

/* ---- level 1's checksum frames (yangblast-corpus(5), FILE LAYOUT) ---- */

enum { FR_ZSTD, FR_CK, FR_SUMMARY };

typedef struct {
    size_t off, len;
    int kind;
} frame;

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Splits the file p[0..n) into its frames (at most max): zstd frames,
 * checksum frames (magic 0x184D2A5C, 8 bytes "YBCK" + CRC) and the
 * summary's frame; anything else fails.  Returns how many. */
static size_t walk_frames(const uint8_t *p, size_t n, frame *f, size_t max)
{
    size_t k = 0;
    for (size_t off = 0; off < n; k++) {
        assert_true(k < max);
        assert_true(n - off >= 8);
        uint32_t m = le32(p + off);
        f[k].off = off;
        if (m == ZSTD_MAGICNUMBER) {
            f[k].kind = FR_ZSTD;
            f[k].len = ZSTD_findFrameCompressedSize(p + off, n - off);
            assert_false(ZSTD_isError(f[k].len));
        } else if (m == 0x184D2A5Cu) {
            f[k].kind = FR_CK;
            f[k].len = 16;
            assert_int_equal(le32(p + off + 4), 8);
            assert_memory_equal(p + off + 8, "YBCK", 4);
        } else if (m == 0x184D2A5Bu) {
            f[k].kind = FR_SUMMARY;
            f[k].len = 8 + (size_t)le32(p + off + 4);
        } else {
            fail_msg("offset %zu: not a frame (magic %08x)", off, m);
        }
        assert_true(f[k].len <= n - off);
        off += f[k].len;
    }
    return k;
}

/* The CRC-32 of frame f of p, as its checksum frame holds it. */
static uint32_t frame_crc(const uint8_t *p, const frame *f)
{
    return (uint32_t)crc32_z(0, p + f->off, f->len);
}

/* Reads the corpus at path, which must hold in[0..n) exactly. */
static void expect_file(const char *path, const yb_request *in, size_t n)
{
    char err[512] = "";
    yb_corpus_reader *r = yb_corpus_reader_open(path, err, sizeof err);
    if (!r)
        fail_msg("%s", err);
    expect_rest(r, in, n);
}

/* Reading path must fail, naming it, with `want` in the message, and not
 * with `not` (NULL: anything else). */
static void expect_fail(const char *path, const char *want, const char *not)
{
    char err[512];
    uint64_t cnt;
    assert_int_equal(read_all(path, &cnt, err, sizeof err), -2);
    if (!strstr(err, path) || !strstr(err, want) || (not && strstr(err, not)))
        fail_msg("expected \"%s\"%s%s in: %s", want, not ? " without " : "", not ? not : "",
                 err);
}

/* Level 1 puts a checksum frame after each zstd frame of its blocks (the
 * CRC-32 of the frame's compressed bytes), none after the header's frame,
 * and other levels none at all.  A reader checks it instead of zstd's
 * checksum of the frame's output: a CRC byte flipped, or a byte of the
 * frame, fails naming the file and a record; zstd's checksum replaced by
 * garbage with the CRC made anew reads the same records (zstd's checksum
 * is not checked when ours is); a checksum frame whose tag is damaged is
 * not taken for one, and zstd's checksum applies (an intact frame reads,
 * a damaged one fails); a new header spliced before the records keeps
 * them; the checksum frame is found when it crosses the reader's input
 * chunk. */
static void test_checksum_frames(void **state)
{
    (void)state;
    enum { N = 30, MAXF = 64 };
    yb_request in[N];
    for (unsigned i = 0; i < N; i++)
        small_req(&in[i], i, 100000); /* 3 MB: three blocks */
    char a[1024], b[1024];
    snprintf(a, sizeof a, "%s", tpath("ck.ybc"));
    snprintf(b, sizeof b, "%s", tpath("ck-mod.ybc"));
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    h.level = 1;
    write_corpus(a, in, N, &h);
    expect_file(a, in, N);
    size_t n;
    uint8_t *full = slurp(a, &n);
    frame f[MAXF];
    size_t nf = walk_frames(full, n, f, MAXF);
    /* the header's frame, (zstd, checksum) for each of the blocks' two
     * frames, the summary */
    assert_int_equal(nf, 1 + 2 * 2 * 3 + 1);
    assert_int_equal(f[0].kind, FR_ZSTD);
    assert_int_equal(f[nf - 1].kind, FR_SUMMARY);
    for (size_t i = 1; i + 1 < nf; i += 2) {
        assert_int_equal(f[i].kind, FR_ZSTD);
        assert_int_equal(f[i + 1].kind, FR_CK);
        assert_true(le32(full + f[i + 1].off + 12) == frame_crc(full, &f[i]));
    }
    /* the zstd frames are what the writer made before checksum frames:
     * they decode to the same stream with them left out */
    uint8_t *bare = malloc(n);
    assert_non_null(bare);
    size_t bn = 0;
    for (size_t i = 0; i < nf; i++)
        if (f[i].kind != FR_CK) {
            memcpy(bare + bn, full + f[i].off, f[i].len);
            bn += f[i].len;
        }
    assert_int_equal(bn, n - 16 * 2 * 3);
    spit(b, bare, bn);
    expect_file(b, in, N);
    free(bare);

    /* other levels: none */
    for (unsigned lv = 3; lv <= 15; lv += 12) {
        h.level = lv;
        write_corpus(b, in, 12, &h);
        size_t m;
        uint8_t *o = slurp(b, &m);
        frame g[MAXF];
        size_t ng = walk_frames(o, m, g, MAXF);
        assert_int_equal(ng, 3); /* header, records, summary */
        assert_int_equal(g[1].kind, FR_ZSTD);
        free(o);
    }

    uint8_t *mod = malloc(n);
    assert_non_null(mod);
    const frame *last = &f[nf - 3], *first = &f[1];
    /* a CRC byte flipped: in the first block (record 0), in the last (the
     * records of the blocks before read) */
    memcpy(mod, full, n);
    mod[f[2].off + 12] ^= 0x01;
    spit(b, mod, n);
    expect_fail(b, ": record 0: corrupt compressed data (block checksum mismatch)", NULL);
    memcpy(mod, full, n);
    mod[f[nf - 2].off + 15] ^= 0x80;
    spit(b, mod, n);
    char err[512];
    uint64_t cnt;
    assert_int_equal(read_all(b, &cnt, err, sizeof err), -2);
    assert_true(cnt >= 2 * N / 3 - 1 && cnt < N);
    char want[128];
    snprintf(want, sizeof want, ": record %llu: corrupt compressed data (block checksum mismatch)",
             (unsigned long long)cnt);
    expect_fail(b, want, NULL);
    /* a byte of a frame flipped */
    memcpy(mod, full, n);
    mod[first->off + first->len / 2] ^= 0x10;
    spit(b, mod, n);
    expect_fail(b, "(block checksum mismatch)", NULL);
    memcpy(mod, full, n);
    mod[last->off + 3 * last->len / 4] ^= 0x04;
    spit(b, mod, n);
    expect_fail(b, "(block checksum mismatch)", NULL);

    /* zstd's checksum (each frame's last 4 bytes) garbage, the CRCs made
     * anew: the same records, zstd's checksum not checked */
    memcpy(mod, full, n);
    for (size_t i = 1; i + 1 < nf; i += 2) {
        for (size_t j = f[i].off + f[i].len - 4; j < f[i].off + f[i].len; j++)
            mod[j] ^= 0xa5;
        put32(mod + f[i + 1].off + 12, frame_crc(mod, &f[i]));
    }
    spit(b, mod, n);
    expect_file(b, in, N);
    /* ... not made anew: ours fails */
    memcpy(mod + f[nf - 2].off, full + f[nf - 2].off, 16);
    spit(b, mod, n);
    expect_fail(b, "(block checksum mismatch)", NULL);

    /* the tag damaged: not a checksum frame, zstd's checksum applies */
    const char *zck = ZSTD_getErrorString(ZSTD_error_checksum_wrong);
    for (size_t i = 1; i + 1 < nf; i += 2) {
        memcpy(mod, full, n);
        mod[f[i + 1].off + 8 + i % 4] ^= 0x20;
        spit(b, mod, n);
        expect_file(b, in, N); /* the frame intact */
        for (size_t j = f[i].off + f[i].len - 4; j < f[i].off + f[i].len; j++)
            mod[j] ^= 0xa5;
        put32(mod + f[i + 1].off + 12, frame_crc(mod, &f[i]));
        spit(b, mod, n);
        expect_fail(b, zck, "block checksum"); /* its checksum garbage */
    }

    /* a new header before the records: they are copied with their
     * checksum frames, and read */
    char c[1024];
    snprintf(c, sizeof c, "%s", tpath("ck-spliced.ybc"));
    yb_corpus_header nh;
    yb_corpus_header_init(&nh);
    nh.level = 1;
    nh.producer = (char *)"spliced";
    yb_corpus_writer *w = yb_corpus_writer_open(c, &nh, err, sizeof err);
    assert_non_null(w);
    if (yb_corpus_writer_splice(w, a, err, sizeof err) < 0 ||
        yb_corpus_writer_close(w, err, sizeof err) < 0)
        fail_msg("splice: %s", err);
    size_t sn;
    uint8_t *sp = slurp(c, &sn);
    frame g[MAXF];
    assert_int_equal(walk_frames(sp, sn, g, MAXF), nf);
    assert_true(sn - g[1].off == n - f[1].off);
    assert_memory_equal(sp + g[1].off, full + f[1].off, n - f[1].off);
    free(sp);
    expect_file(c, in, N);
    free(mod);
    free(full);
    for (unsigned i = 0; i < N; i++)
        yb_request_cleanup(&in[i]);

    /* The reader takes 128 KiB of input at first: a skippable frame of
     * its own after the header's frame puts the end of the first block's
     * zstd frame at 128 KiB - j, its checksum frame across the chunk's
     * end (1 <= j <= 15), right after it (0) or inside (16..), the frame
     * across it (< 0).  zstd's checksum garbage in every frame, so the
     * records read back only when each checksum frame was found. */
    enum { M = 40, CHUNK = 128 * 1024 };
    yb_request sm[M];
    for (unsigned i = 0; i < M; i++)
        small_req(&sm[i], i, 300);
    h.level = 1;
    write_corpus(a, sm, M, &h);
    full = slurp(a, &n);
    nf = walk_frames(full, n, f, MAXF);
    assert_int_equal(nf, 1 + 2 * 2 + 1);
    for (size_t i = 1; i + 1 < nf; i += 2) {
        for (size_t j = f[i].off + f[i].len - 4; j < f[i].off + f[i].len; j++)
            full[j] ^= 0xa5;
        put32(full + f[i + 1].off + 12, frame_crc(full, &f[i]));
    }
    mod = malloc(n + CHUNK);
    assert_non_null(mod);
    for (int j = -4; j <= 20; j++) {
        size_t pad = CHUNK - (size_t)j - f[1].off - 8 - f[1].len; /* the skippable's content */
        assert_true(pad < CHUNK);
        memcpy(mod, full, f[1].off);
        put32(mod + f[1].off, 0x184D2A50u);
        put32(mod + f[1].off + 4, (uint32_t)pad);
        memset(mod + f[1].off + 8, 0x5a, pad);
        memcpy(mod + f[1].off + 8 + pad, full + f[1].off, n - f[1].off);
        assert_int_equal(f[1].off + 8 + pad + f[1].len, CHUNK - j);
        spit(b, mod, n + 8 + pad);
        expect_file(b, sm, M);
    }
    free(mod);
    free(full);
    for (unsigned i = 0; i < M; i++)
        yb_request_cleanup(&sm[i]);
}

/* Reads the one record of the corpus at path with the reader's own
 * decoder and with protobuf-c only; both must give the same record, or
 * fail with the same message.  Returns 1 when they read a record. */
static int same_both_ways(const char *path, int drop)
{
    char ea[512] = "", eb[512] = "";
    yb_corpus_reader *a = yb_corpus_reader_open(path, ea, sizeof ea);
    yb_corpus_reader *b = yb_corpus_reader_open(path, eb, sizeof eb);
    if (!a || !b)
        fail_msg("open: %s / %s", ea, eb);
    yb_corpus_reader_protobuf_only(b);
    if (drop) {
        yb_corpus_reader_drop_redacted(a);
        yb_corpus_reader_drop_redacted(b);
    }
    const yb_request *qa, *qb;
    int ra = yb_corpus_reader_next(a, &qa, ea, sizeof ea);
    int rb = yb_corpus_reader_next(b, &qb, eb, sizeof eb);
    if (ra != rb || (ra < 0 && strcmp(ea, eb)))
        fail_msg("own decoder %d (%s), protobuf-c %d (%s)", ra, ra < 0 ? ea : "",
                 rb, rb < 0 ? eb : "");
    if (ra == 1 && !yb_request_equal(qa, qb))
        fail_msg("the two decoders read different records");
    int got = ra == 1;
    if (ra == 1) {
        ra = yb_corpus_reader_next(a, &qa, ea, sizeof ea);
        rb = yb_corpus_reader_next(b, &qb, eb, sizeof eb);
        assert_int_equal(ra, 0);
        assert_int_equal(rb, 0);
    }
    yb_corpus_reader_close(a);
    yb_corpus_reader_close(b);
    return got;
}

/* The reader decodes request entries itself, pointing into their bytes,
 * and leaves every other entry to protobuf-c: the two must read the same
 * record, or refuse the same entry, for any bytes.  A request with every
 * field set, mutated: bytes flipped, fields added (known and unknown
 * numbers, every wire type), fields given twice, lengths changed, the
 * Entry around it broken. */
static void test_fast_view_differential(void **state)
{
    (void)state;
    Yangblast__HeaderField h1 = YANGBLAST__HEADER_FIELD__INIT, h2 = h1, h3 = h1, *hs[3];
    h1.name = (char *)"content-type";
    h1.value.data = (uint8_t *)"application/yang-data+json";
    h1.value.len = 26;
    h2.name = (char *)"authorization";
    h2.value.data = (uint8_t *)YB_CORPUS_REDACTED;
    h2.value.len = sizeof YB_CORPUS_REDACTED - 1;
    h3.name = (char *)"x-empty";
    hs[0] = &h1, hs[1] = &h2, hs[2] = &h3;
    uint32_t acc[2] = {200, 204}, accg[2] = {0, 5};
    uint8_t body[300];
    for (size_t i = 0; i < sizeof body; i++)
        body[i] = (uint8_t)("{\"a\": 12, \"b\": [3, 45]}\n"[i % 24]);
    Yangblast__Request q = YANGBLAST__REQUEST__INIT;
    q.protocol = YANGBLAST__PROTOCOL__PROTOCOL_RESTCONF;
    q.method = (char *)"PATCH";
    q.scheme = (char *)"https";
    q.authority = (char *)"sw1:443";
    q.path = (char *)"/restconf/data/x";
    q.n_headers = 3;
    q.headers = hs;
    q.body.data = body;
    q.body.len = sizeof body;
    q.timestamp_ns = 123456789012ull;
    q.conn_id = 7;
    q.conn_order = 3;
    q.expected_status = 204;
    q.expected_grpc_status = 4;
    q.templated = 1;
    q.n_accept_status = 2;
    q.accept_status = acc;
    q.n_accept_grpc_status = 2;
    q.accept_grpc_status = accg;
    size_t rn = protobuf_c_message_get_packed_size(&q.base);
    uint8_t *req = malloc(rn);
    assert_non_null(req);
    assert_int_equal(protobuf_c_message_pack(&q.base, req), rn);

    const char *p = tpath("differential.ybc");
    unsigned read_ok = 0;
    /* fields to add: known ones (again, or with another wire type),
     * unknown ones of every wire type, tags protobuf-c refuses or that
     * are not canonical */
    static const struct {
        const char *b;
        size_t n;
    } extra[] = {
        {"\x08\x02", 2}, {"\x40\x07", 2}, {"\x68\x00", 2}, {"\x70\xc8\x01", 3},
        {"\x80\x01\x05", 3}, {"\x88\x01\x01", 3}, {"\x7a\x01\x05", 3}, {"\x72\x00", 2},
        {"\x3a\x00", 2}, {"\x32\x00", 2}, {"\x32\x04\x0a\x00\x0a\x00", 6},
        {"\x32\x03\x18\x01\x00", 5}, {"\x90\x01\x01", 3}, {"\x98\x01\x2a", 3},
        {"\xa2\x01\x00", 3}, {"\x99\x01" "12345678", 10}, {"\x9d\x01" "1234", 6},
        {"\x9b\x01", 2}, {"\x9c\x01", 2}, {"\x80\x00\x01", 3}, {"\x00", 1},
        {"\xff\xff\x03\x00", 4}, {"\x10\x01", 2}, {"\x60\xff\xff\xff\xff\x0f", 6},
        {"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11},
        {"\x68\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 11},
    };
    uint8_t *m = malloc(rn + 64);
    assert_non_null(m);
    for (unsigned k = 0; k < 2500; k++) {
        memcpy(m, req, rn);
        size_t mn = rn;
        unsigned how = k < 2 ? 0 : (unsigned)(rnd() % 5);
        if (how == 1 || how == 4) /* flipped bytes */
            for (unsigned j = 1 + (unsigned)(rnd() % 3); j; j--)
                m[rnd() % mn] ^= (uint8_t)(1u << (rnd() % 8));
        if (how == 2) { /* a field added, at the end or at the start */
            size_t x = rnd() % (sizeof extra / sizeof extra[0]);
            if (rnd() % 2) {
                memcpy(m + mn, extra[x].b, extra[x].n);
            } else {
                memmove(m + extra[x].n, m, mn);
                memcpy(m, extra[x].b, extra[x].n);
            }
            mn += extra[x].n;
        }
        if (how == 3) { /* a slice of the message repeated at its end */
            size_t a = rnd() % mn, l = 1 + rnd() % 24;
            if (l > mn - a)
                l = mn - a;
            if (l > 64 - 1)
                l = 63;
            memmove(m + mn, m + a, l);
            mn += l;
        }
        if (how == 4 && mn > 4) /* cut short */
            mn -= 1 + rnd() % 4;
        buf b = {0};
        buf_magic(&b);
        buf_header_entry(&b, 1);
        buf e = {0};
        uint8_t tag = k % 13 == 12 ? 0x1a : 0x12; /* sometimes not a request */
        buf_put(&e, &tag, 1);
        buf_varint(&e, mn + (k % 17 == 16)); /* sometimes a wrong length */
        buf_put(&e, m, mn);
        if (k % 19 == 18) { /* the Entry's field given twice */
            buf_put(&e, &tag, 1);
            buf_varint(&e, 0);
        }
        buf_varint(&b, e.n);
        buf_put(&b, e.p, e.n);
        free(e.p);
        buf_trailer_entry(&b, 1);
        buf_write_zstd(&b, p);
        read_ok += (unsigned)same_both_ways(p, k % 2);
    }
    /* both ways read the unmutated record, and many of the others */
    assert_true(read_ok > 500);
    free(m);
    free(req);

    /* requests of random values, packed by protobuf-c: numbers of every
     * size (a negative enum or int32 takes ten bytes), strings and bodies
     * of random bytes, up to 18 accepted statuses */
    unsigned valid = 0;
    for (unsigned k = 0; k < 600; k++) {
        Yangblast__Request r = YANGBLAST__REQUEST__INIT;
        /* most of them with strings and checked numbers in the ranges a
         * record must keep (else both refuse it, saying the same), the
         * numbers no check reads of any size */
        int sane = k % 4 != 3, wild = k % 2;
        r.protocol = (Yangblast__Protocol)(wild ? (uint32_t)rnd() : rnd() % 5);
        char str[4][12];
        for (int j = 0; j < 4; j++) {
            size_t l = (size_t)sane + rnd() % (sizeof str[j] - 1);
            for (size_t c = 0; c < l; c++)
                str[j][c] = sane ? (char)('a' + rnd() % 26) : (char)(1 + rnd() % 255);
            str[j][l] = 0;
        }
        if (sane)
            str[3][0] = '/';
        r.method = str[0], r.scheme = str[1], r.authority = str[2], r.path = str[3];
        Yangblast__HeaderField hf[4], *hp[4];
        char hn[4][8];
        uint8_t hv[4][8];
        r.n_headers = rnd() % 5;
        for (size_t j = 0; j < r.n_headers; j++) {
            yangblast__header_field__init(&hf[j]);
            snprintf(hn[j], sizeof hn[j], "x-%u", (unsigned)(rnd() % 1000));
            hf[j].name = hn[j];
            fill_random(hv[j], sizeof hv[j]);
            for (size_t c = 0; sane && c < sizeof hv[j]; c++)
                hv[j][c] = (uint8_t)('a' + hv[j][c] % 26);
            hf[j].value.data = hv[j];
            hf[j].value.len = rnd() % (sizeof hv[j] + 1);
            hp[j] = &hf[j];
        }
        r.headers = hp;
        uint8_t bd[200];
        fill_random(bd, sizeof bd);
        r.body.data = bd;
        r.body.len = rnd() % (sizeof bd + 1);
        r.timestamp_ns = rnd() >> (rnd() % 64);
        r.conn_id = rnd() >> (rnd() % 64);
        r.conn_order = (uint32_t)(rnd() >> (rnd() % 64));
        r.expected_status = sane ? (uint32_t)(100 + rnd() % 900) : (uint32_t)rnd();
        r.expected_grpc_status = wild ? (int32_t)(uint32_t)rnd() : (int32_t)(rnd() % 18);
        r.templated = rnd() % 2;
        r.chain = sane ? 0 : (uint32_t)(rnd() >> (rnd() % 64));
        uint32_t as[18], ag[18];
        r.n_accept_status = rnd() % (sane ? 17 : 19);
        r.n_accept_grpc_status = rnd() % (sane ? 17 : 19);
        for (int j = 0; j < 18; j++) {
            as[j] = sane ? (uint32_t)(100 + rnd() % 900) : (uint32_t)(rnd() >> (rnd() % 64));
            ag[j] = sane ? (uint32_t)(rnd() % 17) : (uint32_t)(rnd() >> (rnd() % 64));
        }
        r.accept_status = as;
        r.accept_grpc_status = ag;
        /* a field protobuf-c would not pack so (a bool of 2, varints
         * longer than needed or wider than the field), when absent */
        static const struct {
            const char *b;
            size_t n;
        } odd[] = {
            {"\x68\x02", 2}, {"\x68\x80\x01", 3}, {"\x68\x80\x00", 3},
            {"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11},
            {"\x50\x80\x80\x80\x80\x10", 6}, {"\x50\xff\xff\xff\xff\x7f", 6},
            {"\x48\x81\x80\x80\x80\x80\x80\x80\x80\x80\x01", 11},
            {"\x60\xfe\xff\xff\xff\x0f", 6}, {"\x60\x81\x80\x80\x80\x10", 6},
            {"\x80\x01\x82\x80\x80\x80\x10", 7},
        };
        size_t x = rnd() % (sizeof odd / sizeof odd[0]);
        if (k % 3 == 1) { /* (absent: not packed) */
            r.protocol = 0;
            r.templated = 0;
            r.conn_id = 0;
            r.conn_order = 0;
            r.expected_grpc_status = 0;
            r.chain = 0;
        }
        size_t qn = protobuf_c_message_get_packed_size(&r.base);
        uint8_t *qb = malloc(qn + 16);
        assert_non_null(qb);
        assert_int_equal(protobuf_c_message_pack(&r.base, qb), qn);
        if (k % 3 == 1) {
            memcpy(qb + qn, odd[x].b, odd[x].n);
            qn += odd[x].n;
        }
        buf b = {0};
        buf_magic(&b);
        buf_header_entry(&b, 1);
        buf_varint(&b, qn + 2 + (qn > 127) + (qn > 16383)); /* tag, length, request */
        buf_put(&b, "\x12", 1);
        buf_varint(&b, qn);
        buf_put(&b, qb, qn);
        free(qb);
        buf_trailer_entry(&b, 1);
        buf_write_zstd(&b, p);
        valid += (unsigned)same_both_ways(p, k % 3 == 0);
    }
    assert_true(valid > 200);
}

/* The format-2 split of b[0..n) (yangblast-corpus(5), DIGITS APART),
 * into malloc'd *skel and *dig. */
static void split_ref(const uint8_t *b, size_t n, uint8_t **skel, size_t *sn, uint8_t **dig,
                      size_t *dn)
{
    *skel = malloc(n + 1);
    *dig = malloc(2 * n + 1);
    assert_non_null(*skel);
    assert_non_null(*dig);
    size_t s = 0, d = 0;
    for (size_t i = 0; i < n;) {
        if (b[i] < '0' || b[i] > '9') {
            (*skel)[s++] = b[i++];
            continue;
        }
        (*skel)[s++] = '0';
        while (i < n && b[i] >= '0' && b[i] <= '9')
            (*dig)[d++] = b[i++];
        (*dig)[d++] = ',';
    }
    *sn = s;
    *dn = d;
}

/* Puts digits into the body of r (request i): runs of them, and at its
 * ends. */
static void sow_digits(yb_request *r, unsigned i)
{
    for (size_t j = 0; j < r->body_len; j++)
        if ((j / 3 + i) % 4 == 0 || j == 0 || j + 1 == r->body_len)
            r->body[j] = (uint8_t)('0' + (i + j) % 10);
}

/* Returns 1 when files a and b hold the same bytes, else 0. */
static int same_bytes(const char *a, const char *b)
{
    size_t la, lb;
    uint8_t *xa = slurp(a, &la), *xb = slurp(b, &lb);
    int same = la == lb && !memcmp(xa, xb, la);
    free(xa);
    free(xb);
    return same;
}

/* Adds reqs[i] to block b, or to w when b is NULL: through _add_split
 * (its body split by split_ref) when split and i is even and it has a
 * body. */
static void add_one(yb_corpus_writer *w, yb_corpus_block *b, yb_request *reqs, size_t i,
                    int split)
{
    if (!split || i % 2 || !reqs[i].body_len) {
        assert_int_equal(b ? yb_corpus_block_add(b, &reqs[i]) : yb_corpus_writer_add(w, &reqs[i]),
                         0);
        return;
    }
    uint8_t *skel, *dig;
    size_t sn, dn;
    split_ref(reqs[i].body, reqs[i].body_len, &skel, &sn, &dig, &dn);
    yb_request r = reqs[i];
    r.body = NULL; /* (not read) */
    assert_int_equal(b ? yb_corpus_block_add_split(b, &r, skel, sn, dig, dn)
                       : yb_corpus_writer_add_split(w, &r, skel, sn, dig, dn),
                     0);
    free(skel);
    free(dig);
}

/* Opens path at `level`, created at 1 ns (files comparable byte for
 * byte). */
static yb_corpus_writer *open_at_level(const char *path, unsigned level)
{
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    h.created_unix_ns = 1;
    h.level = level;
    char err[512] = "";
    yb_corpus_writer *w = yb_corpus_writer_open(path, &h, err, sizeof err);
    if (!w)
        fail_msg("writer_open: %s", err);
    return w;
}

/* Closes w, which must succeed. */
static void close_ok(yb_corpus_writer *w)
{
    char err[512] = "";
    if (yb_corpus_writer_close(w, err, sizeof err) != 0)
        fail_msg("writer_close: %s", err);
}

/* Writes reqs at `level`, every second record (with a body) through
 * yb_corpus_writer_add_split. */
static void write_split(const char *path, yb_request *reqs, size_t n, unsigned level, int split)
{
    yb_corpus_writer *w = open_at_level(path, level);
    for (size_t i = 0; i < n; i++)
        add_one(w, NULL, reqs, i, split);
    assert_int_equal(yb_corpus_writer_count(w), n);
    close_ok(w);
}

/* Adds reqs[from..to) to block b, every other one split, and seals it. */
static void fill_block(yb_corpus_block *b, yb_request *reqs, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        add_one(NULL, b, reqs, i, 1);
    assert_int_equal(yb_corpus_block_count(b), to - from);
    assert_int_equal(yb_corpus_block_seal(b), 0);
}

/* Writes reqs: the first `lead` through the writer itself, then blocks
 * of `per` records filled in turn in two block objects (swapped: which
 * object made a block must not matter). */
static void write_blocks(const char *path, yb_request *reqs, size_t n, size_t lead, size_t per,
                         int swap)
{
    yb_corpus_writer *w = open_at_level(path, 1);
    yb_corpus_block *b[2] = {yb_corpus_block_new(), yb_corpus_block_new()};
    assert_non_null(b[0]);
    assert_non_null(b[1]);
    for (size_t i = 0; i < lead; i++)
        assert_int_equal(yb_corpus_writer_add(w, &reqs[i]), 0);
    for (size_t i = lead, j = 0; i < n; i += per, j++) {
        yb_corpus_block *x = b[(j + (unsigned)swap) % 2];
        fill_block(x, reqs, i, i + per < n ? i + per : n);
        assert_int_equal(yb_corpus_writer_add_block(w, x), 0);
        assert_int_equal(yb_corpus_block_count(x), 0);
    }
    assert_int_equal(yb_corpus_writer_count(w), n);
    yb_corpus_block_free(b[0]);
    yb_corpus_block_free(b[1]);
    close_ok(w);
}

/* Blocks made apart (yb_corpus_block): the records read back as added,
 * after records the writer took itself, in blocks of any size (one
 * record, ones past 1 MiB), with the summary the writer would have made
 * of them (chains across blocks included); the same blocks make the
 * same file whichever block object made each; blocks ended when full and
 * the last adopted make the writer's own file, byte for byte.  A block
 * not sealed (or sealed, for adopt), a writer not at level 1 and a
 * record the writer would refuse poison. */
static void test_blocks(void **state)
{
    (void)state;
    enum { N = 240 };
    yb_request *in = calloc(N, sizeof *in);
    assert_non_null(in);
    for (unsigned i = 0; i < N; i++) {
        size_t len = i % 9 == 0 ? 48 + i % 10 : i % 7 == 0 ? 1 : 9000 + 997 * i;
        small_req(&in[i], i, len);
        sow_digits(&in[i], i);
        in[i].chain = i % 6 == 0 ? 3 : 0;
        in[i].templated = i % 5 == 0;
    }
    char a[1024], b1[1024], b2[1024], err[512];
    snprintf(a, sizeof a, "%s", tpath("by-writer.ybc"));
    snprintf(b1, sizeof b1, "%s", tpath("blocks1.ybc"));
    snprintf(b2, sizeof b2, "%s", tpath("blocks2.ybc"));
    write_split(a, in, N, 1, 1);
    static const size_t PER[] = {1, 17, 150};
    for (size_t k = 0; k < sizeof PER / sizeof PER[0]; k++) {
        write_blocks(b1, in, N, k == 1 ? 11 : 0, PER[k], 0);
        write_blocks(b2, in, N, k == 1 ? 11 : 0, PER[k], 1);
        if (!same_bytes(b1, b2))
            fail_msg("%zu a block: the files differ", PER[k]);
        yb_corpus_reader *ra = yb_corpus_reader_open(a, err, sizeof err);
        yb_corpus_reader *rb = yb_corpus_reader_open(b1, err, sizeof err);
        if (!ra || !rb)
            fail_msg("%s", err);
        const yb_corpus_summary *sa = yb_corpus_reader_summary(ra),
                                *sb = yb_corpus_reader_summary(rb);
        assert_non_null(sa);
        assert_non_null(sb);
        for (unsigned p = 0; p <= YB_PROTO_HTTP2; p++)
            assert_int_equal(sa->count[p], sb->count[p]);
        assert_int_equal(sa->first, sb->first);
        assert_int_equal(sa->templated, sb->templated);
        assert_int_equal(sa->templated, N / 5);
        assert_int_equal(sa->chains_whole, sb->chains_whole);
        assert_int_equal(sa->units, sb->units);
        yb_corpus_reader_close(ra);
        expect_rest(rb, in, N);
    }

    /* blocks ended where the writer ends its own (yb_corpus_block_full),
     * the last adopted: the writer's file, byte for byte */
    {
        yb_corpus_writer *w = open_at_level(b1, 1);
        yb_corpus_block *x = yb_corpus_block_new();
        assert_non_null(x);
        size_t i = 0, blocks = 0;
        while (i < N) {
            size_t from = i;
            for (; i < N && !yb_corpus_block_full(x); i++)
                add_one(NULL, x, in, i, 1);
            assert_int_equal(yb_corpus_block_count(x), i - from);
            if (yb_corpus_block_full(x)) {
                assert_int_equal(yb_corpus_block_seal(x), 0);
                assert_int_equal(yb_corpus_writer_add_block(w, x), 0);
                blocks++;
            } else {
                assert_int_equal(yb_corpus_writer_adopt(w, x), 0);
            }
        }
        assert_true(blocks >= 2);
        assert_int_equal(yb_corpus_writer_count(w), N);
        yb_corpus_block_free(x);
        close_ok(w);
        if (!same_bytes(a, b1))
            fail_msg("blocks ended where the writer ends them: the files differ");
    }

    yb_corpus_header h;
    yb_corpus_header_init(&h);
    h.level = 1;
    yb_corpus_block *b = yb_corpus_block_new();
    assert_non_null(b);
    /* a sealed block is not adopted */
    yb_corpus_writer *w = yb_corpus_writer_open(tpath("bad.ybc"), &h, err, sizeof err);
    assert_non_null(w);
    assert_int_equal(yb_corpus_block_add(b, &in[1]), 0);
    assert_int_equal(yb_corpus_block_seal(b), 0);
    assert_int_equal(yb_corpus_writer_adopt(w, b), -EINVAL);
    assert_true(yb_corpus_writer_close(w, err, sizeof err) < 0);
    yb_corpus_block_clear(b);
    /* not sealed */
    w = yb_corpus_writer_open(tpath("bad.ybc"), &h, err, sizeof err);
    assert_non_null(w);
    assert_int_equal(yb_corpus_block_add(b, &in[1]), 0);
    assert_int_equal(yb_corpus_writer_add_block(w, b), -EINVAL);
    assert_int_equal(yb_corpus_writer_add(w, &in[0]), -EINVAL);
    assert_true(yb_corpus_writer_close(w, err, sizeof err) < 0);
    /* a writer at level 3 */
    assert_int_equal(yb_corpus_block_seal(b), 0);
    assert_int_equal(yb_corpus_block_seal(b), -EINVAL); /* (twice: poisoned) */
    yb_corpus_block_free(b);
    b = yb_corpus_block_new();
    assert_non_null(b);
    assert_int_equal(yb_corpus_block_add(b, &in[1]), 0);
    assert_int_equal(yb_corpus_block_seal(b), 0);
    h.level = 3;
    w = yb_corpus_writer_open(tpath("bad.ybc"), &h, err, sizeof err);
    assert_non_null(w);
    assert_int_equal(yb_corpus_writer_add_block(w, b), -EINVAL);
    assert_true(yb_corpus_writer_close(w, err, sizeof err) < 0);
    yb_corpus_block_free(b);
    /* a record refused (a method with a space), parts that do not fit */
    h.level = 1;
    yb_request bad = in[2];
    bad.method = (char *)"GE T";
    for (int c = 0; c < 2; c++) {
        b = yb_corpus_block_new();
        assert_non_null(b);
        yb_request r = in[4];
        r.body = NULL;
        r.body_len = 5;
        assert_int_equal(c ? yb_corpus_block_add_split(b, &r, (const uint8_t *)"a0b", 3,
                                                       (const uint8_t *)"1,2,", 4)
                           : yb_corpus_block_add(b, &bad),
                         -EINVAL);
        assert_int_equal(yb_corpus_block_add(b, &in[1]), -EINVAL);
        assert_int_equal(yb_corpus_block_seal(b), -EINVAL);
        w = yb_corpus_writer_open(tpath("bad.ybc"), &h, err, sizeof err);
        assert_non_null(w);
        assert_int_equal(yb_corpus_writer_add_block(w, b), -EINVAL);
        assert_true(yb_corpus_writer_close(w, err, sizeof err) < 0);
        yb_corpus_block_free(b);
    }
    assert_int_equal(access(tpath("bad.ybc"), F_OK), -1);
    for (unsigned i = 0; i < N; i++)
        yb_request_cleanup(&in[i]);
    free(in);
}

/* yb_corpus_split makes the parts split_ref makes (runs of digits at the
 * ends, in the middle, all digits, none, one byte); yb_corpus_writer_splits
 * says which levels keep them (format 2: 1, and 10 and above). */
static void test_split_api(void **state)
{
    (void)state;
    for (unsigned i = 0; i < 60; i++) {
        yb_request r;
        size_t len = i % 5 == 0 ? 1 + i % 3 : 40 + 97 * i;
        small_req(&r, i, len);
        sow_digits(&r, i);
        if (i % 11 == 0)
            memset(r.body, '7', r.body_len);
        if (i % 13 == 0)
            memset(r.body, 'x', r.body_len);
        uint8_t *ws, *wd, *s = malloc(len + 1), *d = malloc(2 * len + 1);
        size_t wsn, wdn, sn = 99, dn = 99;
        assert_non_null(s);
        assert_non_null(d);
        split_ref(r.body, r.body_len, &ws, &wsn, &wd, &wdn);
        yb_corpus_split(r.body, r.body_len, s, &sn, d, &dn);
        assert_int_equal(sn, wsn);
        assert_int_equal(dn, wdn);
        assert_memory_equal(s, ws, sn);
        if (dn)
            assert_memory_equal(d, wd, dn);
        free(s);
        free(d);
        free(ws);
        free(wd);
        yb_request_cleanup(&r);
    }
    static const struct {
        unsigned level;
        int splits;
    } L[] = {{1, 1}, {3, 0}, {9, 0}, {10, 1}, {19, 1}};
    for (size_t i = 0; i < sizeof L / sizeof L[0]; i++) {
        yb_corpus_writer *w = open_at_level(tpath("lv.ybc"), L[i].level);
        assert_int_equal(yb_corpus_writer_splits(w), L[i].splits);
        close_ok(w);
    }
}

/* yb_corpus_writer_add_split: at level 1 (frames), 3 (format 1: joined)
 * and 15 (one stream), the file is byte for byte the one
 * yb_corpus_writer_add makes of the same records, and they read back;
 * runs of digits that go on across an entry's bytes and its body (a
 * body length whose varint is a digit, bodies starting and ending with
 * digits, all digits) and across entries included.  Parts that do not
 * make the body's length poison the writer. */
static void test_add_split(void **state)
{
    (void)state;
    enum { N = 300 };
    yb_request *in = calloc(N, sizeof *in);
    assert_non_null(in);
    for (unsigned i = 0; i < N; i++) {
        /* lengths 48..57 are one varint byte '0'..'9' */
        size_t len = i % 5 == 0 ? 48 + i % 10 : i % 7 == 0 ? 1 : 9000 + 37 * i;
        small_req(&in[i], i, len);
        sow_digits(&in[i], i); /* digits, others, runs */
        if (i % 11 == 0) /* all digits */
            memset(in[i].body, '7', in[i].body_len);
        char path[32];
        snprintf(path, sizeof path, "/a/%u", i * 7u);
        assert_int_equal(yb_request_set_str(&in[i].path, path), 0);
    }
    static const unsigned LEVELS[] = {1, 3, 15};
    for (int l = 0; l < 3; l++) {
        char a[1024], b[1024], err[512];
        snprintf(a, sizeof a, "%s", tpath("whole.ybc"));
        snprintf(b, sizeof b, "%s", tpath("parts.ybc"));
        write_split(a, in, N, LEVELS[l], 0);
        write_split(b, in, N, LEVELS[l], 1);
        size_t la, lb;
        uint8_t *ba = slurp(a, &la), *bb = slurp(b, &lb);
        if (la != lb || memcmp(ba, bb, la))
            fail_msg("level %u: the files differ", LEVELS[l]);
        free(ba);
        free(bb);
        yb_corpus_reader *r = yb_corpus_reader_open(b, err, sizeof err);
        if (!r)
            fail_msg("%s", err);
        expect_rest(r, in, N);
    }
    /* parts that do not make the body: refused, the writer poisoned */
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    h.level = 1;
    char err[512];
    static const struct {
        const char *skel, *dig;
        size_t len;
    } BAD[] = {{"a0b", "12,", 5}, {"a0b", "12", 4}, {"ab", "", 0}, {"a0b", "1,2,", 6},
                 {"a00b", "12,", 5}, {"ab", "1,", 1}};
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        yb_corpus_writer *w = yb_corpus_writer_open(tpath("bad.ybc"), &h, err, sizeof err);
        assert_non_null(w);
        yb_request r = in[1];
        r.body = NULL;
        r.body_len = BAD[i].len;
        assert_int_equal(yb_corpus_writer_add_split(w, &r, (const uint8_t *)BAD[i].skel,
                                                    strlen(BAD[i].skel),
                                                    (const uint8_t *)BAD[i].dig,
                                                    strlen(BAD[i].dig)),
                         -EINVAL);
        assert_int_equal(yb_corpus_writer_add(w, &in[0]), -EINVAL);
        assert_true(yb_corpus_writer_close(w, err, sizeof err) < 0);
    }
    for (unsigned i = 0; i < N; i++)
        yb_request_cleanup(&in[i]);
    free(in);
}

/* Appends a format-2 block: the lengths of skel and dig, then both. */
static void buf_block(buf *b, const char *skel, size_t sn, const char *dig, size_t dn)
{
    buf_varint(b, sn);
    buf_varint(b, dn);
    buf_put(b, skel, sn);
    buf_put(b, dig, dn);
}

/* Hostile format-2 blocks: each a clear error naming the file and the
 * record, never a crash. */
static void test_split_hostile(void **state)
{
    (void)state;
    const char *p = tpath("hostile.ybc");
    /* a good block first: the entries of one request and the trailer */
    buf e = {0};
    buf_request_entry(&e, "/x/12/0");
    buf_trailer_entry(&e, 1);
    uint8_t skel[256], dig[256];
    size_t sn = 0, dn = 0;
    for (size_t i = 0; i < e.n;) { /* the writer's split, by hand */
        if (e.p[i] < '0' || e.p[i] > '9') {
            skel[sn++] = e.p[i++];
            continue;
        }
        skel[sn++] = '0';
        while (i < e.n && e.p[i] >= '0' && e.p[i] <= '9')
            dig[dn++] = e.p[i++];
        dig[dn++] = ',';
    }
    assert_true(dn > 0 && skel[0] != '0' && skel[1] != '0' && skel[2] != '0');
    buf b = {0};
    buf_magic(&b);
    buf_header_entry(&b, YB_CORPUS_FORMAT_SPLIT);
    buf_block(&b, (char *)skel, sn, (char *)dig, dn);
    buf_write_zstd(&b, p);
    uint64_t cnt;
    char err[512];
    if (read_all(p, &cnt, err, sizeof err) != 0)
        fail_msg("hand-built format 2: %s", err);
    assert_int_equal(cnt, 1);
    static const struct {
        int what;
        const char *needle;
    } cases[] = {
        {0, "digits do not fit"},     /* a digit run missing */
        {1, "digits do not fit"},     /* a digit run left over */
        {2, "digits do not fit"},     /* a run without its ',' */
        {3, "exceeds"},               /* a block length over the limit */
        {4, "crosses its end"},       /* an entry split over two blocks */
        {5, "ends inside a block"},   /* the stream ends inside a block */
        {6, "digits do not fit"},     /* an empty run */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        buf_magic(&b);
        buf_header_entry(&b, YB_CORPUS_FORMAT_SPLIT);
        switch (cases[c].what) {
        case 0:
            buf_varint(&b, sn + 1);
            buf_varint(&b, dn);
            buf_put(&b, skel, sn);
            buf_put(&b, "0", 1);
            buf_put(&b, dig, dn);
            break;
        case 1:
            buf_varint(&b, sn);
            buf_varint(&b, dn + 2);
            buf_put(&b, skel, sn);
            buf_put(&b, dig, dn);
            buf_put(&b, "7,", 2);
            break;
        case 2:
            buf_block(&b, (char *)skel, sn, (char *)dig, dn - 1);
            break;
        case 3:
            buf_varint(&b, 1ull << 32);
            buf_varint(&b, 1);
            break;
        case 4:
            buf_block(&b, (char *)skel, 3, "", 0);
            break;
        case 5:
            buf_varint(&b, sn);
            buf_varint(&b, dn);
            buf_put(&b, skel, sn / 2);
            break;
        case 6:
            buf_block(&b, "0", 1, ",", 1);
            break;
        }
        buf_write_zstd(&b, p);
        int rc = read_all(p, &cnt, err, sizeof err);
        if (rc != -2 || !strstr(err, cases[c].needle) || !strstr(err, p) ||
            !strstr(err, "record "))
            fail_msg("case %zu: rc %d: %s", c, rc, err);
    }
    free(e.p);
}

/* Joins skel[0..sn) and dig[0..dn) a byte at a time into out, up to the
 * first place they do not fit.  Returns 0 when they fit, -1 otherwise. */
static int ref_join(const uint8_t *skel, size_t sn, const uint8_t *dig, size_t dn, buf *out)
{
    size_t d = 0;
    for (size_t i = 0; i < sn; i++) {
        if (skel[i] != '0') {
            buf_put(out, &skel[i], 1);
            continue;
        }
        size_t k = d;
        while (k < dn && dig[k] >= '0' && dig[k] <= '9')
            k++;
        buf_put(out, dig + d, k - d);
        if (k == d || k == dn || dig[k] != ',')
            return -1;
        d = k + 1;
    }
    return d == dn ? 0 : -1;
}

/* Splits e[0..n) as the writer does: digit runs to dig, each after ','. */
static void ref_split(const uint8_t *e, size_t n, buf *skel, buf *dig)
{
    for (size_t i = 0; i < n;) {
        if (e[i] < '0' || e[i] > '9') {
            buf_put(skel, &e[i++], 1);
            continue;
        }
        buf_put(skel, "0", 1);
        while (i < n && e[i] >= '0' && e[i] <= '9')
            buf_put(dig, &e[i++], 1);
        buf_put(dig, ",", 1);
    }
}

/* A path (or body) of random length, dense in digit runs of 1..70 digits
 * (past the 16 and 32 bytes the join takes at a time). */
static void digits_text(char *out, size_t cap)
{
    size_t n = 1 + (size_t)rand() % (cap - 1), i = 0;
    out[i++] = '/';
    while (i < n - 1) {
        size_t run = 1 + (size_t)rand() % (rand() % 4 ? 12 : 70);
        for (size_t k = 0; k < run && i < n - 1; k++)
            out[i++] = (char)('0' + rand() % 10);
        if (i < n - 1)
            out[i++] = "/x.:-"[rand() % 5];
    }
    out[i] = 0;
}

/* Format 2's blocks are joined as their entries are read: the join stops
 * after each entry (and a little past it) and resumes there, also inside
 * a run of digits.  Records dense in runs of every length, of random
 * sizes so that the stops fall everywhere, read back as written (twice,
 * rewound); hand-built blocks mutated (skeleton and digit bytes changed),
 * read as a format-1 stream of what a byte-at-a-time join of the same
 * parts makes: the same records in the same order, and where the parts do
 * not fit, a failure with no record read past the place they stop
 * fitting. */
static void test_join_resumed(void **state)
{
    (void)state;
    srand(17);
    enum { N = 1500 };
    yb_request *in = calloc(N, sizeof *in);
    assert_non_null(in);
    char text[3000];
    for (unsigned i = 0; i < N; i++) {
        yb_request_init(&in[i]);
        in[i].protocol = YB_PROTO_RESTCONF;
        /* a method of digits (a token): a stop falls 17 bytes into each
         * entry, after its length, inside the method's run */
        char method[48];
        size_t ml = 1 + (size_t)rand() % 40;
        for (size_t k = 0; k < ml; k++)
            method[k] = (char)('0' + rand() % 10);
        method[ml] = 0;
        digits_text(text, 200);
        set_strs(&in[i], method, "http", "h:8080", text);
        digits_text(text, sizeof text);
        assert_int_equal(yb_request_set_body(&in[i], text, strlen(text)), 0);
        digits_text(text, 40);
        assert_int_equal(yb_request_add_header(&in[i], "x-n", text + 1, strlen(text + 1)), 0);
        in[i].timestamp_ns = (uint64_t)rand() * 977u; /* varints: digit bytes too */
        in[i].conn_id = (uint64_t)rand() % 60;
        in[i].expected_status = 200 + (unsigned)rand() % 9;
    }
    char a[1024], b[1024], err[512], err1[512];
    snprintf(a, sizeof a, "%s", tpath("resumed.ybc"));
    snprintf(b, sizeof b, "%s", tpath("resumed-ref.ybc"));
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    h.level = 1;
    write_corpus(a, in, N, &h);
    yb_corpus_reader *r = yb_corpus_reader_open(a, err, sizeof err);
    if (!r)
        fail_msg("%s", err);
    assert_int_equal(yb_corpus_reader_header(r)->format_version, YB_CORPUS_FORMAT_SPLIT);
    const yb_request *q, *q1;
    for (int round = 0; round < 2; round++) {
        for (unsigned i = 0; i < N; i++) {
            if (yb_corpus_reader_next(r, &q, err, sizeof err) != 1)
                fail_msg("round %d, record %u: %s", round, i, err);
            if (!yb_request_equal(q, &in[i]))
                fail_msg("round %d, record %u differs", round, i);
        }
        assert_int_equal(yb_corpus_reader_next(r, &q, err, sizeof err), 0);
        assert_int_equal(yb_corpus_reader_rewind(r, err, sizeof err), 0);
    }
    yb_corpus_reader_close(r);
    for (unsigned i = 0; i < N; i++)
        yb_request_cleanup(&in[i]);
    free(in);

    /* hand-built: 40 requests and the trailer in two blocks, mutated */
    buf e = {0}, sk = {0}, dg = {0};
    size_t cut = 0; /* the first block's entries end here */
    for (unsigned i = 0; i < 40; i++) {
        digits_text(text, 600);
        buf_request_entry(&e, text);
        if (i == 19)
            cut = e.n;
    }
    buf_trailer_entry(&e, 40);
    buf sk1 = {0}, dg1 = {0};
    ref_split(e.p, cut, &sk1, &dg1);
    ref_split(e.p + cut, e.n - cut, &sk, &dg);
    unsigned fits = 0, fails = 0;
    for (unsigned m = 0; m < 3000; m++) {
        buf s2 = {0}, d2 = {0};
        buf_put(&s2, sk.p, sk.n);
        buf_put(&d2, dg.p, dg.n);
        for (unsigned k = 0, nm = m ? 1 + (unsigned)rand() % 3 : 0; k < nm; k++) {
            buf *t = rand() % 2 ? &s2 : &d2;
            t->p[(size_t)rand() % t->n] = (uint8_t)"0123456789,0,a\x12"[rand() % 15];
        }
        buf f2 = {0}, f1 = {0}, joined = {0};
        buf_magic(&f2);
        buf_header_entry(&f2, YB_CORPUS_FORMAT_SPLIT);
        buf_block(&f2, (char *)sk1.p, sk1.n, (char *)dg1.p, dg1.n);
        buf_block(&f2, (char *)s2.p, s2.n, (char *)d2.p, d2.n);
        assert_int_equal(ref_join(sk1.p, sk1.n, dg1.p, dg1.n, &joined), 0);
        int ok = ref_join(s2.p, s2.n, d2.p, d2.n, &joined) == 0;
        buf_magic(&f1);
        buf_header_entry(&f1, YB_CORPUS_FORMAT_VERSION);
        buf_put(&f1, joined.p, joined.n);
        buf_write_zstd(&f2, a);
        buf_write_zstd(&f1, b);
        yb_corpus_reader *r2 = yb_corpus_reader_open(a, err, sizeof err);
        yb_corpus_reader *r1 = yb_corpus_reader_open(b, err1, sizeof err1);
        if (!r2 || !r1)
            fail_msg("mutation %u: open: %s / %s", m, err, err1);
        int rc2, rc1;
        unsigned got = 0;
        do {
            rc2 = yb_corpus_reader_next(r2, &q, err, sizeof err);
            rc1 = yb_corpus_reader_next(r1, &q1, err1, sizeof err1);
            if (rc2 == 1 && (rc1 != 1 || !yb_request_equal(q, q1)))
                fail_msg("mutation %u, record %u: read otherwise than the parts joined", m,
                         got);
            got += rc2 == 1;
        } while (rc2 == 1 && rc1 == 1);
        if (ok && rc2 != rc1)
            fail_msg("mutation %u: %d (%s) where the joined stream reads %d (%s)", m, rc2,
                     rc2 < 0 ? err : "", rc1, rc1 < 0 ? err1 : "");
        if (!ok && (rc2 != -1 || !strstr(err, a)))
            fail_msg("mutation %u: parts that do not fit read as %d (%s)", m, rc2, err);
        if (m == 0 && (!ok || rc2 != 0 || got != 40))
            fail_msg("the blocks unmutated: %d, %u records", rc2, got);
        fits += ok;
        fails += !ok;
        yb_corpus_reader_close(r2);
        yb_corpus_reader_close(r1);
        free(s2.p);
        free(d2.p);
        free(joined.p);
    }
    assert_true(fits > 100 && fails > 100);
    free(e.p);
    free(sk.p);
    free(dg.p);
    free(sk1.p);
    free(dg1.p);
}

/* A skeleton and its digits: parts of 0 to 200 bytes (any byte but
 * '0'), each before a marker and its run of 1 to 40 digits, at densities
 * that change along the block (long parts, parts of a byte or two, markers
 * side by side), the block ending after a part or right after a marker. */
static void fast_parts(buf *sk, buf *dg)
{
    static const char lit[] = "abcxyz./:-{}\"[] _,123456789";
    unsigned nparts = 1 + (unsigned)rand() % 400;
    unsigned mode = (unsigned)rand() % 4;
    for (unsigned k = 0; k < nparts; k++) {
        if (rand() % 50 == 0)
            mode = (unsigned)rand() % 4;
        size_t seg;
        switch (mode) {
        case 0: seg = 30 + (size_t)rand() % 171; break; /* long parts */
        case 1: seg = 1 + (size_t)rand() % 3; break;    /* "0.0.0.0/0" */
        case 2: seg = (size_t)rand() % 2; break;        /* markers side by side */
        default: seg = (size_t)rand() % 201; break;
        }
        for (size_t j = 0; j < seg; j++) {
            uint8_t c = (uint8_t)(rand() % 4 ? lit[rand() % (int)(sizeof lit - 1)] : rand());
            if (c == '0')
                c = 'o';
            buf_put(sk, &c, 1);
        }
        buf_put(sk, "0", 1);
        size_t run = rand() % 6 ? 1 + (size_t)rand() % 5 : 1 + (size_t)rand() % 40;
        for (size_t j = 0; j < run; j++) {
            char c = (char)('0' + rand() % 10);
            buf_put(dg, &c, 1);
        }
        buf_put(dg, ",", 1);
    }
    if (rand() % 3)
        for (size_t j = 0, n = (size_t)rand() % 100; j < n; j++)
            buf_put(sk, "q", 1);
}

/* The join far from the ends of its parts and of its room takes many runs
 * at a time (join_fast in corpus.c), near them one at a time: random
 * skeletons and digits, some spoilt (a byte of the digits changed, a ','
 * dropped or doubled, a marker added, a run added or dropped at the end),
 * joined in steps that stop at random places (a few bytes apart to
 * thousands; with room for 32 bytes past each stop as the reader leaves,
 * for none, or for more) join as a byte-at-a-time join does: the same
 * bytes when the parts fit, a failure when they do not, after bytes that
 * the byte-at-a-time join makes too; no step stops before its stop unless
 * the block is whole, nor passes its room (nor writes there). */
static void test_join_fast(void **state)
{
    (void)state;
    srand(23);
    unsigned fits = 0, fails = 0;
    for (unsigned t = 0; t < 2000; t++) {
        buf sk = {0}, dg = {0}, ref = {0};
        fast_parts(&sk, &dg);
        if (t % 3 == 1) { /* spoilt */
            for (unsigned k = 0, nk = 1 + (unsigned)rand() % 2; k < nk; k++) {
                size_t at;
                switch (rand() % 6) {
                case 0: /* a digit's byte changed */
                    dg.p[(size_t)rand() % dg.n] = (uint8_t)"a,0/;9 \xff"[rand() % 8];
                    break;
                case 1: /* a ',' dropped */
                    at = (size_t)rand() % dg.n;
                    while (at < dg.n && dg.p[at] != ',')
                        at++;
                    if (at < dg.n) {
                        memmove(dg.p + at, dg.p + at + 1, dg.n - at - 1);
                        dg.n--;
                    }
                    break;
                case 2: /* a ',' doubled: an empty run */
                    at = (size_t)rand() % dg.n;
                    while (at < dg.n && dg.p[at] != ',')
                        at++;
                    if (at < dg.n) {
                        buf_put(&dg, ",", 1);
                        memmove(dg.p + at + 1, dg.p + at, dg.n - at - 1);
                    }
                    break;
                case 3: /* a marker more */
                    sk.p[(size_t)rand() % sk.n] = '0';
                    break;
                case 4: /* a run more at the end */
                    buf_put(&dg, "12,", 3);
                    break;
                default: /* the last byte of the digits (a ',') gone */
                    dg.n--;
                    break;
                }
            }
        }
        int ok = ref_join(sk.p, sk.n, dg.p, dg.n, &ref) == 0;
        /* the steps: out has room for what the byte-at-a-time join makes,
         * and 320 bytes, of which the join writes in 64 at most (bytes
         * past those it joins, overwritten if it goes on): where the parts
         * stop fitting, it stops too */
        size_t room = ref.n + 320, n = 0;
        size_t stop[512], cap[512], ends[512];
        for (size_t at = 0; n < 511 && at < room;) {
            switch (rand() % 4) {
            case 0: at += (size_t)rand() % 8; break;
            case 1: at += (size_t)rand() % 64; break;
            case 2: at += (size_t)rand() % 700; break;
            default: at += (size_t)rand() % 6000; break;
            }
            if (at >= room)
                break;
            stop[n] = at;
            switch (rand() % 3) {
            case 0: cap[n] = at + 32; break; /* as the reader does */
            case 1: cap[n] = at; break;
            default: cap[n] = at + (size_t)rand() % 300; break;
            }
            if (cap[n] > room)
                cap[n] = room;
            n++;
        }
        stop[n] = cap[n] = room;
        n++;
        uint8_t *out = malloc(room);
        assert_non_null(out);
        for (size_t k = 0; k < n; k++)
            ends[k] = SIZE_MAX;
        memset(out, 0xa5, room);
        int sse2 = (t & 1) != 0; /* (on a machine with AVX2, without it too) */
        ptrdiff_t got =
            yb_corpus_join_steps(sk.p, sk.n, dg.p, dg.n, out, stop, cap, ends, n, sse2);
        for (size_t j = ref.n + 64; j < room; j++)
            if (out[j] != 0xa5)
                fail_msg("block %u: wrote at %zu, past the %zu bytes that fit and 64", t, j,
                         ref.n);
        if (ok && (got != (ptrdiff_t)ref.n || memcmp(out, ref.p, ref.n) != 0))
            fail_msg("block %u: joined %td bytes where %zu fit", t, got, ref.n);
        if (!ok && got != -1)
            fail_msg("block %u: parts that do not fit joined as %td", t, got);
        size_t last = 0;
        for (size_t k = 0; k < n && ends[k] != SIZE_MAX; k++) {
            size_t o = ends[k];
            if (o < last || o > (cap[k] > last ? cap[k] : last) ||
                (o < stop[k] && !(ok && o == ref.n)))
                fail_msg("block %u, step %zu (stop %zu, room to %zu): stopped at %zu", t, k,
                         stop[k], cap[k], o);
            last = o;
        }
        if (last > ref.n || memcmp(out, ref.p, last) != 0)
            fail_msg("block %u: %zu bytes joined otherwise than byte at a time", t, last);
        /* nothing written past the steps' room: the steps up to one of
         * them again, into bytes that must stay as they were */
        size_t k = (size_t)rand() % n, from = 0;
        for (size_t j = 0; j <= k; j++) {
            if (cap[j] > from)
                from = cap[j];
            if (j && ends[j - 1] != SIZE_MAX && ends[j - 1] > from)
                from = ends[j - 1];
        }
        memset(out, 0xa5, room);
        (void)yb_corpus_join_steps(sk.p, sk.n, dg.p, dg.n, out, stop, cap, ends, k + 1, sse2);
        for (size_t j = from; j < room; j++)
            if (out[j] != 0xa5)
                fail_msg("block %u: step %zu wrote at %zu, past its room (%zu)", t, k, j, from);
        fits += ok;
        fails += !ok;
        free(out);
        free(sk.p);
        free(dg.p);
        free(ref.p);
    }
    assert_true(fits > 1000 && fails > 300);
}

/* An entry whose length says more than its block holds fails without
 * the reader making room for that length (64 MiB at most: a tiny file
 * must not take it). */
static void test_split_long_claim(void **state)
{
    (void)state;
    const char *p = tpath("claim.ybc");
    buf b = {0};
    buf_magic(&b);
    buf_header_entry(&b, YB_CORPUS_FORMAT_SPLIT);
    /* one block: an entry length of 60 MiB, then 40 bytes */
    uint8_t skel[64];
    size_t sn = 0;
    uint64_t len = 60u << 20;
    while (len >= 0x80) {
        skel[sn++] = (uint8_t)(len | 0x80);
        len >>= 7;
    }
    skel[sn++] = (uint8_t)len;
    for (unsigned i = 0; i < 40; i++)
        skel[sn++] = 'a';
    for (size_t i = 0; i < sn; i++) /* (no digit bytes: nothing to split) */
        assert_false(skel[i] >= '0' && skel[i] <= '9');
    buf_block(&b, (char *)skel, sn, "", 0);
    buf_write_zstd(&b, p);
    char err[512];
    size_t base = heap_in_use();
    yb_corpus_reader *r = yb_corpus_reader_open(p, err, sizeof err);
    if (!r)
        fail_msg("%s", err);
    const yb_request *q;
    assert_int_equal(yb_corpus_reader_next(r, &q, err, sizeof err), -1);
    assert_non_null(strstr(err, "crosses its end"));
    size_t used = heap_in_use();
    yb_corpus_reader_close(r);
    if (used > base && used - base > 8u * 1024 * 1024)
        fail_msg("the reader holds %zu bytes for a %zu-byte block", used - base, sn);
}

/* The summary after the records: what the writer counted (protocols, the
 * first record's, templated records, whether chains are whole, the units a
 * run shares out), read back
 * without reading the records; none in a file written before summaries
 * (which reads as it did); a summary that does not match the records, or
 * one the trailer announces but the file lacks, fails at the trailer. */
static void test_summary(void **state)
{
    (void)state;
    enum { N = 7 };
    yb_request in[N];
    for (unsigned i = 0; i < N; i++)
        small_req(&in[i], i + 1, 20); /* gNMI first, then RESTCONF, ... */
    in[2].templated = 1;
    in[3].chain = 2;                  /* records 3 and 4: a whole chain */
    in[6].protocol = (yb_proto)9;     /* unknown: counted as unspecified */
    char a[1024], err[512];
    snprintf(a, sizeof a, "%s", tpath("sum.ybc"));
    write_corpus(a, in, N, NULL);
    yb_corpus_reader *r = yb_corpus_reader_open(a, err, sizeof err);
    assert_non_null(r);
    const yb_corpus_summary *s = yb_corpus_reader_summary(r);
    assert_non_null(s);
    assert_int_equal(s->first, YB_PROTO_GNMI);
    assert_int_equal(s->count[YB_PROTO_GNMI], 3);
    assert_int_equal(s->count[YB_PROTO_RESTCONF], 3);
    assert_int_equal(s->count[YB_PROTO_UNSPECIFIED], 1);
    assert_int_equal(s->templated, 1);
    assert_int_equal(s->chains_whole, 1);
    assert_int_equal(s->units, N - 1); /* records 3 and 4: one unit */
    yb_corpus_reader_close(r);
    uint64_t cnt;
    assert_int_equal(read_all(a, &cnt, err, sizeof err), 0);
    assert_int_equal(cnt, N);

    /* a chain cut short by the end of the corpus */
    in[6].chain = 3;
    write_corpus(a, in, N, NULL);
    r = yb_corpus_reader_open(a, err, sizeof err);
    assert_non_null(r);
    assert_int_equal(yb_corpus_reader_summary(r)->chains_whole, 0);
    assert_int_equal(yb_corpus_reader_summary(r)->units, N - 1); /* (it starts one) */
    yb_corpus_reader_close(r);

    /* the summary lies (one more templated record; then one unit fewer):
     * found at the trailer */
    size_t n;
    uint8_t *full = slurp(a, &n);
    Yangblast__Summary *m = NULL;
    size_t len = full[n - 8] | (size_t)full[n - 7] << 8;
    m = yangblast__summary__unpack(NULL, len, full + n - 8 - len);
    assert_non_null(m);
    assert_int_equal(m->templated_count, 1);
    uint8_t *mod = malloc(n + 16);
    assert_non_null(mod);
    m->templated_count = 2; /* packs to the same length */
    memcpy(mod, full, n);
    assert_int_equal(protobuf_c_message_pack(&m->base, mod + n - 8 - len), len);
    yangblast__summary__free_unpacked(m, NULL);
    const char *p = tpath("lie.ybc");
    spit(p, mod, n);
    r = yb_corpus_reader_open(p, err, sizeof err);
    assert_non_null(r);
    assert_int_equal(yb_corpus_reader_summary(r)->templated, 2);
    yb_corpus_reader_close(r);
    assert_int_equal(read_all(p, &cnt, err, sizeof err), -2);
    assert_non_null(strstr(err, "summary at its end does not match"));
    assert_non_null(strstr(err, "record 7"));
    m = yangblast__summary__unpack(NULL, len, full + n - 8 - len);
    assert_non_null(m);
    assert_int_equal(m->unit_count, N - 1);
    m->unit_count = N - 2; /* the same length */
    memcpy(mod, full, n);
    assert_int_equal(protobuf_c_message_pack(&m->base, mod + n - 8 - len), len);
    yangblast__summary__free_unpacked(m, NULL);
    spit(p, mod, n);
    assert_int_equal(read_all(p, &cnt, err, sizeof err), -2);
    assert_non_null(strstr(err, "summary at its end does not match"));

    /* the summary's frame cut off: the trailer announced it */
    spit(p, full, n - 16 - len);
    r = yb_corpus_reader_open(p, err, sizeof err);
    assert_non_null(r);
    assert_null(yb_corpus_reader_summary(r));
    yb_corpus_reader_close(r);
    assert_int_equal(read_all(p, &cnt, err, sizeof err), -2);
    assert_non_null(strstr(err, "summary after the end marker is missing"));

    /* files written before summaries: none, and they read as before */
    const char *old = YB_SRCDIR "/tests/cli/old-corpora/restconf-v1.ybc";
    r = yb_corpus_reader_open(old, err, sizeof err);
    assert_non_null(r);
    assert_null(yb_corpus_reader_summary(r));
    yb_corpus_reader_close(r);
    assert_int_equal(read_all(old, &cnt, err, sizeof err), 0);
    assert_int_equal(cnt, 10);
    buf b = {0};
    buf_magic(&b);
    buf_header_entry(&b, 1);
    buf_request_entry(&b, "/a");
    buf_trailer_entry(&b, 1);
    buf_write_zstd(&b, p);
    r = yb_corpus_reader_open(p, err, sizeof err);
    assert_non_null(r);
    assert_null(yb_corpus_reader_summary(r));
    yb_corpus_reader_close(r);
    assert_int_equal(read_all(p, &cnt, err, sizeof err), 0);
    free(mod);
    free(full);
    for (unsigned i = 0; i < N; i++)
        yb_request_cleanup(&in[i]);
}

static void test_proto_names(void **state)
{
    (void)state;
    static const yb_proto all[] = {YB_PROTO_RESTCONF, YB_PROTO_GNMI, YB_PROTO_HTTP1,
                                   YB_PROTO_HTTP2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        yb_proto p;
        assert_int_equal(yb_proto_parse(yb_proto_name(all[i]), &p), 0);
        assert_int_equal(p, all[i]);
    }
    yb_proto p;
    assert_int_equal(yb_proto_parse("unspecified", &p), -1);
    assert_int_equal(yb_proto_parse("GNMI", &p), -1);
    assert_string_equal(yb_proto_name((yb_proto)77), "unspecified");
    assert_true(yb_proto_is_h2(YB_PROTO_GNMI));
    assert_true(yb_proto_is_h2(YB_PROTO_HTTP2));
    assert_false(yb_proto_is_h2(YB_PROTO_RESTCONF));
    assert_false(yb_proto_is_h2(YB_PROTO_HTTP1));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup_dir, teardown_dir)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_roundtrip_all_fields),
#ifdef YB_BLK_ASAN
        T(test_record_let_go_is_poisoned),
#endif
        T(test_empty_corpus_and_creation_time),
        T(test_summary),
        T(test_split_roundtrip),
        T(test_whole_frames),
        T(test_checksum_frames),
        T(test_fast_view_differential),
        T(test_join_resumed),
        T(test_join_fast),
        T(test_split_long_claim),
        T(test_add_split),
        T(test_split_api),
        T(test_split_hostile),
        T(test_truncated_every_offset),
        T(test_truncated_multiblock),
        T(test_flipped_bytes),
        T(test_corrupt_not_truncated),
        T(test_not_a_corpus),
        T(test_trailer_mismatch),
        T(test_structural_errors),
        T(test_unknown_fields_and_entries),
        T(test_writer_abort_leaves_nothing),
        T(test_writer_preexisting_untouched),
        T(test_writer_failed_close),
        T(test_writer_refuses_invalid),
        T(test_streaming_bounded_memory),
        T(test_large_records_stream),
        T(test_rewind),
        T(test_splice),
        T(test_writer_threads),
        T(test_blocks),
        T(test_proto_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
