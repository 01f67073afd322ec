/* Open-loop schedules: the due times of a rate, a ramp and steps, and who
 * holds a step schedule's steps (schedule.h): the parsed schedule and each
 * copy hold a reference, each gives it back, the last frees them; a failed
 * parse holds nothing.  Under the sanitizer build a reference given back
 * twice is a double free and one never given back a leak. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "engine/schedule.h"

#define SEC UINT64_C(1000000000)

static uint64_t due(const yb_schedule *s, uint64_t g)
{
    uint64_t t = UINT64_MAX;
    assert_int_equal(yb_sched_due(s, g, &t), 0);
    return t;
}

static void test_rate_and_ramp_hold_nothing(void **st)
{
    (void)st;
    char err[256];
    yb_schedule s;
    assert_int_equal(yb_sched_parse("20", &s, err, sizeof err), 0);
    assert_int_equal(s.kind, YB_SCHED_RATE);
    assert_null(s.steps);
    assert_int_equal(due(&s, 40), 2 * SEC);
    assert_int_equal(yb_sched_n_steps(&s), 0);
    yb_sched_release(&s);
    assert_int_equal(s.kind, YB_SCHED_NONE);
    assert_int_equal(yb_sched_parse("ramp:10..30/2s", &s, err, sizeof err), 0);
    assert_null(s.steps);
    assert_int_equal(due(&s, 40), 2 * SEC); /* 10 + 30 / 2 x 2 s = 40 */
    assert_int_equal(yb_sched_length(&s), 2 * SEC);
    yb_sched_release(&s);
}

static void test_steps_due_and_length(void **st)
{
    (void)st;
    char err[256];
    yb_schedule s;
    assert_int_equal(yb_sched_parse("step:10@1s,100@2s,5@1s", &s, err, sizeof err), 0);
    assert_int_equal(s.kind, YB_SCHED_STEP);
    assert_int_equal(yb_sched_n_steps(&s), 3);
    assert_int_equal(due(&s, 0), 0);
    assert_int_equal(due(&s, 5), SEC / 2);
    assert_int_equal(due(&s, 10), SEC);            /* the second step's first */
    assert_int_equal(due(&s, 110), 2 * SEC);
    assert_int_equal(due(&s, 210), 3 * SEC);       /* the third's */
    uint64_t t;
    assert_int_equal(yb_sched_due(&s, 215, &t), -1); /* beyond the end */
    assert_int_equal(yb_sched_length(&s), 4 * SEC);
    assert_true(yb_sched_rate_at(&s, SEC + 1) == 100.0);
    assert_true(yb_sched_rate_at(&s, 4 * SEC) == 0.0);
    yb_sched_release(&s);
    assert_null(s.steps);
    assert_int_equal(s.kind, YB_SCHED_NONE);
    yb_sched_release(&s); /* an empty schedule: nothing to give back */
}

/* The steps outlive the schedule they were parsed into as long as a copy
 * holds them; views (assignments) read them while a holder lives. */
static void test_copies_share_the_steps(void **st)
{
    (void)st;
    char err[256];
    yb_schedule a, b, c;
    assert_int_equal(yb_sched_parse("step:10@1s,20@1s", &a, err, sizeof err), 0);
    yb_sched_copy(&b, &a);
    yb_sched_copy(&c, &b);
    assert_ptr_equal(b.steps, a.steps); /* shared, not duplicated */
    assert_ptr_equal(c.steps, a.steps);
    yb_schedule view = c; /* what an engine options copy holds */
    yb_sched_release(&a);
    assert_null(a.steps);
    assert_int_equal(due(&b, 20), 1500000000u);
    yb_sched_release(&b);
    assert_int_equal(due(&view, 10), SEC); /* c still holds them */
    assert_int_equal(yb_sched_length(&c), 2 * SEC);
    yb_sched_release(&c); /* the last reference: freed (a leak otherwise) */
    /* a copy of a schedule without steps holds nothing */
    assert_int_equal(yb_sched_parse("5", &a, err, sizeof err), 0);
    yb_sched_copy(&b, &a);
    assert_null(b.steps);
    yb_sched_release(&a);
    yb_sched_release(&b);
}

/* Parsing again after giving back the first steps: the options' --rate
 * given twice. */
static void test_parse_again(void **st)
{
    (void)st;
    char err[256];
    yb_schedule s;
    assert_int_equal(yb_sched_parse("step:10@1s", &s, err, sizeof err), 0);
    yb_sched_release(&s);
    assert_int_equal(yb_sched_parse("step:10@1s,30@2s", &s, err, sizeof err), 0);
    assert_int_equal(yb_sched_n_steps(&s), 2);
    assert_int_equal(yb_sched_length(&s), 3 * SEC);
    yb_sched_release(&s);
}

/* A refused spec leaves the schedule empty and holds nothing (the steps
 * read before the error are freed). */
static void test_refused_hold_nothing(void **st)
{
    (void)st;
    static const char *const BAD[] = {"step:", "step:10@1s,,20@1s", "step:10@1s,x@2s",
                                      "step:10@1s,", "step:10@1s,20@2s,",
                                      "step:10@0s", "step:10", "ramp:10..20",
                                      "ramp:10..20/0s", "0", "fast"};
    char err[1024]; /* the message quotes the spec */
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        yb_schedule s;
        memset(&s, 0xa5, sizeof s);
        err[0] = 0;
        assert_int_equal(yb_sched_parse(BAD[i], &s, err, sizeof err), -1);
        assert_non_null(strstr(err, BAD[i]));
        assert_int_equal(s.kind, YB_SCHED_NONE);
        assert_null(s.steps);
        assert_true(s.from == 0.0);
    }
    /* YB_SCHED_MAX_STEPS steps are taken, one more is refused */
    char spec[2048];
    size_t l = (size_t)snprintf(spec, sizeof spec, "step:");
    for (int i = 0; i < YB_SCHED_MAX_STEPS; i++)
        l += (size_t)snprintf(spec + l, sizeof spec - l, "%s%d@1s", i ? "," : "", i + 1);
    yb_schedule s;
    assert_int_equal(yb_sched_parse(spec, &s, err, sizeof err), 0);
    assert_int_equal(yb_sched_n_steps(&s), YB_SCHED_MAX_STEPS);
    assert_int_equal(yb_sched_length(&s), YB_SCHED_MAX_STEPS * SEC);
    yb_sched_release(&s);
    snprintf(spec + l, sizeof spec - l, ",1@1s");
    assert_int_equal(yb_sched_parse(spec, &s, err, sizeof err), -1);
    assert_non_null(strstr(err, "at most 64"));
    assert_null(s.steps);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rate_and_ramp_hold_nothing),
        cmocka_unit_test(test_steps_due_and_length),
        cmocka_unit_test(test_copies_share_the_steps),
        cmocka_unit_test(test_parse_again),
        cmocka_unit_test(test_refused_hold_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
