/* yangblast: command dispatch.  Each command lives in src/cli/. */
#include "config.h"
#include "cli/cli.h"
#include "transport/transport.h"
#include "util/outfile.h"

#include <string.h>

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} COMMANDS[] = {
    {"synth", yb_cmd_synth, "synthesize a corpus (openconfig-acl workloads)"},
    {"corpus", yb_cmd_corpus, "inspect or convert corpora: info, cat, import"},
    {"run", yb_cmd_run, "replay a corpus against a target and report where the time goes"},
    {"serve", yb_cmd_serve, "run an embedded switch target (RESTCONF + gNMI, cost model, faults)"},
    {"capture", yb_cmd_capture, "extract requests from pcap/pcapng captures into a corpus"},
    {"experiment", yb_cmd_experiment, "the session study (sessions); find the capacity (sweep)"},
    {"compare", yb_cmd_compare, "two JSON reports side by side; exit 1 on a regression"},
    {"report", yb_cmd_report, "render JSON reports as one HTML page with plots"},
    {"merge", yb_cmd_merge, "merge the reports of a run's shards (run --shard) exactly"},
};

static void usage(FILE *f)
{
    fprintf(f, "Usage: yangblast COMMAND [OPTIONS]\n"
               "       yangblast COMMAND --help\n"
               "       yangblast --version\n\n"
               "Load-test the management plane of network switches (RESTCONF, gNMI).\n\n"
               "Commands:\n");
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        fprintf(f, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
    fprintf(f, "\nExit codes: 0 success; 1 a run failed --max-errors or --threshold, or compare\n"
               "found a regression;\n"
               "2 usage or input error; 3 runtime failure; 4 interrupted (SIGINT/SIGTERM).\n"
               "See yangblast(1) and yangblast-corpus(5).\n");
}

int main(int argc, char **argv)
{
    /* first: OpenSSL takes its allocator only before its first allocation */
    (void)yb_tls_mem_init();
    if (argc < 2) {
        usage(stderr);
        return YB_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return YB_EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        printf("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION);
        return YB_EXIT_OK;
    }
    /* an interrupted command leaves no temporary output file behind (run
     * and serve then catch SIGINT and SIGTERM to stop gracefully) */
    yb_outfile_clean_on_signals();
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (!strcmp(cmd, COMMANDS[i].name)) {
            yb_cli_set_command(COMMANDS[i].name);
            return COMMANDS[i].fn(argc - 1, argv + 1);
        }
    fprintf(stderr, "yangblast: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return YB_EXIT_USAGE;
}
