#include "config.h"
#include "gnmi/gnmi_msg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void yb_gnmi_path_free(Gnmi__Path *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_elem; i++) {
        Gnmi__PathElem *e = p->elem[i];
        for (size_t k = 0; k < e->n_key; k++) {
            free(e->key[k]->key);
            free(e->key[k]->value);
            free(e->key[k]);
        }
        free(e->key);
        free(e->name);
        free(e);
    }
    free(p->elem);
    free(p);
}

static char *dupn(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

/* Parses "[k=v]" groups at *sp into e.  Returns 0 or -EINVAL/-ENOMEM. */
static int parse_keys(const char **sp, Gnmi__PathElem *e)
{
    const char *s = *sp;
    while (*s == '[') {
        const char *eq = strchr(s, '=');
        const char *close = eq ? strchr(eq, ']') : NULL;
        if (!eq || !close || eq == s + 1)
            return -EINVAL;
        Gnmi__PathElem__KeyEntry **nk = realloc(e->key, (e->n_key + 1) * sizeof *nk);
        if (!nk)
            return -ENOMEM;
        e->key = nk;
        Gnmi__PathElem__KeyEntry *ke = malloc(sizeof *ke);
        if (!ke)
            return -ENOMEM;
        gnmi__path_elem__key_entry__init(ke);
        ke->key = dupn(s + 1, (size_t)(eq - s - 1));
        ke->value = dupn(eq + 1, (size_t)(close - eq - 1));
        nk[e->n_key++] = ke;
        if (!ke->key || !ke->value)
            return -ENOMEM;
        s = close + 1;
    }
    *sp = s;
    return 0;
}

int yb_gnmi_path_parse(const char *s, Gnmi__Path **out)
{
    Gnmi__Path *p = malloc(sizeof *p);
    if (!p)
        return -ENOMEM;
    gnmi__path__init(p);
    int rc = 0;
    if (*s == '/')
        s++;
    while (*s && !rc) {
        size_t n = strcspn(s, "/[");
        if (n == 0) {
            rc = -EINVAL;
            break;
        }
        Gnmi__PathElem **ne = realloc(p->elem, (p->n_elem + 1) * sizeof *ne);
        Gnmi__PathElem *e = ne ? malloc(sizeof *e) : NULL;
        if (ne)
            p->elem = ne;
        if (!e) {
            rc = -ENOMEM;
            break;
        }
        gnmi__path_elem__init(e);
        p->elem[p->n_elem++] = e;
        if (!(e->name = dupn(s, n))) {
            rc = -ENOMEM;
            break;
        }
        s += n;
        rc = parse_keys(&s, e);
        if (!rc && *s == '/')
            s++;
        else if (!rc && *s)
            rc = -EINVAL;
    }
    if (rc) {
        yb_gnmi_path_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

size_t yb_gnmi_path_format(const Gnmi__Path *p, char *buf, size_t cap)
{
    size_t n = 0;
#define PUT(...)                                                                   \
    do {                                                                           \
        int k_ = snprintf(cap > n ? buf + n : NULL, cap > n ? cap - n : 0, __VA_ARGS__); \
        if (k_ > 0)                                                                \
            n += (size_t)k_;                                                       \
    } while (0)
    if (cap)
        buf[0] = 0;
    if (p->n_elem == 0)
        PUT("/");
    for (size_t i = 0; i < p->n_elem; i++) {
        PUT("/%s", p->elem[i]->name);
        for (size_t k = 0; k < p->elem[i]->n_key; k++)
            PUT("[%s=%s]", p->elem[i]->key[k]->key, p->elem[i]->key[k]->value);
    }
#undef PUT
    return n;
}

int yb_grpc_frame(const ProtobufCMessage *m, uint8_t **out, size_t *len)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    if (n > UINT32_MAX)
        return -EFBIG;
    uint8_t *b = malloc(n + YB_GRPC_PREFIX);
    if (!b)
        return -ENOMEM;
    b[0] = 0;
    b[1] = (uint8_t)(n >> 24);
    b[2] = (uint8_t)(n >> 16);
    b[3] = (uint8_t)(n >> 8);
    b[4] = (uint8_t)n;
    protobuf_c_message_pack(m, b + YB_GRPC_PREFIX);
    *out = b;
    *len = n + YB_GRPC_PREFIX;
    return 0;
}

int yb_grpc_next(const uint8_t *buf, size_t len, size_t *off, const uint8_t **msg,
                 size_t *msglen, size_t max)
{
    size_t o = *off;
    if (o == len)
        return 0;
    if (o > len || len - o < YB_GRPC_PREFIX || buf[o] != 0)
        return -1;
    size_t n = ((size_t)buf[o + 1] << 24) | ((size_t)buf[o + 2] << 16) |
               ((size_t)buf[o + 3] << 8) | buf[o + 4];
    if (n > max || len - o - YB_GRPC_PREFIX < n)
        return -1;
    *msg = buf + o + YB_GRPC_PREFIX;
    *msglen = n;
    *off = o + YB_GRPC_PREFIX + n;
    return 1;
}
