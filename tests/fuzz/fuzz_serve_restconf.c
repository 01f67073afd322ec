/* libFuzzer target: the RESTCONF front end of `yangblast serve` (request
 * parsing, resource paths, YANG JSON bodies, the datastore behind them)
 * over a stub transport (serve_stub.c), no sockets.
 *
 * Input: byte 0 = server options (STUB_AUTH, STUB_SINK, STUB_FAULTS bits),
 * byte 1 = read size (0: everything in one read, else that many bytes per
 * read), then the bytes a client sends on one connection, pipelined
 * requests included.  Oracles: the sanitizers and LeakSanitizer; every
 * answer starts as an HTTP/1.1 status line; the datastore is left without
 * an open transaction and serialises (stub_server_end). */
#include "config.h"
#include "serve_stub.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    yb_server *s = stub_server_begin(data[0] & (STUB_AUTH | STUB_SINK | STUB_FAULTS));
    size_t step = data[1] ? data[1] : size;
    data += 2;
    size -= 2;
    yb_transport *t = stub_accept(s, 0);
    if (!t)
        abort();
    int first = 1;
    for (size_t off = 0; off < size;) {
        size_t n = size - off < step ? size - off : step;
        if (stub_read(t, data + off, n) < 0)
            break;
        off += n;
        size_t olen;
        const uint8_t *out = stub_take(t, &olen);
        if (first && olen) {
            /* an interim 100 Continue or a final answer: a status line */
            if (olen < 9 || memcmp(out, "HTTP/1.1 ", 9))
                abort();
            first = 0;
        }
    }
    stub_end(t);
    stub_server_end(s);
    return 0;
}
