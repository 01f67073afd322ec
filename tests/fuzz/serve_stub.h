/* Fuzzing `yangblast serve` without sockets: serve_stub.c implements the
 * part of transport.h the front ends use (accept, write, close, reset,
 * pause; TLS contexts are never made) over memory, and sets up a server the
 * way yb_serve_run does, on one libuv loop that only ever holds timers.
 *
 * Per input: stub_server_begin, then for each connection stub_accept,
 * stub_read..., stub_end; then stub_server_end, which checks that the
 * datastore was left without an open transaction and frees everything
 * (LeakSanitizer then sees every allocation of the input returned). */
#ifndef YB_FUZZ_SERVE_STUB_H
#define YB_FUZZ_SERVE_STUB_H

#include <stddef.h>
#include <stdint.h>
#include "serve/serve_priv.h"

/* Server options taken from a fuzzer byte. */
enum {
    STUB_AUTH = 1,      /* --auth admin, password "pw" */
    STUB_SINK = 2,      /* --sink */
    STUB_FAULTS = 4,    /* reset@0.05, status:503@0.1, status:14@0.1 */
    STUB_GOAWAY = 8,    /* goaway-after:3 */
};

/* Starts a fresh server (empty store, zeroed statistics, seed 1) with the
 * STUB_ options.  Returns it (static storage; never NULL: aborts on
 * ENOMEM, which a fuzzer must not take for a finding). */
yb_server *stub_server_begin(unsigned opts);
/* Checks the store (no transaction left open; the tree serialises) and
 * frees the input's store and handles. */
void stub_server_end(yb_server *s);

/* Accepts one connection on the RESTCONF (gnmi = 0) or gNMI front end and
 * reports it ready.  Returns the stub transport or NULL (front end
 * refused). */
yb_transport *stub_accept(yb_server *s, int gnmi);
/* Hands n received bytes to the front end.  Returns 0, or -1 when the
 * connection is closing (nothing delivered) or reading is paused with no
 * way to resume (a request held by a timer). */
int stub_read(yb_transport *t, const uint8_t *d, size_t n);
/* What the front end wrote since the last stub_take (borrowed; at most
 * 1 MiB is kept, later bytes are counted only). */
const uint8_t *stub_take(yb_transport *t, size_t *n);
/* 1 once the front end closed or reset the connection. */
int stub_closed(const yb_transport *t);
/* Ends the connection (peer EOF unless the front end closed it first),
 * runs on_close and frees t. */
void stub_end(yb_transport *t);

#endif
