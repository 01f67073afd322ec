/* HTTP/1.1 extraction: requests from the client direction through the
 * project's request parser (yb_h1_req_*, libhttp-parser), responses from
 * the server direction through yb_h1_resp_* only for their status, matched
 * to requests in order (HTTP/1.1 answers in request order, pipelined or
 * not).
 *
 * After a hole in either direction the parser is reset and scans for the
 * next line that starts like a request ("METHOD /") or a status line
 * ("HTTP/1."), so a gap costs only the message it cuts.  A line start too
 * short to tell (a segment ending in "GE") is kept until more bytes come. */
#include "config.h"
#include "capture/capture_priv.h"
#include "codec/h1.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Requests waiting for their response; more are released without one
 * (a server that never answers must not hold records forever). */
#define MAX_WAITING 1024
/* Longest line start the resync must see to tell: "OPTIONS /". */
#define CARRY_MAX 16
/* Waiting requests a connection holds without a heap allocation. */
#define WAIT_SMALL 8

/* A line start kept by the resync until it can tell. */
typedef struct {
    uint8_t b[CARRY_MAX];
    size_t n;
} carry;

typedef struct {
    yb_cap_slot *slot;
    int head; /* HEAD: the response has no body */
} waiting;

struct yb_cap_h1 {
    yb_capture *c;
    uint64_t conn_id;
    char scheme[8];
    yb_h1_req *rq;
    yb_cap_slot *cur;   /* slot of the request being parsed, may be NULL */
    int in_req;         /* bytes of a request have been fed */
    int req_resync;
    int req_last_lf;    /* the byte before the next chunk was '\n' */
    carry req_carry;
    yb_h1_resp *rs;
    int resp_active;
    int resp_resync;
    int resp_last_lf;
    carry resp_carry;
    /* Requests waiting for their responses: a ring of wcap entries, in
     * small until more are pipelined (it was MAX_WAITING entries in the
     * struct, 16 KB zeroed per connection: most have one or two). */
    waiting *wait;
    size_t wcap, wait_head, nwait;
    waiting small[WAIT_SMALL];
};

static const char *const METHODS[] = {"GET ", "POST ", "PUT ", "PATCH ", "DELETE ",
                                      "HEAD ", "OPTIONS "};

static int starts_request(const uint8_t *d, size_t n)
{
    for (size_t i = 0; i < sizeof METHODS / sizeof METHODS[0]; i++) {
        size_t l = strlen(METHODS[i]);
        if (n >= l + 1 && !memcmp(d, METHODS[i], l) && (d[l] == '/' || d[l] == '*'))
            return 1;
    }
    return 0;
}

/* 1 when d[0..n), n > 0, is too short to tell whether it starts a
 * request: a prefix of some "METHOD /". */
static int maybe_request(const uint8_t *d, size_t n)
{
    for (size_t i = 0; i < sizeof METHODS / sizeof METHODS[0]; i++)
        if (n <= strlen(METHODS[i]) && !memcmp(d, METHODS[i], n))
            return 1;
    return 0;
}

static int starts_status(const uint8_t *d, size_t n)
{
    return n >= 8 && !memcmp(d, "HTTP/1.", 7);
}

static int maybe_status(const uint8_t *d, size_t n)
{
    return n < 8 && !memcmp(d, "HTTP/1.", n < 7 ? n : 7);
}

typedef int (*line_test)(const uint8_t *d, size_t n);

/* Finds the first line start in d[0..n) at which match() holds, or from
 * which the bytes are too few to tell (maybe(): *held = 1); *last_lf says
 * whether offset 0 is a line start and is updated.  Returns the offset or
 * n. */
static size_t resync(const uint8_t *d, size_t n, int *last_lf, line_test match,
                     line_test maybe, int *held)
{
    *held = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(i == 0 ? *last_lf : d[i - 1] == '\n'))
            continue;
        if (match(d + i, n - i))
            return i;
        if (maybe(d + i, n - i)) {
            *held = 1;
            return i;
        }
    }
    if (n)
        *last_lf = d[n - 1] == '\n';
    return n;
}

/* The resync of one direction over d[0..n), with the line start kept in
 * cy from the previous chunk.  Skipped bytes are counted as unparsed.
 * Returns the offset in d where the next message starts, or n when none
 * starts yet (everything was skipped or kept).  When the message starts in
 * the kept bytes, they are copied to first (*first_n of them, else 0): the
 * caller parses them before d. */
static size_t resync_dir(yb_cap_h1 *h, carry *cy, int *last_lf, const uint8_t *d, size_t n,
                         line_test match, line_test maybe, uint8_t first[CARRY_MAX],
                         size_t *first_n)
{
    yb_capture_stats *st = yb_cap_stats(h->c);
    *first_n = 0;
    if (cy->n) {
        uint8_t t[2 * CARRY_MAX];
        size_t add = n < CARRY_MAX ? n : CARRY_MAX, tn = cy->n + add;
        memcpy(t, cy->b, cy->n);
        memcpy(t + cy->n, d, add);
        if (match(t, tn)) {
            memcpy(first, cy->b, cy->n);
            *first_n = cy->n;
            cy->n = 0;
            return 0;
        }
        if (maybe(t, tn)) { /* still too short: tn < CARRY_MAX, so add == n */
            memcpy(cy->b + cy->n, d, n);
            cy->n += n;
            return n;
        }
        st->dropped_unparsed_bytes += cy->n;
        cy->n = 0;
        *last_lf = 0; /* the kept bytes had no line end */
    }
    int held;
    size_t off = resync(d, n, last_lf, match, maybe, &held);
    st->dropped_unparsed_bytes += off;
    if (held) {
        memcpy(cy->b, d + off, n - off); /* maybe() holds: fewer than 9 bytes */
        cy->n = n - off;
        return n;
    }
    return off;
}

/* Kept bytes that never got their rest are unparsed. */
static void drop_carry(yb_cap_h1 *h, carry *cy)
{
    yb_cap_stats(h->c)->dropped_unparsed_bytes += cy->n;
    cy->n = 0;
}

yb_cap_h1 *yb_cap_h1_new(yb_capture *c, uint64_t conn_id, const char *scheme, int midstream)
{
    yb_cap_h1 *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->c = c;
    h->wait = h->small;
    h->wcap = WAIT_SMALL;
    h->rq = yb_cap_h1_req_take(c);
    /* Response bodies are counted, never stored: no need for a small cap. */
    h->rs = yb_h1_resp_new(UINT64_MAX / 4);
    if (!h->rq || !h->rs) {
        yb_cap_h1_req_give(c, h->rq);
        yb_h1_resp_free(h->rs);
        free(h);
        return NULL;
    }
    h->conn_id = conn_id;
    snprintf(h->scheme, sizeof h->scheme, "%s", scheme);
    h->req_resync = h->resp_resync = midstream;
    h->req_last_lf = h->resp_last_lf = 1;
    return h;
}

static int iequal(const char *a, size_t al, const char *b)
{
    return al == strlen(b) && !strncasecmp(a, b, al);
}

/* Fills the slot's record from the parsed request; returns 0 or -1 when it
 * cannot be represented (counted by the caller as a parse drop). */
static int build(yb_cap_h1 *h, yb_cap_slot *s)
{
    yb_request *r = yb_cap_slot_req(s);
    size_t plen = 0, n = 0;
    const char *path = yb_h1_req_path(h->rq, &plen);
    const char *method = yb_h1_req_method(h->rq);
    if (!path)
        path = "";
    if (yb_cap_slot_set(s, &r->method, method, strlen(method)) < 0 ||
        yb_cap_slot_set(s, &r->path, path, strlen(path)) < 0 ||
        yb_cap_slot_set(s, &r->scheme, h->scheme, strlen(h->scheme)) < 0)
        return -1;
    const yb_h1_header *hd = yb_h1_req_headers(h->rq, &n);
    for (size_t i = 0; i < n; i++) {
        if (iequal(hd[i].name, hd[i].name_len, "host")) {
            if (!r->authority[0] &&
                yb_cap_slot_set(s, &r->authority, hd[i].value, hd[i].value_len) < 0)
                return -1;
            continue;
        }
        /* The sender derives the framing; the body is stored de-chunked. */
        if (iequal(hd[i].name, hd[i].name_len, "content-length") ||
            iequal(hd[i].name, hd[i].name_len, "transfer-encoding"))
            continue;
        if (yb_cap_slot_add_header(s, hd[i].name, hd[i].name_len, hd[i].value,
                                   hd[i].value_len) < 0)
            return -1;
    }
    size_t blen = 0;
    const uint8_t *body = yb_h1_req_body(h->rq, &blen);
    if (blen && yb_cap_slot_set_body(s, body, blen) < 0)
        return -1;
    r->protocol = (!strncmp(r->path, "/restconf/", 10) || !strcmp(r->path, "/restconf"))
                      ? YB_PROTO_RESTCONF
                      : YB_PROTO_HTTP1;
    return 0;
}

static void release_waiting(yb_cap_h1 *h, int status)
{
    if (!h->nwait)
        return;
    waiting *w = &h->wait[h->wait_head];
    if (w->slot) { /* NULL: a request lost to a gap, whose answer this is */
        if (status > 0 && status <= 999)
            yb_cap_slot_req(w->slot)->expected_status = (uint32_t)status;
        yb_cap_slot_done(h->c, w->slot);
    }
    h->wait_head = (h->wait_head + 1) % h->wcap;
    h->nwait--;
}

/* Doubles the ring (at most MAX_WAITING), the oldest first; returns 0 or
 * -1 (ENOMEM: the ring is as it was). */
static int grow_waiting(yb_cap_h1 *h)
{
    size_t nc = h->wcap * 2 < MAX_WAITING ? h->wcap * 2 : MAX_WAITING;
    waiting *nw = malloc(nc * sizeof *nw);
    if (!nw)
        return -1;
    for (size_t i = 0; i < h->nwait; i++)
        nw[i] = h->wait[(h->wait_head + i) % h->wcap];
    if (h->wait != h->small)
        free(h->wait);
    h->wait = nw;
    h->wcap = nc;
    h->wait_head = 0;
    return 0;
}

/* Queues a request for the next response (slot NULL: one that was lost,
 * so that its response does not go to the request after it). */
static void wait_for_response(yb_cap_h1 *h, yb_cap_slot *s, int head)
{
    /* (at the most, or out of memory, the oldest goes without its status) */
    if (h->nwait == h->wcap && (h->wcap == MAX_WAITING || grow_waiting(h) < 0))
        release_waiting(h, 0);
    waiting *w = &h->wait[(h->wait_head + h->nwait) % h->wcap];
    w->slot = s;
    w->head = head;
    h->nwait++;
}

static void request_complete(yb_cap_h1 *h)
{
    yb_cap_slot *s = h->cur;
    h->cur = NULL;
    h->in_req = 0;
    if (!s)
        return;
    if (build(h, s) < 0) {
        yb_cap_slot_drop(h->c, s, YB_DROP_PARSE);
        return;
    }
    yb_cap_slot_complete(h->c, s);
    wait_for_response(h, s, !strcmp(yb_h1_req_method(h->rq), "HEAD"));
}

static void abandon_request(yb_cap_h1 *h, yb_cap_drop_reason why)
{
    if (h->cur)
        yb_cap_slot_drop(h->c, h->cur, why);
    h->cur = NULL;
    h->in_req = 0;
    yb_h1_req_reset(h->rq);
}

static void client_data(yb_cap_h1 *h, const uint8_t *d, size_t n)
{
    yb_capture_stats *st = yb_cap_stats(h->c);
    while (n) {
        if (h->req_resync) {
            uint8_t first[CARRY_MAX];
            size_t fn, off = resync_dir(h, &h->req_carry, &h->req_last_lf, d, n,
                                        starts_request, maybe_request, first, &fn);
            d += off;
            n -= off;
            if (!n && !fn)
                return;
            h->req_resync = 0;
            if (fn) {
                client_data(h, first, fn); /* the request's start, kept */
                continue;
            }
        }
        if (!h->in_req) {
            h->in_req = 1;
            h->cur = yb_cap_slot_open(h->c, h->conn_id);
        }
        size_t used = 0;
        yb_h1_rc rc = yb_h1_req_feed(h->rq, d, n, &used);
        if (used > n)
            used = n;
        d += used;
        n -= used;
        if (rc == YB_H1_COMPLETE) {
            request_complete(h);
            yb_h1_req_reset(h->rq);
            h->req_last_lf = 1;
            continue;
        }
        if (rc == YB_H1_ERROR) {
            int tl = yb_h1_req_error_status(h->rq) == 413;
            if (!tl)
                st->h1_errors++;
            abandon_request(h, tl ? YB_DROP_TOO_LARGE : YB_DROP_PARSE);
            h->req_resync = 1;
            h->req_last_lf = 0;
            continue;
        }
        return; /* YB_H1_MORE: everything was used */
    }
}

static void server_data(yb_cap_h1 *h, const uint8_t *d, size_t n)
{
    yb_capture_stats *st = yb_cap_stats(h->c);
    while (n) {
        if (h->resp_resync) {
            uint8_t first[CARRY_MAX];
            size_t fn, off = resync_dir(h, &h->resp_carry, &h->resp_last_lf, d, n,
                                        starts_status, maybe_status, first, &fn);
            d += off;
            n -= off;
            if (!n && !fn)
                return;
            h->resp_resync = 0;
            if (fn) {
                server_data(h, first, fn); /* the status line's start, kept */
                continue;
            }
        }
        if (!h->resp_active) {
            yb_h1_resp_reset(h->rs, h->nwait ? h->wait[h->wait_head].head : 0);
            h->resp_active = 1;
        }
        size_t used = 0;
        yb_h1_rc rc = yb_h1_resp_feed(h->rs, d, n, &used);
        if (used > n)
            used = n;
        d += used;
        n -= used;
        if (rc == YB_H1_COMPLETE) {
            h->resp_active = 0;
            release_waiting(h, yb_h1_resp_status(h->rs));
            h->resp_last_lf = 1;
            continue;
        }
        if (rc == YB_H1_ERROR) {
            st->h1_errors++;
            h->resp_active = 0;
            h->resp_resync = 1;
            h->resp_last_lf = 0;
            continue;
        }
        return;
    }
}

void yb_cap_h1_data(yb_cap_h1 *h, int dir, const uint8_t *d, size_t n)
{
    if (dir == 0)
        client_data(h, d, n);
    else
        server_data(h, d, n);
}

void yb_cap_h1_gap(yb_cap_h1 *h, int dir)
{
    drop_carry(h, dir == 0 ? &h->req_carry : &h->resp_carry); /* cut by the hole */
    if (dir == 0) {
        int was_in = h->in_req;
        if (h->in_req)
            abandon_request(h, YB_DROP_GAP);
        /* The lost bytes most likely held (the rest of) a request whose
         * response is still to come: keep the pairing in step. */
        if (!h->req_resync) {
            if (!was_in)
                yb_cap_stats(h->c)->drop_gap++; /* counted as a whole lost request */
            wait_for_response(h, NULL, 0);
        }
        h->req_resync = 1;
        /* Holes end at segment boundaries, and a segment often starts a
         * message: let the resync look at the very next byte. */
        h->req_last_lf = 1;
    } else {
        /* The response being read (or a whole one) is lost: the oldest
         * waiting request keeps no status. */
        if (h->resp_active || h->nwait)
            release_waiting(h, 0);
        h->resp_active = 0;
        h->resp_resync = 1;
        h->resp_last_lf = 1;
    }
}

void yb_cap_h1_lost_request(yb_cap_h1 *h)
{
    yb_cap_stats(h->c)->drop_gap++;
    wait_for_response(h, NULL, 0);
}

void yb_cap_h1_fin(yb_cap_h1 *h, int dir)
{
    if (dir == 0) {
        if (h->in_req) {
            if (yb_h1_req_eof(h->rq) == YB_H1_COMPLETE)
                request_complete(h);
            else
                abandon_request(h, YB_DROP_INCOMPLETE);
        }
    } else if (h->resp_active) {
        h->resp_active = 0;
        if (yb_h1_resp_eof(h->rs) == YB_H1_COMPLETE)
            release_waiting(h, yb_h1_resp_status(h->rs));
    }
}

void yb_cap_h1_free(yb_cap_h1 *h)
{
    if (!h)
        return;
    if (h->c) {
        drop_carry(h, &h->req_carry);
        drop_carry(h, &h->resp_carry);
        yb_cap_h1_fin(h, 0);
        yb_cap_h1_fin(h, 1);
        while (h->nwait)
            release_waiting(h, 0);
    }
    yb_cap_h1_req_give(h->c, h->rq);
    yb_h1_resp_free(h->rs);
    if (h->wait != h->small)
        free(h->wait);
    free(h);
}
