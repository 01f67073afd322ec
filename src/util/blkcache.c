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
    size_t head = sizeof(yb_blkcache) + (size_t)cfg->classes * sizeof(yb_blkcache_count);
    size_t slots = (size_t)cfg->big_slots * sizeof(yb_blkcache_slot);
    size_t nptr = (size_t)cfg->classes * cfg->keep + (size_t)cfg->big_slots * cfg->big_keep;
    yb_blkcache *c;

    if (cfg->grain_log2 >= 16 || cfg->classes == 0 || cfg->classes > 65536 ||
        cfg->big_slots > 256 || cfg->keep > 65536 || cfg->big_keep > 65536 ||
        cfg->max > ((size_t)1 << 40) || cfg->adj < -4096 || cfg->adj > 4096)
        return NULL;
    head = (head + sizeof(void *) - 1) / sizeof(void *) * sizeof(void *);
    c = calloc(1, head + slots + nptr * sizeof(void *));
    if (!c)
        return NULL;
    c->cfg = *cfg;
    c->big = (yb_blkcache_slot *)((char *)c + head);
    c->stack = (void **)((char *)c + head + slots);
    for (size_t k = 0; k < cfg->classes; k++)
        c->cls[k].lim = class_lim(cfg->grain_log2, k, cfg->keep, cfg->keep_bytes);
    for (unsigned i = 0; i < cfg->big_slots; i++)
        c->big[i].b = c->stack + (size_t)cfg->classes * cfg->keep + (size_t)i * cfg->big_keep;
    return c;
}

yb_blkcache_slot *yb_blkcache_big(yb_blkcache *c, size_t k, int add)
{
    yb_blkcache_slot *s = c->big;

    for (unsigned i = 0; i < c->cfg.big_slots; i++)
        if (s[i].key == k)
            return &s[i];
    if (add)
        for (unsigned i = 0; i < c->cfg.big_slots; i++)
            if (s[i].key == 0) {
                s[i].key = k;
                s[i].lim = class_lim(c->cfg.grain_log2, k, c->cfg.big_keep, c->cfg.big_bytes);
                return &s[i];
            }
    return NULL;
}

static void release(void *b)
{
    YB_BLK_UNPOISON(b, malloc_usable_size(b));
    free(b);
}

void yb_blkcache_drain(yb_blkcache *c)
{
    for (size_t k = 0; k < c->cfg.classes; k++)
        while (c->cls[k].n)
            release(c->stack[k * c->cfg.keep + --c->cls[k].n]);
    for (unsigned i = 0; i < c->cfg.big_slots; i++)
        while (c->big[i].n)
            release(c->big[i].b[--c->big[i].n]);
}

void yb_blkcache_free(yb_blkcache *c)
{
    if (!c)
        return;
    yb_blkcache_drain(c);
    free(c);
}
