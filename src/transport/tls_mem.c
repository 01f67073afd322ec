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
 * per class (see tls_cfg): at most 832 KB per thread, whatever the number
 * of sessions.  A thread's cache (util/blkcache) is freed when the thread
 * exits. */
#include "config.h"
#include "transport/transport.h"
#include "util/blkcache.h"

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <openssl/crypto.h>

/* Classes of 16 bytes: class k holds blocks of at least 16k - 8 usable
 * bytes (glibc's chunks are 16-byte multiples with 8 bytes of header).
 * Small classes (up to 1 KB) are indexed directly; larger blocks (an SSL,
 * record and handshake buffers) are few per session: a handful of
 * distinct sizes, 8 slots.  What a thread keeps: per class, at most
 * CLASS_BYTES (BIG_BYTES) and at most SMALL_KEEP (BIG_KEEP) blocks, so at
 * most 64 x 8 KB + 8 x 40 KB in all.  A handshake frees hundreds of
 * blocks of one small size in a burst; a cap over all classes would fill
 * with sizes that are seldom asked for again (what realloc grew). */
static const yb_blkcache_cfg tls_cfg = {
    .grain_log2 = 4, .adj = 8, .classes = 66,
    .keep = 256, .keep_bytes = (size_t)8 * 1024,
    .max = (size_t)64 * 1024,
    .big_slots = 8, .big_keep = 2, .big_bytes = (size_t)40 * 1024,
};

/* This thread's cache: made at its first free, freed at its exit; DEAD
 * once freed, so that what is freed later goes to free(3). */
static _Thread_local yb_blkcache *tc;
#define DEAD ((yb_blkcache *)1)
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_ok;

/* Frees what the exiting thread kept (the key's value is the cache). */
static void on_thread_exit(void *arg)
{
    yb_blkcache_free(arg);
    tc = DEAD;
}

static void make_key(void)
{
    key_ok = pthread_key_create(&exit_key, on_thread_exit) == 0;
}

/* This thread's cache, made on first use; NULL when there is none. */
static yb_blkcache *get_cache(void)
{
    yb_blkcache *c;

    if (tc)
        return tc == DEAD ? NULL : tc;
    pthread_once(&key_once, make_key);
    c = key_ok ? yb_blkcache_new(&tls_cfg) : NULL;
    if (!c || pthread_setspecific(exit_key, c) != 0) {
        yb_blkcache_free(c);
        tc = DEAD;
        return NULL;
    }
    return tc = c;
}

static void *mem_malloc(size_t num, const char *file, int line)
{
    yb_blkcache *c = tc;

    (void)file; (void)line;
    if (c && c != DEAD) {
        void *b = yb_blkcache_get(c, &tls_cfg, num);

        if (b)
            return b;
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
    yb_blkcache *c;

    (void)file; (void)line;
    if (!p)
        return;
    if (!(c = get_cache()) || !yb_blkcache_put(c, &tls_cfg, p, malloc_usable_size(p)))
        free(p);
}

int yb_tls_mem_init(void)
{
    return CRYPTO_set_mem_functions(mem_malloc, mem_realloc, mem_free) == 1 ? 0 : -1;
}
