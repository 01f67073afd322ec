/* yangblast experiment sessions: the session-reuse study in one command.
 * For each protocol given (RESTCONF, gNMI), each session policy (one
 * persistent session, a new session per request) and each request count,
 * replay an openconfig-acl corpus and print the study's tables, then where
 * the per-request sessions lose their time. */
#include "config.h"
#include "cli/cli.h"
#include "cli/fleet.h"
#include "cli/runcommon.h"
#include "cli/runopts.h"
#include "engine/engine.h"
#include "report/html.h"
#include "report/report.h"
#include "report/threshold.h"
#include "synth/acl.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_COUNTS 8

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    stop_flag = sig; /* non-zero: stop; which signal, for the report */
}

static void help(void)
{
    printf("Usage: yangblast experiment sessions [--restconf URL] [--gnmi URL] [OPTIONS]\n\n"
           "Replay openconfig-acl ACL sets (~14.5 KB each) over one persistent session\n"
           "and over a new session per request, for each protocol given, and print\n"
           "the study's tables and the phase breakdown.\n\n"
           "      --restconf URL      RESTCONF target (https://host:443 or http://)\n"
           "      --gnmi URL          gNMI target (grpcs://host:8080 or grpc://)\n"
           "  -n, --requests LIST     request counts, comma-separated (default 1000)\n"
           "      --restconf-corpus F corpus to replay over RESTCONF (default: synthesized)\n"
           "      --gnmi-corpus F     corpus to replay over gNMI (default: synthesized)\n"
           "      --tls-resume        also run per-request sessions with TLS resumption\n"
           "  -h, --help              this help\n\n"
           "The options of 'yangblast run' that apply to the study:\n");
    yb_runopts_help(stdout, YB_RO_EXPERIMENT);
}

typedef struct {
    const char *proto;  /* "restconf" / "gnmi" */
    const char *label;  /* "RESTCONF" / "gNMI" */
    const char *url;
    const char *corpus;
} target_spec;

typedef struct {
    int policy;      /* YB_SESS_REUSE / YB_SESS_PER_REQUEST */
    int resume;
    const char *title;
} policy_spec;

/* Synthesizes the default corpus for proto into dir.  Returns a malloc'd
 * path or NULL with a message printed. */
static char *synth_default(const char *dir, yb_proto proto, const char *authority)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s-acl.ybc", dir, yb_proto_name(proto));
    yb_synth_acl_opts so;
    yb_synth_acl_defaults(&so);
    so.proto = proto;
    so.authority = authority;
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    h.producer = (char *)PACKAGE_NAME " " PACKAGE_VERSION " experiment";
    h.source = (char *)"experiment sessions: synth acl defaults";
    char err[512];
    yb_corpus_writer *w = yb_corpus_writer_open(path, &h, err, sizeof err);
    if (!w) {
        yb_errorf("%s", err);
        return NULL;
    }
    int rc = 0;
    for (uint64_t k = 0; k < so.count && !rc; k++) {
        yb_request r;
        yb_request_init(&r);
        rc = yb_synth_acl_request(&so, k, &r);
        if (!rc)
            rc = yb_corpus_writer_add(w, &r);
        yb_request_cleanup(&r);
    }
    if (rc) {
        yb_corpus_writer_abort(w);
        yb_errorf("%s: cannot synthesize: %s", path, strerror(-rc));
        return NULL;
    }
    if (yb_corpus_writer_close(w, err, sizeof err) < 0) {
        yb_errorf("%s", err);
        return NULL;
    }
    return strdup(path);
}

static int parse_counts(const char *s, uint64_t *out, size_t *n)
{
    *n = 0;
    char buf[256];
    if (strlen(s) >= sizeof buf)
        return -1;
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (*n == MAX_COUNTS || yb_parse_u64(tok, 1, 100000000, &out[*n]) < 0)
            return -1;
        (*n)++;
    }
    return *n ? 0 : -1;
}

/* Frees the inventory on an early return; returns rc. */
static int bail(yb_inventory *inv, int rc)
{
    yb_inventory_free(inv);
    return rc;
}

int yb_cmd_experiment(int argc, char **argv)
{
    enum { O_RC = YB_RO_END, O_GN, O_RCC, O_GNC, O_RESUME };
    static const struct option own[] = {
        {"restconf", required_argument, NULL, O_RC}, {"gnmi", required_argument, NULL, O_GN},
        {"requests", required_argument, NULL, 'n'},
        {"restconf-corpus", required_argument, NULL, O_RCC},
        {"gnmi-corpus", required_argument, NULL, O_GNC},
        {"tls-resume", no_argument, NULL, O_RESUME},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    struct option opts[64];
    char shortopts[64];
    if (yb_runopts_getopt(YB_RO_EXPERIMENT, own, "n:h", opts, sizeof opts / sizeof opts[0],
                          shortopts, sizeof shortopts) < 0)
        return YB_EXIT_RUNTIME;
    if (argc < 2 || (strcmp(argv[1], "sessions") && strcmp(argv[1], "--help") &&
                     strcmp(argv[1], "-h")))
        return yb_usage_error("experiment", "expected 'sessions' (the only experiment)");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        help();
        return YB_EXIT_OK;
    }
    argc--;
    argv++;
    target_spec tg[2] = {{"restconf", "RESTCONF", NULL, NULL}, {"gnmi", "gNMI", NULL, NULL}};
    uint64_t counts[MAX_COUNTS] = {1000};
    size_t n_counts = 1;
    int resume = 0;
    yb_runopts ro;
    yb_runopts_init(&ro);
    int c, rc;
    optind = 1;
    opterr = 0; /* option errors are worded by yb_bad_option */
    while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
        switch (c) {
        case O_RC: tg[0].url = optarg; break;
        case O_GN: tg[1].url = optarg; break;
        case O_RCC: tg[0].corpus = optarg; break;
        case O_GNC: tg[1].corpus = optarg; break;
        case 'n':
            if (parse_counts(optarg, counts, &n_counts) < 0)
                return yb_usage_error("experiment", "-n '%s': expected counts like 1000,10000 "
                                      "(at most %d)", optarg, MAX_COUNTS);
            break;
        case O_RESUME: resume = 1; break;
        case 'h': help(); return YB_EXIT_OK;
        case '?': case ':': return yb_bad_option("experiment", c, argv);
        default:
            if ((rc = yb_runopts_apply(YB_RO_EXPERIMENT, "experiment", c, optarg, &ro)) != 0)
                return rc == 1 ? yb_bad_option("experiment", '?', argv) : rc;
        }
    }
    const char *user = ro.user, *json = ro.json;
    if (optind != argc)
        return yb_usage_error("experiment", "unexpected argument '%s'", argv[optind]);
    /* an inventory of one target: validated before anything else */
    yb_inventory inv = {0};
    const yb_inv_target *it = NULL;
    if (ro.inventory) {
        if (tg[0].url || tg[1].url)
            return yb_usage_error("experiment", "--targets excludes --restconf and --gnmi");
        if ((rc = yb_fleet_one("experiment", &ro, &inv, &it)))
            return rc;
        tg[0].url = it->restconf;
        tg[1].url = it->gnmi;
        user = it->secret == YB_SECRET_PASSWORD ? it->user : NULL;
    }
    if (!tg[0].url && !tg[1].url)
        return bail(&inv, yb_usage_error("experiment", "give --restconf URL, --gnmi URL or "
                                         "both"));
    for (int t = 0; t < 2; t++)
        if (tg[t].corpus && !tg[t].url)
            return bail(&inv, yb_usage_error("experiment", "--%s-corpus needs --%s URL",
                                             tg[t].proto, tg[t].proto));
    if (ro.given['m'] && ro.o.streams > 1 && !tg[1].url)
        return bail(&inv, yb_usage_error("experiment", "-m sets HTTP/2 streams per session: "
                                         "it needs a --gnmi target (RESTCONF is HTTP/1.1)"));
    int any_tls = 0;
    for (int t = 0; t < 2; t++)
        any_tls |= tg[t].url && (!strncmp(tg[t].url, "https://", 8) ||
                                 !strncmp(tg[t].url, "grpcs://", 8));
    /* (the URLs are not parsed yet: a message must not echo their user-info) */
    if (!any_tls && (rc = yb_check_tls_applies("experiment", &ro, "http:// or grpc://")))
        return bail(&inv, rc);
    if (it && !any_tls && (it->tls_ca || it->tls_cert || it->tls_insecure || it->tls_server_name))
        return bail(&inv, yb_usage_error("experiment", "%s:%u: target '%s' has TLS settings, "
                                         "but neither of its URLs is TLS (https://, grpcs://)",
                                         ro.inventory, it->line, it->name));
    if (resume && !any_tls)
        return bail(&inv, yb_usage_error("experiment", "--tls-resume needs a TLS target "
                                         "(https://, grpcs://)"));
    if ((rc = yb_check_shared("experiment", &ro)))
        return bail(&inv, rc);
    /* both URLs checked before any traffic; --connect-to dials instead of
     * each target it matches, and one that matches neither is refused */
    int via[2] = {0, 0};
    {
        char err[512], names[600] = "";
        yb_target pt;
        for (int t = 0; t < 2; t++) {
            if (!tg[t].url)
                continue;
            if (yb_target_parse_url(tg[t].url, &pt, err, sizeof err) < 0 ||
                (ro.connect_to &&
                 (via[t] = yb_target_connect_to_matches(ro.connect_to, &pt, err, sizeof err)) < 0))
                return bail(&inv, yb_usage_error("experiment", "%s", err));
            size_t l = strlen(names);
            snprintf(names + l, sizeof names - l, "%s%s:%u", l ? ", " : "", pt.host, pt.port);
        }
        if (ro.connect_to && !via[0] && !via[1])
            return bail(&inv, yb_usage_error("experiment", "--connect-to '%s' matches no target "
                                             "of the study (%s): it would be ignored",
                                             ro.connect_to, names));
    }
    /* a threshold's scope may name one of the study's targets: by URL, or
     * by the inventory's name */
    yb_th_scope scopes[3];
    size_t n_scopes = 0;
    for (int t = 0; t < 2; t++)
        if (tg[t].url)
            scopes[n_scopes++] = (yb_th_scope){"target", tg[t].url, NULL};
    if (it)
        scopes[n_scopes++] = (yb_th_scope){"target", it->name, NULL};
    {
        char err[1200];
        if (yb_thresholds_check_scopes(&ro.th, scopes, n_scopes, err, sizeof err) < 0)
            return bail(&inv, yb_usage_error("experiment", "%s", err));
    }

    policy_spec pol[3] = {{YB_SESS_REUSE, 0, "single persistent session"},
                          {YB_SESS_PER_REQUEST, 0, "new session per request"},
                          {YB_SESS_PER_REQUEST, 1, "new session per request, TLS resumed"}};
    size_t n_pol = resume ? 3 : 2;

    const char *outs[] = {json, ro.html};
    FILE *text;
    if ((rc = yb_check_outputs("experiment", outs, 2, ro.csv, &text)))
        return bail(&inv, rc);
    yb_credentials cred;
    if ((it ? yb_fleet_credentials(it, &cred) : yb_credentials_load(user, ro.pwfile, ro.tokfile,
                                                                    &cred)) < 0)
        return bail(&inv, YB_EXIT_USAGE);
    int ret = YB_EXIT_OK;
    char tmpdir[] = "/tmp/yangblast-exp.XXXXXX";
    int have_tmp = 0;
    char *made[2] = {NULL, NULL};
    yb_recorder *recs = calloc(2 * 3 * MAX_COUNTS, sizeof *recs);
    int *have = calloc(2 * 3 * MAX_COUNTS, sizeof *have);
    /* each run's thresholds: those of the whole study and those scoped to its target */
    yb_thresholds *ths = ro.th.n ? calloc(2 * 3 * MAX_COUNTS, sizeof *ths) : NULL;
    int th_failed = 0;
    json_t *jruns = json_array();
    if (!recs || !have || !jruns || (ro.th.n && !ths)) {
        yb_errorf("out of memory");
        ret = YB_EXIT_RUNTIME;
        goto out;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    for (int t = 0; t < 2 && ret == YB_EXIT_OK && !stop_flag; t++) {
        if (!tg[t].url)
            continue;
        yb_engine_opts o = ro.o;
        char err[512];
        if (yb_target_parse_via(tg[t].url, via[t] ? ro.connect_to : NULL, &o.target, err,
                                sizeof err) < 0) {
            yb_errorf("%s", err);
            ret = YB_EXIT_USAGE;
            break;
        }
        if (ro.servername && o.target.tls) /* checked to fit by yb_runopts_apply */
            snprintf(o.target.servername, sizeof o.target.servername, "%s", ro.servername);
        const char *corpus = tg[t].corpus;
        if (!corpus) {
            if (!have_tmp && !mkdtemp(tmpdir)) {
                yb_errorf("%s: %s", tmpdir, strerror(errno));
                ret = YB_EXIT_RUNTIME;
                break;
            }
            have_tmp = 1;
            made[t] = synth_default(tmpdir, t ? YB_PROTO_GNMI : YB_PROTO_RESTCONF,
                                    o.target.authority);
            if (!made[t]) {
                ret = YB_EXIT_RUNTIME;
                break;
            }
            corpus = made[t];
        }
        const char *proto;
        char redacted[256];
        if (yb_pick_codec(corpus, &o.ops, &proto, redacted, sizeof redacted) ||
            yb_check_corpus_target("experiment", corpus, proto, o.ops == &yb_h2_client_ops,
                                   &o.target, tg[t].url, 1) ||
            yb_check_redactions("experiment", corpus, redacted, &cred, ro.no_credentials)) {
            ret = YB_EXIT_USAGE;
            break;
        }
        o.corpus_path = corpus;
        o.stop = &stop_flag;
        if (t == 0)
            o.streams = 1; /* HTTP/1.1: one request per connection at a time */
        yb_engine_bind(&o, &cred, user);
        yb_runopts_bind_headers(&ro, &o);
        for (size_t p = 0; p < n_pol && ret == YB_EXIT_OK && !stop_flag; p++) {
            for (size_t k = 0; k < n_counts && !stop_flag; k++) {
                size_t idx = (size_t)t * 3 * MAX_COUNTS + p * MAX_COUNTS + k;
                yb_recorder *rec = &recs[idx];
                o.policy = pol[p].policy;
                o.tls_resume = pol[p].resume;
                o.requests = counts[k];
                if (!ro.quiet)
                    fprintf(stderr, "experiment: %s, %s, %llu requests...\n", tg[t].label,
                            pol[p].title, (unsigned long long)counts[k]);
                if (yb_recorder_init(rec) < 0) {
                    ret = YB_EXIT_RUNTIME;
                    break;
                }
                have[idx] = 1;
                double cu = 0, cs = 0;
                if (yb_run_timed(&o, rec, &cu, &cs, err, sizeof err) < 0) {
                    yb_errorf("%s", err);
                    ret = YB_EXIT_USAGE;
                    break;
                }
                yb_run_info info = {.corpus = corpus, .target = tg[t].url, .protocol = proto,
                                    .sessions = p ? "per-request" : "reuse",
                                    .tls_resume = o.tls_resume, .concurrency = o.concurrency,
                                    .threads = o.threads, .streams = o.streams,
                                    .unit = ro.unit ? ro.unit : "ACL", .max_errors = ro.max_errors,
                                    .interrupted = stop_flag == SIGINT ? "SIGINT"
                                                   : stop_flag ? "SIGTERM" : NULL,
                                    .planned_requests = counts[k],
                                    .accept = &o.codec.accept,
                                    .cpu_user_s = cu, .cpu_sys_s = cs};
                json_t *j = yb_report_json(rec, &info);
                if (ths) {
                    yb_thresholds *th = &ths[idx];
                    yb_thresholds_init(th);
                    for (size_t i = 0; i < ro.th.n; i++) {
                        const char *sn = ro.th.t[i].scope_name;
                        if (!ro.th.t[i].scope_kind[0] || !strcmp(sn, tg[t].url) ||
                            (it && !strcmp(sn, it->name)))
                            th->t[th->n++] = ro.th.t[i];
                    }
                    yb_th_scope sc[2] = {{"target", tg[t].url, rec},
                                         {"target", it ? it->name : tg[t].url, rec}};
                    if (yb_thresholds_eval(th, rec, sc, 2))
                        th_failed = 1; /* exit 1 at the end: the study goes on */
                    if (j && yb_thresholds_json(j, th) < 0) {
                        json_decref(j);
                        j = NULL;
                    }
                }
                if (j)
                    json_array_append_new(jruns, j);
                if (ro.csv && yb_report_csv(ro.csv, rec, &info, err, sizeof err) < 0) {
                    yb_errorf("%s", err);
                    ret = YB_EXIT_RUNTIME;
                }
                if (rec->completed - rec->ok > ro.max_errors && ret == YB_EXIT_OK)
                    ret = YB_EXIT_THRESHOLD;
            }
        }
    }

    /* The study's tables, then the phase breakdown at the largest count. */
    for (int t = 0; t < 2; t++) {
        if (!tg[t].url)
            continue;
        for (size_t p = 0; p < n_pol; p++) {
            const yb_recorder *rows[MAX_COUNTS];
            size_t n = 0;
            for (size_t k = 0; k < n_counts; k++) {
                size_t idx = (size_t)t * 3 * MAX_COUNTS + p * MAX_COUNTS + k;
                if (have[idx])
                    rows[n++] = &recs[idx];
            }
            if (!n)
                continue;
            char title[160];
            snprintf(title, sizeof title, "%s, %s", tg[t].label, pol[p].title);
            fprintf(text, "\n");
            yb_report_study_table(text, title, rows, n, ro.unit ? ro.unit : "ACL");
        }
    }
    fprintf(text, "\nWhere the time goes (mean per request, ms; largest run of each):\n");
    const yb_recorder *brk[6];
    const char *labels[6];
    char lbuf[6][96];
    size_t nb = 0;
    for (int t = 0; t < 2; t++) {
        if (!tg[t].url)
            continue;
        for (size_t p = 0; p < n_pol; p++) {
            for (size_t k = n_counts; k-- > 0;) {
                size_t idx = (size_t)t * 3 * MAX_COUNTS + p * MAX_COUNTS + k;
                if (!have[idx])
                    continue;
                snprintf(lbuf[nb], sizeof lbuf[nb], "%s %s", tg[t].label,
                         p == 0 ? "reuse" : p == 1 ? "per-request" : "per-request+resume");
                labels[nb] = lbuf[nb];
                brk[nb++] = &recs[idx];
                break;
            }
        }
    }
    yb_report_phase_breakdown(text, labels, brk, nb);
    fprintf(text, "\n");
    /* The study's headline: how much faster one persistent session is. */
    for (int t = 0; t < 2; t++) {
        if (!tg[t].url)
            continue;
        size_t k = n_counts - 1;
        size_t ri = (size_t)t * 3 * MAX_COUNTS + k, pi = ri + MAX_COUNTS;
        if (!have[ri] || !have[pi])
            continue;
        double dr = yb_report_duration_s(&recs[ri]), dp = yb_report_duration_s(&recs[pi]);
        double rr = dr > 0 ? (double)recs[ri].ok / dr : 0, rp = dp > 0 ? (double)recs[pi].ok / dp : 0;
        if (rr > 0 && rp > 0)
            fprintf(text, "%s: one persistent session is %.1fx faster than a new session per request "
                   "(%.1f vs %.1f ACL/s, %llu requests)\n",
                   tg[t].label, rr / rp, rr, rp, (unsigned long long)counts[k]);
        yb_report_session_cost(text, tg[t].label, &recs[ri], &recs[pi]);
    }
    for (size_t i = 0; ths && i < 2 * 3 * MAX_COUNTS; i++)
        if (have[i] && ths[i].n) {
            char label[160];
            size_t t = i / (3 * MAX_COUNTS), p = i / MAX_COUNTS % 3, k = i % MAX_COUNTS;
            snprintf(label, sizeof label, "%s, %s, %llu requests", tg[t].label, pol[p].title,
                     (unsigned long long)counts[k]);
            yb_thresholds_text(text, &ths[i], label);
        }
    if (json || ro.html) {
        json_t *top = json_object();
        char err[512];
        json_object_set_new(top, "schema", json_string("yangblast-experiment/1"));
        json_object_set_new(top, "interrupted", json_boolean(stop_flag != 0));
        json_object_set(top, "runs", jruns);
        if (json && yb_write_json_file(json, top, err, sizeof err) < 0) {
            yb_errorf("%s", err);
            ret = YB_EXIT_RUNTIME;
        }
        /* one page over the whole matrix, rendered from the same JSON */
        const char *name = json ? json : "experiment sessions";
        if (ro.html && !json_array_size(jruns))
            yb_errorf("--html %s: no run finished: no page written", ro.html);
        else if (ro.html && yb_html_report(ro.html, &top, &name, 1,
                                           "yangblast experiment sessions", err, sizeof err) < 0) {
            yb_errorf("%s", err);
            ret = YB_EXIT_RUNTIME;
        }
        json_decref(top);
    }
    if (th_failed && ret == YB_EXIT_OK)
        ret = YB_EXIT_THRESHOLD;
    if (stop_flag) {
        fprintf(text, "INTERRUPTED by %s: the runs above cover the part that ran.\n",
                stop_flag == SIGINT ? "SIGINT" : "SIGTERM");
        if (ret == YB_EXIT_OK || ret == YB_EXIT_THRESHOLD)
            ret = YB_EXIT_INTERRUPTED;
    }
out:
    for (size_t i = 0; recs && i < 2 * 3 * MAX_COUNTS; i++)
        if (have[i])
            yb_recorder_cleanup(&recs[i]);
    free(recs);
    free(have);
    free(ths);
    json_decref(jruns);
    for (int t = 0; t < 2; t++)
        if (made[t]) {
            unlink(made[t]);
            free(made[t]);
        }
    if (have_tmp)
        rmdir(tmpdir);
    yb_credentials_cleanup(&cred);
    yb_inventory_free(&inv);
    return ret;
}
