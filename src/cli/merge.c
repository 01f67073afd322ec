/* yangblast merge REPORT.json...: the reports (and interval logs) of a
 * run's shards as the report of the whole run (report/merge.h). */
#include "config.h"
#include "cli/cli.h"
#include "cli/runopts.h"
#include "report/merge.h"
#include "report/report.h"
#include "util/util.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
    printf("Usage: yangblast merge [OPTIONS] REPORT.json...\n\n"
           "Merge the JSON reports of a run's shards (run --shard I/N --json) into the report\n"
           "of the whole run, exactly: histograms added slot by slot, counters and error\n"
           "reasons summed, per-second series aligned on the shards' wall-clock starts,\n"
           "per-target, per-workload and per-operation rows added by name.  Prints the text\n"
           "report a single run prints, then a table of the shards.\n\n"
           "      --json FILE         write the merged JSON report (yangblast-report(5);\n"
           "                          '-' = stdout)\n"
           "      --hlog FILE         write the merged HdrHistogram interval log, from the\n"
           "                          shards' logs: --hlog-in, or each REPORT.json's REPORT.hlog\n"
           "      --hlog-in FILE      a shard's interval log (run --hlog; repeatable)\n"
           "      --force             merge reports of different runs (run_id), duplicate or\n"
           "                          mismatched shards instead of refusing them (exit 2)\n"
           "      --tolerance D       warn when shards started more than D apart (default\n"
           "                          100ms)\n"
           "      --threshold EXPR    exit 1 unless EXPR holds on the merged run (run's\n"
           "                          grammar; target=/workload= on their merged rows:\n"
           "                          e2e latency, errors, rate, requests; repeatable)\n"
           "  -h, --help              this help\n\n"
           "See yangblast-merge(1).\n");
}

/* The interval logs to merge: those given, or one beside each report
 * (NAME.json -> NAME.hlog).  Returns a malloc'd array of n entries (each
 * malloc'd), or NULL with the message printed. */
static char **hlog_inputs(char **given, size_t n_given, char *const *reports, size_t n,
                          size_t *out_n)
{
    size_t k = n_given ? n_given : n;
    char **in = calloc(k, sizeof *in);
    if (!in) {
        yb_errorf("out of memory");
        return NULL;
    }
    for (size_t i = 0; i < k; i++) {
        const char *src = n_given ? given[i] : reports[i];
        size_t l = strlen(src);
        if (!n_given && (l < 5 || strcmp(src + l - 5, ".json"))) {
            yb_usage_error("merge", "--hlog: %s does not end in .json, so its interval log "
                           "cannot be found by name; give each log with --hlog-in", src);
            goto fail;
        }
        if (!(in[i] = malloc(l + 1))) {
            yb_errorf("out of memory");
            goto fail;
        }
        memcpy(in[i], src, l + 1);
        if (!n_given)
            memcpy(in[i] + l - 5, ".hlog", 5);
    }
    *out_n = k;
    return in;
fail:
    for (size_t i = 0; i < k; i++)
        free(in[i]);
    free(in);
    return NULL;
}

int yb_cmd_merge(int argc, char **argv)
{
    enum { O_JSON = 256, O_HLOG, O_HLOG_IN, O_FORCE, O_TOLERANCE, O_THRESHOLD };
    static const struct option opts[] = {{"json", required_argument, NULL, O_JSON},
                                         {"hlog", required_argument, NULL, O_HLOG},
                                         {"hlog-in", required_argument, NULL, O_HLOG_IN},
                                         {"force", no_argument, NULL, O_FORCE},
                                         {"tolerance", required_argument, NULL, O_TOLERANCE},
                                         {"threshold", required_argument, NULL, O_THRESHOLD},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    yb_merge_opts mo = {0, 100 * 1000 * 1000};
    const char *outs[2] = {NULL, NULL}; /* --json, --hlog */
    char **hlog_in = NULL, **hin = NULL;
    size_t n_hlog_in = 0, n_hin = 0;
    int c, ret = YB_EXIT_OK, rc;
    char err[1024];
    yb_merge m;
    memset(&m, 0, sizeof m);
    yb_thresholds th;
    yb_thresholds_init(&th);
    optind = 1;
    opterr = 0;
    if (!(hlog_in = calloc((size_t)argc, sizeof *hlog_in))) {
        yb_errorf("out of memory");
        return YB_EXIT_RUNTIME;
    }
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'h': help(); goto out;
        case O_JSON: outs[0] = optarg; break;
        case O_HLOG: outs[1] = optarg; break;
        case O_HLOG_IN: hlog_in[n_hlog_in++] = optarg; break;
        case O_FORCE: mo.force = 1; break;
        case O_THRESHOLD:
            if (yb_thresholds_add(&th, optarg, err, sizeof err) < 0) {
                ret = yb_usage_error("merge", "%s", err);
                goto out;
            }
            break;
        case O_TOLERANCE: {
            uint64_t ns;
            if (yb_parse_duration(optarg, &ns) < 0 || ns > (uint64_t)INT64_MAX) {
                ret = yb_usage_error("merge", "--tolerance '%s': expected %s", optarg,
                                     YB_FORMS_DURATION);
                goto out;
            }
            mo.tolerance_ns = (int64_t)ns;
            break;
        }
        default: ret = yb_bad_option("merge", c, argv); goto out;
        }
    }
    size_t n = (size_t)(argc - optind);
    if (n == 0) {
        ret = yb_usage_error("merge", "expected at least one JSON report");
        goto out;
    }
    if (n > YB_MERGE_MAX_INPUTS || n_hlog_in > YB_MERGE_MAX_INPUTS) {
        ret = yb_usage_error("merge", "at most %d reports and %d interval logs",
                             YB_MERGE_MAX_INPUTS, YB_MERGE_MAX_INPUTS);
        goto out;
    }
    if (n_hlog_in && !outs[1]) {
        ret = yb_usage_error("merge", "--hlog-in goes with --hlog FILE (the merged log)");
        goto out;
    }
    FILE *text;
    if ((ret = yb_check_outputs("merge", outs, 2, NULL, &text)))
        goto out;
    if (outs[1] && !(hin = hlog_inputs(hlog_in, n_hlog_in, argv + optind, n, &n_hin))) {
        ret = YB_EXIT_USAGE;
        goto out;
    }
    /* Every input is read and checked before any output is written, so a
     * bad input leaves the outputs as they were. */
    rc = yb_merge_reports(&m, (const char *const *)(argv + optind), n, &mo, err, sizeof err);
    if (rc < 0) {
        yb_errorf("%s", err);
        ret = rc == -1 ? YB_EXIT_USAGE : YB_EXIT_RUNTIME;
        goto out;
    }
    long th_failed = th.n ? yb_merge_thresholds(&m, &th, err, sizeof err) : 0;
    if (th_failed < 0) {
        if (th_failed == -1) {
            ret = yb_usage_error("merge", "%s", err);
        } else {
            yb_errorf("out of memory");
            ret = YB_EXIT_RUNTIME;
        }
        goto out;
    }
    for (size_t i = 0; i < m.n_warn; i++)
        yb_errorf("WARNING: %s", m.warn[i]);
    if (outs[1]) {
        rc = yb_merge_hlogs(outs[1], (const char *const *)hin, n_hin, err, sizeof err);
        if (rc < 0) {
            yb_errorf("%s", err);
            ret = rc == -1 ? YB_EXIT_USAGE : YB_EXIT_RUNTIME;
            goto out;
        }
    }
    if (outs[0]) {
        json_t *j = yb_merge_json(&m);
        if (j && th.n && yb_thresholds_json(j, &th) < 0) {
            json_decref(j);
            j = NULL;
        }
        if (!j || yb_write_json_file(outs[0], j, err, sizeof err) < 0) {
            yb_errorf("%s", j ? err : "cannot build the merged JSON report");
            ret = YB_EXIT_RUNTIME;
        }
        json_decref(j);
    }
    if (yb_merge_text(text, &m) < 0 || yb_thresholds_text(text, &th, NULL) < 0 ||
        fflush(text) == EOF)
        ret = YB_EXIT_RUNTIME;
    if (ret == YB_EXIT_OK && th_failed > 0)
        ret = YB_EXIT_THRESHOLD;
out:
    yb_merge_free(&m);
    for (size_t i = 0; hin && i < n_hin; i++)
        free(hin[i]);
    free(hin);
    free(hlog_in);
    return ret;
}
