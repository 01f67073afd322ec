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
 * "Connection: close".  Returns 0 with a malloc'd buffer (caller frees),
 * or -ENOMEM. */
int yb_h1_serialize(const yb_request *r, const char *host_override, const char *extra_auth,
                    int close, uint8_t **out, size_t *len);

typedef enum {
    YB_H1_MORE = 0,     /* need more bytes */
    YB_H1_COMPLETE = 1, /* a full response was parsed */
    YB_H1_ERROR = -1,   /* malformed response */
} yb_h1_rc;

typedef struct yb_h1_resp yb_h1_resp;

/* Creates a response parser; max_body caps the response body (bytes).
 * Returns NULL on ENOMEM. */
yb_h1_resp *yb_h1_resp_new(uint64_t max_body);
void yb_h1_resp_free(yb_h1_resp *p);
/* Prepares for the response to the next request (head = 1 for HEAD:
 * no body follows). */
void yb_h1_resp_reset(yb_h1_resp *p, int head);
/* Feeds bytes.  Sets *used to the bytes consumed (bytes after a complete
 * response are left for the caller).  1xx interim responses are skipped.
 * Returns YB_H1_MORE, YB_H1_COMPLETE or YB_H1_ERROR. */
yb_h1_rc yb_h1_resp_feed(yb_h1_resp *p, const uint8_t *data, size_t len, size_t *used);
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

#endif
