/* TLS decryption from key logs, checked against real TLS made by OpenSSL
 * in this process: a client and a server talk through memory BIOs, every
 * byte each side writes is recorded as its "TCP stream", the client's key
 * log callback collects the NSS key log lines, and the recorded streams
 * are then fed to yb_tls_flow in several chunkings and orders.  The
 * decrypted bytes must equal what each side wrote. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "capture/tls_decrypt.h"

/* ---- growable byte buffer ----------------------------------------------------- */

struct buf {
    uint8_t *p;
    size_t n, cap;
};

static void buf_add(struct buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        size_t ncap = b->cap ? b->cap : 1024;

        while (ncap < b->n + n)
            ncap *= 2;
        b->p = realloc(b->p, ncap);
        assert_non_null(b->p);
        b->cap = ncap;
    }
    if (n > 0)
        memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void buf_free(struct buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* xorshift64*: a fixed seed makes every "random" case repeatable. */
static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static size_t rnd_below(size_t n)
{
    return n ? (size_t)(rnd() % n) : 0;
}

/* ---- one recorded TLS session ------------------------------------------------ */

struct chunk {
    int dir;
    size_t off, len; /* within stream[dir] */
};

struct session {
    struct buf stream[2];   /* bytes written by client (0) and server (1) */
    struct buf sent[2];     /* application bytes each side wrote */
    struct buf keylog;      /* NSS key log text */
    struct chunk *chunks;   /* capture order */
    size_t nchunks;
};

struct params {
    int version;                /* TLS1_2_VERSION / TLS1_3_VERSION */
    const char *cipher;         /* 1.2 cipher list or 1.3 ciphersuite */
    const char *client_alpn;    /* wire-format ALPN list or NULL */
    size_t client_alpn_len;
    int key_update;             /* TLS 1.3: KeyUpdate both ways mid-stream */
    int hrr;                    /* TLS 1.3: force a HelloRetryRequest */
    size_t big;                 /* bytes of bulk data each way */
    int resume;                 /* record a resumed (abbreviated) handshake */
    size_t block_padding;       /* TLS 1.3: pad records to a multiple of this */
    unsigned max_fragment;      /* smaller records: handshake messages span them */
    int early_data;             /* TLS 1.3 0-RTT on the resumed connection:
                                   1 = accepted, 2 = rejected by the server */
    int rsa;                    /* the server's certificate and key are RSA */
    int no_etm;                 /* TLS 1.2 CBC: MAC-then-encrypt */
    int no_ems;                 /* TLS 1.2: no extended master secret */
    int no_ticket;              /* TLS 1.2 resumption by session ID */
    struct session *first;      /* with resume: also keep the first connection */
};

static EVP_PKEY *g_key, *g_rsa_key;
static X509 *g_cert, *g_rsa_cert;
static struct session *g_keylog_target;

static void keylog_cb(const SSL *ssl, const char *line)
{
    (void)ssl;
    buf_add(&g_keylog_target->keylog, line, strlen(line));
    buf_add(&g_keylog_target->keylog, "\n", 1);
}

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    static const unsigned char ours[] = "\x02h2\x08http/1.1";

    (void)ssl;
    (void)arg;
    if (SSL_select_next_proto((unsigned char **)out, outlen, ours, sizeof ours - 1, in,
                              inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK;
    return SSL_TLSEXT_ERR_OK;
}

static int refuse_early_data(SSL *ssl, void *arg)
{
    (void)ssl;
    (void)arg;
    return 0;
}

/* A certificate for key, subject and issuer CN=cn, not yet signed (the
 * caller may add extensions first); NULL when out of memory. */
static X509 *new_cert(EVP_PKEY *key, long serial, const char *cn)
{
    X509 *c = key != NULL ? X509_new() : NULL;
    X509_NAME *name;

    if (c == NULL)
        return NULL;
    X509_set_version(c, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(c), serial);
    X509_gmtime_adj(X509_getm_notBefore(c), 0);
    X509_gmtime_adj(X509_getm_notAfter(c), 3600);
    X509_set_pubkey(c, key);
    name = X509_get_subject_name(c);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(c, name);
    return c;
}

/* An RSA key and certificate, for TLS 1.2 RSA key exchange. */
static int make_rsa_cert(void)
{
    g_rsa_key = EVP_RSA_gen(2048);
    g_rsa_cert = new_cert(g_rsa_key, 2, "yangblast-rsa");
    if (g_rsa_cert == NULL)
        return -1;
    return X509_sign(g_rsa_cert, g_rsa_key, EVP_sha256()) > 0 ? 0 : -1;
}

/* The PEM of key into b. */
static void key_pem(EVP_PKEY *key, struct buf *b)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *p;
    long n;

    assert_non_null(bio);
    assert_int_equal(PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL), 1);
    n = BIO_get_mem_data(bio, &p);
    buf_add(b, p, (size_t)n);
    BIO_free(bio);
}

/* EC key and self-signed certificate for the in-test server. */
static int make_cert(void **st)
{
    (void)st;
    if (make_rsa_cert() < 0)
        return -1;
    g_key = EVP_EC_gen("P-256");
    g_cert = new_cert(g_key, 1, "yangblast-test");
    if (g_cert == NULL)
        return -1;
    {
        /* ~1.5 KB of names make the Certificate message longer than a
         * 512-byte record (see test_record_shapes) */
        char san[2048];
        size_t off = 0;
        X509_EXTENSION *ext;

        for (int i = 0; i < 40; i++)
            off += (size_t)snprintf(san + off, sizeof san - off, "%sDNS:switch-%02d.example.net",
                                    i ? "," : "", i);
        ext = X509V3_EXT_conf_nid(NULL, NULL, NID_subject_alt_name, san);
        if (ext == NULL || !X509_add_ext(g_cert, ext, -1))
            return -1;
        X509_EXTENSION_free(ext);
    }
    return X509_sign(g_cert, g_key, EVP_sha256()) > 0 ? 0 : -1;
}

static int free_cert(void **st)
{
    (void)st;
    X509_free(g_cert);
    EVP_PKEY_free(g_key);
    X509_free(g_rsa_cert);
    EVP_PKEY_free(g_rsa_key);
    return 0;
}

/* Moves what one side wrote to the other, recording it in capture order. */
static void shuttle(struct session *s, BIO *from, BIO *to, int dir)
{
    uint8_t tmp[4096];
    int n;

    while ((n = BIO_read(from, tmp, sizeof tmp)) > 0) {
        struct chunk *c;

        s->chunks = realloc(s->chunks, (s->nchunks + 1) * sizeof *s->chunks);
        assert_non_null(s->chunks);
        c = &s->chunks[s->nchunks++];
        c->dir = dir;
        c->off = s->stream[dir].n;
        c->len = (size_t)n;
        buf_add(&s->stream[dir], tmp, (size_t)n);
        assert_int_equal(BIO_write(to, tmp, n), n);
    }
}

struct pair {
    SSL *c, *s;
    BIO *c_out, *c_in, *s_out, *s_in;
};

static void shuttle_all(struct session *s, struct pair *p)
{
    shuttle(s, p->c_out, p->s_in, 0);
    shuttle(s, p->s_out, p->c_in, 1);
}

static void app_write(struct session *s, struct pair *p, int dir, const uint8_t *d, size_t n)
{
    SSL *ssl = dir == 0 ? p->c : p->s;

    assert_int_equal(SSL_write(ssl, d, (int)n), (int)n);
    buf_add(&s->sent[dir], d, n);
    shuttle_all(s, p);
}

/* Reads everything the peer sent (also processes tickets and KeyUpdates). */
static void app_drain(struct session *s, struct pair *p, int dir, struct buf *got)
{
    SSL *ssl = dir == 0 ? p->c : p->s;
    uint8_t tmp[16384];
    int n;

    while ((n = SSL_read(ssl, tmp, sizeof tmp)) > 0)
        buf_add(got, tmp, (size_t)n);
    assert_int_equal(SSL_get_error(ssl, n), SSL_ERROR_WANT_READ);
    shuttle_all(s, p);
}

static void pattern(uint8_t *d, size_t n, uint8_t seed)
{
    for (size_t i = 0; i < n; i++)
        d[i] = (uint8_t)(seed + i * 7 + (i >> 8));
}

/* Connects a fresh client/server pair (the client offering session
 * `resume` unless NULL) and runs the handshake, recording into S; with
 * `early`, the client sends 0-RTT data first (what the server reads of it
 * goes to early_got). */
static void handshake(struct session *S, struct pair *p, SSL_CTX *cctx, SSL_CTX *sctx,
                      SSL_SESSION *resume, int early, struct buf *early_got)
{
    int done_c = 0, done_s = 0;

    p->c = SSL_new(cctx);
    p->s = SSL_new(sctx);
    assert_non_null(p->c);
    assert_non_null(p->s);
    p->c_in = BIO_new(BIO_s_mem());
    p->c_out = BIO_new(BIO_s_mem());
    p->s_in = BIO_new(BIO_s_mem());
    p->s_out = BIO_new(BIO_s_mem());
    SSL_set_bio(p->c, p->c_in, p->c_out);
    SSL_set_bio(p->s, p->s_in, p->s_out);
    SSL_set_connect_state(p->c);
    SSL_set_accept_state(p->s);
    if (resume != NULL)
        assert_int_equal(SSL_set_session(p->c, resume), 1);
    if (early) {
        /* TLS 1.3 0-RTT: the client's first flight carries data */
        static const char msg[] = "GET /early HTTP/1.1\r\n\r\n";
        uint8_t tmp[256];
        size_t w = 0, r = 0;
        int ret = SSL_READ_EARLY_DATA_ERROR;

        assert_non_null(resume);
        assert_true(SSL_SESSION_get_max_early_data(resume) > 0);
        assert_int_equal(SSL_write_early_data(p->c, msg, sizeof msg - 1, &w), 1);
        shuttle_all(S, p);
        for (int i = 0; i < 10 && ret != SSL_READ_EARLY_DATA_FINISH; i++) {
            ret = SSL_read_early_data(p->s, tmp, sizeof tmp, &r);
            if (ret == SSL_READ_EARLY_DATA_SUCCESS)
                buf_add(early_got, tmp, r);
            shuttle_all(S, p);
            if (ret != SSL_READ_EARLY_DATA_FINISH)
                done_c = SSL_do_handshake(p->c) == 1;
            shuttle_all(S, p);
        }
        assert_int_equal(ret, SSL_READ_EARLY_DATA_FINISH);
        if (early == 1) {
            assert_int_equal(SSL_get_early_data_status(p->s), SSL_EARLY_DATA_ACCEPTED);
            buf_add(&S->sent[0], msg, sizeof msg - 1);
        } else {
            assert_int_equal(SSL_get_early_data_status(p->s), SSL_EARLY_DATA_REJECTED);
        }
    }
    for (int i = 0; i < 50 && !(done_c && done_s); i++) {
        if (!done_c)
            done_c = SSL_do_handshake(p->c) == 1;
        shuttle_all(S, p);
        if (!done_s)
            done_s = SSL_do_handshake(p->s) == 1;
        shuttle_all(S, p);
    }
    assert_true(done_c && done_s);
}

static void session_free(struct session *S);

static void run_session(struct session *S, const struct params *P)
{
    static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX *sctx = SSL_CTX_new(TLS_server_method());
    struct pair p;
    struct buf got[2] = { { 0 }, { 0 } };
    uint8_t *data;
    size_t big = P->big ? P->big : 40000;
    SSL_SESSION *resume = NULL;

    memset(S, 0, sizeof *S);
    assert_non_null(cctx);
    assert_non_null(sctx);
    for (int i = 0; i < 2; i++) {
        SSL_CTX *x = i ? sctx : cctx;

        assert_int_equal(SSL_CTX_set_min_proto_version(x, P->version), 1);
        assert_int_equal(SSL_CTX_set_max_proto_version(x, P->version), 1);
        if (P->version == TLS1_2_VERSION)
            assert_int_equal(SSL_CTX_set_cipher_list(x, P->cipher), 1);
        else
            assert_int_equal(SSL_CTX_set_ciphersuites(x, P->cipher), 1);
    }
    for (int i = 0; i < 2; i++) {
        SSL_CTX *x = i ? sctx : cctx;

        if (P->block_padding)
            assert_int_equal(SSL_CTX_set_block_padding(x, P->block_padding), 1);
        if (P->max_fragment)
            assert_int_equal(SSL_CTX_set_max_send_fragment(x, P->max_fragment), 1);
    }
    if (P->early_data)
        assert_int_equal(SSL_CTX_set_max_early_data(sctx, 16384), 1);
    if (P->early_data == 2)
        SSL_CTX_set_allow_early_data_cb(sctx, refuse_early_data, NULL);
    if (P->hrr) {
        /* The client's first key share is X25519, which the server refuses. */
        assert_int_equal(SSL_CTX_set1_groups_list(cctx, "X25519:P-256"), 1);
        assert_int_equal(SSL_CTX_set1_groups_list(sctx, "P-256"), 1);
    }
    assert_int_equal(SSL_CTX_use_certificate(sctx, P->rsa ? g_rsa_cert : g_cert), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey(sctx, P->rsa ? g_rsa_key : g_key), 1);
    for (int i = 0; i < 2; i++) {
        SSL_CTX *x = i ? sctx : cctx;

        if (P->no_etm)
            SSL_CTX_set_options(x, SSL_OP_NO_ENCRYPT_THEN_MAC);
        if (P->no_ems)
            SSL_CTX_set_options(x, SSL_OP_NO_EXTENDED_MASTER_SECRET);
        if (P->no_ticket)
            SSL_CTX_set_options(x, SSL_OP_NO_TICKET);
    }
    SSL_CTX_set_session_id_context(sctx, (const unsigned char *)"yb", 2);
    SSL_CTX_set_alpn_select_cb(sctx, alpn_select, NULL);
    if (P->client_alpn != NULL)
        assert_int_equal(SSL_CTX_set_alpn_protos(cctx, (const unsigned char *)P->client_alpn,
                                                 (unsigned)P->client_alpn_len), 0);
    SSL_CTX_set_keylog_callback(cctx, keylog_cb);
    g_keylog_target = S;

    if (P->resume) {
        /* a first, unrecorded connection leaves a session to resume */
        struct session first;

        memset(&first, 0, sizeof first);
        g_keylog_target = &first;
        handshake(&first, &p, cctx, sctx, NULL, 0, NULL);
        app_write(&first, &p, 1, (const uint8_t *)"hi", 2);
        app_drain(&first, &p, 0, &got[0]); /* TLS 1.3: takes the tickets */
        /* a connection freed without close_notify leaves its session
         * not resumable */
        SSL_shutdown(p.c);
        shuttle_all(&first, &p);
        SSL_shutdown(p.s);
        shuttle_all(&first, &p);
        resume = SSL_get1_session(p.c);
        assert_non_null(resume);
        SSL_free(p.c);
        SSL_free(p.s);
        if (P->first != NULL)
            *P->first = first; /* the caller frees it */
        else
            session_free(&first);
        buf_free(&got[0]);
        g_keylog_target = S;
    }
    handshake(S, &p, cctx, sctx, resume, P->early_data, &got[1]);
    assert_int_equal(SSL_session_reused(p.c), resume != NULL);
    SSL_SESSION_free(resume);

    data = malloc(big * 2 + 8000); /* the fixed-size writes below need 5000 */
    assert_non_null(data);
    /* an HTTP/2 preface and a little, then bulk data both ways */
    app_write(S, &p, 0, (const uint8_t *)preface, sizeof preface - 1);
    pattern(data, 3000, 1);
    app_write(S, &p, 0, data, 3000);
    app_drain(S, &p, 1, &got[1]);
    pattern(data, 5000, 2);
    app_write(S, &p, 1, data, 5000);
    app_drain(S, &p, 0, &got[0]);
    pattern(data, big, 3);
    app_write(S, &p, 0, data, big);
    app_drain(S, &p, 1, &got[1]);
    if (P->key_update) {
        /* client updates and asks the server to update too */
        assert_int_equal(SSL_key_update(p.c, SSL_KEY_UPDATE_REQUESTED), 1);
        pattern(data, 2000, 4);
        app_write(S, &p, 0, data, 2000);
        app_drain(S, &p, 1, &got[1]);
        pattern(data, 3000, 5);
        app_write(S, &p, 1, data, 3000); /* preceded by the server's KeyUpdate */
        app_drain(S, &p, 0, &got[0]);
        /* and once more from the server alone */
        assert_int_equal(SSL_key_update(p.s, SSL_KEY_UPDATE_NOT_REQUESTED), 1);
        pattern(data, 1000, 6);
        app_write(S, &p, 1, data, 1000);
        app_drain(S, &p, 0, &got[0]);
    }
    pattern(data, big * 2, 7);
    app_write(S, &p, 1, data, big * 2);
    app_drain(S, &p, 0, &got[0]);
    pattern(data, 100, 8);
    app_write(S, &p, 0, data, 100);
    app_drain(S, &p, 1, &got[1]);
    SSL_shutdown(p.c);
    shuttle_all(S, &p);
    SSL_shutdown(p.s);
    shuttle_all(S, &p);

    /* OpenSSL itself agrees on what was sent */
    for (int d = 0; d < 2; d++) {
        assert_int_equal(got[1 - d].n, S->sent[d].n);
        assert_memory_equal(got[1 - d].p, S->sent[d].p, S->sent[d].n);
        buf_free(&got[1 - d]);
    }
    free(data);
    SSL_free(p.c);
    SSL_free(p.s);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
    g_keylog_target = NULL;
}

static void session_free(struct session *S)
{
    for (int d = 0; d < 2; d++) {
        buf_free(&S->stream[d]);
        buf_free(&S->sent[d]);
    }
    buf_free(&S->keylog);
    free(S->chunks);
    memset(S, 0, sizeof *S);
}

/* ---- feeding recorded streams ------------------------------------------------ */

struct out {
    struct buf got[2];
};

static void collect(void *ud, int dir, const uint8_t *d, size_t n)
{
    struct out *o = ud;

    assert_true(dir == 0 || dir == 1);
    assert_true(n > 0);
    buf_add(&o->got[dir], d, n);
}

enum order {
    WHOLE_CHUNKS,     /* capture order, each chunk in one call */
    ONE_BYTE,         /* capture order, one byte per call */
    RANDOM_SPLITS,    /* capture order, chunks cut at random places */
    CLIENT_FIRST,     /* whole client stream, then whole server stream */
    SERVER_FIRST,     /* whole server stream before any client byte */
    RANDOM_INTERLEAVE /* both streams advance by random amounts, random order */
};

static int feed(yb_tls_flow *f, int dir, const uint8_t *d, size_t n, struct out *o)
{
    return yb_tls_flow_feed(f, dir, d, n, collect, o);
}

/* Feeds S in the given order; returns the first non-zero feed result. */
static int feed_session(yb_tls_flow *f, const struct session *S, enum order how, struct out *o)
{
    int rc = 0;

    switch (how) {
    case WHOLE_CHUNKS:
    case ONE_BYTE:
    case RANDOM_SPLITS:
        for (size_t i = 0; i < S->nchunks && rc == 0; i++) {
            const struct chunk *c = &S->chunks[i];
            const uint8_t *p = S->stream[c->dir].p + c->off;
            size_t left = c->len;

            while (left > 0 && rc == 0) {
                size_t n = how == WHOLE_CHUNKS ? left
                         : how == ONE_BYTE     ? 1
                                               : 1 + rnd_below(left < 3000 ? left : 3000);

                if (n > left)
                    n = left;
                rc = feed(f, c->dir, p, n, o);
                p += n;
                left -= n;
            }
        }
        return rc;
    case CLIENT_FIRST:
    case SERVER_FIRST: {
        int first = how == CLIENT_FIRST ? 0 : 1;

        rc = feed(f, first, S->stream[first].p, S->stream[first].n, o);
        if (rc == 0)
            rc = feed(f, 1 - first, S->stream[1 - first].p, S->stream[1 - first].n, o);
        return rc;
    }
    case RANDOM_INTERLEAVE: {
        size_t pos[2] = { 0, 0 };

        while (rc == 0 && (pos[0] < S->stream[0].n || pos[1] < S->stream[1].n)) {
            int d = (int)(rnd() & 1);
            size_t left = S->stream[d].n - pos[d], n;

            if (left == 0)
                d = 1 - d, left = S->stream[d].n - pos[d];
            n = 1 + rnd_below(left < 5000 ? left : 5000);
            rc = feed(f, d, S->stream[d].p + pos[d], n, o);
            pos[d] += n;
        }
        return rc;
    }
    }
    return -1;
}

static yb_keylog *keylog_of(const struct session *S)
{
    yb_keylog *k = yb_keylog_new();

    assert_non_null(k);
    assert_int_equal(yb_keylog_add_text(k, S->keylog.p, S->keylog.n), 0);
    assert_int_equal(yb_keylog_count(k), 1);
    assert_int_equal(yb_keylog_malformed(k, NULL), 0);
    return k;
}

/* Every feeding order decrypts exactly what was sent with the key log k
 * (may be NULL) and the store st (may be NULL), with ALPN alpn. */
static void check_orders(const struct session *S, const yb_keylog *k, yb_tls_store *st,
                         const char *alpn)
{
    static const enum order orders[] = { WHOLE_CHUNKS, ONE_BYTE, RANDOM_SPLITS,
                                         CLIENT_FIRST, SERVER_FIRST, RANDOM_INTERLEAVE };

    for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++) {
        yb_tls_flow *f = yb_tls_flow_new(k);
        struct out o = { { { 0 }, { 0 } } };

        assert_non_null(f);
        yb_tls_flow_set_store(f, st);
        assert_string_equal(yb_tls_flow_status(f), "awaiting handshake");
        assert_string_equal(yb_tls_flow_alpn(f), "");
        rng_state = 0x9E3779B97F4A7C15ull + i;
        if (feed_session(f, S, orders[i], &o) != 0)
            fail_msg("order %zu: %s", i, yb_tls_flow_status(f));
        assert_string_equal(yb_tls_flow_status(f), "decrypting");
        assert_string_equal(yb_tls_flow_alpn(f), alpn);
        for (int d = 0; d < 2; d++) {
            assert_int_equal(o.got[d].n, S->sent[d].n);
            assert_memory_equal(o.got[d].p, S->sent[d].p, S->sent[d].n);
            buf_free(&o.got[d]);
        }
        yb_tls_flow_free(f);
    }
}

/* Every feeding order decrypts exactly what was sent, with S's key log. */
static void check_all_orders(const struct session *S, const char *alpn)
{
    yb_keylog *k = keylog_of(S);

    check_orders(S, k, NULL, alpn);
    yb_keylog_free(k);
}

static const char alpn_h2[] = "\x02h2\x08http/1.1";
/* the client offers h2 and http/1.1 */
#define H2 .client_alpn = alpn_h2, .client_alpn_len = sizeof alpn_h2 - 1

static void run_and_check(const struct params *P, const char *alpn)
{
    struct session S;

    run_session(&S, P);
    assert_true(yb_tls_flow_is_tls(S.stream[0].p, S.stream[0].n));
    assert_false(yb_tls_flow_is_tls(S.stream[1].p, S.stream[1].n));
    check_all_orders(&S, alpn);
    session_free(&S);
}

/* ---- positive cases ------------------------------------------------------------- */

static yb_tls_store *rsa_store(void)
{
    yb_tls_store *st = yb_tls_store_new();
    struct buf pem = { 0 };
    char err[256];

    assert_non_null(st);
    key_pem(g_key, &pem); /* an EC key is refused, and does not count */
    assert_int_equal(yb_tls_store_add_server_key(st, pem.p, pem.n, "ec", err, sizeof err), -1);
    assert_non_null(strstr(err, "ec: not an RSA key"));
    pem.n = 0;
    key_pem(g_rsa_key, &pem);
    assert_int_equal(yb_tls_store_add_server_key(st, pem.p, pem.n, "rsa", err, sizeof err), 0);
    assert_int_equal(yb_tls_store_server_keys(st), 1);
    buf_free(&pem);
    return st;
}

static void test_tls12_cbc(void **st)
{
    static const char *const cbc[] = { "ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA",
                                       "ECDHE-ECDSA-AES128-SHA256", "ECDHE-ECDSA-AES256-SHA384" };

    (void)st;
    for (size_t i = 0; i < 4; i++) {
        struct params etm = { .version = TLS1_2_VERSION, .cipher = cbc[i], H2, .big = 20000 };
        struct params mte = { .version = TLS1_2_VERSION, .cipher = cbc[i], H2, .big = 20000,
                              .no_etm = 1, .max_fragment = 1000 };

        run_and_check(&etm, "h2");
        run_and_check(&mte, "h2");
    }
}

static void test_tls12_rsa_server_key(void **state)
{
    static const char *const suites12[] = { "AES128-SHA", "AES256-SHA", "AES128-SHA256",
                                            "AES256-SHA256", "AES128-GCM-SHA256",
                                            "AES256-GCM-SHA384" };
    yb_tls_store *st = rsa_store();

    (void)state;
    for (size_t i = 0; i < sizeof suites12 / sizeof suites12[0]; i++) {
        for (int v = 0; v < 3; v++) {
            /* with extended master secret and EtM, without EMS, without EtM */
            struct params P = { .version = TLS1_2_VERSION, .cipher = suites12[i], H2,
                                .big = 20000, .rsa = 1, .no_ems = v == 1, .no_etm = v == 2 };
            struct session S;

            run_session(&S, &P);
            check_orders(&S, NULL, st, "h2"); /* the server's key, no key log */
            session_free(&S);
        }
    }
    yb_tls_store_free(st);
}

/* A resumed TLS 1.2 connection (by ticket, and by session ID) decrypts
 * with what the store learnt from the first one: by the server key, or by
 * a key log that has only the first connection's secret. */
static void test_tls12_resumption_store(void **state)
{
    (void)state;
    for (int by_id = 0; by_id < 2; by_id++) {
        for (int rsa = 0; rsa < 2; rsa++) {
            struct session first, S;
            struct params P = { .version = TLS1_2_VERSION,
                                .cipher = rsa ? "AES128-SHA" : "ECDHE-ECDSA-AES128-SHA",
                                H2, .big = 5000, .resume = 1, .rsa = rsa,
                                .no_ticket = by_id, .first = &first };
            yb_tls_store *st = rsa ? rsa_store() : yb_tls_store_new();
            yb_keylog *k = yb_keylog_new(), *none = yb_keylog_new();
            yb_tls_flow *f;
            struct out o = { { { 0 }, { 0 } } };

            assert_non_null(k);
            run_session(&S, &P);
            /* the first connection's secret only (its own key log) */
            if (!rsa)
                assert_int_equal(yb_keylog_add_text(k, first.keylog.p, first.keylog.n), 0);
            /* without the first connection, the resumed one has no keys */
            f = yb_tls_flow_new(rsa ? none : k);
            yb_tls_flow_set_store(f, st);
            assert_int_not_equal(feed_session(f, &S, WHOLE_CHUNKS, &o), 0);
            assert_non_null(strstr(yb_tls_flow_status(f), "a resumed session whose first "
                                                          "connection is not in the capture"));
            yb_tls_flow_free(f);
            for (int d = 0; d < 2; d++)
                buf_free(&o.got[d]);
            /* the first connection, then the resumed one */
            f = yb_tls_flow_new(rsa ? none : k);
            yb_tls_flow_set_store(f, st);
            assert_int_equal(feed_session(f, &first, WHOLE_CHUNKS, &o), 0);
            assert_int_equal(yb_tls_flow_resumed(f), 0);
            yb_tls_flow_free(f);
            for (int d = 0; d < 2; d++)
                buf_free(&o.got[d]);
            assert_true(yb_tls_store_sessions(st) >= 1);
            f = yb_tls_flow_new(rsa ? none : k);
            yb_tls_flow_set_store(f, st);
            if (feed_session(f, &S, RANDOM_SPLITS, &o) != 0)
                fail_msg("by_id %d rsa %d: %s", by_id, rsa, yb_tls_flow_status(f));
            assert_int_equal(yb_tls_flow_resumed(f), 1);
            for (int d = 0; d < 2; d++) {
                assert_int_equal(o.got[d].n, S.sent[d].n);
                assert_memory_equal(o.got[d].p, S.sent[d].p, S.sent[d].n);
                buf_free(&o.got[d]);
            }
            yb_tls_flow_free(f);
            yb_keylog_free(k);
            yb_keylog_free(none);
            yb_tls_store_free(st);
            session_free(&first);
            session_free(&S);
        }
    }
}

/* Hostile or mismatched: a server key that is not the certificate's, an
 * RSA suite with no server key, a ClientKeyExchange that does not
 * decrypt. */
static void test_tls12_rsa_failures(void **state)
{
    struct params P = { .version = TLS1_2_VERSION, .cipher = "AES128-SHA", H2, .big = 2000,
                        .rsa = 1 };
    struct session S;
    yb_tls_store *st = rsa_store(), *other = yb_tls_store_new(), *empty = yb_tls_store_new();
    EVP_PKEY *k2 = EVP_RSA_gen(2048);
    struct buf pem = { 0 };
    char err[256];
    struct {
        yb_tls_store *st;
        const char *status;
    } cases[3];
    yb_tls_flow *f;
    struct out o = { { { 0 }, { 0 } } };

    (void)state;
    key_pem(k2, &pem);
    assert_int_equal(yb_tls_store_add_server_key(other, pem.p, pem.n, "k2", err, sizeof err), 0);
    buf_free(&pem);
    EVP_PKEY_free(k2);
    cases[0].st = other;
    cases[0].status = "RSA key exchange: no --server-key matches the server's certificate";
    cases[1].st = empty;
    cases[1].status = "no keys for this client random (RSA key exchange: --server-key with the "
                      "server's private key would decrypt it)";
    cases[2].st = st;
    cases[2].status = "RSA key exchange: the pre-master secret does not decrypt with the "
                      "server key";
    run_session(&S, &P);
    for (int i = 0; i < 3; i++) {
        struct session C = S;
        uint8_t *copy = NULL;

        if (i == 2) {
            /* flip a byte of the encrypted pre-master secret: the client's
             * second record is its ClientKeyExchange */
            size_t off = 5 + ((size_t)S.stream[0].p[3] << 8 | S.stream[0].p[4]);

            copy = malloc(S.stream[0].n);
            assert_non_null(copy);
            memcpy(copy, S.stream[0].p, S.stream[0].n);
            assert_int_equal(copy[off + 5], 16);
            copy[off + 5 + 4 + 2 + 10] ^= 0x55;
            C.stream[0].p = copy;
        }
        f = yb_tls_flow_new(NULL);
        yb_tls_flow_set_store(f, cases[i].st);
        assert_int_not_equal(feed_session(f, &C, CLIENT_FIRST, &o), 0);
        assert_string_equal(yb_tls_flow_status(f), cases[i].status);
        yb_tls_flow_free(f);
        for (int d = 0; d < 2; d++)
            buf_free(&o.got[d]);
        free(copy);
    }
    session_free(&S);
    yb_tls_store_free(st);
    yb_tls_store_free(other);
    yb_tls_store_free(empty);
}

static void test_tls12_aes128gcm(void **st)
{
    struct params P = { .version = TLS1_2_VERSION, .cipher = "ECDHE-ECDSA-AES128-GCM-SHA256",
                        H2 };

    (void)st;
    run_and_check(&P, "h2");
}

static void test_tls12_aes256gcm(void **st)
{
    struct params P = { .version = TLS1_2_VERSION, .cipher = "ECDHE-ECDSA-AES256-GCM-SHA384",
                        H2 };

    (void)st;
    run_and_check(&P, "h2");
}

static void test_tls12_chacha20(void **st)
{
    struct params P = { .version = TLS1_2_VERSION, .cipher = "ECDHE-ECDSA-CHACHA20-POLY1305",
                        H2 };

    (void)st;
    run_and_check(&P, "h2");
}

static void test_tls13_aes128gcm(void **st)
{
    struct params P = { .version = TLS1_3_VERSION, .cipher = "TLS_AES_128_GCM_SHA256",
                        H2 };

    (void)st;
    run_and_check(&P, "h2");
}

static void test_tls13_aes256gcm(void **st)
{
    struct params P = { .version = TLS1_3_VERSION, .cipher = "TLS_AES_256_GCM_SHA384",
                        H2 };

    (void)st;
    run_and_check(&P, "h2");
}

static void test_tls13_chacha20(void **st)
{
    struct params P = { .version = TLS1_3_VERSION, .cipher = "TLS_CHACHA20_POLY1305_SHA256",
                        H2 };

    (void)st;
    run_and_check(&P, "h2");
}

static void test_tls13_key_update(void **st)
{
    static const char *const s13[] = { "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
                                       "TLS_CHACHA20_POLY1305_SHA256" };

    (void)st;
    for (size_t i = 0; i < 3; i++) {
        struct params P = { .version = TLS1_3_VERSION, .cipher = s13[i],
                            H2, .key_update = 1 };

        run_and_check(&P, "h2");
    }
}

static void test_tls13_hello_retry(void **st)
{
    /* RFC 8446 4.1.3: the random that marks a HelloRetryRequest */
    static const uint8_t hrr[32] = {
        0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02,
        0x1E, 0x65, 0xB8, 0x91, 0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E,
        0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
    };
    struct params P = { .version = TLS1_3_VERSION, .cipher = "TLS_AES_128_GCM_SHA256",
                        H2, .hrr = 1 };
    struct session S;

    (void)st;
    run_session(&S, &P);
    /* the server's first message really is a HelloRetryRequest */
    assert_true(S.stream[1].n > 11 + 32);
    assert_int_equal(S.stream[1].p[5], 2);
    assert_memory_equal(S.stream[1].p + 11, hrr, 32);
    check_all_orders(&S, "h2");
    session_free(&S);
}

/* Resumed sessions: TLS 1.2 abbreviated handshake (server ChangeCipherSpec
 * right after its hello) and TLS 1.3 PSK resumption. */
static void test_resumption(void **st)
{
    struct params P12 = { .version = TLS1_2_VERSION, .cipher = "ECDHE-ECDSA-AES256-GCM-SHA384",
                          H2, .big = 5000, .resume = 1 };
    struct params P13 = { .version = TLS1_3_VERSION, .cipher = "TLS_CHACHA20_POLY1305_SHA256",
                          H2, .big = 5000, .resume = 1 };

    (void)st;
    run_and_check(&P12, "h2");
    run_and_check(&P13, "h2");
}

/* Record shapes other than OpenSSL's defaults: TLS 1.3 zero padding after
 * the inner content type, and small records, so that the server's
 * Certificate (and every bulk write) spans many records. */
static void test_record_shapes(void **st)
{
    struct params pad = { .version = TLS1_3_VERSION, .cipher = "TLS_AES_256_GCM_SHA384", H2,
                          .big = 20000, .block_padding = 512, .key_update = 1 };
    struct params small13 = { .version = TLS1_3_VERSION, .cipher = "TLS_AES_128_GCM_SHA256",
                              H2, .big = 20000, .max_fragment = 512 };
    struct params small12 = { .version = TLS1_2_VERSION,
                              .cipher = "ECDHE-ECDSA-AES128-GCM-SHA256", H2, .big = 20000,
                              .max_fragment = 512 };

    (void)st;
    run_and_check(&pad, "h2");
    run_and_check(&small13, "h2");
    run_and_check(&small12, "h2");
}

/* ALPN is read from the ServerHello (1.2) or EncryptedExtensions (1.3). */
static void test_alpn_variants(void **st)
{
    static const char h11[] = "\x08http/1.1";
    struct params P12 = { .version = TLS1_2_VERSION, .cipher = "ECDHE-ECDSA-AES128-GCM-SHA256",
                          .client_alpn = h11, .client_alpn_len = sizeof h11 - 1, .big = 2000 };
    struct params P13 = { .version = TLS1_3_VERSION, .cipher = "TLS_AES_128_GCM_SHA256",
                          .client_alpn = h11, .client_alpn_len = sizeof h11 - 1, .big = 2000 };
    struct params N12 = { .version = TLS1_2_VERSION, .cipher = "ECDHE-ECDSA-AES128-GCM-SHA256",
                          .big = 2000 };
    struct params N13 = { .version = TLS1_3_VERSION, .cipher = "TLS_AES_256_GCM_SHA384",
                          .big = 2000 };

    (void)st;
    run_and_check(&P12, "http/1.1");
    run_and_check(&P13, "http/1.1");
    run_and_check(&N12, "");
    run_and_check(&N13, "");
}

/* ---- negative cases ------------------------------------------------------------- */

/* Feeds S whole in capture order with keys k; returns the feed result. */
static int feed_with(const struct session *S, const yb_keylog *k, char *status, size_t cap,
                     struct out *o)
{
    yb_tls_flow *f = yb_tls_flow_new(k);
    int rc;

    assert_non_null(f);
    rc = feed_session(f, S, WHOLE_CHUNKS, o);
    snprintf(status, cap, "%s", yb_tls_flow_status(f));
    /* a failed flow stays failed */
    if (rc != 0)
        assert_int_equal(yb_tls_flow_feed(f, 0, (const uint8_t *)"x", 1, collect, o), -1);
    yb_tls_flow_free(f);
    return rc;
}

/* TLS 1.3 0-RTT: accepted early data is decrypted (it comes first in the
 * client's direction); rejected early data is skipped, as the server
 * skipped it; without the early secret the flow says which key is missing. */
static void test_tls13_early_data(void **st)
{
    struct params acc = { .version = TLS1_3_VERSION, .cipher = "TLS_AES_128_GCM_SHA256", H2,
                          .big = 3000, .resume = 1, .early_data = 1 };
    struct params rej = { .version = TLS1_3_VERSION, .cipher = "TLS_CHACHA20_POLY1305_SHA256",
                          H2, .big = 3000, .resume = 1, .early_data = 2 };
    struct session S;
    struct buf kl = { 0 };
    yb_keylog *k = yb_keylog_new();
    struct out o = { { { 0 }, { 0 } } };
    char status[128], *text, *line, *save = NULL;

    (void)st;
    run_session(&S, &acc);
    assert_non_null(strstr((const char *)S.keylog.p, "CLIENT_EARLY_TRAFFIC_SECRET "));
    assert_memory_equal(S.sent[0].p, "GET /early", 10);
    check_all_orders(&S, "h2");
    /* the same without the early secret */
    text = strndup((const char *)S.keylog.p, S.keylog.n);
    assert_non_null(text);
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "CLIENT_EARLY_TRAFFIC_SECRET ", 28) == 0)
            continue;
        buf_add(&kl, line, strlen(line));
        buf_add(&kl, "\n", 1);
    }
    assert_int_equal(yb_keylog_add_text(k, kl.p, kl.n), 0);
    assert_int_equal(feed_with(&S, k, status, sizeof status, &o), -1);
    assert_string_equal(status, "no CLIENT_EARLY_TRAFFIC_SECRET for this client random (0-RTT data)");
    assert_int_equal(o.got[0].n, 0);
    buf_free(&o.got[0]);
    buf_free(&o.got[1]);
    buf_free(&kl);
    free(text);
    yb_keylog_free(k);
    session_free(&S);

    run_session(&S, &rej);
    assert_false(S.sent[0].n >= 10 && memcmp(S.sent[0].p, "GET /early", 10) == 0);
    check_all_orders(&S, "h2");
    session_free(&S);
}

static void test_wrong_keylog(void **st)
{
    static const int versions[] = { TLS1_2_VERSION, TLS1_3_VERSION };
    static const char *const ciphers[] = { "ECDHE-ECDSA-AES128-GCM-SHA256",
                                           "TLS_AES_128_GCM_SHA256" };

    (void)st;
    for (int v = 0; v < 2; v++) {
        struct params P = { .version = versions[v], .cipher = ciphers[v],
                            H2, .big = 2000 };
        struct session A, B;
        yb_keylog *k;
        struct out o = { { { 0 }, { 0 } } };
        char status[128];

        run_session(&A, &P);
        run_session(&B, &P);
        k = keylog_of(&A);
        assert_int_equal(feed_with(&B, k, status, sizeof status, &o), -1);
        assert_string_equal(status, "no keys for this client random");
        assert_int_equal(o.got[0].n + o.got[1].n, 0);
        /* no key log at all */
        assert_int_equal(feed_with(&B, NULL, status, sizeof status, &o), -1);
        assert_string_equal(status, "no keys for this client random");
        /* both sessions' keys: B decrypts */
        assert_int_equal(yb_keylog_add_text(k, B.keylog.p, B.keylog.n), 0);
        assert_int_equal(yb_keylog_count(k), 2);
        assert_int_equal(feed_with(&B, k, status, sizeof status, &o), 0);
        assert_int_equal(o.got[0].n, B.sent[0].n);
        assert_int_equal(o.got[1].n, B.sent[1].n);
        buf_free(&o.got[0]);
        buf_free(&o.got[1]);
        yb_keylog_free(k);
        session_free(&A);
        session_free(&B);
    }
}

/* TLS 1.3 key log with the handshake secrets only: the handshake
 * decrypts (ALPN known), application data does not. */
static void test_tls13_missing_app_secret(void **st)
{
    struct params P = { .version = TLS1_3_VERSION, .cipher = "TLS_AES_128_GCM_SHA256",
                        H2, .big = 2000 };
    struct session S;
    struct buf kl = { 0 };
    yb_keylog *k = yb_keylog_new();
    yb_tls_flow *f;
    struct out o = { { { 0 }, { 0 } } };
    char *text, *line, *save = NULL;

    (void)st;
    run_session(&S, &P);
    text = strndup((const char *)S.keylog.p, S.keylog.n);
    assert_non_null(text);
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "SERVER_TRAFFIC_SECRET_0 ", 24) == 0)
            continue;
        buf_add(&kl, line, strlen(line));
        buf_add(&kl, "\n", 1);
    }
    assert_int_equal(yb_keylog_add_text(k, kl.p, kl.n), 0);
    f = yb_tls_flow_new(k);
    assert_int_equal(feed_session(f, &S, WHOLE_CHUNKS, &o), -1);
    assert_string_equal(yb_tls_flow_status(f),
                        "key log for the client direction only (SERVER_TRAFFIC_SECRET_0 missing)");
    assert_string_equal(yb_tls_flow_alpn(f), "h2");
    yb_tls_flow_free(f);
    buf_free(&o.got[0]);
    buf_free(&o.got[1]);
    buf_free(&kl);
    free(text);
    yb_keylog_free(k);
    session_free(&S);
}

/* Offset of the record of stream s that holds byte `at` (walking record
 * headers from the start). */
static size_t record_at(const struct buf *s, size_t at)
{
    size_t off = 0;

    for (;;) {
        size_t next = off + 5 + ((size_t)s->p[off + 3] << 8 | s->p[off + 4]);

        if (next > at || next + 5 > s->n)
            return off;
        off = next;
    }
}

static void test_corrupt_records(void **st)
{
    static const int versions[] = { TLS1_2_VERSION, TLS1_3_VERSION };
    static const char *const ciphers[] = { "ECDHE-ECDSA-CHACHA20-POLY1305",
                                           "TLS_AES_256_GCM_SHA384" };

    (void)st;
    for (int v = 0; v < 2; v++) {
        struct params P = { .version = versions[v], .cipher = ciphers[v],
                            H2, .big = 3000 };
        struct session S;
        yb_keylog *k;
        struct out o = { { { 0 }, { 0 } } };
        char status[128];
        size_t last, len;

        run_session(&S, &P);
        k = keylog_of(&S);
        /* one flipped bit in the ciphertext of a late server record */
        last = record_at(&S.stream[1], S.stream[1].n / 4 * 3);
        len = (size_t)S.stream[1].p[last + 3] << 8 | S.stream[1].p[last + 4];
        S.stream[1].p[last + 5 + len / 2] ^= 0x10;
        assert_int_equal(feed_with(&S, k, status, sizeof status, &o), -1);
        assert_string_equal(status, "bad record mac");
        /* what came before the bad record was delivered, and is right */
        if (!(o.got[1].n > 0 && o.got[1].n < S.sent[1].n))
            fail_msg("v%d: got %zu of %zu, bad record at %zu of %zu", v, o.got[1].n,
                     S.sent[1].n, last, S.stream[1].n);
        assert_memory_equal(o.got[1].p, S.sent[1].p, o.got[1].n);
        S.stream[1].p[last + 5 + len / 2] ^= 0x10;
        buf_free(&o.got[0]);
        buf_free(&o.got[1]);

        /* a record length that is too large */
        S.stream[1].p[last + 3] = 0xFF;
        assert_int_equal(feed_with(&S, k, status, sizeof status, &o), -1);
        assert_string_equal(status, "bad record header");
        buf_free(&o.got[0]);
        buf_free(&o.got[1]);
        /* a record shortened by one byte: the tag no longer matches */
        S.stream[1].p[last + 3] = (uint8_t)((len - 1) >> 8);
        S.stream[1].p[last + 4] = (uint8_t)(len - 1);
        assert_int_equal(feed_with(&S, k, status, sizeof status, &o), -1);
        buf_free(&o.got[0]);
        buf_free(&o.got[1]);
        S.stream[1].p[last + 3] = (uint8_t)(len >> 8);
        S.stream[1].p[last + 4] = (uint8_t)len;

        /* every truncation: never an error, output a prefix of what was sent */
        for (size_t cut = 0; cut < S.stream[1].n; cut += 97) {
            yb_tls_flow *f = yb_tls_flow_new(k);

            assert_int_equal(feed(f, 0, S.stream[0].p, S.stream[0].n, &o), 0);
            assert_int_equal(feed(f, 1, S.stream[1].p, cut, &o), 0);
            assert_true(o.got[1].n <= S.sent[1].n);
            assert_memory_equal(o.got[1].p, S.sent[1].p, o.got[1].n);
            yb_tls_flow_free(f);
            buf_free(&o.got[0]);
            buf_free(&o.got[1]);
        }

        /* random byte mutations anywhere in either stream: no crash, and a
         * flow that reports success delivered only correct bytes */
        rng_state = 42 + (uint64_t)v;
        for (int i = 0; i < 300; i++) {
            int d = (int)(rnd() & 1);
            size_t pos = rnd_below(S.stream[d].n);
            uint8_t old = S.stream[d].p[pos];
            yb_tls_flow *f = yb_tls_flow_new(k);
            int rc;

            S.stream[d].p[pos] ^= (uint8_t)(1 + rnd_below(255));
            rc = feed_session(f, &S, RANDOM_SPLITS, &o);
            assert_true(strlen(yb_tls_flow_status(f)) > 0);
            for (int e = 0; e < 2; e++) {
                assert_true(o.got[e].n <= S.sent[e].n);
                assert_memory_equal(o.got[e].p, S.sent[e].p, o.got[e].n);
                buf_free(&o.got[e]);
            }
            (void)rc;
            S.stream[d].p[pos] = old;
            yb_tls_flow_free(f);
        }
        yb_keylog_free(k);
        session_free(&S);
    }
}

/* Capture started after the handshake: the streams begin at a record
 * boundary with application data, or mid-record. */
static void test_no_handshake(void **st)
{
    struct params P = { .version = TLS1_3_VERSION, .cipher = "TLS_AES_128_GCM_SHA256",
                        H2, .big = 3000 };
    struct session S;
    yb_keylog *k;
    yb_tls_flow *f;
    struct out o = { { { 0 }, { 0 } } };
    size_t c0, c1;

    (void)st;
    run_session(&S, &P);
    k = keylog_of(&S);
    c0 = record_at(&S.stream[0], S.stream[0].n / 2);
    c1 = record_at(&S.stream[1], S.stream[1].n / 2);

    f = yb_tls_flow_new(k);
    assert_int_equal(feed(f, 0, S.stream[0].p + c0, S.stream[0].n - c0, &o), -1);
    assert_string_equal(yb_tls_flow_status(f), "no handshake captured");
    yb_tls_flow_free(f);

    f = yb_tls_flow_new(k);
    assert_int_equal(feed(f, 1, S.stream[1].p + c1, S.stream[1].n - c1, &o), -1);
    assert_string_equal(yb_tls_flow_status(f), "no handshake captured");
    yb_tls_flow_free(f);

    f = yb_tls_flow_new(k);
    assert_int_equal(feed(f, 0, S.stream[0].p + c0 + 3, S.stream[0].n - c0 - 3, &o), -1);
    assert_string_equal(yb_tls_flow_status(f), "no handshake captured");
    yb_tls_flow_free(f);
    assert_int_equal(o.got[0].n + o.got[1].n, 0);
    yb_keylog_free(k);
    session_free(&S);

    /* TLS 1.2: the client's encrypted Finished record says "handshake" on
     * the outside; a capture starting there has no hello. */
    {
        struct params P12 = { .version = TLS1_2_VERSION,
                              .cipher = "ECDHE-ECDSA-AES128-GCM-SHA256", H2, .big = 1000 };
        size_t off = 0;

        run_session(&S, &P12);
        k = keylog_of(&S);
        while (S.stream[0].p[off] != 20) /* to the ChangeCipherSpec */
            off = record_at(&S.stream[0], off + 5 + ((size_t)S.stream[0].p[off + 3] << 8 |
                                                     S.stream[0].p[off + 4]));
        off += 6;
        assert_int_equal(S.stream[0].p[off], 22);
        f = yb_tls_flow_new(k);
        assert_int_equal(feed(f, 1, S.stream[1].p, S.stream[1].n, &o), 0);
        assert_int_equal(feed(f, 0, S.stream[0].p + off, S.stream[0].n - off, &o), -1);
        assert_string_equal(yb_tls_flow_status(f), "no handshake captured");
        yb_tls_flow_free(f);
        assert_int_equal(o.got[0].n + o.got[1].n, 0);
        yb_keylog_free(k);
        session_free(&S);
    }
}

/* Server bytes without any client bytes are held, up to the cap. */
static void test_pending_cap(void **st)
{
    yb_tls_flow *f = yb_tls_flow_new(NULL);
    uint8_t *junk = calloc(1, YB_TLS_PENDING_MAX + 10);
    struct out o = { { { 0 }, { 0 } } };

    (void)st;
    assert_non_null(junk);
    /* valid-looking plaintext handshake records: 0x16 0x03 0x03 len */
    for (size_t off = 0; off + 5 + 1000 <= YB_TLS_PENDING_MAX + 10; off += 1005) {
        junk[off] = 0x16;
        junk[off + 1] = 3;
        junk[off + 2] = 3;
        junk[off + 3] = 1000 >> 8;
        junk[off + 4] = 1000 & 0xFF;
    }
    assert_int_equal(feed(f, 1, junk, YB_TLS_PENDING_MAX, &o), 0);
    assert_string_equal(yb_tls_flow_status(f), "awaiting handshake");
    assert_int_equal(feed(f, 1, junk, 10, &o), -1);
    assert_string_equal(yb_tls_flow_status(f),
                        "too much data buffered (server side ahead of the handshake)");
    yb_tls_flow_free(f);
    free(junk);
}

/* Random bytes, and random bytes behind plausible record headers: any
 * result but a crash, hang or leak. */
static void test_random_bytes(void **st)
{
    uint8_t buf[6000];
    yb_keylog *k = yb_keylog_new();

    (void)st;
    rng_state = 20240601;
    for (int i = 0; i < 3000; i++) {
        yb_tls_flow *f = yb_tls_flow_new(k);
        struct out o = { { { 0 }, { 0 } } };
        int calls = 1 + (int)rnd_below(6);

        assert_non_null(f);
        for (int c = 0; c < calls; c++) {
            size_t n = rnd_below(sizeof buf);
            int d = (int)(rnd() & 1);

            for (size_t j = 0; j < n; j++)
                buf[j] = (uint8_t)rnd();
            if (i % 2 == 0 && n >= 9) {
                /* a handshake record holding a message of random type */
                size_t rl = n - 5;

                buf[0] = 0x16;
                buf[1] = 3;
                buf[2] = (uint8_t)rnd_below(5);
                buf[3] = (uint8_t)(rl >> 8);
                buf[4] = (uint8_t)rl;
                buf[5] = (uint8_t)(i % 4 == 0 ? (size_t)d + 1 : rnd_below(25));
                buf[6] = 0;
                buf[7] = (uint8_t)(rnd_below(4) == 0 ? rnd() : (rl - 4) >> 8);
                buf[8] = (uint8_t)(rl - 4);
            }
            (void)feed(f, d, buf, n, &o);
        }
        assert_true(strlen(yb_tls_flow_status(f)) > 0);
        (void)yb_tls_flow_alpn(f);
        yb_tls_flow_free(f);
        buf_free(&o.got[0]);
        buf_free(&o.got[1]);
        (void)yb_tls_flow_is_tls(buf, rnd_below(20));
    }
    yb_keylog_free(k);
}

static void test_bad_args(void **st)
{
    yb_tls_flow *f = yb_tls_flow_new(NULL);

    (void)st;
    assert_int_equal(yb_tls_flow_feed(NULL, 0, (const uint8_t *)"x", 1, NULL, NULL), -1);
    assert_int_equal(yb_tls_flow_feed(f, 0, NULL, 0, NULL, NULL), 0);
    assert_int_equal(yb_tls_flow_feed(f, 2, (const uint8_t *)"x", 1, NULL, NULL), -1);
    assert_string_equal(yb_tls_flow_status(f), "bad arguments");
    yb_tls_flow_free(f);
    yb_tls_flow_free(NULL);
    yb_keylog_free(NULL);
    assert_int_equal(yb_keylog_count(NULL), 0);
    assert_int_equal(yb_keylog_add_text(NULL, (const uint8_t *)"", 0), -1);
}

static void test_is_tls(void **st)
{
    static const uint8_t ch[] = { 0x16, 0x03, 0x01, 0x02, 0x00, 0x01,
                                  0x00, 0x01, 0xFC, 0x03, 0x03 };
    static const uint8_t h2[] = "PRI * HTTP/2.0\r\n";
    static const uint8_t get[] = "GET / HTTP/1.1\r\n";
    static const uint8_t sh[] = { 0x16, 0x03, 0x03, 0x00, 0x7A, 0x02, 0x00, 0x00, 0x76, 0x03 };
    static const uint8_t badver[] = { 0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x09 };

    (void)st;
    assert_int_equal(yb_tls_flow_is_tls(ch, sizeof ch), 1);
    assert_int_equal(yb_tls_flow_is_tls(ch, 6), 1);
    assert_int_equal(yb_tls_flow_is_tls(ch, 5), 0);
    assert_int_equal(yb_tls_flow_is_tls(NULL, 0), 0);
    assert_int_equal(yb_tls_flow_is_tls(h2, sizeof h2 - 1), 0);
    assert_int_equal(yb_tls_flow_is_tls(get, sizeof get - 1), 0);
    assert_int_equal(yb_tls_flow_is_tls(sh, sizeof sh), 0);
    assert_int_equal(yb_tls_flow_is_tls(badver, sizeof badver), 0);
}

/* ---- key log parsing ---------------------------------------------------------- */

static void test_keylog_file(void **st)
{
    char err[512];
    size_t first = 99;
    yb_keylog *k;

    (void)st;
    /* the fixture: comments, CRLF, unknown labels, 3 malformed lines */
    k = yb_keylog_load(YB_SRCDIR "/tests/capture/tls_vectors/sample.keylog", err, sizeof err);
    assert_non_null(k);
    assert_int_equal(yb_keylog_count(k), 3);
    assert_int_equal(yb_keylog_malformed(k, &first), 3);
    assert_int_equal(first, 7);
    yb_keylog_free(k);

    err[0] = '\0';
    k = yb_keylog_load("/nonexistent/yb-keylog.txt", err, sizeof err);
    assert_null(k);
    assert_non_null(strstr(err, "/nonexistent/yb-keylog.txt"));

    /* a directory opens but cannot be read */
    err[0] = '\0';
    k = yb_keylog_load("/", err, sizeof err);
    assert_null(k);
    assert_non_null(strstr(err, "/"));
}

static void test_keylog_text(void **st)
{
    static const char text[] =
        "# SSL/TLS secrets log file, generated by NSS\n"
        "CLIENT_RANDOM "
        "0101010101010101010101010101010101010101010101010101010101010101 "
        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
        "202122232425262728292a2b2c2d2e2f\n"
        "EXPORTER_SECRET "
        "0202020202020202020202020202020202020202020202020202020202020202 "
        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"
        "CLIENT_RANDOM 0101 00\n"
        "SERVER_TRAFFIC_SECRET_0 "
        "0303030303030303030303030303030303030303030303030303030303030303 "
        "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F";
    yb_keylog *k = yb_keylog_new();
    size_t first = 0;
    struct buf longline = { 0 };

    (void)st;
    assert_int_equal(yb_keylog_add_text(k, (const uint8_t *)text, sizeof text - 1), 0);
    /* EXPORTER_SECRET is skipped; the last line has no line end */
    assert_int_equal(yb_keylog_count(k), 2);
    assert_int_equal(yb_keylog_malformed(k, &first), 1);
    assert_int_equal(first, 4);
    /* the same session again: replaced, not added */
    assert_int_equal(yb_keylog_add_text(k, (const uint8_t *)text, sizeof text - 1), 0);
    assert_int_equal(yb_keylog_count(k), 2);
    /* an over-long line is malformed, the next one still parses */
    buf_add(&longline, "CLIENT_RANDOM ", 14);
    for (int i = 0; i < 5000; i++)
        buf_add(&longline, "ab", 2);
    buf_add(&longline, "\n", 1);
    buf_add(&longline, text + 45, 14 + 65 + 97);
    assert_int_equal(yb_keylog_add_text(k, longline.p, longline.n), 0);
    assert_int_equal(yb_keylog_malformed(k, NULL), 3);
    assert_int_equal(yb_keylog_count(k), 2);
    buf_free(&longline);
    assert_int_equal(yb_keylog_add_text(k, NULL, 0), 0);
    yb_keylog_free(k);
}

/* Many sessions: the table grows and every session stays findable (each
 * decrypts its own recorded flow). */
static void test_keylog_many(void **st)
{
    struct params P = { .version = TLS1_2_VERSION, .cipher = "ECDHE-ECDSA-AES128-GCM-SHA256",
                        H2, .big = 500 };
    struct session S;
    yb_keylog *k = yb_keylog_new();
    char line[256];
    yb_tls_flow *f;
    struct out o = { { { 0 }, { 0 } } };

    (void)st;
    run_session(&S, &P);
    for (unsigned i = 0; i < 5000; i++) {
        int n = snprintf(line, sizeof line,
                         "CLIENT_RANDOM %056x%08x %096x\n", 0u, i, i);

        assert_int_equal(yb_keylog_add_text(k, (const uint8_t *)line, (size_t)n), 0);
    }
    assert_int_equal(yb_keylog_add_text(k, S.keylog.p, S.keylog.n), 0);
    assert_int_equal(yb_keylog_count(k), 5001);
    f = yb_tls_flow_new(k);
    assert_int_equal(feed_session(f, &S, WHOLE_CHUNKS, &o), 0);
    assert_int_equal(o.got[1].n, S.sent[1].n);
    yb_tls_flow_free(f);
    buf_free(&o.got[0]);
    buf_free(&o.got[1]);
    yb_keylog_free(k);
    session_free(&S);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tls12_aes128gcm),
        cmocka_unit_test(test_tls12_aes256gcm),
        cmocka_unit_test(test_tls12_chacha20),
        cmocka_unit_test(test_tls13_aes128gcm),
        cmocka_unit_test(test_tls13_aes256gcm),
        cmocka_unit_test(test_tls13_chacha20),
        cmocka_unit_test(test_tls13_key_update),
        cmocka_unit_test(test_tls13_hello_retry),
        cmocka_unit_test(test_resumption),
        cmocka_unit_test(test_tls12_cbc),
        cmocka_unit_test(test_tls12_rsa_server_key),
        cmocka_unit_test(test_tls12_resumption_store),
        cmocka_unit_test(test_tls12_rsa_failures),
        cmocka_unit_test(test_record_shapes),
        cmocka_unit_test(test_tls13_early_data),
        cmocka_unit_test(test_alpn_variants),
        cmocka_unit_test(test_wrong_keylog),
        cmocka_unit_test(test_tls13_missing_app_secret),
        cmocka_unit_test(test_corrupt_records),
        cmocka_unit_test(test_no_handshake),
        cmocka_unit_test(test_pending_cap),
        cmocka_unit_test(test_random_bytes),
        cmocka_unit_test(test_bad_args),
        cmocka_unit_test(test_is_tls),
        cmocka_unit_test(test_keylog_file),
        cmocka_unit_test(test_keylog_text),
        cmocka_unit_test(test_keylog_many),
    };

    return cmocka_run_group_tests(tests, make_cert, free_cert);
}
