/* Routing by recorded authority (see route.h): a sorted table of the
 * names every target answers to, searched once per record. */
#include "config.h"
#include "engine/route.h"
#include "engine/target.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define KEY_MAX 272 /* "[" host(255) "]:" port(5) and the NUL */

typedef struct {
    char key[KEY_MAX]; /* lower-case host, or host:port ([v6]:port) */
    int target;        /* index in the inventory */
} entry;

struct yb_authmap {
    entry *e;
    size_t n, cap;
};

/* Splits authority a (host, host:port, [v6], [v6]:port, or a bare IPv6
 * address) into host (hlen bytes) and *port (0 = none).  Returns 0, or -1
 * when it is not an authority. */
static int split_authority(const char *a, char *host, size_t hlen, unsigned *port)
{
    const char *h = a, *p = NULL;
    size_t n;
    *port = 0;
    if (*a == '[') {
        const char *end = strchr(a, ']');
        if (!end)
            return -1;
        h = a + 1;
        n = (size_t)(end - h);
        if (end[1] == ':')
            p = end + 2;
        else if (end[1])
            return -1;
    } else {
        const char *c = strchr(a, ':');
        if (c && !strchr(c + 1, ':')) { /* one colon: host:port */
            n = (size_t)(c - a);
            p = c + 1;
        } else {
            n = strlen(a); /* no port, or a bare IPv6 address */
        }
    }
    if (n == 0 || n >= hlen)
        return -1;
    memcpy(host, h, n);
    host[n] = '\0';
    if (p) {
        unsigned v = 0;
        if (!*p)
            return -1;
        for (; *p; p++) {
            if (*p < '0' || *p > '9' || (v = v * 10 + (unsigned)(*p - '0')) > 65535)
                return -1;
        }
        if (v == 0)
            return -1;
        *port = v;
    }
    return 0;
}

/* The table's key for host and port (0 = none) into out. */
static void make_key(const char *host, unsigned port, char *out)
{
    char h[256];
    size_t i;
    for (i = 0; host[i] && i < sizeof h - 1; i++)
        h[i] = (char)tolower((unsigned char)host[i]);
    h[i] = '\0';
    if (!port)
        snprintf(out, KEY_MAX, "%s", h);
    else if (strchr(h, ':'))
        snprintf(out, KEY_MAX, "[%s]:%u", h, port);
    else
        snprintf(out, KEY_MAX, "%s:%u", h, port);
}

static int add(yb_authmap *m, const char *host, unsigned port, int target)
{
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 64;
        entry *e = realloc(m->e, nc * sizeof *e);
        if (!e)
            return -1;
        m->e = e;
        m->cap = nc;
    }
    make_key(host, port, m->e[m->n].key);
    m->e[m->n++].target = target;
    return 0;
}

static int by_key(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : x->target - y->target;
}

/* Adds the names target t answers to.  Returns 0 or -1 (out of memory). */
static int add_target(yb_authmap *m, const yb_inv_target *it, int t)
{
    char host[256];
    unsigned port;
    if (add(m, it->name, 0, t) < 0)
        return -1;
    for (size_t a = 0; a < it->n_aliases; a++)
        if (split_authority(it->aliases[a], host, sizeof host, &port) == 0 &&
            add(m, host, port, t) < 0)
            return -1;
    const char *url[2] = {it->restconf, it->gnmi};
    for (int u = 0; u < 2; u++) {
        yb_target tg;
        char err[64];
        /* the inventory checked the URLs already */
        if (url[u] && yb_target_parse_url(url[u], &tg, err, sizeof err) == 0 &&
            add(m, tg.host, tg.port, t) < 0)
            return -1;
    }
    return 0;
}

yb_authmap *yb_authmap_new(const yb_inventory *inv, const char *name, char *err,
                           size_t errlen)
{
    yb_authmap *m = calloc(1, sizeof *m);
    if (!m)
        goto oom;
    for (size_t t = 0; t < inv->n; t++)
        if (add_target(m, &inv->target[t], (int)t) < 0)
            goto oom;
    if (m->n)
        qsort(m->e, m->n, sizeof *m->e, by_key);
    /* one target per key: a duplicate within a target is dropped, across
     * targets it is an error (a record could go to either) */
    size_t w = 0;
    for (size_t r = 0; r < m->n; r++) {
        if (w && !strcmp(m->e[w - 1].key, m->e[r].key)) {
            if (m->e[w - 1].target == m->e[r].target)
                continue;
            const yb_inv_target *a = &inv->target[m->e[w - 1].target];
            const yb_inv_target *b = &inv->target[m->e[r].target];
            snprintf(err, errlen, "%s:%u: target '%s': '%s' also names target '%s' (line %u): "
                     "--route authority needs each name, alias and URL address to name one "
                     "target", name, b->line, b->name, m->e[r].key, a->name, a->line);
            yb_authmap_free(m);
            return NULL;
        }
        m->e[w++] = m->e[r];
    }
    m->n = w;
    return m;
oom:
    snprintf(err, errlen, "out of memory");
    yb_authmap_free(m);
    return NULL;
}

static int lookup(const yb_authmap *m, const char *host, unsigned port)
{
    entry k;
    make_key(host, port, k.key);
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(m->e[mid].key, k.key);
        if (c == 0)
            return m->e[mid].target;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

int yb_authmap_find(const yb_authmap *m, const char *scheme, const char *authority)
{
    char host[256];
    unsigned port;
    if (split_authority(authority, host, sizeof host, &port) < 0)
        return -1;
    if (!port)
        port = !strcasecmp(scheme, "https") ? 443 : 80;
    int t = lookup(m, host, port);
    return t >= 0 ? t : lookup(m, host, 0);
}

void yb_authmap_free(yb_authmap *m)
{
    if (!m)
        return;
    free(m->e);
    free(m);
}
