/* yangblast run: replay a corpus against a target. */
#include "config.h"
#include "cli/cli.h"
#include "cli/runcommon.h"
#include "engine/engine.h"
#include "report/report.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

/* The live progress line (stderr, a TTY only). */
static void show_progress(const yb_progress *p, void *ud)
{
    (void)ud;
    char target[48] = "";
    if (p->target_rate > 0)
        snprintf(target, sizeof target, " (target %.0f)", p->target_rate);
    fprintf(stderr,
            "\r\033[K%7.1fs  %7llu req/s%s  p50 %.2f ms  p99 %.2f ms  errors %llu  backlog %llu",
            p->elapsed_s, (unsigned long long)p->last_completed, target, p->p50_ms, p->p99_ms,
            (unsigned long long)p->errors, (unsigned long long)p->backlog);
    fflush(stderr);
}

static void help(void)
{
    printf(
        "Usage: yangblast run CORPUS --target URL [OPTIONS]\n\n"
        "Replay CORPUS against URL (http://, https://; grpc://, grpcs:// for gNMI)\n"
        "and report where the time goes.\n\n"
        "Load:\n"
        "  -n, --requests N        total requests (cycling through the corpus);\n"
        "                          default: one pass over the corpus\n"
        "  -D, --duration D        run for D (e.g. 30s, 2m), cycling\n"
        "  -c, --concurrency N     requests in flight (closed loop; default 1)\n"
        "  -t, --threads N         worker threads (default 1)\n"
        "  -m, --streams N         HTTP/2 streams per session (default 1)\n"
        "      --subscriptions N   gNMI Subscribe corpus: hold N Subscribe calls open\n"
        "                          at once for --duration (-c N, cycling; a ONCE or\n"
        "                          POLL call that ends is replaced, STREAM calls last\n"
        "                          the run)\n"
        "      --rate R            open loop: R requests/s across all workers, due at\n"
        "                          fixed intervals whatever the responses; latency is\n"
        "                          measured from the due time (coordinated omission\n"
        "                          corrected); also ramp:FROM..TO/DURATION and\n"
        "                          step:R1@D1,R2@D2,...\n"
        "      --timing original   open loop at the corpus' recorded times (e.g. from a\n"
        "      --speed X           capture), X times faster (default 1)\n"
        "      --spin D            open loop: wake D early and spin to each due time\n"
        "                          (e.g. 100us: microsecond-exact sends for some CPU)\n"
        "      --max-backlog N     open loop: due requests that may wait for a free\n"
        "                          session per worker (default 10000); more are\n"
        "                          counted as backlog_overflow errors\n"
        "Sessions:\n"
        "      --sessions P        reuse (default): persistent sessions, one per slot;\n"
        "                          per-request: new TCP+TLS session per request;\n"
        "                          pool=N: N persistent sessions shared by all slots;\n"
        "                          original: one session per recorded connection,\n"
        "                          its requests in recorded order\n"
        "      --tls-resume        per-request sessions resume TLS (tickets / ids)\n"
        "TLS:\n"
        "      --cacert FILE       CA certificates to verify the target with\n"
        "  -k, --insecure          do not verify the target's certificate\n"
        "      --cert FILE, --key FILE   client certificate and key (mTLS)\n"
        "      --tls-min V, --tls-max V  1.2 or 1.3\n"
        "      --ciphers LIST      TLS <= 1.2 cipher list\n"
        "      --keylog FILE       append TLS secrets in NSS key log format (for capture)\n"
        "Credentials (never on the command line):\n"
        "      --user NAME         HTTP basic user; the password comes from the\n"
        "                          YANGBLAST_PASSWORD environment variable or\n"
        "      --password-file F   (first line of F)\n"
        "      --token-file F      bearer token (or YANGBLAST_TOKEN)\n"
        "  -H, --header 'K: V'     add a header to every request (repeatable)\n"
        "Limits and output:\n"
        "      --timeout D         per request, incl. connect (default 30s; 0 = none)\n"
        "      --max-body BYTES    response body cap (default 64 MiB)\n"
        "      --max-errors N      exit 1 when more than N requests fail (default 0)\n"
        "      --json FILE         write the JSON report (yangblast-report(5))\n"
        "      --unit NAME         what one request is, for the table (e.g. ACL)\n"
        "      --hgrm FILE         end-to-end percentiles in HdrHistogram's .hgrm format\n"
        "      --hlog FILE         per-second HdrHistogram interval log (.hlog, V2)\n"
        "      --csv FILE          append one row for this run (header when new)\n"
        "  -q, --quiet             no live progress line (shown only on a terminal)\n"
        "  -h, --help              this help\n");
}

int yb_cmd_run(int argc, char **argv)
{
    enum { O_SESS = 256, O_RESUME, O_CACERT, O_CERT, O_KEY, O_TLSMIN, O_TLSMAX, O_CIPHERS,
           O_USER, O_PWFILE, O_TOKFILE, O_TIMEOUT, O_MAXBODY, O_MAXERR, O_JSON, O_UNIT,
           O_TARGET, O_RATE, O_BACKLOG, O_TIMING, O_SPEED, O_QUIET, O_HGRM, O_HLOG, O_CSV, O_SPIN, O_KEYLOG };
    enum { O_SUBS = 400 };
    static const struct option opts[] = {
        {"requests", required_argument, NULL, 'n'}, {"duration", required_argument, NULL, 'D'},
        {"concurrency", required_argument, NULL, 'c'}, {"threads", required_argument, NULL, 't'},
        {"streams", required_argument, NULL, 'm'}, {"sessions", required_argument, NULL, O_SESS},
        {"tls-resume", no_argument, NULL, O_RESUME}, {"cacert", required_argument, NULL, O_CACERT},
        {"insecure", no_argument, NULL, 'k'}, {"cert", required_argument, NULL, O_CERT},
        {"key", required_argument, NULL, O_KEY}, {"tls-min", required_argument, NULL, O_TLSMIN},
        {"tls-max", required_argument, NULL, O_TLSMAX},
        {"ciphers", required_argument, NULL, O_CIPHERS},
        {"keylog", required_argument, NULL, O_KEYLOG},
        {"user", required_argument, NULL, O_USER},
        {"password-file", required_argument, NULL, O_PWFILE},
        {"token-file", required_argument, NULL, O_TOKFILE},
        {"header", required_argument, NULL, 'H'}, {"timeout", required_argument, NULL, O_TIMEOUT},
        {"max-body", required_argument, NULL, O_MAXBODY},
        {"max-errors", required_argument, NULL, O_MAXERR},
        {"json", required_argument, NULL, O_JSON}, {"unit", required_argument, NULL, O_UNIT},
        {"target", required_argument, NULL, O_TARGET}, {"help", no_argument, NULL, 'h'},
        {"rate", required_argument, NULL, O_RATE},
        {"max-backlog", required_argument, NULL, O_BACKLOG},
        {"spin", required_argument, NULL, O_SPIN},
        {"timing", required_argument, NULL, O_TIMING},
        {"quiet", no_argument, NULL, 'q'},
        {"hgrm", required_argument, NULL, O_HGRM},
        {"hlog", required_argument, NULL, O_HLOG},
        {"csv", required_argument, NULL, O_CSV},
        {"speed", required_argument, NULL, O_SPEED},
        {"subscriptions", required_argument, NULL, O_SUBS},
        {NULL, 0, NULL, 0}};
    yb_engine_opts o;
    yb_engine_defaults(&o);
    const char *hgrm = NULL, *hlog = NULL, *csv = NULL;
    const char *rate = NULL, *target = NULL, *json = NULL, *unit = NULL, *user = NULL, *pwfile = NULL,
               *tokfile = NULL, *sessions = "reuse";
    uint64_t max_errors = 0, v, subscriptions = 0;
    int conc_set = 0;
    yb_header extra[64];
    size_t n_extra = 0;
    int c, ret = YB_EXIT_OK;
    optind = 1;
    int quiet = 0;
    while ((c = getopt_long(argc, argv, "n:D:c:t:m:kH:hq", opts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (yb_parse_u64(optarg, 1, UINT64_MAX / 2, &o.requests) < 0)
                return yb_usage_error("run", "-n must be a positive integer");
            break;
        case 'D':
            if (yb_parse_duration(optarg, &o.duration_ns) < 0 || !o.duration_ns)
                return yb_usage_error("run", "-D must be a duration like 30s");
            break;
        case 'c':
            if (yb_parse_u64(optarg, 1, 100000, &v) < 0)
                return yb_usage_error("run", "-c must be an integer in 1..100000");
            o.concurrency = (unsigned)v;
            conc_set = 1;
            break;
        case 't':
            if (yb_parse_u64(optarg, 1, 256, &v) < 0)
                return yb_usage_error("run", "-t must be an integer in 1..256");
            o.threads = (unsigned)v;
            break;
        case 'm':
            if (yb_parse_u64(optarg, 1, 100000, &v) < 0)
                return yb_usage_error("run", "-m must be an integer in 1..100000");
            o.streams = (unsigned)v;
            break;
        case O_SESS: sessions = optarg; break;
        case O_RESUME: o.tls_resume = 1; break;
        case O_CACERT: o.tls.cacert = optarg; break;
        case 'k': o.tls.insecure = 1; break;
        case O_CERT: o.tls.cert = optarg; break;
        case O_KEY: o.tls.key = optarg; break;
        case O_TLSMIN:
            if (yb_tls_parse_version(optarg, &o.tls.min_version) < 0)
                return yb_usage_error("run", "--tls-min must be 1.2 or 1.3");
            break;
        case O_TLSMAX:
            if (yb_tls_parse_version(optarg, &o.tls.max_version) < 0)
                return yb_usage_error("run", "--tls-max must be 1.2 or 1.3");
            break;
        case O_CIPHERS: o.tls.ciphers = optarg; break;
        case O_KEYLOG: o.tls.keylog = optarg; break;
        case O_USER: user = optarg; break;
        case O_PWFILE: pwfile = optarg; break;
        case O_TOKFILE: tokfile = optarg; break;
        case 'H': {
            char *colon = strchr(optarg, ':');
            if (!colon || colon == optarg || n_extra == sizeof extra / sizeof extra[0])
                return yb_usage_error("run", "-H wants 'Name: value' (at most 64)");
            *colon = 0;
            const char *val = colon + 1;
            while (*val == ' ')
                val++;
            extra[n_extra].name = optarg;
            extra[n_extra].value = (uint8_t *)val;
            extra[n_extra].value_len = strlen(val);
            n_extra++;
            break;
        }
        case O_TIMEOUT:
            if (yb_parse_duration(optarg, &o.timeout_ns) < 0)
                return yb_usage_error("run", "--timeout must be a duration like 10s");
            break;
        case O_MAXBODY:
            if (yb_parse_u64(optarg, 1, 1ull << 32, &o.codec.max_body) < 0)
                return yb_usage_error("run", "--max-body must be a byte count");
            break;
        case O_MAXERR:
            if (yb_parse_u64(optarg, 0, UINT64_MAX, &max_errors) < 0)
                return yb_usage_error("run", "--max-errors must be a non-negative integer");
            break;
        case O_JSON: json = optarg; break;
        case O_UNIT: unit = optarg; break;
        case O_TARGET: target = optarg; break;
        case O_RATE: rate = optarg; break;
        case 'q': quiet = 1; break;
        case O_HGRM: hgrm = optarg; break;
        case O_HLOG: hlog = optarg; break;
        case O_CSV: csv = optarg; break;
        case O_TIMING:
            if (strcmp(optarg, "original"))
                return yb_usage_error("run", "--timing takes 'original'");
            o.timing_original = 1;
            break;
        case O_SPEED:
            if (yb_parse_double(optarg, &o.speed) < 0 || o.speed <= 0 || o.speed > 1e6)
                return yb_usage_error("run", "--speed must be a positive number");
            break;
        case O_SPIN:
            if (yb_parse_duration(optarg, &o.spin_ns) < 0 || o.spin_ns > 10000000)
                return yb_usage_error("run", "--spin must be a duration up to 10ms, e.g. 100us");
            break;
        case O_BACKLOG:
            if (yb_parse_u64(optarg, 0, 100000000, &o.max_backlog) < 0)
                return yb_usage_error("run", "--max-backlog must be a non-negative integer");
            break;
        case O_SUBS:
            if (yb_parse_u64(optarg, 1, 100000, &subscriptions) < 0)
                return yb_usage_error("run", "--subscriptions must be an integer in 1..100000");
            break;
        case 'h': help(); return YB_EXIT_OK;
        default: return yb_usage_error("run", "bad option");
        }
    }
    if (optind + 1 != argc)
        return yb_usage_error("run", "expected exactly one CORPUS");
    if (!target)
        return yb_usage_error("run", "missing --target URL");
    o.corpus_path = argv[optind];
    if (!strcmp(sessions, "reuse"))
        o.policy = YB_SESS_REUSE;
    else if (!strcmp(sessions, "per-request"))
        o.policy = YB_SESS_PER_REQUEST;
    else if (!strcmp(sessions, "original"))
        o.policy = YB_SESS_ORIGINAL;
    else if (!strncmp(sessions, "pool=", 5) && yb_parse_u64(sessions + 5, 1, 100000, &v) == 0) {
        o.policy = YB_SESS_POOL;
        o.pool_size = (unsigned)v;
    } else
        return yb_usage_error("run", "--sessions must be reuse, per-request, pool=N or original");
    if (rate && o.timing_original)
        return yb_usage_error("run", "--rate and --timing original exclude each other");
    if (o.speed && !o.timing_original)
        return yb_usage_error("run", "--speed goes with --timing original");
    if (!o.speed)
        o.speed = 1.0;
    if (subscriptions) {
        /* N Subscribe calls held open: the closed loop at -c N, cycling
         * through the corpus for the run's duration */
        if (!o.duration_ns)
            return yb_usage_error("run", "--subscriptions needs --duration");
        if (rate || o.timing_original || o.requests)
            return yb_usage_error("run", "--subscriptions is a closed loop for --duration: "
                                         "no --rate, --timing or -n");
        if (conc_set && o.concurrency != subscriptions)
            return yb_usage_error("run", "--subscriptions N sets -c N");
        o.concurrency = (unsigned)subscriptions;
    }
    if (o.concurrency < o.threads)
        return yb_usage_error("run", "-c (%u) must be at least -t (%u)", o.concurrency, o.threads);
    if (o.policy == YB_SESS_POOL && o.pool_size < o.threads)
        return yb_usage_error("run", "pool=N needs N >= -t");
    if ((o.tls.cert != NULL) != (o.tls.key != NULL))
        return yb_usage_error("run", "--cert and --key go together");
    if (o.tls.min_version && o.tls.max_version && o.tls.min_version > o.tls.max_version)
        return yb_usage_error("run", "--tls-min is above --tls-max");
    char err[512];
    if (rate && yb_sched_parse(rate, &o.sched, err, sizeof err) < 0)
        return yb_usage_error("run", "%s", err);
    if (yb_target_parse(target, &o.target, err, sizeof err) < 0) {
        yb_errorf("%s", err);
        return YB_EXIT_USAGE;
    }
    const char *proto = "";
    int rc = yb_pick_codec(o.corpus_path, &o.ops, &proto);
    if (rc)
        return rc;

    /* Credentials: from the environment or files only, never argv. */
    yb_credentials cred;
    if (yb_credentials_load(user, pwfile, tokfile, &cred) < 0)
        return YB_EXIT_USAGE;
    yb_engine_bind(&o, &cred, user);
    o.codec.extra = extra;
    o.codec.n_extra = n_extra;
    o.stop = &stop_flag;
    int live = !quiet && isatty(STDERR_FILENO) && isatty(STDOUT_FILENO);
    if (live)
        o.progress = show_progress;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    yb_recorder rec;
    if (yb_recorder_init(&rec) < 0) {
        yb_errorf("out of memory");
        ret = YB_EXIT_RUNTIME;
        goto out;
    }
    double cpu_user = 0, cpu_sys = 0;
    struct timespec wall0;
    clock_gettime(CLOCK_REALTIME, &wall0);
    rc = yb_run_timed(&o, &rec, &cpu_user, &cpu_sys, err, sizeof err);
    if (live)
        fputs("\r\033[K", stderr);
    if (rc < 0) {
        yb_errorf("%s", err);
        yb_recorder_cleanup(&rec);
        ret = YB_EXIT_USAGE;
        goto out;
    }
    char sess_desc[32], load_desc[64];
    snprintf(load_desc, sizeof load_desc, "original timing x%g", o.speed);
    snprintf(sess_desc, sizeof sess_desc, "pool=%u", o.pool_size);
    yb_run_info info = {
        .corpus = o.corpus_path,
        .target = target,
        .protocol = proto,
        .sessions = o.policy == YB_SESS_REUSE ? "reuse"
                    : o.policy == YB_SESS_PER_REQUEST ? "per-request"
                    : o.policy == YB_SESS_ORIGINAL ? "original" : sess_desc,
        .tls_resume = o.tls_resume,
        .concurrency = o.concurrency,
        .threads = o.threads,
        .streams = o.streams,
        .unit = unit,
        .rate = o.sched.kind == YB_SCHED_RATE ? o.sched.rate : 0,
        .load = o.timing_original ? load_desc : o.sched.kind > YB_SCHED_RATE ? rate : NULL,
        .cpu_user_s = cpu_user,
        .cpu_sys_s = cpu_sys,
        .max_errors = max_errors,
    };
    if (yb_report_text(stdout, &rec, &info) < 0)
        ret = YB_EXIT_RUNTIME;
    fflush(stdout);
    if (json) {
        json_t *j = yb_report_json(&rec, &info);
        if (!j || yb_write_json_file(json, j, err, sizeof err) < 0) {
            yb_errorf("%s", j ? err : "cannot build the JSON report");
            ret = YB_EXIT_RUNTIME;
        }
        json_decref(j);
    }
    if (hgrm && yb_report_hgrm(hgrm, &rec, err, sizeof err) < 0) {
        yb_errorf("%s", err);
        ret = YB_EXIT_RUNTIME;
    }
    if (hlog && yb_report_hlog(hlog, &rec, (double)wall0.tv_sec + (double)wall0.tv_nsec / 1e9,
                               err, sizeof err) < 0) {
        yb_errorf("%s", err);
        ret = YB_EXIT_RUNTIME;
    }
    if (csv && yb_report_csv(csv, &rec, &info, err, sizeof err) < 0) {
        yb_errorf("%s", err);
        ret = YB_EXIT_RUNTIME;
    }
    uint64_t errors = rec.completed - rec.ok;
    if (ret == YB_EXIT_OK && errors > max_errors)
        ret = YB_EXIT_THRESHOLD;
    yb_recorder_cleanup(&rec);
out:
    yb_credentials_cleanup(&cred);
    return ret;
}
