/* libFuzzer target: the untrusted inputs of `compare` and `--threshold`.
 *
 * The input is read as a JSON report (yb_compare_check, as `compare` reads
 * BASE.json and NEW.json): a report it accepts is compared with itself
 * (oracle: like runs, no regression under a 0% limit, every delta 0) and
 * with a small seed report, both rendered as text and JSON.  The
 * same bytes (up to 512, as one string) are also parsed as a --threshold
 * expression, and an accepted one rendered as the report's JSON does. */
#include "config.h"
#include "report/compare.h"
#include "report/threshold.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *devnull;
static json_t *seed;

/* A small report of the shape `run --json` writes. */
static const char SEED[] =
    "{\"schema\":\"yangblast-report/1\",\"run\":{\"corpus\":\"c.ybc\",\"target\":"
    "\"http://127.0.0.1:8443\",\"concurrency\":2,\"sessions\":\"reuse\"},\"summary\":"
    "{\"rate_per_s\":700.5,\"requests_ok\":200,\"requests_completed\":201,\"requests_error\":1,"
    "\"duration_s\":0.28},\"cpu\":{\"per_request_us\":130.7},\"latency_us\":{\"e2e\":"
    "{\"count\":200,\"p50\":2139,\"p90\":3275,\"p99\":11191,\"p99_9\":11479,\"max\":11479,"
    "\"mean\":2647.1},\"ttfb\":{\"count\":200,\"p50\":2000,\"p90\":3000,\"p99\":11000,"
    "\"p99_9\":11400,\"max\":11400,\"mean\":2600.5}},\"interrupted\":false}";

static void fail(const char *what)
{
    fprintf(stderr, "oracle: %s\n", what);
    abort();
}

static void init(void)
{
    devnull = fopen("/dev/null", "w");
    char err[1024];
    json_error_t je;
    seed = json_loads(SEED, 0, &je);
    if (!devnull || !seed || yb_compare_check("seed", seed, err, sizeof err) < 0)
        fail("the seed report");
}

static void render(yb_comparison *c)
{
    if (yb_compare_text(devnull, c) < 0)
        fail("text");
    json_t *j = yb_compare_json(c);
    if (!j)
        fail("json");
    char *s = json_dumps(j, JSON_COMPACT);
    free(s);
    json_decref(j);
}

static void as_report(const uint8_t *data, size_t size)
{
    json_error_t je;
    json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
    char err[1024], unlike[1024];
    if (!j)
        return;
    if (yb_compare_check("in.json", j, err, sizeof err) < 0) {
        json_decref(j);
        return;
    }
    yb_compare_opts o;
    yb_compare_opts_init(&o);
    if (yb_compare_add_limit(&o, "0%", err, sizeof err) < 0 ||
        yb_compare_add_limit(&o, "ttfb.p99=0%", err, sizeof err) < 0)
        fail("limits");
    yb_comparison *c = yb_compare_new(j, j, "in.json", "in.json", &o);
    if (!c)
        fail("out of memory");
    if (yb_compare_unlike(c, unlike, sizeof unlike) || yb_compare_regressions(c))
        fail("a report differs from itself");
    render(c);
    yb_compare_free(c);
    if (!(c = yb_compare_new(seed, j, "seed.json", "in.json", &o)))
        fail("out of memory");
    yb_compare_unlike(c, unlike, sizeof unlike);
    render(c);
    yb_compare_free(c);
    json_decref(j);
}

static void as_threshold(const uint8_t *data, size_t size)
{
    char expr[513], err[1400];
    size_t n = size < 512 ? size : 512;
    memcpy(expr, data, n);
    expr[n] = 0;
    yb_thresholds ts;
    yb_thresholds_init(&ts);
    if (yb_thresholds_add(&ts, expr, err, sizeof err) < 0)
        return;
    json_t *j = json_object();
    if (!j || yb_thresholds_json(j, &ts) < 0)
        fail("threshold json");
    json_decref(j);
    yb_thresholds_cleanup(&ts);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!devnull)
        init();
    as_report(data, size);
    as_threshold(data, size);
    return 0;
}
