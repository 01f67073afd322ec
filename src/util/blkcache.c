/* A cache of freed heap blocks by size class: see blkcache.h. */
#include "config.h"
#include "util/blkcache.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>

/* How many blocks of class k a class keeps: keep, and no more than bytes
 * counting k * grain per block (0: no byte cap). */
static unsigned class_lim(unsigned shift, size_t k, unsigned keep, size_t bytes)
{
    size_t w = k << shift;

    if (k == 0)
        return 0;
    if (bytes && bytes / w < keep)
        return (unsigned)(bytes / w);
    return keep;
}

yb_blkcache *yb_blkcache_new(const yb_blkcache_cfg *cfg)
{
    size_t nslots = (size_t)cfg->classes + cfg->big_slots;
    size_t nptr = (size_t)cfg->classes * cfg->keep + (size_t)cfg->big_slots * cfg->big_keep;
    size_t head = sizeof(yb_blkcache) + nslots * sizeof(yb_blkcache_class);
    yb_blkcache *c;
    void **b;

    if (cfg->grain_log2 >= 16 || cfg->classes == 0 || cfg->classes > 65536 ||
        cfg->big_slots > 256 || cfg->keep > 65536 || cfg->big_keep > 65536 ||
        cfg->max > ((size_t)1 << 40) || (cfg->adj < 0 ? (size_t)-cfg->adj : (size_t)cfg->adj) > 4096)
        return NULL;
    c = calloc(1, head + nptr * sizeof(void *));
    if (!c)
        return NULL;
    c->shift = cfg->grain_log2;
    c->classes = cfg->classes;
    c->big_slots = cfg->big_slots;
    c->big_keep = cfg->big_keep;
    c->add = (size_t)cfg->adj; /* wraps for a negative adj: the sums wrap back */
    c->max = cfg->max;
    c->big_bytes = cfg->big_bytes;
    b = (void **)((char *)c + head);
    for (size_t k = 0; k < nslots; k++) {
        c->cls[k].b = b;
        if (k < cfg->classes) {
            c->cls[k].lim = class_lim(c->shift, k, cfg->keep, cfg->keep_bytes);
            b += cfg->keep;
        } else {
            b += cfg->big_keep;
        }
    }
    return c;
}

yb_blkcache_class *yb_blkcache_big(yb_blkcache *c, size_t k, int add)
{
    yb_blkcache_class *s = c->cls + c->classes;

    for (unsigned i = 0; i < c->big_slots; i++)
        if (s[i].key == k)
            return &s[i];
    if (add)
        for (unsigned i = 0; i < c->big_slots; i++)
            if (s[i].key == 0) {
                s[i].key = k;
                s[i].lim = class_lim(c->shift, k, c->big_keep, c->big_bytes);
                return &s[i];
            }
    return NULL;
}

void yb_blkcache_drain(yb_blkcache *c)
{
    size_t nslots = (size_t)c->classes + c->big_slots;

    for (size_t k = 0; k < nslots; k++) {
        yb_blkcache_class *l = &c->cls[k];

        while (l->n) {
            void *b = l->b[--l->n];

            YB_BLK_UNPOISON(b, malloc_usable_size(b));
            free(b);
        }
    }
}

void yb_blkcache_free(yb_blkcache *c)
{
    if (!c)
        return;
    yb_blkcache_drain(c);
    free(c);
}
