/* OpenSSL's allocations through a per-thread cache of freed blocks.
 *
 * OpenSSL 3.0 allocates and frees about 2,300 blocks per TLS 1.3 client
 * handshake (the certificate's key is decoded through a decoder chain
 * built afresh each time, every fetch copies names and parameters), in
 * bursts of a few sizes that overflow glibc's per-thread cache (7 blocks
 * per size) into its bins, where malloc and free take the slow path: a
 * new session per request spent about a tenth of its CPU in the
 * allocator.  Here a freed block is kept in the freeing thread, on a
 * stack per size class, and handed out again for a request it fits.
 *
 * Every block is a plain malloc block (nothing is added to it), so a
 * block freed by another thread, or with free(3), or one that comes back
 * through realloc is still correct: a class only ever holds blocks whose
 * malloc_usable_size is at least its size.  What a thread keeps is capped
 * per class (CLASS_BYTES, BIG_BYTES): at most 832 KB per thread, whatever
 * the number of sessions.  A thread's cache is freed when the thread exits. */
#include "config.h"
#include "transport/transport.h"

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <openssl/crypto.h>

#if defined(__SANITIZE_ADDRESS__)
#define TLS_MEM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TLS_MEM_ASAN 1
#endif
#endif
#ifdef TLS_MEM_ASAN
#include <sanitizer/asan_interface.h>
/* A cached block is poisoned, so that a use after OpenSSL freed it is
 * still caught. */
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)0)
#define UNPOISON(p, n) ((void)0)
#endif

/* Classes of 16 bytes: class k holds blocks of at least 16k - 8 usable
 * bytes (glibc's chunks are 16-byte multiples with 8 bytes of header). */
#define GRAIN 16u
/* Small classes (up to 1 KB) are indexed directly. */
#define SMALL_CLASSES 66u
/* Larger blocks (an SSL, record and handshake buffers) are few per
 * session: a handful of distinct sizes, found by a linear search. */
#define BIG_SLOTS 8u
#define BIG_MAX ((size_t)64 * 1024)
/* What a thread keeps: per class, at most CLASS_BYTES (BIG_BYTES) and at
 * most SMALL_KEEP (BIG_KEEP) blocks, so at most 64 x 8 KB + 8 x 40 KB in
 * all.  A handshake frees hundreds of blocks of one small size in a
 * burst; a cap over all classes would fill with sizes that are seldom
 * asked for again (what realloc grew). */
#define SMALL_KEEP 256u
#define BIG_KEEP 2u
#define CLASS_BYTES ((size_t)8 * 1024)
#define BIG_BYTES ((size_t)40 * 1024)

/* A class's blocks are a stack of pointers, not a list threaded through
 * the blocks: taking one then reads nothing of the block (a freed block
 * is often out of the CPU's cache by the time it is reused). */
typedef struct {
    size_t key;                 /* the class (0 = slot unused) */
    unsigned n;
    void *b[BIG_KEEP];
} big_list;

typedef struct {
    unsigned n[SMALL_CLASSES];
    void *small[SMALL_CLASSES][SMALL_KEEP];
    big_list big[BIG_SLOTS];
} cache;

/* This thread's cache: made at its first free, freed at its exit; DEAD
 * once freed, so that what is freed later goes to free(3). */
static _Thread_local cache *tc;
#define DEAD ((cache *)1)
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_ok;

static void release_block(void *b)
{
    UNPOISON(b, malloc_usable_size(b));
    free(b);
}

/* Frees what the exiting thread kept (the key's value is the cache). */
static void on_thread_exit(void *arg)
{
    cache *c = arg;

    for (unsigned i = 0; i < SMALL_CLASSES; i++)
        while (c->n[i])
            release_block(c->small[i][--c->n[i]]);
    for (unsigned i = 0; i < BIG_SLOTS; i++)
        while (c->big[i].n)
            release_block(c->big[i].b[--c->big[i].n]);
    free(c);
    tc = DEAD;
}

static void make_key(void)
{
    key_ok = pthread_key_create(&exit_key, on_thread_exit) == 0;
}

/* This thread's cache, made on first use; NULL when there is none. */
static cache *get_cache(void)
{
    cache *c;

    if (tc)
        return tc == DEAD ? NULL : tc;
    pthread_once(&key_once, make_key);
    c = key_ok ? calloc(1, sizeof *c) : NULL;
    if (!c || pthread_setspecific(exit_key, c) != 0) {
        free(c);
        tc = DEAD;
        return NULL;
    }
    return tc = c;
}

static big_list *big_of(cache *c, size_t k, int add)
{
    for (unsigned i = 0; i < BIG_SLOTS; i++)
        if (c->big[i].key == k)
            return &c->big[i];
    if (add)
        for (unsigned i = 0; i < BIG_SLOTS; i++)
            if (c->big[i].key == 0) {
                c->big[i].key = k;
                return &c->big[i];
            }
    return NULL;
}

static void *mem_malloc(size_t num, const char *file, int line)
{
    cache *c = tc;
    void *b = NULL;

    (void)file; (void)line;
    if (c && c != DEAD && num <= BIG_MAX) {
        size_t k = (num + GRAIN + 7) / GRAIN;

        if (k < 2)
            k = 2;
        if (k < SMALL_CLASSES) {
            if (c->n[k])
                b = c->small[k][--c->n[k]];
        } else {
            big_list *l = big_of(c, k, 0);

            if (l && l->n)
                b = l->b[--l->n];
        }
        if (b) {
            UNPOISON(b, num);
            return b;
        }
    }
    return malloc(num);
}

static void *mem_realloc(void *p, size_t num, const char *file, int line)
{
    (void)file; (void)line;
    return realloc(p, num);
}

static void mem_free(void *p, const char *file, int line)
{
    cache *c;
    size_t u, k;

    (void)file; (void)line;
    if (!p)
        return;
    u = malloc_usable_size(p);
    k = (u + 8) / GRAIN;
    if (u > BIG_MAX || k < 2 || !(c = get_cache()))
        goto release;
    if (k < SMALL_CLASSES) {
        if (c->n[k] == SMALL_KEEP || (c->n[k] + 1) * k * GRAIN > CLASS_BYTES)
            goto release;
        c->small[k][c->n[k]++] = p;
    } else {
        big_list *l = big_of(c, k, 1);

        if (!l || l->n == BIG_KEEP || (l->n + 1) * k * GRAIN > BIG_BYTES)
            goto release;
        l->b[l->n++] = p;
    }
    POISON(p, u);
    return;

release:
    free(p);
}

int yb_tls_mem_init(void)
{
    return CRYPTO_set_mem_functions(mem_malloc, mem_realloc, mem_free) == 1 ? 0 : -1;
}
