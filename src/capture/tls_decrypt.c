/* TLS decryption from NSS key log secrets (see tls_decrypt.h).
 *
 * Shape: each direction keeps a queue of stream bytes not yet consumed;
 * whole records are taken off its front.  A record is processed only when
 * the state it needs exists (server records need the client random from
 * the ClientHello; client records after the ClientHello need the
 * ServerHello to know the version and keys), otherwise the direction
 * waits and the other one runs: pump() alternates until neither moves.
 * Handshake messages are reassembled per direction across records; only
 * the few we read are stored.  Keys come from the key log through
 * OpenSSL's TLS1-PRF (TLS 1.2 key block) and TLS13-KDF
 * (HKDF-Expand-Label), records are opened with EVP AEAD.
 *
 * References: RFC 5246 (TLS 1.2 record, PRF, key block), RFC 5288 (GCM
 * nonce: 4-byte salt + 8-byte explicit part), RFC 7905 (ChaCha20-Poly1305
 * nonce = iv XOR seq), RFC 8446 (TLS 1.3 record protection, key schedule,
 * KeyUpdate). */
#include "capture/tls_decrypt.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

/* ---- limits and protocol constants ------------------------------------- */

#define REC_HDR 5
/* RFC 5246 6.2.3: TLSCiphertext.length <= 2^14 + 2048 (TLS 1.3 is
 * tighter, 2^14 + 256; the looser bound serves both). */
#define REC_MAX (16384u + 2048u)
#define TAG_LEN 16
#define NONCE_LEN 12
#define SECRET_MAX 48  /* SHA-384 output; also the TLS 1.2 master secret */
#define RANDOM_LEN 32
/* A key log line is "LABEL <64 hex> <<= 96 hex>"; anything longer is not
 * one of ours. */
#define LINE_MAX_LEN 512
/* Rejected 0-RTT records skipped before the client's handshake records
 * must decrypt (servers bound it by their max_early_data, 16 KiB for
 * OpenSSL by default). */
#define EARLY_SKIP_MAX (256u * 1024u)

enum { CT_CCS = 20, CT_ALERT = 21, CT_HANDSHAKE = 22, CT_APPDATA = 23 };
enum { HS_CLIENT_HELLO = 1, HS_SERVER_HELLO = 2, HS_NEW_SESSION_TICKET = 4,
       HS_END_OF_EARLY_DATA = 5, HS_ENCRYPTED_EXTENSIONS = 8, HS_CERTIFICATE = 11,
       HS_SERVER_HELLO_DONE = 14, HS_CLIENT_KEY_EXCHANGE = 16,
       HS_FINISHED = 20, HS_KEY_UPDATE = 24 };
enum { EXT_ALPN = 16, EXT_ENCRYPT_THEN_MAC = 22, EXT_EXTENDED_MASTER_SECRET = 23,
       EXT_SESSION_TICKET = 35, EXT_EARLY_DATA = 42, EXT_SUPPORTED_VERSIONS = 43 };
#define MASTER_LEN 48
#define SID_MAX 32
#define CBC_BLOCK 16
#define MAC_MAX 48
enum { TLS12 = 0x0303, TLS13 = 0x0304 };

/* RFC 8446 4.1.3: a ServerHello with this random is a HelloRetryRequest. */
static const uint8_t hrr_random[RANDOM_LEN] = {
    0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02,
    0x1E, 0x65, 0xB8, 0x91, 0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E,
    0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
};

/* One supported suite.  fixed_iv is the part of the nonce taken from the
 * key block / traffic secret: 4 bytes of GCM salt in TLS 1.2 (the other 8
 * travel in each record), the whole 12 otherwise.  CBC suites (TLS 1.2
 * only) have a MAC (mac_md, mac_len) and an explicit IV per record. */
struct suite {
    uint16_t id;
    uint16_t version;
    const char *cipher;    /* OpenSSL cipher name */
    const char *md;        /* PRF / HKDF hash */
    uint8_t key_len;
    uint8_t fixed_iv;
    uint8_t explicit_nonce;
    uint8_t hash_len;
    uint8_t rsa_kx;        /* RSA key exchange: a server key decrypts it */
    const char *mac_md;    /* CBC: HMAC hash; NULL for AEAD suites */
    uint8_t mac_len;
};

static const struct suite suites[] = {
    /* TLS 1.2 ECDHE */
    { 0xC02B, TLS12, "AES-128-GCM", "SHA256", 16, 4, 8, 32, 0, NULL, 0 },
    { 0xC02C, TLS12, "AES-256-GCM", "SHA384", 32, 4, 8, 48, 0, NULL, 0 },
    { 0xC02F, TLS12, "AES-128-GCM", "SHA256", 16, 4, 8, 32, 0, NULL, 0 },
    { 0xC030, TLS12, "AES-256-GCM", "SHA384", 32, 4, 8, 48, 0, NULL, 0 },
    { 0xCCA8, TLS12, "ChaCha20-Poly1305", "SHA256", 32, 12, 0, 32, 0, NULL, 0 },
    { 0xCCA9, TLS12, "ChaCha20-Poly1305", "SHA256", 32, 12, 0, 32, 0, NULL, 0 },
    /* TLS 1.2 DHE and RSA key exchange: the record layer is the same and
     * the master secret is logged, so they cost one table row each; RSA
     * key exchange can also be decrypted with the server's key. */
    { 0x009E, TLS12, "AES-128-GCM", "SHA256", 16, 4, 8, 32, 0, NULL, 0 },
    { 0x009F, TLS12, "AES-256-GCM", "SHA384", 32, 4, 8, 48, 0, NULL, 0 },
    { 0xCCAA, TLS12, "ChaCha20-Poly1305", "SHA256", 32, 12, 0, 32, 0, NULL, 0 },
    { 0x009C, TLS12, "AES-128-GCM", "SHA256", 16, 4, 8, 32, 1, NULL, 0 },
    { 0x009D, TLS12, "AES-256-GCM", "SHA384", 32, 4, 8, 48, 1, NULL, 0 },
    /* TLS 1.2 CBC (RFC 5246 6.2.3.2, RFC 7366 encrypt-then-MAC): what
     * Java and older management stacks still negotiate. */
    { 0x002F, TLS12, "AES-128-CBC", "SHA256", 16, 0, 0, 32, 1, "SHA1", 20 },
    { 0x0035, TLS12, "AES-256-CBC", "SHA256", 32, 0, 0, 32, 1, "SHA1", 20 },
    { 0x003C, TLS12, "AES-128-CBC", "SHA256", 16, 0, 0, 32, 1, "SHA256", 32 },
    { 0x003D, TLS12, "AES-256-CBC", "SHA256", 32, 0, 0, 32, 1, "SHA256", 32 },
    { 0x0033, TLS12, "AES-128-CBC", "SHA256", 16, 0, 0, 32, 0, "SHA1", 20 },
    { 0x0039, TLS12, "AES-256-CBC", "SHA256", 32, 0, 0, 32, 0, "SHA1", 20 },
    { 0x0067, TLS12, "AES-128-CBC", "SHA256", 16, 0, 0, 32, 0, "SHA256", 32 },
    { 0x006B, TLS12, "AES-256-CBC", "SHA256", 32, 0, 0, 32, 0, "SHA256", 32 },
    { 0xC009, TLS12, "AES-128-CBC", "SHA256", 16, 0, 0, 32, 0, "SHA1", 20 },
    { 0xC00A, TLS12, "AES-256-CBC", "SHA256", 32, 0, 0, 32, 0, "SHA1", 20 },
    { 0xC013, TLS12, "AES-128-CBC", "SHA256", 16, 0, 0, 32, 0, "SHA1", 20 },
    { 0xC014, TLS12, "AES-256-CBC", "SHA256", 32, 0, 0, 32, 0, "SHA1", 20 },
    { 0xC023, TLS12, "AES-128-CBC", "SHA256", 16, 0, 0, 32, 0, "SHA256", 32 },
    { 0xC024, TLS12, "AES-256-CBC", "SHA384", 32, 0, 0, 48, 0, "SHA384", 48 },
    { 0xC027, TLS12, "AES-128-CBC", "SHA256", 16, 0, 0, 32, 0, "SHA256", 32 },
    { 0xC028, TLS12, "AES-256-CBC", "SHA384", 32, 0, 0, 48, 0, "SHA384", 48 },
    /* TLS 1.3 */
    { 0x1301, TLS13, "AES-128-GCM", "SHA256", 16, 12, 0, 32, 0, NULL, 0 },
    { 0x1302, TLS13, "AES-256-GCM", "SHA384", 32, 12, 0, 48, 0, NULL, 0 },
    { 0x1303, TLS13, "ChaCha20-Poly1305", "SHA256", 32, 12, 0, 32, 0, NULL, 0 },
};

static const struct suite *find_suite(uint16_t id, uint16_t version)
{
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
        if (suites[i].id == id && suites[i].version == version)
            return &suites[i];
    return NULL;
}

/* ---- bounds-checked reader for untrusted bytes --------------------------- */

struct rd {
    const uint8_t *p;
    size_t n;
};

static int rd_bytes(struct rd *r, size_t n, const uint8_t **out)
{
    if (r->n < n)
        return -1;
    *out = r->p;
    r->p += n;
    r->n -= n;
    return 0;
}

static int rd_u8(struct rd *r, unsigned *v)
{
    const uint8_t *b;

    if (rd_bytes(r, 1, &b) < 0)
        return -1;
    *v = b[0];
    return 0;
}

static int rd_u16(struct rd *r, unsigned *v)
{
    const uint8_t *b;

    if (rd_bytes(r, 2, &b) < 0)
        return -1;
    *v = (unsigned)b[0] << 8 | b[1];
    return 0;
}

/* A vector with a 1- or 2-byte length prefix, as a sub-reader. */
static int rd_vec(struct rd *r, int lenbytes, struct rd *sub)
{
    unsigned n;

    if ((lenbytes == 1 ? rd_u8(r, &n) : rd_u16(r, &n)) < 0)
        return -1;
    sub->p = r->p;
    sub->n = n;
    return rd_bytes(r, n, &sub->p);
}

/* ---- key log ------------------------------------------------------------- */

enum { SEC_MASTER, SEC_CHTS, SEC_SHTS, SEC_CTS0, SEC_STS0, SEC_EARLY, SEC_N };

static const struct {
    const char *label;
    int slot;
} keylog_labels[] = {
    { "CLIENT_RANDOM", SEC_MASTER },
    { "CLIENT_HANDSHAKE_TRAFFIC_SECRET", SEC_CHTS },
    { "SERVER_HANDSHAKE_TRAFFIC_SECRET", SEC_SHTS },
    { "CLIENT_TRAFFIC_SECRET_0", SEC_CTS0 },
    { "SERVER_TRAFFIC_SECRET_0", SEC_STS0 },
    { "CLIENT_EARLY_TRAFFIC_SECRET", SEC_EARLY },
};

struct kl_entry {
    uint8_t random[RANDOM_LEN];
    uint8_t used;
    uint8_t len[SEC_N];   /* 0 = not logged */
    uint8_t sec[SEC_N][SECRET_MAX];
};

/* Open addressing keyed by client random: randoms are uniformly random, so
 * their first bytes are already a good hash. */
struct yb_keylog {
    struct kl_entry *slots;
    size_t cap;            /* power of two */
    size_t count;
    size_t malformed;
    size_t first_malformed;
};

/* Line splitter shared by file and text input: bytes in, whole lines out,
 * over-long lines marked rather than stored. */
struct lines {
    uint8_t buf[LINE_MAX_LEN];
    size_t len;
    int too_long;
    size_t lineno;
};

static size_t kl_hash(const uint8_t r[RANDOM_LEN])
{
    uint64_t h;

    memcpy(&h, r, sizeof h);
    return (size_t)(h * 0x9E3779B97F4A7C15ull >> 17);
}

static struct kl_entry *kl_slot(struct kl_entry *slots, size_t cap, const uint8_t r[RANDOM_LEN])
{
    size_t i = kl_hash(r) & (cap - 1);

    while (slots[i].used && memcmp(slots[i].random, r, RANDOM_LEN) != 0)
        i = (i + 1) & (cap - 1);
    return &slots[i];
}

static const struct kl_entry *kl_find(const yb_keylog *k, const uint8_t r[RANDOM_LEN])
{
    const struct kl_entry *e;

    if (k == NULL || k->cap == 0)
        return NULL;
    e = kl_slot(k->slots, k->cap, r);
    return e->used ? e : NULL;
}

/* Keeps the load factor at or below one half. */
static int kl_grow(yb_keylog *k)
{
    size_t ncap = k->cap ? k->cap * 2 : 64;
    struct kl_entry *ns;

    ns = calloc(ncap, sizeof *ns);
    if (ns == NULL)
        return -1;
    for (size_t i = 0; i < k->cap; i++)
        if (k->slots[i].used)
            *kl_slot(ns, ncap, k->slots[i].random) = k->slots[i];
    if (k->slots != NULL) {
        OPENSSL_cleanse(k->slots, k->cap * sizeof *k->slots);
        free(k->slots);
    }
    k->slots = ns;
    k->cap = ncap;
    return 0;
}

/* Decodes exactly n hex digits into n/2 bytes; returns 0 or -1. */
static int unhex(const uint8_t *s, size_t n, uint8_t *out)
{
    if (n % 2 != 0)
        return -1;
    for (size_t i = 0; i < n; i += 2) {
        int hi = yb_hexval(s[i]), lo = yb_hexval(s[i + 1]);

        if (hi < 0 || lo < 0)
            return -1;
        out[i / 2] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

static int is_blank(uint8_t c)
{
    return c == ' ' || c == '\t';
}

static void count_malformed(yb_keylog *k, size_t lineno)
{
    if (k->malformed++ == 0)
        k->first_malformed = lineno;
}

/* One key log line (no line end).  Returns 0 (stored, skipped or counted
 * as malformed) or -1 (out of memory / session cap). */
static int keylog_line(yb_keylog *k, const uint8_t *s, size_t n, size_t lineno)
{
    size_t i = 0, lab, rnd, rndlen, sec, seclen;
    uint8_t random[RANDOM_LEN], secret[SECRET_MAX];
    struct kl_entry *e;
    int slot = -1;

    while (n > 0 && (s[n - 1] == '\r' || is_blank(s[n - 1])))
        n--;
    while (i < n && is_blank(s[i]))
        i++;
    if (i == n || s[i] == '#')
        return 0;
    lab = i;
    while (i < n && !is_blank(s[i]))
        i++;
    for (size_t j = 0; j < sizeof keylog_labels / sizeof keylog_labels[0]; j++)
        if (strlen(keylog_labels[j].label) == i - lab &&
            memcmp(keylog_labels[j].label, s + lab, i - lab) == 0)
            slot = keylog_labels[j].slot;
    if (slot < 0)
        return 0; /* EXPORTER_SECRET, CLIENT_EARLY_TRAFFIC_SECRET, RSA, ... */
    while (i < n && is_blank(s[i]))
        i++;
    rnd = i;
    while (i < n && !is_blank(s[i]))
        i++;
    rndlen = i - rnd;
    while (i < n && is_blank(s[i]))
        i++;
    sec = i;
    while (i < n && !is_blank(s[i]))
        i++;
    seclen = i - sec;
    /* The master secret is always 48 bytes; TLS 1.3 secrets are a hash
     * output (32 or 48). */
    if (i != n || rndlen != 2 * RANDOM_LEN || unhex(s + rnd, rndlen, random) < 0 ||
        (slot == SEC_MASTER ? seclen != 96 : seclen != 64 && seclen != 96) ||
        unhex(s + sec, seclen, secret) < 0) {
        count_malformed(k, lineno);
        return 0;
    }
    e = k->cap > 0 ? kl_slot(k->slots, k->cap, random) : NULL;
    if (e == NULL || !e->used) {
        if (k->count >= YB_KEYLOG_MAX_SESSIONS ||
            ((k->count + 1) * 2 > k->cap && kl_grow(k) < 0)) {
            OPENSSL_cleanse(secret, sizeof secret);
            return -1;
        }
        e = kl_slot(k->slots, k->cap, random);
        e->used = 1;
        memcpy(e->random, random, RANDOM_LEN);
        k->count++;
    }
    memcpy(e->sec[slot], secret, seclen / 2);
    e->len[slot] = (uint8_t)(seclen / 2);
    OPENSSL_cleanse(secret, sizeof secret);
    return 0;
}

static int lines_feed(yb_keylog *k, struct lines *l, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n') {
            l->lineno++;
            if (l->too_long)
                count_malformed(k, l->lineno);
            else if (keylog_line(k, l->buf, l->len, l->lineno) < 0)
                return -1;
            l->len = 0;
            l->too_long = 0;
        } else if (l->len < sizeof l->buf) {
            l->buf[l->len++] = p[i];
        } else {
            l->too_long = 1;
        }
    }
    return 0;
}

/* The last line may lack its line end. */
static int lines_finish(yb_keylog *k, struct lines *l)
{
    int rc = 0;

    if (l->len > 0 || l->too_long) {
        l->lineno++;
        if (l->too_long)
            count_malformed(k, l->lineno);
        else
            rc = keylog_line(k, l->buf, l->len, l->lineno);
    }
    OPENSSL_cleanse(l->buf, sizeof l->buf);
    return rc;
}

yb_keylog *yb_keylog_new(void)
{
    return calloc(1, sizeof(yb_keylog));
}

int yb_keylog_add_text(yb_keylog *k, const uint8_t *text, size_t len)
{
    struct lines l = { .len = 0 };
    int rc;

    if (k == NULL || (text == NULL && len > 0))
        return -1;
    rc = lines_feed(k, &l, text, len);
    if (lines_finish(k, &l) < 0)
        rc = -1;
    return rc;
}

yb_keylog *yb_keylog_load(const char *path, char *err, size_t errlen)
{
    yb_keylog *k = NULL;
    struct lines l = { .len = 0 };
    uint8_t chunk[4096];
    FILE *fp;
    size_t n;

    fp = fopen(path, "rb");
    if (fp == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    k = yb_keylog_new();
    if (k == NULL) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0) {
        if (lines_feed(k, &l, chunk, n) < 0) {
            snprintf(err, errlen, "%s:%zu: out of memory or more than %u sessions",
                     path, l.lineno + 1, YB_KEYLOG_MAX_SESSIONS);
            goto fail;
        }
    }
    if (ferror(fp)) {
        snprintf(err, errlen, "%s: read error", path);
        goto fail;
    }
    if (lines_finish(k, &l) < 0) {
        snprintf(err, errlen, "%s:%zu: out of memory or more than %u sessions",
                 path, l.lineno, YB_KEYLOG_MAX_SESSIONS);
        goto fail;
    }
    OPENSSL_cleanse(chunk, sizeof chunk);
    fclose(fp);
    return k;
fail:
    OPENSSL_cleanse(chunk, sizeof chunk);
    OPENSSL_cleanse(&l, sizeof l);
    yb_keylog_free(k);
    fclose(fp);
    return NULL;
}

size_t yb_keylog_count(const yb_keylog *k)
{
    return k != NULL ? k->count : 0;
}

size_t yb_keylog_malformed(const yb_keylog *k, size_t *first_line)
{
    if (first_line != NULL)
        *first_line = k != NULL && k->malformed ? k->first_malformed : 0;
    return k != NULL ? k->malformed : 0;
}

void yb_keylog_free(yb_keylog *k)
{
    if (k == NULL)
        return;
    if (k->slots != NULL) {
        OPENSSL_cleanse(k->slots, k->cap * sizeof *k->slots);
        free(k->slots);
    }
    free(k);
}

/* ---- the store: server keys and TLS 1.2 sessions ------------------------ */

struct sess_entry {
    uint8_t kind;           /* 0 = free, 1 = session ID, 2 = ticket (SHA-256) */
    uint8_t id_len;
    uint8_t id[SID_MAX];
    uint8_t master[MASTER_LEN];
};

struct yb_tls_store {
    EVP_PKEY *keys[YB_TLS_MAX_SERVER_KEYS];
    size_t n_keys;
    struct sess_entry *cache; /* YB_TLS_SESSION_CACHE entries, made on first use */
    size_t sessions;          /* stored so far (replacements included) */
};

yb_tls_store *yb_tls_store_new(void)
{
    return calloc(1, sizeof(yb_tls_store));
}

int yb_tls_store_add_server_key(yb_tls_store *st, const uint8_t *pem, size_t len,
                                const char *name, char *err, size_t errlen)
{
    BIO *b;
    EVP_PKEY *k;

    if (st == NULL || pem == NULL || len > INT32_MAX) {
        snprintf(err, errlen, "%s: bad arguments", name);
        return -1;
    }
    if (st->n_keys == YB_TLS_MAX_SERVER_KEYS) {
        snprintf(err, errlen, "%s: at most %d server keys", name, YB_TLS_MAX_SERVER_KEYS);
        return -1;
    }
    b = BIO_new_mem_buf(pem, (int)len);
    /* Never a passphrase prompt: an encrypted key is refused. */
    k = b != NULL ? PEM_read_bio_PrivateKey(b, NULL, NULL, (void *)"") : NULL;
    BIO_free(b);
    if (k == NULL) {
        snprintf(err, errlen, "%s: not a PEM private key (or one protected by a passphrase)",
                 name);
        return -1;
    }
    if (EVP_PKEY_get_base_id(k) != EVP_PKEY_RSA) {
        EVP_PKEY_free(k);
        snprintf(err, errlen, "%s: not an RSA key (only RSA key exchange can be decrypted with "
                 "the server's key; ECDHE needs a key log)", name);
        return -1;
    }
    st->keys[st->n_keys++] = k;
    return 0;
}

int yb_tls_store_load_server_key(yb_tls_store *st, const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;
    struct stat sb;
    uint8_t *buf = NULL;
    size_t have = 0;

    if (fd < 0) {
        snprintf(err, errlen, "server key %s: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &sb) < 0) {
        snprintf(err, errlen, "server key %s: %s", path, strerror(errno));
        goto out;
    }
    if (!S_ISREG(sb.st_mode) || sb.st_size > YB_TLS_SERVER_KEY_MAX) {
        snprintf(err, errlen, "server key %s: not a regular file of at most %d bytes", path,
                 YB_TLS_SERVER_KEY_MAX);
        goto out;
    }
    /* As ssh does with identity files: a private key others can read is
     * no longer private, and is refused rather than used. */
    if (sb.st_mode & (S_IRWXG | S_IRWXO)) {
        snprintf(err, errlen, "server key %s is accessible to group/others (mode %04o); a "
                 "private key must stay private: chmod 600 %s", path,
                 (unsigned)(sb.st_mode & 07777), path);
        goto out;
    }
    buf = malloc(YB_TLS_SERVER_KEY_MAX);
    if (buf == NULL) {
        snprintf(err, errlen, "server key %s: out of memory", path);
        goto out;
    }
    for (;;) {
        ssize_t n = read(fd, buf + have, YB_TLS_SERVER_KEY_MAX - have);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "server key %s: %s", path, strerror(errno));
            goto out;
        }
        if (n == 0)
            break;
        have += (size_t)n;
        if (have == YB_TLS_SERVER_KEY_MAX) {
            snprintf(err, errlen, "server key %s: more than %d bytes", path,
                     YB_TLS_SERVER_KEY_MAX);
            goto out;
        }
    }
    rc = yb_tls_store_add_server_key(st, buf, have, path, err, errlen);
out:
    if (buf != NULL) {
        OPENSSL_cleanse(buf, YB_TLS_SERVER_KEY_MAX);
        free(buf);
    }
    close(fd);
    return rc;
}

int yb_tls_store_copy_keys(yb_tls_store *dst, const yb_tls_store *src)
{
    if (dst == NULL || src == NULL)
        return 0;
    for (size_t i = 0; i < src->n_keys; i++) {
        if (dst->n_keys == YB_TLS_MAX_SERVER_KEYS || EVP_PKEY_up_ref(src->keys[i]) != 1)
            return -1;
        dst->keys[dst->n_keys++] = src->keys[i];
    }
    return 0;
}

size_t yb_tls_store_server_keys(const yb_tls_store *st)
{
    return st != NULL ? st->n_keys : 0;
}

size_t yb_tls_store_sessions(const yb_tls_store *st)
{
    return st != NULL ? st->sessions : 0;
}

void yb_tls_store_free(yb_tls_store *st)
{
    if (st == NULL)
        return;
    for (size_t i = 0; i < st->n_keys; i++)
        EVP_PKEY_free(st->keys[i]);
    if (st->cache != NULL) {
        OPENSSL_cleanse(st->cache, YB_TLS_SESSION_CACHE * sizeof *st->cache);
        free(st->cache);
    }
    free(st);
}

static size_t sess_slot(int kind, const uint8_t *id, size_t n)
{
    uint32_t h = 2166136261u ^ (uint32_t)kind;

    for (size_t i = 0; i < n; i++)
        h = (h ^ id[i]) * 16777619u;
    return h & (YB_TLS_SESSION_CACHE - 1);
}

/* Remembers master under (kind, id); a colliding older session is
 * replaced (the cache is bounded).  Silently nothing when out of memory. */
static void sess_put(yb_tls_store *st, int kind, const uint8_t *id, size_t n,
                     const uint8_t master[MASTER_LEN])
{
    struct sess_entry *e;

    if (st == NULL || n == 0 || n > SID_MAX)
        return;
    if (st->cache == NULL && (st->cache = calloc(YB_TLS_SESSION_CACHE, sizeof *st->cache)) == NULL)
        return;
    e = &st->cache[sess_slot(kind, id, n)];
    e->kind = (uint8_t)kind;
    e->id_len = (uint8_t)n;
    memcpy(e->id, id, n);
    memcpy(e->master, master, MASTER_LEN);
    st->sessions++;
}

static const uint8_t *sess_get(const yb_tls_store *st, int kind, const uint8_t *id, size_t n)
{
    const struct sess_entry *e;

    if (st == NULL || st->cache == NULL || n == 0 || n > SID_MAX)
        return NULL;
    e = &st->cache[sess_slot(kind, id, n)];
    return e->kind == kind && e->id_len == n && memcmp(e->id, id, n) == 0 ? e->master : NULL;
}

/* ---- flows ---------------------------------------------------------------- */

enum { REKEY_NONE, REKEY_FINISHED, REKEY_UPDATE, REKEY_END_EARLY };

struct dirst {
    /* stream bytes not yet consumed: q[qoff..qlen) */
    uint8_t *q;
    size_t qoff, qlen, qcap;
    EVP_CIPHER_CTX *cctx;
    int encrypted;   /* TLS 1.2: after this side's ChangeCipherSpec;
                        TLS 1.3: from the ServerHello on (opaque records) */
    int phase;       /* TLS 1.3: 1 = handshake keys, 2 = application keys */
    uint8_t iv[NONCE_LEN];
    uint64_t seq;
    uint8_t secret[SECRET_MAX]; /* TLS 1.3 current traffic secret */
    uint8_t mac_key[MAC_MAX];   /* TLS 1.2 CBC: HMAC key */
    unsigned long records;      /* records processed */
    unsigned long opened;       /* of which decrypted */
    /* handshake message being reassembled */
    uint8_t hs_hdr[4];
    size_t hs_hdr_have;
    size_t hs_need, hs_have;
    int hs_keep;
    uint8_t *hs_body;
    size_t hs_cap;
    int rekey;       /* key change due after the current record */
    int early;       /* client: 0-RTT records, under the early traffic secret */
    int skip_early;  /* client: 0-RTT the server rejected, still to skip */
    size_t skipped;  /* bytes of such records skipped */
};

struct yb_tls_flow {
    const yb_keylog *kl;
    struct dirst d[2];
    int have_ch, have_sh, hrr, keys_ready, failed;
    int ch_early;    /* the ClientHello offers TLS 1.3 early data */
    int ee_seen;     /* EncryptedExtensions processed */
    int client_ee_seen; /* the client's (ALPS) too */
    int early_accepted; /* ... and it accepts the early data */
    uint16_t version;
    const struct suite *suite;
    EVP_CIPHER *cipher;
    uint8_t crand[RANDOM_LEN], srand[RANDOM_LEN];
    /* TLS 1.2: where the master secret comes from besides the key log */
    yb_tls_store *store;     /* server keys, sessions of the capture (or NULL) */
    uint8_t ch_sid[SID_MAX], sh_sid[SID_MAX];
    size_t ch_sid_len, sh_sid_len;
    uint8_t ch_ticket[32];   /* SHA-256 of the ticket the ClientHello offers */
    int ch_has_ticket;
    int ch_ems, sh_ems, ch_etm, sh_etm; /* extensions offered / accepted */
    int etm;                 /* CBC records are encrypt-then-MAC */
    uint8_t master[MASTER_LEN];
    int have_master;
    int resumed;             /* abbreviated handshake */
    int rsa_pending;         /* keys come from the ClientKeyExchange */
    int s_flight_done;       /* the server's ServerHelloDone or CCS was read */
    EVP_PKEY *rsa_key;       /* the store's key matching the certificate */
    int cert_seen;
    EVP_MD_CTX *transcript[2]; /* SHA-256, SHA-384 of the handshake so far
                                  (extended master secret, RFC 7627) */
    char status[192];
    char alpn[256];
    void (*cb)(void *ud, int dir, const uint8_t *d, size_t n);
    void *ud;
    uint8_t pt[REC_MAX]; /* one record's plaintext */
};

__attribute__((format(printf, 2, 3)))
static int fail(yb_tls_flow *f, const char *fmt, ...)
{
    va_list ap;

    if (!f->failed) {
        va_start(ap, fmt);
        vsnprintf(f->status, sizeof f->status, fmt, ap);
        va_end(ap);
        f->failed = 1;
    }
    return -1;
}

/* ---- naming what failed --------------------------------------------------- */

static const char *hs_name(unsigned type)
{
    switch (type) {
    case 0: return "HelloRequest";
    case HS_CLIENT_HELLO: return "ClientHello";
    case HS_SERVER_HELLO: return "ServerHello";
    case 4: return "NewSessionTicket";
    case HS_END_OF_EARLY_DATA: return "EndOfEarlyData";
    case HS_ENCRYPTED_EXTENSIONS: return "EncryptedExtensions";
    case 11: return "Certificate";
    case 12: return "ServerKeyExchange";
    case 13: return "CertificateRequest";
    case 14: return "ServerHelloDone";
    case 15: return "CertificateVerify";
    case 16: return "ClientKeyExchange";
    case HS_FINISHED: return "Finished";
    case 22: return "CertificateStatus";
    case HS_KEY_UPDATE: return "KeyUpdate";
    case 254: return "MessageHash";
    default: return NULL;
    }
}

/* Fails with "unexpected handshake message NAME" + why (may be ""). */
static int fail_unexpected(yb_tls_flow *f, unsigned type, const char *why)
{
    const char *n = hs_name(type);

    if (n == NULL)
        return fail(f, "unexpected handshake message of type %u%s", type, why);
    return fail(f, "unexpected handshake message %s%s", n, why);
}

static const char *version_name(unsigned v)
{
    switch (v) {
    case 0x0300: return "SSL 3.0";
    case 0x0301: return "TLS 1.0";
    case 0x0302: return "TLS 1.1";
    default: return "unknown";
    }
}

/* Writes the IANA name of cipher suite id (OpenSSL knows the names of the
 * suites it implements) into out; "unknown" otherwise. */
static void suite_name(unsigned id, char *out, size_t cap)
{
    const unsigned char b[2] = { (unsigned char)(id >> 8), (unsigned char)id };
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    SSL *ssl = ctx != NULL ? SSL_new(ctx) : NULL;
    const SSL_CIPHER *c = ssl != NULL ? SSL_CIPHER_find(ssl, b) : NULL;
    const char *n = c != NULL ? SSL_CIPHER_standard_name(c) : NULL;

    snprintf(out, cap, "%s", n != NULL ? n : "unknown");
    SSL_free(ssl);
    SSL_CTX_free(ctx);
}

static const char *label_of(int slot)
{
    return keylog_labels[slot].label;
}

/* Fails because the key log lacks the secret pair (client slot cs, server
 * slot ss) of this connection (e: its entry, or NULL), saying which
 * direction the key log covers, if any. */
static int fail_missing(yb_tls_flow *f, const struct kl_entry *e, int cs, int ss)
{
    size_t hl = f->suite->hash_len;
    int have_c = e != NULL && e->len[cs] == hl, have_s = e != NULL && e->len[ss] == hl;

    if (e == NULL)
        return fail(f, "no keys for this client random");
    if (have_c && !have_s)
        return fail(f, "key log for the client direction only (%s missing)", label_of(ss));
    if (have_s && !have_c)
        return fail(f, "key log for the server direction only (%s missing)", label_of(cs));
    return fail(f, "no %s or %s for this client random", label_of(cs), label_of(ss));
}

/* ---- key derivation (OpenSSL KDFs) ---------------------------------------- */

/* TLS 1.2 PRF (RFC 5246 5): out = PRF(secret, label, seed). */
static int tls12_prf(const char *md, const uint8_t *secret, size_t slen,
                     const uint8_t *seed, size_t seedlen, uint8_t *out, size_t outlen)
{
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, OSSL_KDF_NAME_TLS1_PRF, NULL);
    EVP_KDF_CTX *kctx = NULL;
    OSSL_PARAM params[4];
    int rc = -1;

    if (kdf == NULL)
        goto out;
    kctx = EVP_KDF_CTX_new(kdf);
    if (kctx == NULL)
        goto out;
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)md, 0);
    params[1] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SECRET, (void *)secret, slen);
    params[2] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SEED, (void *)seed, seedlen);
    params[3] = OSSL_PARAM_construct_end();
    if (EVP_KDF_derive(kctx, out, outlen, params) <= 0)
        goto out;
    rc = 0;
out:
    EVP_KDF_CTX_free(kctx);
    EVP_KDF_free(kdf);
    return rc;
}

/* RFC 8446 7.1: HKDF-Expand-Label(secret, label, "", outlen). */
static int expand_label(const char *md, const uint8_t *secret, size_t slen,
                        const char *label, uint8_t *out, size_t outlen)
{
    static const char prefix[] = "tls13 ";
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, OSSL_KDF_NAME_TLS1_3_KDF, NULL);
    EVP_KDF_CTX *kctx = NULL;
    OSSL_PARAM params[6];
    int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY;
    int rc = -1;

    if (kdf == NULL)
        goto out;
    kctx = EVP_KDF_CTX_new(kdf);
    if (kctx == NULL)
        goto out;
    params[0] = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
    params[1] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)md, 0);
    params[2] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)secret, slen);
    params[3] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_PREFIX, (void *)prefix,
                                                  sizeof prefix - 1);
    params[4] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_LABEL, (void *)label,
                                                  strlen(label));
    params[5] = OSSL_PARAM_construct_end();
    if (EVP_KDF_derive(kctx, out, outlen, params) <= 0)
        goto out;
    rc = 0;
out:
    EVP_KDF_CTX_free(kctx);
    EVP_KDF_free(kdf);
    return rc;
}

/* Loads key and the fixed part of the nonce for one direction; the
 * sequence number restarts at 0 with every new key (RFC 5246 6.1,
 * RFC 8446 5.3). */
static int install_key(yb_tls_flow *f, struct dirst *s, const uint8_t *key, const uint8_t *iv)
{
    if (s->cctx == NULL && (s->cctx = EVP_CIPHER_CTX_new()) == NULL)
        return fail(f, "out of memory");
    if (!EVP_DecryptInit_ex2(s->cctx, f->cipher, key, NULL, NULL))
        return fail(f, "cannot set up %s", f->suite->cipher);
    memset(s->iv, 0, sizeof s->iv);
    memcpy(s->iv, iv, f->suite->fixed_iv);
    s->seq = 0;
    return 0;
}

/* TLS 1.3: makes secret this direction's traffic secret (RFC 8446 7.3). */
static int set_traffic_secret(yb_tls_flow *f, struct dirst *s, const uint8_t *secret)
{
    const struct suite *su = f->suite;
    uint8_t key[32], iv[NONCE_LEN];
    int rc = -1;

    if (secret != s->secret)
        memcpy(s->secret, secret, su->hash_len);
    if (expand_label(su->md, s->secret, su->hash_len, "key", key, su->key_len) < 0 ||
        expand_label(su->md, s->secret, su->hash_len, "iv", iv, NONCE_LEN) < 0) {
        fail(f, "key derivation failed");
        goto out;
    }
    rc = install_key(f, s, key, iv);
out:
    OPENSSL_cleanse(key, sizeof key);
    OPENSSL_cleanse(iv, sizeof iv);
    return rc;
}

/* TLS 1.2 key block (RFC 5246 6.3): PRF(master, "key expansion",
 * server_random + client_random) = client MAC key, server MAC key (CBC
 * only), client key, server key, client fixed IV, server fixed IV (AEAD
 * only). */
static int tls12_key_block(yb_tls_flow *f)
{
    static const char label[] = "key expansion";
    const struct suite *su = f->suite;
    uint8_t seed[sizeof label - 1 + 2 * RANDOM_LEN];
    uint8_t kb[2 * MAC_MAX + 2 * 32 + 2 * NONCE_LEN];
    size_t ml = su->mac_len, kl = su->key_len, il = su->fixed_iv;
    int rc = -1;

    memcpy(seed, label, sizeof label - 1);
    memcpy(seed + sizeof label - 1, f->srand, RANDOM_LEN);
    memcpy(seed + sizeof label - 1 + RANDOM_LEN, f->crand, RANDOM_LEN);
    if (tls12_prf(su->md, f->master, MASTER_LEN, seed, sizeof seed, kb,
                  2 * ml + 2 * kl + 2 * il) < 0) {
        fail(f, "key derivation failed");
    } else if (install_key(f, &f->d[0], kb + 2 * ml, kb + 2 * ml + 2 * kl) == 0 &&
               install_key(f, &f->d[1], kb + 2 * ml + kl, kb + 2 * ml + 2 * kl + il) == 0) {
        memcpy(f->d[0].mac_key, kb, ml);
        memcpy(f->d[1].mac_key, kb + ml, ml);
        rc = 0;
    }
    OPENSSL_cleanse(kb, sizeof kb);
    return rc;
}

/* The keys of the connection are known: derive the first ones.  TLS 1.2
 * needs f->master; TLS 1.3 reads the key log. */
static int derive_keys(yb_tls_flow *f)
{
    const struct suite *su = f->suite;
    int rc = -1;

    f->cipher = EVP_CIPHER_fetch(NULL, su->cipher, NULL);
    if (f->cipher == NULL)
        return fail(f, "cipher %s not available", su->cipher);
    if (f->version == TLS12) {
        rc = tls12_key_block(f);
        /* A later connection may resume this session. */
        if (rc == 0 && f->store != NULL && f->sh_sid_len > 0)
            sess_put(f->store, 1, f->sh_sid, f->sh_sid_len, f->master);
    } else {
        const struct kl_entry *e = kl_find(f->kl, f->crand);

        if (e == NULL || e->len[SEC_CHTS] != su->hash_len || e->len[SEC_SHTS] != su->hash_len)
            return fail_missing(f, e, SEC_CHTS, SEC_SHTS);
        if (set_traffic_secret(f, &f->d[0], e->sec[SEC_CHTS]) == 0 &&
            set_traffic_secret(f, &f->d[1], e->sec[SEC_SHTS]) == 0) {
            /* From here on every opaque record of either side is
             * protected, under the handshake keys until its Finished. */
            f->d[0].encrypted = f->d[1].encrypted = 1;
            f->d[0].phase = f->d[1].phase = 1;
            rc = 0;
        }
    }
    if (rc == 0) {
        f->keys_ready = 1;
        snprintf(f->status, sizeof f->status, "decrypting");
    }
    return rc;
}

/* The transcript is no longer needed. */
static void transcript_end(yb_tls_flow *f)
{
    for (int i = 0; i < 2; i++) {
        EVP_MD_CTX_free(f->transcript[i]);
        f->transcript[i] = NULL;
    }
}

/* TLS 1.2 after the ServerHello: the master secret from the key log, from
 * an earlier connection of the capture this one resumes, or later from
 * the ClientKeyExchange with the server's RSA key. */
static int tls12_master_at_hello(yb_tls_flow *f)
{
    const struct kl_entry *e = kl_find(f->kl, f->crand);
    const uint8_t *m = NULL;

    f->etm = f->suite->mac_md != NULL && f->ch_etm && f->sh_etm;
    f->resumed = f->sh_sid_len > 0 && f->sh_sid_len == f->ch_sid_len &&
                 memcmp(f->sh_sid, f->ch_sid, f->sh_sid_len) == 0;
    if (e != NULL && e->len[SEC_MASTER] == MASTER_LEN)
        m = e->sec[SEC_MASTER];
    else if (f->resumed && f->ch_has_ticket)
        m = sess_get(f->store, 2, f->ch_ticket, sizeof f->ch_ticket);
    if (m == NULL && f->resumed)
        m = sess_get(f->store, 1, f->sh_sid, f->sh_sid_len);
    if (m != NULL) {
        memcpy(f->master, m, MASTER_LEN);
        f->have_master = 1;
        transcript_end(f);
        return derive_keys(f);
    }
    if (f->resumed)
        return fail(f, "no keys for this client random (a resumed session whose first "
                       "connection is not in the capture)");
    if (f->suite->rsa_kx && yb_tls_store_server_keys(f->store) > 0) {
        f->rsa_pending = 1; /* the ClientKeyExchange will tell */
        return 0;
    }
    transcript_end(f);
    if (e != NULL)
        return fail(f, "no CLIENT_RANDOM (TLS 1.2 master secret) for this client random");
    if (f->suite->rsa_kx)
        return fail(f, "no keys for this client random (RSA key exchange: --server-key "
                       "with the server's private key would decrypt it)");
    return fail(f, "no keys for this client random");
}

/* TLS 1.2 server Certificate with server keys waiting: which of them is
 * the one of the certificate's public key. */
static int on_server_certificate(yb_tls_flow *f, const uint8_t *b, size_t n)
{
    struct rd r = { b, n };
    const uint8_t *len3, *der;
    size_t list, cl;
    X509 *x;

    f->cert_seen = 1;
    if (rd_bytes(&r, 3, &len3) < 0)
        return fail(f, "bad Certificate");
    list = (size_t)len3[0] << 16 | (size_t)len3[1] << 8 | len3[2];
    if (list != r.n || rd_bytes(&r, 3, &len3) < 0)
        return fail(f, "bad Certificate");
    cl = (size_t)len3[0] << 16 | (size_t)len3[1] << 8 | len3[2];
    if (rd_bytes(&r, cl, &der) < 0 || cl > LONG_MAX)
        return fail(f, "bad Certificate");
    x = d2i_X509(NULL, &der, (long)cl);
    if (x == NULL)
        return fail(f, "bad Certificate: the server's certificate does not parse");
    for (size_t i = 0; i < f->store->n_keys && f->rsa_key == NULL; i++)
        if (EVP_PKEY_eq(X509_get0_pubkey(x), f->store->keys[i]) == 1)
            f->rsa_key = f->store->keys[i];
    X509_free(x);
    return 0;
}

/* TLS 1.2 RSA key exchange (RFC 5246 7.4.7.1, 8.1; RFC 7627 4): the
 * pre-master secret, decrypted with the server's key, gives the master
 * secret, from the randoms or, with the extended master secret, from the
 * hash of the handshake so far (this message included). */
static int on_client_key_exchange(yb_tls_flow *f, const uint8_t *b, size_t n)
{
    struct rd r = { b, n }, epms;
    EVP_PKEY_CTX *pc = NULL;
    uint8_t pms[512], seed[64 + 2 * RANDOM_LEN], hash[EVP_MAX_MD_SIZE];
    size_t pmslen = sizeof pms, seedlen;
    unsigned hlen = 0;
    int rc = -1;

    f->rsa_pending = 0;
    if (f->rsa_key == NULL)
        return fail(f, f->cert_seen ? "RSA key exchange: no --server-key matches the "
                                      "server's certificate"
                                    : "RSA key exchange: no server certificate captured");
    if (rd_vec(&r, 2, &epms) < 0 || r.n != 0 || epms.n == 0)
        return fail(f, "bad ClientKeyExchange");
    pc = EVP_PKEY_CTX_new(f->rsa_key, NULL);
    if (pc == NULL || EVP_PKEY_decrypt_init(pc) <= 0 ||
        EVP_PKEY_CTX_set_rsa_padding(pc, RSA_PKCS1_PADDING) <= 0 ||
        EVP_PKEY_decrypt(pc, pms, &pmslen, epms.p, epms.n) <= 0 || pmslen != MASTER_LEN) {
        fail(f, "RSA key exchange: the pre-master secret does not decrypt with the server key");
        goto out;
    }
    if (f->ch_ems && f->sh_ems) {
        static const char label[] = "extended master secret";
        EVP_MD_CTX *t = f->transcript[f->suite->hash_len == 48];

        if (t == NULL || EVP_DigestFinal_ex(t, hash, &hlen) <= 0) {
            fail(f, "key derivation failed");
            goto out;
        }
        memcpy(seed, label, sizeof label - 1);
        memcpy(seed + sizeof label - 1, hash, hlen);
        seedlen = sizeof label - 1 + hlen;
    } else {
        static const char label[] = "master secret";

        memcpy(seed, label, sizeof label - 1);
        memcpy(seed + sizeof label - 1, f->crand, RANDOM_LEN);
        memcpy(seed + sizeof label - 1 + RANDOM_LEN, f->srand, RANDOM_LEN);
        seedlen = sizeof label - 1 + 2 * RANDOM_LEN;
    }
    if (tls12_prf(f->suite->md, pms, MASTER_LEN, seed, seedlen, f->master, MASTER_LEN) < 0) {
        fail(f, "key derivation failed");
        goto out;
    }
    f->have_master = 1;
    rc = derive_keys(f);
out:
    OPENSSL_cleanse(pms, sizeof pms);
    OPENSSL_cleanse(seed, sizeof seed);
    EVP_PKEY_CTX_free(pc);
    transcript_end(f);
    return rc;
}

/* TLS 1.2 NewSessionTicket (RFC 5077 3.3): a later connection may offer
 * this ticket to resume the session. */
static int on_tls12_ticket(yb_tls_flow *f, const uint8_t *b, size_t n)
{
    struct rd r = { b, n }, ticket;
    const uint8_t *hint;
    uint8_t h[32];
    unsigned hl = 0;

    if (rd_bytes(&r, 4, &hint) < 0 || rd_vec(&r, 2, &ticket) < 0 || r.n != 0)
        return fail(f, "bad NewSessionTicket");
    if (f->have_master && ticket.n > 0 &&
        EVP_Digest(ticket.p, ticket.n, h, &hl, EVP_sha256(), NULL) > 0 && hl == sizeof h)
        sess_put(f->store, 2, h, sizeof h, f->master);
    return 0;
}

/* TLS 1.3 key change after this direction's Finished or KeyUpdate. */
static int apply_rekey(yb_tls_flow *f, int dir)
{
    struct dirst *s = &f->d[dir];
    const struct suite *su = f->suite;
    uint8_t next[SECRET_MAX];
    int why = s->rekey, rc;

    s->rekey = REKEY_NONE;
    if (why == REKEY_END_EARLY) {
        const struct kl_entry *e = kl_find(f->kl, f->crand);

        s->early = 0;
        if (e == NULL || e->len[SEC_CHTS] != su->hash_len)
            return fail_missing(f, e, SEC_CHTS, SEC_SHTS);
        return set_traffic_secret(f, s, e->sec[SEC_CHTS]);
    }
    if (why == REKEY_FINISHED) {
        const struct kl_entry *e = kl_find(f->kl, f->crand);
        int slot = dir == 0 ? SEC_CTS0 : SEC_STS0;

        if (e == NULL || e->len[slot] != su->hash_len)
            return fail_missing(f, e, SEC_CTS0, SEC_STS0);
        s->phase = 2;
        return set_traffic_secret(f, s, e->sec[slot]);
    }
    /* RFC 8446 7.2: application_traffic_secret_N+1 =
     * HKDF-Expand-Label(application_traffic_secret_N, "traffic upd", "", Hash.length) */
    if (expand_label(su->md, s->secret, su->hash_len, "traffic upd", next, su->hash_len) < 0)
        return fail(f, "key derivation failed");
    rc = set_traffic_secret(f, s, next);
    OPENSSL_cleanse(next, sizeof next);
    return rc;
}

/* TLS 1.3 0-RTT (RFC 8446 4.2.10), known once the server's
 * EncryptedExtensions say whether it took the early data: accepted, the
 * client's records up to EndOfEarlyData are under the early traffic
 * secret; rejected, they are skipped, as the server skipped them. */
static int start_early(yb_tls_flow *f)
{
    const struct kl_entry *e = kl_find(f->kl, f->crand);

    if (!f->early_accepted) {
        f->d[0].skip_early = 1;
        return 0;
    }
    if (e == NULL || e->len[SEC_EARLY] != f->suite->hash_len)
        return fail(f, "no CLIENT_EARLY_TRAFFIC_SECRET for this client random (0-RTT data)");
    f->d[0].early = 1;
    return set_traffic_secret(f, &f->d[0], e->sec[SEC_EARLY]);
}

/* ---- handshake messages ------------------------------------------------------ */

/* Reads the extensions we care about: from the server the selected
 * version and ALPN, from the client whether it offers 0-RTT data. */
static int parse_extensions(yb_tls_flow *f, struct rd *exts, int from_server,
                            unsigned *sel_version)
{
    while (exts->n > 0) {
        unsigned type;
        struct rd body;

        if (rd_u16(exts, &type) < 0 || rd_vec(exts, 2, &body) < 0)
            return -1;
        if (type == EXT_EARLY_DATA) {
            if (from_server)
                f->early_accepted = 1; /* only EncryptedExtensions carries it */
            else
                f->ch_early = 1;
        } else if (type == EXT_EXTENDED_MASTER_SECRET) {
            *(from_server ? &f->sh_ems : &f->ch_ems) = 1;
        } else if (type == EXT_ENCRYPT_THEN_MAC) {
            *(from_server ? &f->sh_etm : &f->ch_etm) = 1;
        } else if (!from_server) {
            unsigned hl = 0;

            /* A ticket offered to resume a TLS 1.2 session: known by its
             * hash (tickets can be long). */
            if (type == EXT_SESSION_TICKET && body.n > 0 &&
                EVP_Digest(body.p, body.n, f->ch_ticket, &hl, EVP_sha256(), NULL) > 0 &&
                hl == sizeof f->ch_ticket)
                f->ch_has_ticket = 1;
            continue;
        } else if (type == EXT_SUPPORTED_VERSIONS && sel_version != NULL) {
            if (rd_u16(&body, sel_version) < 0 || body.n != 0)
                return -1;
        } else if (type == EXT_ALPN) {
            /* The server names exactly one protocol (RFC 7301 3.1). */
            struct rd list, name;

            if (rd_vec(&body, 2, &list) < 0 || body.n != 0 ||
                rd_vec(&list, 1, &name) < 0 || list.n != 0 || name.n == 0)
                return -1;
            /* name.n <= 255 < sizeof f->alpn; a NUL could not be returned
             * as a C string, so such a name is not reported. */
            if (memchr(name.p, '\0', name.n) == NULL) {
                memcpy(f->alpn, name.p, name.n);
                f->alpn[name.n] = '\0';
            }
        }
    }
    return 0;
}

static int on_client_hello(yb_tls_flow *f, const uint8_t *b, size_t n, int encrypted)
{
    struct rd r = { b, n }, sid, offered, comp, exts;
    const uint8_t *random;
    unsigned version;

    if (f->have_ch) {
        /* After a HelloRetryRequest the client repeats its hello (same
         * random, RFC 8446 4.1.2) in the clear; anything else is a TLS 1.2
         * renegotiation, whose new keys we cannot follow. */
        if (f->hrr && !encrypted)
            return 0;
        return fail_unexpected(f, HS_CLIENT_HELLO, " (a second one: renegotiation is not supported)");
    }
    if (rd_u16(&r, &version) < 0 || rd_bytes(&r, RANDOM_LEN, &random) < 0 ||
        rd_vec(&r, 1, &sid) < 0 || sid.n > SID_MAX)
        return fail(f, "bad ClientHello");
    memcpy(f->crand, random, RANDOM_LEN);
    memcpy(f->ch_sid, sid.p, sid.n);
    f->ch_sid_len = sid.n;
    f->have_ch = 1;
    /* The extensions only tell whether 0-RTT data follows; a hello we
     * cannot fully parse is still used for its random. */
    if (rd_vec(&r, 2, &offered) == 0 && rd_vec(&r, 1, &comp) == 0 && rd_vec(&r, 2, &exts) == 0)
        (void)parse_extensions(f, &exts, 0, NULL);
    return 0;
}

static int on_server_hello(yb_tls_flow *f, const uint8_t *b, size_t n, int encrypted)
{
    struct rd r = { b, n }, sid, exts = { NULL, 0 };
    const uint8_t *random;
    unsigned legacy, suite, comp, version = 0;

    if (encrypted || f->have_sh)
        return fail_unexpected(f, HS_SERVER_HELLO, encrypted ? " (encrypted)" : " (a second one)");
    if (rd_u16(&r, &legacy) < 0 || rd_bytes(&r, RANDOM_LEN, &random) < 0 ||
        rd_vec(&r, 1, &sid) < 0 || sid.n > SID_MAX || rd_u16(&r, &suite) < 0 ||
        rd_u8(&r, &comp) < 0 ||
        (r.n > 0 && (rd_vec(&r, 2, &exts) < 0 || r.n != 0)) ||
        parse_extensions(f, &exts, 1, &version) < 0)
        return fail(f, "bad ServerHello");
    if (version == 0)
        version = legacy;
    if (version != TLS12 && version != TLS13)
        return fail(f, "unsupported TLS version 0x%04x (%s)", version, version_name(version));
    if (comp != 0)
        return fail(f, "unsupported compression method %u", comp);
    f->suite = find_suite((uint16_t)suite, (uint16_t)version);
    if (f->suite == NULL) {
        char name[80];

        suite_name(suite, name, sizeof name);
        return fail(f, "unsupported cipher suite 0x%04x (%s)", suite, name);
    }
    f->version = (uint16_t)version;
    if (version == TLS13 && memcmp(random, hrr_random, RANDOM_LEN) == 0) {
        f->hrr = 1; /* the real ServerHello follows the client's second hello */
        return 0;
    }
    memcpy(f->srand, random, RANDOM_LEN);
    memcpy(f->sh_sid, sid.p, sid.n);
    f->sh_sid_len = sid.n;
    f->have_sh = 1;
    if (version != TLS12)
        transcript_end(f);
    return version == TLS12 ? tls12_master_at_hello(f) : derive_keys(f);
}

/* A client's EncryptedExtensions (BoringSSL and Chromium send one with
 * ALPS, application settings, extensions 17513 / 17613, when the server
 * negotiated it): its place is the client's handshake flight, under the
 * handshake keys, once.  Nothing in it changes the keys or the protocol,
 * so it is checked for shape and skipped. */
static int on_client_ee(yb_tls_flow *f, const struct dirst *s, const uint8_t *b, size_t n)
{
    struct rd r = { b, n }, exts;

    if (s->phase != 1 || f->client_ee_seen)
        return fail_unexpected(f, HS_ENCRYPTED_EXTENSIONS,
                               s->phase != 1 ? " from the client after its Finished"
                                             : " from the client (a second one)");
    if (rd_vec(&r, 2, &exts) < 0 || r.n != 0)
        return fail(f, "bad EncryptedExtensions from the client");
    while (exts.n > 0) {
        unsigned type;
        struct rd body;

        if (rd_u16(&exts, &type) < 0 || rd_vec(&exts, 2, &body) < 0)
            return fail(f, "bad EncryptedExtensions from the client");
    }
    f->client_ee_seen = 1;
    return 0;
}

/* A complete handshake message; body is NULL for the types not kept. */
static int on_handshake(yb_tls_flow *f, int dir, unsigned type, const uint8_t *body,
                        size_t n, int encrypted)
{
    struct dirst *s = &f->d[dir];

    switch (type) {
    case HS_CLIENT_HELLO:
        if (dir != 0)
            return fail_unexpected(f, type, " from the server");
        return on_client_hello(f, body, n, encrypted);
    case HS_SERVER_HELLO:
        if (dir != 1)
            return fail_unexpected(f, type, " from the client");
        return on_server_hello(f, body, n, encrypted);
    case HS_ENCRYPTED_EXTENSIONS: {
        struct rd r = { body, n }, exts;

        if (f->version != TLS13)
            return fail_unexpected(f, type, dir == 0 ? " from the client in TLS 1.2"
                                                     : " in TLS 1.2");
        if (!encrypted)
            return fail_unexpected(f, type, " in the clear");
        if (dir == 0)
            return on_client_ee(f, s, body, n);
        if (f->ee_seen || rd_vec(&r, 2, &exts) < 0 || r.n != 0 ||
            parse_extensions(f, &exts, 1, NULL) < 0)
            return fail(f, "bad EncryptedExtensions");
        f->ee_seen = 1;
        return f->ch_early ? start_early(f) : 0;
    }
    case HS_END_OF_EARLY_DATA:
        if (dir != 0 || !s->early)
            return fail_unexpected(f, type, "");
        s->rekey = REKEY_END_EARLY;
        return 0;
    case HS_FINISHED:
        /* TLS 1.3: the side's handshake keys end with its Finished.  A
         * Finished under application keys is post-handshake client
         * authentication and changes nothing. */
        if (f->version == TLS13 && s->phase == 1)
            s->rekey = REKEY_FINISHED;
        return 0;
    case HS_KEY_UPDATE:
        if (f->version != TLS13 || s->phase != 2 || n != 1 || body[0] > 1)
            return fail(f, "bad KeyUpdate");
        s->rekey = REKEY_UPDATE;
        return 0;
    case HS_CERTIFICATE:
        return body != NULL ? on_server_certificate(f, body, n) : 0;
    case HS_SERVER_HELLO_DONE:
        if (dir == 1)
            f->s_flight_done = 1;
        return 0;
    case HS_CLIENT_KEY_EXCHANGE:
        if (dir != 0)
            return fail_unexpected(f, type, " from the server");
        return body != NULL ? on_client_key_exchange(f, body, n) : 0;
    case HS_NEW_SESSION_TICKET:
        return body != NULL ? on_tls12_ticket(f, body, n) : 0;
    default:
        return 0; /* certificates, tickets, key exchange: not needed */
    }
}

/* Whether the body of a handshake message is kept for on_handshake. */
static int keep_type(const yb_tls_flow *f, int dir, unsigned type)
{
    if (type == HS_CLIENT_HELLO || type == HS_SERVER_HELLO ||
        type == HS_ENCRYPTED_EXTENSIONS || type == HS_KEY_UPDATE)
        return 1;
    if (f->version != TLS12)
        return 0;
    /* TLS 1.2 RSA key exchange: the server's certificate picks the key,
     * the ClientKeyExchange holds the pre-master secret. */
    if (f->rsa_pending)
        return (type == HS_CERTIFICATE && dir == 1 && !f->cert_seen) ||
               (type == HS_CLIENT_KEY_EXCHANGE && dir == 0);
    return type == HS_NEW_SESSION_TICKET && dir == 1 && f->store != NULL;
}

/* The handshake transcript, as long as an extended master secret may
 * need it (up to the ClientKeyExchange). */
static void transcript_add(yb_tls_flow *f, const uint8_t *p, size_t n)
{
    for (int i = 0; i < 2; i++)
        if (f->transcript[i] != NULL && n > 0 && EVP_DigestUpdate(f->transcript[i], p, n) <= 0) {
            EVP_MD_CTX_free(f->transcript[i]);
            f->transcript[i] = NULL;
        }
}

/* Handshake bytes of one record: messages may span records and a record
 * may hold several. */
static int handshake_bytes(yb_tls_flow *f, int dir, const uint8_t *p, size_t n, int encrypted)
{
    struct dirst *s = &f->d[dir];
    size_t off = 0;

    while (off < n) {
        size_t take;

        /* RFC 8446 5.1: handshake messages must not span a key change. */
        if (s->rekey != REKEY_NONE)
            return fail(f, "bad handshake: data after key change");
        if (s->hs_hdr_have < 4) {
            take = 4 - s->hs_hdr_have;
            if (take > n - off)
                take = n - off;
            memcpy(s->hs_hdr + s->hs_hdr_have, p + off, take);
            s->hs_hdr_have += take;
            off += take;
            if (s->hs_hdr_have < 4)
                break;
            /* Each side starts with its hello; anything else means the
             * capture began after the handshake (TLS 1.2 Finished records
             * also say "handshake" on the outside). */
            if ((dir == 0 && !f->have_ch && s->hs_hdr[0] != HS_CLIENT_HELLO) ||
                (dir == 1 && !f->have_sh && !f->hrr && s->hs_hdr[0] != HS_SERVER_HELLO))
                return fail(f, "no handshake captured");
            s->hs_need = (size_t)s->hs_hdr[1] << 16 | (size_t)s->hs_hdr[2] << 8 | s->hs_hdr[3];
            s->hs_have = 0;
            s->hs_keep = keep_type(f, dir, s->hs_hdr[0]);
            transcript_add(f, s->hs_hdr, 4);
            if (s->hs_keep) {
                if (s->hs_need > YB_TLS_HS_MAX)
                    return fail(f, "handshake message too large");
                if (s->hs_need > s->hs_cap) {
                    uint8_t *nb = realloc(s->hs_body, s->hs_need);

                    if (nb == NULL)
                        return fail(f, "out of memory");
                    s->hs_body = nb;
                    s->hs_cap = s->hs_need;
                }
            }
        }
        take = s->hs_need - s->hs_have;
        if (take > n - off)
            take = n - off;
        if (s->hs_keep && take > 0)
            memcpy(s->hs_body + s->hs_have, p + off, take);
        transcript_add(f, p + off, take);
        s->hs_have += take;
        off += take;
        if (s->hs_have == s->hs_need) {
            s->hs_hdr_have = 0;
            if (on_handshake(f, dir, s->hs_hdr[0], s->hs_keep ? s->hs_body : NULL,
                             s->hs_need, encrypted) < 0)
                return -1;
        }
    }
    return 0;
}

/* ---- records ------------------------------------------------------------------ */

/* AEAD open; out receives ctlen bytes.  Returns 0 or -1 (tag mismatch). */
static int aead_open(EVP_CIPHER_CTX *c, const uint8_t nonce[NONCE_LEN], const uint8_t *aad,
                     size_t aadlen, const uint8_t *ct, size_t ctlen, const uint8_t *tag,
                     uint8_t *out)
{
    int outl = 0, finl = 0;

    if (!EVP_DecryptInit_ex2(c, NULL, NULL, nonce, NULL) ||
        !EVP_DecryptUpdate(c, NULL, &outl, aad, (int)aadlen) ||
        (ctlen > 0 && !EVP_DecryptUpdate(c, out, &outl, ct, (int)ctlen)) ||
        !EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, TAG_LEN, (void *)tag) ||
        EVP_DecryptFinal_ex(c, out + outl, &finl) <= 0)
        return -1;
    return 0;
}

/* The 13 bytes TLS 1.2 puts in front of what it MACs (RFC 5246 6.2.3.1)
 * or authenticates (6.2.3.3): seq_num, type, version, length. */
static void tls12_seq_header(uint64_t seq, const uint8_t *hdr, size_t len, uint8_t out[13])
{
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)(seq >> (56 - 8 * i));
    out[8] = hdr[0];
    out[9] = hdr[1];
    out[10] = hdr[2];
    out[11] = (uint8_t)(len >> 8);
    out[12] = (uint8_t)len;
}

/* HMAC over the TLS 1.2 MAC input (RFC 5246 6.2.3.1): seq_num, type,
 * version, length (of what is MACed), then the bytes.  Returns 0 or -1. */
static int tls12_mac(const yb_tls_flow *f, const struct dirst *s, const uint8_t *hdr,
                     const uint8_t *p, size_t n, uint8_t out[MAC_MAX])
{
    const struct suite *su = f->suite;
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *mc = mac != NULL ? EVP_MAC_CTX_new(mac) : NULL;
    OSSL_PARAM params[2];
    uint8_t in[13];
    size_t outl = 0;
    int rc = -1;

    tls12_seq_header(s->seq, hdr, n, in);
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)su->mac_md, 0);
    params[1] = OSSL_PARAM_construct_end();
    if (mc != NULL && EVP_MAC_init(mc, s->mac_key, su->mac_len, params) > 0 &&
        EVP_MAC_update(mc, in, sizeof in) > 0 && EVP_MAC_update(mc, p, n) > 0 &&
        EVP_MAC_final(mc, out, &outl, MAC_MAX) > 0 && outl == su->mac_len)
        rc = 0;
    EVP_MAC_CTX_free(mc);
    EVP_MAC_free(mac);
    return rc;
}

/* TLS 1.2 CBC record (RFC 5246 6.2.3.2): IV, then the encrypted content,
 * MAC and padding; with encrypt-then-MAC (RFC 7366) the MAC follows the
 * IV and ciphertext and covers them.  Plaintext into f->pt.  Returns 0,
 * -1 (failed) or -2 when the record does not authenticate (MAC or
 * padding wrong). */
static int open_cbc(yb_tls_flow *f, int dir, const uint8_t *hdr, const uint8_t *frag,
                    size_t len, unsigned *type, size_t *ptlen)
{
    struct dirst *s = &f->d[dir];
    size_t ml = f->suite->mac_len, ctlen, n, pad;
    uint8_t mac[MAC_MAX];
    int outl = 0, finl = 0, rc = -2;

    ctlen = len - (f->etm ? ml : 0); /* IV + ciphertext */
    if (len < CBC_BLOCK + (f->etm ? ml : 0) + CBC_BLOCK || (ctlen - CBC_BLOCK) % CBC_BLOCK != 0)
        return fail(f, "bad record: not a CBC record of this suite");
    if (f->etm && (tls12_mac(f, s, hdr, frag, ctlen, mac) < 0 ||
                   CRYPTO_memcmp(mac, frag + ctlen, ml) != 0))
        return -2;
    n = ctlen - CBC_BLOCK;
    if (!EVP_DecryptInit_ex2(s->cctx, NULL, NULL, frag, NULL) ||
        !EVP_CIPHER_CTX_set_padding(s->cctx, 0) ||
        !EVP_DecryptUpdate(s->cctx, f->pt, &outl, frag + CBC_BLOCK, (int)n) ||
        !EVP_DecryptFinal_ex(s->cctx, f->pt + outl, &finl) || (size_t)(outl + finl) != n)
        return fail(f, "cannot decrypt with %s", f->suite->cipher);
    /* padding: pad+1 bytes, each of value pad */
    pad = f->pt[n - 1];
    if (pad + 1 + (f->etm ? 0 : ml) > n)
        goto out;
    for (size_t i = n - 1 - pad; i < n - 1; i++)
        if (f->pt[i] != pad)
            goto out;
    n -= pad + 1;
    if (!f->etm) {
        n -= ml;
        if (tls12_mac(f, s, hdr, f->pt, n, mac) < 0 || CRYPTO_memcmp(mac, f->pt + n, ml) != 0)
            goto out;
    }
    s->seq++;
    *type = hdr[0];
    *ptlen = n;
    rc = 0;
out:
    OPENSSL_cleanse(mac, sizeof mac);
    return rc;
}

/* Decrypts one protected record into f->pt; sets its real content type
 * and plaintext length.  Returns 0, -1 (failed, status set) or -2 when the
 * record does not authenticate (status not set). */
static int open_record(yb_tls_flow *f, int dir, const uint8_t *hdr, const uint8_t *frag,
                       size_t len, unsigned *type, size_t *ptlen)
{
    struct dirst *s = &f->d[dir];
    const struct suite *su = f->suite;
    uint8_t nonce[NONCE_LEN], aad[13];
    const uint8_t *ct = frag;
    size_t ctlen, aadlen;

    if (su->mac_md != NULL)
        return open_cbc(f, dir, hdr, frag, len, type, ptlen);
    if (len < (size_t)su->explicit_nonce + TAG_LEN + (f->version == TLS13))
        return fail(f, "bad record: too short");
    memcpy(nonce, s->iv, NONCE_LEN);
    if (su->explicit_nonce) {
        /* RFC 5288 3: nonce = salt (4, from the key block) + explicit (8,
         * first bytes of the record). */
        memcpy(nonce + su->fixed_iv, frag, su->explicit_nonce);
        ct += su->explicit_nonce;
    } else {
        /* RFC 7905 2 / RFC 8446 5.3: nonce = iv XOR padded seq. */
        for (int i = 0; i < 8; i++)
            nonce[NONCE_LEN - 1 - i] ^= (uint8_t)(s->seq >> (8 * i));
    }
    ctlen = len - su->explicit_nonce - TAG_LEN;
    if (f->version == TLS12) {
        /* RFC 5246 6.2.3.3: of the plaintext's length */
        tls12_seq_header(s->seq, hdr, ctlen, aad);
        aadlen = 13;
    } else {
        memcpy(aad, hdr, REC_HDR); /* RFC 8446 5.2: the record header */
        aadlen = REC_HDR;
    }
    if (aead_open(s->cctx, nonce, aad, aadlen, ct, ctlen, ct + ctlen, f->pt) < 0)
        return -2; /* the caller decides: skipped 0-RTT or "bad record mac" */
    s->seq++;
    if (f->version == TLS12) {
        *type = hdr[0];
        *ptlen = ctlen;
        return 0;
    }
    /* RFC 8446 5.4: content, real type, zero padding. */
    while (ctlen > 0 && f->pt[ctlen - 1] == 0)
        ctlen--;
    if (ctlen == 0)
        return fail(f, "bad record: no content type");
    *type = f->pt[ctlen - 1];
    *ptlen = ctlen - 1;
    return 0;
}

static int process_record(yb_tls_flow *f, int dir, const uint8_t *hdr, const uint8_t *frag,
                          size_t len)
{
    struct dirst *s = &f->d[dir];
    unsigned type = hdr[0];
    const uint8_t *data = frag;
    int encrypted = 0;

    /* A stream whose first record is not handshake began after the
     * handshake (or is not TLS): its keys can never be found. */
    if (s->records++ == 0 && type != CT_HANDSHAKE && !(dir == 1 && type == CT_ALERT))
        return fail(f, "no handshake captured");
    if (s->encrypted && (f->version == TLS12 || type == CT_APPDATA)) {
        int rc = open_record(f, dir, hdr, frag, len, &type, &len);

        if (rc == -2 && s->skip_early && s->opened == 0 && s->skipped + len <= EARLY_SKIP_MAX) {
            s->skipped += len;
            return 0;
        }
        if (rc == -2 && s->hs_hdr_have == 4) {
            /* A handshake message whose length runs past what its side
             * sent before the keys changed: the key change it would have
             * made never happened. */
            const char *n = hs_name(s->hs_hdr[0]);
            char num[16];

            snprintf(num, sizeof num, "of type %u", s->hs_hdr[0]);
            return fail(f, "bad record mac after an incomplete handshake message %s"
                        " (%zu of %zu bytes)", n ? n : num, s->hs_have, s->hs_need);
        }
        if (rc == -2)
            return fail(f, "bad record mac");
        if (rc < 0)
            return -1;
        data = f->pt;
        encrypted = 1;
        s->opened++;
    }
    switch (type) {
    case CT_CCS:
        /* TLS 1.3 sends it only for middlebox compatibility, in the clear
         * (RFC 8446 5); TLS 1.2 turns this side's protection on. */
        if (f->version == TLS13 && !encrypted)
            return 0;
        if (f->version != TLS12 || encrypted || !f->keys_ready || len != 1 || data[0] != 1)
            return fail(f, "unexpected ChangeCipherSpec");
        if (s->hs_hdr_have != 0)
            return fail(f, "bad handshake: message spans ChangeCipherSpec");
        s->encrypted = 1;
        s->seq = 0;
        return 0;
    case CT_ALERT:
        /* An alert in the clear means the handshake failed: nothing of this
         * connection will ever be decryptable.  Protected alerts
         * (close_notify, ...) end the connection normally. */
        if (!encrypted && len >= 2 && data[0] == 2)
            return fail(f, "handshake failed: alert %u (%s)", data[1],
                        SSL_alert_desc_string_long(data[1]));
        return 0;
    case CT_HANDSHAKE:
        /* In TLS 1.3 only the client's second hello after a
         * HelloRetryRequest is in the clear once keys exist. */
        if (f->version == TLS13 && s->encrypted && !encrypted &&
            !(dir == 0 && f->hrr && s->opened == 0))
            return fail(f, "unexpected plaintext handshake");
        if (handshake_bytes(f, dir, data, len, encrypted) < 0)
            return -1;
        if (s->rekey != REKEY_NONE) {
            if (s->hs_hdr_have != 0)
                return fail(f, "bad handshake: data after key change");
            return apply_rekey(f, dir);
        }
        return 0;
    case CT_APPDATA:
        if (!encrypted)
            return fail(f, f->keys_ready ? "unexpected plaintext application data"
                                         : "no handshake captured");
        if (len > 0 && f->cb != NULL)
            f->cb(f->ud, dir, data, len);
        return 0;
    default:
        return fail(f, "bad record: content type %u", type);
    }
}

/* A direction waits while the state its next record needs is missing. */
static int blocked(const yb_tls_flow *f, int dir)
{
    /* TLS 1.2 RSA key exchange: the transcript needs the server's flight
     * before the client's second one, and the server's records after its
     * flight need the keys the ClientKeyExchange gives. */
    if (dir == 1)
        return !f->have_ch || (f->rsa_pending && f->s_flight_done);
    /* With 0-RTT offered, the client's records are read only once the
     * EncryptedExtensions said whether the server took them. */
    return f->have_ch &&
           (!f->have_sh || (f->version == TLS13 && f->ch_early && !f->ee_seen) ||
            (f->rsa_pending && !f->s_flight_done));
}

/* Returns 1 after consuming a record, 0 when the direction needs more
 * bytes or waits for the other one, -1 on failure. */
static int step(yb_tls_flow *f, int dir)
{
    struct dirst *s = &f->d[dir];
    size_t avail = s->qlen - s->qoff, len;
    const uint8_t *p;
    int rc;

    if (avail < REC_HDR)
        return 0;
    p = s->q + s->qoff; /* not before: q is NULL while nothing was queued */
    len = (size_t)p[3] << 8 | p[4];
    if (p[0] < CT_CCS || p[0] > CT_APPDATA || p[1] != 3 || p[2] > 4 || len > REC_MAX)
        return fail(f, s->records == 0 ? "no handshake captured" : "bad record header");
    /* Said early so that a server stream captured without its start does
     * not sit in the queue waiting for a ClientHello. */
    if (s->records == 0 && p[0] != CT_HANDSHAKE && !(dir == 1 && p[0] == CT_ALERT))
        return fail(f, "no handshake captured");
    if (avail < REC_HDR + len || blocked(f, dir))
        return 0;
    rc = process_record(f, dir, p, p + REC_HDR, len);
    s->qoff += REC_HDR + len;
    if (s->qoff == s->qlen)
        s->qoff = s->qlen = 0;
    return rc < 0 ? -1 : 1;
}

static int pump(yb_tls_flow *f)
{
    int progress;

    do {
        progress = 0;
        for (int dir = 0; dir < 2; dir++) {
            int rc;

            while ((rc = step(f, dir)) > 0)
                progress = 1;
            if (rc < 0)
                return -1;
        }
    } while (progress);
    return 0;
}

/* Appends n bytes; the caller keeps pending + n <= YB_TLS_PENDING_MAX. */
static int queue_append(yb_tls_flow *f, struct dirst *s, const uint8_t *p, size_t n)
{
    size_t pending = s->qlen - s->qoff;

    if (s->qlen + n > s->qcap && s->qoff > 0) {
        memmove(s->q, s->q + s->qoff, pending);
        s->qoff = 0;
        s->qlen = pending;
    }
    if (s->qlen + n > s->qcap) {
        size_t ncap = s->qcap ? s->qcap : 32 * 1024;
        uint8_t *nq;

        while (ncap < s->qlen + n)
            ncap *= 2;
        if (ncap > YB_TLS_PENDING_MAX)
            ncap = YB_TLS_PENDING_MAX;
        nq = realloc(s->q, ncap);
        if (nq == NULL)
            return fail(f, "out of memory");
        s->q = nq;
        s->qcap = ncap;
    }
    memcpy(s->q + s->qlen, p, n);
    s->qlen += n;
    return 0;
}

yb_tls_flow *yb_tls_flow_new(const yb_keylog *k)
{
    yb_tls_flow *f = calloc(1, sizeof *f);

    if (f == NULL)
        return NULL;
    f->kl = k;
    snprintf(f->status, sizeof f->status, "awaiting handshake");
    return f;
}

void yb_tls_flow_set_store(yb_tls_flow *f, yb_tls_store *st)
{
    if (f == NULL)
        return;
    f->store = st;
    /* The extended master secret of an RSA key exchange hashes the
     * handshake; with no server key nothing needs it. */
    if (yb_tls_store_server_keys(st) > 0 && f->transcript[0] == NULL) {
        f->transcript[0] = EVP_MD_CTX_new();
        f->transcript[1] = EVP_MD_CTX_new();
        if (f->transcript[0] == NULL || f->transcript[1] == NULL ||
            EVP_DigestInit_ex(f->transcript[0], EVP_sha256(), NULL) <= 0 ||
            EVP_DigestInit_ex(f->transcript[1], EVP_sha384(), NULL) <= 0)
            transcript_end(f);
    }
}

int yb_tls_flow_feed(yb_tls_flow *f, int dir, const uint8_t *data, size_t len,
                     void (*cb)(void *ud, int dir, const uint8_t *d, size_t n), void *ud)
{
    struct dirst *s;

    if (f == NULL)
        return -1;
    if (f->failed)
        return -1;
    if ((dir != 0 && dir != 1) || (data == NULL && len > 0))
        return fail(f, "bad arguments");
    s = &f->d[dir];
    f->cb = cb;
    f->ud = ud;
    /* Bytes go in by the room left, so one large call works like many
     * small ones; only a direction that waits can fill its queue. */
    while (len > 0) {
        size_t room = YB_TLS_PENDING_MAX - (s->qlen - s->qoff);
        size_t n = len < room ? len : room;

        if (n == 0)
            return fail(f, "too much data buffered (%s side ahead of the handshake)",
                        dir == 0 ? "client" : "server");
        if (queue_append(f, s, data, n) < 0 || pump(f) < 0)
            return -1;
        data += n;
        len -= n;
    }
    return 0;
}

int yb_tls_flow_finish(yb_tls_flow *f)
{
    if (f == NULL)
        return -1;
    if (!f->failed && !f->keys_ready)
        fail(f, !f->have_ch   ? "no ClientHello captured"
                : !f->have_sh ? "the connection ended before the ServerHello"
                              : "the connection ended during the handshake");
    return f->failed ? -1 : 0;
}

int yb_tls_flow_client_random(const yb_tls_flow *f, uint8_t out[32])
{
    if (f == NULL || !f->have_ch)
        return 0;
    memcpy(out, f->crand, RANDOM_LEN);
    return 1;
}

const char *yb_tls_flow_status(const yb_tls_flow *f)
{
    return f != NULL ? f->status : "no flow";
}

int yb_tls_flow_resumed(const yb_tls_flow *f)
{
    return f != NULL && f->version == TLS12 && f->resumed && f->keys_ready;
}

const char *yb_tls_flow_alpn(const yb_tls_flow *f)
{
    return f != NULL ? f->alpn : "";
}

int yb_tls_flow_is_tls(const uint8_t *b, size_t len)
{
    size_t reclen;

    if (b == NULL || len < 6)
        return 0;
    reclen = (size_t)b[3] << 8 | b[4];
    if (b[0] != CT_HANDSHAKE || b[1] != 3 || b[2] > 4 || reclen < 4 || reclen > 16384 ||
        b[5] != HS_CLIENT_HELLO)
        return 0;
    /* client_version major byte, when present */
    if (len >= 10 && b[9] != 3)
        return 0;
    return 1;
}

void yb_tls_flow_free(yb_tls_flow *f)
{
    if (f == NULL)
        return;
    for (int i = 0; i < 2; i++) {
        struct dirst *s = &f->d[i];

        EVP_CIPHER_CTX_free(s->cctx);
        free(s->q);
        free(s->hs_body);
    }
    EVP_CIPHER_free(f->cipher);
    transcript_end(f);
    OPENSSL_cleanse(f, sizeof *f);
    free(f);
}
