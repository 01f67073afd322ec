/* yangblast compare BASE.json NEW.json: two reports side by side, with
 * --max-regression turning a regression into exit 1 (report/compare.h). */
#include "config.h"
#include "cli/cli.h"
#include "cli/runopts.h"
#include "report/compare.h"
#include "report/report.h"

#include <getopt.h>
#include <string.h>

static void help(void)
{
    printf("Usage: yangblast compare BASE.json NEW.json [OPTIONS]\n\n"
           "Compare two JSON reports (run --json, or merged shards): the run settings that\n"
           "differ, then rate, errors, each phase's percentiles and the generator's CPU side\n"
           "by side with absolute and relative deltas.  Latency, errors and CPU up, or rate\n"
           "down, is worse.\n\n"
           "      --max-regression L  exit 1 when a figure got worse by more than L: P%% for\n"
           "                          rate, errors and e2e's percentiles and mean, or\n"
           "                          FIGURE=P%% for one figure (e2e.p99=5%%, ttfb.p99=10%%,\n"
           "                          cpu=20%%; repeatable)\n"
           "      --force             compare unlike runs (settings that shape the load\n"
           "                          differ) instead of refusing them (exit 2)\n"
           "      --json FILE         write the comparison as JSON ('-' = stdout)\n"
           "  -h, --help              this help\n\n"
           "See yangblast-compare(1).\n");
}

int yb_cmd_compare(int argc, char **argv)
{
    enum { O_MAXREG = 256, O_FORCE, O_JSON };
    static const struct option opts[] = {{"max-regression", required_argument, NULL, O_MAXREG},
                                         {"force", no_argument, NULL, O_FORCE},
                                         {"json", required_argument, NULL, O_JSON},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    yb_compare_opts co;
    yb_compare_opts_init(&co);
    const char *json = NULL;
    int force = 0, c, rc;
    char err[1024];
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'h': help(); return YB_EXIT_OK;
        case O_MAXREG:
            if (yb_compare_add_limit(&co, optarg, err, sizeof err) < 0)
                return yb_usage_error("compare", "%s", err);
            break;
        case O_FORCE: force = 1; break;
        case O_JSON: json = optarg; break;
        default: return yb_bad_option("compare", c, argv);
        }
    }
    if (optind + 2 != argc)
        return yb_usage_error("compare", "expected two reports: BASE.json NEW.json");
    const char *bn = argv[optind], *nn = argv[optind + 1];
    FILE *text;
    if ((rc = yb_check_outputs("compare", &json, 1, NULL, &text)))
        return rc;
    json_t *base = yb_compare_load(bn, err, sizeof err), *new = NULL;
    if (base)
        new = yb_compare_load(nn, err, sizeof err);
    if (!base || !new) {
        yb_errorf("%s", err);
        json_decref(base);
        return YB_EXIT_USAGE;
    }
    int ret = YB_EXIT_OK;
    yb_comparison *cmp = yb_compare_new(base, new, bn, nn, &co);
    if (!cmp) {
        yb_errorf("out of memory");
        ret = YB_EXIT_RUNTIME;
        goto out;
    }
    char unlike[1024];
    if (yb_compare_unlike(cmp, unlike, sizeof unlike)) {
        if (!force) {
            yb_errorf("%s and %s are unlike runs (%s): their deltas would mix the change under "
                      "test with these; --force compares them anyway", bn, nn, unlike);
            ret = YB_EXIT_USAGE;
            goto out;
        }
        yb_errorf("WARNING: unlike runs (%s), compared because of --force", unlike);
    }
    if (yb_compare_text(text, cmp) < 0)
        ret = YB_EXIT_RUNTIME;
    fflush(text);
    if (json) {
        json_t *j = yb_compare_json(cmp);
        if (j && json_object_set_new(j, "forced", json_boolean(force)) < 0) {
            json_decref(j);
            j = NULL;
        }
        if (!j || yb_write_json_file(json, j, err, sizeof err) < 0) {
            yb_errorf("%s", j ? err : "cannot build the JSON comparison");
            ret = YB_EXIT_RUNTIME;
        }
        json_decref(j);
    }
    if (ret == YB_EXIT_OK && yb_compare_regressions(cmp))
        ret = YB_EXIT_THRESHOLD;
out:
    yb_compare_free(cmp);
    json_decref(base);
    json_decref(new);
    return ret;
}
