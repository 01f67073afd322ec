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

