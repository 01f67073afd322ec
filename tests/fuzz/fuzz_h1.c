/* libFuzzer target: the HTTP/1.1 client's response path (h1_client.c over
 * h1.c), driven through the codec interface by a stub session (no
 * sockets): submit a request, feed the input as the server's bytes, submit
 * the next request when the connection stays usable.
 *
 * Byte 0: bit 0 HEAD request, bit 1 a 64-byte --max-body, bit 2 writes
 * are queued (completed by on_drain), bits 3-7 pick the read sizes; byte 1:
 * the recorded expected status (0 = none).  The rest: server bytes.
 * Oracles: stub_host.h. */
#include "config.h"
#include "stub_host.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const uint8_t flags = data[0];
    yb_codec_cfg cfg = {.authority = "127.0.0.1:8080", .scheme = "http",
                        .max_body = flags & 2 ? 64 : 1 << 20, .streams = 1,
                        .user_agent = "fuzz"};
    /* the recorded status counts only with --expect original (flag 4);
     * flag 8 also accepts 409 and 404 */
    cfg.accept.original = !!(flags & 4);
    if ((flags & 8) && yb_accept_add(&cfg.accept, 0, "409,404"))
        abort();
    yb_request r;
    yb_request_init(&r);
    r.protocol = YB_PROTO_RESTCONF;
    if (yb_request_set_str(&r.method, flags & 1 ? "HEAD" : "GET") ||
        yb_request_set_str(&r.path, "/restconf/data/x"))
        abort();
    static const uint32_t expect[] = {0, 200, 201, 204, 304, 404};
    r.expected_status = expect[data[1] % 6];
    yb_prepared p;
    if (yb_h1_client_ops.prepare(&cfg, &r, &p))
        abort();
    stub s;
    memset(&s, 0, sizeof s);
    s.queue_writes = flags & 4;
    const yb_codec_ops *ops = &yb_h1_client_ops;
    yb_codec *c = ops->create(&cfg, &STUB_HOST, &s);
    if (!c || ops->start(c))
        abort();
    stub_submit(&s, ops, c, &p);
    const uint8_t *d = data + 2;
    size_t n = size - 2, off = 0;
    unsigned step = 1 + (flags >> 3); /* 1..32: read sizes cycle through 1..step*8 */
    int eof = 1;
    for (unsigned k = 0; off < n && !s.closed; k++) {
        size_t len = 1 + (k * 7919u) % (step * 8u);
        if (len > n - off)
            len = n - off;
        if (s.queue_writes)
            ops->on_drain(c, ++s.now);
        s.fed += len;
        if (ops->on_read(c, d + off, len, ++s.now) < 0) {
            eof = 0;
            break;
        }
        off += len;
        if (ops->capacity(c))
            stub_submit(&s, ops, c, &p);
    }
    if (eof && !s.fatal)
        ops->on_eof(c, ++s.now);
    ops->destroy(c);
    ops->prepared_free(&p);
    yb_request_cleanup(&r);
    return 0;
}
