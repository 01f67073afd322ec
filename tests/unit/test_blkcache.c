/* The cache of freed blocks (src/util/blkcache.c): a kept block is handed
 * out again for a request of its class and never for a larger one; the
 * caps per class (blocks and bytes, direct and big classes) hold; drain
 * frees every kept block (the sanitizer build's leak check would report
 * one left); in the sanitizer build a use of a kept block is caught. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/blkcache.h"

/* The shape of OpenSSL's cache: 16-byte classes of usable sizes. */
static const yb_blkcache_cfg glibc_cfg = {
    .grain_log2 = 4, .adj = 8, .classes = 66, .keep = 256, .keep_bytes = 8192,
    .max = 65536, .big_slots = 2, .big_keep = 2, .big_bytes = 40960,
};

static int put(yb_blkcache *c, void *b)
{
    return yb_blkcache_put(c, &glibc_cfg, b, malloc_usable_size(b));
}

static void test_reuse_same_class(void **state)
{
    (void)state;
    yb_blkcache *c = yb_blkcache_new(&glibc_cfg);
    assert_non_null(c);
    assert_null(yb_blkcache_get(c, &glibc_cfg, 100));           /* empty */
    void *p = malloc(yb_blkcache_class_size(&glibc_cfg, yb_blkcache_class_of(&glibc_cfg, 100)));
    assert_non_null(p);
    assert_int_equal(put(c, p), 1);
    assert_null(yb_blkcache_get(c, &glibc_cfg, 200));           /* another class: not this one */
    void *q = yb_blkcache_get(c, &glibc_cfg, 100);
    assert_ptr_equal(q, p);
    memset(q, 0xab, 100);                           /* usable again */
    assert_null(yb_blkcache_get(c, &glibc_cfg, 100));           /* handed out once */
    free(q);
    yb_blkcache_free(c);
}

static void test_never_too_small(void **state)
{
    (void)state;
    yb_blkcache *c = yb_blkcache_new(&glibc_cfg);
    assert_non_null(c);
    for (size_t n = 1; n <= 2000; n += 7) {
        void *p = malloc(n);
        assert_non_null(p);
        if (!put(c, p))
            free(p);
    }
    for (size_t n = 1; n <= 2000; n += 3) {
        void *p = yb_blkcache_get(c, &glibc_cfg, n);
        if (p) {
            assert_true(malloc_usable_size(p) >= n);
            memset(p, 1, n);
            free(p);
        }
    }
    yb_blkcache_free(c);
}

static void test_caps(void **state)
{
    (void)state;
    /* class of 104-byte blocks (k = 7): 8192 / 112 = 73 blocks by bytes */
    yb_blkcache *c = yb_blkcache_new(&glibc_cfg);
    assert_non_null(c);
    size_t k = yb_blkcache_class_of(&glibc_cfg, 104);
    unsigned kept = 0, refused = 0;
    for (int i = 0; i < 200; i++) {
        void *p = malloc(104);
        assert_non_null(p);
        if (put(c, p))
            kept++;
        else {
            refused++;
            free(p);
        }
    }
    assert_int_equal(kept, 8192 / (k << 4));
    assert_int_equal(refused, 200 - kept);
    /* big classes: two blocks per class, a slot per class, two slots */
    void *big[4] = {malloc(20000), malloc(20000), malloc(20000), malloc(30000)};
    void *other = malloc(40000);
    assert_int_equal(put(c, big[0]), 1);
    assert_int_equal(put(c, big[1]), 1);            /* 2 x 20 KB <= 40 KB */
    assert_int_equal(put(c, big[2]), 0);            /* the block cap */
    free(big[2]);
    assert_int_equal(put(c, big[3]), 1);            /* the second slot */
    assert_int_equal(put(c, other), 0);             /* no third slot */
    free(other);
    void *huge = malloc(70000);
    assert_int_equal(put(c, huge), 0);              /* over max */
    free(huge);
    /* blocks per class: keep, when the byte cap is larger */
    yb_blkcache_cfg few = glibc_cfg;
    few.keep = 3;
    yb_blkcache *d = yb_blkcache_new(&few);
    assert_non_null(d);
    for (int i = 0; i < 5; i++) {
        void *p = malloc(40);
        if (!yb_blkcache_put(d, &few, p, malloc_usable_size(p))) {
            assert_true(i >= 3);
            free(p);
        } else {
            assert_true(i < 3);
        }
    }
    yb_blkcache_free(d);
    yb_blkcache_free(c);
}

static void test_drain_frees_all(void **state)
{
    (void)state;
    yb_blkcache *c = yb_blkcache_new(&glibc_cfg);
    assert_non_null(c);
    for (int i = 0; i < 50; i++) {
        void *p = malloc(24 + (size_t)i * 16);
        if (!put(c, p))
            free(p);
    }
    yb_blkcache_drain(c);                           /* the leak check sees nothing left */
    for (int i = 0; i < 50; i++)
        assert_null(yb_blkcache_get(c, &glibc_cfg, 24 + (size_t)i * 16));
    void *p = malloc(104);
    assert_int_equal(put(c, p), 1);                 /* still usable */
    yb_blkcache_free(c);                            /* and frees what it keeps */
}

/* An owner's own header before the block (the capture's way): class k
 * holds k * 64 bytes after a 16-byte header. */
static void test_negative_adj(void **state)
{
    (void)state;
    yb_blkcache_cfg cfg = {.grain_log2 = 6, .adj = -16, .classes = 17, .keep = 512, .max = 16 + 1024};
    yb_blkcache *c = yb_blkcache_new(&cfg);
    assert_non_null(c);
    size_t k = yb_blkcache_class_of(&cfg, 16 + 100);
    assert_int_equal(k, 2);
    assert_int_equal(yb_blkcache_class_size(&cfg, k), 16 + 128);
    void *p = malloc(16 + 128);
    assert_int_equal(yb_blkcache_put(c, &cfg, p, 16 + 128), 1);
    assert_ptr_equal(yb_blkcache_get(c, &cfg, 16 + 128), p);
    free(p);
    yb_blkcache_free(c);
}

#ifdef YB_BLK_ASAN /* (the poisoning exists only under ASan) */
static void test_use_of_kept_block_is_caught(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        yb_blkcache *c = yb_blkcache_new(&glibc_cfg);
        volatile char *p = malloc(104);
        if (!c || !p || !put(c, (void *)p))
            _exit(0);
        p[10] = 1;                                  /* use after its owner freed it */
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_false(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reuse_same_class),
        cmocka_unit_test(test_never_too_small),
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_drain_frees_all),
        cmocka_unit_test(test_negative_adj),
#ifdef YB_BLK_ASAN
        cmocka_unit_test(test_use_of_kept_block_is_caught),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
