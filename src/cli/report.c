/* yangblast report: render saved JSON reports as one HTML page. */
#include "config.h"
#include "cli/cli.h"
#include "report/html.h"

#include <getopt.h>
#include <stdlib.h>

#define MAX_INPUTS 1024

static void help(void)
{
    printf("Usage: yangblast report RUN.json [RUN2.json ...] -o FILE [OPTIONS]\n\n"
           "Render JSON reports (run --json, experiment --json; yangblast-report(5)) as one\n"
           "self-contained HTML page: the study's tables, the settings, throughput and\n"
           "latency per second, the latency percentile distributions with the runs\n"
           "overlaid, the phase breakdown, errors.  The page needs no network and no\n"
           "script: styles are inline, plots are inline SVG.\n\n"
           "  -o, --output FILE       the page to write ('-' = stdout)\n"
           "      --title TEXT        the page's title (default \"yangblast report\")\n"
           "  -h, --help              this help\n");
}

int yb_cmd_report(int argc, char **argv)
{
    enum { O_TITLE = 256 };
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"title", required_argument, NULL, O_TITLE},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *out = NULL, *title = NULL;
    int c, ret = YB_EXIT_OK;
    optind = 1;
    opterr = 0; /* option errors are worded by yb_bad_option */
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case O_TITLE: title = optarg; break;
        case 'h': help(); return YB_EXIT_OK;
        default: return yb_bad_option("report", c, argv);
        }
    }
    if (!out)
        return yb_usage_error("report", "missing -o FILE (the HTML page to write)");
    size_t n = (size_t)(argc - optind);
    if (n == 0)
        return yb_usage_error("report", "expected at least one JSON report");
    if (n > MAX_INPUTS)
        return yb_usage_error("report", "at most %d JSON reports", MAX_INPUTS);
    json_t **docs = calloc(n, sizeof *docs);
    if (!docs) {
        yb_errorf("out of memory");
        return YB_EXIT_RUNTIME;
    }
    const char *const *names = (const char *const *)(argv + optind);
    char err[1024];
    for (size_t i = 0; i < n; i++)
        if (!(docs[i] = yb_html_load(names[i], err, sizeof err))) {
            yb_errorf("%s", err);
            ret = YB_EXIT_USAGE;
            goto out;
        }
    int rc = yb_html_report(out, docs, names, n, title, err, sizeof err);
    if (rc < 0) {
        yb_errorf("%s", err);
        ret = rc == -1 ? YB_EXIT_USAGE : YB_EXIT_RUNTIME;
    }
out:
    for (size_t i = 0; i < n; i++)
        json_decref(docs[i]);
    free(docs);
    return ret;
}
