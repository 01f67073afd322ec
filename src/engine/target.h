/* A --target: a URL parsed and its host resolved, once, before the run.
 * Sessions connect to its address; codecs send its authority. */
#ifndef YB_TARGET_H
#define YB_TARGET_H

#include <stddef.h>
#include <netinet/in.h>
#include <sys/socket.h>

#define YB_TARGET_MAX_NAME 255 /* bytes of a TLS server name */

typedef struct {
    char scheme[8];           /* http, https, grpc, grpcs */
    char host[256];           /* without brackets */
    unsigned port;
    int tls;                  /* https / grpcs */
    char authority[264];      /* host[:port] as sent in Host / :authority:
                               * "[" host "]:" 5 digits */
    const char *servername;   /* TLS: SNI and the name the certificate is
                               * verified against (NULL = host); the
                               * caller's (argv, an inventory), at most
                               * YB_TARGET_MAX_NAME bytes, outliving t */
    union {                   /* where sessions connect (IPv4 or IPv6: a
                               * sockaddr_storage is 100 bytes more a target) */
        struct sockaddr sa;
        struct sockaddr_in in;
        struct sockaddr_in6 in6;
    } addr;
    socklen_t addrlen;
} yb_target;

/* Parses URL and resolves its host (numeric or by name).  Returns 0 or -1
 * with a message in err. */
int yb_target_parse(const char *url, yb_target *t, char *err, size_t errlen);
/* The same without resolving (t->addr stays empty): the syntax check of a
 * URL read before the run, e.g. from an inventory.  The message in err
 * starts with "--target 'URL': ". */
int yb_target_parse_url(const char *url, yb_target *t, char *err, size_t errlen);
/* yb_target_parse, dialling another address when connect_to (curl's
 * --connect-to HOST:PORT:ADDR:PORT; an empty HOST or PORT matches any, an
 * empty ADDR or PORT keeps the URL's; IPv6 in brackets) matches the URL's
 * host and port: the URL's name still goes in Host / :authority, SNI and
 * certificate verification.  A connect_to that does not match the URL is
 * an error (it would be ignored).  connect_to NULL = none. */
int yb_target_parse_via(const char *url, const char *connect_to, yb_target *t, char *err,
                        size_t errlen);
/* Whether connect_to (as for yb_target_parse_via) matches t's host and
 * port (t parsed, e.g. by yb_target_parse_url).  Returns 1 when it does, 0
 * when not, or -1 with a message in err when connect_to is malformed. */
int yb_target_connect_to_matches(const char *connect_to, const yb_target *t, char *err,
                                 size_t errlen);
/* The name TLS sends as SNI and verifies the certificate against. */
const char *yb_target_servername(const yb_target *t);

#endif
