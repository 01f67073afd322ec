/* EC public keys of peer certificates decoded by OpenSSL's own EC key
 * method instead of its provider decoders.
 *
 * OpenSSL 3.0 decodes the public key of every certificate it parses
 * (d2i_X509) through a decoder chain that it builds afresh each time,
 * looking through every key manager and decoder its providers offer: for
 * the server's P-256 certificate of a new TLS session that was a fifth of
 * the client's CPU (about 1 M of 4.75 M instructions per session, more
 * than the ECDSA verification of the handshake).  OpenSSL still has the
 * direct way, EC's ASN.1 method (the same code turns the same bytes into
 * the same point on the same curve), and takes it when an engine claims
 * EC keys: so an engine is registered that claims them with OpenSSL's
 * own built-in EC key method, EVP_PKEY_meth_find(EVP_PKEY_EC).  Keys so
 * decoded then sign, verify and derive through that built-in method, the
 * same EC and ECDSA code; keys loaded from files (ours, the server's, a
 * client certificate's) stay with the providers.  Engines are deprecated
 * in OpenSSL 3 but still built into Debian's libssl3; where they are not
 * (OPENSSL_NO_ENGINE) nothing changes. */
#include "config.h"
/* the engine interface is deprecated in OpenSSL 3, and used on purpose */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "transport/tls_priv.h"

#include <pthread.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#ifndef OPENSSL_NO_ENGINE
#include <openssl/engine.h>
#endif

#ifndef OPENSSL_NO_ENGINE
static int ec_pkey_meths(ENGINE *e, EVP_PKEY_METHOD **pmeth, const int **nids, int nid)
{
    static const int ids[] = {EVP_PKEY_EC};

    (void)e;
    if (!pmeth) {                       /* the list of what it claims */
        *nids = ids;
        return 1;
    }
    *pmeth = nid == EVP_PKEY_EC ? (EVP_PKEY_METHOD *)EVP_PKEY_meth_find(EVP_PKEY_EC) : NULL;
    return *pmeth != NULL;
}

static int registered;

static void register_engine(void)
{
    ENGINE *e = ENGINE_new();

    if (!e)
        return;
    /* The default engine for EC keys holds its own reference, released
     * by OpenSSL's cleanup at exit. */
    if (EVP_PKEY_meth_find(EVP_PKEY_EC) && ENGINE_set_id(e, "yangblast-ec") &&
        ENGINE_set_name(e, "OpenSSL's built-in EC key method") &&
        ENGINE_set_pkey_meths(e, ec_pkey_meths) && ENGINE_set_default_pkey_meths(e))
        registered = 1;
    else
        ERR_clear_error();              /* providers it is, as before */
    ENGINE_free(e);
}
#endif

int yb_tls_ec_direct(void)
{
#ifndef OPENSSL_NO_ENGINE
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_once(&once, register_engine);
    return registered ? 0 : -1;
#else
    return -1;
#endif
}
