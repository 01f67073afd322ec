/* OpenSSL's allocation cache (src/transport/tls_mem.c): a freed block is
 * handed out again for a request it fits, never for one it does not; a
 * reused block is zeroed when asked for zeroed memory; blocks move
 * between threads; a thread's cache is freed when the thread exits (the
 * sanitizer build's leak check would report it otherwise). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "transport/transport.h"

/* Sizes of 16k - 8 bytes fill a glibc chunk (and the sanitizer's
 * allocator reports the size asked for), so their reuse is certain in
 * both builds. */
#define FIT 104

static void test_reuse_same_size(void **state)
{
    (void)state;
    void *p = OPENSSL_malloc(FIT), *q, *r;

    assert_non_null(p);
    memset(p, 0xab, FIT);
    OPENSSL_free(p);
    q = OPENSSL_malloc(FIT);
    assert_ptr_equal(q, p);             /* the cached block */
    r = OPENSSL_malloc(FIT);
    assert_ptr_not_equal(r, q);         /* handed out once only */
    OPENSSL_free(q);
    OPENSSL_free(r);
}

static void test_zalloc_of_reused_block_is_zero(void **state)
{
    (void)state;
    unsigned char *p = OPENSSL_malloc(FIT), *q;

    assert_non_null(p);
    memset(p, 0xab, FIT);
    OPENSSL_free(p);
    q = OPENSSL_zalloc(FIT);
    assert_ptr_equal(q, p);
    for (size_t i = 0; i < FIT; i++)
        assert_int_equal(q[i], 0);
    OPENSSL_free(q);
}

static void test_never_too_small(void **state)
{
    (void)state;
    enum { N = 256 };
    void *live[N] = {0};
    size_t len[N] = {0};
    unsigned seed = 12345;

    /* sizes from 0 to 80 KB, freed and allocated in random order: every
     * block must hold what was asked for (the sanitizer build also
     * catches a write past it) */
    for (int round = 0; round < 20000; round++) {
        size_t i;

        seed = seed * 1103515245u + 12345u;
        i = (seed >> 8) % N;
        if (live[i]) {
            OPENSSL_free(live[i]);
            live[i] = NULL;
            continue;
        }
        seed = seed * 1103515245u + 12345u;
        len[i] = (seed >> 4) % 3 == 0 ? (seed >> 8) % (80 * 1024) : (seed >> 8) % 1200;
        live[i] = OPENSSL_malloc(len[i]);
        assert_non_null(live[i]);
        assert_true(malloc_usable_size(live[i]) >= len[i]);
        memset(live[i], (int)(i & 0xff), len[i]);
    }
    for (size_t i = 0; i < N; i++)
        OPENSSL_free(live[i]);
}

static void test_realloc_keeps_contents(void **state)
{
    (void)state;
    unsigned char *p = OPENSSL_malloc(FIT), *q;

    assert_non_null(p);
    OPENSSL_free(p);
    p = OPENSSL_malloc(FIT);            /* from the cache */
    memset(p, 0x5a, FIT);
    q = OPENSSL_realloc(p, 20000);
    assert_non_null(q);
    for (size_t i = 0; i < FIT; i++)
        assert_int_equal(q[i], 0x5a);
    OPENSSL_free(q);
}

static void *churn(void *arg)
{
    void **out = arg;
    void *p[64];

    /* fill this thread's cache, then exit with it full */
    for (int i = 0; i < 64; i++)
        p[i] = OPENSSL_malloc((size_t)(i % 8) * 300 + FIT);
    for (int i = 0; i < 64; i++)
        OPENSSL_free(p[i]);
    *out = OPENSSL_malloc(20000);       /* outlives the thread */
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    void *from_thread[4] = {0};
    pthread_t th[4];

    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, churn, &from_thread[i]), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    for (int i = 0; i < 4; i++) {
        assert_non_null(from_thread[i]);
        memset(from_thread[i], 1, 20000);
        OPENSSL_free(from_thread[i]);   /* freed by another thread */
    }
}

/* OpenSSL itself through the cache: a digest and a key generation (both
 * allocate and free many blocks) give the same results again. */
static void test_openssl_works(void **state)
{
    (void)state;
    unsigned char md1[32], md2[32];
    unsigned n = 0;

    for (int i = 0; i < 50; i++) {
        EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "X25519");

        assert_non_null(k);
        EVP_PKEY_free(k);
        assert_int_equal(EVP_Digest("abc", 3, i ? md2 : md1, &n, EVP_sha256(), NULL), 1);
        if (i)
            assert_memory_equal(md1, md2, sizeof md1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reuse_same_size),
        cmocka_unit_test(test_zalloc_of_reused_block_is_zero),
        cmocka_unit_test(test_never_too_small),
        cmocka_unit_test(test_realloc_keeps_contents),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_openssl_works),
    };

    /* before anything allocates through OpenSSL */
    if (yb_tls_mem_init() != 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
