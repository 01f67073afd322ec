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
#include "report/metrics.h"
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
    printf("Usage: yangblast experiment sessions [--restconf URL] [--gnmi URL] [OPTIONS]\n"
           "       yangblast experiment sweep CORPUS --target URL (-c LEVELS | --rate LEVELS)\n"
           "                                  (see: yangblast experiment sweep --help)\n\n"
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

/* One device of the study: the URLs given, or a target of --targets. */
typedef struct {
    target_spec tg[2];
    const yb_inv_target *it; /* its inventory entry, or NULL */
    const char *user;
    int via[2];              /* --connect-to dials instead of tg[t].url */
} device;

/* The study's settings, and what it collects across devices. */
typedef struct {
    yb_runopts *ro;
    const uint64_t *counts;
    size_t n_counts;
    const policy_spec *pol;
    size_t n_pol;
    FILE *text;
    json_t *jruns;          /* every run's JSON report */
    char tmpdir[32];        /* synthesized corpora */
    int have_tmp;
    int th_failed;
    struct yb_metrics *metrics; /* --metrics-listen, or NULL */
} study;

/* Checks device d before any traffic: URLs, corpora, TLS settings and
 * --connect-to (*matched set when it matches one of d's URLs; its
 * host:port list appended to names).  Returns 0 or YB_EXIT_USAGE with the
 * message printed. */
static int check_device(yb_runopts *ro, device *d, int resume, int *matched, char *names,
                        size_t nlen)
{
    const yb_inv_target *it = d->it;
    char where[300] = "";
    if (it)
        snprintf(where, sizeof where, "%s:%u: target '%s': ", ro->inventory, it->line, it->name);
    if (!d->tg[0].url && !d->tg[1].url)
        return yb_usage_error("experiment", "give --restconf URL, --gnmi URL or both");
    for (int t = 0; t < 2; t++)
        if (d->tg[t].corpus && !d->tg[t].url)
            return it ? yb_usage_error("experiment", "%shas no %s URL for --%s-corpus", where,
                                       d->tg[t].proto, d->tg[t].proto)
                      : yb_usage_error("experiment", "--%s-corpus needs --%s URL",
                                       d->tg[t].proto, d->tg[t].proto);
    if (ro->given['m'] && ro->o.streams > 1 && !d->tg[1].url)
        return yb_usage_error("experiment", "%s-m sets HTTP/2 streams per session: it needs a "
                              "%s target (RESTCONF is HTTP/1.1)", where,
                              it ? "gnmi:" : "--gnmi");
    if (it && it->concurrency && it->concurrency < ro->o.threads)
        return yb_usage_error("experiment", "%sconcurrency %u is below -t %u", where,
                              it->concurrency, ro->o.threads);
    int any_tls = 0, any_plain = 0, rc;
    for (int t = 0; t < 2; t++) {
        int tls = d->tg[t].url && (!strncmp(d->tg[t].url, "https://", 8) ||
                                   !strncmp(d->tg[t].url, "grpcs://", 8));
        any_tls |= tls;
        any_plain |= d->tg[t].url && !tls;
    }
    /* (the URLs are not parsed yet: a message must not echo their user-info) */
    if (!any_tls && (rc = yb_check_tls_applies("experiment", ro, "http:// or grpc://")))
        return rc;
    if (!any_plain && (rc = yb_check_plain_applies("experiment", ro, "https:// or grpcs://")))
        return rc;
    if (it && !any_tls && (it->tls_ca || it->tls_cert || it->tls_insecure || it->tls_server_name))
        return yb_usage_error("experiment", "%s:%u: target '%s' has TLS settings, but neither "
                              "of its URLs is TLS (https://, grpcs://)", ro->inventory, it->line,
                              it->name);
    if (resume && !any_tls)
        return yb_usage_error("experiment", "%s--tls-resume needs a TLS target (https://, "
                              "grpcs://)", where);
    char err[512];
    yb_target pt;
    for (int t = 0; t < 2; t++) {
        if (!d->tg[t].url)
            continue;
        if (yb_target_parse_url(d->tg[t].url, &pt, err, sizeof err) < 0 ||
            (ro->connect_to &&
             (d->via[t] = yb_target_connect_to_matches(ro->connect_to, &pt, err, sizeof err)) < 0))
            return yb_usage_error("experiment", "%s%s", where, err);
        *matched |= d->via[t];
        size_t l = strlen(names);
        if (l < nlen)
            snprintf(names + l, nlen - l, "%s%s:%u", l ? ", " : "", pt.host, pt.port);
    }
    return 0;
}

/* Runs the study's matrix on device d and prints its tables (prefixed by
 * the device's name when it comes from an inventory).  Returns YB_EXIT_OK,
 * YB_EXIT_THRESHOLD (a run had more than --max-errors failures), or
 * YB_EXIT_USAGE / YB_EXIT_RUNTIME with the message printed. */
static int run_device(study *st, const device *d, const yb_credentials *cred)
{
    yb_runopts *ro = st->ro;
    const target_spec *tg = d->tg;
    const yb_inv_target *it = d->it;
    const policy_spec *pol = st->pol;
    size_t n_pol = st->n_pol, n_counts = st->n_counts;
    const uint64_t *counts = st->counts;
    FILE *text = st->text;
    char pre[80] = ""; /* "sw1: " before its tables' titles */
    if (it)
        snprintf(pre, sizeof pre, "%s: ", it->name);
    int ret = YB_EXIT_OK;
    char *made[2] = {NULL, NULL};
    yb_recorder *recs = calloc(2 * 3 * MAX_COUNTS, sizeof *recs);
    int *have = calloc(2 * 3 * MAX_COUNTS, sizeof *have);
    /* each run's thresholds: those of the whole study and those scoped to its target */
    yb_thresholds *ths = ro->th.n ? calloc(2 * 3 * MAX_COUNTS, sizeof *ths) : NULL;
    if (!recs || !have || (ro->th.n && !ths)) {
        yb_errorf("out of memory");
        ret = YB_EXIT_RUNTIME;
        goto out;
    }
    for (int t = 0; t < 2 && ret == YB_EXIT_OK && !stop_flag; t++) {
        if (!tg[t].url)
            continue;
        yb_engine_opts o = ro->o;
        char err[512];
        if (yb_target_parse_via(tg[t].url, d->via[t] ? ro->connect_to : NULL, &o.target, err,
                                sizeof err) < 0) {
            yb_errorf("%s", err);
            ret = YB_EXIT_USAGE;
            break;
        }
        const char *sn = ro->servername;
        if (it) { /* the command line's TLS options are refused with --targets */
            o.tls.cacert = it->tls_ca;
            o.tls.insecure = it->tls_insecure;
            o.tls.cert = it->tls_cert;
            o.tls.key = it->tls_key;
            sn = it->tls_server_name;
            if (it->concurrency)
                o.concurrency = it->concurrency;
        }
        if (sn && o.target.tls) /* checked by yb_runopts_apply / the inventory */
            o.target.servername = sn;
        const char *corpus = tg[t].corpus;
        if (!corpus) {
            if (!st->have_tmp && !mkdtemp(st->tmpdir)) {
                yb_errorf("%s: %s", st->tmpdir, strerror(errno));
                ret = YB_EXIT_RUNTIME;
                break;
            }
            st->have_tmp = 1;
            made[t] = synth_default(st->tmpdir, t ? YB_PROTO_GNMI : YB_PROTO_RESTCONF,
                                    o.target.authority);
            if (!made[t]) {
                ret = YB_EXIT_RUNTIME;
                break;
            }
            corpus = made[t];
        }
        const char *proto;
        char redacted[256];
        if (yb_pick_codec(corpus, &o.ops, &proto, redacted, sizeof redacted, NULL) ||
            yb_check_corpus_target("experiment", corpus, proto, o.ops == &yb_h2_client_ops,
                                   &o.target, tg[t].url, 1) ||
            yb_check_redactions("experiment", corpus, redacted, cred, ro->no_credentials)) {
            ret = YB_EXIT_USAGE;
            break;
        }
        o.corpus_path = corpus;
        o.stop = &stop_flag;
        if (t == 0)
            o.streams = 1; /* HTTP/1.1: one request per connection at a time */
        yb_engine_bind(&o, cred, d->user);
        yb_runopts_bind_headers(ro, &o);
        for (size_t p = 0; p < n_pol && ret == YB_EXIT_OK && !stop_flag; p++) {
            for (size_t k = 0; k < n_counts && !stop_flag; k++) {
                size_t idx = (size_t)t * 3 * MAX_COUNTS + p * MAX_COUNTS + k;
                yb_recorder *rec = &recs[idx];
                o.policy = pol[p].policy;
                o.tls_resume = pol[p].resume;
                o.requests = counts[k];
                /* live metrics: each run of the matrix is a workload of its own */
                char wname[160];
                snprintf(wname, sizeof wname, "%s%s%s %s n=%llu", it ? it->name : "",
                         it ? " " : "", tg[t].label,
                         p == 0 ? "reuse" : p == 1 ? "per-request" : "per-request+resume",
                         (unsigned long long)counts[k]);
                o.workload_name = wname;
                o.target_name = tg[t].url;
                o.metrics = st->metrics;
                if (!ro->quiet)
                    fprintf(stderr, "experiment: %s%s, %s, %llu requests...\n", pre,
                            tg[t].label, pol[p].title, (unsigned long long)counts[k]);
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
                                    .unit = ro->unit ? ro->unit : "ACL",
                                    .max_errors = ro->max_errors,
                                    .interrupted = stop_flag == SIGINT ? "SIGINT"
                                                   : stop_flag ? "SIGTERM" : NULL,
                                    .planned_requests = counts[k],
                                    .accept = &o.codec.accept,
                                    .cpu_user_s = cu, .cpu_sys_s = cs};
                json_t *j = yb_report_json(rec, &info);
                if (j && it) /* which device of the inventory */
                    json_object_set_new(json_object_get(j, "run"), "device",
                                        json_string(it->name));
                if (ths) {
                    yb_thresholds *th = &ths[idx];
                    yb_thresholds_init(th);
                    for (size_t i = 0; i < ro->th.n; i++) {
                        const char *sname = ro->th.t[i].scope_name;
                        if (!ro->th.t[i].scope_kind[0] || !strcmp(sname, tg[t].url) ||
                            (it && !strcmp(sname, it->name)))
                            th->t[th->n++] = ro->th.t[i];
                    }
                    yb_th_scope sc[2] = {{"target", tg[t].url, rec, NULL},
                                         {"target", it ? it->name : tg[t].url, rec, NULL}};
                    if (yb_thresholds_eval(th, rec, sc, 2))
                        st->th_failed = 1; /* exit 1 at the end: the study goes on */
                    if (j && yb_thresholds_json(j, th) < 0) {
                        json_decref(j);
                        j = NULL;
                    }
                }
                if (j)
                    json_array_append_new(st->jruns, j);
                if (ro->csv && yb_report_csv(ro->csv, rec, &info, err, sizeof err) < 0) {
                    yb_errorf("%s", err);
                    ret = YB_EXIT_RUNTIME;
                }
                if (rec->completed - rec->ok > ro->max_errors && ret == YB_EXIT_OK)
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
            char title[200];
            snprintf(title, sizeof title, "%s%s, %s", pre, tg[t].label, pol[p].title);
            fprintf(text, "\n");
            yb_report_study_table(text, title, rows, n, ro->unit ? ro->unit : "ACL");
        }
    }
    fprintf(text, "\n%sWhere the time goes (mean per request, ms; largest run of each):\n", pre);
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
        char label[120];
        snprintf(label, sizeof label, "%s%s", it ? it->name : "", it ? " " : "");
        snprintf(label + strlen(label), sizeof label - strlen(label), "%s", tg[t].label);
        double dr = yb_report_duration_s(&recs[ri]), dp = yb_report_duration_s(&recs[pi]);
        double rr = dr > 0 ? (double)recs[ri].ok / dr : 0, rp = dp > 0 ? (double)recs[pi].ok / dp : 0;
        if (rr > 0 && rp > 0)
            fprintf(text, "%s: one persistent session is %.1fx faster than a new session per request "
                   "(%.1f vs %.1f ACL/s, %llu requests)\n",
                   label, rr / rp, rr, rp, (unsigned long long)counts[k]);
        yb_report_session_cost(text, label, &recs[ri], &recs[pi]);
    }
    for (size_t i = 0; ths && i < 2 * 3 * MAX_COUNTS; i++)
        if (have[i] && ths[i].n) {
            char label[200];
            size_t t = i / (3 * MAX_COUNTS), p = i / MAX_COUNTS % 3, k = i % MAX_COUNTS;
            snprintf(label, sizeof label, "%s%s, %s, %llu requests", pre, tg[t].label,
                     pol[p].title, (unsigned long long)counts[k]);
            yb_thresholds_text(text, &ths[i], label);
        }
out:
    for (size_t i = 0; recs && i < 2 * 3 * MAX_COUNTS; i++)
        if (have[i])
            yb_recorder_cleanup(&recs[i]);
    free(recs);
    free(have);
    free(ths);
    for (int t = 0; t < 2; t++)
        if (made[t]) {
            unlink(made[t]);
            free(made[t]);
        }
    return ret;
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
    struct option opts[128];
    char shortopts[64];
    if (yb_runopts_getopt(YB_RO_EXPERIMENT, own, "n:h", opts, sizeof opts / sizeof opts[0],
                          shortopts, sizeof shortopts) < 0) {
        yb_errorf("internal error: the option table outgrew %s's getopt table", "experiment");
        return YB_EXIT_RUNTIME;
    }
    if (argc >= 2 && !strcmp(argv[1], "sweep"))
        return yb_cmd_sweep(argc - 1, argv + 1); /* src/cli/sweep.c */
    if (argc < 2 || (strcmp(argv[1], "sessions") && strcmp(argv[1], "--help") &&
                     strcmp(argv[1], "-h")))
        return yb_usage_error("experiment", "expected 'sessions' or 'sweep'");
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
    const char *json = ro.json;
    if (optind != argc)
        return yb_usage_error("experiment", "unexpected argument '%s'", argv[optind]);
    /* the devices: the URLs given, or every target of an inventory,
     * validated before anything else */
    yb_inventory inv = {0};
    device one = {.tg = {tg[0], tg[1]}, .user = ro.user};
    device *dev = &one;
    size_t n_dev = 1;
    if (ro.inventory) {
        if (tg[0].url || tg[1].url)
            return yb_usage_error("experiment", "--targets excludes --restconf and --gnmi");
        if ((rc = yb_fleet_devices("experiment", &ro, &inv)))
            return rc;
        if (!(dev = calloc(inv.n, sizeof *dev))) {
            yb_inventory_free(&inv);
            return yb_usage_error("experiment", "out of memory");
        }
        n_dev = inv.n;
        for (size_t i = 0; i < n_dev; i++) {
            const yb_inv_target *it = &inv.target[i];
            dev[i].tg[0] = tg[0];
            dev[i].tg[1] = tg[1];
            dev[i].tg[0].url = it->restconf;
            dev[i].tg[1].url = it->gnmi;
            dev[i].it = it;
            dev[i].user = it->secret == YB_SECRET_PASSWORD ? it->user : NULL;
        }
    }
    int ret = YB_EXIT_OK, matched = 0;
    yb_metrics *metrics = NULL;
    char names[1000] = "";
    for (size_t i = 0; i < n_dev && !ret; i++)
        ret = check_device(&ro, &dev[i], resume, &matched, names, sizeof names);
    if (!ret && (ret = yb_check_shared("experiment", &ro)) == 0 && ro.connect_to && !matched)
        ret = yb_usage_error("experiment", "--connect-to '%s' matches no target of the study "
                             "(%s): it would be ignored", ro.connect_to, names);
    /* a threshold's scope may name one of the study's targets: by URL, or
     * by the inventory's name */
    yb_th_scope *scopes = ret ? NULL : calloc(3 * n_dev, sizeof *scopes);
    if (!ret && !scopes)
        ret = yb_usage_error("experiment", "out of memory");
    if (!ret) {
        size_t n_scopes = 0;
        for (size_t i = 0; i < n_dev; i++) {
            for (int t = 0; t < 2; t++)
                if (dev[i].tg[t].url)
                    scopes[n_scopes++] = (yb_th_scope){"target", dev[i].tg[t].url, NULL, NULL};
            if (dev[i].it)
                scopes[n_scopes++] = (yb_th_scope){"target", dev[i].it->name, NULL, NULL};
        }
        char err[1200];
        if (yb_thresholds_check_scopes(&ro.th, scopes, n_scopes, err, sizeof err) < 0)
            ret = yb_usage_error("experiment", "%s", err);
    }
    free(scopes);
    policy_spec pol[3] = {{YB_SESS_REUSE, 0, "single persistent session"},
                          {YB_SESS_PER_REQUEST, 0, "new session per request"},
                          {YB_SESS_PER_REQUEST, 1, "new session per request, TLS resumed"}};
    study st = {.ro = &ro, .counts = counts, .n_counts = n_counts, .pol = pol,
                .n_pol = resume ? 3 : 2, .tmpdir = "/tmp/yangblast-exp.XXXXXX"};
    const char *outs[] = {json, ro.html};
    if (!ret)
        ret = yb_check_outputs("experiment", outs, 2, ro.csv, &st.text);
    /* every device's credentials, before any traffic */
    yb_credentials *cred = ret ? NULL : calloc(n_dev, sizeof *cred);
    size_t n_cred = 0;
    if (!ret && !cred)
        ret = yb_usage_error("experiment", "out of memory");
    for (; !ret && n_cred < n_dev; n_cred++)
        if ((dev[n_cred].it ? yb_fleet_credentials(dev[n_cred].it, &cred[n_cred])
                            : yb_credentials_load(ro.user, ro.pwfile, ro.tokfile, &cred[n_cred])) < 0)
            ret = YB_EXIT_USAGE;
    if (ret)
        goto out;
    if (!(st.jruns = json_array())) {
        yb_errorf("out of memory");
        ret = YB_EXIT_RUNTIME;
        goto out;
    }
    if ((ret = yb_live_metrics_start("experiment", ro.metrics_listen, ro.metrics_series, 0, 0,
                                     &metrics)))
        goto out;
    st.metrics = metrics;
    yb_cli_catch_stop(on_signal);

    /* one device after the other: a study measures one device's sessions,
     * never the generator shared among several */
    for (size_t i = 0; i < n_dev && !stop_flag; i++) {
        int r = run_device(&st, &dev[i], &cred[i]);
        if (r != YB_EXIT_OK && (ret == YB_EXIT_OK || ret == YB_EXIT_THRESHOLD))
            ret = r;
        if (ret == YB_EXIT_USAGE || ret == YB_EXIT_RUNTIME)
            break; /* a broken device stops the study; a failing one does not */
    }
    if (json || ro.html) {
        json_t *top = json_object();
        char err[512];
        json_object_set_new(top, "schema", json_string("yangblast-experiment/1"));
        json_object_set_new(top, "interrupted", json_boolean(stop_flag != 0));
        json_object_set(top, "runs", st.jruns);
        if (json && yb_write_json_file(json, top, err, sizeof err) < 0) {
            yb_errorf("%s", err);
            ret = YB_EXIT_RUNTIME;
        }
        /* one page over the whole matrix, rendered from the same JSON */
        const char *name = json ? json : "experiment sessions";
        if (ro.html && !json_array_size(st.jruns))
            yb_errorf("--html %s: no run finished: no page written", ro.html);
        else if (ro.html && yb_html_report(ro.html, &top, &name, 1,
                                           "yangblast experiment sessions", err, sizeof err) < 0) {
            yb_errorf("%s", err);
            ret = YB_EXIT_RUNTIME;
        }
        json_decref(top);
    }
    if (st.th_failed && ret == YB_EXIT_OK)
        ret = YB_EXIT_THRESHOLD;
    if (stop_flag) {
        fprintf(st.text, "INTERRUPTED by %s: the runs above cover the part that ran.\n",
                stop_flag == SIGINT ? "SIGINT" : "SIGTERM");
        if (ret == YB_EXIT_OK || ret == YB_EXIT_THRESHOLD)
            ret = YB_EXIT_INTERRUPTED;
    }
    /* every report is written: the live figures are final */
    yb_live_metrics_end(metrics, ro.metrics_linger_ns, &stop_flag);
    metrics = NULL;
out:
    yb_metrics_free(metrics);
    json_decref(st.jruns);
    if (st.have_tmp)
        rmdir(st.tmpdir);
    for (size_t i = 0; i < n_cred; i++)
        yb_credentials_cleanup(&cred[i]);
    free(cred);
    if (dev != &one)
        free(dev);
    yb_inventory_free(&inv);
    return ret;
}
