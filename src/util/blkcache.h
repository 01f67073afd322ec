/* A cache of freed heap blocks by size class (one owner for the allocation
 * caches of OpenSSL, nghttp2's client sessions and the capture's HPACK
 * inflaters).
 *
 * A freed block is kept, on a stack of pointers per size class, and handed
 * out again for a request it fits; what is kept is capped per class (a
 * number of blocks and a number of bytes), so a burst of frees of one size
 * cannot fill the cache with sizes that are seldom asked for again.  A
 * stack of pointers rather than a list threaded through the blocks: taking
 * one reads nothing of the block (a freed block is often out of the CPU's
 * cache by the time it is reused).
 *
 * Classes: class k holds blocks of at least k * grain - adj bytes, where a
 * block's size is what the owner says it can hold (malloc_usable_size, or
 * what it allocated).  adj is glibc's 8 bytes of chunk header when the
 * sizes are usable sizes (so 16k - 8 fills a class exactly), or minus the
 * owner's own header when it keeps one.  Classes 1 .. classes - 1 are
 * indexed directly; larger ones (up to max bytes) take one of big_slots
 * slots, found by a linear search, a slot per distinct class.  Class 0 is
 * never kept.
 *
 * Kept blocks are poisoned in the sanitizer build, so that a use after
 * their owner freed them is still caught.  The cache does not lock: one
 * thread (or one capture) per cache.  get and put are inline: they sit in
 * per-request paths. */
#ifndef YB_BLKCACHE_H
#define YB_BLKCACHE_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define YB_BLK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define YB_BLK_ASAN 1
#endif
#endif
#ifdef YB_BLK_ASAN
#include <sanitizer/asan_interface.h>
#define YB_BLK_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define YB_BLK_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define YB_BLK_POISON(p, n) ((void)(p), (void)(n))
#define YB_BLK_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

typedef struct {
    unsigned grain_log2; /* class width: 1 << grain_log2 bytes */
    long adj;            /* see above: class k holds blocks of >= k * grain - adj */
    unsigned classes;    /* directly indexed classes (0 .. classes - 1) */
    unsigned keep;       /* at most this many blocks per direct class */
    size_t keep_bytes;   /* and at most this many bytes (0: no byte cap) */
    size_t max;          /* larger blocks are never kept */
    unsigned big_slots;  /* classes >= classes: this many distinct ones */
    unsigned big_keep;   /* blocks per big class */
    size_t big_bytes;    /* bytes per big class (0: no byte cap) */
} yb_blkcache_cfg;

/* How many blocks a direct class keeps, and how many it may (the caps,
 * worked out once). */
typedef struct {
    unsigned n, lim;
} yb_blkcache_count;

/* A big class's slot. */
typedef struct {
    size_t key; /* the class held (0 = unused) */
    unsigned n, lim;
    void **b;   /* its stack */
} yb_blkcache_slot;

typedef struct {
    yb_blkcache_cfg cfg;    /* a copy, for drain and the big slots */
    yb_blkcache_slot *big;  /* cfg.big_slots slots */
    void **stack;           /* class k's stack: stack + k * cfg.keep */
    yb_blkcache_count cls[]; /* cfg.classes */
} yb_blkcache;

/* get and put take the cfg the cache was made with: when it is a static
 * const object, the compiler folds the class arithmetic and the caps'
 * branches into constants, so the cache costs no more than a hand-written
 * one in each owner. */

/* A new empty cache with cfg's caps (one allocation, freed by
 * yb_blkcache_free); NULL when out of memory or cfg is not sound. */
yb_blkcache *yb_blkcache_new(const yb_blkcache_cfg *cfg);

/* Frees every kept block (free(3)); the cache stays usable. */
void yb_blkcache_drain(yb_blkcache *c);

/* Drains c and frees it; NULL is fine. */
void yb_blkcache_free(yb_blkcache *c);

/* The class a request of size bytes takes (the smallest whose blocks hold
 * it); meaningful for size <= cfg->max only. */
static inline size_t yb_blkcache_class_of(const yb_blkcache_cfg *cfg, size_t size)
{
    return (size + (size_t)cfg->adj + ((size_t)1 << cfg->grain_log2) - 1) >> cfg->grain_log2;
}

/* What a block of class k holds at least: the size to malloc for a request
 * of class k so that, freed, it comes back to class k. */
static inline size_t yb_blkcache_class_size(const yb_blkcache_cfg *cfg, size_t k)
{
    return (k << cfg->grain_log2) - (size_t)cfg->adj;
}

/* Slot of big class k, or (add) a free slot for it; NULL when there is none. */
yb_blkcache_slot *yb_blkcache_big(yb_blkcache *c, size_t k, int add);

/* A kept block that holds size bytes (its first size bytes made usable), or
 * NULL: the caller allocates. */
static inline void *yb_blkcache_get(yb_blkcache *c, const yb_blkcache_cfg *cfg, size_t size)
{
    void *b;

    if (size > cfg->max)
        return NULL;
    size_t k = yb_blkcache_class_of(cfg, size);
    if (k < cfg->classes) {
        yb_blkcache_count *l = &c->cls[k];
        if (!l->n)
            return NULL;
        b = c->stack[k * cfg->keep + --l->n];
    } else {
        yb_blkcache_slot *l = cfg->big_slots ? yb_blkcache_big(c, k, 0) : NULL;
        if (!l || !l->n)
            return NULL;
        b = l->b[--l->n];
    }
    YB_BLK_UNPOISON(b, size);
    return b;
}

/* Keeps block b, which holds have bytes: 1 kept (the cache owns it now),
 * 0 not (a cap, or too large or small: the caller frees it). */
static inline int yb_blkcache_put(yb_blkcache *c, const yb_blkcache_cfg *cfg, void *b, size_t have)
{
    if (have > cfg->max)
        return 0;
    size_t k = (have + (size_t)cfg->adj) >> cfg->grain_log2;
    if (k < cfg->classes) {
        yb_blkcache_count *l = &c->cls[k];
        if (l->n >= l->lim)
            return 0;
        c->stack[k * cfg->keep + l->n++] = b;
    } else {
        yb_blkcache_slot *l = cfg->big_slots ? yb_blkcache_big(c, k, 1) : NULL;
        if (!l || l->n >= l->lim)
            return 0;
        l->b[l->n++] = b;
    }
    YB_BLK_POISON(b, have);
    return 1;
}

#endif
