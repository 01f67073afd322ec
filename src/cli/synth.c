/* yangblast synth acl: write a synthesized openconfig-acl corpus. */
#include "config.h"
#include "cli/cli.h"
#include "corpus/corpus.h"
#include "synth/acl.h"
#include "util/util.h"

#include <getopt.h>
#include <string.h>

static void help(void)
{
    printf("Usage: yangblast synth acl [OPTIONS] -o FILE\n\n"
           "Synthesize an openconfig-acl workload: each request creates (or replaces,\n"
           "reads, deletes) one ACL set of --rules IPv4 rules with a unique name.\n\n"
           "  -o, --output FILE       corpus to write (.ybc; '-' = stdout)\n"
           "  -p, --proto P           restconf (default) or gnmi\n"
           "  -n, --count N           number of requests (default 1000)\n"
           "  -r, --rules R           rules per ACL set (default %d for restconf, %d for\n"
           "                          gnmi: ~14.5 KB of request data per request)\n"
           "  -s, --seed S            seed for rule contents (default 1)\n"
           "      --op OP             create (default), replace, delete, get;\n"
           "                          gnmi only: subscribe, capabilities\n"
           "      --method M          RESTCONF create method: PATCH (default), POST, PUT\n"
           "      --mode M            subscribe mode: once (default), poll, stream\n"
           "      --sample-interval D STREAM SAMPLE interval (default 1s)\n"
           "      --polls N           POLL: Poll messages after the request (default 3)\n"
           "      --name-prefix P     ACL set names P_000001... (default YB_ACL)\n"
           "      --authority HOST    recorded authority / Host (default localhost)\n"
           "      --scheme S          recorded scheme: https (default) or http\n"
           "  -h, --help              this help\n",
           YB_SYNTH_DEFAULT_RULES_RESTCONF, YB_SYNTH_DEFAULT_RULES_GNMI);
}

static const char *const OP_NAMES[] = {"create", "replace", "delete", "get", "subscribe",
                                       "capabilities"};

static int parse_op(const char *s, yb_synth_op *op)
{
    for (size_t i = 0; i < sizeof OP_NAMES / sizeof OP_NAMES[0]; i++)
        if (!strcmp(s, OP_NAMES[i])) {
            *op = (yb_synth_op)i;
            return 0;
        }
    return -1;
}

int yb_cmd_synth(int argc, char **argv)
{
    enum { O_OP = 256, O_METHOD, O_MODE, O_SAMPLE, O_POLLS, O_PREFIX, O_AUTH, O_SCHEME };
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"proto", required_argument, NULL, 'p'},
        {"count", required_argument, NULL, 'n'},  {"rules", required_argument, NULL, 'r'},
        {"seed", required_argument, NULL, 's'},   {"op", required_argument, NULL, O_OP},
        {"method", required_argument, NULL, O_METHOD},
        {"mode", required_argument, NULL, O_MODE},
        {"sample-interval", required_argument, NULL, O_SAMPLE},
        {"polls", required_argument, NULL, O_POLLS},
        {"name-prefix", required_argument, NULL, O_PREFIX},
        {"authority", required_argument, NULL, O_AUTH},
        {"scheme", required_argument, NULL, O_SCHEME},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    yb_synth_acl_opts o;
    yb_synth_acl_defaults(&o);
    const char *out = NULL;
    uint64_t v;
    unsigned char given[O_SCHEME + 1] = {0};
    int c;
    optind = 1;
    opterr = 0; /* option errors are worded by yb_bad_option */
    while ((c = getopt_long(argc, argv, ":o:p:n:r:s:h", opts, NULL)) != -1) {
        if (c > 0 && c <= O_SCHEME)
            given[c] = 1;
        switch (c) {
        case 'o': out = optarg; break;
        case 'p':
            if (yb_proto_parse(optarg, &o.proto) < 0 ||
                (o.proto != YB_PROTO_RESTCONF && o.proto != YB_PROTO_GNMI))
                return yb_usage_error("synth", "--proto must be restconf or gnmi, not '%s'", optarg);
            break;
        case 'n':
            if (yb_parse_u64(optarg, 1, UINT32_MAX, &v) < 0)
                return yb_usage_error("synth", "--count must be an integer in 1..%u", UINT32_MAX);
            o.count = v;
            break;
        case 'r':
            if (yb_parse_u64(optarg, 0, 100000, &v) < 0)
                return yb_usage_error("synth", "--rules must be an integer in 0..100000");
            o.rules = (unsigned)v;
            break;
        case 's':
            if (yb_parse_u64(optarg, 0, UINT64_MAX, &v) < 0)
                return yb_usage_error("synth", "--seed must be a non-negative integer");
            o.seed = v;
            break;
        case O_OP:
            if (parse_op(optarg, &o.op) < 0)
                return yb_usage_error("synth", "unknown --op '%s'", optarg);
            break;
        case O_METHOD: o.method = optarg; break;
        case O_MODE:
            if (!strcmp(optarg, "once")) o.sub_mode = YB_SUB_ONCE;
            else if (!strcmp(optarg, "poll")) o.sub_mode = YB_SUB_POLL;
            else if (!strcmp(optarg, "stream")) o.sub_mode = YB_SUB_STREAM;
            else return yb_usage_error("synth", "--mode must be once, poll or stream");
            break;
        case O_SAMPLE:
            if (yb_parse_duration(optarg, &o.sample_ns) < 0 || o.sample_ns == 0)
                return yb_usage_error("synth", "--sample-interval '%s': expected "
                                      YB_FORMS_DURATION " above 0", optarg);
            break;
        case O_POLLS:
            if (yb_parse_u64(optarg, 0, 100000, &v) < 0)
                return yb_usage_error("synth", "--polls must be an integer in 0..100000");
            o.polls = (unsigned)v;
            break;
        case O_PREFIX: o.name_prefix = optarg; break;
        case O_AUTH: o.authority = optarg; break;
        case O_SCHEME:
            if (strcmp(optarg, "http") && strcmp(optarg, "https"))
                return yb_usage_error("synth", "--scheme must be http or https");
            o.scheme = optarg;
            break;
        case 'h': help(); return YB_EXIT_OK;
        default: return yb_bad_option("synth", c, argv);
        }
    }
    if (optind >= argc)
        return yb_usage_error("synth", "missing workload name (only 'acl' exists)");
    if (strcmp(argv[optind], "acl"))
        return yb_usage_error("synth", "unknown workload '%s' (only 'acl' exists)", argv[optind]);
    if (optind + 1 < argc)
        return yb_usage_error("synth", "unexpected argument '%s'", argv[optind + 1]);
    if (!out)
        return yb_usage_error("synth", "missing -o FILE");
    /* Options that would be silently ignored are refused. */
    int content = o.op == YB_SYNTH_CREATE || o.op == YB_SYNTH_REPLACE;
    if (given[O_METHOD] && (o.proto != YB_PROTO_RESTCONF || o.op != YB_SYNTH_CREATE))
        return yb_usage_error("synth", "--method is the RESTCONF create method: it does not "
                              "apply to --proto %s --op %s", yb_proto_name(o.proto), OP_NAMES[o.op]);
    if (given[O_MODE] && o.op != YB_SYNTH_SUBSCRIBE)
        return yb_usage_error("synth", "--mode applies to --op subscribe only, not --op %s",
                              OP_NAMES[o.op]);
    if (given[O_SAMPLE] && (o.op != YB_SYNTH_SUBSCRIBE || o.sub_mode != YB_SUB_STREAM))
        return yb_usage_error("synth", "--sample-interval applies to --op subscribe --mode "
                              "stream only");
    if (given[O_POLLS] && (o.op != YB_SYNTH_SUBSCRIBE || o.sub_mode != YB_SUB_POLL))
        return yb_usage_error("synth", "--polls applies to --op subscribe --mode poll only");
    if ((given['r'] || given['s']) && !content)
        return yb_usage_error("synth", "%s sets the rules' content: it applies to --op create "
                              "and replace only, not --op %s", given['r'] ? "--rules" : "--seed",
                              OP_NAMES[o.op]);
    const char *why = yb_synth_acl_check(&o);
    if (why)
        return yb_usage_error("synth", "%s", why);

    yb_corpus_header h;
    yb_corpus_header_init(&h);
    char source[256];
    char rules[16] = "auto";
    if (o.rules != YB_SYNTH_RULES_AUTO)
        snprintf(rules, sizeof rules, "%u", o.rules);
    snprintf(source, sizeof source, "synth acl --proto %s --op %s --count %llu --rules %s --seed %llu",
             yb_proto_name(o.proto), OP_NAMES[o.op], (unsigned long long)o.count, rules,
             (unsigned long long)o.seed);
    h.producer = (char *)PACKAGE_NAME " " PACKAGE_VERSION " synth";
    h.source = source;
    char err[512];
    yb_corpus_writer *w = yb_corpus_writer_open(out, &h, err, sizeof err);
    if (!w) {
        yb_errorf("%s", err);
        return YB_EXIT_USAGE;
    }
    for (uint64_t k = 0; k < o.count; k++) {
        yb_request r;
        yb_request_init(&r);
        int rc = yb_synth_acl_request(&o, k, &r);
        if (!rc)
            rc = yb_corpus_writer_add(w, &r);
        yb_request_cleanup(&r);
        if (rc) { /* never leave a partial corpus behind */
            yb_corpus_writer_abort(w);
            yb_errorf("%s: cannot synthesize request %llu: %s", out, (unsigned long long)k,
                      strerror(-rc));
            return YB_EXIT_RUNTIME;
        }
    }
    if (yb_corpus_writer_close(w, err, sizeof err) < 0) {
        yb_errorf("%s", err);
        return YB_EXIT_RUNTIME;
    }
    return YB_EXIT_OK;
}
