/* TLS decryption for `yangblast capture`: turns the two reassembled TCP
 * byte streams of one TLS connection back into the application bytes,
 * using the session secrets an endpoint logged in NSS key log format
 * (SSLKEYLOGFILE, or a pcapng Decryption Secrets Block).
 *
 * Supported: TLS 1.2 suites with AES-128/256-GCM, ChaCha20-Poly1305 and
 * AES-128/256-CBC (HMAC-SHA1/256/384, MAC-then-encrypt or encrypt-then-MAC,
 * RFC 7366), the master secret from the key log or, for RSA key exchange,
 * from the ClientKeyExchange and the server's private key (extended master
 * secret, RFC 7627, included); TLS 1.2 resumption (session ID or ticket)
 * of a session an earlier flow of the capture set up (yb_tls_store); and
 * TLS 1.3 with TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384 and
 * TLS_CHACHA20_POLY1305_SHA256, including HelloRetryRequest, KeyUpdate,
 * 0-RTT early data (accepted: decrypted with CLIENT_EARLY_TRAFFIC_SECRET;
 * rejected: skipped, as the server did), mutual TLS (in the handshake or
 * post-handshake), NewSessionTicket, and the client EncryptedExtensions
 * (ALPS) that BoringSSL/Chromium clients send before their Finished.
 * Not supported: CCM/3DES/stream suites, TLS <= 1.1, TLS 1.2
 * renegotiation, SSLv2-format hellos, ECH.
 *
 * All crypto (TLS 1.2 PRF, HKDF-Expand-Label, AEAD) is OpenSSL 3's; this
 * module only parses records and handshake messages, with bounds checks,
 * and every buffer it keeps is capped (see the limits below). */
#ifndef YB_TLS_DECRYPT_H
#define YB_TLS_DECRYPT_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of one direction held while that direction waits for the other
 * (e.g. server bytes fed before the ClientHello was seen).  A direction
 * that needs more than this fails the flow ("too much data buffered"). */
#define YB_TLS_PENDING_MAX (1024u * 1024u)
/* Largest handshake message whose body is kept for parsing (ClientHello,
 * ServerHello, EncryptedExtensions, KeyUpdate); others are skipped over
 * without being stored, whatever their size. */
#define YB_TLS_HS_MAX (64u * 1024u)
/* Sessions one key log may hold; lines beyond it make add/load fail. */
#define YB_KEYLOG_MAX_SESSIONS (1u << 20)

/* ---- key log ------------------------------------------------------------ */

typedef struct yb_keylog yb_keylog;

/* Returns an empty key log (caller frees with yb_keylog_free) or NULL
 * when out of memory. */
yb_keylog *yb_keylog_new(void);

/* Reads an NSS key log file.  Understood labels: CLIENT_RANDOM (TLS 1.2
 * master secret), CLIENT_HANDSHAKE_TRAFFIC_SECRET,
 * SERVER_HANDSHAKE_TRAFFIC_SECRET, CLIENT_TRAFFIC_SECRET_0,
 * SERVER_TRAFFIC_SECRET_0, CLIENT_EARLY_TRAFFIC_SECRET; other labels
 * (EXPORTER_SECRET, ...), comments and blank lines are skipped;
 * malformed lines (bad hex, wrong lengths, too long) are counted
 * (yb_keylog_malformed) and skipped.
 * Returns a key log (caller frees) or NULL with a message naming the
 * file in err when it cannot be opened or read, or memory runs out. */
yb_keylog *yb_keylog_load(const char *path, char *err, size_t errlen);

/* Adds the lines in text[0..len) (not NUL-terminated; LF or CRLF line
 * ends), e.g. the secrets of a pcapng Decryption Secrets Block, with the
 * same rules as yb_keylog_load.  A later secret for the same session and
 * label replaces the earlier one.  Returns 0, or -1 when k is NULL, memory
 * runs out or YB_KEYLOG_MAX_SESSIONS is reached (lines before that point
 * are kept).  text is only read. */
int yb_keylog_add_text(yb_keylog *k, const uint8_t *text, size_t len);

/* Returns the number of sessions (distinct client randoms) known. */
size_t yb_keylog_count(const yb_keylog *k);

/* Returns the number of malformed lines seen so far; when first_line is
 * not NULL it receives the 1-based number of the first one within the
 * file or text it came from (0 when none). */
size_t yb_keylog_malformed(const yb_keylog *k, size_t *first_line);

/* Frees k (NULL is fine).  Flows created from k must be freed first. */
void yb_keylog_free(yb_keylog *k);

/* ---- what the flows of one capture share ------------------------------- */

/* Server RSA private keys (TLS 1.2 RSA key exchange: the ClientKeyExchange
 * carries the pre-master secret encrypted to the server's key) and the
 * TLS 1.2 sessions learnt so far, by session ID and by ticket, so that a
 * connection resuming an earlier one of the same capture is decrypted
 * (whichever way the earlier one was: key log or server key). */
typedef struct yb_tls_store yb_tls_store;

/* Server keys one store holds. */
#define YB_TLS_MAX_SERVER_KEYS 16
/* Sessions remembered (a power of two); a newer session may replace an
 * older one whose ID hashes alike. */
#define YB_TLS_SESSION_CACHE (1u << 14)

/* Returns an empty store (caller frees with yb_tls_store_free) or NULL. */
yb_tls_store *yb_tls_store_new(void);

/* Adds the RSA private key in pem[0..len) (PEM, unencrypted; the caller
 * keeps and wipes its buffer).  name (e.g. the file) is only used in err.
 * Returns 0, or -1 with err (not PEM, encrypted, not RSA, too many keys);
 * the message never contains key material. */
int yb_tls_store_add_server_key(yb_tls_store *s, const uint8_t *pem, size_t len,
                                const char *name, char *err, size_t errlen);

/* Largest server key file read. */
#define YB_TLS_SERVER_KEY_MAX (64 * 1024)

/* Reads the PEM RSA private key file path into s.  The key is a secret: a
 * regular file that group or others may access is refused (chmod 600), as
 * ssh refuses such identity files; the bytes read are wiped.  Returns 0,
 * or -1 with err naming the file and what is wrong (never its contents). */
int yb_tls_store_load_server_key(yb_tls_store *s, const char *path, char *err, size_t errlen);

/* Adds src's server keys to dst (shared, not copied; src may be freed
 * first), not its sessions.  Returns 0, or -1 over YB_TLS_MAX_SERVER_KEYS. */
int yb_tls_store_copy_keys(yb_tls_store *dst, const yb_tls_store *src);

/* Returns the number of server keys / of sessions remembered so far. */
size_t yb_tls_store_server_keys(const yb_tls_store *s);
size_t yb_tls_store_sessions(const yb_tls_store *s);

/* Frees s (NULL is fine); flows using it must be freed first. */
void yb_tls_store_free(yb_tls_store *s);

/* ---- one connection ------------------------------------------------------ */

typedef struct yb_tls_flow yb_tls_flow;

/* Returns a flow for one TCP connection (caller frees with
 * yb_tls_flow_free) or NULL when out of memory.  The flow keeps a pointer
 * to k (not a copy): k must outlive the flow and must not be changed
 * while the flow is being fed.  k may be NULL (every flow then ends in
 * "no keys"). */
yb_tls_flow *yb_tls_flow_new(const yb_keylog *k);

/* Makes f use s (borrowed; must outlive f) for TLS 1.2 RSA key exchange
 * and resumption; call before the first feed. */
void yb_tls_flow_set_store(yb_tls_flow *f, yb_tls_store *s);

/* Feeds reassembled TCP payload of one direction (dir 0 = client->server,
 * 1 = server->client), in order; the two directions may be interleaved in
 * any order (a direction that runs ahead of the handshake is buffered, up
 * to YB_TLS_PENDING_MAX).  Decrypted application data is delivered through
 * cb(ud, dir, data, len) (cb may be NULL to discard it); data is only valid
 * during the call.  A call may deliver data of the other direction that had
 * been waiting; every delivered byte belongs to a record whose
 * authentication tag was verified.
 * Returns 0, or -1 when the flow cannot be decrypted (no keys, unsupported
 * suite, bad record, ...): yb_tls_flow_status then says why, and every
 * later call returns -1 at once.  Records decrypted before the failing one
 * in the same call have already been delivered. */
int yb_tls_flow_feed(yb_tls_flow *f, int dir, const uint8_t *data, size_t len,
                     void (*cb)(void *ud, int dir, const uint8_t *d, size_t n), void *ud);

/* The capture of the connection is over.  Returns 0 when the flow was
 * decrypting, -1 when it failed or never got its keys; the status then
 * says why ("no ClientHello captured", "the connection ended during the
 * handshake", ...). */
int yb_tls_flow_finish(yb_tls_flow *f);

/* Copies the client random into out and returns 1 once the ClientHello
 * was seen; returns 0 before. */
int yb_tls_flow_client_random(const yb_tls_flow *f, uint8_t out[32]);

/* Returns a NUL-terminated description of the state, owned by f:
 * "awaiting handshake", "decrypting", or why decryption stopped (each
 * names what it can): "no keys for this client random", "key log for the
 * client direction only (SERVER_HANDSHAKE_TRAFFIC_SECRET missing)",
 * "no handshake captured", "unsupported cipher suite 0xc0ac
 * (TLS_ECDHE_ECDSA_WITH_AES_128_CCM)", "unsupported TLS version 0x0302
 * (TLS 1.1)", "unexpected handshake message ServerHello (a second one)",
 * "handshake failed: alert 40 (handshake failure)", "bad record mac",
 * "bad record header", "too much data buffered", ...  Valid until the next
 * call on f. */
const char *yb_tls_flow_status(const yb_tls_flow *f);

/* Returns 1 when the connection resumed a TLS 1.2 session (abbreviated
 * handshake), else 0. */
int yb_tls_flow_resumed(const yb_tls_flow *f);

/* Returns the protocol the server chose by ALPN ("h2", "http/1.1", ...) or
 * "" when none was negotiated or it has not been seen yet.  Owned by f. */
const char *yb_tls_flow_alpn(const yb_tls_flow *f);

/* Returns 1 when the first bytes of a client->server stream look like a
 * TLS record carrying a ClientHello (needs at least 6 bytes), else 0. */
int yb_tls_flow_is_tls(const uint8_t *first_bytes, size_t len);

/* Frees f (NULL is fine). */
void yb_tls_flow_free(yb_tls_flow *f);

#endif
