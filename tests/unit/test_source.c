/* The prepared-request cache of a corpus source: a share that fits the
 * budget and is sent more than once is kept prepared and cycled; a share
 * larger than the budget is streamed from the first record, the cache
 * never filling up to the budget first; a run that sends no record twice
 * (-n no larger than the share, one pass) never caches, and when the
 * corpus' summary counts enough units it does not read the share first
 * to find that out.  Every way, the same records come out in the same
 * order. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "codec/codec.h"
#include "corpus/corpus.pb-c.h"
#include "engine/source.h"

#define N_REC 100
#define BODY 4000 /* ~4 KB a prepared request: the share is ~420 KB */

static char path[64];
static char err[1024];
static const yb_codec_cfg CFG = {.authority = "sw1", .scheme = "http"};

static int setup(void **st)
{
    (void)st;
    snprintf(path, sizeof path, "/tmp/yb-test-source.%d.ybc", (int)getpid());
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    yb_corpus_writer *w = yb_corpus_writer_open(path, &h, err, sizeof err);
    if (!w)
        fail_msg("writer_open: %s", err);
    static uint8_t body[BODY];
    for (unsigned k = 0; k < N_REC; k++) {
        yb_request r;
        yb_request_init(&r);
        r.protocol = YB_PROTO_RESTCONF;
        char p[32];
        snprintf(p, sizeof p, "/restconf/data/r%u", k);
        assert_int_equal(yb_request_set_str(&r.method, "PATCH"), 0);
        assert_int_equal(yb_request_set_str(&r.scheme, "http"), 0);
        assert_int_equal(yb_request_set_str(&r.authority, "sw1"), 0);
        assert_int_equal(yb_request_set_str(&r.path, p), 0);
        memset(body, 'a' + k % 26, sizeof body);
        assert_int_equal(yb_request_set_body(&r, body, sizeof body), 0);
        assert_int_equal(yb_corpus_writer_add(w, &r), 0);
        yb_request_cleanup(&r);
    }
    if (yb_corpus_writer_close(w, err, sizeof err) != 0)
        fail_msg("writer_close: %s", err);
    yb_corpus_header_cleanup(&h);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    unlink(path);
    return 0;
}

/* Takes n requests (cycling) from a source with the given budget and
 * uses (0 = not set), checking that request i is record i mod N_REC.
 * Returns the cache's peak. */
static uint64_t take_from(const char *file, uint64_t budget, uint64_t uses, unsigned n,
                          int warm)
{
    yb_source *s = yb_source_new(file, 0, 1, 0, &yb_h1_client_ops, &CFG, budget, err, sizeof err);
    if (!s)
        fail_msg("source: %s", err);
    if (uses)
        yb_source_uses(s, uses);
    if (warm)
        assert_int_equal(yb_source_warm(s, err, sizeof err), 0);
    for (unsigned i = 0; i < n; i++) {
        yb_prepared *p;
        if (yb_source_next(s, 1, &p, err, sizeof err) != 1)
            fail_msg("request %u: %s", i, err);
        assert_int_equal(p->record, i % N_REC);
        yb_source_release(s, p);
    }
    uint64_t peak = yb_source_cache_peak(s);
    yb_source_free(s);
    return peak;
}

static uint64_t take(uint64_t budget, uint64_t uses, unsigned n, int warm)
{
    return take_from(path, budget, uses, n, warm);
}

static void test_fits(void **st)
{
    (void)st;
    uint64_t peak = take(1u << 20, 0, 3 * N_REC, 0);
    assert_true(peak >= (uint64_t)N_REC * BODY);
    assert_true(peak <= 1u << 20);
    assert_int_equal(take(1u << 20, 0, 3 * N_REC, 1), peak); /* warmed: the same */
    assert_int_equal(take(1u << 20, N_REC + 1, N_REC + 1, 0), peak); /* one record twice */
}

static void test_too_big(void **st)
{
    (void)st;
    /* a quarter of the share fits: nothing is cached, not even that quarter */
    assert_int_equal(take(N_REC * BODY / 4, 0, 3 * N_REC, 0), 0);
    assert_int_equal(take(N_REC * BODY / 4, 0, 3 * N_REC, 1), 0);
}

static void test_no_reuse(void **st)
{
    (void)st;
    /* it fits, but no record is sent twice */
    assert_int_equal(take(1u << 20, N_REC, N_REC, 0), 0);
    assert_int_equal(take(1u << 20, N_REC / 2, N_REC / 2, 1), 0);
}

/* Copies the corpus at path to out with its summary's unit count set to
 * units (the summary frame packed anew: skippable magic, length, the
 * Summary, its length, "\x89YBS"). */
static void with_units(const char *out, uint64_t units)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t b[1u << 20], m2[1024];
    size_t n = fread(b, 1, sizeof b, f);
    fclose(f);
    assert_true(n > 16 && n < sizeof b);
    size_t len = b[n - 8] | (size_t)b[n - 7] << 8;
    Yangblast__Summary *m = yangblast__summary__unpack(NULL, len, b + n - 8 - len);
    assert_non_null(m);
    assert_int_equal(m->unit_count, N_REC); /* what the writer counted */
    m->unit_count = units;
    size_t l2 = protobuf_c_message_pack(&m->base, m2);
    yangblast__summary__free_unpacked(m, NULL);
    f = fopen(out, "wb");
    assert_non_null(f);
    uint8_t le[4];
    fwrite(b, 1, n - 16 - len, f);
    fwrite("\x5b\x2a\x4d\x18", 1, 4, f);
    for (unsigned i = 0; i < 4; i++)
        le[i] = (uint8_t)((l2 + 8) >> (8 * i));
    fwrite(le, 1, 4, f);
    fwrite(m2, 1, l2, f);
    for (unsigned i = 0; i < 4; i++)
        le[i] = (uint8_t)(l2 >> (8 * i));
    fwrite(le, 1, 4, f);
    fwrite("\x89YBS", 1, 4, f);
    assert_int_equal(fclose(f), 0);
}

/* The run takes half the share, and may take N_REC + 1 (some record
 * twice): scan_fit finds that the share fits and turns the cache on.  A
 * summary that counts ten times the units says that no unit is taken
 * twice, and the source believes it without reading the share: nothing
 * cached (a summary that lies costs the cache, never a request), the same
 * records in the same order.  A summary without a unit count (older
 * writers) says nothing: the share is read as before. */
static void test_units(void **st)
{
    (void)st;
    uint64_t peak = take(1u << 20, N_REC + 1, N_REC / 2, 0);
    assert_true(peak >= (uint64_t)N_REC / 2 * BODY);
    char alt[80];
    snprintf(alt, sizeof alt, "%s.units", path);
    with_units(alt, 10 * N_REC);
    uint64_t lied = take_from(alt, 1u << 20, N_REC + 1, N_REC / 2, 0);
    with_units(alt, 0);
    uint64_t none = take_from(alt, 1u << 20, N_REC + 1, N_REC / 2, 0);
    unlink(alt);
    assert_int_equal(lied, 0);
    assert_int_equal(none, peak);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fits),
        cmocka_unit_test(test_too_big),
        cmocka_unit_test(test_no_reuse),
        cmocka_unit_test(test_units),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
