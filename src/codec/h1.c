/* HTTP/1.1 codec: request/response serialization by hand (it is only
 * concatenation), parsing through Debian's libhttp-parser -- except the
 * usual response of a load test, whose head a fast path takes apart
 * itself (see fast_head; anything unusual still goes to http_parser).
 *
 * Parsing stops at the end of each message by pausing http_parser from
 * on_message_complete: execute() then returns the bytes consumed up to and
 * including the message's last byte, which is what *used reports, and the
 * bytes after it stay with the caller (pipelining, back-to-back
 * responses).  Returning nonzero from on_message_complete would report the
 * same count but leave the parser in an error state; pausing keeps the
 * distinction between "done" and "broken".  Each reset re-initialises the
 * parser, so a pause never needs to be lifted.
 *
 * Serialization runs one routine twice: first with no buffer to validate
 * and size the message exactly, then into a single malloc'd buffer.  The
 * two passes cannot disagree because they are the same code. */
#include "codec/h1.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <http_parser.h>

/* ---- shared helpers --------------------------------------------------- */

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }

/* Case-insensitive (ASCII, locale-free) equality of name[0..len) with the
 * lower-case NUL-terminated literal lit. */
static int name_is(const char *name, size_t len, const char *lit)
{
    size_t i;
    for (i = 0; i < len; i++) {
        if (lit[i] == '\0' || lower((unsigned char)name[i]) != lit[i])
            return 0;
    }
    return lit[i] == '\0';
}

/* Whether some byte of the 8 in x is 0 (the classic test: a byte's high
 * bit is set in the result only where the byte was 0, or by a borrow from
 * a lower byte that was). */
static uint64_t has_zero8(uint64_t x)
{
    return (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
}

/* 1 when buf[0..len) has no CR, LF or NUL (which would end or split a
 * line of the head).  Eight bytes at a time: every record's head is
 * checked as its request is prepared, once per request when streamed. */
static int line_safe(const void *buf, size_t len)
{
    const uint8_t *b = buf;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t x;
        memcpy(&x, b + i, 8);
        if (has_zero8(x) | has_zero8(x ^ 0x0d0d0d0d0d0d0d0dull) |
            has_zero8(x ^ 0x0a0a0a0a0a0a0a0aull))
            return 0;
    }
    for (; i < len; i++) {
        if (b[i] == '\r' || b[i] == '\n' || b[i] == '\0')
            return 0;
    }
    return 1;
}

/* A header name must be a non-empty token-ish run: we only reject what
 * would corrupt the framing (separators that end the name early, CTLs). */
static int name_ok(const char *name, size_t len)
{
    /* bit c & 63 of NOT_NAME[c >> 6]: set for c <= 0x20, ':' and 0x7f
     * (bytes from 0x80 are allowed) */
    static const uint64_t NOT_NAME[4] = {0x04000001ffffffffull, 0x8000000000000000ull, 0, 0};
    if (len == 0)
        return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (NOT_NAME[c >> 6] >> (c & 63) & 1)
            return 0;
    }
    return 1;
}

/* The two-pass writer: with buf == NULL it only counts. */
typedef struct {
    uint8_t *buf;
    size_t n;
    int overflow;
} writer;

static void put(writer *w, const void *s, size_t len)
{
    if (len > SIZE_MAX - w->n) {
        w->overflow = 1;
        return;
    }
    if (w->buf && len)
        memcpy(w->buf + w->n, s, len);
    w->n += len;
}

static void puts_(writer *w, const char *s) { put(w, s, strlen(s)); }

/* v in decimal (by hand: snprintf's format machinery cost more than the
 * rest of a streamed request's head, which is built for every request). */
static void put_u64(writer *w, uint64_t v)
{
    char num[20];
    size_t k = sizeof num;
    do {
        num[--k] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(w, num + k, sizeof num - k);
}

static void put_header(writer *w, const char *name, size_t nlen, const void *val, size_t vlen)
{
    put(w, name, nlen);
    put(w, ": ", 2);
    put(w, val, vlen);
    put(w, "\r\n", 2);
}

/* Runs build twice (size, then write) into one exact malloc'd buffer. */
typedef int (*build_fn)(writer *w, const void *ctx);

static int two_pass(build_fn build, const void *ctx, uint8_t **out, size_t *len)
{
    writer w = {0};
    int rc = build(&w, ctx);
    if (rc < 0)
        return rc;
    if (w.overflow)
        return -ENOMEM;
    size_t size = w.n;
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return -ENOMEM;
    w = (writer){.buf = buf};
    build(&w, ctx);
    /* Same code, same input: the second pass lands exactly on size. */
    if (w.n != size) {
        free(buf);
        return -EINVAL;
    }
    *out = buf;
    *len = size;
    return 0;
}

/* ---- request serialization (client role) ------------------------------ */

typedef struct {
    const yb_request *r;
    const yb_h1_extra *x;
} req_ctx;

static int method_has_body(const char *m)
{
    return strcmp(m, "POST") == 0 || strcmp(m, "PUT") == 0 || strcmp(m, "PATCH") == 0;
}

/* Headers the serializer owns or that must not be forwarded; with
 * ua_override the record's User-Agent too (by length first: most names
 * are none of these). */
static int req_header_dropped(const char *name, size_t nlen, int auth_override,
                              int ua_override)
{
    if (nlen > 0 && name[0] == ':')
        return 1; /* HTTP/2 pseudo-header */
    switch (nlen) {
    case 4:
        return name_is(name, nlen, "host");
    case 10:
        return name_is(name, nlen, "connection") ||
               (ua_override && name_is(name, nlen, "user-agent"));
    case 13:
        return auth_override && name_is(name, nlen, "authorization");
    case 14:
        return name_is(name, nlen, "content-length");
    case 17:
        return name_is(name, nlen, "transfer-encoding");
    default:
        return 0;
    }
}

/* Writes header h unless dropped.  Returns 0, or -EINVAL when checking
 * (the sizing pass) and it would break the framing. */
static int put_req_header(writer *w, const yb_header *h, int check, int auth_override,
                          int ua_override)
{
    const char *name = h->name ? h->name : "";
    size_t nlen = strlen(name);
    if (req_header_dropped(name, nlen, auth_override, ua_override))
        return 0;
    if (check && (!name_ok(name, nlen) || (h->value_len && !h->value) ||
                  !line_safe(h->value, h->value_len)))
        return -EINVAL;
    put_header(w, name, nlen, h->value, h->value_len);
    return 0;
}

static int build_request(writer *w, const void *vctx)
{
    const req_ctx *c = vctx;
    const yb_request *r = c->r;
    const yb_h1_extra *x = c->x;
    const char *method = r->method ? r->method : "";
    const char *path = (r->path && r->path[0]) ? r->path : "/";
    const char *host = x->host ? x->host : (r->authority ? r->authority : "");
    size_t mlen = strlen(method), plen = strlen(path), hlen = strlen(host);
    /* the fields are checked in the sizing pass; the writing pass has the
     * same input (a streamed record's head is built for each request) */
    int check = !w->buf;

    if (check && (mlen == 0 || memchr(method, ' ', mlen) || !line_safe(method, mlen) ||
        memchr(path, ' ', plen) || !line_safe(path, plen) || !line_safe(host, hlen)))
        return -EINVAL;
    put(w, method, mlen);
    put(w, " ", 1);
    put(w, path, plen);
    puts_(w, " HTTP/1.1\r\n");
    put_header(w, "Host", 4, host, hlen);

    int auth = x->auth != NULL;
    for (size_t i = 0; i < r->n_headers; i++)
        if (put_req_header(w, &r->headers[i], check, auth, x->user_agent != NULL) < 0)
            return -EINVAL;
    for (size_t i = 0; i < x->n_extra; i++)
        if (put_req_header(w, &x->extra[i], check, auth, 0) < 0)
            return -EINVAL;
    if (x->user_agent) {
        yb_header ua = {.name = "User-Agent", .value = (uint8_t *)x->user_agent,
                        .value_len = strlen(x->user_agent)}; /* (read only) */
        if (put_req_header(w, &ua, check, auth, 0) < 0)
            return -EINVAL;
    }
    if (x->auth) {
        size_t alen = strlen(x->auth);
        if (check && !line_safe(x->auth, alen))
            return -EINVAL;
        put_header(w, "Authorization", 13, x->auth, alen);
    }
    if (r->body_len > 0 || method_has_body(method)) {
        puts_(w, "Content-Length: ");
        put_u64(w, r->body_len);
        put(w, "\r\n", 2);
    }
    if (x->close)
        puts_(w, "Connection: close\r\n");
    put(w, "\r\n", 2);
    if (r->body_len > 0) {
        if (!r->body)
            return -EINVAL;
        put(w, r->body, r->body_len);
    }
    return 0;
}

int yb_h1_serialize(const yb_request *r, const char *host_override, const char *extra_auth,
                    int close, uint8_t **out, size_t *len)
{
    yb_h1_extra x = {.host = host_override, .auth = extra_auth, .close = close};
    return yb_h1_serialize_with(r, &x, out, len);
}

int yb_h1_serialize_with(const yb_request *r, const yb_h1_extra *x, uint8_t **out, size_t *len)
{
    req_ctx c = {.r = r, .x = x};
    return two_pass(build_request, &c, out, len);
}

/* ---- response serialization (server role) ----------------------------- */

typedef struct {
    int status;
    const char *reason;
    const yb_h1_header *headers;
    size_t n;
    const uint8_t *body;
    size_t body_len;
    int keep_alive;
} resp_ctx;

static int build_response(writer *w, const void *vctx)
{
    const resp_ctx *c = vctx;
    int interim = c->status / 100 == 1;
    int bodiless = interim || c->status == 204 || c->status == 304;
    const char *reason = c->reason;

    if (c->status < 100 || c->status > 999)
        return -EINVAL;
    if (bodiless && c->body_len > 0)
        return -EINVAL;
    if (!reason) {
        reason = http_status_str((enum http_status)c->status);
        if (!reason || strcmp(reason, "<unknown>") == 0)
            reason = "";
    }
    size_t rlen = strlen(reason);
    if (!line_safe(reason, rlen))
        return -EINVAL;

    puts_(w, "HTTP/1.1 ");
    put_u64(w, (uint64_t)c->status);
    put(w, " ", 1);
    put(w, reason, rlen);
    put(w, "\r\n", 2);
    for (size_t i = 0; i < c->n; i++) {
        const yb_h1_header *h = &c->headers[i];
        const char *name = h->name ? h->name : "";
        if (name_is(name, h->name_len, "content-length") ||
            name_is(name, h->name_len, "transfer-encoding") ||
            name_is(name, h->name_len, "connection"))
            continue;
        if (!name_ok(name, h->name_len) || (h->value_len && !h->value) ||
            !line_safe(h->value, h->value_len))
            return -EINVAL;
        put_header(w, name, h->name_len, h->value, h->value_len);
    }
    if (!bodiless) {
        puts_(w, "Content-Length: ");
        put_u64(w, c->body_len);
        put(w, "\r\n", 2);
    }
    if (!c->keep_alive && !interim)
        puts_(w, "Connection: close\r\n");
    put(w, "\r\n", 2);
    if (c->body && c->body_len > 0)
        put(w, c->body, c->body_len);
    return 0;
}

int yb_h1_serialize_response(int status, const char *reason,
                             const yb_h1_header *headers, size_t n,
                             const uint8_t *body, size_t body_len, int keep_alive,
                             uint8_t **out, size_t *outlen)
{
    if (n > 0 && !headers)
        return -EINVAL;
    resp_ctx c = {.status = status, .reason = reason, .headers = headers, .n = n,
                  .body = body, .body_len = body_len, .keep_alive = keep_alive};
    return two_pass(build_response, &c, out, outlen);
}

/* ---- response parsing (client role) ----------------------------------- */

/* Which parser has the current response: none yet, http_parser (every
 * response it does not take apart itself goes there, from its first
 * byte), or the fast path (fast_head took its head; the body is counted
 * by fast_body). */
enum { RM_START, RM_SLOW, RM_FAST };

struct yb_h1_resp {
    http_parser parser;
    uint64_t max_body;
    uint64_t body_len;
    int head;       /* response to HEAD: never a body */
    int status;
    int keep_alive;
    int complete;
    int truncated;
    int too_large;
    int head_done;  /* the final (non-1xx) response head was parsed */
    int mode;       /* RM_*: which parser has this response */
    int slow_only;  /* yb_h1_resp_slow_only */
    uint64_t fast_left; /* RM_FAST: body bytes still to come (bodiless:
                         * the Content-Length, UINT64_MAX for none) */
    int minor, conn;    /* RM_FAST: HTTP/1.minor; Connection (fast_head) */
    const char *err; /* static; NULL = no error */
    /* the first bytes of a non-2xx body (for the report), fixed size */
    uint8_t err_head[YB_H1_RESP_HEAD_KEEP];
    size_t head_len;
    /* yb_h1_resp_keep_body: the first keep_cap bytes of a 2xx body */
    uint8_t *keep;
    size_t keep_cap, keep_len;
    /* yb_h1_resp_keep_all: this response's head and whole body */
    int all;
    size_t all_body_cap, all_head_cap;
    int all_cut;            /* the body outgrew its cap (or memory) */
    int head_cut;           /* the head did: it ends at its last whole field */
    int in_value;           /* the head: last bytes were a value's */
    uint8_t *all_body, *all_head;
    size_t all_body_len, all_head_len, all_body_alloc, all_head_alloc;
};

/* Appends n bytes to the growable *buf (at most cap in all).  Returns 0,
 * or -1 when they do not fit (nothing appended). */
static int keep_append(uint8_t **buf, size_t *len, size_t *alloc, size_t cap, const void *d,
                       size_t n)
{
    if (n > cap - *len)
        return -1;
    if (*len + n > *alloc) {
        size_t na = *alloc ? *alloc : 1024;
        while (na < *len + n)
            na *= 2;
        if (na > cap)
            na = cap;
        uint8_t *nb = realloc(*buf, na);
        if (!nb)
            return -1;
        *buf = nb;
        *alloc = na;
    }
    memcpy(*buf + *len, d, n);
    *len += n;
    return 0;
}

/* Appends to the kept head; once a field does not fit, the head ends at
 * the last whole field (a cut value is never read as the value). */
static void head_append(yb_h1_resp *p, const void *d, size_t n)
{
    if (p->head_cut)
        return;
    if (keep_append(&p->all_head, &p->all_head_len, &p->all_head_alloc, p->all_head_cap, d, n) <
        0) {
        p->head_cut = 1;
        while (p->all_head_len && p->all_head[p->all_head_len - 1] != '\n')
            p->all_head_len--;
    }
}

/* The head of a kept response: "name: value\n" per field, names lowered. */
static int resp_on_header_field(http_parser *hp, const char *at, size_t len)
{
    yb_h1_resp *p = hp->data;
    if (!p->all)
        return 0;
    if (p->in_value) {
        head_append(p, "\n", 1);
        p->in_value = 0;
    }
    char low[256];
    while (len) {
        size_t n = len < sizeof low ? len : sizeof low;
        for (size_t i = 0; i < n; i++)
            low[i] = at[i] >= 'A' && at[i] <= 'Z' ? (char)(at[i] - 'A' + 'a') : at[i];
        head_append(p, low, n);
        at += n;
        len -= n;
    }
    return 0;
}

static int resp_on_header_value(http_parser *hp, const char *at, size_t len)
{
    yb_h1_resp *p = hp->data;
    if (!p->all)
        return 0;
    if (!p->in_value) {
        head_append(p, ": ", 2);
        p->in_value = 1;
    }
    head_append(p, at, len);
    return 0;
}

static int resp_on_headers_complete(http_parser *hp)
{
    yb_h1_resp *p = hp->data;
    int st = (int)hp->status_code;
    if (p->all && p->in_value) {
        head_append(p, "\n", 1);
        p->in_value = 0;
    }
    p->status = st;
    if (st < 100) { /* http_parser takes any three digits */
        p->err = "invalid HTTP status code";
        return -1;
    }
    if (hp->http_major != 1) {
        p->err = "unsupported HTTP version";
        return -1;
    }
    if (st == 101) {
        /* We never ask for an upgrade; the bytes after this are not HTTP. */
        p->err = "unexpected 101 Switching Protocols";
        return -1;
    }
    /* RFC 9112 6.3: these never have a body, whatever the headers say
     * (http_parser would otherwise honour a Content-Length on 204/304). */
    p->head_done = st / 100 != 1;
    if (st / 100 == 1 || st == 204 || st == 304 || p->head)
        return 1;
    if (!(hp->flags & F_CHUNKED) && hp->content_length != UINT64_MAX &&
        hp->content_length > p->max_body) {
        p->err = "response body too large";
        p->too_large = 1;
        return -1;
    }
    return 0;
}

/* Counts len body bytes at at (keeping what is asked for).  Returns 0, or
 * -1 when the body grows over max_body. */
static int take_body(yb_h1_resp *p, const char *at, size_t len)
{
    if (len > p->max_body - p->body_len) {
        p->err = "response body too large";
        p->too_large = 1;
        return -1;
    }
    /* counted, never kept, except the head of an error's body */
    if (p->status / 100 != 2 && p->head_len < sizeof p->err_head) {
        size_t n = sizeof p->err_head - p->head_len;
        memcpy(p->err_head + p->head_len, at, n < len ? n : len);
        p->head_len += n < len ? n : len;
    }
    if (p->all && !p->all_cut && /* any status: one the run accepts is a success too */
        keep_append(&p->all_body, &p->all_body_len, &p->all_body_alloc, p->all_body_cap, at,
                    len) < 0)
        p->all_cut = 1;
    if (p->keep && p->status / 100 == 2 && p->keep_len < p->keep_cap) {
        size_t n = p->keep_cap - p->keep_len;
        memcpy(p->keep + p->keep_len, at, n < len ? n : len);
        p->keep_len += n < len ? n : len;
    }
    p->body_len += len;
    return 0;
}

static int resp_on_body(http_parser *hp, const char *at, size_t len)
{
    return take_body(hp->data, at, len);
}

static int resp_on_message_complete(http_parser *hp)
{
    yb_h1_resp *p = hp->data;
    if (hp->status_code / 100 == 1) {
        /* Interim (100 Continue, 103 Early Hints): the real answer follows. */
        p->body_len = 0;
        p->head_len = 0;
        p->status = 0;
        p->all_head_len = p->all_body_len = 0;
        p->in_value = p->head_cut = 0;
        return 0;
    }
    p->complete = 1;
    p->keep_alive = http_should_keep_alive(hp);
    http_parser_pause(hp, 1);
    return 0;
}

/* A response whose head is kept (yb_h1_resp_keep_all) gets the header
 * callbacks; any other is parsed without them (two calls per field
 * saved). */
static const http_parser_settings resp_settings_all = {
    .on_header_field = resp_on_header_field,
    .on_header_value = resp_on_header_value,
    .on_headers_complete = resp_on_headers_complete,
    .on_body = resp_on_body,
    .on_message_complete = resp_on_message_complete,
};
static const http_parser_settings resp_settings = {
    .on_headers_complete = resp_on_headers_complete,
    .on_body = resp_on_body,
    .on_message_complete = resp_on_message_complete,
};

yb_h1_resp *yb_h1_resp_new(uint64_t max_body)
{
    yb_h1_resp *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->max_body = max_body;
    yb_h1_resp_reset(p, 0);
    return p;
}

void yb_h1_resp_free(yb_h1_resp *p)
{
    if (p) {
        free(p->keep);
        free(p->all_body);
        free(p->all_head);
    }
    free(p);
}

void yb_h1_resp_keep_all(yb_h1_resp *p, size_t body_cap, size_t head_cap)
{
    p->all = 1;
    p->all_body_cap = body_cap;
    p->all_head_cap = head_cap;
}

size_t yb_h1_resp_kept_alloc(const yb_h1_resp *p)
{
    return p->all_body_alloc + p->all_head_alloc;
}

void yb_h1_resp_keep_drop(yb_h1_resp *p)
{
    free(p->all_body);
    p->all_body = NULL;
    p->all_body_alloc = p->all_body_len = 0;
    p->all_cut = 1;
}

void yb_h1_resp_kept(const yb_h1_resp *p, const uint8_t **body, size_t *body_len, int *whole,
                     const uint8_t **head, size_t *head_len)
{
    *body = p->all_body_len ? p->all_body : NULL;
    *body_len = p->all_body_len;
    *whole = p->all && !p->all_cut;
    *head = p->all_head_len ? p->all_head : NULL;
    *head_len = p->all_head_len;
}

int yb_h1_resp_keep_body(yb_h1_resp *p, size_t cap)
{
    uint8_t *k = cap ? malloc(cap) : NULL;
    if (cap && !k)
        return -ENOMEM;
    free(p->keep);
    p->keep = k;
    p->keep_cap = cap;
    p->keep_len = 0;
    return 0;
}

const uint8_t *yb_h1_resp_body(const yb_h1_resp *p, size_t *len)
{
    *len = p->keep_len;
    return p->keep_len ? p->keep : NULL;
}

void yb_h1_resp_reset(yb_h1_resp *p, int head)
{
    /* http_parser is set up when a response goes to it (to_slow) */
    p->mode = RM_START;
    p->fast_left = 0;
    p->head = head ? 1 : 0;
    p->body_len = 0;
    p->keep_len = 0;
    p->status = 0;
    p->keep_alive = 0;
    p->complete = 0;
    p->truncated = 0;
    p->too_large = 0;
    p->head_len = 0;
    p->head_done = 0;
    p->err = NULL;
    /* a kept response's buffers stay for the next one, unless large */
    if (p->all_body_alloc > (64u << 10)) {
        free(p->all_body);
        p->all_body = NULL;
        p->all_body_alloc = 0;
    }
    p->all = p->all_cut = p->head_cut = p->in_value = 0;
    p->all_body_len = p->all_head_len = 0;
}

void yb_h1_resp_slow_only(yb_h1_resp *p, int on)
{
    p->slow_only = on ? 1 : 0;
}

/* Hands the current response to http_parser, from its first byte. */
static void to_slow(yb_h1_resp *p)
{
    if (p->mode == RM_SLOW)
        return;
    http_parser_init(&p->parser, HTTP_RESPONSE);
    p->parser.data = p;
    p->mode = RM_SLOW;
}

/* The fast path: the usual response of a load test -- a head that arrives
 * whole in one read, status 2xx-9xx, a Content-Length (or no body: 204,
 * 304, HEAD), CRLF line ends, plain header fields -- is taken apart here,
 * at a fraction of http_parser's cost per byte (half of the client's own
 * instructions per small request went to it).  Anything else (a 1xx, a
 * chunked or close-delimited body, Upgrade, a Connection value other than
 * "close" or "keep-alive", a field repeated that decides the framing, a
 * control byte, an obs-fold, a bare LF, a body over max_body, a head not
 * whole in these bytes) is declined and goes to http_parser whole, which
 * decides it and words its errors as before: the fast path accepts only
 * what http_parser accepts, with the same meaning (the unit tests compare
 * the two on every split of a set of responses and on mutated ones). */

/* Longest head the fast path looks for (a longer one goes to http_parser). */
#define FAST_HEAD_MAX 4096
#define FAST_DECLINE (-2)

/* Byte classes of the fast path: FC_T a tchar (RFC 9110: what a field
 * name is made of), FC_V a byte a field value or reason phrase may hold
 * (anything but CR, LF and the other control bytes; HTAB is allowed). */
enum { FC_T = 1, FC_V = 2 };
static uint8_t fclass[256];
static pthread_once_t fclass_once = PTHREAD_ONCE_INIT;

static void fclass_init(void)
{
    for (int c = 0; c < 256; c++) {
        int t = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                (c && strchr("!#$%&'*+-.^_`|~", c));
        int v = (c >= 0x20 && c != 0x7f) || c == '\t';
        fclass[c] = (uint8_t)((t ? FC_T : 0) | (v ? FC_V : 0));
    }
}

/* Case-insensitive equality of d[0..n) with lit, n >= 8 bytes of lower-case
 * letters and '-', eight bytes at a time (the last word overlapping the
 * one before).  Setting bit 5 lowers an upper-case letter and leaves '-';
 * the only other byte it turns into one of those is CR (into '-'), which
 * neither a field name nor a field value holds. */
static int span_is(const uint8_t *d, size_t n, const char *lit)
{
    const uint64_t low = 0x2020202020202020ull;
    uint64_t a, b;
    for (size_t k = 0;; k += 8) {
        if (k > n - 8)
            k = n - 8;
        memcpy(&a, d + k, 8);
        memcpy(&b, lit + k, 8);
        if ((a | low) != b)
            return 0;
        if (k == n - 8)
            return 1;
    }
}

/* The end of the run of FC_V bytes from i (at most up to lim): eight
 * bytes at a time while none of them is below 0x20 (CR, HTAB, the other
 * controls) or 0x7f, byte by byte from the first word that has one. */
static size_t value_end(const uint8_t *d, size_t i, size_t lim)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    while (lim - i >= 8) {
        uint64_t w;
        memcpy(&w, d + i, 8);
        uint64_t del = w ^ (0x7f * ones);
        /* a byte below 0x20, or a zero byte in del (a 0x7f) */
        if (((w - 0x20 * ones) & ~w & highs) | ((del - ones) & ~del & highs))
            break;
        i += 8;
    }
    while (i < lim && (fclass[d[i]] & FC_V))
        i++;
    return i;
}

/* Which field decides the framing or the connection (0 for the others). */
enum { FF_OTHER, FF_LENGTH, FF_CONN, FF_DECLINE };
static int field_kind(const uint8_t *name, size_t n)
{
    switch (n) {
    case 14: return span_is(name, n, "content-length") ? FF_LENGTH : FF_OTHER;
    case 10: return span_is(name, n, "connection") ? FF_CONN : FF_OTHER;
    case 17: return span_is(name, n, "transfer-encoding") ? FF_DECLINE : FF_OTHER;
    case 16: return span_is(name, n, "proxy-connection") ? FF_DECLINE : FF_OTHER;
    case 7: return name_is((const char *)name, n, "upgrade") ? FF_DECLINE : FF_OTHER;
    default: return FF_OTHER;
    }
}

/* The response is complete: keep-alive as http_should_keep_alive says it
 * for a message that does not need EOF. */
static yb_h1_rc fast_complete(yb_h1_resp *p, int minor, int conn)
{
    p->complete = 1;
    p->keep_alive = minor ? conn != 1 : conn == 2;
    return YB_H1_COMPLETE;
}

/* Counts the body bytes of a response whose head fast_head took. */
static yb_h1_rc fast_body(yb_h1_resp *p, const uint8_t *d, size_t len, size_t *used)
{
    size_t take = len < p->fast_left ? len : (size_t)p->fast_left;
    (void)take_body(p, (const char *)d, take); /* cannot fail: checked against max_body */
    p->fast_left -= take;
    *used = take;
    return p->fast_left ? YB_H1_MORE : YB_H1_COMPLETE;
}

/* Takes apart the head at the start of d[0..len) (see above) and the body
 * bytes after it.  Returns FAST_DECLINE (nothing changed) or what feed
 * returns. */
static int fast_head(yb_h1_resp *p, const uint8_t *d, size_t len, size_t *used)
{
    size_t lim = len < FAST_HEAD_MAX ? len : FAST_HEAD_MAX, i;
    pthread_once(&fclass_once, fclass_init);
    /* "HTTP/1.x NNN" then " reason" or nothing, then CRLF */
    if (lim < 14 || memcmp(d, "HTTP/1.", 7) || (d[7] != '0' && d[7] != '1') || d[8] != ' ' ||
        d[9] < '2' || d[9] > '9' || d[10] < '0' || d[10] > '9' || d[11] < '0' || d[11] > '9')
        return FAST_DECLINE;
    int minor = d[7] - '0';
    int st = (d[9] - '0') * 100 + (d[10] - '0') * 10 + (d[11] - '0');
    i = 12;
    if (d[i] == ' ')
        for (i++; i < lim && (fclass[d[i]] & FC_V); i++)
            ;
    if (i + 1 >= lim || d[i] != '\r' || d[i + 1] != '\n')
        return FAST_DECLINE;
    i += 2;
    uint64_t cl = UINT64_MAX;
    int conn = 0; /* Connection: 0 none, 1 close, 2 keep-alive */
    for (;;) {
        if (i + 1 >= lim)
            return FAST_DECLINE;
        if (d[i] == '\r') {
            if (d[i + 1] != '\n')
                return FAST_DECLINE;
            i += 2;
            break;
        }
        size_t n0 = i;
        while (i < lim && (fclass[d[i]] & FC_T))
            i++;
        if (i == n0 || i >= lim || d[i] != ':')
            return FAST_DECLINE;
        size_t nlen = i - n0;
        for (i++; i < lim && (d[i] == ' ' || d[i] == '\t'); i++)
            ;
        size_t v0 = i;
        i = value_end(d, i, lim);
        if (i + 1 >= lim || d[i] != '\r' || d[i + 1] != '\n')
            return FAST_DECLINE;
        /* (only spaces after the value: http_parser reads a trailing HTAB
         * as part of a Content-Length or Connection value) */
        size_t v1 = i;
        while (v1 > v0 && d[v1 - 1] == ' ')
            v1--;
        i += 2;
        const uint8_t *v = d + v0;
        size_t vlen = v1 - v0;
        int kind = field_kind(d + n0, nlen);
        if (kind == FF_DECLINE)
            return FAST_DECLINE;
        if (kind == FF_LENGTH) {
            if (cl != UINT64_MAX || vlen == 0 || vlen > 18)
                return FAST_DECLINE;
            cl = 0;
            for (size_t k = 0; k < vlen; k++) {
                if (v[k] < '0' || v[k] > '9')
                    return FAST_DECLINE;
                cl = cl * 10 + (uint64_t)(v[k] - '0');
            }
        } else if (kind == FF_CONN) {
            if (conn)
                return FAST_DECLINE;
            if (vlen == 5 && name_is((const char *)v, vlen, "close"))
                conn = 1;
            else if (vlen == 10 && span_is(v, vlen, "keep-alive"))
                conn = 2;
            else
                return FAST_DECLINE;
        }
    }
    /* RFC 9112 6.3: 204, 304 and the answer to HEAD have no body */
    int bodiless = st == 204 || st == 304 || p->head;
    if (!bodiless && (cl == UINT64_MAX || cl > p->max_body))
        return FAST_DECLINE; /* close-delimited, or too large: http_parser says so */
    p->mode = RM_FAST;
    p->status = st;
    p->head_done = 1;
    p->minor = minor;
    p->conn = conn;
    if (bodiless) {
        p->fast_left = cl; /* what body_expected says, as for http_parser */
        *used = i;
        return fast_complete(p, minor, conn);
    }
    p->fast_left = cl;
    size_t took = 0;
    yb_h1_rc rc = fast_body(p, d + i, len - i, &took);
    *used = i + took;
    return rc == YB_H1_COMPLETE ? fast_complete(p, minor, conn) : rc;
}

yb_h1_rc yb_h1_resp_feed(yb_h1_resp *p, const uint8_t *data, size_t len, size_t *used)
{
    *used = 0;
    if (p->err)
        return YB_H1_ERROR;
    if (p->complete) {
        p->err = "response already complete (reset before the next one)";
        return YB_H1_ERROR;
    }
    if (len == 0) /* execute() would take it for EOF */
        return YB_H1_MORE;
    if (p->mode == RM_FAST) {
        yb_h1_rc rc = fast_body(p, data, len, used);
        return rc == YB_H1_COMPLETE ? fast_complete(p, p->minor, p->conn) : rc;
    }
    if (p->mode == RM_START && !p->all && !p->slow_only) {
        int rc = fast_head(p, data, len, used);
        if (rc != FAST_DECLINE)
            return (yb_h1_rc)rc;
    }
    to_slow(p);
    size_t n = http_parser_execute(&p->parser, p->all ? &resp_settings_all : &resp_settings,
                                   (const char *)data, len);
    *used = n;
    if (p->complete)
        return YB_H1_COMPLETE;
    enum http_errno e = HTTP_PARSER_ERRNO(&p->parser);
    if (e != HPE_OK) {
        if (!p->err)
            p->err = http_errno_description(e);
        return YB_H1_ERROR;
    }
    if (n != len) {
        p->err = "response parser stopped early";
        return YB_H1_ERROR;
    }
    return YB_H1_MORE;
}

yb_h1_rc yb_h1_resp_eof(yb_h1_resp *p)
{
    if (p->complete)
        return YB_H1_COMPLETE;
    if (p->err)
        return YB_H1_ERROR;
    if (p->mode == RM_FAST) { /* in the body: its length was announced */
        p->truncated = 1;
        p->err = "connection closed before the response was complete";
        return YB_H1_ERROR;
    }
    to_slow(p);
    /* len 0 tells http_parser about EOF: a close-delimited body completes,
     * anything else mid-message is HPE_INVALID_EOF_STATE. */
    http_parser_execute(&p->parser, p->all ? &resp_settings_all : &resp_settings, "", 0);
    if (p->complete)
        return YB_H1_COMPLETE;
    enum http_errno e = HTTP_PARSER_ERRNO(&p->parser);
    if (e == HPE_OK || e == HPE_INVALID_EOF_STATE) {
        p->truncated = 1;
        p->err = "connection closed before the response was complete";
    } else if (!p->err) {
        p->err = http_errno_description(e);
    }
    return YB_H1_ERROR;
}

int yb_h1_resp_status(const yb_h1_resp *p) { return p->status; }
int yb_h1_resp_keep_alive(const yb_h1_resp *p) { return p->keep_alive; }
uint64_t yb_h1_resp_body_len(const yb_h1_resp *p) { return p->body_len; }
const char *yb_h1_resp_error(const yb_h1_resp *p) { return p->err ? p->err : ""; }
int yb_h1_resp_truncated(const yb_h1_resp *p) { return p->err && p->truncated; }
int yb_h1_resp_too_large(const yb_h1_resp *p) { return p->err && p->too_large; }

const uint8_t *yb_h1_resp_body_head(const yb_h1_resp *p, size_t *len)
{
    *len = p->head_len;
    return p->head_len ? p->err_head : NULL;
}

int yb_h1_resp_head_done(const yb_h1_resp *p) { return p->head_done; }
int yb_h1_resp_fast(const yb_h1_resp *p) { return p->mode == RM_FAST; }

uint64_t yb_h1_resp_body_expected(const yb_h1_resp *p)
{
    if (p->mode == RM_FAST)
        return p->fast_left == UINT64_MAX ? UINT64_MAX : p->body_len + p->fast_left;
    /* http_parser counts content_length down as the body arrives */
    if (!p->head_done || (p->parser.flags & F_CHUNKED) || p->parser.content_length == UINT64_MAX)
        return UINT64_MAX;
    return p->body_len + p->parser.content_length;
}

/* ---- request parsing (server role) ------------------------------------ */

/* Bodies above this are not kept allocated between requests. */
#define BODY_KEEP_MAX (1u << 20)

enum item { IN_NONE, IN_URL, IN_FIELD, IN_VALUE };

struct yb_h1_req {
    http_parser parser;
    uint64_t max_body;
    /* Head arena: URL, names and values, each NUL-terminated, contiguous;
     * fixed size so views never move. */
    char *arena;
    size_t arena_used;
    enum item in;
    char *item; /* start of the item being received */
    const char *url;
    size_t url_len;
    yb_h1_header *headers; /* YB_H1_REQ_MAX_HEADERS slots */
    size_t n_headers;      /* finished headers */
    size_t n_head;         /* of which in the request head (the rest: trailers) */
    uint8_t *body;
    size_t body_len, body_cap;
    int started, headers_done, complete, keep_alive;
    int err_status;
    const char *err;
};

static int req_fail(yb_h1_req *p, int status, const char *msg)
{
    if (!p->err) {
        p->err = msg;
        p->err_status = status;
    }
    return -1;
}

static int arena_append(yb_h1_req *p, const char *at, size_t len)
{
    /* Always leave room for the item's terminator. */
    if (len >= YB_H1_REQ_MAX_HEAD_BYTES - p->arena_used) {
        if (p->in == IN_URL)
            return req_fail(p, 414, "request URL too long");
        return req_fail(p, 431, "request header fields too large");
    }
    memcpy(p->arena + p->arena_used, at, len);
    p->arena_used += len;
    return 0;
}

/* Terminates the item in progress and files it. */
static void finish_item(yb_h1_req *p)
{
    char *end = p->arena + p->arena_used;
    size_t len = (size_t)(end - p->item);
    switch (p->in) {
    case IN_NONE:
        return;
    case IN_URL:
        p->url = p->item;
        p->url_len = len;
        break;
    case IN_FIELD: /* a name with no value callback: empty value */
        p->headers[p->n_headers].name_len = len;
        *end = '\0';
        p->arena_used++;
        end = p->arena + p->arena_used;
        if (p->arena_used >= YB_H1_REQ_MAX_HEAD_BYTES) {
            req_fail(p, 431, "request header fields too large");
            p->in = IN_NONE;
            return;
        }
        p->headers[p->n_headers].value = end;
        p->headers[p->n_headers].value_len = 0;
        p->n_headers++;
        break;
    case IN_VALUE:
        p->headers[p->n_headers].value_len = len;
        p->n_headers++;
        break;
    }
    *end = '\0';
    p->arena_used++;
    p->in = IN_NONE;
}

static void start_item(yb_h1_req *p, enum item in)
{
    p->in = in;
    p->item = p->arena + p->arena_used;
}

static int req_on_message_begin(http_parser *hp)
{
    yb_h1_req *p = hp->data;
    p->started = 1;
    return 0;
}

static int req_on_url(http_parser *hp, const char *at, size_t len)
{
    yb_h1_req *p = hp->data;
    if (p->in != IN_URL)
        start_item(p, IN_URL);
    return arena_append(p, at, len);
}

static int req_on_header_field(http_parser *hp, const char *at, size_t len)
{
    yb_h1_req *p = hp->data;
    if (p->in != IN_FIELD) {
        finish_item(p);
        if (p->err)
            return -1;
        if (p->n_headers >= YB_H1_REQ_MAX_HEADERS)
            return req_fail(p, 431, "too many request header fields");
        start_item(p, IN_FIELD);
        p->headers[p->n_headers].name = p->item;
    }
    return arena_append(p, at, len);
}

static int req_on_header_value(http_parser *hp, const char *at, size_t len)
{
    yb_h1_req *p = hp->data;
    if (p->in != IN_VALUE) {
        if (p->in != IN_FIELD) /* http_parser never does this; be safe */
            return req_fail(p, 400, "header value without a name");
        yb_h1_header *h = &p->headers[p->n_headers];
        h->name_len = (size_t)(p->arena + p->arena_used - p->item);
        p->arena[p->arena_used++] = '\0';
        start_item(p, IN_VALUE);
        h->value = p->item;
    }
    return arena_append(p, at, len);
}

static int req_on_headers_complete(http_parser *hp)
{
    yb_h1_req *p = hp->data;
    finish_item(p);
    if (p->err)
        return -1;
    if (!p->url) { /* cannot happen with http_parser; keep views valid */
        p->url = p->arena + p->arena_used;
        p->arena[p->arena_used++] = '\0';
        p->url_len = 0;
    }
    p->headers_done = 1;
    p->n_head = p->n_headers;
    if (hp->http_major != 1)
        return req_fail(p, 505, "HTTP version not supported");
    if (!(hp->flags & F_CHUNKED) && hp->content_length != UINT64_MAX &&
        hp->content_length > p->max_body)
        return req_fail(p, 413, "body too large");
    return 0;
}

static int req_on_body(http_parser *hp, const char *at, size_t len)
{
    yb_h1_req *p = hp->data;
    if (len > p->max_body - p->body_len)
        return req_fail(p, 413, "body too large");
    size_t need = p->body_len + len;
    if (need > p->body_cap) {
        /* Grow geometrically with what actually arrives (a claimed
         * Content-Length alone reserves nothing), never past max_body. */
        size_t cap = p->body_cap ? p->body_cap : 4096;
        while (cap < need)
            cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        if ((uint64_t)cap > p->max_body)
            cap = need;
        uint8_t *nb = realloc(p->body, cap);
        if (!nb)
            return req_fail(p, 500, "out of memory");
        p->body = nb;
        p->body_cap = cap;
    }
    memcpy(p->body + p->body_len, at, len);
    p->body_len = need;
    return 0;
}

static int req_on_message_complete(http_parser *hp)
{
    yb_h1_req *p = hp->data;
    finish_item(p); /* a trailer in progress */
    if (p->err)
        return -1;
    p->complete = 1;
    p->keep_alive = http_should_keep_alive(hp);
    http_parser_pause(hp, 1);
    return 0;
}

static const http_parser_settings req_settings = {
    .on_message_begin = req_on_message_begin,
    .on_url = req_on_url,
    .on_header_field = req_on_header_field,
    .on_header_value = req_on_header_value,
    .on_headers_complete = req_on_headers_complete,
    .on_body = req_on_body,
    .on_message_complete = req_on_message_complete,
};

yb_h1_req *yb_h1_req_new(uint64_t max_body)
{
    yb_h1_req *p = calloc(1, sizeof *p);
    if (!p)
        goto fail;
    p->max_body = max_body;
    p->arena = malloc(YB_H1_REQ_MAX_HEAD_BYTES);
    if (!p->arena)
        goto fail;
    p->headers = calloc(YB_H1_REQ_MAX_HEADERS, sizeof *p->headers);
    if (!p->headers)
        goto fail;
    yb_h1_req_reset(p);
    return p;
fail:
    yb_h1_req_free(p);
    return NULL;
}

void yb_h1_req_free(yb_h1_req *p)
{
    if (!p)
        return;
    free(p->arena);
    free(p->headers);
    free(p->body);
    free(p);
}

void yb_h1_req_reset(yb_h1_req *p)
{
    http_parser_init(&p->parser, HTTP_REQUEST);
    p->parser.data = p;
    p->arena_used = 0;
    p->in = IN_NONE;
    p->item = p->arena;
    p->url = NULL;
    p->url_len = 0;
    p->n_headers = 0;
    p->n_head = 0;
    p->body_len = 0;
    if (p->body_cap > BODY_KEEP_MAX) {
        free(p->body);
        p->body = NULL;
        p->body_cap = 0;
    }
    p->started = p->headers_done = p->complete = p->keep_alive = 0;
    p->err_status = 0;
    p->err = NULL;
}

yb_h1_rc yb_h1_req_feed(yb_h1_req *p, const uint8_t *data, size_t len, size_t *used)
{
    *used = 0;
    if (p->err)
        return YB_H1_ERROR;
    if (p->complete) {
        req_fail(p, 400, "request already complete (reset before the next one)");
        return YB_H1_ERROR;
    }
    if (len == 0) /* execute() would take it for EOF */
        return YB_H1_MORE;
    size_t n = http_parser_execute(&p->parser, &req_settings, (const char *)data, len);
    *used = n;
    if (p->complete)
        return YB_H1_COMPLETE;
    enum http_errno e = HTTP_PARSER_ERRNO(&p->parser);
    if (e != HPE_OK) {
        req_fail(p, 400, http_errno_description(e));
        return YB_H1_ERROR;
    }
    if (n != len) {
        /* CONNECT / Upgrade: http_parser hands the rest over as another
         * protocol, which we do not speak. */
        req_fail(p, 400, "protocol upgrade not supported");
        return YB_H1_ERROR;
    }
    return YB_H1_MORE;
}

yb_h1_rc yb_h1_req_eof(yb_h1_req *p)
{
    if (p->complete)
        return YB_H1_COMPLETE;
    if (p->err)
        return YB_H1_ERROR;
    if (!p->started)
        return YB_H1_MORE;
    req_fail(p, 400, "connection closed before the request was complete");
    return YB_H1_ERROR;
}

int yb_h1_req_headers_done(const yb_h1_req *p) { return p->headers_done; }

const char *yb_h1_req_method(const yb_h1_req *p)
{
    return p->headers_done ? http_method_str((enum http_method)p->parser.method) : "";
}

const char *yb_h1_req_path(const yb_h1_req *p, size_t *len)
{
    if (len)
        *len = p->headers_done ? p->url_len : 0;
    return p->headers_done ? p->url : "";
}

void yb_h1_req_version(const yb_h1_req *p, int *major, int *minor)
{
    *major = p->parser.http_major;
    *minor = p->parser.http_minor;
}

const yb_h1_header *yb_h1_req_headers(const yb_h1_req *p, size_t *n)
{
    *n = p->n_headers;
    return p->headers;
}

size_t yb_h1_req_head_count(const yb_h1_req *p) { return p->n_head; }

const yb_h1_header *yb_h1_req_header(const yb_h1_req *p, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < p->n_headers; i++) {
        const yb_h1_header *h = &p->headers[i];
        if (h->name_len != len)
            continue;
        size_t k = 0;
        while (k < len && lower((unsigned char)h->name[k]) == lower((unsigned char)name[k]))
            k++;
        if (k == len)
            return h;
    }
    return NULL;
}

const uint8_t *yb_h1_req_body(const yb_h1_req *p, size_t *len)
{
    *len = p->body_len;
    return p->body_len ? p->body : NULL;
}

int yb_h1_req_keep_alive(const yb_h1_req *p) { return p->keep_alive; }
const char *yb_h1_req_error(const yb_h1_req *p) { return p->err ? p->err : ""; }
int yb_h1_req_error_status(const yb_h1_req *p) { return p->err ? p->err_status : 0; }
