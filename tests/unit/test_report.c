/* Report: the study's table numbers, the text sections, the JSON schema
 * and the atomic JSON file write, for a synthetic recorder. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/report.h"

#define MS UINT64_C(1000000)
#define SEC UINT64_C(1000000000)
#define T0 (UINT64_C(7000) * SEC)

/* 1000 ok requests of 14,500 bytes over exactly 2 s (500 completing in
 * each second), each 4 ms end to end; 10 of them opened a TLS session;
 * plus 3 timeouts (each after sending 999 bytes) and 2 refusals that
 * sent nothing; the failures' bytes are in no study figure. */
static int setup(void **st)
{
    yb_recorder *r = test_malloc(sizeof(*r));

    if (yb_recorder_init(r) != 0)
        return -1;
    r->run_start = T0 + 4 * MS; /* the first completion is at second 0.000 */
    for (int i = 0; i < 1000; i++) {
        yb_result res;

        memset(&res, 0, sizeof(res));
        res.due = T0 + (uint64_t)i * 2 * MS;
        res.send_start = res.due;
        if (i % 100 == 0) {
            res.conn_start = res.send_start;
            res.connected = res.conn_start + 1 * MS;
            res.tls_done = res.connected + 1 * MS;
            res.tls_resumed = i >= 500;
        }
        res.sent = res.send_start + 2 * MS + 100 * 1000;
        res.first_byte = res.send_start + 3 * MS;
        res.done = res.due + 4 * MS;
        res.bytes_out = 14500;
        res.bytes_in = 100;
        res.status = 200;
        res.grpc_status = -1;
        yb_recorder_add(r, &res);
    }
    for (int i = 0; i < 5; i++) {
        yb_result res;

        memset(&res, 0, sizeof(res));
        res.due = T0 + 100 * MS;
        res.send_start = res.due;
        res.done = res.due + 50 * MS;
        res.grpc_status = -1;
        res.err = i < 3 ? YB_ERR_TIMEOUT : YB_ERR_REFUSED;
        res.bytes_out = i < 3 ? 999 : 0;
        if (i < 3)
            snprintf(res.reason, sizeof res.reason, "timeout after 50ms (waiting for first byte)");
        yb_recorder_add(r, &res);
    }
    {
        /* two error responses kept: a text body and a binary one */
        yb_result res;
        memset(&res, 0, sizeof(res));
        res.err = YB_ERR_STATUS;
        res.status = 409;
        res.grpc_status = -1;
        res.done = T0 + 500 * MS;
        snprintf(res.reason, sizeof res.reason, "http 409");
        yb_recorder_error_body(r, &res, (const uint8_t *)"{\"e\":\r\n1}\n", 10);
        res.done = T0 + 600 * MS;
        yb_recorder_error_body(r, &res, (const uint8_t *)"\xff\x00\x01", 3);
    }
    r->started = 1007;
    r->cut_off = 2;
    r->retried = 4;
    r->run_end = r->run_start + 2 * SEC;
    *st = r;
    return 0;
}

static int teardown(void **st)
{
    yb_recorder_cleanup(*st);
    test_free(*st);
    return 0;
}

static yb_run_info info_for(const char *unit)
{
    yb_run_info info;

    memset(&info, 0, sizeof(info));
    info.corpus = "acl.ybc";
    info.target = "https://sw1:443";
    info.protocol = "restconf";
    info.sessions = "reuse";
    info.concurrency = 8;
    info.threads = 2;
    info.streams = 1;
    info.unit = unit;
    info.cpu_user_s = 0.75;
    info.cpu_sys_s = 0.25;
    info.max_errors = 10;
    return info;
}

__attribute__((noinline)) static char *render(int (*fn)(FILE *, const yb_recorder *, const yb_run_info *),
                    const yb_recorder *r, const yb_run_info *info)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    assert_int_equal(fn(f, r, info), 0);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static int table_plain(FILE *f, const yb_recorder *r, const yb_run_info *info)
{
    return yb_report_table(f, r, info, NULL);
}

static void test_table_numbers(void **st)
{
    yb_recorder *r = *st;
    yb_run_info info = info_for(NULL);
    char *text = render(table_plain, r, &info);
    char *row;
    unsigned long long n;
    double speed, data, dur, rate;

    assert_true(yb_report_duration_s(r) == 2.0);
    assert_memory_equal(text,
                        "# Requests | Avg Speed (MB/s) | Data (MB) | Duration (s) | Requests/s\n",
                        70);
    row = strchr(strchr(text, '\n') + 1, '\n') + 1; /* skip header and rule */
    assert_int_equal(sscanf(row, "%llu | %lf | %lf | %lf | %lf", &n, &speed, &data, &dur, &rate),
                     5);
    /* ok requests only (the 5 errors are not in # Requests) */
    assert_int_equal(n, 1000);
    assert_true(data == 14.50);
    assert_true(speed == 7.25);
    assert_true(dur == 2.0);
    assert_true(rate == 500.0);
    free(text);
}

/* The study's exact numbers, with only the 1000 ok requests recorded. */
static void test_table_study_numbers(void **st)
{
    yb_recorder r;
    yb_run_info info = info_for("ACL");
    char *text, *row;
    unsigned long long n;
    double speed, data, dur, rate;

    (void)st;
    assert_int_equal(yb_recorder_init(&r), 0);
    r.run_start = T0;
    r.run_end = T0 + 2 * SEC;
    r.ok = r.completed = r.started = 1000;
    r.bytes_out = r.ok_bytes_out = 1000 * 14500;
    text = render(table_plain, &r, &info);
    assert_memory_equal(text, "# Requests | Avg Speed (MB/s) | Data (MB) | Duration (s) |      ACL/s\n",
                        70);
    row = strchr(strchr(text, '\n') + 1, '\n') + 1;
    assert_int_equal(sscanf(row, "%llu | %lf | %lf | %lf | %lf", &n, &speed, &data, &dur, &rate),
                     5);
    assert_int_equal(n, 1000);
    assert_true(data == 14.50);
    assert_true(speed == 7.25);
    assert_true(dur == 2.0);
    assert_true(rate == 500.0);
    assert_non_null(strstr(row, "      7.25 |"));
    assert_non_null(strstr(row, "     14.50 |"));
    assert_non_null(strstr(row, "500.0\n"));
    free(text);

    /* Nothing ran: zeros, no division by zero. */
    yb_recorder_cleanup(&r);
    assert_int_equal(yb_recorder_init(&r), 0);
    text = render(table_plain, &r, NULL);
    assert_non_null(strstr(text, "Requests/s\n"));
    row = strchr(strchr(text, '\n') + 1, '\n') + 1;
    assert_int_equal(sscanf(row, "%llu | %lf | %lf | %lf | %lf", &n, &speed, &data, &dur, &rate),
                     5);
    assert_true(n == 0 && speed == 0.0 && data == 0.0 && dur == 0.0 && rate == 0.0);
    free(text);
    yb_recorder_cleanup(&r);
}

/* The count column of a latency row, or -1 when the row is absent. */
static long long row_count(const char *text, const char *label)
{
    char key[32];
    const char *p;
    long long n;

    snprintf(key, sizeof(key), "\n%s ", label);
    p = strstr(text, key);
    if (!p)
        return -1;
    assert_int_equal(sscanf(p + strlen(key), "%lld", &n), 1);
    return n;
}

static void test_text_sections(void **st)
{
    yb_recorder *r = *st;
    yb_run_info info = info_for("ACL");
    char *text = render(yb_report_text, r, &info);

    assert_memory_equal(text, "# Requests |", 12);
    assert_non_null(strstr(text, "ACL/s"));
    assert_non_null(strstr(text, "corpus acl.ybc"));
    assert_non_null(strstr(text, "target https://sw1:443"));
    assert_non_null(strstr(text, "closed loop"));
    assert_non_null(strstr(text, "cut off 2, unsent 0, retried 4\n"));
    assert_non_null(strstr(text, "Latency (ms)"));
    assert_non_null(strstr(text, "\nend-to-end "));
    /* latencies are of the 1000 successes; the 5 failures have their row */
    assert_int_equal(row_count(text, "end-to-end"), 1000);
    assert_int_equal(row_count(text, "failed e2e"), 5);
    assert_int_equal(row_count(text, "connect"), 10);
    assert_int_equal(row_count(text, "tls"), 10);
    assert_int_equal(row_count(text, "h2"), -1); /* nobody paid it: row omitted */
    assert_int_equal(row_count(text, "ttfb"), 1000);
    assert_int_equal(row_count(text, "write"), 1000);
    assert_non_null(strstr(text, "TLS handshakes: 5 full, 5 resumed"));
    assert_non_null(strstr(text, "Sessions opened: 10"));
    assert_non_null(strstr(text, "HTTP status: 200: 1000, none: 5\n"));
    assert_null(strstr(text, "gRPC status"));
    assert_non_null(strstr(text, "Errors: refused 2, timeout 3\n"));
    assert_non_null(strstr(text, "Error responses (the first 2, with up to 1024 bytes of each body):\n"
                                 "  [+0.496 s] http 409\n"
                                 "    {\"e\":\n"
                                 "    1}\n"
                                 "  [+0.596 s] http 409\n"
                                 "    (3 bytes, not text: base64 in the JSON report)\n"));
    /* distinct reasons, most frequent first; a reasonless error shows its class */
    assert_non_null(strstr(text, "Error reasons:\n"
                                 "           3  timeout after 50ms (waiting for first byte)\n"
                                 "           2  refused\n"));
    /* 1.0 s of CPU over 1005 completed requests */
    assert_non_null(strstr(text, "= 1.000 s; 995.0 us per request"));
    free(text);
}

static json_int_t jint(json_t *o, const char *path)
{
    char buf[128], *save = NULL, *tok;
    json_t *v = o;

    snprintf(buf, sizeof(buf), "%s", path);
    for (tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
        v = json_object_get(v, tok);
        assert_non_null(v);
    }
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}

static double jnum(json_t *o, const char *path)
{
    char buf[128], *save = NULL, *tok;
    json_t *v = o;

    snprintf(buf, sizeof(buf), "%s", path);
    for (tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
        v = json_object_get(v, tok);
        assert_non_null(v);
    }
    assert_true(json_is_number(v));
    return json_number_value(v);
}

static void test_json(void **st)
{
    yb_recorder *r = *st;
    yb_run_info info = info_for("ACL");
    json_t *j = yb_report_json(r, &info), *iv, *lat;
    const char *k;
    json_t *v;
    size_t n_err = 0;

    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "schema")), "yangblast-report/1");
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "run"), "corpus")),
                        "acl.ybc");
    assert_true(json_is_false(json_object_get(json_object_get(j, "run"), "tls_resume")));
    assert_int_equal(jint(j, "run.concurrency"), 8);
    assert_int_equal(jint(j, "summary.requests_ok"), 1000);
    assert_int_equal(jint(j, "summary.requests_completed"), 1005);
    assert_int_equal(jint(j, "summary.requests_started"), 1007);
    assert_int_equal(jint(j, "summary.requests_error"), 5);
    assert_int_equal(jint(j, "summary.requests_retried"), 4);
    assert_int_equal(jint(j, "summary.data_bytes"), 1000 * 14500);
    assert_int_equal(jint(j, "summary.data_in_bytes"), 1000 * 100);
    assert_int_equal(jint(j, "summary.all_data_bytes"), 1000 * 14500 + 3 * 999);
    assert_int_equal(jint(j, "summary.all_data_in_bytes"), 1000 * 100);
    assert_true(jnum(j, "summary.duration_s") == 2.0);
    assert_true(jnum(j, "summary.avg_speed_mbps") == 7.25);
    assert_true(jnum(j, "summary.rate_per_s") == 500.0);

    lat = json_object_get(j, "latency_us");
    assert_int_equal(json_object_size(lat), YB_H__COUNT);
    json_object_foreach(lat, k, v) {
        assert_non_null(json_object_get(v, "count"));
        assert_non_null(json_object_get(v, "min"));
        assert_non_null(json_object_get(v, "p50"));
        assert_non_null(json_object_get(v, "p90"));
        assert_non_null(json_object_get(v, "p99"));
        assert_non_null(json_object_get(v, "p99_9"));
        assert_non_null(json_object_get(v, "max"));
        assert_non_null(json_object_get(v, "mean"));
    }
    /* 1000 x 4 ms + 5 x 50 ms; 4000 µs is exact in the default layout */
    assert_int_equal(jint(j, "latency_us.e2e.count"), 1000);
    assert_int_equal(jint(j, "latency_us.e2e.min"), 4000);
    assert_int_equal(jint(j, "latency_us.e2e.p50"), 4001);
    assert_int_equal(jint(j, "latency_us.e2e.p99"), 4001);
    assert_int_equal(jint(j, "latency_us.e2e.max"), 4001);
    /* slot middles: 4001 for [4000, 4001] */
    assert_true(fabs(jnum(j, "latency_us.e2e.mean") - 4001.0) < 1e-6);
    /* the failures: 5 x 50 ms, 50000 in a 32-wide slot */
    assert_int_equal(jint(j, "latency_us.e2e_failed.count"), 5);
    assert_int_equal(jint(j, "latency_us.e2e_failed.max"), 50015);
    assert_int_equal(jint(j, "latency_us.service.count"), 1000);
    assert_int_equal(jint(j, "latency_us.connect.count"), 10);
    assert_int_equal(jint(j, "latency_us.connect.p50"), 1000);
    assert_int_equal(jint(j, "latency_us.h2.count"), 0);
    /* write starts after the set-up: 100 µs for the 10 that opened a
     * session, 2100 µs (2-wide slot) for the others */
    assert_int_equal(jint(j, "latency_us.write.min"), 100);
    assert_int_equal(jint(j, "latency_us.write.p50"), 2101);

    assert_int_equal(jint(j, "sessions.opened"), 10);
    assert_int_equal(jint(j, "sessions.tls_full"), 5);
    assert_int_equal(jint(j, "sessions.tls_resumed"), 5);
    assert_int_equal(jint(j, "status.200"), 1000);
    assert_int_equal(jint(j, "status.none"), 5);
    assert_int_equal(json_object_size(json_object_get(j, "grpc_status")), 0);
    json_object_foreach(json_object_get(j, "errors"), k, v) {
        if (!strcmp(k, "reasons"))
            continue;
        assert_true(json_is_integer(v));
        n_err++;
    }
    assert_int_equal(n_err, YB_ERR__COUNT - 1); /* every class but "none" */
    {
        json_t *rs = json_object_get(json_object_get(j, "errors"), "reasons");
        assert_true(json_is_array(rs));
        assert_int_equal(json_array_size(rs), 2);
        json_t *e0 = json_array_get(rs, 0), *e1 = json_array_get(rs, 1);
        assert_string_equal(json_string_value(json_object_get(e0, "class")), "timeout");
        assert_string_equal(json_string_value(json_object_get(e0, "reason")),
                            "timeout after 50ms (waiting for first byte)");
        assert_int_equal(jint(e0, "count"), 3);
        /* first seen 150 ms after T0, the run started at T0 + 4 ms */
        assert_true(fabs(jnum(e0, "first_s") - 0.146) < 1e-9);
        assert_string_equal(json_string_value(json_object_get(e1, "class")), "refused");
        assert_string_equal(json_string_value(json_object_get(e1, "reason")), "refused");
        assert_int_equal(jint(e1, "count"), 2);
    }
    assert_int_equal(jint(j, "errors.refused"), 2);
    assert_int_equal(jint(j, "errors.timeout"), 3);
    assert_int_equal(jint(j, "errors.tls"), 0);
    assert_true(jnum(j, "cpu.user_s") == 0.75);
    assert_true(jnum(j, "cpu.sys_s") == 0.25);
    assert_true(fabs(jnum(j, "cpu.per_request_us") - 1e6 / 1005.0) < 1e-6);
    assert_int_equal(jint(j, "cut_off"), 2);

    {
        json_t *er = json_object_get(j, "error_responses");
        assert_int_equal(json_array_size(er), 2);
        json_t *e0 = json_array_get(er, 0), *e1 = json_array_get(er, 1);
        assert_string_equal(json_string_value(json_object_get(e0, "body")), "{\"e\":\r\n1}\n");
        assert_int_equal(jint(e0, "status"), 409);
        assert_true(json_is_null(json_object_get(e0, "grpc_status")));
        assert_int_equal(jint(e0, "body_kept_bytes"), 10);
        assert_true(fabs(jnum(e0, "t_s") - 0.496) < 1e-9);
        assert_null(json_object_get(e1, "body"));
        assert_string_equal(json_string_value(json_object_get(e1, "body_base64")), "/wAB");
    }
    iv = json_object_get(j, "intervals");
    assert_true(json_is_array(iv));
    assert_int_equal(json_array_size(iv), 2);
    assert_int_equal(jint(json_array_get(iv, 0), "t_s"), 0);
    assert_int_equal(jint(json_array_get(iv, 0), "requests"), 505);
    assert_int_equal(jint(json_array_get(iv, 0), "errors"), 5);
    assert_int_equal(jint(json_array_get(iv, 1), "t_s"), 1);
    assert_int_equal(jint(json_array_get(iv, 1), "requests"), 500);
    assert_int_equal(jint(json_array_get(iv, 1), "errors"), 0);
    assert_int_equal(jint(json_array_get(iv, 1), "bytes_out"), 500 * 14500);
    assert_int_equal(jint(json_array_get(iv, 1), "bytes_in"), 500 * 100);
    json_decref(j);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static void test_json_file_atomic(void **st)
{
    yb_recorder *r = *st;
    yb_run_info info = info_for(NULL);
    char dir[] = "/tmp/yb-report-XXXXXX", path[256], err[256];
    json_t *j = yb_report_json(r, &info), *back;
    json_error_t jerr;
    struct stat sb;
    FILE *f;

    assert_non_null(j);
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/out.json", dir);
    /* An old file is replaced whole. */
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("old", f);
    fclose(f);
    assert_int_equal(yb_write_json_file(path, j, err, sizeof(err)), 0);
    assert_int_equal(count_entries(dir), 1); /* no temporary left behind */
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0644);
    back = json_load_file(path, 0, &jerr);
    assert_non_null(back);
    {
        /* Reals are written with 15 digits: compare the texts, which
         * the same rendering makes identical. */
        size_t flags = JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15);
        char *a = json_dumps(back, flags), *b = json_dumps(j, flags);

        assert_non_null(a);
        assert_non_null(b);
        assert_string_equal(a, b);
        free(a);
        free(b);
    }
    assert_int_equal(json_integer_value(json_object_get(json_object_get(back, "summary"),
                                                        "requests_ok")),
                     1000);
    json_decref(back);

    /* Failure: an unwritable place leaves nothing and says why. */
    snprintf(path, sizeof(path), "%s/missing/out.json", dir);
    assert_int_equal(yb_write_json_file(path, j, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "missing/out.json"));
    assert_int_equal(yb_write_json_file(NULL, j, err, sizeof(err)), -1);
    snprintf(path, sizeof(path), "%s/", dir);
    assert_int_equal(yb_write_json_file(path, j, err, sizeof(err)), -1);
    assert_int_equal(count_entries(dir), 1);

    snprintf(path, sizeof(path), "%s/out.json", dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
    json_decref(j);
}

/* Send lateness split at the hand-over to the pool: 100 requests at
 * 100/s, each handed over `gen` after its due time and sent `wait` after
 * that; the self-check blames the generator only for its own part. */
static void lateness_run(yb_recorder *r, uint64_t gen, uint64_t wait)
{
    assert_int_equal(yb_recorder_init(r), 0);
    r->run_start = T0;
    for (int i = 0; i < 100; i++) {
        yb_result res;

        memset(&res, 0, sizeof(res));
        res.due = T0 + (uint64_t)i * 10 * MS;
        res.issued = res.due + gen;
        res.send_start = res.issued + wait;
        res.sent = res.send_start + 1000;
        res.first_byte = res.done = res.send_start + 3 * MS;
        res.status = 204;
        res.grpc_status = -1;
        yb_recorder_add(r, &res);
    }
    r->started = 100;
    r->run_end = T0 + 2 * SEC;
}

static void test_self_check_split(void **st)
{
    (void)st;
    yb_recorder r;
    yb_run_info info = info_for(NULL);
    yb_self_check c;

    info.rate = 100;
    info.threads = 1;
    info.cpu_user_s = info.cpu_sys_s = 0.01;
    /* the target is the limit: handed over on time, waited 50 ms */
    lateness_run(&r, 0, 50 * MS);
    yb_report_self_check(&r, &info, &c);
    assert_true(c.target_limited);
    assert_false(c.behind_schedule);
    assert_false(c.cpu_starved);
    assert_in_range(yb_hdr_percentile(r.h[YB_H_SESSION_WAIT], 99), 50000, 50100);
    assert_int_equal(yb_hdr_percentile(r.h[YB_H_GEN_LATE], 99), 1); /* on time: the floor */
    char *text = render(yb_report_text, &r, &info);
    assert_non_null(strstr(text, "the target or the chosen concurrency is the limit"));
    assert_null(strstr(text, "fell behind"));
    assert_null(strstr(text, "Add threads"));
    free(text);
    yb_recorder_cleanup(&r);

    /* the generator is the limit: a session was free, it handed over late,
     * using 1 % of its CPU: it woke late, and more threads would not help */
    lateness_run(&r, 50 * MS, 0);
    yb_report_self_check(&r, &info, &c);
    assert_false(c.target_limited);
    assert_true(c.behind_schedule);
    assert_false(c.cpu_saturated);
    text = render(yb_report_text, &r, &info);
    assert_non_null(strstr(text, "fell behind its own schedule"));
    assert_non_null(strstr(text, "It used 1% of its CPU and was not kept off it: it woke late"));
    assert_non_null(strstr(text, "--spin D"));
    assert_null(strstr(text, "Add threads"));
    free(text);
    /* ... busy: then more threads (or a lower rate) is the advice */
    info.cpu_user_s = 1.9;
    yb_report_self_check(&r, &info, &c);
    assert_true(c.cpu_saturated);
    text = render(yb_report_text, &r, &info);
    assert_non_null(strstr(text, "Add threads (-t)"));
    assert_null(strstr(text, "woke late"));
    free(text);
    info.cpu_user_s = 0.01;

    /* ... because others took its CPU: said so, not "add threads" */
    r.gen_run_ns = 100 * MS;
    r.gen_runq_wait_ns = 40 * MS; /* waited less than it ran: not starved */
    yb_report_self_check(&r, &info, &c);
    assert_false(c.cpu_starved);
    r.gen_runq_wait_ns = 300 * MS; /* waited 3 x as long as it ran */
    yb_report_self_check(&r, &info, &c);
    assert_true(c.cpu_starved);
    assert_true(fabs(c.runq_wait_share - 0.75) < 1e-9);
    text = render(yb_report_text, &r, &info);
    assert_non_null(strstr(text, "kept off its CPU by other processes or the hypervisor"));
    assert_null(strstr(text, "Add threads"));
    free(text);
    r.gen_runq_wait_ns = r.gen_run_ns = 0;
    r.cpu_ticks = 1000;
    r.cpu_steal_ticks = 100; /* the hypervisor took 10 % */
    yb_report_self_check(&r, &info, &c);
    assert_true(c.cpu_starved);
    r.cpu_steal_ticks = 0;
    r.gen_invol_switches = 1000; /* 500/s on one thread */
    yb_report_self_check(&r, &info, &c);
    assert_true(c.cpu_starved);
    yb_recorder_cleanup(&r);
}

/* The I/O path: from the threads' counts into the text's CPU line and
 * the JSON's cpu.io; not said when not known (a merge of old reports). */
static void test_io_path(void **st)
{
    (void)st;
    yb_recorder r;
    yb_run_info info = info_for(NULL);
    info.threads = 2;
    info.cpu_user_s = info.cpu_sys_s = 0.01;
    lateness_run(&r, 0, 0);
    static const struct {
        uint64_t known, ring;
        const char *io; /* NULL: not said */
    } CASES[] = {{2, 2, "io_uring"}, {2, 0, "epoll"}, {2, 1, "mixed"}, {0, 0, NULL}};
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        r.gen_io_threads = CASES[i].known;
        r.gen_ring_threads = CASES[i].ring;
        char *text = render(yb_report_text, &r, &info), want[64];
        json_t *j = yb_report_json(&r, &info), *cpu = json_object_get(j, "cpu");
        const char *line = strstr(text, "Generator CPU:");
        assert_non_null(line);
        if (CASES[i].io) {
            snprintf(want, sizeof want, "us per request; I/O %s\n", CASES[i].io);
            assert_non_null(strstr(line, want));
            assert_string_equal(json_string_value(json_object_get(cpu, "io")), CASES[i].io);
            assert_int_equal(json_integer_value(json_object_get(cpu, "io_uring_threads")),
                             CASES[i].ring);
        } else {
            assert_non_null(strstr(line, "us per request\n"));
            assert_null(json_object_get(cpu, "io"));
            assert_null(json_object_get(cpu, "io_uring_threads"));
        }
        json_decref(j);
        free(text);
    }
    yb_recorder_cleanup(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_table_numbers, setup, teardown),
        cmocka_unit_test(test_table_study_numbers),
        cmocka_unit_test_setup_teardown(test_text_sections, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_file_atomic, setup, teardown),
        cmocka_unit_test(test_self_check_split),
        cmocka_unit_test(test_io_path),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
