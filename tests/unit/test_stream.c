/* Streamed outputs: a log reader that cannot keep up costs counted
 * lines, never a blocked worker; hostile reason bytes keep every line
 * one valid line; the streamed series and .hlog hold
 * exactly what the end-of-run writers produce from the merged recorder,
 * also when a worker could not hand every second over in time. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "report/report.h"
#include "report/stream.h"

#define MS UINT64_C(1000000)
#define SEC UINT64_C(1000000000)

static char dir[64];

static int setup(void **st)
{
    (void)st;
    snprintf(dir, sizeof dir, "/tmp/yb-stream.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **st)
{
    (void)st;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static char *path_of(const char *name)
{
    static char p[4][128];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

/* Reads the whole file (caller frees). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, n, m);
    fclose(m);
    fclose(f);
    return buf;
}

typedef struct {
    int fd;
    uint64_t lines;
} reader;

static void *read_all(void *arg)
{
    reader *r = arg;
    char buf[65536];
    ssize_t n;
    while ((n = read(r->fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        for (ssize_t i = 0; i < n; i++)
            r->lines += buf[i] == '\n';
    return NULL;
}

/* The log goes to a FIFO nobody reads yet: the writer soon blocks on it,
 * the worker's ring fills, and every further line is dropped and counted,
 * without the worker ever waiting.  Lines written + dropped = handed over. */
static void test_log_drops_counted(void **st)
{
    (void)st;
    const char *fifo = path_of("log.fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    reader rd = {open(fifo, O_RDONLY | O_NONBLOCK), 0};
    assert_true(rd.fd >= 0);
    char err[256];
    yb_stream_opts o = {.log = fifo};
    yb_stream *s = yb_stream_open(&o, err, sizeof err);
    assert_non_null(s);
    assert_int_equal(yb_stream_lanes(s, 1, err, sizeof err), 0);
    uint64_t start = uv_hrtime();
    assert_int_equal(yb_stream_launch(s, err, sizeof err), 0);
    yb_stream_start(s, start);
    yb_stream_lane *l = yb_stream_lane_of(s, 0);
    assert_true(yb_stream_logs(l));
    const uint64_t N = 5 * YB_STREAM_RING;
    yb_result res;
    memset(&res, 0, sizeof res);
    res.due = res.send_start = start + MS;
    res.done = start + 2 * MS;
    res.status = 200;
    res.grpc_status = -1;
    uint64_t t0 = uv_hrtime();
    for (uint64_t i = 0; i < N; i++)
        yb_stream_result(l, &res, i, i, 1, 0, 0);
    /* handing over never waits for the disk (generous: 40k copies) */
    assert_true(uv_hrtime() - t0 < 2 * SEC);
    int fl = fcntl(rd.fd, F_GETFL);
    fcntl(rd.fd, F_SETFL, fl & ~O_NONBLOCK);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, read_all, &rd), 0);
    assert_int_equal(yb_stream_end(s, NULL, err, sizeof err), 0);
    yb_stream_stats sst;
    assert_int_equal(yb_stream_close(s, &sst, err, sizeof err), 0);
    pthread_join(th, NULL);
    close(rd.fd);
    yb_stream_free(s);
    assert_true(sst.log_dropped > 0);
    assert_int_equal(sst.log_lines, rd.lines);
    assert_int_equal(sst.log_lines + sst.log_dropped, N);
}

/* Reasons carry bytes from the network: whatever they hold, a JSON line
 * stays one valid line and a CSV row one row with the text intact. */
static void test_log_hostile_reasons(void **st)
{
    (void)st;
    static const char *const REASONS[] = {
        "grpc 3 INVALID_ARGUMENT: \"quoted\", back\\slash,\ttab\r\nnew line \x01\x7f",
        "http 409: caf\xc3\xa9 \xe2\x82\xac",   /* valid UTF-8 passes as it is */
        "closed: \xff\xfe bytes \xc3",           /* not UTF-8: non-ASCII becomes '?' */
    };
    static const char *const WANT[] = {
        "grpc 3 INVALID_ARGUMENT: \"quoted\", back\\slash,\ttab\r\nnew line \x01\x7f",
        "http 409: caf\xc3\xa9 \xe2\x82\xac",
        "closed: ?? bytes ?",
    };
    for (int csv = 0; csv <= 1; csv++) {
        char err[256];
        yb_stream_opts o = {.log = path_of(csv ? "h.csv" : "h.jsonl"), .log_csv = csv};
        yb_stream *s = yb_stream_open(&o, err, sizeof err);
        assert_non_null(s);
        assert_int_equal(yb_stream_lanes(s, 1, err, sizeof err), 0);
        uint64_t start = uv_hrtime();
        assert_int_equal(yb_stream_launch(s, err, sizeof err), 0);
        yb_stream_start(s, start);
        for (size_t i = 0; i < 3; i++) {
            yb_result res;
            memset(&res, 0, sizeof res);
            res.due = res.send_start = start + MS;
            res.done = start + 2 * MS;
            res.grpc_status = -1;
            res.err = YB_ERR_STATUS;
            snprintf(res.reason, sizeof res.reason, "%s", REASONS[i]);
            yb_stream_result(yb_stream_lane_of(s, 0), &res, i, i, 0, 0, 0);
        }
        assert_int_equal(yb_stream_end(s, NULL, err, sizeof err), 0);
        yb_stream_stats sst;
        assert_int_equal(yb_stream_close(s, &sst, err, sizeof err), 0);
        yb_stream_free(s);
        assert_int_equal(sst.log_lines, 3);
        char *text = slurp(o.log), *save = NULL, *ln = strtok_r(text, "\n", &save);
        if (csv) {
            /* the checks of the CSV text live in tests/run/stream.sh
             * (python's csv reader); here: the header, then rows whose
             * quoted reason doubles its quotes */
            assert_non_null(ln);
            assert_non_null(strstr(text + strlen(ln) + 1, "\"grpc 3 INVALID_ARGUMENT: \"\"quoted\"\", back\\slash"));
            free(text);
            continue;
        }
        for (size_t i = 0; i < 3; i++, ln = strtok_r(NULL, "\n", &save)) {
            assert_non_null(ln);
            json_error_t je;
            json_t *j = json_loads(ln, 0, &je);
            assert_non_null(j);
            assert_string_equal(json_string_value(json_object_get(j, "reason")), WANT[i]);
            assert_string_equal(json_string_value(json_object_get(j, "error")), "status");
            assert_true(json_is_null(json_object_get(j, "session")));
            json_decref(j);
        }
        assert_null(ln);
        free(text);
    }
}

/* One finished request completing at `at` (ns after start), e2e `lat`. */
static void add(yb_recorder *r, uint64_t at, uint64_t lat, int err)
{
    yb_result res;
    memset(&res, 0, sizeof res);
    res.done = r->run_start + at;
    res.due = res.send_start = res.done - lat;
    res.sent = res.send_start + 1000;
    res.first_byte = res.done;
    res.bytes_out = 100;
    res.bytes_in = 10;
    res.status = err ? 500 : 200;
    res.grpc_status = -1;
    res.err = err ? YB_ERR_STATUS : YB_ERR_NONE;
    yb_recorder_add(r, &res);
}

/* Hands w's sealed seconds to its lane as a worker does (at most `cap`
 * in all: a lane that could not hand the rest over in time). */
static void hand(yb_recorder *r, yb_stream_lane *l, uint64_t *handed, uint64_t cap)
{
    while (*handed < r->sealed && *handed < cap && yb_stream_second(l, &r->iv[*handed]) == 0)
        (*handed)++;
}

/* Every line of file (after skipping lines starting with "#[StartTime"). */
static char *without_start_line(const char *text)
{
    char *out = strdup(text), *w = out;
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p + 1) : strlen(p);
        if (strncmp(p, "#[StartTime", 11)) {
            memcpy(w, p, n);
            w += n;
        }
        p += n;
    }
    *w = 0;
    return out;
}

static void run_seconds(uint64_t cap_b)
{
    char err[256];
    yb_stream_opts o = {.series = path_of("s.jsonl"), .hlog = path_of("s.hlog")};
    yb_stream *s = yb_stream_open(&o, err, sizeof err);
    assert_non_null(s);
    assert_int_equal(yb_stream_lanes(s, 2, err, sizeof err), 0);
    yb_recorder a, b, merged;
    assert_int_equal(yb_recorder_init(&a), 0);
    assert_int_equal(yb_recorder_init(&b), 0);
    assert_int_equal(yb_recorder_init(&merged), 0);
    uint64_t start = uv_hrtime();
    a.run_start = b.run_start = start;
    assert_int_equal(yb_stream_launch(s, err, sizeof err), 0);
    yb_stream_start(s, start);
    uint64_t ha = 0, hb = 0;
    /* six seconds: a busy in all but the 4th, b only in the 1st and 5th;
     * b ends in its 5th second, a in its 6th */
    for (uint64_t sec = 0; sec < 6; sec++) {
        for (int i = 0; i < 50 && sec != 3; i++)
            add(&a, sec * SEC + (uint64_t)i * 10 * MS + 5 * MS, (uint64_t)(i + 1) * 100000, i == 7);
        if (sec == 0 || sec == 4)
            for (int i = 0; i < 30; i++)
                add(&b, sec * SEC + (uint64_t)i * 20 * MS + 7 * MS, 3 * MS + (uint64_t)i * MS, 0);
        if (sec == 4) {
            yb_recorder_seal(&b, start + sec * SEC + 700 * MS, 1);
            hand(&b, yb_stream_lane_of(s, 1), &hb, cap_b);
            yb_stream_lane_end(yb_stream_lane_of(s, 1), b.sealed);
        } else if (sec < 4) {
            yb_recorder_seal(&b, start + (sec + 1) * SEC + MS, 0);
            hand(&b, yb_stream_lane_of(s, 1), &hb, cap_b);
        }
        if (sec == 5)
            yb_recorder_seal(&a, start + sec * SEC + 900 * MS, 1); /* a ends */
        else
            yb_recorder_seal(&a, start + (sec + 1) * SEC + MS, 0);
        hand(&a, yb_stream_lane_of(s, 0), &ha, UINT64_MAX);
        /* a result timed in a sealed second: counts in the open one, so
         * what was handed over stays true */
        if (sec == 2)
            add(&a, 1 * SEC + 500 * MS, 2 * MS, 0);
    }
    yb_stream_lane_end(yb_stream_lane_of(s, 0), a.sealed);
    assert_int_equal(yb_recorder_finish(&a), 0);
    assert_int_equal(yb_recorder_finish(&b), 0);
    assert_int_equal(yb_recorder_merge(&merged, &a), 0);
    assert_int_equal(yb_recorder_merge(&merged, &b), 0);
    assert_int_equal(merged.n_iv, 6);
    assert_int_equal(yb_stream_end(s, &merged, err, sizeof err), 0);
    yb_stream_stats sst;
    assert_int_equal(yb_stream_close(s, &sst, err, sizeof err), 0);
    yb_stream_free(s);
    assert_int_equal(sst.seconds, 6);
    assert_int_equal(sst.seconds_late, cap_b < 5 ? 6 - cap_b : 0);

    /* the series: one line per second, each the report's interval object */
    char *series = slurp(o.series), *want = NULL;
    size_t wlen = 0;
    FILE *m = open_memstream(&want, &wlen);
    for (size_t i = 0; i < merged.n_iv; i++) {
        json_t *j = yb_report_interval_json(&merged.iv[i]);
        char *t = json_dumps(j, JSON_COMPACT);
        fprintf(m, "%s\n", t);
        free(t);
        json_decref(j);
    }
    fclose(m);
    assert_string_equal(series, want);
    assert_non_null(strstr(series, "{\"t_s\":3,\"requests\":1,")); /* the late one */
    free(want);
    free(series);

    /* the .hlog: what the end-of-run writer makes of the merged recorder,
     * byte for byte but for the start time (taken at another moment) */
    const char *end_hlog = path_of("end.hlog");
    assert_int_equal(yb_report_hlog(end_hlog, &merged, 1.0, err, sizeof err), 0);
    char *got = slurp(o.hlog), *exp = slurp(end_hlog);
    char *g = without_start_line(got), *e = without_start_line(exp);
    assert_string_equal(g, e);
    assert_non_null(strstr(got, "#[StartTime: "));
    free(g);
    free(e);
    free(got);
    free(exp);
    yb_recorder_cleanup(&a);
    yb_recorder_cleanup(&b);
    yb_recorder_cleanup(&merged);
}

static void test_seconds_match_end_of_run(void **st)
{
    (void)st;
    run_seconds(UINT64_MAX);
}

/* Worker b hands over only its first 2 seconds: the rest is written at the
 * end, from the merged recorder, and the files are the same. */
static void test_seconds_catch_up(void **st)
{
    (void)st;
    run_seconds(2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_log_drops_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_hostile_reasons, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seconds_match_end_of_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seconds_catch_up, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
