/* Private to the transport module: what transport.c needs from tls.c.
 * Kept out of transport.h so that the rest of the program never sees
 * OpenSSL types. */
#ifndef YB_TLS_PRIV_H
#define YB_TLS_PRIV_H

#include <stddef.h>
#include <openssl/ssl.h>
#include "transport/transport.h"

/* Creates the SSL object for one connection on context c, already in
 * client or server state.  Client role: sni (may be NULL) is sent as SNI
 * when it is a name and checked against the peer certificate unless the
 * context is insecure (an IP literal is checked as an address and not
 * sent); with session_cache, the session cached under sni (or, when sni
 * is NULL, under cache_key, e.g. the peer "ip:port") is offered and new
 * sessions replace it.  Server role ignores sni and cache_key.
 * Returns the SSL (caller frees it with SSL_free; it refers to c, which
 * must outlive it) or NULL with a message in err. */
SSL *yb_tls_ssl_new(yb_tls_ctx *c, const char *sni, const char *cache_key,
                    char *err, size_t errlen);

/* Client role: the ALPN protocols ssl's context offers, comma-separated
 * as configured ("" = none). */
const char *yb_tls_alpn_offered(const SSL *ssl);

/* Client role, after a completed TLS 1.3 handshake: the group the server
 * picked leads the groups ssl's context offers from now on, so that the
 * next sessions send their key share for it and need no
 * HelloRetryRequest.  Does nothing for a server or an older version. */
void yb_tls_learn_group(SSL *ssl);

/* Makes OpenSSL decode the EC public keys of certificates parsed from
 * now on with its built-in EC key method rather than its provider
 * decoders (tls_eckey.c), once per process.  Returns 0, or -1 when that
 * is not available (they are then decoded as before). */
int yb_tls_ec_direct(void);

#endif
