/* The HTML report's pieces: nice ticks, tick labels and escaping
 * (report/svg.c), and the percentile curve the JSON report carries for
 * its plots (stats/hdr.c), which must be the rows of the .hgrm text. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/svg.h"
#include "stats/hdr.h"

static void ticks_are(double lo, double hi, size_t max, const double *want, size_t n_want,
                      double want_step)
{
    double t[32], step;
    size_t n = yb_svg_nice_ticks(lo, hi, max, t, 32, &step);
    assert_int_equal(n, n_want);
    assert_true(fabs(step - want_step) < 1e-12 * want_step);
    for (size_t i = 0; i < n; i++)
        assert_true(fabs(t[i] - want[i]) < 1e-9 * (fabs(want[i]) + 1));
}

static void test_nice_ticks_steps(void **st)
{
    (void)st;
    /* 1-2-5 steps only */
    ticks_are(0, 97, 5, (double[]){0, 20, 40, 60, 80, 100}, 6, 20);
    ticks_are(0, 1, 4, (double[]){0, 0.5, 1}, 3, 0.5);
    ticks_are(0, 7, 7, (double[]){0, 1, 2, 3, 4, 5, 6, 7}, 8, 1);
    ticks_are(3.2, 3.9, 4, (double[]){3.2, 3.4, 3.6, 3.8, 4.0}, 5, 0.2);
    ticks_are(0, 12000, 6, (double[]){0, 2000, 4000, 6000, 8000, 10000, 12000}, 7, 2000);
    /* an empty range is widened, a non-negative one stays so */
    ticks_are(0, 0, 5, (double[]){0, 0.2, 0.4, 0.6, 0.8, 1}, 6, 0.2);
    ticks_are(5, 5, 5, (double[]){2, 3, 4, 5, 6, 7, 8}, 7, 1);
    /* never more than cap, whatever the range */
    double t[4], step;
    assert_true(yb_svg_nice_ticks(0, 1e300, 1000, t, 4, &step) <= 4);
    assert_int_equal(yb_svg_nice_ticks(NAN, INFINITY, 5, t, 4, &step) >= 2, 1);
}

static void test_fmt_tick(void **st)
{
    (void)st;
    char b[32];
    assert_string_equal(yb_svg_fmt_tick(0.5, 0.5, b, sizeof b), "0.5");
    assert_string_equal(yb_svg_fmt_tick(0.25, 0.05, b, sizeof b), "0.25");
    assert_string_equal(yb_svg_fmt_tick(2000, 500, b, sizeof b), "2000");
    assert_string_equal(yb_svg_fmt_tick(20000, 5000, b, sizeof b), "20k");
    assert_string_equal(yb_svg_fmt_tick(2500000, 500000, b, sizeof b), "2500k");
    assert_string_equal(yb_svg_fmt_tick(3000000, 1000000, b, sizeof b), "3M");
    assert_string_equal(yb_svg_fmt_tick(0, 5000, b, sizeof b), "0k");
}

static void test_escape(void **st)
{
    (void)st;
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    yb_svg_escape(f, "<a href=\"x\">'&'</a>\x01\tok \xc3\xa9");
    yb_svg_escape(f, NULL);
    fclose(f);
    assert_string_equal(out, "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;\xef\xbf\xbd\tok \xc3\xa9");
    free(out);
}

static void test_styles_differ(void **st)
{
    (void)st;
    for (size_t i = 0; i < 40; i++)
        for (size_t k = i + 1; k < 40; k++)
            assert_false(!strcmp(yb_svg_colour(i), yb_svg_colour(k)) &&
                         !strcmp(yb_svg_dash(i), yb_svg_dash(k)));
}

/* The curve is the .hgrm rows: same percentiles, same values. */
static void test_curve_is_hgrm(void **st)
{
    (void)st;
    yb_hdr *h = yb_hdr_new_default();
    for (int i = 1; i <= 10000; i++)
        yb_hdr_record(h, i * 7 % 5003 + (i % 97 == 0 ? 100000 : 0));
    double pct[256];
    int64_t val[256];
    size_t n = yb_hdr_percentile_curve(h, pct, val, 256);
    assert_true(n > 20 && n < 256);
    assert_true(pct[n - 1] == 100.0 && val[n - 1] == yb_hdr_max(h));
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_int_equal(yb_hdr_write_hgrm(h, f, 1.0), 0);
    fclose(f);
    char *line = strchr(text, '\n') + 2; /* after the header and its blank line */
    for (size_t i = 0; i < n; i++) {
        double v, p;
        assert_int_equal(sscanf(line, "%lf %lf", &v, &p), 2);
        assert_true(fabs(v - (double)val[i]) < 0.001);
        assert_true(fabs(p * 100 - pct[i]) < 1e-9);
        line = strchr(line, '\n') + 1;
    }
    assert_int_equal(line[0], '#'); /* every row was in the curve */
    free(text);
    /* capped: still ends at the maximum */
    assert_int_equal(yb_hdr_percentile_curve(h, pct, val, 10), 10);
    assert_true(pct[9] == 100.0 && val[9] == yb_hdr_max(h));
    /* empty */
    yb_hdr_reset(h);
    assert_int_equal(yb_hdr_percentile_curve(h, pct, val, 256), 0);
    yb_hdr_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nice_ticks_steps), cmocka_unit_test(test_fmt_tick),
        cmocka_unit_test(test_escape),           cmocka_unit_test(test_styles_differ),
        cmocka_unit_test(test_curve_is_hgrm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
