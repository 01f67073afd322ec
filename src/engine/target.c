/* --target URL parsing and resolution. */
#include "config.h"
#include "engine/target.h"
#include "util/util.h"

#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* A URL with user-info (SCHEME://USER:PASSWORD@HOST) puts a secret on the
 * command line, where every user of the machine can read it: refused, and
 * the message shows the URL with the password masked, never the password.
 * Returns 0 when url has no user-info, else -1 with err set. */
static int refuse_userinfo(const char *url, const char *auth, char *err, size_t errlen)
{
    size_t alen = strcspn(auth, "/?#");
    const char *at = memchr(auth, '@', alen);
    if (!at)
        return 0;
    /* the user-info ends at the LAST '@' of the authority */
    for (const char *q = at + 1; q < auth + alen; q++)
        if (*q == '@')
            at = q;
    const char *colon = memchr(auth, ':', (size_t)(at - auth));
    const char *user_end = colon ? colon : at;
    return fail(err, errlen,
                "--target '%.*s%s%s': user-info in the URL is not accepted (it would put "
                "the password on the command line); give --user NAME and the password "
                "in YANGBLAST_PASSWORD or --password-file",
                (int)(user_end - url), url, colon ? ":***" : "", at);
}

int yb_target_parse_url(const char *url, yb_target *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    const char *p = strstr(url, "://");
    if (refuse_userinfo(url, p ? p + 3 : url, err, errlen) < 0)
        return -1;
    if (!p || p == url || (size_t)(p - url) >= sizeof t->scheme)
        return fail(err, errlen, "--target '%s': expected SCHEME://HOST[:PORT]", url);
    memcpy(t->scheme, url, (size_t)(p - url));
    unsigned defport;
    if (!strcmp(t->scheme, "http"))
        defport = 80;
    else if (!strcmp(t->scheme, "https"))
        defport = 443, t->tls = 1;
    else if (!strcmp(t->scheme, "grpc"))
        defport = 8080;
    else if (!strcmp(t->scheme, "grpcs"))
        defport = 8080, t->tls = 1;
    else
        return fail(err, errlen, "--target '%s': scheme must be http, https, grpc or grpcs", url);
    const char *h = p + 3, *hend, *rest;
    if (*h == '[') {
        hend = strchr(h, ']');
        if (!hend)
            return fail(err, errlen, "--target '%s': unterminated IPv6 literal", url);
        h++;
        rest = hend + 1;
    } else {
        hend = h + strcspn(h, ":/");
        rest = hend;
    }
    if (hend == h || (size_t)(hend - h) >= sizeof t->host)
        return fail(err, errlen, "--target '%s': missing or overlong host", url);
    memcpy(t->host, h, (size_t)(hend - h));
    t->port = defport;
    if (*rest == ':') {
        char port[8] = "";
        size_t n = strcspn(rest + 1, "/");
        uint64_t v;
        if (n == 0 || n >= sizeof port)
            return fail(err, errlen, "--target '%s': bad port", url);
        memcpy(port, rest + 1, n);
        if (yb_parse_u64(port, 1, 65535, &v) < 0)
            return fail(err, errlen, "--target '%s': bad port", url);
        t->port = (unsigned)v;
        rest += 1 + n;
    }
    if (*rest && *rest != '/')
        return fail(err, errlen, "--target '%s': unexpected '%s'", url, rest);
    if (*rest && strcmp(rest, "/")) /* would be ignored: records carry their own paths */
        return fail(err, errlen, "--target '%s': has a path ('%s'), but every record carries its "
                    "own path: give SCHEME://HOST[:PORT]", url, rest);
    int v6 = strchr(t->host, ':') != NULL;
    if (t->port == defport && (!strcmp(t->scheme, "http") || !strcmp(t->scheme, "https")))
        snprintf(t->authority, sizeof t->authority, v6 ? "[%s]" : "%s", t->host);
    else
        snprintf(t->authority, sizeof t->authority, v6 ? "[%s]:%u" : "%s:%u", t->host, t->port);
    return 0;
}

/* One field of a --connect-to spec at *p: an IPv6 literal in brackets or
 * up to the next ':' (the last field: to the end).  Copies it (without
 * brackets) into out.  Returns 0, or -1 when malformed or too long. */
static int spec_field(const char **p, int last, char *out, size_t cap)
{
    const char *s = *p, *e;
    size_t n;
    if (*s == '[') {
        e = strchr(s, ']');
        if (!e)
            return -1;
        n = (size_t)(e - s - 1);
        if (n >= cap)
            return -1;
        memcpy(out, s + 1, n);
        e++;
    } else {
        e = last ? s + strlen(s) : strchr(s, ':');
        if (!e)
            return -1;
        n = (size_t)(e - s);
        if (n >= cap)
            return -1;
        memcpy(out, s, n);
    }
    out[n] = 0;
    if (last ? *e != 0 : *e != ':')
        return -1;
    *p = last ? e : e + 1;
    return 0;
}

/* A port field: 0 when empty (matches any, or keeps the URL's), the port,
 * or -1 when not a port. */
static long spec_port(const char *f)
{
    uint64_t v;
    if (!*f)
        return 0;
    return yb_parse_u64(f, 1, 65535, &v) == 0 ? (long)v : -1;
}

/* Resolves host:port into t's address; `what` names the option in err.
 * Returns 0 or -1 with err. */
static int resolve(yb_target *t, const char *what, const char *host, unsigned port, char *err,
                   size_t errlen)
{
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    char ps[8];
    snprintf(ps, sizeof ps, "%u", port);
    int rc = getaddrinfo(host, ps, &hints, &ai);
    if (rc || !ai)
        return fail(err, errlen, "%s: cannot resolve '%s': %s", what, host, gai_strerror(rc));
    if (ai->ai_addrlen > sizeof t->addr) { /* SOCK_STREAM: IPv4 or IPv6 only */
        freeaddrinfo(ai);
        return fail(err, errlen, "%s: '%s': not an IPv4 or IPv6 address", what, host);
    }
    memcpy(&t->addr, ai->ai_addr, ai->ai_addrlen);
    t->addrlen = ai->ai_addrlen;
    freeaddrinfo(ai);
    return 0;
}

int yb_target_parse(const char *url, yb_target *t, char *err, size_t errlen)
{
    return yb_target_parse_via(url, NULL, t, err, errlen);
}

const char *yb_target_servername(const yb_target *t)
{
    return t->servername ? t->servername : t->host;
}

/* A --connect-to spec, parsed: h1:p1 to match, h2:p2 to dial ("" / 0 =
 * any, or the URL's). */
typedef struct {
    char h1[256], h2[256];
    long p1, p2;
} connect_spec;

static int spec_parse(const char *connect_to, connect_spec *c, char *err, size_t errlen)
{
    char p1[8], p2[8];
    const char *q = connect_to;
    if (spec_field(&q, 0, c->h1, sizeof c->h1) < 0 || spec_field(&q, 0, p1, sizeof p1) < 0 ||
        spec_field(&q, 0, c->h2, sizeof c->h2) < 0 || spec_field(&q, 1, p2, sizeof p2) < 0 ||
        (c->p1 = spec_port(p1)) < 0 || (c->p2 = spec_port(p2)) < 0)
        return fail(err, errlen, "--connect-to '%s': expected HOST:PORT:ADDR:PORT (any may be "
                    "empty; IPv6 in brackets)", connect_to);
    return 0;
}

static int spec_matches(const connect_spec *c, const yb_target *t)
{
    return !(*c->h1 && strcasecmp(c->h1, t->host)) && !(c->p1 && (unsigned)c->p1 != t->port);
}

int yb_target_connect_to_matches(const char *connect_to, const yb_target *t, char *err,
                                 size_t errlen)
{
    connect_spec c;
    if (spec_parse(connect_to, &c, err, errlen) < 0)
        return -1;
    return spec_matches(&c, t);
}

int yb_target_parse_via(const char *url, const char *connect_to, yb_target *t, char *err,
                        size_t errlen)
{
    char what[300];
    if (yb_target_parse_url(url, t, err, errlen) < 0)
        return -1;
    if (!connect_to) {
        snprintf(what, sizeof what, "--target '%s'", url);
        return resolve(t, what, t->host, t->port, err, errlen);
    }
    connect_spec c;
    if (spec_parse(connect_to, &c, err, errlen) < 0)
        return -1;
    if (!spec_matches(&c, t))
        return fail(err, errlen, "--connect-to '%s' does not match the target %s:%u (it would "
                    "be ignored)", connect_to, t->host, t->port);
    snprintf(what, sizeof what, "--connect-to '%s'", connect_to);
    return resolve(t, what, *c.h2 ? c.h2 : t->host, c.p2 ? (unsigned)c.p2 : t->port, err,
                   errlen);
}
