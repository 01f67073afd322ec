/* Streaming .ybc reader/writer: zstd(magic, entry*) where entry =
 * varint length + protobuf Entry.  See corpus.h and yangblast-corpus.5. */
#include "config.h"
#include "corpus/corpus.h"
#include "util/blkcache.h"
#include "util/outfile.h"
#include "util/util.h"
#include "util/varint.h"
#include "corpus/corpus.pb-c.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_d_forceIgnoreChecksum (set through the
                                  * stable ZSTD_DCtx_setParameter), and
                                  * ZSTD_compressSequences (compress_digits) */
#include <zstd.h>
#include <zstd_errors.h>
#include <zlib.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__SSE2__) && defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define YB_JOIN_AVX2 1 /* join_fast in AVX2 too, when the machine has it */
#endif

static const uint8_t MAGIC[4] = {0x89, 'Y', 'B', 'C'};
#define IO_CHUNK (128u * 1024u)

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------ */
/* protocol names                                                      */

static const char *const PROTO_NAMES[] = {"unspecified", "restconf", "gnmi", "http1", "http2"};

const char *yb_proto_name(yb_proto p)
{
    if ((unsigned)p < sizeof PROTO_NAMES / sizeof PROTO_NAMES[0])
        return PROTO_NAMES[p];
    return "unspecified";
}

int yb_proto_parse(const char *name, yb_proto *out)
{
    for (size_t i = 1; i < sizeof PROTO_NAMES / sizeof PROTO_NAMES[0]; i++)
        if (strcmp(name, PROTO_NAMES[i]) == 0) {
            *out = (yb_proto)i;
            return 0;
        }
    return -1;
}

int yb_proto_is_h2(yb_proto p)
{
    return p == YB_PROTO_GNMI || p == YB_PROTO_HTTP2;
}

/* ------------------------------------------------------------------ */
/* record helpers                                                      */

static char EMPTY[1] = "";

void yb_request_init(yb_request *r)
{
    memset(r, 0, sizeof *r);
    r->method = r->scheme = r->authority = r->path = EMPTY;
    r->expected_grpc = -1;
}

static void free_str(char *s)
{
    if (s != EMPTY)
        free(s);
}

void yb_request_cleanup(yb_request *r)
{
    free_str(r->method);
    free_str(r->scheme);
    free_str(r->authority);
    free_str(r->path);
    for (size_t i = 0; i < r->n_headers; i++) {
        free(r->headers[i].name);
        free(r->headers[i].value);
    }
    free(r->headers);
    free(r->body);
    yb_request_init(r);
}

int yb_request_set_str(char **dst, const char *s)
{
    char *c = strdup(s ? s : "");
    if (!c)
        return -ENOMEM;
    free_str(*dst);
    *dst = c;
    return 0;
}

int yb_request_add_header(yb_request *r, const char *name, const void *value, size_t value_len)
{
    yb_header *h = realloc(r->headers, (r->n_headers + 1) * sizeof *h);
    if (!h)
        return -ENOMEM;
    r->headers = h;
    char *n = strdup(name);
    uint8_t *v = malloc(value_len + 1);
    if (!n || !v) {
        free(n);
        free(v);
        return -ENOMEM;
    }
    if (value_len)
        memcpy(v, value, value_len);
    v[value_len] = 0;
    h[r->n_headers].name = n;
    h[r->n_headers].value = v;
    h[r->n_headers].value_len = value_len;
    r->n_headers++;
    return 0;
}

int yb_request_set_body(yb_request *r, const void *body, size_t len)
{
    uint8_t *b = NULL;
    if (len) {
        b = malloc(len);
        if (!b)
            return -ENOMEM;
        memcpy(b, body, len);
    }
    free(r->body);
    r->body = b;
    r->body_len = len;
    return 0;
}

void yb_request_take_body(yb_request *r, uint8_t *body, size_t len)
{
    free(r->body);
    r->body = body;
    r->body_len = len;
}

int yb_request_copy(yb_request *dst, const yb_request *src)
{
    yb_request_init(dst);
    dst->protocol = src->protocol;
    dst->timestamp_ns = src->timestamp_ns;
    dst->conn_id = src->conn_id;
    dst->conn_order = src->conn_order;
    dst->expected_status = src->expected_status;
    dst->expected_grpc = src->expected_grpc;
    dst->templated = src->templated;
    memcpy(dst->accept_status, src->accept_status, sizeof dst->accept_status);
    dst->n_accept_status = src->n_accept_status;
    memcpy(dst->accept_grpc, src->accept_grpc, sizeof dst->accept_grpc);
    dst->n_accept_grpc = src->n_accept_grpc;
    if (yb_request_set_str(&dst->method, src->method) ||
        yb_request_set_str(&dst->scheme, src->scheme) ||
        yb_request_set_str(&dst->authority, src->authority) ||
        yb_request_set_str(&dst->path, src->path) ||
        yb_request_set_body(dst, src->body, src->body_len))
        goto oom;
    for (size_t i = 0; i < src->n_headers; i++)
        if (yb_request_add_header(dst, src->headers[i].name, src->headers[i].value,
                                  src->headers[i].value_len))
            goto oom;
    return 0;
oom:
    yb_request_cleanup(dst);
    return -ENOMEM;
}

static int bytes_eq(const void *a, size_t al, const void *b, size_t bl)
{
    return al == bl && (al == 0 || memcmp(a, b, al) == 0);
}

int yb_request_equal(const yb_request *a, const yb_request *b)
{
    if (a->protocol != b->protocol || strcmp(a->method, b->method) || strcmp(a->scheme, b->scheme) ||
        strcmp(a->authority, b->authority) || strcmp(a->path, b->path) ||
        a->timestamp_ns != b->timestamp_ns || a->conn_id != b->conn_id ||
        a->conn_order != b->conn_order || a->expected_status != b->expected_status ||
        a->expected_grpc != b->expected_grpc || a->n_headers != b->n_headers ||
        !a->templated != !b->templated || a->chain != b->chain ||
        a->n_accept_status != b->n_accept_status || a->n_accept_grpc != b->n_accept_grpc ||
        memcmp(a->accept_status, b->accept_status,
               (a->n_accept_status < YB_REQUEST_MAX_ACCEPT ? a->n_accept_status
                                                          : YB_REQUEST_MAX_ACCEPT) *
                   sizeof a->accept_status[0]) ||
        memcmp(a->accept_grpc, b->accept_grpc,
               (a->n_accept_grpc < YB_REQUEST_MAX_ACCEPT ? a->n_accept_grpc
                                                        : YB_REQUEST_MAX_ACCEPT) *
                   sizeof a->accept_grpc[0]) ||
        !bytes_eq(a->body, a->body_len, b->body, b->body_len))
        return 0;
    for (size_t i = 0; i < a->n_headers; i++)
        if (strcmp(a->headers[i].name, b->headers[i].name) ||
            !bytes_eq(a->headers[i].value, a->headers[i].value_len, b->headers[i].value,
                      b->headers[i].value_len))
            return 0;
    return 1;
}

void yb_corpus_header_init(yb_corpus_header *h)
{
    memset(h, 0, sizeof *h);
    h->format_version = YB_CORPUS_FORMAT_VERSION;
    h->producer = h->source = EMPTY;
}

void yb_corpus_header_cleanup(yb_corpus_header *h)
{
    free_str(h->producer);
    free_str(h->source);
    for (size_t i = 0; i < h->n_redactions; i++)
        free(h->redactions[i]);
    free(h->redactions);
    yb_corpus_header_init(h);
}

int yb_corpus_header_add_redaction(yb_corpus_header *h, const char *name)
{
    for (size_t i = 0; i < h->n_redactions; i++)
        if (strcmp(h->redactions[i], name) == 0)
            return 0;
    char **v = realloc(h->redactions, (h->n_redactions + 1) * sizeof *v);
    if (!v)
        return -ENOMEM;
    h->redactions = v;
    if (!(v[h->n_redactions] = strdup(name)))
        return -ENOMEM;
    h->n_redactions++;
    return 0;
}

/* Field checks shared by the writer and the reader, so a corpus can never
 * carry bytes that would let one request smuggle another onto the wire.
 * Returns NULL when r is acceptable, else a static description. */
/* RFC 9110 tchar, by table: every record's method and header names are
 * checked when it is written (capture writes hundreds of thousands). */
static int is_tchar(unsigned char c)
{
    static const uint32_t T[8] = {
        0x00000000u, /* 0x00..0x1f */
        0x03ff6cfau, /* 0x20..0x3f: ! # $ % & ' * + - . 0-9 */
        0xc7fffffeu, /* 0x40..0x5f: A-Z ^ _ */
        0x57ffffffu, /* 0x60..0x7f: ` a-z | ~ */
    };
    return (T[c >> 5] >> (c & 31)) & 1;
}

int yb_http_token_ok(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!is_tchar((unsigned char)*s))
            return 0;
    return 1;
}

static int visible_ok(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s <= 0x20 || (unsigned char)*s == 0x7f)
            return 0;
    return 1;
}

const char *yb_request_problem_key(const yb_request *r, const char **key, size_t *header)
{
    *key = NULL;
    *header = 0;
    if (!yb_http_token_ok(r->method))
        return *key = "method", "method is empty or not an HTTP token";
    if (!visible_ok(r->scheme))
        return *key = "scheme", "scheme contains spaces or control characters";
    if (!visible_ok(r->authority))
        return *key = "authority", "authority contains spaces or control characters";
    if (r->path[0] != '/' && strcmp(r->path, "*") != 0)
        return *key = "path", "path does not start with '/'";
    if (!visible_ok(r->path))
        return *key = "path", "path contains spaces or control characters";
    for (size_t i = 0; i < r->n_headers; i++) {
        *header = i;
        if (!yb_http_token_ok(r->headers[i].name) || r->headers[i].name[0] == ':')
            return *key = "headers",
                   "header name is empty, a pseudo-header or not an HTTP token";
        const uint8_t *v = r->headers[i].value;
        size_t vn = r->headers[i].value_len;
        if (vn && (memchr(v, '\r', vn) || memchr(v, '\n', vn) || memchr(v, 0, vn)))
            return *key = "headers", "header value contains CR, LF or NUL";
    }
    *header = 0;
    if (r->expected_status > 999)
        return *key = "expected_status", "expected status is not a 3-digit HTTP status";
    if (r->n_accept_status > YB_REQUEST_MAX_ACCEPT)
        return *key = "accept_status", "more than 16 accepted HTTP statuses";
    for (size_t i = 0; i < r->n_accept_status; i++)
        if (r->accept_status[i] < 100 || r->accept_status[i] > 999)
            return *key = "accept_status", "an accepted HTTP status is not in 100..999";
    if (r->n_accept_grpc > YB_REQUEST_MAX_ACCEPT)
        return *key = "accept_grpc_status", "more than 16 accepted gRPC codes";
    for (size_t i = 0; i < r->n_accept_grpc; i++)
        if (r->accept_grpc[i] > 16)
            return *key = "accept_grpc_status", "an accepted gRPC code is not in 0..16";
    if (r->chain == 1 || r->chain > YB_CHAIN_MAX)
        return *key = "chain", "a chain has 2 to 64 records";
    if (r->body_len > YB_CORPUS_MAX_ENTRY / 2)
        return *key = "body", "body too large for one corpus entry";
    return NULL;
}

const char *yb_request_problem(const yb_request *r)
{
    const char *key;
    size_t header;
    return yb_request_problem_key(r, &key, &header);
}

/* ------------------------------------------------------------------ */
/* summary: what the writer counts and the reader checks               */

/* The summary's frame: a zstd skippable frame (ignored by zstd and by
 * readers that do not know it) whose content is the packed Summary, its
 * length (4 bytes, little-endian) and SUM_MAGIC; so the file's last 8
 * bytes say where the summary starts. */
#define SKIP_MAGIC 0x184D2A5Bu
static const uint8_t SUM_MAGIC[4] = {0x89, 'Y', 'B', 'S'};
#define SUM_MAX 1024u /* a packed summary is far smaller */

typedef struct {
    yb_corpus_summary s;
    uint64_t n;
    uint32_t chain_left; /* records still due in the current chain */
} tally;

static void tally_init(tally *t)
{
    memset(t, 0, sizeof *t);
    t->s.chains_whole = 1;
}

/* Counts a record of protocol p, templated or not, starting a chain of
 * `chain` records (0: none), as census (cli/runcommon.c) would. */
static void tally_rec(tally *t, yb_proto p, int templated, uint32_t chain)
{
    p = (unsigned)p <= YB_PROTO_HTTP2 ? p : YB_PROTO_UNSPECIFIED;
    if (t->n++ == 0)
        t->s.first = p;
    t->s.count[p]++;
    t->s.templated += templated != 0;
    t->s.units += t->chain_left == 0;
    if (chain && t->chain_left)
        t->s.chains_whole = 0;
    if (t->chain_left)
        t->chain_left--;
    else if (chain)
        t->chain_left = chain - 1;
}

static void tally_add(tally *t, const yb_request *r)
{
    tally_rec(t, r->protocol, r->templated, r->chain);
}

/* The summary of everything added (a chain still open is broken). */
static yb_corpus_summary tally_end(const tally *t)
{
    yb_corpus_summary s = t->s;
    if (t->chain_left)
        s.chains_whole = 0;
    return s;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Packs s as a summary frame into buf (SUM_MAX + 16 bytes).  Returns its
 * length. */
static size_t pack_summary(const yb_corpus_summary *s, uint8_t *buf)
{
    uint64_t counts[YB_PROTO_HTTP2 + 1];
    memcpy(counts, s->count, sizeof counts);
    Yangblast__Summary m = YANGBLAST__SUMMARY__INIT;
    m.n_protocol_count = YB_PROTO_HTTP2 + 1;
    m.protocol_count = counts;
    m.templated_count = s->templated;
    m.first_protocol = (Yangblast__Protocol)s->first;
    m.chains_broken = !s->chains_whole;
    m.unit_count = s->units;
    size_t n = protobuf_c_message_pack(&m.base, buf + 8); /* (about 30 bytes) */
    put_le32(buf, SKIP_MAGIC);
    put_le32(buf + 4, (uint32_t)n + 8);
    put_le32(buf + 8 + n, (uint32_t)n);
    memcpy(buf + 12 + n, SUM_MAGIC, sizeof SUM_MAGIC);
    return n + 16;
}

/* Reads the summary frame at the end of the regular file open on fd into
 * *s.  Returns 1 when there is a well-formed one, else 0. */
static int read_summary(int fd, yb_corpus_summary *s)
{
    struct stat st;
    uint8_t tail[SUM_MAX + 16];
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 16)
        return 0;
    off_t end = st.st_size;
    if (pread(fd, tail, 8, end - 8) != 8 || memcmp(tail + 4, SUM_MAGIC, sizeof SUM_MAGIC))
        return 0;
    uint32_t n = get_le32(tail);
    if (n > SUM_MAX || (off_t)n + 16 > end)
        return 0;
    off_t at = end - 16 - (off_t)n;
    if (pread(fd, tail, n + 16, at) != (ssize_t)n + 16 || get_le32(tail) != SKIP_MAGIC ||
        get_le32(tail + 4) != n + 8)
        return 0;
    Yangblast__Summary *m = yangblast__summary__unpack(NULL, n, tail + 8);
    if (!m)
        return 0;
    int ok = m->n_protocol_count <= YB_PROTO_HTTP2 + 1 &&
             (unsigned)m->first_protocol <= YB_PROTO_HTTP2;
    if (ok) {
        memset(s, 0, sizeof *s);
        for (size_t i = 0; i < m->n_protocol_count; i++)
            s->count[i] = m->protocol_count[i];
        s->templated = m->templated_count;
        s->first = (yb_proto)m->first_protocol;
        s->chains_whole = !m->chains_broken;
        s->units = m->unit_count;
    }
    yangblast__summary__free_unpacked(m, NULL);
    return ok;
}

/* Whether the records read (got) match the summary (claim); a claim
 * without units (an older writer's) is not checked for them. */
static int summary_equal(const yb_corpus_summary *got, const yb_corpus_summary *claim)
{
    return !memcmp(got->count, claim->count, sizeof got->count) &&
           got->first == claim->first && got->templated == claim->templated &&
           !got->chains_whole == !claim->chains_whole &&
           (claim->units == 0 || got->units == claim->units);
}

/* ------------------------------------------------------------------ */
/* digits apart (format 2): see yangblast-corpus(5), DIGITS APART       */

/* Entries are gathered into blocks of about this many bytes; a block
 * holds whole entries (one entry may be larger). */
#define SPLIT_BLOCK (1024u * 1024u)
/* A block's two parts together are at most this long (an entry at its
 * limit and the block's others, with a separator per digit run). */
#define SPLIT_PART_MAX (2u * (YB_CORPUS_MAX_ENTRY + SPLIT_BLOCK))

static int is_digit(uint8_t c)
{
    return c >= '0' && c <= '9';
}

/* Returns a mask of the digits among the 16 bytes at p (bit i: p[i]). */
#ifdef __SSE2__
static unsigned digits16(const uint8_t *p)
{
    __m128i v = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), _mm_set1_epi8('0'));
    return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(9)), v));
}
#endif

/* Copies the 32 bytes at p to out and returns the offset of the first
 * '0' among them, or 32 when there is none. */
static unsigned copy_to_marker32(uint8_t *out, const uint8_t *p)
{
#ifdef __SSE2__
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)p),
            b = _mm_loadu_si128((const __m128i *)(const void *)(p + 16)), z = _mm_set1_epi8('0');
    _mm_storeu_si128((__m128i *)(void *)out, a);
    _mm_storeu_si128((__m128i *)(void *)(out + 16), b);
    uint32_t m = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a, z)) |
                 (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(b, z)) << 16;
    return m ? (unsigned)__builtin_ctz(m) : 32;
#else
    memcpy(out, p, 32);
    const uint8_t *m = memchr(p, '0', 32);
    return m ? (unsigned)(m - p) : 32;
#endif
}

#ifdef __SSE2__
static void copy16(uint8_t *out, const uint8_t *p)
{
    _mm_storeu_si128((__m128i *)(void *)out, _mm_loadu_si128((const __m128i *)(const void *)p));
}

/* Returns a mask of the ','s among the 64 bytes at p, and in *ok whether
 * every other byte among them is a digit. */
static inline __attribute__((always_inline)) uint64_t commas64(const uint8_t *p, int *ok)
{
    const __m128i zero = _mm_set1_epi8('0'), comma = _mm_set1_epi8(','), nine = _mm_set1_epi8(9);
    __m128i v0 = _mm_loadu_si128((const __m128i *)(const void *)p),
            v1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16)),
            v2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 32)),
            v3 = _mm_loadu_si128((const __m128i *)(const void *)(p + 48));
    __m128i e0 = _mm_cmpeq_epi8(v0, comma), e1 = _mm_cmpeq_epi8(v1, comma),
            e2 = _mm_cmpeq_epi8(v2, comma), e3 = _mm_cmpeq_epi8(v3, comma);
    /* a digit's byte less '0' is at most 9: at most 9 once the ','s
     * (0xfc less '0') are made 0 */
    __m128i w0 = _mm_andnot_si128(e0, _mm_sub_epi8(v0, zero)),
            w1 = _mm_andnot_si128(e1, _mm_sub_epi8(v1, zero)),
            w2 = _mm_andnot_si128(e2, _mm_sub_epi8(v2, zero)),
            w3 = _mm_andnot_si128(e3, _mm_sub_epi8(v3, zero));
    __m128i mx = _mm_max_epu8(_mm_max_epu8(w0, w1), _mm_max_epu8(w2, w3));
    *ok = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(mx, nine), mx)) == 0xffff;
    return (uint64_t)(uint16_t)_mm_movemask_epi8(e0) |
           (uint64_t)(uint16_t)_mm_movemask_epi8(e1) << 16 |
           (uint64_t)(uint16_t)_mm_movemask_epi8(e2) << 32 |
           (uint64_t)(uint16_t)_mm_movemask_epi8(e3) << 48;
}

/* Returns the mask of commas64 up to the first byte among the 64 at p
 * that is neither a digit nor a ','. */
static uint64_t commas64_upto_other(const uint8_t *p)
{
    const __m128i zero = _mm_set1_epi8('0'), comma = _mm_set1_epi8(','), nine = _mm_set1_epi8(9);
    uint64_t m = 0, good = 0;
    for (unsigned k = 0; k < 4; k++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k)),
                w = _mm_sub_epi8(v, zero), e = _mm_cmpeq_epi8(v, comma);
        m |= (uint64_t)(uint16_t)_mm_movemask_epi8(e) << (16 * k);
        good |= (uint64_t)(uint16_t)_mm_movemask_epi8(
                    _mm_or_si128(e, _mm_cmpeq_epi8(_mm_min_epu8(w, nine), w)))
                << (16 * k);
    }
    uint64_t other = ~good;
    return m & ((other & (0 - other)) - 1);
}

/* Copies the 64 bytes at p to out and returns the mask of the '0's
 * among them. */
static inline __attribute__((always_inline)) uint64_t copy_markers64(uint8_t *out,
                                                                      const uint8_t *p)
{
    const __m128i z = _mm_set1_epi8('0');
    __m128i v0 = _mm_loadu_si128((const __m128i *)(const void *)p),
            v1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16)),
            v2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 32)),
            v3 = _mm_loadu_si128((const __m128i *)(const void *)(p + 48));
    _mm_storeu_si128((__m128i *)(void *)out, v0);
    _mm_storeu_si128((__m128i *)(void *)(out + 16), v1);
    _mm_storeu_si128((__m128i *)(void *)(out + 32), v2);
    _mm_storeu_si128((__m128i *)(void *)(out + 48), v3);
    return (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v0, z)) |
           (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v1, z)) << 16 |
           (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v2, z)) << 32 |
           (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v3, z)) << 48;
}

#ifdef YB_JOIN_AVX2
/* copy_markers64 and commas64 32 bytes at a time */
static inline __attribute__((always_inline, target("avx2"))) uint64_t
copy_markers64_avx2(uint8_t *out, const uint8_t *p)
{
    const __m256i z = _mm256_set1_epi8('0');
    __m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)p),
            v1 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
    _mm256_storeu_si256((__m256i *)(void *)out, v0);
    _mm256_storeu_si256((__m256i *)(void *)(out + 32), v1);
    return (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v0, z)) |
           (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v1, z)) << 32;
}

static inline __attribute__((always_inline, target("avx2"))) uint64_t
commas64_avx2(const uint8_t *p, int *ok)
{
    const __m256i zero = _mm256_set1_epi8('0'), comma = _mm256_set1_epi8(','),
                  nine = _mm256_set1_epi8(9);
    __m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)p),
            v1 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
    __m256i e0 = _mm256_cmpeq_epi8(v0, comma), e1 = _mm256_cmpeq_epi8(v1, comma);
    __m256i mx = _mm256_max_epu8(_mm256_andnot_si256(e0, _mm256_sub_epi8(v0, zero)),
                                 _mm256_andnot_si256(e1, _mm256_sub_epi8(v1, zero)));
    *ok = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_min_epu8(mx, nine), mx)) ==
          0xffffffffu;
    return (uint64_t)(uint32_t)_mm256_movemask_epi8(e0) |
           (uint64_t)(uint32_t)_mm256_movemask_epi8(e1) << 32;
}

#endif

/* join_some far from the ends of its parts and of out, many runs at a
 * time.  join_some's own loop walks from a marker to the next and from a
 * run to the next: each step starts at a 16- or 32-byte load at the place
 * the last one found, then compare, mask and count, some 15 cycles one
 * after the other, however wide the machine (20 a run on a record of
 * ~220).  Here the next marker and the next ',' come from masks of 64
 * bytes each, taken each 64 bytes after the last (places known before
 * the run before is joined), one mask and one bit taken away a run.
 * The skeleton's 64 bytes are copied where they go as their mask is taken
 * (the bytes past a marker in the wrong place: the marker's run and the
 * 64 bytes after it, copied next, overwrite them).
 *
 * From a place where join_some's loop starts on the skeleton (its i, d,
 * o, with no run begun), it joins what that loop would, to the same
 * place and state (join_some goes on from there as if it had), a run
 * after another while the run ends before olim.  olim is at most stop,
 * 64 bytes or more before cap, and no farther from o than the skeleton
 * from i less 128 bytes (a marker and its run of one digit or more take
 * out as far as the skeleton, or farther): it reads the skeleton up to
 * 64 bytes before its end, writes out up to cap, reads the digits up to
 * dlim (at most 32 bytes before their end) in 64 bytes and 16 past a
 * ','.  Stops after a run where it cannot tell that the next one fits
 * (an empty run, a byte among the digits before its ',' other than a
 * digit, no ',' before dlim) or when it would end at olim or past it;
 * join_some's loop takes it from there.
 * Returns the new o; *pi and *pd are the new i and d. */
#define JOIN_FAST_BODY(MARKERS64, COMMAS64) \
{                                                                                         \
    size_t i = *pi, d = *pd;                                                              \
    size_t dl = o - i;          /* skel[j] goes to out[j + dl] (mod 2^64) */              \
    size_t mc = i, dc = d;      /* m is of skel[mc..+64), cm of dig[dc..+64) */           \
    size_t mlim = olim - dl;    /* a marker past it would go past olim */                 \
    size_t dend = dlim;         /* no digits read past it, but 16 past a ',' */           \
    int ok;                                                                               \
    uint64_t m, cm;                                                                       \
    if (d + 64 > dend)                                                                    \
        goto out;                                                                         \
    cm = COMMAS64(dig + dc, &ok);                                                         \
    if (!ok) {                                                                            \
        cm = commas64_upto_other(dig + dc);                                               \
        dend = dc + 64;                                                                   \
    }                                                                                     \
    m = MARKERS64(out + o, skel + mc);                                                    \
    for (;;) {                                                                            \
        while (!m) {                                                                      \
            mc += 64;                                                                     \
            if (mc > mlim)                                                                \
                goto out;                                                                 \
            /* (out of L1 since the block was decoded: asked for ahead,                   \
             * harmless past the skeleton's end) */                                       \
            __builtin_prefetch(skel + mc + 512);                                          \
            m = MARKERS64(out + (mc + dl), skel + mc);                                    \
        }                                                                                 \
        while (!cm) {                                                                     \
            dc += 64;                                                                     \
            if (dc + 64 > dend)                                                           \
                goto out;                                                                 \
            __builtin_prefetch(dig + dc + 512);                                           \
            cm = COMMAS64(dig + dc, &ok);                                                 \
            if (!ok) {                                                                    \
                cm = commas64_upto_other(dig + dc);                                       \
                dend = dc + 64;                                                           \
            }                                                                             \
        }                                                                                 \
        size_t p = mc + (size_t)__builtin_ctzll(m), q = dc + (size_t)__builtin_ctzll(cm), \
               len = q - d;                                                               \
        if (!len || p + dl + len >= olim)                                                 \
            goto out;                                                                     \
        /* the run (what is copied past it is overwritten), then what follows */          \
        uint8_t *w = out + (p + dl);                                                      \
        copy16(w, dig + d);                                                               \
        for (size_t j = 16; j < len; j += 16)                                             \
            copy16(w + j, dig + d + j);                                                   \
        dl += len - 1;                                                                    \
        mlim = olim - dl;                                                                 \
        i = p + 1;                                                                        \
        d = q + 1;                                                                        \
        (void)MARKERS64(out + (i + dl), skel + i);                                        \
        m &= m - 1;                                                                       \
        cm &= cm - 1;                                                                     \
    }                                                                                     \
out:                                                                                      \
    *pi = i;                                                                              \
    *pd = d;                                                                              \
    return i + dl;                                                                        \
}

/* yb_corpus_join_steps: join_fast without AVX2 on a machine that has it */
static int join_sse2_only;

static __attribute__((noinline)) size_t join_fast(const uint8_t *skel, const uint8_t *dig,
                                                  size_t *pi, size_t *pd, uint8_t *out, size_t o,
                                                  size_t olim, size_t dlim)
JOIN_FAST_BODY(copy_markers64, commas64)

#ifdef YB_JOIN_AVX2
static __attribute__((noinline, target("avx2"))) size_t
join_fast_avx2(const uint8_t *skel, const uint8_t *dig, size_t *pi, size_t *pd, uint8_t *out,
               size_t o, size_t olim, size_t dlim)
JOIN_FAST_BODY(copy_markers64_avx2, commas64_avx2)
#endif
#endif

/* Where a join of a skeleton and its digits stands: the reader joins a
 * block's entries as they are read (join_some), so that what it joins is
 * still in the cache when the entry is viewed and its body copied, rather
 * than the whole block at once into a buffer as big as the block. */
typedef struct {
    const uint8_t *skel, *dig;
    size_t sn, dn;
    size_t i, d;  /* the next skeleton byte, the next digit */
    int in_run;   /* a marker taken whose run has not reached its ',' */
    int run_any;  /* in_run: some digit of the run joined */
    int done;     /* the skeleton's end reached, every run used */
} join_state;

static void join_init(join_state *js, const uint8_t *skel, size_t sn, const uint8_t *dig,
                      size_t dn)
{
    *js = (join_state){.skel = skel, .dig = dig, .sn = sn, .dn = dn};
}

/* Joins on from js into out[o..cap) until o reaches stop (<= cap; it may
 * pass it by up to 31 bytes, never cap) or the skeleton ends (js->done,
 * seen even when o has reached stop).
 * Returns the new o, or -1 when the parts do not fit together (a marker
 * without its run, an empty run, a run without its ',', a run left over
 * at the skeleton's end).  32 bytes at a time: a record has a run every
 * 70 bytes or so, too close for calls to memchr and memcpy to pay. */
static ptrdiff_t join_some(join_state *js, uint8_t *out, size_t o, size_t stop, size_t cap)
{
    const uint8_t *skel = js->skel, *dig = js->dig;
    size_t sn = js->sn, dn = js->dn, i = js->i, d = js->d;
    int run_any = js->run_any;
    if (js->done)
        return (ptrdiff_t)o;
    if (js->in_run)
        goto run;
    for (;;) {
#ifdef __SSE2__
        /* far from the ends (join_fast) */
        if (cap >= 64 && sn - i >= 128 && dn - d >= 128) {
            size_t olim = stop < cap - 64 ? stop : cap - 64;
            if (o < olim) {
                if (olim - o > sn - i - 128)
                    olim = o + (sn - i - 128);
#ifdef YB_JOIN_AVX2
                if (!join_sse2_only && __builtin_cpu_supports("avx2"))
                    o = join_fast_avx2(skel, dig, &i, &d, out, o, olim, dn - 32);
                else
#endif
                    o = join_fast(skel, dig, &i, &d, out, o, olim, dn - 32);
            }
        }
#endif
        /* up to the next marker */
        for (;;) {
            if (i + 32 <= sn && o + 32 <= cap && o < stop) {
                /* the skeleton joined is in buf since its block was
                 * decoded, out of L1 by now: asked for ahead (a prefetch
                 * past buf's end is harmless) */
                __builtin_prefetch(skel + i + 512);
                /* (the bytes copied past a marker are overwritten) */
                unsigned k = copy_to_marker32(out + o, skel + i);
                i += k;
                o += k;
                if (k < 32)
                    break;
                continue;
            }
            if (i == sn || skel[i] == '0')
                break;
            if (o >= stop)
                goto out;
            out[o++] = skel[i++];
        }
        if (i == sn) {
            if (d != dn)
                return -1;
            js->done = 1;
            goto out;
        }
        i++; /* the marker: its run */
#ifdef __SSE2__
        if (d + 16 <= dn && o + 16 <= cap) { /* a run and its ',' in 16 bytes */
            unsigned m = ~digits16(dig + d) & 0xffffu;
            unsigned len = m ? (unsigned)__builtin_ctz(m) : 16;
            if (len < 16) {
                if (!len || dig[d + len] != ',')
                    return -1;
                /* (the bytes copied past the run are overwritten) */
                _mm_storeu_si128((__m128i *)(void *)(out + o),
                                 _mm_loadu_si128((const __m128i *)(const void *)(dig + d)));
                o += len;
                d += len + 1;
                continue;
            }
        }
#endif
        run_any = 0;
    run:
        js->in_run = 0;
        while (d < dn && is_digit(dig[d])) {
            if (o >= stop) {
                js->in_run = 1;
                goto out;
            }
            out[o++] = dig[d++];
            run_any = 1;
        }
        if (!run_any || d == dn || dig[d] != ',')
            return -1;
        d++;
    }
out:
    js->i = i;
    js->d = d;
    js->run_any = run_any;
    return (ptrdiff_t)o;
}

/* Joins skel[0..sn) and dig[0..dn) back into out (room for cap bytes).
 * Returns the length, or -1 when they do not fit together (a marker
 * without its run, a run left over, more than cap bytes). */
static ptrdiff_t join_digits(const uint8_t *skel, size_t sn, const uint8_t *dig, size_t dn,
                             uint8_t *out, size_t cap)
{
    join_state js;
    join_init(&js, skel, sn, dig, dn);
    ptrdiff_t o = join_some(&js, out, 0, cap, cap);
    return o >= 0 && js.done ? o : -1;
}

ptrdiff_t yb_corpus_join_steps(const uint8_t *skel, size_t sn, const uint8_t *dig, size_t dn,
                               uint8_t *out, const size_t *stop, const size_t *cap,
                               size_t *ends, size_t n, int sse2_only)
{
    join_state js;
    join_init(&js, skel, sn, dig, dn);
    ptrdiff_t o = 0;
#ifdef __SSE2__
    join_sse2_only = sse2_only;
#else
    (void)sse2_only;
#endif
    for (size_t k = 0; k < n; k++) {
        o = join_some(&js, out, (size_t)o, stop[k] > (size_t)o ? stop[k] : (size_t)o,
                      cap[k] > (size_t)o ? cap[k] : (size_t)o);
        if (o < 0)
            break;
        ends[k] = (size_t)o;
    }
#ifdef __SSE2__
    join_sse2_only = 0;
#endif
    return o < 0 ? -1 : js.done ? o : -2;
}

/* ------------------------------------------------------------------ */
/* writer                                                              */

/* A block of entries (format 2), split as it is gathered, and at level 1
 * its compressed frames: the writer gathers into one slot while threads
 * compress others. */
enum { SLOT_FREE, SLOT_QUEUED, SLOT_BUSY, SLOT_DONE };
#define LENS_ROOM 20u /* before the skeleton: its length and the digits' */
typedef struct {
    uint8_t *skel;     /* LENS_ROOM bytes, then the skeleton */
    uint8_t *dig;      /* the digits, each run followed by ',' */
    size_t sn, dn, skel_cap, dig_cap;
    size_t plain;      /* the entries' bytes gathered */
    int in_run;        /* the last byte gathered was a digit (its run's ','
                        * is written when the run ends) */
    uint8_t *out;      /* level 1: the block's frames */
    size_t out_len, out_cap;
    int state;         /* SLOT_*, under the writer's mu */
    int rc;            /* the compression's result, when done */
    uint64_t seq;      /* queued: the threads take the oldest first */
} wslot;

/* Scratch for packing one record: kept from record to record. */
typedef struct {
    uint8_t *pack;     /* one packed entry */
    size_t pack_cap;
    Yangblast__HeaderField *fields, **fp; /* one record's headers */
    size_t fields_cap;
} wscratch;

/* What a compressing thread owns: level 1's contexts. */
typedef struct {
    ZSTD_CCtx *cctx, *dig; /* the skeletons' frames, the digits' */
#if ZSTD_VERSION_NUMBER >= 10500
    ZSTD_Sequence *seq;    /* compress_digits' sequences, seq_cap of them */
    size_t seq_cap;
#endif
} wcomp;

/* Slots: one being gathered, one per thread compressing, one compressed
 * by the writer's own thread, one queued and one done waiting to be
 * written. */
#define SLOTS_MAX (YB_CORPUS_THREADS_MAX + 4u)

struct yb_corpus_writer {
    int fd;            /* fileno(out.f): written unbuffered, never through out.f */
    yb_outfile of;     /* temporary file renamed into place, or written in place */
    int open;          /* of is open */
    ZSTD_CCtx *cctx;
    uint8_t *out;      /* compressed output buffer, IO_CHUNK */
    wscratch sc;
    uint64_t count;
    int failed;        /* negative errno once a write failed */
    int spliced;       /* records and trailer copied in by yb_corpus_writer_splice */
    tally t;           /* of the records added, for the summary */
    int split;         /* format 2: entries gathered into blocks, digits apart */
    int frames;        /* level 1: each block a zstd frame of its own */
    wslot slot[SLOTS_MAX]; /* blocks: slot[cur] is being gathered; the
                        * inflight ones before it, from head on, are
                        * compressed or being compressed, and written in
                        * that order */
    unsigned nslots, cur, head, inflight;
    wcomp comp;        /* this thread's split (and, level 1, frames) */
    /* level 1: threads compressing the queued blocks, oldest first */
    unsigned want_threads, nthreads;
    unsigned queued;   /* blocks queued that no thread has taken, under mu */
    uint64_t next_seq; /* the next block's seq */
    int waiting;       /* this thread waits for a block's frames, under mu */
    pthread_t thr[YB_CORPUS_THREADS_MAX];
    pthread_mutex_t mu;
    pthread_cond_t cv_job, cv_done;
    int sync;          /* mu and the conditions initialised */
    int quit;          /* the threads are to end */
};

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Compresses n bytes (mode ZSTD_e_continue or ZSTD_e_end) and writes the
 * output.  Returns 0 or a negative errno (-EIO for a zstd failure). */
static int wr_compress(yb_corpus_writer *w, const void *src, size_t n, ZSTD_EndDirective mode)
{
    ZSTD_inBuffer in = {src, n, 0};
    for (;;) {
        ZSTD_outBuffer out = {w->out, IO_CHUNK, 0};
        size_t rem = ZSTD_compressStream2(w->cctx, &out, &in, mode);
        if (ZSTD_isError(rem))
            return -EIO;
        int rc = write_all(w->fd, w->out, out.pos);
        if (rc)
            return rc;
        if (mode != ZSTD_e_continue ? rem == 0 : in.pos == in.size)
            return 0;
    }
}

/* Makes *buf at least n bytes long.  Returns 0 or -ENOMEM. */
static int grow_to(uint8_t **buf, size_t *cap, size_t n)
{
    if (n <= *cap)
        return 0;
    uint8_t *p = realloc(*buf, n);
    if (!p)
        return -ENOMEM;
    *buf = p;
    *cap = n;
    return 0;
}

/* Makes room in s for n more bytes of entries. Returns 0 or -ENOMEM. */
static int slot_room(wslot *s, size_t n)
{
    size_t want = s->sn + n + LENS_ROOM + 16; /* (16: split_more's wide copy) */
    if (want > s->skel_cap && grow_to(&s->skel, &s->skel_cap, want > SPLIT_BLOCK + 4096 ? want + want / 2 : SPLIT_BLOCK + 4096))
        return -ENOMEM;
    want = s->dn + 2 * n + 1; /* (a run of one digit and its ',' per byte) */
    if (want > s->dig_cap && grow_to(&s->dig, &s->dig_cap, want > SPLIT_BLOCK / 8 ? want + want / 2 : SPLIT_BLOCK / 8))
        return -ENOMEM;
    return 0;
}

/* Appends in[0..n) to s's parts (slot_room first): each run of digits
 * becomes one '0' in the skeleton and itself and a ',' in the digits, a
 * run going on from the bytes gathered before.  16 bytes at a time up to
 * each run (the bytes copied past it are overwritten). */
static void split_more(wslot *s, const uint8_t *in, size_t n)
{
    uint8_t *skel = s->skel + LENS_ROOM, *dig = s->dig;
    size_t k = s->sn, d = s->dn, i = 0;
    int run = s->in_run;
    while (i < n) {
        if (!run) {
#ifdef __SSE2__
            if (i + 16 <= n) {
                memcpy(skel + k, in + i, 16);
                unsigned m = digits16(in + i);
                unsigned adv = m ? (unsigned)__builtin_ctz(m) : 16;
                k += adv;
                i += adv;
                if (adv == 16)
                    continue;
            }
#endif
            if (!is_digit(in[i])) {
                skel[k++] = in[i++];
                continue;
            }
            skel[k++] = '0';
            run = 1;
        }
        while (i < n && is_digit(in[i]))
            dig[d++] = in[i++];
        if (i < n) {
            dig[d++] = ',';
            run = 0;
        }
    }
    s->sn = k;
    s->dn = d;
    s->in_run = run;
    s->plain += n;
}

/* Returns how many of p[0..n) are c. */
static size_t count_byte(const uint8_t *p, size_t n, uint8_t c)
{
    size_t k = 0, i = 0;
#ifdef __SSE2__
    /* 16 counters of a byte each, 64 bytes a round, summed every 63
     * rounds (at most 4 * 63 in a counter) */
    __m128i want = _mm_set1_epi8((char)c), zero = _mm_setzero_si128();
    while (i + 64 <= n) {
        __m128i acc = zero;
        for (unsigned r = 0; r < 63 && i + 64 <= n; r++, i += 64) {
            const __m128i *q = (const __m128i *)(const void *)(p + i);
            __m128i e0 = _mm_cmpeq_epi8(_mm_loadu_si128(q), want),
                    e1 = _mm_cmpeq_epi8(_mm_loadu_si128(q + 1), want),
                    e2 = _mm_cmpeq_epi8(_mm_loadu_si128(q + 2), want),
                    e3 = _mm_cmpeq_epi8(_mm_loadu_si128(q + 3), want);
            acc = _mm_sub_epi8(acc, _mm_add_epi8(_mm_add_epi8(e0, e1), _mm_add_epi8(e2, e3)));
        }
        __m128i sums = _mm_sad_epu8(acc, zero);
        k += (size_t)_mm_cvtsi128_si32(sums) + (size_t)_mm_extract_epi16(sums, 4);
    }
#endif
    for (; i < n; i++)
        k += p[i] == c;
    return k;
}

/* Whether a body's parts, split already (sn skeleton bytes holding
 * `markers` '0's, dn digit bytes holding `runs` ','s), make len bytes:
 * a run for every marker, each of at least one digit and its comma, and
 * the rest.  Returns 1 or 0. */
static int parts_fit(size_t markers, size_t runs, size_t sn, size_t dn, size_t len)
{
    return markers == runs && dn >= 2 * runs && sn + dn - 2 * runs == len;
}

/* Appends bytes given split already (skel[0..sn) and dig[0..dn), as
 * split_digits makes them of those bytes alone) to s's parts, as
 * split_more would have split them.  Returns the parts' markers ('0' in
 * the skeleton) and runs (',' in the digits), counted as they are
 * copied (each part counted while in cache, then copied), in runs[0]
 * and runs[1]. */
static void split_join(wslot *s, const uint8_t *skel, size_t sn, const uint8_t *dig, size_t dn,
                       size_t runs[2])
{
    runs[0] = runs[1] = 0;
    if (!sn)
        return;
    int ends_run = skel[sn - 1] == '0';
    if (s->in_run && skel[0] == '0') { /* the run goes on */
        skel++;
        sn--;
        runs[0] = 1;
    } else if (s->in_run) {
        s->dig[s->dn++] = ',';
    }
    runs[0] += count_byte(skel, sn, '0');
    memcpy(s->skel + LENS_ROOM + s->sn, skel, sn);
    runs[1] = count_byte(dig, dn, ',');
    memcpy(s->dig + s->dn, dig, dn);
    s->sn += sn;
    s->dn += dn;
    s->in_run = ends_run;
    if (ends_run) /* (its ',' when it ends) */
        s->dn--;
}

/* Ends s's last run: the parts are complete. */
static void split_end(wslot *s)
{
    if (s->in_run)
        s->dig[s->dn++] = ',';
    s->in_run = 0;
}

/* Writes the two parts' lengths right before the skeleton; returns their
 * length. */
static size_t slot_lens(wslot *s)
{
    uint8_t lens[LENS_ROOM];
    size_t ln = yb_varint_put(lens, s->sn);
    ln += yb_varint_put(lens + ln, s->dn);
    memcpy(s->skel + LENS_ROOM - ln, lens, ln);
    return ln;
}

/* Level 1: after each block's zstd frame, a checksum frame: a zstd
 * skippable frame (ignored by zstd and by readers that do not know it)
 * whose 8 bytes of content are CK_TAG and the CRC-32 (zlib's, little-
 * endian) of the frame's compressed bytes, header to end.  A reader that
 * finds it checks those bytes instead of zstd's checksum of the frame's
 * output, many times as many bytes (about 45 times for synth's ACL
 * records: rd_frame). */
#define CK_MAGIC 0x184D2A5Cu /* (the summary's is SKIP_MAGIC) */
#define CK_LEN 16u
static const uint8_t CK_TAG[4] = {'Y', 'B', 'C', 'K'};

/* Writes the checksum frame of the n compressed bytes at z to p (CK_LEN
 * bytes). */
static void put_ck(uint8_t *p, const uint8_t *z, size_t n)
{
    put_le32(p, CK_MAGIC);
    put_le32(p + 4, CK_LEN - 8);
    memcpy(p + 8, CK_TAG, sizeof CK_TAG);
    put_le32(p + 12, (uint32_t)crc32_z(0, z, n));
}

/* Level 1: compresses the n digits at src into a frame at o (cap bytes)
 * of literals only: its blocks have no sequences, so that reading them
 * is Huffman decoding and no match to copy.  The digits, random in most
 * records, match little, and what matches is short (",4,000001,"): with
 * matches (level 1, a small table, matches of 7 bytes and more) synth's
 * ACL digits took 15% fewer bytes and twice as long to decode.  Returns
 * the frame's length or a zstd error code. */
static size_t compress_digits(wcomp *c, uint8_t *o, size_t cap, const uint8_t *src, size_t n)
{
#if ZSTD_VERSION_NUMBER >= 10500
    size_t ns = (n + ZSTD_BLOCKSIZE_MAX - 1) / ZSTD_BLOCKSIZE_MAX;
    if (ns > c->seq_cap) {
        ZSTD_Sequence *q = realloc(c->seq, ns * sizeof *q);
        if (!q)
            return (size_t)-ZSTD_error_memory_allocation;
        c->seq = q;
        c->seq_cap = ns;
    }
    /* one delimiter a block (offset and match 0) holding its literals */
    for (size_t k = 0; k < ns; k++) {
        size_t l = n - k * ZSTD_BLOCKSIZE_MAX;
        c->seq[k] = (ZSTD_Sequence){.litLength = (unsigned)(l < ZSTD_BLOCKSIZE_MAX
                                                                ? l : ZSTD_BLOCKSIZE_MAX)};
    }
    return ZSTD_compressSequences(c->dig, o, cap, c->seq, ns, src, n);
#else
    return ZSTD_compress2(c->dig, o, cap, src, n);
#endif
}

/* Level 1: compresses slot s's block as two zstd frames of their own
 * into s->out, each followed by its checksum frame: its lengths and
 * skeleton, then its digits (with literals' statistics of their own).
 * Frames depend only on their block, so the file is the same whichever
 * thread made each.  One call per frame, from the slot's buffers: no
 * copy into zstd's.  Returns 0 or a negative errno. */
static int frame_block(wcomp *c, wslot *s)
{
    size_t ln = slot_lens(s);
    size_t b1 = ZSTD_compressBound(ln + s->sn), b2 = ZSTD_compressBound(s->dn);
    if (grow_to(&s->out, &s->out_cap, b1 + b2 + 2 * CK_LEN))
        return -ENOMEM;
    uint8_t *o = s->out;
    size_t z1 = ZSTD_compress2(c->cctx, o, b1, s->skel + LENS_ROOM - ln, ln + s->sn);
    if (ZSTD_isError(z1))
        return -EIO;
    put_ck(o + z1, o, z1);
    o += z1 + CK_LEN;
    size_t z2 = compress_digits(c, o, b2, s->dig, s->dn);
    if (ZSTD_isError(z2))
        return -EIO;
    put_ck(o + z2, o, z2);
    s->out_len = z1 + z2 + 2 * CK_LEN;
    return 0;
}

/* Makes c's contexts for level 1's frames.  Returns 0 or -ENOMEM. */
static int comp_init(wcomp *c)
{
    c->cctx = ZSTD_createCCtx();
    c->dig = ZSTD_createCCtx();
    if (!c->cctx || !c->dig)
        return -ENOMEM;
    ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, 1);
    ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_checksumFlag, 1);
    /* the skeletons: level 1's tables with the double-hash search (level
     * 2's), which finds the longer matches of a record's skeleton with the
     * ones before it: fewer sequences, read in three quarters of the time,
     * a sixteenth smaller, written in 7% more time (bench/README.md,
     * corpus_memory.sh) */
    ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_strategy, ZSTD_dfast);
    ZSTD_CCtx_setParameter(c->dig, ZSTD_c_compressionLevel, 1);
    ZSTD_CCtx_setParameter(c->dig, ZSTD_c_checksumFlag, 1);
#if ZSTD_VERSION_NUMBER >= 10500
    /* the sequences are compress_digits' own */
    ZSTD_CCtx_setParameter(c->dig, ZSTD_c_blockDelimiters, ZSTD_sf_explicitBlockDelimiters);
#else
    ZSTD_CCtx_setParameter(c->dig, ZSTD_c_hashLog, 10);
    ZSTD_CCtx_setParameter(c->dig, ZSTD_c_minMatch, 7);
#endif
    return 0;
}

static void comp_free(wcomp *c)
{
    ZSTD_freeCCtx(c->cctx);
    ZSTD_freeCCtx(c->dig);
#if ZSTD_VERSION_NUMBER >= 10500
    free(c->seq);
#endif
}

/* The oldest queued slot, or NULL (under mu). */
static wslot *oldest_queued(yb_corpus_writer *w)
{
    wslot *o = NULL;
    for (unsigned i = 0; i < w->nslots && w->queued; i++)
        if (w->slot[i].state == SLOT_QUEUED && (!o || w->slot[i].seq < o->seq))
            o = &w->slot[i];
    return o;
}

/* A level-1 writer's thread: compresses the queued slots, oldest first,
 * until told to quit. */
static void *compressor(void *arg)
{
    yb_corpus_writer *w = arg;
    wcomp c = {0};
    int ok = comp_init(&c) == 0;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        wslot *s;
        while (!w->quit && !(s = oldest_queued(w)))
            pthread_cond_wait(&w->cv_job, &w->mu);
        if (w->quit)
            break;
        s->state = SLOT_BUSY;
        w->queued--;
        pthread_mutex_unlock(&w->mu);
        int rc = ok ? frame_block(&c, s) : -ENOMEM;
        pthread_mutex_lock(&w->mu);
        s->rc = rc;
        s->state = SLOT_DONE;
        if (w->waiting) /* (a wake-up only when one is awaited) */
            pthread_cond_signal(&w->cv_done);
    }
    pthread_mutex_unlock(&w->mu);
    comp_free(&c);
    return NULL;
}

/* Starts the compressing threads asked for (as many as the system gives:
 * none, and the blocks are compressed in the caller's thread). */
static void start_compressors(yb_corpus_writer *w)
{
    if (pthread_mutex_init(&w->mu, NULL))
        goto none;
    if (pthread_cond_init(&w->cv_job, NULL)) {
        pthread_mutex_destroy(&w->mu);
        goto none;
    }
    if (pthread_cond_init(&w->cv_done, NULL)) {
        pthread_cond_destroy(&w->cv_job);
        pthread_mutex_destroy(&w->mu);
        goto none;
    }
    w->sync = 1;
    while (w->nthreads < w->want_threads &&
           !pthread_create(&w->thr[w->nthreads], NULL, compressor, w))
        w->nthreads++;
    pthread_mutex_lock(&w->mu); /* (read by the threads once a slot is queued) */
    w->nslots = w->nthreads ? w->nthreads + 4 : 1;
    pthread_mutex_unlock(&w->mu);
none:
    w->want_threads = 0;
}

static void stop_compressors(yb_corpus_writer *w)
{
    if (!w->sync)
        return;
    pthread_mutex_lock(&w->mu);
    w->quit = 1;
    pthread_cond_broadcast(&w->cv_job);
    pthread_mutex_unlock(&w->mu);
    for (unsigned i = 0; i < w->nthreads; i++)
        pthread_join(w->thr[i], NULL);
    pthread_cond_destroy(&w->cv_done);
    pthread_cond_destroy(&w->cv_job);
    pthread_mutex_destroy(&w->mu);
    w->sync = 0;
    w->nthreads = 0;
}

/* Empties s for the next block. */
static void slot_clear(wslot *s)
{
    s->sn = s->dn = s->plain = 0;
    s->in_run = 0;
}

/* Sets s's state, under mu when threads may look at it. */
static void slot_state(yb_corpus_writer *w, wslot *s, int state)
{
    if (w->sync)
        pthread_mutex_lock(&w->mu);
    s->state = state;
    if (w->sync)
        pthread_mutex_unlock(&w->mu);
}

/* Writes the compressed blocks from the oldest on, in order, up to the
 * first not compressed yet.  It is waited for when all is set (at the
 * end), or when every slot is in flight (the next one to gather into is
 * the oldest).  Returns 0 or a negative errno. */
static int write_done(yb_corpus_writer *w, int all)
{
    while (w->inflight) {
        wslot *s = &w->slot[w->head];
        if (w->sync) {
            int wait = all || w->inflight == w->nslots;
            pthread_mutex_lock(&w->mu);
            while (wait && s->state != SLOT_DONE) {
                w->waiting = 1;
                pthread_cond_wait(&w->cv_done, &w->mu);
            }
            w->waiting = 0;
            int done = s->state == SLOT_DONE;
            pthread_mutex_unlock(&w->mu);
            if (!done)
                return 0;
        }
        int rc = s->rc ? s->rc : write_all(w->fd, s->out, s->out_len);
        slot_clear(s);
        slot_state(w, s, SLOT_FREE);
        w->head = (w->head + 1) % w->nslots;
        w->inflight--;
        if (rc)
            return rc;
    }
    return 0;
}

/* Level 1: hands the gathered block to a thread, or compresses it here
 * when the threads have one waiting already (or there are none): so the
 * compressing is shared between the threads and this one, which
 * otherwise would wait for them, its CPU given to them (with as many
 * threads as CPUs, the scheduler shares this thread's CPU with them:
 * the records are made at 2/3 of the speed).  Here, the block's bytes
 * are still in this CPU's cache.  Then the blocks compressed are
 * written, in order.  Returns 0 or a negative errno. */
static int queue_block(yb_corpus_writer *w)
{
    wslot *s = &w->slot[w->cur];
    if (w->want_threads)
        start_compressors(w);
    int here = 1;
    if (w->nthreads) {
        pthread_mutex_lock(&w->mu);
        here = w->queued > 0;
        s->state = here ? SLOT_BUSY : SLOT_QUEUED;
        if (!here) {
            s->seq = w->next_seq++;
            w->queued++;
            pthread_cond_signal(&w->cv_job);
        }
        pthread_mutex_unlock(&w->mu);
    }
    if (here) {
        s->rc = frame_block(&w->comp, s);
        slot_state(w, s, SLOT_DONE);
    }
    w->cur = (w->cur + 1) % w->nslots;
    w->inflight++;
    return write_done(w, 0);
}

/* Compresses the gathered block as its skeleton and digits, each
 * prefixed with its length: in the records' stream, or at level 1 as a
 * frame of its own.  Returns 0 or a negative errno. */
static int wr_block(yb_corpus_writer *w)
{
    wslot *s = &w->slot[w->cur];
    if (!s->plain)
        return 0;
    split_end(s);
    if (w->frames)
        return queue_block(w);
    size_t ln = slot_lens(s);
    /* each part ends a zstd block: the digits get literals' statistics
     * of their own */
    int rc = wr_compress(w, s->skel + LENS_ROOM - ln, ln, ZSTD_e_continue);
    if (!rc)
        rc = wr_compress(w, s->skel + LENS_ROOM, s->sn, ZSTD_e_flush);
    if (!rc)
        rc = wr_compress(w, s->dig, s->dn, ZSTD_e_flush);
    slot_clear(s);
    return rc;
}

/* Appends n bytes of whole entries to s's parts, split.  Returns 0 or
 * -ENOMEM. */
static int slot_add(wslot *s, const uint8_t *p, size_t n)
{
    if (slot_room(s, n))
        return -ENOMEM;
    split_more(s, p, n);
    return 0;
}

/* Gathers n bytes of whole entries into the block, split; the block is
 * compressed once it holds SPLIT_BLOCK bytes.  Returns 0 or a negative
 * errno. */
static int wr_split(yb_corpus_writer *w, const uint8_t *p, size_t n)
{
    wslot *s = &w->slot[w->cur];
    int rc = slot_add(s, p, n);
    return rc ? rc : s->plain >= SPLIT_BLOCK ? wr_block(w) : 0;
}

/* Packs one Entry with its varint prefix into sc->pack: *out, *n.
 * bound: an upper bound of its packed size (request_entry_bound), which
 * spares protobuf-c's sizing pass over the record (every header twice);
 * 0: sized first.  Returns 0 or a negative errno (-EFBIG when the entry
 * exceeds YB_CORPUS_MAX_ENTRY). */
static int pack_entry(wscratch *sc, const Yangblast__Entry *e, size_t bound, uint8_t **out,
                      size_t *n)
{
    if (!bound) {
        size_t len = protobuf_c_message_get_packed_size(&e->base);
        if (len > YB_CORPUS_MAX_ENTRY)
            return -EFBIG;
        if (grow_to(&sc->pack, &sc->pack_cap, len + 10))
            return -ENOMEM;
        size_t h = yb_varint_put(sc->pack, len);
        protobuf_c_message_pack(&e->base, sc->pack + h);
        *out = sc->pack;
        *n = h + len;
        return 0;
    }
    if (grow_to(&sc->pack, &sc->pack_cap, bound + 10))
        return -ENOMEM;
    size_t len = protobuf_c_message_pack(&e->base, sc->pack + 10);
    if (len > bound)
        abort(); /* the bound is wrong: memory was overrun */
    uint8_t lp[10];
    size_t h = yb_varint_put(lp, len);
    *out = sc->pack + 10 - h;
    memcpy(*out, lp, h);
    *n = h + len;
    return 0;
}

/* Writes n bytes of packed entries: gathered into the block (format 2)
 * or compressed into the records' stream.  Returns 0 or a negative
 * errno. */
static int wr_packed(yb_corpus_writer *w, const uint8_t *p, size_t n)
{
    return w->split ? wr_split(w, p, n) : wr_compress(w, p, n, ZSTD_e_continue);
}

/* Packs one Entry and writes it.  Returns 0 or a negative errno. */
static int wr_entry(yb_corpus_writer *w, const Yangblast__Entry *e)
{
    uint8_t *p;
    size_t n;
    int rc = pack_entry(&w->sc, e, 0, &p, &n);
    return rc ? rc : wr_packed(w, p, n);
}

/* An upper bound of the packed size of the Entry holding r's Request, or
 * 0 when it would be near YB_CORPUS_MAX_ENTRY.  Proto3 on the wire: a tag
 * takes at most 2 bytes (field numbers up to 2047), a length or an
 * integer at most 10; the Request has 16 fields, each header is a
 * HeaderField of 2. */
static size_t request_entry_bound(const yb_request *r)
{
    uint64_t b = 12 + 16 * 12 + strlen(r->method) + strlen(r->scheme) + strlen(r->authority) +
                 strlen(r->path) + (uint64_t)r->body_len +
                 12 * ((uint64_t)r->n_accept_status + r->n_accept_grpc) + 64;
    for (size_t i = 0; i < r->n_headers; i++)
        b += 3 * 12 + strlen(r->headers[i].name) + (uint64_t)r->headers[i].value_len;
    return b < YB_CORPUS_MAX_ENTRY ? (size_t)b : 0;
}

static uint64_t creation_time_ns(void)
{
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    uint64_t v;
    if (sde && yb_parse_u64(sde, 0, UINT64_MAX / 1000000000ull, &v) == 0)
        return v * 1000000000ull;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void scratch_free(wscratch *sc)
{
    free(sc->pack);
    free(sc->fields);
    free(sc->fp);
}

static void writer_free(yb_corpus_writer *w)
{
    if (w->open)
        yb_outfile_abort(&w->of);
    ZSTD_freeCCtx(w->cctx);
    free(w->out);
    scratch_free(&w->sc);
    stop_compressors(w);
    for (unsigned i = 0; i < SLOTS_MAX; i++) {
        free(w->slot[i].skel);
        free(w->slot[i].dig);
        free(w->slot[i].out);
    }
    comp_free(&w->comp);
    free(w);
}

yb_corpus_writer *yb_corpus_writer_open(const char *path, const yb_corpus_header *h, char *err,
                                        size_t errlen)
{
    if (h->level > YB_CORPUS_LEVEL_MAX) {
        seterr(err, errlen, "%s: compression level %u is not in %u..%u", path, h->level,
               YB_CORPUS_LEVEL_MIN, YB_CORPUS_LEVEL_MAX);
        return NULL;
    }
    yb_corpus_writer *w = calloc(1, sizeof *w);
    if (!w) {
        seterr(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    w->fd = -1;
    tally_init(&w->t);
    w->cctx = ZSTD_createCCtx();
    w->out = malloc(IO_CHUNK);
    if (!w->cctx || !w->out)
        goto oom;
    ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, (int)YB_CORPUS_LEVEL_DEFAULT);
    ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);

    if (yb_outfile_open(&w->of, path, 0, err, errlen) < 0) {
        writer_free(w);
        return NULL;
    }
    w->open = 1;
    w->fd = fileno(w->of.f);

    /* the levels chosen for size, and level 1, keep digits apart
     * (format 2) */
    int split = h->level >= YB_CORPUS_SPLIT_LEVEL || h->level == 1;
    Yangblast__Header ph = YANGBLAST__HEADER__INIT;
    ph.format_version = split ? YB_CORPUS_FORMAT_SPLIT : YB_CORPUS_FORMAT_VERSION;
    ph.created_unix_ns = h->created_unix_ns ? h->created_unix_ns : creation_time_ns();
    ph.producer = h->producer;
    ph.source = h->source;
    ph.n_redactions = h->n_redactions;
    ph.redactions = h->redactions;
    ph.compression_level = h->level;
    Yangblast__Entry e = YANGBLAST__ENTRY__INIT;
    e.kind_case = YANGBLAST__ENTRY__KIND_HEADER;
    e.header = &ph;
    int rc = wr_compress(w, MAGIC, sizeof MAGIC, ZSTD_e_continue);
    if (!rc)
        rc = wr_entry(w, &e);
    /* The magic and header make a frame of their own, so that
     * yb_corpus_writer_splice can put another header before the records
     * of a corpus without decompressing them. */
    if (!rc)
        rc = wr_compress(w, NULL, 0, ZSTD_e_end);
    /* The records' frame at the header's level; the window stays at most
     * 2 MiB (level 3's) whatever the level, so a reader needs no more
     * memory for a smaller file. */
    if (!rc && h->level) {
        size_t zr = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, (int)h->level);
        if (!ZSTD_isError(zr) && h->level > 3)
            zr = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_windowLog, 21);
        if (ZSTD_isError(zr))
            rc = -EIO;
    }
    /* Level 1, the level chosen for speed (synth's default), makes each
     * block a zstd frame of its own (its skeleton needs no earlier block
     * to match the records before it), compressed in a worker thread (or
     * more: yb_corpus_writer_set_threads) while the caller makes the next
     * records; the frames depend only on their blocks, so the file is
     * the same whatever the thread count, and tied to the level, which
     * the header records, a rewrite of the records writes the same file.
     * Other levels keep one stream in the caller's thread (at level 3,
     * zstd's jobs cost capture 15 % more CPU, 3x the memory and 14 % in
     * size). */
    w->split = split;
    w->nslots = 1;
    if (!rc && h->level == 1) {
        w->frames = 1;
        w->want_threads = 1;
        rc = comp_init(&w->comp);
    }
    if (rc) {
        seterr(err, errlen, "%s: cannot write: %s", path, strerror(-rc));
        yb_corpus_writer_abort(w);
        return NULL;
    }
    return w;
oom:
    seterr(err, errlen, "%s: out of memory", path);
    writer_free(w);
    return NULL;
}

/* The Request message of r (its body included), pointing into r and into
 * sc's and acc's scratch.  Returns 0 or a negative errno. */
static int fill_request(wscratch *sc, const yb_request *r, Yangblast__Request *pr,
                        uint32_t acc[2][YB_REQUEST_MAX_ACCEPT])
{
    if (r->n_headers > sc->fields_cap) { /* kept: records mostly have as many */
        Yangblast__HeaderField *f = realloc(sc->fields, r->n_headers * sizeof *f);
        if (f)
            sc->fields = f;
        Yangblast__HeaderField **p = realloc(sc->fp, r->n_headers * sizeof *p);
        if (p)
            sc->fp = p;
        if (!f || !p)
            return -ENOMEM;
        sc->fields_cap = r->n_headers;
    }
    Yangblast__HeaderField *fields = sc->fields, **fp = sc->fp;
    for (size_t i = 0; i < r->n_headers; i++) {
        yangblast__header_field__init(&fields[i]);
        fields[i].name = r->headers[i].name;
        fields[i].value.data = r->headers[i].value;
        fields[i].value.len = r->headers[i].value_len;
        fp[i] = &fields[i];
    }
    yangblast__request__init(pr);
    pr->protocol = (Yangblast__Protocol)r->protocol;
    pr->method = r->method;
    pr->scheme = r->scheme;
    pr->authority = r->authority;
    pr->path = r->path;
    pr->n_headers = r->n_headers;
    pr->headers = fp;
    pr->body.data = r->body;
    pr->body.len = r->body_len;
    pr->timestamp_ns = r->timestamp_ns;
    pr->conn_id = r->conn_id;
    pr->conn_order = r->conn_order;
    pr->expected_status = r->expected_status;
    pr->expected_grpc_status = r->expected_grpc < 0 ? 0 : r->expected_grpc + 1;
    pr->templated = r->templated != 0;
    for (size_t i = 0; i < r->n_accept_status; i++) /* (at most 16: checked before) */
        acc[0][i] = r->accept_status[i];
    for (size_t i = 0; i < r->n_accept_grpc; i++)
        acc[1][i] = r->accept_grpc[i];
    pr->n_accept_status = r->n_accept_status;
    pr->accept_status = acc[0];
    pr->n_accept_grpc_status = r->n_accept_grpc;
    pr->accept_grpc_status = acc[1];
    pr->chain = r->chain;
    return 0;
}

/* Whether w takes records: returns 0, or the error that poisons (or
 * poisoned) it. */
static int add_ready(yb_corpus_writer *w)
{
    if (w->failed)
        return w->failed;
    if (w->spliced)
        return w->failed = -EINVAL;
    return 0;
}

/* add_ready, and r must pass yb_request_problem. */
static int add_check(yb_corpus_writer *w, const yb_request *r)
{
    int rc = add_ready(w);
    if (!rc && yb_request_problem(r)) /* poisons the writer, as documented */
        rc = w->failed = -EINVAL;
    return rc;
}

/* Packs r as a Request entry with its varint prefix into sc->pack: *p,
 * *n.  Returns 0 or a negative errno. */
static int pack_request(wscratch *sc, const yb_request *r, uint8_t **p, size_t *n)
{
    Yangblast__Request pr;
    uint32_t acc[2][YB_REQUEST_MAX_ACCEPT];
    int rc = fill_request(sc, r, &pr, acc);
    if (rc)
        return rc;
    Yangblast__Entry e = YANGBLAST__ENTRY__INIT;
    e.kind_case = YANGBLAST__ENTRY__KIND_REQUEST;
    e.request = &pr;
    return pack_entry(sc, &e, request_entry_bound(r), p, n);
}

/* Packs r as an entry and writes it.  Returns 0 or a negative errno. */
static int add_whole(yb_corpus_writer *w, const yb_request *r)
{
    uint8_t *p;
    size_t n;
    int rc = pack_request(&w->sc, r, &p, &n);
    return rc ? rc : wr_packed(w, p, n);
}

/* Counts r as added, or poisons the writer with rc.  Returns rc. */
static int added(yb_corpus_writer *w, const yb_request *r, int rc)
{
    if (rc)
        return w->failed = rc;
    w->count++;
    tally_add(&w->t, r);
    return 0;
}

int yb_corpus_writer_add(yb_corpus_writer *w, const yb_request *r)
{
    int rc = add_check(w, r);
    return rc ? rc : added(w, r, add_whole(w, r));
}

int yb_corpus_writer_add_checked(yb_corpus_writer *w, const yb_request *r)
{
    int rc = add_ready(w);
    return rc ? rc : added(w, r, add_whole(w, r));
}

/* Whether a body's parts may make r->body_len bytes: at most that many in
 * the skeleton, each digit apart with at most one ',' (the counts are
 * checked as the parts are gathered in format 2). */
static int split_fits(const yb_request *r, size_t sn, const uint8_t *dig, size_t dn)
{
    return r->body_len && sn <= r->body_len && dn <= 2 * r->body_len &&
           (!dn || dig[dn - 1] == ',');
}

/* Format 2: gathers r, whose body comes split, into the block: the
 * entry's bytes before the body and after it split as they come, the
 * body's parts joined to them.  The Request's fields are packed in field
 * order (1..16), so its bytes are those before the body (1..6), the
 * body (7) and those after it (8..16).  Returns 0 or a negative errno
 * (-EINVAL: parts that do not make the body). */
static int gather_split(wscratch *sc, wslot *s, const yb_request *r, const uint8_t *skel,
                        size_t sn, const uint8_t *dig, size_t dn)
{
    if (!split_fits(r, sn, dig, dn))
        return -EINVAL;
    Yangblast__Request pr, head, tail;
    uint32_t acc[2][YB_REQUEST_MAX_ACCEPT];
    int rc = fill_request(sc, r, &pr, acc);
    if (rc)
        return rc;
    yangblast__request__init(&head);
    head.protocol = pr.protocol;
    head.method = pr.method;
    head.scheme = pr.scheme;
    head.authority = pr.authority;
    head.path = pr.path;
    head.n_headers = pr.n_headers;
    head.headers = pr.headers;
    tail = pr;
    tail.protocol = 0;
    tail.method = tail.scheme = tail.authority = tail.path = NULL;
    tail.n_headers = 0;
    tail.headers = NULL;
    tail.body.len = 0;
    tail.body.data = NULL;
    size_t hl = protobuf_c_message_get_packed_size(&head.base);
    size_t tl = protobuf_c_message_get_packed_size(&tail.base);
    uint64_t req = hl + 1 + yb_varint_len(r->body_len) + r->body_len + tl;
    uint64_t entry = 1 + yb_varint_len(req) + req;
    if (entry > YB_CORPUS_MAX_ENTRY)
        return -EFBIG;
    if (grow_to(&sc->pack, &sc->pack_cap, hl + tl + 40))
        return -ENOMEM;
    uint8_t *p = sc->pack;
    size_t n = yb_varint_put(p, entry);
    p[n++] = 0x12; /* Entry.request, length-delimited */
    n += yb_varint_put(p + n, req);
    n += protobuf_c_message_pack(&head.base, p + n);
    p[n++] = 0x3a; /* Request.body, length-delimited */
    n += yb_varint_put(p + n, r->body_len);
    size_t t0 = n;
    n += protobuf_c_message_pack(&tail.base, p + n);
    if (slot_room(s, n + r->body_len)) /* (sn <= body_len, dn <= 2 body_len: checked) */
        return -ENOMEM;
    split_more(s, p, t0);
    size_t runs[2];
    split_join(s, skel, sn, dig, dn, runs);
    /* the parts must make r->body_len bytes: as many markers as runs,
     * and the rest (else the writer is poisoned: what it gathered is
     * never written) */
    if (!parts_fit(runs[0], runs[1], sn, dn, r->body_len))
        return -EINVAL;
    s->plain += r->body_len;
    split_more(s, p + t0, n - t0);
    return 0;
}

/* gather_split into w's block, compressed once full. */
static int add_split_block(yb_corpus_writer *w, const yb_request *r, const uint8_t *skel,
                           size_t sn, const uint8_t *dig, size_t dn)
{
    wslot *s = &w->slot[w->cur];
    int rc = gather_split(&w->sc, s, r, skel, sn, dig, dn);
    return rc ? rc : s->plain >= SPLIT_BLOCK ? wr_block(w) : 0;
}

int yb_corpus_writer_splits(const yb_corpus_writer *w)
{
    return w->split;
}

void yb_corpus_split(const uint8_t *b, size_t n, uint8_t *skel, size_t *sn, uint8_t *dig,
                     size_t *dn)
{
    size_t s = 0, d = 0;
    for (size_t i = 0; i < n;) {
        if (!is_digit(b[i])) {
            skel[s++] = b[i++];
            continue;
        }
        skel[s++] = '0';
        while (i < n && is_digit(b[i]))
            dig[d++] = b[i++];
        dig[d++] = ',';
    }
    *sn = s;
    *dn = d;
}

int yb_corpus_writer_add_split(yb_corpus_writer *w, const yb_request *r, const uint8_t *skel,
                               size_t sn, const uint8_t *dig, size_t dn)
{
    int rc = add_check(w, r);
    if (rc)
        return rc;
    if (w->split)
        return added(w, r, add_split_block(w, r, skel, sn, dig, dn));
    if (!split_fits(r, sn, dig, dn) ||
        !parts_fit(count_byte(skel, sn, '0'), count_byte(dig, dn, ','), sn, dn, r->body_len))
        return w->failed = -EINVAL;
    /* format 1: the body as it is */
    yb_request whole = *r;
    uint8_t *body = malloc(r->body_len);
    rc = body ? 0 : -ENOMEM;
    if (body && join_digits(skel, sn, dig, dn, body, r->body_len) != (ptrdiff_t)r->body_len)
        rc = -EINVAL;
    whole.body = body;
    rc = added(w, r, rc ? rc : add_whole(w, &whole));
    free(body);
    return rc;
}

/* ---- blocks made apart (level 1) ---- */

/* What a block keeps of each record for the writer's summary. */
typedef struct {
    uint32_t chain;
    uint8_t protocol, templated;
} brec;

struct yb_corpus_block {
    wslot s;           /* the records, split; once sealed, their frames */
    wcomp comp;        /* made at the first seal */
    wscratch sc;
    brec *rec;         /* the records, for the summary */
    size_t n, cap;
    int failed;        /* negative errno: the block is poisoned */
    int sealed;
};

yb_corpus_block *yb_corpus_block_new(void)
{
    return calloc(1, sizeof(yb_corpus_block));
}

void yb_corpus_block_free(yb_corpus_block *b)
{
    if (!b)
        return;
    free(b->s.skel);
    free(b->s.dig);
    free(b->s.out);
    comp_free(&b->comp);
    scratch_free(&b->sc);
    free(b->rec);
    free(b);
}

/* Whether b takes r: returns 0, or the error that poisons b. */
static int block_check(yb_corpus_block *b, const yb_request *r)
{
    if (!b->failed && (b->sealed || yb_request_problem(r)))
        b->failed = -EINVAL;
    if (!b->failed && b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        brec *p = realloc(b->rec, cap * sizeof *p);
        if (!p)
            return b->failed = -ENOMEM;
        b->rec = p;
        b->cap = cap;
    }
    return b->failed;
}

/* Counts r in b, or poisons b with rc: a block is at most what a reader
 * takes (SPLIT_PART_MAX: its parts are at most twice its bytes).
 * Returns rc. */
static int block_added(yb_corpus_block *b, const yb_request *r, int rc)
{
    if (!rc && b->s.plain > SPLIT_BLOCK + YB_CORPUS_MAX_ENTRY)
        rc = -EFBIG;
    if (rc)
        return b->failed = rc;
    b->rec[b->n++] = (brec){.chain = r->chain, .protocol = (uint8_t)r->protocol,
                            .templated = r->templated != 0};
    return 0;
}

int yb_corpus_block_add(yb_corpus_block *b, const yb_request *r)
{
    int rc = block_check(b, r);
    if (rc)
        return rc;
    uint8_t *p;
    size_t n;
    rc = pack_request(&b->sc, r, &p, &n);
    return block_added(b, r, rc ? rc : slot_add(&b->s, p, n));
}

int yb_corpus_block_add_split(yb_corpus_block *b, const yb_request *r, const uint8_t *skel,
                              size_t sn, const uint8_t *dig, size_t dn)
{
    int rc = block_check(b, r);
    return rc ? rc : block_added(b, r, gather_split(&b->sc, &b->s, r, skel, sn, dig, dn));
}

uint64_t yb_corpus_block_count(const yb_corpus_block *b)
{
    return b->n;
}

int yb_corpus_block_full(const yb_corpus_block *b)
{
    return b->s.plain >= SPLIT_BLOCK;
}

void yb_corpus_block_clear(yb_corpus_block *b)
{
    b->n = 0;
    b->sealed = 0;
    b->failed = 0;
    slot_clear(&b->s);
    b->s.out_len = 0;
}

int yb_corpus_block_seal(yb_corpus_block *b)
{
    if (!b->failed && b->sealed)
        b->failed = -EINVAL;
    if (b->failed)
        return b->failed;
    b->s.out_len = 0;
    if (b->n) {
        split_end(&b->s);
        int rc = b->comp.cctx ? 0 : comp_init(&b->comp);
        rc = rc ? rc : frame_block(&b->comp, &b->s);
        if (rc)
            return b->failed = rc;
    }
    b->sealed = 1;
    return 0;
}

/* Counts b's records in w (its summary and count), and empties b. */
static void block_counted(yb_corpus_writer *w, yb_corpus_block *b)
{
    for (size_t i = 0; i < b->n; i++)
        tally_rec(&w->t, (yb_proto)b->rec[i].protocol, b->rec[i].templated, b->rec[i].chain);
    w->count += b->n;
    yb_corpus_block_clear(b);
}

int yb_corpus_writer_add_block(yb_corpus_writer *w, yb_corpus_block *b)
{
    int rc = add_ready(w);
    if (rc)
        return rc;
    rc = b->failed ? b->failed : !w->frames || !b->sealed ? -EINVAL : 0;
    if (!rc && !w->nthreads)
        w->want_threads = 0; /* (the blocks come compressed) */
    /* the records added to w before, in their blocks, first */
    if (!rc && w->slot[w->cur].plain)
        rc = wr_block(w);
    rc = rc ? rc : write_done(w, 1);
    rc = rc ? rc : write_all(w->fd, b->s.out, b->s.out_len);
    if (rc)
        return w->failed = rc;
    block_counted(w, b);
    return 0;
}

int yb_corpus_writer_adopt(yb_corpus_writer *w, yb_corpus_block *b)
{
    int rc = add_ready(w);
    if (rc)
        return rc;
    wslot *s = &w->slot[w->cur];
    rc = b->failed ? b->failed : !w->frames || b->sealed || s->plain ? -EINVAL : 0;
    if (rc)
        return w->failed = rc;
    if (!w->nthreads)
        w->want_threads = 0; /* (a thread for the last block is not worth it) */
    /* the block's buffers become the writer's gathering slot's */
    wslot t = *s;
    *s = b->s;
    s->state = t.state;
    s->seq = t.seq;
    b->s = t;
    block_counted(w, b);
    return 0;
}

/* Returns the length of the first zstd frame of the file open on fd (read
 * from its start), or 0 with err when the file does not start with a
 * frame holding exactly the magic and one header entry, or its records
 * are (split = 0) or are not (split = 1) in format 2. */
static uint64_t header_frame_len(int fd, int split, const char *path, char *err, size_t errlen)
{
    enum { HDR_MAX = 1u << 20 }; /* a header frame is far smaller */
    uint8_t *buf = malloc(HDR_MAX), *plain = NULL;
    uint64_t len = 0;
    size_t n = 0;
    if (!buf)
        goto oom;
    while (n < HDR_MAX) {
        ssize_t k = pread(fd, buf + n, HDR_MAX - n, (off_t)n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            seterr(err, errlen, "%s: read error: %s", path, strerror(errno));
            goto out;
        }
        if (k == 0)
            break;
        n += (size_t)k;
    }
    size_t flen = ZSTD_findFrameCompressedSize(buf, n);
    unsigned long long plen = ZSTD_isError(flen) ? 0 : ZSTD_getFrameContentSize(buf, flen);
    if (plen == ZSTD_CONTENTSIZE_UNKNOWN) /* (streamed: the size is not in the frame) */
        plen = HDR_MAX;
    if (ZSTD_isError(flen) || plen == ZSTD_CONTENTSIZE_ERROR || plen > HDR_MAX)
        goto bad;
    if (!(plain = malloc(plen ? (size_t)plen : 1)))
        goto oom;
    size_t got = ZSTD_decompress(plain, (size_t)plen, buf, flen);
    if (ZSTD_isError(got) || got < sizeof MAGIC + 1 || memcmp(plain, MAGIC, sizeof MAGIC))
        goto bad;
    uint64_t elen = 0;
    size_t i = sizeof MAGIC;
    for (unsigned sh = 0; i < got && sh < 35; sh += 7) {
        elen |= (uint64_t)(plain[i] & 0x7f) << sh;
        if (!(plain[i++] & 0x80))
            break;
    }
    if (i + elen != got)
        goto bad;
    Yangblast__Entry *e = yangblast__entry__unpack(NULL, (size_t)elen, plain + i);
    int ok = e && e->kind_case == YANGBLAST__ENTRY__KIND_HEADER;
    uint32_t version = ok ? e->header->format_version : 0;
    if (e)
        yangblast__entry__free_unpacked(e, NULL);
    if (!ok)
        goto bad;
    if ((version == YB_CORPUS_FORMAT_SPLIT) != split) {
        /* the records are copied as they are: their layout must be the
         * one the new header says */
        seterr(err, errlen, "%s: its records are in format %u, not the %u of the new header "
               "(the level decides: %u and above keep digits apart)", path, version,
               split ? YB_CORPUS_FORMAT_SPLIT : YB_CORPUS_FORMAT_VERSION, YB_CORPUS_SPLIT_LEVEL);
        goto out;
    }
    len = flen;
    goto out;
bad:
    seterr(err, errlen, "%s: does not start with a header frame of its own", path);
    goto out;
oom:
    seterr(err, errlen, "%s: out of memory", path);
out:
    free(plain);
    free(buf);
    return len;
}

int yb_corpus_writer_splice(yb_corpus_writer *w, const char *from, char *err, size_t errlen)
{
    int rc = w->failed;
    if (rc || w->count) {
        seterr(err, errlen, "%s: splice into a writer that already has records", w->of.name);
        return -1;
    }
    int fd = open(from, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        seterr(err, errlen, "%s: cannot open: %s", from, strerror(errno));
        w->failed = -EIO;
        return -1;
    }
    uint64_t off = header_frame_len(fd, w->split, from, err, errlen);
    if (!off) {
        close(fd);
        w->failed = -EIO;
        return -1;
    }
    for (;;) {
        ssize_t k = pread(fd, w->out, IO_CHUNK, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            seterr(err, errlen, "%s: read error: %s", from, strerror(errno));
            rc = -EIO;
            break;
        }
        if (k == 0)
            break;
        off += (uint64_t)k;
        if ((rc = write_all(w->fd, w->out, (size_t)k)) < 0) {
            seterr(err, errlen, "%s: cannot write: %s", w->of.name, strerror(-rc));
            break;
        }
    }
    close(fd);
    if (rc < 0) {
        w->failed = rc;
        return -1;
    }
    w->spliced = 1;
    return 0;
}

int yb_corpus_writer_set_threads(yb_corpus_writer *w, unsigned n)
{
    if (w->failed || w->spliced || w->count || n < 1 || n > YB_CORPUS_THREADS_MAX)
        return -EINVAL;
    if (w->frames && !w->nthreads && !w->sync) /* (started at the first full block) */
        w->want_threads = n;
    return 0;
}

uint64_t yb_corpus_writer_count(const yb_corpus_writer *w)
{
    return w->count;
}

void yb_corpus_writer_abort(yb_corpus_writer *w)
{
    if (!w)
        return;
    writer_free(w);
}

int yb_corpus_writer_close(yb_corpus_writer *w, char *err, size_t errlen)
{
    int rc = w->failed;
    if (!rc && w->spliced)
        goto commit;
    if (!rc) {
        Yangblast__Trailer t = YANGBLAST__TRAILER__INIT;
        t.request_count = w->count;
        t.summary_follows = 1;
        Yangblast__Entry e = YANGBLAST__ENTRY__INIT;
        e.kind_case = YANGBLAST__ENTRY__KIND_TRAILER;
        e.trailer = &t;
        rc = wr_entry(w, &e);
    }
    if (!rc)
        rc = wr_block(w);
    if (!rc && w->frames)
        rc = write_done(w, 1);
    else if (!rc)
        rc = wr_compress(w, NULL, 0, ZSTD_e_end);
    if (!rc) { /* after the stream: a run reads it instead of every record */
        yb_corpus_summary s = tally_end(&w->t);
        uint8_t frame[SUM_MAX + 16];
        rc = write_all(w->fd, frame, pack_summary(&s, frame));
    }
    if (rc) {
        seterr(err, errlen, "%s: write failed after %llu records: %s", w->of.name,
               (unsigned long long)w->count,
               rc == -EINVAL ? "invalid record" : strerror(-rc));
        yb_corpus_writer_abort(w);
        return rc;
    }
commit:
    w->open = 0;
    if (yb_outfile_commit(&w->of, err, errlen) < 0) {
        writer_free(w);
        return -EIO;
    }
    writer_free(w);
    return 0;
}

/* ------------------------------------------------------------------ */
/* reader                                                              */

/* Where protobuf-c unpacks the records handed out one at a time: a
 * block reused from record to record (its frees are no-ops, it is reset
 * when the record is let go), so a streamed record costs no malloc/free
 * per field.  A record bigger than the block gets blocks of its own for
 * that once; the next reset merges them into one block big enough. */
typedef struct rd_arena_blk {
    struct rd_arena_blk *next;
    size_t cap, used;
    max_align_t data[];
} rd_arena_blk;

typedef struct {
    rd_arena_blk *head; /* the block allocations come from; older ones after it */
    size_t total;       /* bytes handed out since the reset */
} rd_arena;

#define ARENA_MIN (16u * 1024u)

static void *arena_alloc(void *ud, size_t n)
{
    rd_arena *a = ud;
    size_t al = sizeof(max_align_t), need = (n + al - 1) / al * al;
    if (need < n)
        return NULL;
    rd_arena_blk *b = a->head;
    if (!b || b->cap - b->used < need) {
        size_t cap = need > ARENA_MIN ? need : ARENA_MIN;
        rd_arena_blk *nb = malloc(sizeof *nb + cap);
        if (!nb)
            return NULL;
        nb->next = b;
        nb->cap = cap;
        nb->used = 0;
        a->head = b = nb;
    }
    void *p = (char *)b->data + b->used;
    b->used += need;
    a->total += need;
    YB_BLK_UNPOISON(p, need);
    return p;
}

static void arena_free(void *ud, void *p)
{
    (void)ud;
    (void)p;
}

/* Lets go of everything allocated since the last reset; keeps one block,
 * as big as all of them were. */
static void arena_reset(rd_arena *a)
{
    rd_arena_blk *b = a->head;
    if (b && b->next) {
        size_t total = a->total;
        while (b) {
            rd_arena_blk *n = b->next;
            YB_BLK_UNPOISON(b->data, b->cap);
            free(b);
            b = n;
        }
        a->head = NULL;
        size_t cap = total > ARENA_MIN ? total : ARENA_MIN;
        rd_arena_blk *nb = malloc(sizeof *nb + cap);
        if (nb) {
            nb->next = NULL;
            nb->cap = cap;
            a->head = nb;
        }
        b = nb;
    }
    if (b) {
        b->used = 0;
        /* the record let go is out of bounds now (a use of it after the
         * next one is read is caught under ASan) */
        YB_BLK_POISON(b->data, b->cap);
    }
    a->total = 0;
}

/* Under ASan the reader alternates between two arenas, so that the record
 * let go is poisoned whole while the next one is unpacked elsewhere (with
 * one arena, the next record would reuse the same bytes and a use of the
 * old one would go unseen). */
#ifdef YB_BLK_ASAN
#define RD_ARENAS 2u
#else
#define RD_ARENAS 1u
#endif

static void arena_fini(rd_arena *a)
{
    for (rd_arena_blk *b = a->head, *n; b; b = n) {
        n = b->next;
        YB_BLK_UNPOISON(b->data, b->cap);
        free(b);
    }
    a->head = NULL;
}

struct yb_corpus_reader {
    char *path;
    FILE *f;
    ZSTD_DCtx *dctx;
    ZSTD_DCtx *dctx_ck;  /* frames whose checksum frame matched: zstd's own
                          * checksum not computed (made at the first one;
                          * NULL: none, or zstd cannot skip it) */
    int ck_tried;        /* dctx_ck was asked for */
    uint8_t *in;         /* compressed input, in_cap bytes (IO_CHUNK, more
                          * to hold a whole frame: rd_frame) */
    size_t in_cap;
    ZSTD_inBuffer zin;
    size_t frame_rem;    /* last ZSTD_decompressStream hint: 0 = at frame end */
    int zerr;            /* ZSTD_ErrorCode of the last decompression failure */
    int cut;             /* rd_fill failed because the input ended */
    int file_eof;
    uint8_t *buf;        /* decompressed bytes [start, end) */
    size_t start, end, cap;
    uint64_t index;      /* requests returned so far */
    int done;            /* trailer seen */
    yb_corpus_header header;
    Yangblast__Entry *hdr_entry;
    Yangblast__Entry *cur; /* in arena[arena_i] */
    rd_arena arena[RD_ARENAS];
    unsigned arena_i;
    ProtobufCAllocator alloc; /* from arena[arena_i] */
    yb_request req;      /* views into *cur */
    size_t hdr_cap;
    int drop_redacted;   /* skip headers holding the redaction placeholder */
    int no_fast_view;    /* every request entry through protobuf-c (tests) */
    int split;           /* format 2: entries come in blocks, digits apart */
    uint8_t *pl;         /* format 2: the current block's entries joined so
                          * far and not read yet, [pl_start, pl_end) */
    size_t pl_start, pl_end, pl_cap;
    join_state js;       /* format 2: the current block's join (its parts in
                          * buf, before start, kept until the next block) */
    int joining;         /* js has more of the block to join */
    int has_summary;     /* summary read from the end of the file */
    yb_corpus_summary summary;
    tally t;             /* of the records returned, checked against it */
};

/* Makes one of r's buffers (*p, *cap bytes) at least `need` bytes long
 * (need > 0), doubling from its size, or from `min` for the first.
 * Returns 0 or -1 with err. */
static int rd_grow(yb_corpus_reader *r, uint8_t **p, size_t *cap, size_t need, size_t min,
                   char *err, size_t errlen)
{
    if (*cap >= need)
        return 0;
    size_t ncap = *cap ? *cap : min;
    while (ncap < need)
        ncap *= 2;
    uint8_t *nb = realloc(*p, ncap);
    if (!nb) {
        seterr(err, errlen, "%s: record %llu: out of memory", r->path,
               (unsigned long long)r->index);
        return -1;
    }
    *p = nb;
    *cap = ncap;
    return 0;
}

/* Moves the pending decompressed bytes to buf's start and makes buf at
 * least `want` bytes long.  Returns 0 or -1 with err. */
static int rd_compact(yb_corpus_reader *r, size_t want, char *err, size_t errlen)
{
    if (r->buf)
        memmove(r->buf, r->buf + r->start, r->end - r->start);
    r->end -= r->start;
    r->start = 0;
    return rd_grow(r, &r->buf, &r->cap, want ? want : 1, IO_CHUNK, err, errlen);
}

/* Frames that say their decompressed size, at most this, and whose
 * compressed bytes fit in at most RD_IN_MAX of input are decoded whole
 * (rd_frame); others are streamed. */
#define RD_FRAME_WHOLE_MAX (8u * 1024u * 1024u)
#define RD_IN_MAX (RD_FRAME_WHOLE_MAX + 64u * 1024u)
#define RD_FRAME_HEAD_MAX 18u /* ZSTD_FRAMEHEADERSIZE_MAX */

/* Reads more compressed input after the bytes zin still holds (moved to
 * the input's start), the input grown to `room` bytes when it is
 * smaller.  Returns 0 (file_eof set at the end of the file) or -1 with
 * err. */
static int rd_more_input(yb_corpus_reader *r, size_t room, char *err, size_t errlen)
{
    size_t have = r->zin.size - r->zin.pos;
    if (have && r->zin.pos)
        memmove(r->in, r->in + r->zin.pos, have);
    r->zin.pos = 0;
    r->zin.size = have;
    if (room > r->in_cap) {
        uint8_t *p = realloc(r->in, room);
        if (!p) {
            seterr(err, errlen, "%s: record %llu: out of memory", r->path,
                   (unsigned long long)r->index);
            return -1;
        }
        r->in = p;
        r->zin.src = p;
        r->in_cap = room;
    }
    size_t k = fread(r->in + have, 1, r->in_cap - have, r->f);
    if (k == 0) {
        if (ferror(r->f)) {
            seterr(err, errlen, "%s: read error: %s", r->path, strerror(errno));
            return -1;
        }
        r->file_eof = 1;
    }
    r->zin.size = have + k;
    return 0;
}

/* Reads more input towards need bytes ahead of zin.pos, into an input
 * buffer grown (doubling) until it has room for need and IO_CHUNK more
 * than it holds, to at most max bytes (need <= max).  Returns 0 (fewer
 * than need may still be there: the caller loops until the file ends),
 * or -1 with err. */
static int rd_read_ahead(yb_corpus_reader *r, size_t need, size_t max, char *err,
                         size_t errlen)
{
    size_t avail = r->zin.size - r->zin.pos, room = r->in_cap;
    while (room - avail < IO_CHUNK || room < need)
        room *= 2;
    return rd_more_input(r, room > max ? max : room, err, errlen);
}

/* Whether p holds a checksum frame (CK_LEN bytes: frame_block). */
static int is_ck(const uint8_t *p)
{
    return get_le32(p) == CK_MAGIC && get_le32(p + 4) == CK_LEN - 8 &&
           !memcmp(p + 8, CK_TAG, sizeof CK_TAG);
}

/* The context that decodes frames whose checksum frame matched: one that
 * does not compute zstd's checksum of their output, or r->dctx when zstd
 * cannot be told so. */
static ZSTD_DCtx *rd_dctx_ck(yb_corpus_reader *r)
{
    if (!r->ck_tried) {
        r->ck_tried = 1;
#ifdef ZSTD_d_forceIgnoreChecksum
        r->dctx_ck = ZSTD_createDCtx();
        if (r->dctx_ck && ZSTD_isError(ZSTD_DCtx_setParameter(r->dctx_ck,
                                                              ZSTD_d_forceIgnoreChecksum,
                                                              ZSTD_d_ignoreChecksum))) {
            ZSTD_freeDCtx(r->dctx_ck);
            r->dctx_ck = NULL;
        }
#endif
    }
    return r->dctx_ck ? r->dctx_ck : r->dctx;
}

/* At a frame's start, decodes the next frame whole, straight into buf,
 * when it says its size (RD_FRAME_WHOLE_MAX at most) and all its
 * compressed bytes can be read ahead: streaming would decode it into
 * zstd's window and copy it out of there, a pass more over every byte
 * (a level-1 corpus is such frames: yangblast-corpus(5)).  A frame that
 * is cut short or damaged is left to the streaming decoder, which says
 * what is wrong with it as it always did.
 *
 * A frame followed by a checksum frame (level 1's: frame_block) has the
 * CRC-32 of its compressed bytes checked, and is decoded without zstd's
 * checksum of its output (XXH64 over many times as many bytes);
 * its checksum frame is passed over with it.  Nothing damaged gets
 * through unchecked: a checksum frame damaged in its CRC does not
 * match; damaged in its magic, size or tag, it is not recognised, and
 * the frame is decoded as one without (zstd checks its own checksum,
 * which level 1's frames keep; the streaming decoder then fails on the
 * damaged frame or skips it as a skippable one, and frames it would
 * skip with it are missing from their block or from the trailer's
 * count).  Frames without one
 * (other levels, files written before checksum frames) decode as they
 * always did.  Returns 1 when a frame was decoded, 0 when the next bytes
 * are to be streamed, -1 with err. */
static int rd_frame(yb_corpus_reader *r, char *err, size_t errlen)
{
    if (r->frame_rem)
        return 0; /* inside a frame being streamed */
    size_t need = RD_FRAME_HEAD_MAX, cs;
    unsigned long long c;
    for (;;) {
        size_t avail = r->zin.size - r->zin.pos;
        if (avail < need && !r->file_eof) {
            if (rd_read_ahead(r, need, RD_IN_MAX, err, errlen) < 0) /* (need <= RD_IN_MAX) */
                return -1;
            continue;
        }
        const uint8_t *src = (const uint8_t *)r->zin.src + r->zin.pos;
        if (avail < 4 || get_le32(src) != ZSTD_MAGICNUMBER)
            return 0; /* (a skippable frame, or not zstd: the streaming decoder says) */
        c = ZSTD_getFrameContentSize(src, avail);
        if (c == ZSTD_CONTENTSIZE_UNKNOWN || c == ZSTD_CONTENTSIZE_ERROR ||
            c > RD_FRAME_WHOLE_MAX)
            return 0;
        cs = ZSTD_findFrameCompressedSize(src, avail);
        if (!ZSTD_isError(cs))
            break;
        if (ZSTD_getErrorCode(cs) != ZSTD_error_srcSize_wrong || r->file_eof ||
            avail >= RD_IN_MAX)
            return 0;
        need = avail + 1; /* the rest of the frame */
    }
    /* the checksum frame after it, read ahead (the input holds at most
     * RD_IN_MAX + CK_LEN bytes: a frame longer than RD_IN_MAX, which no
     * writer makes of RD_FRAME_WHOLE_MAX bytes, is taken as without) */
    need = cs + CK_LEN;
    while (cs <= RD_IN_MAX && r->zin.size - r->zin.pos < need && !r->file_eof)
        if (rd_read_ahead(r, need, RD_IN_MAX + CK_LEN, err, errlen) < 0)
            return -1;
    const uint8_t *src = (const uint8_t *)r->zin.src + r->zin.pos;
    ZSTD_DCtx *d = r->dctx;
    size_t ck = 0;
    if (r->zin.size - r->zin.pos >= need && is_ck(src + cs)) {
        if ((uint32_t)crc32_z(0, src, cs) != get_le32(src + cs + 12)) {
            r->zerr = ZSTD_error_checksum_wrong;
            seterr(err, errlen, "%s: record %llu: corrupt compressed data (block checksum "
                   "mismatch)", r->path, (unsigned long long)r->index);
            return -1;
        }
        d = rd_dctx_ck(r);
        ck = CK_LEN;
    }
    if (r->cap - r->end < c && rd_compact(r, r->end - r->start + (size_t)c, err, errlen) < 0)
        return -1;
    size_t n = ZSTD_decompressDCtx(d, r->buf + r->end, (size_t)c, src, cs);
    if (ZSTD_isError(n)) {
        r->zerr = (int)ZSTD_getErrorCode(n);
        seterr(err, errlen, "%s: record %llu: corrupt compressed data (%s)", r->path,
               (unsigned long long)r->index, ZSTD_getErrorName(n));
        return -1;
    }
    r->zin.pos += cs + ck;
    r->end += n; /* (n == c: zstd checks the frame's size) */
    return 1;
}

/* Makes at least `want` decompressed bytes available at buf+start.
 * Returns 1 when available, 0 at a clean end of input (no bytes pending and
 * the zstd frame complete), or -1 with err set. */
static int rd_fill(yb_corpus_reader *r, size_t want, char *err, size_t errlen)
{
    while (r->end - r->start < want) {
        if ((r->cap - r->start < want || r->end == r->cap) &&
            rd_compact(r, want, err, errlen) < 0)
            return -1;
        int fr = rd_frame(r, err, errlen);
        if (fr < 0)
            return -1;
        if (fr > 0)
            continue;
        if (r->zin.pos == r->zin.size && !r->file_eof) {
            size_t k = fread(r->in, 1, r->in_cap, r->f);
            if (k == 0) {
                if (ferror(r->f)) {
                    seterr(err, errlen, "%s: read error: %s", r->path, strerror(errno));
                    return -1;
                }
                r->file_eof = 1;
            }
            r->zin.src = r->in;
            r->zin.size = k;
            r->zin.pos = 0;
        }
        /* format 2 takes a block at a time: decompressing past it would
         * only be moved to the buffer's start before the next one */
        size_t lim = r->split && r->start + want < r->cap ? r->start + want : r->cap;
        ZSTD_outBuffer out = {r->buf, lim, r->end};
        size_t before_in = r->zin.pos;
        size_t rc = ZSTD_decompressStream(r->dctx, &out, &r->zin);
        if (ZSTD_isError(rc)) {
            r->zerr = (int)ZSTD_getErrorCode(rc);
            seterr(err, errlen, "%s: record %llu: corrupt compressed data (%s)", r->path,
                   (unsigned long long)r->index, ZSTD_getErrorName(rc));
            return -1;
        }
        int progress = out.pos != r->end || r->zin.pos != before_in;
        if (progress) /* an idle call after a frame's end hints at the next frame */
            r->frame_rem = rc;
        r->end = out.pos;
        if (!progress && r->file_eof && r->zin.pos == r->zin.size) {
            if (r->end == r->start && r->frame_rem == 0)
                return 0;
            r->cut = 1;
            seterr(err, errlen, "%s: record %llu: truncated file (ends inside %s)", r->path,
                   (unsigned long long)r->index,
                   r->end != r->start ? "an entry" : "the compressed stream");
            return -1;
        }
    }
    return 1;
}

/* Format 2: takes the next block of the decompressed stream (its
 * skeleton and digits, each after its varint length) for rd_need to join
 * (r->js).  Returns 1, 0 at a clean end of input, or -1 with err. */
static int rd_block(yb_corpus_reader *r, char *err, size_t errlen)
{
    uint64_t len[2] = {0, 0};
    for (unsigned k = 0; k < 2; k++)
        for (unsigned i = 0;; i++) {
            int rc = rd_fill(r, 1, err, errlen);
            if (rc <= 0) {
                if (rc == 0 && (k || i))
                    seterr(err, errlen, "%s: record %llu: truncated file (ends inside a block's "
                           "length)", r->path, (unsigned long long)r->index);
                return k || i ? -1 : rc;
            }
            uint8_t b = r->buf[r->start++];
            len[k] |= (uint64_t)(b & 0x7f) << (7 * i);
            if (!(b & 0x80))
                break;
            if (i >= 4) {
                seterr(err, errlen, "%s: record %llu: corrupt block length", r->path,
                       (unsigned long long)r->index);
                return -1;
            }
        }
    if (len[0] > SPLIT_PART_MAX || len[1] > SPLIT_PART_MAX - len[0]) {
        seterr(err, errlen, "%s: record %llu: a block of %llu + %llu bytes exceeds the %u-byte "
               "limit", r->path, (unsigned long long)r->index, (unsigned long long)len[0],
               (unsigned long long)len[1], SPLIT_PART_MAX);
        return -1;
    }
    size_t sn = (size_t)len[0], dn = (size_t)len[1];
    /* (said more precisely when the input ends: any other failure, a
     * corrupt frame, says its own) */
    int rc = sn + dn ? rd_fill(r, sn + dn, err, errlen) : 1;
    if (rc <= 0) {
        if (rc == 0 || r->cut)
            seterr(err, errlen, "%s: record %llu: truncated file (ends inside a block)", r->path,
                   (unsigned long long)r->index);
        return -1;
    }
    /* (buf is not moved until the next block is read: rd_fill runs only
     * for a block's lengths and parts) */
    join_init(&r->js, r->buf + r->start, sn, r->buf + r->start + sn, dn);
    r->joining = 1;
    r->start += sn + dn;
    r->pl_start = r->pl_end = 0;
    return 1;
}

/* Entries are joined up to the one read and this far past it (the next
 * entry's length) ... */
#define JOIN_AHEAD 16u
/* ... into a buffer of at least this many bytes, whose joined bytes not
 * read yet move to its start when the next entry does not fit after them */
#define PL_MIN (64u * 1024u)

/* Format 2: joins the current block on until `want` bytes of entries are
 * at pl_start, or the block ends.  Returns 0, or -1 with err. */
static int rd_join(yb_corpus_reader *r, size_t want, char *err, size_t errlen)
{
    size_t have = r->pl_end - r->pl_start;
    /* the block joins to at most what is left of its parts: an entry
     * said to be longer joins the rest (and crosses the block's end)
     * without room made for its length */
    size_t left = (r->js.sn - r->js.i) + (r->js.dn - r->js.d);
    if (want > have + left)
        want = have + left;
    /* stop, and 32 bytes for join_some's overshoot, from pl_start */
    size_t need = want + JOIN_AHEAD + 32;
    if (r->pl_cap - r->pl_start < need) {
        if (have)
            memmove(r->pl, r->pl + r->pl_start, have);
        r->pl_start = 0;
        r->pl_end = have;
        if (rd_grow(r, &r->pl, &r->pl_cap, need, PL_MIN, err, errlen) < 0)
            return -1;
    }
    ptrdiff_t o = join_some(&r->js, r->pl, r->pl_end, r->pl_start + want + JOIN_AHEAD,
                            r->pl_start + need);
    if (o < 0) {
        seterr(err, errlen, "%s: record %llu: corrupt block (its digits do not fit its "
               "skeleton)", r->path, (unsigned long long)r->index);
        return -1;
    }
    r->pl_end = (size_t)o;
    r->joining = !r->js.done;
    return 0;
}

/* Makes `want` bytes of entries available at rd_at(r): from the
 * decompressed stream, or in format 2 from the current block (an entry
 * never crosses a block's end).  Returns 1, 0 at a clean end of input,
 * or -1 with err. */
static int rd_need(yb_corpus_reader *r, size_t want, char *err, size_t errlen)
{
    if (!r->split)
        return rd_fill(r, want, err, errlen);
    for (;;) {
        if (r->pl_end - r->pl_start >= want)
            return 1;
        if (r->joining) {
            if (rd_join(r, want, err, errlen) < 0)
                return -1;
            continue;
        }
        if (r->pl_end != r->pl_start)
            break;
        int rc = rd_block(r, err, errlen);
        if (rc <= 0)
            return rc;
    }
    seterr(err, errlen, "%s: record %llu: corrupt block (an entry crosses its end)", r->path,
           (unsigned long long)r->index);
    return -1;
}

static const uint8_t *rd_at(const yb_corpus_reader *r)
{
    return r->split ? r->pl + r->pl_start : r->buf + r->start;
}

static void rd_skip(yb_corpus_reader *r, size_t n)
{
    if (r->split)
        r->pl_start += n;
    else
        r->start += n;
}

/* Reads one varint-prefixed entry: sets [*e, *e + *n) to its bytes (valid
 * until the next read).  Returns 1, 0 at a clean end of input, -1 with
 * err. */
static int rd_entry_bytes(yb_corpus_reader *r, const uint8_t **e, size_t *n, char *err,
                          size_t errlen)
{
    uint64_t len = 0;
    for (unsigned i = 0;; i++) {
        int rc = rd_need(r, i + 1, err, errlen);
        if (rc <= 0) {
            if (rc == 0 && i > 0) {
                seterr(err, errlen, "%s: record %llu: truncated file (ends inside a length prefix)",
                       r->path, (unsigned long long)r->index);
                return -1;
            }
            return rc;
        }
        uint8_t b = rd_at(r)[i];
        len |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            rd_skip(r, i + 1);
            break;
        }
        if (i >= 4) {
            seterr(err, errlen, "%s: record %llu: corrupt entry length", r->path,
                   (unsigned long long)r->index);
            return -1;
        }
    }
    if (len > YB_CORPUS_MAX_ENTRY) {
        seterr(err, errlen, "%s: record %llu: entry of %llu bytes exceeds the %u-byte limit",
               r->path, (unsigned long long)r->index, (unsigned long long)len,
               YB_CORPUS_MAX_ENTRY);
        return -1;
    }
    int rc = len ? rd_need(r, (size_t)len, err, errlen) : 1;
    if (rc <= 0) {
        if (!r->split && (rc == 0 || r->cut))
            seterr(err, errlen, "%s: record %llu: truncated file (ends inside an entry)", r->path,
                   (unsigned long long)r->index);
        return -1;
    }
    *e = len ? rd_at(r) : (const uint8_t *)"";
    *n = (size_t)len;
    rd_skip(r, (size_t)len);
    return 1;
}

/* Unpacks the entry e[0..n) with protobuf-c.  Returns 1 with *out set, or
 * -1 with err. */
static int rd_unpack(yb_corpus_reader *r, ProtobufCAllocator *alloc, const uint8_t *b, size_t n,
                     Yangblast__Entry **out, char *err, size_t errlen)
{
    Yangblast__Entry *e = yangblast__entry__unpack(alloc, n, b);
    if (!e) {
        seterr(err, errlen, "%s: record %llu: corrupt entry (protobuf decoding failed)", r->path,
               (unsigned long long)r->index);
        return -1;
    }
    *out = e;
    return 1;
}

/* Reads and unpacks one entry.  Returns 1 with *out set, 0 at a clean end
 * of input, -1 with err. */
static int rd_entry(yb_corpus_reader *r, ProtobufCAllocator *alloc, Yangblast__Entry **out,
                    char *err, size_t errlen)
{
    const uint8_t *b;
    size_t n;
    int rc = rd_entry_bytes(r, &b, &n, err, errlen);
    return rc <= 0 ? rc : rd_unpack(r, alloc, b, n, out, err, errlen);
}

static void rd_reset_stream(yb_corpus_reader *r)
{
    ZSTD_DCtx_reset(r->dctx, ZSTD_reset_session_only);
    r->zin.src = r->in;
    r->zin.size = r->zin.pos = 0;
    r->frame_rem = 0;
    r->zerr = 0;
    r->cut = 0;
    r->file_eof = 0;
    r->start = r->end = 0;
    r->split = 0;
    r->pl_start = r->pl_end = 0;
    r->joining = 0;
    r->index = 0;
    r->done = 0;
    tally_init(&r->t);
}

/* Reads the magic and header entry.  Returns 0 or -1 with err. */
static int rd_header(yb_corpus_reader *r, char *err, size_t errlen)
{
    int rc = rd_fill(r, sizeof MAGIC, err, errlen);
    if (rc <= 0) {
        /* Say "not a corpus" for other files, but keep the truncation
         * message for a corpus cut short inside its first zstd block. */
        if (rc == 0)
            seterr(err, errlen, "%s: empty file (not a yangblast corpus)", r->path);
        else if (r->zerr == ZSTD_error_prefix_unknown)
            seterr(err, errlen, "%s: not a yangblast corpus (not zstd-compressed)", r->path);
        else if (!r->zerr && r->file_eof && r->frame_rem == 0)
            seterr(err, errlen, "%s: not a yangblast corpus (too short for the magic)", r->path);
        return -1;
    }
    if (memcmp(r->buf + r->start, MAGIC, sizeof MAGIC) != 0) {
        seterr(err, errlen, "%s: not a yangblast corpus (bad magic)", r->path);
        return -1;
    }
    r->start += sizeof MAGIC;
    Yangblast__Entry *e = NULL;
    rc = rd_entry(r, NULL, &e, err, errlen);
    if (rc == 0)
        seterr(err, errlen, "%s: truncated file (no header)", r->path);
    if (rc <= 0)
        return -1;
    if (e->kind_case != YANGBLAST__ENTRY__KIND_HEADER) {
        seterr(err, errlen, "%s: corrupt corpus (first entry is not a header)", r->path);
        yangblast__entry__free_unpacked(e, NULL);
        return -1;
    }
    if (e->header->format_version > YB_CORPUS_FORMAT_NEWEST) {
        seterr(err, errlen, "%s: corpus format version %u is newer than this yangblast (%u)",
               r->path, e->header->format_version, YB_CORPUS_FORMAT_NEWEST);
        yangblast__entry__free_unpacked(e, NULL);
        return -1;
    }
    if (r->hdr_entry)
        yangblast__entry__free_unpacked(r->hdr_entry, NULL);
    r->hdr_entry = e;
    r->header.format_version = e->header->format_version;
    r->split = e->header->format_version == YB_CORPUS_FORMAT_SPLIT;
    r->header.created_unix_ns = e->header->created_unix_ns;
    r->header.producer = e->header->producer;
    r->header.source = e->header->source;
    r->header.redactions = e->header->redactions;
    r->header.n_redactions = e->header->n_redactions;
    /* a level this version cannot write is not kept: a rewrite uses the
     * default */
    r->header.level = e->header->compression_level <= YB_CORPUS_LEVEL_MAX
                          ? e->header->compression_level : 0;
    return 0;
}

static FILE *open_input(const char *path)
{
    if (strcmp(path, "-") == 0)
        return stdin;
    return fopen(path, "rb");
}

yb_corpus_reader *yb_corpus_reader_open(const char *path, char *err, size_t errlen)
{
    yb_corpus_reader *r = calloc(1, sizeof *r);
    if (!r) {
        seterr(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    yb_request_init(&r->req);
    r->alloc.alloc = arena_alloc;
    r->alloc.free = arena_free;
    r->alloc.allocator_data = &r->arena[0];
    r->path = strdup(path);
    r->dctx = ZSTD_createDCtx();
    r->in = malloc(IO_CHUNK);
    r->in_cap = IO_CHUNK;
    if (!r->path || !r->dctx || !r->in) {
        seterr(err, errlen, "%s: out of memory", path);
        yb_corpus_reader_close(r);
        return NULL;
    }
    r->f = open_input(path);
    if (!r->f) {
        seterr(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        yb_corpus_reader_close(r);
        return NULL;
    }
    r->has_summary = read_summary(fileno(r->f), &r->summary);
    rd_reset_stream(r);
    if (rd_header(r, err, errlen) < 0) {
        yb_corpus_reader_close(r);
        return NULL;
    }
    return r;
}

const yb_corpus_header *yb_corpus_reader_header(const yb_corpus_reader *r)
{
    return &r->header;
}

const yb_corpus_summary *yb_corpus_reader_summary(const yb_corpus_reader *r)
{
    return r->has_summary ? &r->summary : NULL;
}

uint64_t yb_corpus_reader_index(const yb_corpus_reader *r)
{
    return r->index;
}

void yb_corpus_reader_drop_redacted(yb_corpus_reader *r)
{
    r->drop_redacted = 1;
}

void yb_corpus_reader_protobuf_only(yb_corpus_reader *r)
{
    r->no_fast_view = 1;
}

/* Returns 1 when f is a header the header's redaction list names (in any
 * case) and whose value is the placeholder, else 0. */
static int is_redacted(const yb_corpus_reader *r, const char *name, const uint8_t *value,
                       size_t len)
{
    if (len != sizeof YB_CORPUS_REDACTED - 1 || memcmp(value, YB_CORPUS_REDACTED, len))
        return 0;
    for (size_t i = 0; i < r->header.n_redactions; i++)
        if (!strcasecmp(name, r->header.redactions[i]))
            return 1;
    return 0;
}

/* Points r->req's fields into the unpacked message.  Returns 0 or -1. */
static int view_request(yb_corpus_reader *r, const Yangblast__Request *p)
{
    if (p->n_headers > r->hdr_cap) {
        yb_header *h = realloc(r->req.headers, p->n_headers * sizeof *h);
        if (!h)
            return -1;
        r->req.headers = h;
        r->hdr_cap = p->n_headers;
    }
    yb_header *h = r->req.headers;
    memset(&r->req, 0, sizeof r->req);
    r->req.headers = h;
    r->req.protocol = p->protocol <= YANGBLAST__PROTOCOL__PROTOCOL_HTTP2
                          ? (yb_proto)p->protocol : YB_PROTO_UNSPECIFIED;
    r->req.method = p->method;
    r->req.scheme = p->scheme;
    r->req.authority = p->authority;
    r->req.path = p->path;
    size_t n = 0;
    for (size_t i = 0; i < p->n_headers; i++) {
        if (r->drop_redacted && is_redacted(r, p->headers[i]->name, p->headers[i]->value.data,
                                            p->headers[i]->value.len))
            continue;
        h[n].name = p->headers[i]->name;
        h[n].value = p->headers[i]->value.data;
        h[n].value_len = p->headers[i]->value.len;
        n++;
    }
    r->req.n_headers = n;
    r->req.body = p->body.data;
    r->req.body_len = p->body.len;
    r->req.timestamp_ns = p->timestamp_ns;
    r->req.conn_id = p->conn_id;
    r->req.conn_order = p->conn_order;
    r->req.expected_status = p->expected_status;
    r->req.expected_grpc = p->expected_grpc_status > 0 ? p->expected_grpc_status - 1 : -1;
    r->req.templated = p->templated != 0;
    /* the counts as read (above 16 makes the record invalid); values kept
     * out of range when they are, never truncated into range */
    r->req.n_accept_status = p->n_accept_status;
    for (size_t i = 0; i < p->n_accept_status && i < YB_REQUEST_MAX_ACCEPT; i++)
        r->req.accept_status[i] = p->accept_status[i] > 9999 ? 9999 : (uint16_t)p->accept_status[i];
    r->req.n_accept_grpc = p->n_accept_grpc_status;
    for (size_t i = 0; i < p->n_accept_grpc_status && i < YB_REQUEST_MAX_ACCEPT; i++)
        r->req.accept_grpc[i] =
            p->accept_grpc_status[i] > 9999 ? 9999 : (uint16_t)p->accept_grpc_status[i];
    r->req.chain = p->chain;
    return 0;
}

/* ---- the request entries without protobuf-c ----
 * A request entry as the writer makes it (protobuf-c's packing: the
 * Entry's one field, each field of the Request at most once, headers of
 * a name and a value) is viewed straight from its bytes: its strings
 * copied into the arena (NUL-terminated), its body and header values
 * pointing into the entry, which stays where it is until the next record
 * is read.  Anything else (another kind of entry, a field given twice, a
 * wire type or a tag protobuf-c would refuse or read otherwise, a
 * non-canonical tag) is left to protobuf-c, so that what is read is
 * always what protobuf-c reads: the fast path takes only input on which
 * the two agree (tests/unit/test_corpus.c test_fast_view_differential,
 * tests/fuzz/fuzz_ybc.c compare them). */

/* Reads a varint of at most 10 bytes at p[0..n) as protobuf-c scans one.
 * Returns its length (0: unterminated) and sets *v (the bits past 64
 * dropped) and *any (some 7-bit group is not zero: protobuf-c's bool). */
static size_t fv_varint(const uint8_t *p, size_t n, uint64_t *v, int *any)
{
    uint64_t x = 0;
    int nz = 0;
    size_t max = n < 10 ? n : 10;
    for (size_t i = 0; i < max; i++) {
        x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        nz |= p[i] & 0x7f;
        if (!(p[i] & 0x80)) {
            *v = x;
            *any = nz != 0;
            return i + 1;
        }
    }
    return 0;
}

/* A field's tag in canonical form (one byte, or two for fields 16..2047).
 * Returns its length, 0 for anything else (left to protobuf-c). */
static size_t fv_tag(const uint8_t *p, size_t n, unsigned *field, unsigned *wt)
{
    if (n >= 1 && !(p[0] & 0x80)) {
        *field = p[0] >> 3;
        *wt = p[0] & 7;
        return *field ? 1 : 0;
    }
    if (n >= 2 && !(p[1] & 0x80) && p[1]) {
        *field = ((p[0] & 0x7fu) >> 3) | (unsigned)p[1] << 4;
        *wt = p[0] & 7;
        return 2;
    }
    return 0;
}

/* A length-delimited field's bytes after its tag at p[0..n), as
 * protobuf-c's scan_length_prefixed_data takes them: sets [*d, *d + *dl).
 * Returns the bytes the field takes, 0 when protobuf-c would refuse it. */
static size_t fv_len(const uint8_t *p, size_t n, const uint8_t **d, size_t *dl)
{
    uint64_t v = 0;
    size_t max = n < 5 ? n : 5, i;
    for (i = 0; i < max; i++) {
        v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80))
            break;
    }
    if (i == max || v > INT_MAX || v > n - (i + 1))
        return 0;
    *d = p + i + 1;
    *dl = (size_t)v;
    return i + 1 + (size_t)v;
}

/* The bytes an unknown field takes after its tag (protobuf-c keeps and
 * ignores it); 0 when protobuf-c would refuse it. */
static size_t fv_skip(const uint8_t *p, size_t n, unsigned wt)
{
    uint64_t v;
    int any;
    const uint8_t *d;
    size_t dl;
    switch (wt) {
    case 0:
        return fv_varint(p, n, &v, &any);
    case 1:
        return n >= 8 ? 8 : 0;
    case 2:
        return fv_len(p, n, &d, &dl);
    case 5:
        return n >= 4 ? 4 : 0;
    default:
        return 0;
    }
}

/* A NUL-terminated copy of p[0..n) in the arena (protobuf-c's string),
 * or NULL when out of memory. */
static char *fv_str(yb_corpus_reader *r, const uint8_t *p, size_t n)
{
    char *s = arena_alloc(r->alloc.allocator_data, n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = 0;
    }
    return s;
}

/* A bytes field's value: NULL when empty, as protobuf-c; under ASan a
 * copy in the arena, so that a use after the record is let go is caught
 * (the entry's own bytes are not poisoned).  Returns 0, -1 out of memory. */
static int fv_bytes(yb_corpus_reader *r, const uint8_t *p, size_t n, uint8_t **out)
{
    *out = NULL;
    if (!n)
        return 0;
#ifdef YB_BLK_ASAN
    if (!(*out = arena_alloc(r->alloc.allocator_data, n)))
        return -1;
    memcpy(*out, p, n);
#else
    (void)r;
    *out = (uint8_t *)(uintptr_t)p;
#endif
    return 0;
}

/* One header (a HeaderField's bytes) appended to r->req, unless it is
 * redacted and dropped.  Returns 1, 0 when it is left to protobuf-c, -1
 * out of memory. */
static int fv_header(yb_corpus_reader *r, const uint8_t *p, size_t n)
{
    const uint8_t *name = NULL, *val = NULL;
    size_t nl = 0, vl = 0;
    while (n) {
        unsigned f, wt;
        size_t t = fv_tag(p, n, &f, &wt), k;
        const uint8_t *d;
        size_t dl;
        if (!t || (f != 1 && f != 2) || wt != 2 || !(k = fv_len(p + t, n - t, &d, &dl)))
            return 0;
        if (f == 1 ? name != NULL : val != NULL)
            return 0;
        if (f == 1) {
            name = d;
            nl = dl;
        } else {
            val = d;
            vl = dl;
        }
        p += t + k;
        n -= t + k;
    }
    if (r->req.n_headers == r->hdr_cap) {
        size_t nc = r->hdr_cap ? 2 * r->hdr_cap : 8;
        yb_header *h = realloc(r->req.headers, nc * sizeof *h);
        if (!h)
            return -1;
        r->req.headers = h;
        r->hdr_cap = nc;
    }
    yb_header *h = &r->req.headers[r->req.n_headers];
    h->name = name ? fv_str(r, name, nl) : EMPTY;
    if (!h->name)
        return -1;
    if (r->drop_redacted && is_redacted(r, h->name, val, vl))
        return 1;
    if (fv_bytes(r, val, vl, &h->value) < 0)
        return -1;
    h->value_len = vl;
    r->req.n_headers++;
    return 1;
}

/* A packed or single repeated uint32 (accept statuses): counts them into
 * *cnt, keeps the first YB_REQUEST_MAX_ACCEPT (over 9999 kept as 9999, as
 * view_request).  Returns 1, 0 when left to protobuf-c. */
static int fv_accept(const uint8_t *p, size_t n, int packed, uint16_t *vals, size_t *cnt)
{
    if (packed && !n)
        return 1;
    do {
        uint64_t v;
        int any;
        size_t k = fv_varint(p, n, &v, &any);
        if (!k)
            return 0;
        uint32_t u = (uint32_t)v;
        if (*cnt < YB_REQUEST_MAX_ACCEPT)
            vals[*cnt] = u > 9999 ? 9999 : (uint16_t)u;
        (*cnt)++;
        p += k;
        n -= k;
    } while (packed && n);
    return 1;
}

/* Views the Request entry e[0..n) in r->req.  Returns 1, 0 when the entry
 * is left to protobuf-c (r->req then undefined), -1 out of memory. */
static int fast_view(yb_corpus_reader *r, const uint8_t *e, size_t n)
{
    const uint8_t *p;
    size_t pn;
    /* the Entry: its request field (2), alone */
    if (n < 2 || e[0] != 0x12 || fv_len(e + 1, n - 1, &p, &pn) != n - 1)
        return 0;
    yb_header *hs = r->req.headers;
    yb_request_init(&r->req);
    r->req.headers = hs;
    r->req.expected_grpc = -1;
    uint32_t seen = 0;
    while (pn) {
        unsigned f, wt;
        size_t t = fv_tag(p, pn, &f, &wt);
        if (!t)
            return 0;
        p += t;
        pn -= t;
        if (f > 16) { /* unknown: skipped, as protobuf-c does */
            size_t k = fv_skip(p, pn, wt);
            if (!k)
                return 0;
            p += k;
            pn -= k;
            continue;
        }
        /* a singular field given twice (protobuf-c: the last one, or
         * merged) is left to protobuf-c */
        if (f != 6 && f != 14 && f != 15) {
            if (seen & (1u << f))
                return 0;
            seen |= 1u << f;
        }
        size_t k;
        if (wt == 2) {
            const uint8_t *d;
            size_t dl;
            if (!(k = fv_len(p, pn, &d, &dl)))
                return 0;
            char **str = f == 2 ? &r->req.method : f == 3 ? &r->req.scheme
                       : f == 4 ? &r->req.authority : f == 5 ? &r->req.path : NULL;
            int rc;
            if (str)
                rc = (*str = fv_str(r, d, dl)) ? 1 : -1;
            else if (f == 6)
                rc = fv_header(r, d, dl);
            else if (f == 7) {
                rc = fv_bytes(r, d, dl, &r->req.body) < 0 ? -1 : 1;
                r->req.body_len = dl;
            } else if (f == 14)
                rc = fv_accept(d, dl, 1, r->req.accept_status, &r->req.n_accept_status);
            else if (f == 15)
                rc = fv_accept(d, dl, 1, r->req.accept_grpc, &r->req.n_accept_grpc);
            else
                rc = 0; /* a wire type protobuf-c refuses for this field */
            if (rc <= 0)
                return rc;
        } else if (wt == 0) {
            uint64_t v;
            int any;
            if (!(k = fv_varint(p, pn, &v, &any)))
                return 0;
            switch (f) {
            case 1: /* (an enum: its low 32 bits, signed) */
                r->req.protocol = (uint32_t)v <= YANGBLAST__PROTOCOL__PROTOCOL_HTTP2
                                      ? (yb_proto)(uint32_t)v : YB_PROTO_UNSPECIFIED;
                break;
            case 8: r->req.timestamp_ns = v; break;
            case 9: r->req.conn_id = v; break;
            case 10: r->req.conn_order = (uint32_t)v; break;
            case 11: r->req.expected_status = (uint32_t)v; break;
            case 12: {
                int32_t g = (int32_t)(uint32_t)v;
                r->req.expected_grpc = g > 0 ? g - 1 : -1;
                break;
            }
            case 13: r->req.templated = any; break;
            case 14:
                fv_accept(p, k, 0, r->req.accept_status, &r->req.n_accept_status);
                break;
            case 15:
                fv_accept(p, k, 0, r->req.accept_grpc, &r->req.n_accept_grpc);
                break;
            case 16: r->req.chain = (uint32_t)v; break;
            default: return 0; /* a wire type protobuf-c refuses for this field */
            }
        } else {
            return 0;
        }
        p += k;
        pn -= k;
    }
    return 1;
}

/* At the trailer (announced: it says a summary follows): the records read
 * must match the summary, and a regular file whose trailer announces one
 * must have it.  Returns 0 or -1 with err. */
static int summary_check(yb_corpus_reader *r, int announced, char *err, size_t errlen)
{
    yb_corpus_summary got = tally_end(&r->t);
    if (r->has_summary && !summary_equal(&got, &r->summary)) {
        seterr(err, errlen, "%s: record %llu: corrupt corpus (the summary at its end does not "
               "match its records)", r->path, (unsigned long long)r->index);
        return -1;
    }
    struct stat st;
    if (announced && !r->has_summary && fstat(fileno(r->f), &st) == 0 && S_ISREG(st.st_mode)) {
        seterr(err, errlen, "%s: record %llu: truncated file (the summary after the end "
               "marker is missing or damaged)", r->path, (unsigned long long)r->index);
        return -1;
    }
    return 0;
}

int yb_corpus_reader_next(yb_corpus_reader *r, const yb_request **out, char *err, size_t errlen)
{
    /* every entry below is unpacked into the arena: free_unpacked is
     * not needed for them, the reset lets them go */
    r->cur = NULL;
    arena_reset(&r->arena[r->arena_i]); /* the record let go */
    r->arena_i = (r->arena_i + 1) % RD_ARENAS;
    if (RD_ARENAS > 1)
        arena_reset(&r->arena[r->arena_i]);
    r->alloc.allocator_data = &r->arena[r->arena_i];
    if (r->done)
        return 0;
    for (;;) {
        Yangblast__Entry *e = NULL;
        const uint8_t *b;
        size_t n;
        int rc = rd_entry_bytes(r, &b, &n, err, errlen);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            seterr(err, errlen, "%s: record %llu: truncated file (end marker missing)", r->path,
                   (unsigned long long)r->index);
            return -1;
        }
        int fast = r->no_fast_view ? 0 : fast_view(r, b, n);
        if (fast < 0)
            goto oom;
        if (!fast && rd_unpack(r, &r->alloc, b, n, &e, err, errlen) < 0)
            return -1;
        switch (fast ? YANGBLAST__ENTRY__KIND_REQUEST : e->kind_case) {
        case YANGBLAST__ENTRY__KIND_REQUEST: {
            r->cur = e;
            if (!fast && view_request(r, e->request) < 0)
                goto oom;
            const char *why = yb_request_problem(&r->req);
            if (why) {
                seterr(err, errlen, "%s: record %llu: invalid record: %s", r->path,
                       (unsigned long long)r->index, why);
                return -1;
            }
            r->index++;
            tally_add(&r->t, &r->req);
            *out = &r->req;
            return 1;
        }
        case YANGBLAST__ENTRY__KIND_TRAILER: {
            uint64_t want = e->trailer->request_count;
            int announced = e->trailer->summary_follows;
            if (want != r->index) {
                seterr(err, errlen, "%s: record %llu: corrupt corpus (end marker says %llu records)",
                       r->path, (unsigned long long)r->index, (unsigned long long)want);
                return -1;
            }
            if (summary_check(r, announced, err, errlen) < 0)
                return -1;
            Yangblast__Entry *extra = NULL;
            rc = rd_entry(r, &r->alloc, &extra, err, errlen);
            if (rc != 0) {
                if (rc > 0) {
                    seterr(err, errlen, "%s: record %llu: corrupt corpus (data after end marker)",
                           r->path, (unsigned long long)r->index);
                }
                return -1;
            }
            r->done = 1;
            return 0;
        }
        case YANGBLAST__ENTRY__KIND_HEADER:
            seterr(err, errlen, "%s: record %llu: corrupt corpus (second header)", r->path,
                   (unsigned long long)r->index);
            return -1;
        default: /* an entry kind from a newer format: skip it */
            continue;
        }
    }
oom:
    seterr(err, errlen, "%s: record %llu: out of memory", r->path, (unsigned long long)r->index);
    return -1;
}

int yb_corpus_reader_rewind(yb_corpus_reader *r, char *err, size_t errlen)
{
    if (r->f == stdin) {
        seterr(err, errlen, "%s: cannot rewind standard input", r->path);
        return -1;
    }
    r->cur = NULL;
    for (unsigned i = 0; i < RD_ARENAS; i++)
        arena_reset(&r->arena[i]);
    if (fseek(r->f, 0, SEEK_SET) < 0) {
        seterr(err, errlen, "%s: cannot rewind: %s", r->path, strerror(errno));
        return -1;
    }
    clearerr(r->f);
    rd_reset_stream(r);
    return rd_header(r, err, errlen);
}

void yb_corpus_reader_close(yb_corpus_reader *r)
{
    if (!r)
        return;
    if (r->f && r->f != stdin)
        fclose(r->f);
    for (unsigned i = 0; i < RD_ARENAS; i++)
        arena_fini(&r->arena[i]);
    if (r->hdr_entry)
        yangblast__entry__free_unpacked(r->hdr_entry, NULL);
    free(r->req.headers);
    ZSTD_freeDCtx(r->dctx);
    ZSTD_freeDCtx(r->dctx_ck);
    free(r->in);
    free(r->buf);
    free(r->pl);
    free(r->path);
    free(r);
}
