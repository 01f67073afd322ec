/* HTTP/1.1 codec: request serialization and response parsing (Debian's
 * libhttp-parser), client role; request parsing for the server role.
 * No I/O here: bytes in, bytes and events out. */
#ifndef YB_H1_H
#define YB_H1_H

#include <stddef.h>
#include <stdint.h>
#include "corpus/corpus.h"

/* Serializes r as one HTTP/1.1 request: request line (r->method,
 * r->path), Host (host_override if non-NULL, else r->authority), the
 * record's headers in order except Host/Content-Length/Connection/
 * Transfer-Encoding and (when extra_auth is non-NULL) Authorization, then
 * extra_auth as an Authorization header value, Content-Length when there
 * is a body or the method is POST/PUT/PATCH, and the body.  close=1 adds
 * "Connection: close".  Header names are compared case-insensitively;
 * HTTP/2 pseudo-headers (names starting with ':') are dropped too, since
 * they have no HTTP/1.1 meaning.  An empty r->path is sent as "/".
 * Returns 0 with a malloc'd buffer (caller frees), -ENOMEM, or -EINVAL
 * (nothing allocated) when a field would break the message framing: an
 * empty method, SP in method or path, CR/LF/NUL anywhere in the head, an
 * empty header name or one containing ':' or whitespace. */
int yb_h1_serialize(const yb_request *r, const char *host_override, const char *extra_auth,
                    int close, uint8_t **out, size_t *len);

/* What a request carries beyond its record (yb_h1_serialize_with). */
typedef struct {
    const char *host;       /* Host instead of r->authority, or NULL */
    const char *auth;       /* Authorization value instead of the record's, or NULL */
    const yb_header *extra; /* headers sent after the record's (n_extra) */
    size_t n_extra;
    const char *user_agent; /* User-Agent instead of the record's, sent
                             * after extra, or NULL */
    int close;              /* adds "Connection: close" */
} yb_h1_extra;

/* yb_h1_serialize with x's additions: the record's headers (less any
 * User-Agent when x->user_agent is set), then x->extra, then User-Agent:
 * x->user_agent, each dropped and checked as the record's are.  The same
 * results. */
int yb_h1_serialize_with(const yb_request *r, const yb_h1_extra *x, uint8_t **out, size_t *len);

typedef enum {
    YB_H1_MORE = 0,     /* need more bytes */
    YB_H1_COMPLETE = 1, /* a full response was parsed */
    YB_H1_ERROR = -1,   /* malformed response */
} yb_h1_rc;

typedef struct yb_h1_resp yb_h1_resp;

/* Bytes of a non-2xx response body kept for the report. */
#define YB_H1_RESP_HEAD_KEEP 1024

/* Creates a response parser; max_body caps the response body (bytes),
 * which is counted, never kept, except the first YB_H1_RESP_HEAD_KEEP
 * bytes of a non-2xx body (in the parser, fixed size).  Returns NULL on
 * ENOMEM. */
yb_h1_resp *yb_h1_resp_new(uint64_t max_body);
void yb_h1_resp_free(yb_h1_resp *p);
/* Prepares for the response to the next request (head = 1 for HEAD:
 * no body follows). */
void yb_h1_resp_reset(yb_h1_resp *p, int head);
/* Feeds bytes.  Sets *used to the bytes consumed (bytes after a complete
 * response are left for the caller).  1xx interim responses are skipped.
 * Returns YB_H1_MORE, YB_H1_COMPLETE or YB_H1_ERROR. */
yb_h1_rc yb_h1_resp_feed(yb_h1_resp *p, const uint8_t *data, size_t len, size_t *used);
/* on = 1: every response goes to http_parser, none to the fast path
 * that takes the usual ones apart itself (for tests that compare the
 * two). */
void yb_h1_resp_slow_only(yb_h1_resp *p, int on);
/* 1 when the fast path has taken the current response (tests). */
int yb_h1_resp_fast(const yb_h1_resp *p);
/* Signals EOF: a response delimited by connection close completes here.
 * Returns YB_H1_COMPLETE or YB_H1_ERROR (incomplete). */
yb_h1_rc yb_h1_resp_eof(yb_h1_resp *p);
/* After COMPLETE: status code, 1 when the connection may be reused. */
int yb_h1_resp_status(const yb_h1_resp *p);
int yb_h1_resp_keep_alive(const yb_h1_resp *p);
/* Body bytes seen (decoded, chunked framing removed). */
uint64_t yb_h1_resp_body_len(const yb_h1_resp *p);
/* A static description of the last error ("" if none). */
const char *yb_h1_resp_error(const yb_h1_resp *p);
/* 1 once the final (non-1xx) response head has been parsed. */
int yb_h1_resp_head_done(const yb_h1_resp *p);
/* After the head: the body length its Content-Length announced, or
 * UINT64_MAX when unknown (head incomplete, chunked or close-delimited
 * body).  With yb_h1_resp_body_len, says how much of a cut-off body came. */
uint64_t yb_h1_resp_body_expected(const yb_h1_resp *p);
/* After YB_H1_ERROR: 1 when the error was the connection closing before
 * the response was complete (yb_h1_resp_eof; YB_ERR_CLOSED for the
 * engine), 0 for a malformed or oversized response (YB_ERR_PROTOCOL). */
int yb_h1_resp_truncated(const yb_h1_resp *p);
/* After YB_H1_ERROR: 1 when the body was over max_body. */
int yb_h1_resp_too_large(const yb_h1_resp *p);
/* The first bytes of the current response's body when its status is not
 * 2xx (NULL when none); *len gets their count.  Owned by p, valid until
 * the next reset. */
const uint8_t *yb_h1_resp_body_head(const yb_h1_resp *p, size_t *len);
/* Asks p to keep the first cap bytes of every 2xx body too (0: none, the
 * default; a reader of the answers, not a load, wants them).  Returns 0 or
 * -ENOMEM. */
int yb_h1_resp_keep_body(yb_h1_resp *p, size_t cap);
/* The kept bytes of the current 2xx body (NULL when none); *len gets
 * their count.  Owned by p, valid until the next reset. */
const uint8_t *yb_h1_resp_body(const yb_h1_resp *p, size_t *len);

/* For the current response only (call after reset): keep its header
 * fields (at most head_cap bytes) and its body (at most body_cap bytes,
 * whatever the status: the run may accept a 404) whole, for a chain step
 * that reads them (tmpl/pick.h).  The
 * buffers grow as bytes arrive and are reused by later responses. */
void yb_h1_resp_keep_all(yb_h1_resp *p, size_t body_cap, size_t head_cap);
/* What yb_h1_resp_keep_all kept: the body (*whole = 0 when it was cut at
 * its cap or memory ran out) and the head ("name: value\n" per field,
 * names in lower case; cut at its cap).  Owned by p, valid until the next
 * reset. */
void yb_h1_resp_kept(const yb_h1_resp *p, const uint8_t **body, size_t *body_len, int *whole,
                     const uint8_t **head, size_t *head_len);
/* Bytes p holds allocated for what yb_h1_resp_keep_all keeps (what the
 * caller accounts for in its memory budget). */
size_t yb_h1_resp_kept_alloc(const yb_h1_resp *p);
/* Stops keeping the current response's body (over the caller's budget):
 * frees it; the body then counts as cut (whole = 0). */
void yb_h1_resp_keep_drop(yb_h1_resp *p);

/* ---- server role ------------------------------------------------------ */

/* A header as a view: name and value are NUL-terminated (the terminator
 * is not counted in the lengths) and point into memory owned by whoever
 * produced the view. */
typedef struct {
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
} yb_h1_header;

/* Limits of the request parser: more headers (trailers included) or more
 * head bytes (URL + names + values + one terminator each) are an error
 * (status 431, or 414 when the URL alone is too long). */
#define YB_H1_REQ_MAX_HEADERS 100
#define YB_H1_REQ_MAX_HEAD_BYTES (64u * 1024u)

typedef struct yb_h1_req yb_h1_req;

/* Creates a request parser; max_body caps the request body (bytes): a
 * larger Content-Length or chunked body is an error with status 413.  All
 * memory is allocated here (head arena, header array) or grown and kept
 * (body buffer), so steady-state parsing allocates nothing.  Returns NULL
 * on ENOMEM. */
yb_h1_req *yb_h1_req_new(uint64_t max_body);
/* Frees p and everything it owns (every view handed out dies). */
void yb_h1_req_free(yb_h1_req *p);
/* Prepares for the next request on the connection; invalidates every view
 * of the previous one (method/path/headers/body). */
void yb_h1_req_reset(yb_h1_req *p);
/* Feeds bytes.  Sets *used to the bytes consumed: parsing stops at the end
 * of a complete request and the bytes after it (a pipelined request) are
 * left for the caller, who calls yb_h1_req_reset and feeds them again.
 * Returns YB_H1_MORE (all bytes used), YB_H1_COMPLETE or YB_H1_ERROR (see
 * yb_h1_req_error and yb_h1_req_error_status; the parser stays in error
 * until reset).  Feeding again after COMPLETE without a reset is an
 * error. */
yb_h1_rc yb_h1_req_feed(yb_h1_req *p, const uint8_t *data, size_t len, size_t *used);
/* Signals EOF from the client.  Returns YB_H1_COMPLETE when a request had
 * completed (and was not reset), YB_H1_MORE when no byte of a new request
 * had arrived (a clean close between requests) and YB_H1_ERROR when a
 * request was cut short. */
yb_h1_rc yb_h1_req_eof(yb_h1_req *p);
/* 1 once the request head (line and headers) has been parsed, so that a
 * server may look at the headers (Expect: 100-continue) before the body
 * arrives; 0 before. */
int yb_h1_req_headers_done(const yb_h1_req *p);
/* After headers_done: the method as a static upper-case string ("GET"). */
const char *yb_h1_req_method(const yb_h1_req *p);
/* After headers_done: the request target exactly as sent (NUL-terminated,
 * owned by p); *len (if non-NULL) gets its length. */
const char *yb_h1_req_path(const yb_h1_req *p, size_t *len);
/* After headers_done: the HTTP version (1.0 or 1.1). */
void yb_h1_req_version(const yb_h1_req *p, int *major, int *minor);
/* The headers in arrival order (after COMPLETE this includes chunked
 * trailers); *n gets the count.  Owned by p. */
const yb_h1_header *yb_h1_req_headers(const yb_h1_req *p, size_t *n);
/* After headers_done: how many of the headers (the first ones) came in
 * the request head; those after them are chunked trailers, which a server
 * must not take for request metadata such as credentials. */
size_t yb_h1_req_head_count(const yb_h1_req *p);
/* The first header named name (case-insensitive) or NULL. */
const yb_h1_header *yb_h1_req_header(const yb_h1_req *p, const char *name);
/* The body received so far (de-chunked; owned by p, NULL when empty);
 * *len gets its length. */
const uint8_t *yb_h1_req_body(const yb_h1_req *p, size_t *len);
/* After COMPLETE: 1 when the client allows another request on the
 * connection (HTTP/1.1 without "Connection: close", or HTTP/1.0 with
 * "Connection: keep-alive"). */
int yb_h1_req_keep_alive(const yb_h1_req *p);
/* A static description of the last error ("" if none), e.g.
 * "body too large". */
const char *yb_h1_req_error(const yb_h1_req *p);
/* After YB_H1_ERROR: the status a server should answer with (400 for a
 * malformed request, 413 body too large, 414 URL too long, 431 too many
 * or too large headers, 500 out of memory, 505 HTTP version not 1.x);
 * 0 when there is no error. */
int yb_h1_req_error_status(const yb_h1_req *p);

/* Serializes an HTTP/1.1 response: status line (reason NULL = the
 * standard phrase, or empty for unknown codes), headers[0..n) in order
 * except Content-Length/Transfer-Encoding/Connection (compared
 * case-insensitively; this function owns the framing), Content-Length:
 * body_len, "Connection: close" when keep_alive is 0, then the body.
 * body == NULL with body_len > 0 announces body_len but sends no body (the
 * answer to HEAD).  1xx, 204 and 304 get neither Content-Length nor body
 * (body_len must then be 0), and 1xx never gets "Connection: close".
 * Returns 0 with a malloc'd buffer in *out and its length in *outlen
 * (caller frees), -ENOMEM, or -EINVAL (nothing allocated) for a status
 * outside 100..999, a body with a bodiless status, CR/LF/NUL in the
 * reason or a header, or a bad header name. */
int yb_h1_serialize_response(int status, const char *reason,
                             const yb_h1_header *headers, size_t n,
                             const uint8_t *body, size_t body_len, int keep_alive,
                             uint8_t **out, size_t *outlen);

#endif
