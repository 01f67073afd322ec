/* libFuzzer target: the gNMI front end of `yangblast serve` (HTTP/2 server
 * session, gRPC framing, credentials, Capabilities/Get/Set/Subscribe over
 * the datastore) over a stub transport (serve_stub.c), no sockets.
 *
 * Input: byte 0 = server options (STUB_AUTH, STUB_SINK, STUB_FAULTS,
 * STUB_GOAWAY bits) plus the mode in bit 7; byte 1 = read size (0: every
 * batch in one read).
 *   raw mode (bit 7 set): the rest is what a client sends, as is.
 *   call mode: the rest is a list of calls, each [op][len hi][len lo]
 *   [len bytes]; an nghttp2 client session turns them into requests on one
 *   connection and the two sessions talk until neither has more to say.
 *   op bits 0-2: 0 Capabilities, 1 Get, 2 Set, 3 Subscribe, 4 an unknown
 *   method, 5 a non-gRPC content-type; bit 3: username/password in the
 *   headers; bit 4: in request trailers; bit 5: the username twice; bit 6:
 *   the bytes are the whole body (else one gRPC message holding them);
 *   bit 7: the client keeps its side open after the body.
 * Oracles: the sanitizers and LeakSanitizer; the server's output is valid
 * HTTP/2 for the client session (call mode); the datastore is left without
 * an open transaction and serialises (stub_server_end). */
#include "config.h"
#include "serve_stub.h"

#include <nghttp2/nghttp2.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CALLS 16

typedef struct {
    uint8_t *body;
    size_t len, off;
    int trailers, keep_open;
} call;

static const nghttp2_nv CRED[] = {
    {(uint8_t *)"username", (uint8_t *)"admin", 8, 5, NGHTTP2_NV_FLAG_NONE},
    {(uint8_t *)"password", (uint8_t *)"pw", 8, 2, NGHTTP2_NV_FLAG_NONE},
};

static ssize_t body_read(nghttp2_session *ng, int32_t sid, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *src, void *ud)
{
    (void)ud;
    call *k = src->ptr;
    size_t n = k->len - k->off < length ? k->len - k->off : length;
    if (n)
        memcpy(buf, k->body + k->off, n);
    k->off += n;
    if (k->off < k->len)
        return (ssize_t)n;
    if (k->keep_open)
        return n ? (ssize_t)n : NGHTTP2_ERR_DEFERRED;
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    if (k->trailers) {
        *flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
        if (nghttp2_submit_trailer(ng, sid, CRED, 2) != 0)
            *flags &= ~(uint32_t)NGHTTP2_DATA_FLAG_NO_END_STREAM;
    }
    return (ssize_t)n;
}

/* Hands bytes to the server in reads of `step` (0 = one read).  Returns 0
 * or -1 when the server stopped reading. */
static int to_server(yb_transport *t, const uint8_t *d, size_t n, size_t step)
{
    for (size_t off = 0; off < n;) {
        size_t k = step && n - off > step ? step : n - off;
        if (stub_read(t, d + off, k) < 0)
            return -1;
        off += k;
    }
    return 0;
}

/* Builds the requests of the call list on a client session and lets the
 * two sessions talk. */
static void calls(yb_transport *t, const uint8_t *d, size_t size, size_t step)
{
    static nghttp2_session_callbacks *cbs;
    if (!cbs && nghttp2_session_callbacks_new(&cbs) != 0)
        abort();
    nghttp2_session *cl;
    if (nghttp2_session_client_new(&cl, cbs, NULL) != 0)
        abort();
    nghttp2_submit_settings(cl, NGHTTP2_FLAG_NONE, NULL, 0);
    call k[MAX_CALLS];
    size_t nk = 0;
    static const char *const PATH[] = {"/gnmi.gNMI/Capabilities", "/gnmi.gNMI/Get",
                                       "/gnmi.gNMI/Set", "/gnmi.gNMI/Subscribe",
                                       "/gnmi.gNMI/Nope", "/gnmi.gNMI/Get"};
    for (size_t off = 0; off + 3 <= size && nk < MAX_CALLS;) {
        uint8_t op = d[off];
        size_t len = (size_t)d[off + 1] << 8 | d[off + 2];
        off += 3;
        if (len > size - off)
            len = size - off;
        const uint8_t *p = d + off;
        off += len;
        call *c = &k[nk++];
        int raw = (op & 0x40) != 0;
        c->len = raw ? len : len + 5;
        c->off = 0;
        c->body = malloc(c->len ? c->len : 1);
        if (!c->body)
            abort();
        if (raw) {
            memcpy(c->body, p, len);
        } else {
            c->body[0] = 0;
            c->body[1] = (uint8_t)(len >> 24);
            c->body[2] = (uint8_t)(len >> 16);
            c->body[3] = (uint8_t)(len >> 8);
            c->body[4] = (uint8_t)len;
            memcpy(c->body + 5, p, len);
        }
        c->trailers = (op & 0x10) != 0;
        c->keep_open = (op & 0x80) != 0;
        unsigned rpc = op & 7;
        const char *path = PATH[rpc < 6 ? rpc : 0];
        const char *ct = rpc == 5 ? "text/plain" : "application/grpc";
        nghttp2_nv h[9] = {
            {(uint8_t *)":method", (uint8_t *)"POST", 7, 4, NGHTTP2_NV_FLAG_NONE},
            {(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, NGHTTP2_NV_FLAG_NONE},
            {(uint8_t *)":authority", (uint8_t *)"x", 10, 1, NGHTTP2_NV_FLAG_NONE},
            {(uint8_t *)":path", (uint8_t *)path, 5, strlen(path), NGHTTP2_NV_FLAG_NONE},
            {(uint8_t *)"content-type", (uint8_t *)ct, 12, strlen(ct), NGHTTP2_NV_FLAG_NONE},
            {(uint8_t *)"te", (uint8_t *)"trailers", 2, 8, NGHTTP2_NV_FLAG_NONE},
        };
        size_t nh = 6;
        if (op & 0x08) {
            h[nh++] = CRED[0];
            h[nh++] = CRED[1];
        }
        if (op & 0x20)
            h[nh++] = CRED[0];
        nghttp2_data_provider dp = {.source = {.ptr = c}, .read_callback = body_read};
        if (nghttp2_submit_request(cl, NULL, h, nh, &dp, NULL) < 0)
            break;
    }
    uint8_t *batch = NULL;
    size_t cap = 0;
    for (int round = 0; round < 64; round++) {
        /* everything the client has to say, then in reads of `step` (so
         * that several requests can arrive in one read) */
        const uint8_t *out;
        ssize_t n;
        size_t sent = 0, got;
        while ((n = nghttp2_session_mem_send(cl, &out)) > 0) {
            if ((size_t)n > cap - sent) {
                cap = (sent + (size_t)n) * 2;
                if (!(batch = realloc(batch, cap)))
                    abort();
            }
            memcpy(batch + sent, out, (size_t)n);
            sent += (size_t)n;
        }
        if (n < 0 || to_server(t, batch, sent, step) < 0)
            break;
        const uint8_t *back = stub_take(t, &got);
        if (got && nghttp2_session_mem_recv(cl, back, got) != (ssize_t)got)
            abort(); /* the server spoke invalid HTTP/2 */
        if ((!sent && !got) || stub_closed(t))
            break;
    }
    free(batch);
    nghttp2_session_del(cl);
    for (size_t i = 0; i < nk; i++)
        free(k[i].body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    yb_server *s = stub_server_begin(data[0] & (STUB_AUTH | STUB_SINK | STUB_FAULTS | STUB_GOAWAY));
    int raw = (data[0] & 0x80) != 0;
    size_t step = data[1];
    yb_transport *t = stub_accept(s, 1);
    if (!t)
        abort();
    if (raw)
        (void)to_server(t, data + 2, size - 2, step);
    else
        calls(t, data + 2, size - 2, step);
    stub_end(t);
    stub_server_end(s);
    return 0;
}
