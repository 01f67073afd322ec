/* Credential redaction.
 *
 * Captures of management traffic carry passwords: HTTP Basic/Bearer
 * credentials, API keys and tokens, session cookies, and gNMI's per-RPC
 * authorization, username/password metadata.  A corpus is meant to be
 * shared and replayed with the replayer's own credentials, so their values
 * are replaced by default, with the names the user adds (--redact). */
#include "config.h"
#include "capture/capture_priv.h"

#include <string.h>
#include <strings.h>

#define PLACEHOLDER YB_CORPUS_REDACTED

typedef struct {
    const char *name;
    size_t len;
} hname;
#define H(s) {s, sizeof s - 1}

/* HTTP headers, and gRPC metadata (HTTP/2 headers too): "authorization"
 * is also where gNMI servers take a bearer token. */
static const hname ALWAYS[] = {H("authorization"), H("proxy-authorization"), H("cookie"),
                               H("set-cookie"), H("x-api-key"), H("x-auth-token")};
/* gRPC metadata that carries credentials (gNMI password authentication);
 * in a plain HTTP request these names are nothing special. */
static const hname GRPC[] = {H("username"), H("password"), H("access_token")};

/* (lengths first: a record's every header is looked up here, and a
 * string compare per name was a few per cent of a capture) */
static int in(const char *name, size_t len, const hname *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (list[i].len == len && !strcasecmp(name, list[i].name))
            return 1;
    return 0;
}

static int in_extra(const char *name, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcasecmp(name, list[i]))
            return 1;
    return 0;
}

static int is_grpc(const yb_request *r)
{
    for (size_t i = 0; i < r->n_headers; i++)
        if (!strcasecmp(r->headers[i].name, "content-type") && r->headers[i].value_len >= 16 &&
            !strncasecmp((const char *)r->headers[i].value, "application/grpc", 16))
            return 1;
    return 0;
}

/* What a redacted value points at (the record's values are its slot's,
 * freed with the slot, never one by one). */
static uint8_t placeholder[] = PLACEHOLDER;

int yb_cap_redact(yb_request *r, const char *const *extra, size_t n_extra,
                  void (*note)(void *ud, const char *name), void *ud)
{
    int grpc = yb_proto_is_h2(r->protocol) || is_grpc(r), n = 0;
    for (size_t i = 0; i < r->n_headers; i++) {
        yb_header *h = &r->headers[i];
        size_t len = strlen(h->name);
        if (!in(h->name, len, ALWAYS, sizeof ALWAYS / sizeof ALWAYS[0]) &&
            !(grpc && in(h->name, len, GRPC, sizeof GRPC / sizeof GRPC[0])) &&
            !in_extra(h->name, extra, n_extra))
            continue;
        h->value = placeholder;
        h->value_len = sizeof placeholder - 1;
        if (note)
            note(ud, h->name);
        n++;
    }
    return n;
}

