/* Credential redaction and the record checks a corpus imposes.
 *
 * Captures of management traffic carry passwords: HTTP Basic/Bearer
 * credentials, session cookies, and gNMI's per-RPC username/password
 * metadata.  A corpus is meant to be shared and replayed with the
 * replayer's own credentials, so their values are replaced by default. */
#include "config.h"
#include "capture/capture_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PLACEHOLDER "<redacted>"

static const char *const ALWAYS[] = {"authorization", "proxy-authorization", "cookie"};
/* gRPC metadata that carries credentials (gNMI password authentication). */
static const char *const GRPC[] = {"username", "password", "access_token"};

static int in(const char *name, const char *const *list, size_t n)
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

int yb_cap_redact(yb_request *r, void (*note)(void *ud, const char *name), void *ud)
{
    int grpc = is_grpc(r) || yb_proto_is_h2(r->protocol), n = 0;
    for (size_t i = 0; i < r->n_headers; i++) {
        yb_header *h = &r->headers[i];
        if (!in(h->name, ALWAYS, sizeof ALWAYS / sizeof ALWAYS[0]) &&
            !(grpc && in(h->name, GRPC, sizeof GRPC / sizeof GRPC[0])))
            continue;
        uint8_t *v = malloc(sizeof PLACEHOLDER - 1);
        if (!v)
            return -ENOMEM;
        memcpy(v, PLACEHOLDER, sizeof PLACEHOLDER - 1);
        free(h->value);
        h->value = v;
        h->value_len = sizeof PLACEHOLDER - 1;
        /* Names are listed in lower case whatever the wire spelling. */
        char lower[64];
        size_t k = 0;
        for (; h->name[k] && k + 1 < sizeof lower; k++)
            lower[k] = (char)((h->name[k] >= 'A' && h->name[k] <= 'Z') ? h->name[k] + 32
                                                                        : h->name[k]);
        lower[k] = 0;
        if (note)
            note(ud, lower);
        n++;
    }
    return n;
}

/* The corpus writer's field checks (corpus.c), repeated here because a
 * rejected record poisons the writer: a capture must skip such a request
 * (counted), not lose the whole corpus. */
static int is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int token_ok(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!is_tchar((unsigned char)*s))
            return 0;
    return 1;
}

static int visible_ok(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s <= 0x20 || (unsigned char)*s == 0x7f)
            return 0;
    return 1;
}

const char *yb_cap_request_problem(const yb_request *r)
{
    if (!token_ok(r->method))
        return "method";
    if (!visible_ok(r->scheme) || !visible_ok(r->authority))
        return "scheme or authority";
    if ((r->path[0] != '/' && strcmp(r->path, "*") != 0) || !visible_ok(r->path))
        return "path";
    for (size_t i = 0; i < r->n_headers; i++) {
        if (!token_ok(r->headers[i].name) || r->headers[i].name[0] == ':')
            return "header name";
        for (size_t j = 0; j < r->headers[i].value_len; j++) {
            uint8_t c = r->headers[i].value[j];
            if (c == '\r' || c == '\n' || c == 0)
                return "header value";
        }
    }
    if (r->expected_status > 999)
        return "status";
    if (r->body_len > YB_CORPUS_MAX_ENTRY / 2)
        return "body size";
    return NULL;
}
