/* Shared byte strings (codec/blobs.h): the same bytes share one copy,
 * counted; different bytes (also of the same hash bucket or length) never
 * do; a copy lives as long as its last holder (LeakSanitizer checks that
 * every one is freed). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "codec/blobs.h"

static void test_shared(void **st)
{
    (void)st;
    yb_blobs *t = yb_blobs_new();
    uint8_t a[100], b[100];
    assert_non_null(t);
    memset(a, 'x', sizeof a);
    memcpy(b, a, sizeof b);
    const uint8_t *p = yb_blob_get(t, a, sizeof a), *q = yb_blob_get(t, b, sizeof b);
    assert_non_null(p);
    assert_ptr_equal(p, q); /* the same bytes: one copy */
    assert_ptr_not_equal(p, a);
    assert_memory_equal(p, a, sizeof a);
    b[99] = 'y';
    const uint8_t *r = yb_blob_get(t, b, sizeof b);
    assert_ptr_not_equal(r, p); /* one byte apart */
    assert_memory_equal(r, b, sizeof b);
    const uint8_t *s = yb_blob_get(t, a, sizeof a - 1);
    assert_ptr_not_equal(s, p); /* a prefix */
    yb_blob_put(t, p);
    assert_memory_equal(q, a, sizeof a); /* still held once */
    yb_blob_put(t, q);
    yb_blob_put(t, r);
    yb_blob_put(t, s);
    p = yb_blob_get(t, a, sizeof a); /* given back: a new copy */
    assert_memory_equal(p, a, sizeof a);
    yb_blob_put(t, p);
    yb_blobs_free(t);
}

/* Many distinct strings (the table grows), each taken twice: every one
 * comes back as its own bytes. */
static void test_many(void **st)
{
    (void)st;
    enum { N = 1000 };
    yb_blobs *t = yb_blobs_new();
    const uint8_t *got[N];
    char buf[32];
    assert_non_null(t);
    for (int i = 0; i < N; i++) {
        int n = snprintf(buf, sizeof buf, "body %d", i);
        got[i] = yb_blob_get(t, (const uint8_t *)buf, (size_t)n);
        assert_non_null(got[i]);
    }
    for (int i = 0; i < N; i++) {
        int n = snprintf(buf, sizeof buf, "body %d", i);
        assert_ptr_equal(yb_blob_get(t, (const uint8_t *)buf, (size_t)n), got[i]);
        assert_memory_equal(got[i], buf, (size_t)n);
    }
    for (int i = 0; i < N; i++) {
        yb_blob_put(t, got[i]);
        yb_blob_put(t, got[i]);
    }
    yb_blobs_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared),
        cmocka_unit_test(test_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
