/* Shared byte strings (see blobs.h): a chained hash table of counted
 * copies, doubled when it holds twice as many strings as buckets. */
#include "config.h"
#include "codec/blobs.h"

#include <stdlib.h>
#include <string.h>

typedef struct blob {
    struct blob *next;   /* in its bucket */
    uint64_t hash;
    size_t len;
    uint64_t refs;
    uint8_t data[];
} blob;

struct yb_blobs {
    blob **bucket;
    size_t n_bucket;     /* a power of two */
    size_t n;            /* strings held */
};

/* FNV-1a, 64 bits: run once per prepared request, not per request sent. */
static uint64_t hash_of(const uint8_t *p, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

yb_blobs *yb_blobs_new(void)
{
    yb_blobs *t = calloc(1, sizeof *t);
    if (t && !(t->bucket = calloc(t->n_bucket = 16, sizeof *t->bucket))) {
        free(t);
        t = NULL;
    }
    return t;
}

void yb_blobs_free(yb_blobs *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_bucket; i++)
        while (t->bucket[i]) { /* (none when every holder gave back) */
            blob *b = t->bucket[i];
            t->bucket[i] = b->next;
            free(b);
        }
    free(t->bucket);
    free(t);
}

/* Doubles the buckets (nothing when out of memory: chains grow). */
static void grow(yb_blobs *t)
{
    size_t nb = t->n_bucket * 2;
    blob **g = calloc(nb, sizeof *g);
    if (!g)
        return;
    for (size_t i = 0; i < t->n_bucket; i++)
        while (t->bucket[i]) {
            blob *b = t->bucket[i];
            t->bucket[i] = b->next;
            b->next = g[b->hash & (nb - 1)];
            g[b->hash & (nb - 1)] = b;
        }
    free(t->bucket);
    t->bucket = g;
    t->n_bucket = nb;
}

const uint8_t *yb_blob_get(yb_blobs *t, const uint8_t *p, size_t len)
{
    uint64_t h = hash_of(p, len);
    for (blob *b = t->bucket[h & (t->n_bucket - 1)]; b; b = b->next)
        if (b->hash == h && b->len == len && !memcmp(b->data, p, len)) {
            b->refs++;
            return b->data;
        }
    if (len > SIZE_MAX - sizeof(blob))
        return NULL;
    blob *b = malloc(sizeof *b + len);
    if (!b)
        return NULL;
    b->hash = h;
    b->len = len;
    b->refs = 1;
    memcpy(b->data, p, len);
    if (t->n >= 2 * t->n_bucket)
        grow(t);
    b->next = t->bucket[h & (t->n_bucket - 1)];
    t->bucket[h & (t->n_bucket - 1)] = b;
    t->n++;
    return b->data;
}

void yb_blob_put(yb_blobs *t, const uint8_t *data)
{
    blob *b = (blob *)(void *)((uint8_t *)(uintptr_t)data - offsetof(blob, data));
    if (--b->refs)
        return;
    for (blob **pp = &t->bucket[b->hash & (t->n_bucket - 1)]; *pp; pp = &(*pp)->next)
        if (*pp == b) {
            *pp = b->next;
            break;
        }
    t->n--;
    free(b);
}
