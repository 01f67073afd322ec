/* libFuzzer target: the untrusted inputs of `merge` -- JSON reports and
 * HdrHistogram interval logs.
 *
 * The input is read as a JSON report and merged with itself (--force, so
 * that a shard block does not make it a duplicate): an accepted report
 * must merge into exactly twice its counts, and the merged report, written
 * as JSON, must be a report compare accepts and merge accepts again with
 * the same counts.  The same bytes are read as an interval log, twice: an
 * accepted log's merge, written out, must be read back. */
#include "config.h"
#include "report/compare.h"
#include "report/merge.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *devnull;

static void fail(const char *what)
{
    fprintf(stderr, "oracle: %s\n", what);
    abort();
}

static uint64_t summary(const json_t *j, const char *key)
{
    return (uint64_t)json_integer_value(json_object_get(json_object_get(j, "summary"), key));
}

static void as_report(const uint8_t *data, size_t size)
{
    json_error_t je;
    json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
    char err[1024];
    yb_merge_opts o = {1, 100000000};
    yb_merge m, again;
    if (!j)
        return;
    json_t *docs[2] = {j, j};
    const char *names[2] = {"a.json", "b.json"};
    int rc = yb_merge_docs(&m, docs, names, 2, &o, err, sizeof err);
    if (rc == -2)
        fail("out of memory");
    if (rc == 0) {
        if (m.rec.completed != 2 * summary(j, "requests_completed") ||
            m.rec.ok != 2 * summary(j, "requests_ok"))
            fail("a report merged with itself is not twice itself");
        if (yb_merge_text(devnull, &m) < 0)
            fail("text");
        json_t *out = yb_merge_json(&m);
        if (!out)
            fail("json");
        if (yb_compare_check("merged.json", out, err, sizeof err) < 0) {
            fprintf(stderr, "%s\n", err);
            fail("compare refuses the merged report");
        }
        json_t *one[1] = {out};
        const char *on[1] = {"merged.json"};
        if (yb_merge_docs(&again, one, on, 1, &o, err, sizeof err) < 0) {
            fprintf(stderr, "%s\n", err);
            fail("merge refuses its own report");
        }
        if (again.rec.completed != m.rec.completed ||
            yb_hdr_count(again.rec.h[YB_H_E2E]) != yb_hdr_count(m.rec.h[YB_H_E2E]))
            fail("the merged report read back differs");
        yb_merge_free(&again);
        json_decref(out);
    }
    yb_merge_free(&m);
    json_decref(j);
}

static void as_hlog(const uint8_t *data, size_t size)
{
    const char *bufs[2] = {(const char *)data, (const char *)data};
    size_t lens[2] = {size, size};
    const char *names[2] = {"a.hlog", "b.hlog"};
    char err[1024], *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    if (!f)
        fail("out of memory");
    int rc = yb_merge_hlog_bufs(f, bufs, lens, names, 2, err, sizeof err);
    if (fclose(f) != 0 || rc == -2)
        fail("out of memory");
    if (rc == 0) {
        const char *b1[1] = {out};
        size_t l1[1] = {outlen};
        const char *n1[1] = {"merged.hlog"};
        if (yb_merge_hlog_bufs(NULL, b1, l1, n1, 1, err, sizeof err) < 0) {
            fprintf(stderr, "%s\n", err);
            fail("merge refuses its own interval log");
        }
    }
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!devnull && !(devnull = fopen("/dev/null", "w")))
        fail("/dev/null");
    as_report(data, size);
    as_hlog(data, size);
    return 0;
}
