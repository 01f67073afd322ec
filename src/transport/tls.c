/* TLS contexts (OpenSSL 3) for the transport: client contexts with peer
 * verification on by default and a per-target session cache, server
 * contexts with optional client-certificate checks and ALPN chosen in the
 * server's order. */
#include "config.h"
#include "transport/tls_priv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

/* A few cached sessions per target, newest last.  TLS 1.2 sessions may
 * be resumed again and again, but OpenSSL's client treats a TLS 1.3
 * ticket as single-use: once a handshake has offered it, it is no longer
 * resumable.  So a TLS 1.3 ticket is taken out of the cache when a
 * connection uses it, and the spare tickets a server issues (OpenSSL and
 * nginx: two per full handshake, one per resumption) keep concurrent
 * connections resuming instead of all offering the one newest ticket.
 * Entries live as long as the context so that an SSL can point at its
 * entry (app data) without reference counting; the number of distinct
 * targets of a run is small. */
#define SESS_KEEP 16
/* Supported groups a client context keeps in its own order. */
#define GROUPS_MAX 32
typedef struct sess_entry {
    struct sess_entry *next;
    SSL_SESSION *sess[SESS_KEEP]; /* owned; oldest first */
    unsigned n;
    char key[];
} sess_entry;

struct yb_tls_ctx {
    SSL_CTX *ctx;
    int server;
    int verify;                 /* client: peer certificate and name checked */
    int session_cache;
    FILE *keylog;               /* owned, or NULL */
    unsigned char *alpn;        /* server: wire-format list in preference order */
    size_t alpn_len;
    char alpn_offered[64];      /* client: the list offered, as given (for reasons) */
    sess_entry *sessions;
    /* Client: the groups offered, the one the servers picked last first
     * (n_groups 0 = OpenSSL's default order).  A TLS 1.3 client sends a
     * key share for its first group only; a server that wants another
     * answers with a HelloRetryRequest, which costs a round trip and a
     * second key generation on every new session -- so once a server has
     * picked a group, new sessions lead with it. */
    int groups[GROUPS_MAX];
    size_t n_groups;
};

/* Formats "what arg: reason" into err, the reason taken from the OpenSSL
 * error queue (which is then cleared so that it cannot be blamed on a
 * later connection). */
static void set_err(char *err, size_t errlen, const char *what, const char *arg)
{
    unsigned long e = ERR_peek_last_error();
    const char *why = e ? ERR_reason_error_string(e) : NULL;

    if (err && errlen)
        snprintf(err, errlen, "%s%s%s%s%s", what, arg ? " " : "", arg ? arg : "",
                 why ? ": " : "", why ? why : "");
    ERR_clear_error();
}

/* OpenSSL's reason for an unreadable file is vague ("system lib"), so the
 * files are opened once first to report errno the way users expect. */
static int check_file(const char *path, const char *what, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");

    if (!f) {
        if (err && errlen)
            snprintf(err, errlen, "cannot read %s %s: %s", what, path, strerror(errno));
        return -1;
    }
    fclose(f);
    return 0;
}

/* Converts "h2,http/1.1" into ALPN wire format (length-prefixed names).
 * Returns 0 with a malloc'd *out (caller frees) or -1 on an empty or
 * over-long name. */
static int alpn_wire(const char *list, unsigned char **out, size_t *outlen)
{
    size_t n = strlen(list), o = 0;
    unsigned char *w = malloc(n + 1);   /* each comma becomes a length byte */
    const char *p = list;

    if (!w)
        return -1;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);

        if (len == 0 || len > 255) {
            free(w);
            return -1;
        }
        w[o++] = (unsigned char)len;
        memcpy(w + o, p, len);
        o += len;
        if (!comma)
            break;
        p = comma + 1;
    }
    *out = w;
    *outlen = o;
    return 0;
}

/* Server ALPN choice: the first of the server's protocols the client
 * offers, so that the server's preference wins (SSL_select_next_proto
 * also exists, but walking the client's list here keeps the bounds checks
 * in view).  No overlap: continue without ALPN rather than fail, as
 * nginx does. */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    const yb_tls_ctx *c = arg;
    size_t i = 0;

    (void)ssl;
    while (i < c->alpn_len) {
        size_t sl = c->alpn[i];
        const unsigned char *sp = c->alpn + i + 1;
        size_t j = 0;

        while (j < inlen) {
            size_t cl = in[j];

            if (cl == 0 || cl > inlen - j - 1)
                break;                      /* malformed: stop reading it */
            if (cl == sl && memcmp(in + j + 1, sp, sl) == 0) {
                *out = sp;
                *outlen = (unsigned char)sl;
                return SSL_TLSEXT_ERR_OK;
            }
            j += 1 + cl;
        }
        i += 1 + sl;
    }
    return SSL_TLSEXT_ERR_NOACK;
}

/* Client: keeps the newest session of each target.  TLS 1.2 delivers it
 * at the end of the handshake, TLS 1.3 with each NewSessionTicket (after
 * the handshake, so the connection must read at least once). */
static int new_session_cb(SSL *ssl, SSL_SESSION *sess)
{
    sess_entry *e = SSL_get_app_data(ssl);

    if (!e)
        return 0;                       /* not ours: OpenSSL frees it */
    if (e->n == SESS_KEEP) {            /* full: drop the oldest */
        SSL_SESSION_free(e->sess[0]);
        memmove(e->sess, e->sess + 1, (SESS_KEEP - 1) * sizeof e->sess[0]);
        e->n--;
    }
    e->sess[e->n++] = sess;
    return 1;                           /* we keep the reference */
}

/* Opens the key log for appending.  Key logs decrypt every session they
 * cover, so they are secrets: a new file is created 0600, and an existing
 * regular file that group or others may read or write is refused rather
 * than extended (a FIFO or a device, e.g. /dev/stderr, is the user's own
 * choice of destination).  Returns the stream, or NULL with err set. */
static FILE *keylog_open(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open key log %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        snprintf(err, errlen, "cannot open key log %s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    if (S_ISREG(st.st_mode) && (st.st_mode & (S_IRWXG | S_IRWXO))) {
        snprintf(err, errlen,
                 "key log %s is accessible to group/others (mode %04o); TLS secrets must "
                 "stay private: chmod 600 %s, or give a new file",
                 path, (unsigned)(st.st_mode & 07777), path);
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "a");
    if (!f) {
        snprintf(err, errlen, "cannot open key log %s: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

static void keylog_cb(const SSL *ssl, const char *line)
{
    const yb_tls_ctx *c = SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));

    /* Flushed per line: the file is read by capture tools while runs are
     * going on, and a handshake costs far more than an fflush. */
    if (c && c->keylog) {
        fputs(line, c->keylog);
        fputc('\n', c->keylog);
        fflush(c->keylog);
    }
}

static sess_entry *cache_entry(yb_tls_ctx *c, const char *key)
{
    sess_entry *e;
    size_t n = strlen(key);

    for (e = c->sessions; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    e = calloc(1, sizeof *e + n + 1);
    if (!e)
        return NULL;
    memcpy(e->key, key, n + 1);
    e->next = c->sessions;
    c->sessions = e;
    return e;
}

static int set_versions(yb_tls_ctx *c, int min, int max, char *err, size_t errlen)
{
    if (min && !SSL_CTX_set_min_proto_version(c->ctx, min)) {
        set_err(err, errlen, "unsupported minimum TLS version", NULL);
        return -1;
    }
    if (max && !SSL_CTX_set_max_proto_version(c->ctx, max)) {
        set_err(err, errlen, "unsupported maximum TLS version", NULL);
        return -1;
    }
    return 0;
}

static int use_cert_key(yb_tls_ctx *c, const char *cert, const char *key,
                        char *err, size_t errlen)
{
    if (check_file(cert, "certificate", err, errlen) < 0 ||
        check_file(key, "key", err, errlen) < 0)
        return -1;
    if (SSL_CTX_use_certificate_chain_file(c->ctx, cert) != 1) {
        set_err(err, errlen, "bad certificate file", cert);
        return -1;
    }
    if (SSL_CTX_use_PrivateKey_file(c->ctx, key, SSL_FILETYPE_PEM) != 1) {
        set_err(err, errlen, "bad key file", key);
        return -1;
    }
    if (SSL_CTX_check_private_key(c->ctx) != 1) {
        set_err(err, errlen, "key does not match certificate", key);
        return -1;
    }
    return 0;
}

yb_tls_ctx *yb_tls_client_ctx_new(const yb_tls_client_opts *o, char *err, size_t errlen)
{
    yb_tls_ctx *c = calloc(1, sizeof *c);
    unsigned char *wire = NULL;
    size_t wlen = 0;

    if (!c) {
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return NULL;
    }
    ERR_clear_error();
    /* the server's certificate is parsed on every new session */
    (void)yb_tls_ec_direct();
    c->ctx = SSL_CTX_new(TLS_client_method());
    if (!c->ctx) {
        set_err(err, errlen, "cannot create TLS context", NULL);
        goto fail;
    }
    SSL_CTX_set_app_data(c->ctx, c);
    /* Renegotiation would let SSL_write want to read, which the write path
     * does not handle; load tests have no use for it. */
    SSL_CTX_set_options(c->ctx, SSL_OP_NO_RENEGOTIATION);
    /* An idle session gives its record buffers (about 34 KB) back: a run
     * may hold a thousand sessions open, most of them waiting. */
    SSL_CTX_set_mode(c->ctx, SSL_MODE_RELEASE_BUFFERS);
    if (set_versions(c, o->min_version, o->max_version, err, errlen) < 0)
        goto fail;
    if (o->ciphers && SSL_CTX_set_cipher_list(c->ctx, o->ciphers) != 1) {
        set_err(err, errlen, "bad cipher list", o->ciphers);
        goto fail;
    }
    if (o->ciphersuites && SSL_CTX_set_ciphersuites(c->ctx, o->ciphersuites) != 1) {
        set_err(err, errlen, "bad TLS 1.3 cipher suites", o->ciphersuites);
        goto fail;
    }
    if (!o->insecure) {
        c->verify = 1;
        if (o->cacert) {
            if (check_file(o->cacert, "CA file", err, errlen) < 0)
                goto fail;
            if (SSL_CTX_load_verify_locations(c->ctx, o->cacert, NULL) != 1) {
                set_err(err, errlen, "bad CA file", o->cacert);
                goto fail;
            }
        } else if (SSL_CTX_set_default_verify_paths(c->ctx) != 1) {
            set_err(err, errlen, "cannot load the default CA store", NULL);
            goto fail;
        }
        SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, NULL);
    } else {
        SSL_CTX_set_verify(c->ctx, SSL_VERIFY_NONE, NULL);
    }
    if (!o->cert != !o->key) {
        if (err && errlen)
            snprintf(err, errlen, "client certificate and key must be given together");
        goto fail;
    }
    if (o->cert && use_cert_key(c, o->cert, o->key, err, errlen) < 0)
        goto fail;
    if (o->alpn) {
        if (alpn_wire(o->alpn, &wire, &wlen) < 0 || wlen > UINT32_MAX) {
            if (err && errlen)
                snprintf(err, errlen, "bad ALPN list \"%s\"", o->alpn);
            goto fail;
        }
        /* The one OpenSSL setter that returns 0 on success. */
        if (SSL_CTX_set_alpn_protos(c->ctx, wire, (unsigned)wlen) != 0) {
            set_err(err, errlen, "cannot set ALPN", o->alpn);
            goto fail;
        }
        free(wire);
        wire = NULL;
        snprintf(c->alpn_offered, sizeof c->alpn_offered, "%s", o->alpn);
    }
    c->session_cache = o->session_cache != 0;
    if (c->session_cache) {
        /* NO_INTERNAL_STORE: OpenSSL's own client cache is never consulted
         * by clients anyway; the callback hands every session to us. */
        SSL_CTX_set_session_cache_mode(c->ctx, SSL_SESS_CACHE_CLIENT |
                                               SSL_SESS_CACHE_NO_INTERNAL_STORE);
        SSL_CTX_sess_set_new_cb(c->ctx, new_session_cb);
    } else {
        SSL_CTX_set_session_cache_mode(c->ctx, SSL_SESS_CACHE_OFF);
        /* Without a cache, TLS 1.2 tickets are useless work for the server. */
        SSL_CTX_set_options(c->ctx, SSL_OP_NO_TICKET);
    }
    if (o->keylog) {
        if (!(c->keylog = keylog_open(o->keylog, err, errlen)))
            goto fail;
        SSL_CTX_set_keylog_callback(c->ctx, keylog_cb);
    }
    return c;

fail:
    free(wire);
    yb_tls_ctx_free(c);
    return NULL;
}

yb_tls_ctx *yb_tls_server_ctx_new(const yb_tls_server_opts *o, char *err, size_t errlen)
{
    yb_tls_ctx *c = calloc(1, sizeof *c);
    static const unsigned char sid_ctx[] = "yangblast";

    if (!c) {
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->server = 1;
    ERR_clear_error();
    if (!o->cert || !o->key) {
        if (err && errlen)
            snprintf(err, errlen, "a server certificate and key are required");
        goto fail;
    }
    c->ctx = SSL_CTX_new(TLS_server_method());
    if (!c->ctx) {
        set_err(err, errlen, "cannot create TLS context", NULL);
        goto fail;
    }
    SSL_CTX_set_app_data(c->ctx, c);
    SSL_CTX_set_options(c->ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    if (use_cert_key(c, o->cert, o->key, err, errlen) < 0)
        goto fail;
    /* Required for session resumption once client certificates are
     * verified, harmless otherwise. */
    if (SSL_CTX_set_session_id_context(c->ctx, sid_ctx, sizeof sid_ctx - 1) != 1) {
        set_err(err, errlen, "cannot set session id context", NULL);
        goto fail;
    }
    if (o->client_ca) {
        STACK_OF(X509_NAME) *names;

        if (check_file(o->client_ca, "client CA file", err, errlen) < 0)
            goto fail;
        if (SSL_CTX_load_verify_locations(c->ctx, o->client_ca, NULL) != 1) {
            set_err(err, errlen, "bad client CA file", o->client_ca);
            goto fail;
        }
        names = SSL_load_client_CA_file(o->client_ca);
        if (!names) {
            set_err(err, errlen, "no CA names in", o->client_ca);
            goto fail;
        }
        SSL_CTX_set_client_CA_list(c->ctx, names);  /* takes ownership */
        SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    }
    if (o->alpn) {
        if (alpn_wire(o->alpn, &c->alpn, &c->alpn_len) < 0) {
            if (err && errlen)
                snprintf(err, errlen, "bad ALPN list \"%s\"", o->alpn);
            goto fail;
        }
        SSL_CTX_set_alpn_select_cb(c->ctx, alpn_select, c);
    }
    if (o->tickets) {
        /* Tickets for clients that take them, the server cache for TLS 1.2
         * clients that resume by session id. */
        SSL_CTX_set_session_cache_mode(c->ctx, SSL_SESS_CACHE_SERVER);
    } else {
        /* "No tickets" means no resumption at all: with only
         * SSL_OP_NO_TICKET, TLS 1.3 would still issue stateful tickets. */
        SSL_CTX_set_options(c->ctx, SSL_OP_NO_TICKET);
        SSL_CTX_set_num_tickets(c->ctx, 0);
        SSL_CTX_set_session_cache_mode(c->ctx, SSL_SESS_CACHE_OFF);
    }
    return c;

fail:
    yb_tls_ctx_free(c);
    return NULL;
}

void yb_tls_ctx_free(yb_tls_ctx *c)
{
    sess_entry *e, *next;

    if (!c)
        return;
    for (e = c->sessions; e; e = next) {
        next = e->next;
        while (e->n)
            SSL_SESSION_free(e->sess[--e->n]);
        free(e);
    }
    SSL_CTX_free(c->ctx);
    if (c->keylog)
        fclose(c->keylog);
    free(c->alpn);
    free(c);
}

const char *yb_tls_alpn_offered(const SSL *ssl)
{
    const yb_tls_ctx *c = SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));
    return c ? c->alpn_offered : "";
}

int yb_tls_parse_version(const char *s, int *out)
{
    static const struct { const char *name; int v; } V[] = {
        { "1.0", TLS1_VERSION }, { "1.1", TLS1_1_VERSION },
        { "1.2", TLS1_2_VERSION }, { "1.3", TLS1_3_VERSION },
    };
    size_t i;

    if (!s)
        return -1;
    for (i = 0; i < sizeof V / sizeof V[0]; i++)
        if (strcmp(s, V[i].name) == 0) {
            *out = V[i].v;
            return 0;
        }
    return -1;
}

static int is_ip_literal(const char *s)
{
    unsigned char buf[sizeof(struct in6_addr)];

    return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

SSL *yb_tls_ssl_new(yb_tls_ctx *c, const char *sni, const char *cache_key,
                    char *err, size_t errlen)
{
    SSL *ssl;
    const char *key;

    ERR_clear_error();
    ssl = SSL_new(c->ctx);
    if (!ssl) {
        set_err(err, errlen, "cannot create TLS connection", NULL);
        return NULL;
    }
    if (c->server) {
        SSL_set_accept_state(ssl);
        return ssl;
    }
    SSL_set_connect_state(ssl);
    if (c->n_groups && SSL_set1_groups(ssl, c->groups, c->n_groups) != 1) {
        set_err(err, errlen, "cannot set TLS groups", NULL);
        goto fail;
    }
    if (sni && *sni) {
        int ip = is_ip_literal(sni);

        /* RFC 6066: SNI carries host names only, never address literals. */
        if (!ip && SSL_set_tlsext_host_name(ssl, sni) != 1) {
            set_err(err, errlen, "bad server name", sni);
            goto fail;
        }
        if (c->verify) {
            int ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), sni)
                        : SSL_set1_host(ssl, sni);
            if (ok != 1) {
                set_err(err, errlen, "cannot check peer name", sni);
                goto fail;
            }
            if (!ip)
                SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        }
    }
    key = sni && *sni ? sni : cache_key;
    if (c->session_cache && key) {
        sess_entry *e = cache_entry(c, key);

        if (!e) {
            if (err && errlen)
                snprintf(err, errlen, "out of memory");
            goto fail;
        }
        SSL_set_app_data(ssl, e);
        /* The newest resumable session; spent ones are dropped. */
        while (e->n && !SSL_SESSION_is_resumable(e->sess[e->n - 1]))
            SSL_SESSION_free(e->sess[--e->n]);
        if (e->n) {
            SSL_SESSION *sess = e->sess[e->n - 1];

            if (SSL_set_session(ssl, sess) != 1) {
                set_err(err, errlen, "cannot reuse TLS session for", key);
                goto fail;
            }
            if (SSL_SESSION_get_protocol_version(sess) == TLS1_3_VERSION) {
                e->n--;                 /* single-use: ssl holds it now */
                SSL_SESSION_free(sess);
            }
        }
    }
    return ssl;

fail:
    SSL_free(ssl);
    return NULL;
}

void yb_tls_learn_group(SSL *ssl)
{
    yb_tls_ctx *c = SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));
    int got = SSL_get_negotiated_group(ssl), n;

    if (!c || c->server || got <= 0 || SSL_version(ssl) != TLS1_3_VERSION)
        return;
    if (!c->n_groups) {
        /* the order the SSL offered: a configuration's, or (none: 0)
         * OpenSSL 3's default */
        static const int dflt[] = {NID_X25519, NID_X9_62_prime256v1, NID_X448, NID_secp521r1,
                                   NID_secp384r1, NID_ffdhe2048, NID_ffdhe3072, NID_ffdhe4096,
                                   NID_ffdhe6144, NID_ffdhe8192};
        n = SSL_get1_groups(ssl, NULL);
        if (n < 0 || n > GROUPS_MAX)
            return;
        if (n) {
            SSL_get1_groups(ssl, c->groups);
            c->n_groups = (size_t)n;
        } else {
            memcpy(c->groups, dflt, sizeof dflt);
            c->n_groups = sizeof dflt / sizeof dflt[0];
        }
    }
    if (c->groups[0] == got)
        return;
    for (size_t i = 1; i < c->n_groups; i++) /* (a group not in the list: left alone) */
        if (c->groups[i] == got) {
            memmove(c->groups + 1, c->groups, i * sizeof c->groups[0]);
            c->groups[0] = got;
            return;
        }
}
