/* Transport: a TCP stream on libuv, optionally TLS through OpenSSL memory
 * BIOs (the libuv + OpenSSL pattern), in client or server role.  It knows
 * nothing about HTTP: it moves bytes, reports phase timestamps and maps
 * failures to yb_err_class.  Writes are batched: uv_try_write first, the
 * remainder copied and queued. */
#ifndef YB_TRANSPORT_H
#define YB_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>
#include "transport/uring.h"
#include "util/errors.h"

/* ---- TLS contexts ---------------------------------------------------- */

typedef struct {
    const char *cacert;      /* CA file; NULL = system default store */
    int insecure;            /* 1 = do not verify the peer certificate */
    const char *cert, *key;  /* client certificate for mTLS (PEM files) or NULL */
    const char *alpn;        /* comma-separated, e.g. "h2" or "http/1.1"; NULL = none */
    int min_version, max_version; /* TLS1_2_VERSION... ; 0 = library default */
    const char *ciphers;     /* TLS <= 1.2 cipher list; NULL = default */
    const char *ciphersuites;/* TLS 1.3 suites; NULL = default */
    int session_cache;       /* 1 = keep recent sessions per target for resumption */
    const char *keylog;      /* file to append NSS key log lines to, or NULL */
} yb_tls_client_opts;

typedef struct {
    const char *cert, *key;  /* PEM files (required) */
    const char *client_ca;   /* require and verify client certificates, or NULL */
    const char *alpn;        /* protocols offered, in preference order: "h2,http/1.1" */
    int tickets;             /* 1 = issue session tickets (resumption) */
} yb_tls_server_opts;

typedef struct yb_tls_ctx yb_tls_ctx;

/* Each returns a context or NULL with a message naming the bad file/option
 * in err.  A context may be shared by the transports of one thread only
 * (its session cache is not locked). */
yb_tls_ctx *yb_tls_client_ctx_new(const yb_tls_client_opts *o, char *err, size_t errlen);
yb_tls_ctx *yb_tls_server_ctx_new(const yb_tls_server_opts *o, char *err, size_t errlen);
void yb_tls_ctx_free(yb_tls_ctx *c);
/* Parses "1.2" / "1.3" into an OpenSSL version constant; returns 0 or -1. */
int yb_tls_parse_version(const char *s, int *out);
/* Routes OpenSSL's allocations through a per-thread cache of freed blocks
 * (tls_mem.c).  Must run before anything calls OpenSSL; returns 0, or -1
 * when OpenSSL had already allocated (it then keeps using malloc). */
int yb_tls_mem_init(void);

/* ---- transports -------------------------------------------------------- */

typedef struct yb_transport yb_transport;

typedef struct {
    /* Connection ready for application data (TCP connected and, with TLS,
     * handshake done), or failed: status 0 or an error class.  On failure
     * on_close follows. */
    void (*on_ready)(yb_transport *t, void *ud, yb_err_class status);
    /* Application bytes received (decrypted).  May call write/close. */
    void (*on_read)(yb_transport *t, void *ud, const uint8_t *data, size_t len);
    /* All queued writes reached the kernel (called only after a write
     * that had to queue). */
    void (*on_drain)(yb_transport *t, void *ud);
    /* The transport is closed: reason YB_ERR_NONE for a local close,
     * YB_ERR_CLOSED for a clean peer EOF, else the error.  t is freed when
     * this returns. */
    void (*on_close)(yb_transport *t, void *ud, yb_err_class reason);
} yb_transport_cbs;

/* Starts a client connection to addr (IPv4 or IPv6) on loop.  tls NULL =
 * plain TCP; sni may be NULL.  connect_timeout_ns 0 = none (covers TCP and
 * TLS handshake).  ring (NULL = none): the loop thread's io_uring, which
 * then carries a plain connection's receives and small writes once it is
 * connected (the thread must sleep in yb_uring_wait and poll it).
 * Returns the transport (callbacks follow) or NULL when nothing could be
 * started (then no callback runs; *err set to a class). */
yb_transport *yb_transport_connect(uv_loop_t *loop, yb_uring *ring, const struct sockaddr *addr,
                                   yb_tls_ctx *tls, const char *sni,
                                   uint64_t connect_timeout_ns,
                                   const yb_transport_cbs *cbs, void *ud, yb_err_class *err);

/* Accepts a pending connection from server (a listening uv_tcp_t on the
 * same loop).  tls NULL = plain.  ring (NULL = none): the loop thread's
 * io_uring, which then carries a plain connection's receives (its writes
 * go to the kernel at once: see yb_transport_ring_writes).  Returns the
 * transport or NULL. */
yb_transport *yb_transport_accept(uv_stream_t *server, yb_uring *ring, yb_tls_ctx *tls,
                                  const yb_transport_cbs *cbs, void *ud);

/* With a ring (yb_transport_connect): whether a write of up to 4 KB is
 * copied and sent on the ring, the next receive linked behind it when it
 * is made while a receive is delivered (on, the default), or written to
 * the kernel at once from the caller's buffers as without a ring (off:
 * reads still use the ring).  Larger writes always go at once. */
void yb_transport_ring_writes(yb_transport *t, int on);

/* Writes n buffers in order.  Returns 1 when everything reached the kernel
 * at once, 0 when some was copied and queued (on_drain follows), or a
 * negative value when the transport is closing or on_ready has not yet
 * reported success (nothing written).  The caller keeps ownership of the
 * buffers; they may be reused as soon as this returns. */
int yb_transport_write(yb_transport *t, const uv_buf_t *bufs, unsigned n);
/* Bytes queued and not yet written. */
size_t yb_transport_queued(const yb_transport *t);
/* Closes (TLS close_notify best effort); on_close follows, once. */
void yb_transport_close(yb_transport *t);
/* Closes with a TCP RST (SO_LINGER 0), for fault injection. */
void yb_transport_reset(yb_transport *t);
/* Stops/starts reading (back-pressure).  Takes effect after the chunk
 * being delivered; TLS plaintext already decrypted is delivered later
 * from the loop, never from inside this call. */
void yb_transport_pause(yb_transport *t, int paused);

/* Phase timestamps (uv_hrtime ns; 0 = not reached). */
uint64_t yb_transport_t_start(const yb_transport *t);
uint64_t yb_transport_t_connected(const yb_transport *t);
uint64_t yb_transport_t_tls_done(const yb_transport *t);
/* When the bytes queued by the last write that had to queue reached the
 * kernel (for on_drain: a ring's send counts from when the ring handed it
 * over, not from when its completion was seen). */
uint64_t yb_transport_t_drained(const yb_transport *t);
/* 1 when the TLS handshake resumed a cached session. */
int yb_transport_tls_resumed(const yb_transport *t);
/* Negotiated ALPN protocol ("" when none). */
const char *yb_transport_alpn(const yb_transport *t);
/* The last error as a request's reason (util/errors.h), without the peer
 * address: "tls: certificate verify failed: self-signed certificate",
 * "connect: connection refused", "reset: connection reset by peer (while
 * reading)", "timeout after 5s (TLS handshake)"; "" if none (a clean
 * EOF, a local close).  Valid until on_close returns. */
const char *yb_transport_error_text(const yb_transport *t);
/* The class of the failure that is closing t (a write or read the peer
 * reset, a timeout), with yb_transport_error_text its reason; YB_ERR_NONE
 * while t is open or when it is being closed on purpose. */
yb_err_class yb_transport_failure(const yb_transport *t);
/* Peer address as text "ip:port" for logs. */
const char *yb_transport_peer(const yb_transport *t);

#endif
