/* The shared option table of `run` and `experiment` (see runopts.h). */
#include "config.h"
#include "cli/runopts.h"
#include "cli/cli.h"
#include "cli/runcommon.h"
#include "cli/runid.h"
#include "report/metrics.h"
#include "stats/ops.h"
#include "util/outfile.h"
#include "util/util.h"
#include "util/walltime.h"

#include <openssl/ssl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#define RUN YB_RO_RUN
#define EXP YB_RO_EXPERIMENT
#define BOTH (YB_RO_RUN | YB_RO_EXPERIMENT)
#define PLAN YB_RO_PLAN

typedef struct {
    const char *group;  /* --help heading starting a group, or NULL */
    const char *name;   /* long name */
    int id;             /* short letter or YB_RO_* */
    int has_arg;
    unsigned cmds;
    const char *usage;  /* the option as --help shows it */
    const char *help;   /* its --help text ('\n' continues on the next line) */
} opt_def;

static const opt_def OPTS[] = {
    {"Load:", "requests", 'n', required_argument, RUN | PLAN, "-n, --requests N",
     "total requests (cycling through the corpus);\ndefault: one pass over the corpus"},
    {NULL, "duration", 'D', required_argument, RUN | PLAN, "-D, --duration D",
     "run for D (e.g. 30s, 1m30s, 2h), cycling"},
    {NULL, "concurrency", 'c', required_argument, BOTH | PLAN, "-c, --concurrency N",
     "sessions (connections; default 1), as in h2load:\nthe closed loop keeps N x M in flight"},
    {NULL, "threads", 't', required_argument, BOTH, "-t, --threads N", "worker threads (default 1)"},
    {NULL, "streams", 'm', required_argument, BOTH | PLAN, "-m, --streams M",
     "requests in flight on each session: HTTP/2\nstreams (default 1; gNMI only)"},
    {NULL, "subscriptions", YB_RO_SUBS, required_argument, RUN | PLAN, "    --subscriptions N",
     "gNMI Subscribe corpus: hold N Subscribe calls open\nat once for --duration (-c N, cycling; "
     "a ONCE or\nPOLL call that ends is replaced, STREAM calls last\nthe run)"},
    {NULL, "rate", YB_RO_RATE, required_argument, RUN | PLAN, "    --rate R",
     "open loop: R requests/s across all workers (e.g.\n500, 2k), due at fixed intervals whatever "
     "the\nresponses; latency is measured from the due time\n(coordinated omission corrected); also\n"
     "ramp:FROM..TO/DURATION and step:R1@D1,R2@D2,..."},
    {NULL, "timing", YB_RO_TIMING, required_argument, RUN | PLAN, "    --timing original",
     "open loop at the corpus' recorded times (e.g. from a"},
    {NULL, "speed", YB_RO_SPEED, required_argument, RUN | PLAN, "    --speed X",
     "capture), X times faster (default 1)"},
    {NULL, "spin", YB_RO_SPIN, required_argument, RUN | PLAN, "    --spin D",
     "open loop: wake D early and spin to each due time\n(e.g. 100us: microsecond-exact sends for "
     "some CPU)"},
    {NULL, "max-backlog", YB_RO_BACKLOG, required_argument, RUN | PLAN, "    --max-backlog N",
     "open loop: due requests that may wait for a free\nsession per worker (default 10000); more "
     "are\ncounted as backlog_overflow errors"},
    {NULL, "max-backlog-bytes", YB_RO_BACKLOG_BYTES, required_argument, RUN | PLAN,
     "    --max-backlog-bytes SIZE",
     "open loop: memory those waiting requests may hold\nper worker (default 64M; streamed "
     "requests hold\ntheir own prepared bytes, cached ones none); more\nare counted as "
     "backlog_overflow errors"},
    {NULL, "max-operations", YB_RO_MAX_OPS, required_argument, RUN, "    --max-operations N",
     "distinct operations in the report's Operations\ntable (default 32, at most 4096); the rest "
     "are\ncounted together as `other`"},
    {"Sessions:", "sessions", YB_RO_SESSIONS, required_argument, RUN | PLAN, "    --sessions P",
     "reuse (default): -c persistent sessions, -m\nrequests in flight on each;\nper-request: "
     "new TCP+TLS session per request\n(-c at once);\noriginal: one session per "
     "recorded connection,\nits requests in recorded order (-c caps requests\nin flight; "
     "no -c with an open loop)"},
    {NULL, "tls-resume", YB_RO_TLS_RESUME, no_argument, RUN | PLAN, "    --tls-resume",
     "new sessions resume TLS (tickets / ids)"},
    {NULL, "io", YB_RO_IO, required_argument, BOTH, "    --io MODE",
     "how plain TCP sessions reach the kernel: auto\n(default: io_uring where the kernel allows "
     "it,\nelse epoll), uring (io_uring or an error), epoll\n(one read and one write call per "
     "request)"},
    {NULL, "target", YB_RO_TARGET, required_argument, RUN, "    --target URL",
     "scheme://host[:port], no path; given twice (an\nhttp(s):// and a grpc(s):// URL), a mixed corpus'\n"
     "RESTCONF records go to the first, gNMI to the other"},
    {NULL, "targets", YB_RO_TARGETS, required_argument, BOTH, "    --targets FILE",
     "YAML inventory of switches (yangblast-inventory(5)),\nvalidated before any traffic (run: "
     "with --fan-out\nor --route authority; experiment: the study on each\ndevice in turn)"},
    {NULL, "plan", YB_RO_PLAN_FILE, required_argument, RUN, "    --plan FILE",
     "run the workloads of a YAML plan concurrently on\none clock, each with its source, "
     "load model,\nsessions, targets, start and duration\n(yangblast-inventory(5), PLAN); "
     "no CORPUS then"},
    {NULL, "fan-out", YB_RO_FAN_OUT, no_argument, RUN, "    --fan-out",
     "send the workload to every inventory target: each\ngets the whole load model (-n, -D, "
     "--rate, -c;\nits own concurrency/rate from the inventory)"},
    {NULL, "split", YB_RO_SPLIT, no_argument, RUN, "    --split",
     "with --fan-out: divide the load model among the\ntargets instead: the records, -n (the "
     "remainder\nspread one each), the --rate schedule and -c\n(default: -t sessions per "
     "target) add up to the\nwhole exactly"},
    {NULL, "route", YB_RO_ROUTE, required_argument, RUN, "    --route authority",
     "with --targets: each record to the target whose\nname, alias or URL is its recorded "
     "host[:port]\n(a capture of a fleet replayed against a lab\nfleet; each target's records "
     "get the load model);\na record with no target is refused before the run"},
    {NULL, "connect-to", YB_RO_CONNECT_TO, required_argument, BOTH,
     "    --connect-to H:P:A:Q", "connect to A:Q for the target H:P (as curl; the\nURL's name "
     "stays in Host, SNI and verification;\nonce, not with several --target)"},
    {"TLS (https:// and grpcs:// targets):", "cacert", YB_RO_CACERT, required_argument, BOTH,
     "    --cacert FILE", "CA certificates to verify the target with"},
    {NULL, "servername", YB_RO_SERVERNAME, required_argument, BOTH, "    --servername NAME",
     "TLS SNI and the name the certificate is verified\nagainst (default: the URL's host)"},
    {NULL, "insecure", 'k', no_argument, BOTH, "-k, --insecure", "do not verify the target's certificate"},
    {NULL, "cert", YB_RO_CERT, required_argument, BOTH, "    --cert FILE", "client certificate (mTLS), with --key"},
    {NULL, "key", YB_RO_KEY, required_argument, BOTH, "    --key FILE", "its private key"},
    {NULL, "tls-min", YB_RO_TLS_MIN, required_argument, BOTH, "    --tls-min V", "lowest TLS version: 1.2 or 1.3"},
    {NULL, "tls-max", YB_RO_TLS_MAX, required_argument, BOTH, "    --tls-max V", "highest TLS version: 1.2 or 1.3"},
    {NULL, "ciphers", YB_RO_CIPHERS, required_argument, BOTH, "    --ciphers LIST", "TLS <= 1.2 cipher list"},
    {NULL, "keylog", YB_RO_KEYLOG, required_argument, BOTH, "    --keylog FILE",
     "append TLS secrets in NSS key log format (for capture)"},
    {"Credentials (never on the command line):", "user", YB_RO_USER, required_argument, BOTH,
     "    --user NAME", "HTTP basic / gNMI user; the password comes from the\nYANGBLAST_PASSWORD "
     "environment variable or"},
    {NULL, "password-file", YB_RO_PWFILE, required_argument, BOTH, "    --password-file F",
     "(first line of F)"},
    {NULL, "token-file", YB_RO_TOKFILE, required_argument, BOTH, "    --token-file F",
     "bearer token (or YANGBLAST_TOKEN)"},
    {NULL, "no-credentials", YB_RO_NO_CREDENTIALS, no_argument, BOTH, "    --no-credentials",
     "replay a corpus whose credentials were redacted\nwithout any (the redacted headers are not "
     "sent)"},
    {NULL, "header", 'H', required_argument, BOTH, "-H, --header 'K: V'",
     "add a header to every request (repeatable); Host\nsets Host / :authority, User-Agent "
     "replaces ours"},
    {"Outcomes:", "accept", YB_RO_ACCEPT, required_argument, BOTH | PLAN, "    --accept LIST",
     "HTTP statuses that succeed besides those below\n400 (e.g. 409,404; repeatable)"},
    {NULL, "accept-grpc", YB_RO_ACCEPT_GRPC, required_argument, BOTH | PLAN, "    --accept-grpc LIST",
     "gRPC codes that succeed besides 0 OK (e.g. 6)"},
    {NULL, "expect", YB_RO_EXPECT, required_argument, BOTH | PLAN, "    --expect original",
     "a record's recorded status is the one expected:\nanother is an 'unexpected' error "
     "(accepted\nstatuses pass; records without one: as above)"},
    {"Templates:", "templates", YB_RO_TEMPLATES, no_argument, RUN, "    --templates",
     "every record is a template: {{...}} in its path,\nheader values and body are "
     "placeholders\n(without it, only records marked \"template\": true)"},
    {NULL, "seed", YB_RO_SEED, required_argument, RUN, "    --seed N",
     "seed of the random placeholders (random, choice,\nuuid): the same seed sends the same "
     "bytes\n(default: a new seed per run)"},
    {"Rewrites (applied once to each record before the run; yangblast(1)):", "rewrite-path",
     YB_RO_REWRITE_PATH, required_argument, RUN | PLAN, "    --rewrite-path F=T",
     "a path starting with F starts with T instead\n(both start with '/'; the first F that "
     "matches\nis used; repeatable)"},
    {NULL, "set-header", YB_RO_SET_HEADER, required_argument, RUN | PLAN, "    --set-header 'K: V'",
     "replace every recorded header K with one K: V\n(added when absent; repeatable)"},
    {NULL, "drop-header", YB_RO_DROP_HEADER, required_argument, RUN | PLAN, "    --drop-header K",
     "remove every recorded header K (repeatable)"},
    {NULL, "rewrite-body", YB_RO_REWRITE_BODY, required_argument, RUN | PLAN,
     "    --rewrite-body S", "substitute in bodies: s/REGEX/REPL/[gi] (POSIX\nextended; & and "
     "\\1..\\9 in REPL) or s/TEXT/REPL/F[gi]\n(fixed text); gNMI bodies in their text form "
     "(as\ncorpus cat --decode prints them); repeatable,\napplied in order"},
    {NULL, "map-authority", YB_RO_MAP_AUTHORITY, required_argument, RUN | PLAN,
     "    --map-authority A=B", "records recorded for authority A are sent for B\n(Host / "
     ":authority; others: the target's)"},
    {"Limits and output:", "timeout", YB_RO_TIMEOUT, required_argument, BOTH | PLAN, "    --timeout D",
     "per request, incl. connect (default 30s; 0 = none)"},
    {NULL, "max-body", YB_RO_MAXBODY, required_argument, BOTH | PLAN, "    --max-body SIZE",
     "response body cap (default 64M; k, M, G suffixes)"},
    {NULL, "max-errors", YB_RO_MAXERR, required_argument, BOTH, "    --max-errors N",
     "exit 1 when more than N requests fail (default 0)"},
    {NULL, "json", YB_RO_JSON, required_argument, BOTH, "    --json FILE",
     "write the JSON report (yangblast-report(5));\n'-' = stdout (the text report then goes to "
     "stderr)"},
    {NULL, "html", YB_RO_HTML, required_argument, BOTH, "    --html FILE",
     "write an HTML report with plots (as yangblast\nreport renders the JSON report)"},
    {NULL, "unit", YB_RO_UNIT, required_argument, BOTH, "    --unit NAME",
     "what one request is, for the table (e.g. ACL)"},
    {NULL, "hgrm", YB_RO_HGRM, required_argument, RUN, "    --hgrm FILE",
     "end-to-end percentiles in HdrHistogram's .hgrm format"},
    {NULL, "hlog", YB_RO_HLOG, required_argument, RUN, "    --hlog FILE",
     "per-second HdrHistogram interval log (.hlog, V2)"},
    {NULL, "log", YB_RO_LOG, required_argument, RUN, "    --log FILE",
     "one line per request as it completes (JSON lines:\nwhen, phases, bytes, status, error; "
     "'-' = stdout)"},
    {NULL, "log-format", YB_RO_LOG_FORMAT, required_argument, RUN, "    --log-format F",
     "json (default) or csv"},
    {NULL, "series", YB_RO_SERIES, required_argument, RUN, "    --series FILE",
     "the per-second figures as JSON lines, each written\nas its second ends (tail -f works)"},
    {NULL, "csv", YB_RO_CSV, required_argument, BOTH, "    --csv FILE",
     "append one row per run (header when new)"},
    {NULL, "quiet", 'q', no_argument, BOTH, "-q, --quiet", "no progress on stderr (run: the live line, shown\n"
     "only on a terminal; experiment: one line per run)"},
    {NULL, "verbose", 'v', no_argument, RUN, "-v, --verbose",
     "print each new distinct error reason on stderr when\nit first happens, with its time"},
    {NULL, "metrics-listen", YB_RO_METRICS_LISTEN, required_argument, BOTH,
     "    --metrics-listen A:P", "serve live Prometheus / OpenMetrics text at\nhttp://A:P/metrics "
     "while the run goes (:P =\nloopback; until the report is written)"},
    {NULL, "metrics-linger", YB_RO_METRICS_LINGER, required_argument, BOTH,
     "    --metrics-linger D", "keep serving the final figures D longer (e.g. 30s,\nfor a "
     "scrape interval)"},
    {NULL, "metrics-max-series", YB_RO_METRICS_SERIES, required_argument, BOTH,
     "    --metrics-max-series N", "distinct (workload, target) label pairs (default\n64, at "
     "most 4096); the rest are added up as\n`other`"},
    {"Pass or fail:", "threshold", YB_RO_THRESHOLD, required_argument, BOTH,
     "    --threshold EXPR", "fail the run (exit 1) unless EXPR holds at the end,\n"
     "e.g. 'e2e.p99<50ms', 'errors<0.1%', 'rate>=990/s',\n'target=NAME:ttfb.p99.9<200ms' "
     "(repeatable; see\nyangblast(1) for the grammar)"},
    {NULL, "abort-on-fail", YB_RO_ABORT_ON_FAIL, no_argument, RUN, "    --abort-on-fail",
     "check the thresholds each second on the figures\nso far (e2e.*, errors, rate) and stop "
     "the run\nearly when one fails"},
    {"Scale-out (one run divided among processes; yangblast(1)):", "shard", YB_RO_SHARD,
     required_argument, RUN, "    --shard I/N", "run shard I (0-based) of N of the run: request,\n"
     "record, session, due time or --fan-out target k\nis shard k mod N's (N <= 1024)"},
    {NULL, "shards", YB_RO_SHARDS, required_argument, RUN, "    --shards N",
     "with --shard-from-env: N shards, this one's index"},
    {NULL, "shard-from-env", YB_RO_SHARD_ENV, required_argument, RUN,
     "    --shard-from-env VAR", "read from variable VAR (e.g. Kubernetes'\n"
     "JOB_COMPLETION_INDEX)"},
    {NULL, "start-at", YB_RO_START_AT, required_argument, RUN, "    --start-at TIME",
     "prepare everything, then start the run's clock at\nwall-clock TIME: RFC 3339 "
     "(2026-11-30T18:00:00Z)\nor Unix time (@1796061600); the report records\nthe "
     "offset and the clock's NTP state"},
    {NULL, "run-id", YB_RO_RUN_ID, required_argument, RUN, "    --run-id ID",
     "the run's id in the report (default: a hash of\nthe options and inputs that define "
     "the work, the\nsame on every shard)"},
    {"Device telemetry:", "telemetry", YB_RO_TELEMETRY, no_argument, RUN, "    --telemetry",
     "watch each target's CPU, memory and processes\n(openconfig-system) on a session of its "
     "own:\ngNMI STREAM SAMPLE, or RESTCONF GET polling"},
    {NULL, "telemetry-interval", YB_RO_TELE_INTERVAL, required_argument, RUN,
     "    --telemetry-interval D", "sampling interval (default 1s)"},
    {NULL, "telemetry-baseline", YB_RO_TELE_BASELINE, required_argument, RUN,
     "    --telemetry-baseline D", "watch this long before the load (default 5s)"},
    {NULL, "telemetry-path", YB_RO_TELE_PATH, required_argument, RUN, "    --telemetry-path P",
     "also watch gNMI path P (repeatable, up to 13)"},
};
#define N_OPTS (sizeof OPTS / sizeof OPTS[0])

/* What `experiment sweep` sets itself, per step (the load), or does not
 * write (per-run streams): run's options without these. */
static int sweep_own(int id)
{
    static const int OWN[] = {'c', 'n', 'D', YB_RO_RATE, YB_RO_TIMING, YB_RO_SPEED, YB_RO_SUBS,
                              YB_RO_THRESHOLD, YB_RO_ABORT_ON_FAIL, YB_RO_SPLIT, YB_RO_ROUTE,
                              YB_RO_LOG,
                              YB_RO_LOG_FORMAT, YB_RO_SERIES, YB_RO_HLOG, YB_RO_HGRM, YB_RO_CSV,
                              YB_RO_SHARD, YB_RO_SHARDS, YB_RO_SHARD_ENV, YB_RO_START_AT,
                              YB_RO_RUN_ID};
    for (size_t i = 0; i < sizeof OWN / sizeof OWN[0]; i++)
        if (OWN[i] == id)
            return 1;
    return 0;
}

/* Whether option d belongs to command cmd. */
static int applies(const opt_def *d, unsigned cmd)
{
    if (cmd == YB_RO_SWEEP)
        return (d->cmds & YB_RO_RUN) && !sweep_own(d->id);
    return (d->cmds & cmd) != 0;
}

static const opt_def *find(unsigned cmd, int id)
{
    for (size_t i = 0; i < N_OPTS; i++)
        if (OPTS[i].id == id && applies(&OPTS[i], cmd))
            return &OPTS[i];
    return NULL;
}

const char *yb_runopts_name(int id)
{
    static char buf[40];
    for (size_t i = 0; i < N_OPTS; i++)
        if (OPTS[i].id == id) {
            if (id < 256)
                snprintf(buf, sizeof buf, "-%c", id);
            else
                snprintf(buf, sizeof buf, "--%s", OPTS[i].name);
            return buf;
        }
    return "?";
}

void yb_runopts_init(yb_runopts *r)
{
    memset(r, 0, sizeof *r);
    yb_engine_defaults(&r->o);
    yb_thresholds_init(&r->th);
    r->sessions = "reuse";
    r->tele_interval_ns = 1000000000ull;
    r->tele_baseline_ns = 5000000000ull;
}

int yb_runopts_getopt(unsigned cmd, const struct option *own, const char *own_short,
                      struct option *out, size_t cap, char *shortopts, size_t scap)
{
    size_t n = 0, s = 0;
    if (scap < 2)
        return -1;
    shortopts[s++] = ':';
    for (size_t i = 0; i < N_OPTS; i++) {
        if (!applies(&OPTS[i], cmd))
            continue;
        if (n + 1 >= cap)
            return -1;
        out[n++] = (struct option){OPTS[i].name, OPTS[i].has_arg, NULL, OPTS[i].id};
        if (OPTS[i].id < 256) {
            if (s + 3 >= scap)
                return -1;
            shortopts[s++] = (char)OPTS[i].id;
            if (OPTS[i].has_arg == required_argument)
                shortopts[s++] = ':';
        }
    }
    for (; own && own->name; own++) {
        if (n + 1 >= cap)
            return -1;
        out[n++] = *own;
    }
    out[n] = (struct option){NULL, 0, NULL, 0};
    size_t ol = strlen(own_short);
    if (s + ol + 1 > scap)
        return -1;
    memcpy(shortopts + s, own_short, ol + 1);
    return 0;
}

void yb_runopts_help(FILE *f, unsigned cmd)
{
    for (size_t i = 0; i < N_OPTS; i++) {
        if (OPTS[i].group)
            for (size_t k = i; k < N_OPTS && (k == i || !OPTS[k].group); k++)
                if (applies(&OPTS[k], cmd)) { /* a heading only over options shown */
                    fprintf(f, "%s\n", OPTS[i].group);
                    break;
                }
        if (!applies(&OPTS[i], cmd))
            continue;
        fprintf(f, "  %-23s", OPTS[i].usage);
        for (const char *p = OPTS[i].help; *p;) {
            size_t len = strcspn(p, "\n");
            fprintf(f, " %.*s\n", (int)len, p);
            p += len;
            if (*p == '\n') {
                p++;
                fprintf(f, "  %-23s", "");
            }
        }
    }
}

/* Prints "yangblast CMD: OPTION 'VALUE': expected WHAT". */
static int bad(const char *cmdname, int id, const char *arg, const char *what)
{
    return yb_usage_error(cmdname, "%s '%s': expected %s", yb_runopts_name(id), arg, what);
}

static int count(const char *cmdname, int id, const char *arg, uint64_t min, uint64_t max,
                 uint64_t *out)
{
    if (yb_parse_u64(arg, min, max, out) == 0)
        return 0;
    char what[80];
    snprintf(what, sizeof what, "an integer in %llu..%llu", (unsigned long long)min,
             (unsigned long long)max);
    return bad(cmdname, id, arg, what);
}

static int duration(const char *cmdname, int id, const char *arg, uint64_t min, uint64_t max,
                    uint64_t *ns)
{
    uint64_t v;
    if (yb_parse_duration(arg, &v) == 0 && v >= min && v <= max) {
        *ns = v;
        return 0;
    }
    if (min)
        return bad(cmdname, id, arg, YB_FORMS_DURATION " above 0");
    if (max < 1000000000ull)
        return bad(cmdname, id, arg, YB_FORMS_DURATION " up to 10ms");
    return bad(cmdname, id, arg, YB_FORMS_DURATION);
}

/* --tls-min/--tls-max take exactly what --help says: 1.2 or 1.3. */
static int tls_version(const char *cmdname, int id, const char *arg, int *out)
{
    if ((strcmp(arg, "1.2") && strcmp(arg, "1.3")) || yb_tls_parse_version(arg, out) < 0)
        return bad(cmdname, id, arg, "1.2 or 1.3");
    return 0;
}

static int header(const char *cmdname, const char *arg, yb_runopts *r)
{
    /* getopt hands out argv's own storage: split it in place */
    char *a = (char *)arg, *colon = strchr(a, ':');
    if (!colon || colon == a || r->n_extra == YB_RO_MAX_HEADERS)
        return yb_usage_error(cmdname, "-H '%s': expected 'Name: value' (at most %d)", arg,
                              YB_RO_MAX_HEADERS);
    if (strstr(colon, "{{prev."))
        return yb_usage_error(cmdname, "-H '%.*s: ...': a {{prev....}} placeholder takes a "
                              "value from the previous step of a chain, so it belongs in a "
                              "step's record, not in -H (which every request carries)",
                              (int)(colon - a), a);
    *colon = 0;
    const char *val = colon + 1;
    while (*val == ' ')
        val++;
    /* Host and User-Agent replace what yangblast sends, never join it
     * (two Host headers, or a host header beside :authority) */
    const char **own = !strcasecmp(a, "host") ? &r->host_header
                       : !strcasecmp(a, "user-agent") ? &r->user_agent : NULL;
    if (own) {
        if (*own)
            return yb_usage_error(cmdname, "-H '%s: ...' given twice", a);
        if (!*val)
            return yb_usage_error(cmdname, "-H '%s:' needs a value", a);
        *own = val;
        return 0;
    }
    r->extra[r->n_extra].name = a;
    r->extra[r->n_extra].value = (uint8_t *)val;
    r->extra[r->n_extra].value_len = strlen(val);
    r->n_extra++;
    return 0;
}

/* Checks a rewrite option now (a bad one is refused before anything
 * else), and keeps it for yb_runopts_rewrite. */
static int rewrite_rule(const char *cmdname, int id, const char *arg, yb_runopts *r)
{
    static const yb_rw_kind KIND[] = {YB_RW_PATH, YB_RW_SET_HEADER, YB_RW_DROP_HEADER,
                                      YB_RW_BODY, YB_RW_AUTHORITY};
    yb_rw_kind k = KIND[id - YB_RO_REWRITE_PATH];
    char err[400];
    yb_rewrite *rw = yb_rewrite_new();
    if (!rw)
        return yb_usage_error(cmdname, "out of memory");
    int rc = yb_rewrite_add(rw, k, arg, err, sizeof err);
    yb_rewrite_free(rw);
    /* a header's value is not repeated: it may be a credential given by
     * mistake (from a plan file, not only argv) */
    if (rc < 0 && k == YB_RW_SET_HEADER && strchr(arg, ':'))
        return yb_usage_error(cmdname, "%s '%.*s: ...': %s", yb_runopts_name(id),
                              (int)(strchr(arg, ':') - arg), arg, err);
    if (rc < 0)
        return yb_usage_error(cmdname, "%s '%s': %s", yb_runopts_name(id), arg, err);
    if (r->n_rw == YB_REWRITE_MAX_RULES)
        return yb_usage_error(cmdname, "more than %d rewrite rules", YB_REWRITE_MAX_RULES);
    r->rw[r->n_rw].kind = k;
    r->rw[r->n_rw++].spec = arg;
    return 0;
}

int yb_runopts_rewrite(const char *cmd, yb_runopts *r, yb_engine_opts *o)
{
    if (!r->n_rw)
        return 0;
    if (r->route_authority && r->given[YB_RO_MAP_AUTHORITY])
        return yb_usage_error(cmd, "--map-authority does not apply with --route authority, which "
                              "routes by the recorded authority: name it as an alias of its "
                              "target in the inventory instead");
    if (r->host_header && r->given[YB_RO_MAP_AUTHORITY])
        return yb_usage_error(cmd, "-H 'Host: ...' sets every request's authority and "
                              "--map-authority some records': give one");
    char err[1200];
    uint64_t hits[YB_REWRITE_MAX_RULES] = {0};
    if (!(r->rewrite = yb_rewrite_new())) {
        yb_errorf("out of memory");
        return YB_EXIT_RUNTIME;
    }
    for (size_t i = 0; i < r->n_rw; i++)
        if (yb_rewrite_add(r->rewrite, r->rw[i].kind, r->rw[i].spec, err, sizeof err) < 0)
            return yb_usage_error(cmd, "--%s '%s': %s", yb_rewrite_kind_name(r->rw[i].kind),
                                  r->rw[i].spec, err); /* (checked when given) */
    if (yb_rewrite_check_corpus(r->rewrite, o->corpus_path, hits, err, sizeof err) < 0)
        return yb_usage_error(cmd, "%s", err);
    for (size_t i = 0; i < r->n_rw; i++)
        if (!hits[i]) {
            char d[300];
            yb_errorf("warning: %s changes no record of %s",
                      yb_rewrite_describe(r->rewrite, i, d, sizeof d), o->corpus_path);
        }
    o->rewrite = r->rewrite;
    return 0;
}

void yb_runopts_copy(yb_runopts *dst, const yb_runopts *src)
{
    *dst = *src;
    yb_sched_copy(&dst->o.sched, &src->o.sched);
    dst->rewrite = NULL;
    dst->o.rewrite = NULL;
}

void yb_runopts_cleanup(yb_runopts *r)
{
    yb_rewrite_free(r->rewrite);
    r->rewrite = NULL;
    r->o.rewrite = NULL;
    yb_sched_release(&r->o.sched);
}

int yb_runopts_apply(unsigned cmd, const char *cmdname, int id, const char *arg, yb_runopts *r)
{
    if (!find(cmd, id))
        return 1;
    yb_engine_opts *o = &r->o;
    uint64_t v;
    int rc = 0;
    if (r->given[id] < 255)
        r->given[id]++;
    if (r->n_seen < YB_RO_MAX_SEEN) /* for the run id (cli/runid.h) */
        r->seen[r->n_seen++] = (yb_ro_seen){id, arg};
    else
        r->seen_overflow = 1;
    switch (id) {
    case 'n': rc = count(cmdname, id, arg, 1, UINT64_MAX / 2, &o->requests); break;
    case 'D': rc = duration(cmdname, id, arg, 1, UINT64_MAX, &o->duration_ns); break;
    case 'c':
        if (!(rc = count(cmdname, id, arg, 1, 100000, &v)))
            o->concurrency = (unsigned)v;
        break;
    case 't':
        if (!(rc = count(cmdname, id, arg, 1, 256, &v)))
            o->threads = (unsigned)v;
        break;
    case 'm':
        if (!(rc = count(cmdname, id, arg, 1, 100000, &v)))
            o->streams = (unsigned)v;
        break;
    case YB_RO_SUBS: rc = count(cmdname, id, arg, 1, 100000, &r->subscriptions); break;
    case YB_RO_RATE: {
        char err[256];
        yb_sched_release(&o->sched); /* a --rate given again replaces the first */
        if (yb_sched_parse(arg, &o->sched, err, sizeof err) < 0)
            rc = yb_usage_error(cmdname, "%s", err);
        r->rate = arg;
        break;
    }
    case YB_RO_ACCEPT:
    case YB_RO_ACCEPT_GRPC:
        if (yb_accept_add(&o->codec.accept, id == YB_RO_ACCEPT_GRPC, arg) < 0)
            rc = bad(cmdname, id, arg,
                     id == YB_RO_ACCEPT ? "HTTP statuses 100..999, comma-separated (e.g. 409,404)"
                                        : "gRPC codes 0..16, comma-separated (e.g. 6)");
        break;
    case YB_RO_EXPECT:
        if (strcmp(arg, "original"))
            rc = bad(cmdname, id, arg, "'original'");
        o->codec.accept.original = 1;
        break;
    case YB_RO_TEMPLATES: o->codec.templates = 1; break;
    case YB_RO_SEED: rc = count(cmdname, id, arg, 0, UINT64_MAX, &o->codec.seed); break;
    case YB_RO_IO: {
        int mode = yb_io_mode_parse(arg);
        if (mode < 0)
            rc = bad(cmdname, id, arg, "auto, uring or epoll");
        else
            o->io = mode;
        break;
    }
    case YB_RO_TIMING:
        if (strcmp(arg, "original"))
            rc = bad(cmdname, id, arg, "'original'");
        o->timing_original = 1;
        break;
    case YB_RO_SPEED:
        if (yb_parse_double(arg, &o->speed) < 0 || o->speed <= 0 || o->speed > 1e6)
            rc = bad(cmdname, id, arg, "a positive number up to 1000000 (e.g. 2 or 0.5)");
        break;
    case YB_RO_SPIN: rc = duration(cmdname, id, arg, 0, 10000000, &o->spin_ns); break;
    case YB_RO_BACKLOG: rc = count(cmdname, id, arg, 0, 100000000, &o->max_backlog); break;
    case YB_RO_BACKLOG_BYTES:
        if (yb_parse_size(arg, 1, 1ull << 40, &o->max_backlog_bytes) < 0)
            rc = bad(cmdname, id, arg, YB_FORMS_SIZE ", at most 1024G");
        break;
    case YB_RO_MAX_OPS: rc = count(cmdname, id, arg, 1, YB_OPS_LIMIT, &o->max_ops); break;
    case YB_RO_METRICS_LISTEN: {
        struct sockaddr_storage ss;
        if (yb_parse_listen(arg, &ss) < 0)
            rc = bad(cmdname, id, arg, "ADDR:PORT, :PORT (loopback) or [v6]:PORT, numeric");
        r->metrics_listen = arg;
        break;
    }
    case YB_RO_METRICS_LINGER:
        rc = duration(cmdname, id, arg, 0, 24 * 3600 * 1000000000ull, &r->metrics_linger_ns);
        break;
    case YB_RO_METRICS_SERIES:
        rc = count(cmdname, id, arg, 1, YB_METRICS_SERIES_LIMIT, &r->metrics_series);
        break;
    case YB_RO_SESSIONS: r->sessions = arg; break;
    case YB_RO_TLS_RESUME: o->tls_resume = 1; break;
    case YB_RO_TARGET:
        if (r->n_targets == YB_RO_MAX_TARGETS)
            return yb_usage_error(cmdname, "--target given more than %d times (a fleet goes "
                                  "in an inventory: --targets FILE)", YB_RO_MAX_TARGETS);
        if (!r->target)
            r->target = arg;
        r->targets[r->n_targets++] = arg;
        break;
    case YB_RO_TARGETS: r->inventory = arg; break;
    case YB_RO_FAN_OUT: r->fan_out = 1; break;
    case YB_RO_SPLIT: r->split = 1; break;
    case YB_RO_ROUTE:
        if (strcmp(arg, "authority"))
            return bad(cmdname, id, arg, "'authority'");
        r->route_authority = 1;
        break;
    case YB_RO_PLAN_FILE: r->plan = arg; break;
    case YB_RO_CACERT: o->tls.cacert = arg; break;
    case YB_RO_SERVERNAME:
        if (!*arg || strlen(arg) > YB_TARGET_MAX_NAME || strpbrk(arg, " /:@[]"))
            return bad(cmdname, id, arg, "a host name");
        r->servername = arg;
        break;
    case YB_RO_CONNECT_TO:
        if (r->connect_to)
            return yb_usage_error(cmdname, "--connect-to given twice");
        r->connect_to = arg;
        break;
    case 'k': o->tls.insecure = 1; break;
    case YB_RO_CERT: o->tls.cert = arg; break;
    case YB_RO_KEY: o->tls.key = arg; break;
    case YB_RO_TLS_MIN: rc = tls_version(cmdname, id, arg, &o->tls.min_version); break;
    case YB_RO_TLS_MAX: rc = tls_version(cmdname, id, arg, &o->tls.max_version); break;
    case YB_RO_CIPHERS: o->tls.ciphers = arg; break;
    case YB_RO_KEYLOG: o->tls.keylog = arg; break;
    case YB_RO_USER: r->user = arg; break;
    case YB_RO_PWFILE: r->pwfile = arg; break;
    case YB_RO_TOKFILE: r->tokfile = arg; break;
    case YB_RO_NO_CREDENTIALS: r->no_credentials = 1; break;
    case 'H': rc = header(cmdname, arg, r); break;
    case YB_RO_REWRITE_PATH:
    case YB_RO_SET_HEADER:
    case YB_RO_DROP_HEADER:
    case YB_RO_REWRITE_BODY:
    case YB_RO_MAP_AUTHORITY: rc = rewrite_rule(cmdname, id, arg, r); break;
    case YB_RO_TIMEOUT: rc = duration(cmdname, id, arg, 0, UINT64_MAX, &o->timeout_ns); break;
    case YB_RO_MAXBODY:
        if (yb_parse_size(arg, 1, 1ull << 32, &o->codec.max_body) < 0)
            rc = bad(cmdname, id, arg, YB_FORMS_SIZE ", at most 4G");
        break;
    case YB_RO_MAXERR: rc = count(cmdname, id, arg, 0, UINT64_MAX, &r->max_errors); break;
    case YB_RO_JSON: r->json = arg; break;
    case YB_RO_HTML: r->html = arg; break;
    case YB_RO_UNIT: r->unit = arg; break;
    case YB_RO_HGRM: r->hgrm = arg; break;
    case YB_RO_HLOG: r->hlog = arg; break;
    case YB_RO_CSV: r->csv = arg; break;
    case YB_RO_LOG: r->log = arg; break;
    case YB_RO_LOG_FORMAT:
        if (strcmp(arg, "json") && strcmp(arg, "csv"))
            rc = bad(cmdname, id, arg, "json or csv");
        r->log_csv = !strcmp(arg, "csv");
        break;
    case YB_RO_SERIES: r->series = arg; break;
    case YB_RO_THRESHOLD: {
        char err[1200];
        if (yb_thresholds_add(&r->th, arg, err, sizeof err) < 0)
            rc = yb_usage_error(cmdname, "%s", err);
        break;
    }
    case YB_RO_ABORT_ON_FAIL: r->th.abort_on_fail = 1; break;
    case YB_RO_TELEMETRY: r->telemetry = 1; break;
    case YB_RO_TELE_INTERVAL:
        rc = duration(cmdname, id, arg, 10000000, 3600000000000ull, &r->tele_interval_ns);
        break;
    case YB_RO_TELE_BASELINE:
        rc = duration(cmdname, id, arg, 0, 3600000000000ull, &r->tele_baseline_ns);
        break;
    case YB_RO_TELE_PATH:
        if (r->n_tele_paths == sizeof r->tele_paths / sizeof r->tele_paths[0])
            return yb_usage_error(cmdname, "--telemetry-path: at most %zu",
                                  sizeof r->tele_paths / sizeof r->tele_paths[0]);
        r->tele_paths[r->n_tele_paths++] = arg;
        break;
    case YB_RO_SHARD:
        if (yb_shard_parse(arg, &o->shard) < 0)
            rc = bad(cmdname, id, arg, "I/N: shard I of N, 0 <= I < N <= 1024 (e.g. 0/3)");
        r->shard_opt = id;
        break;
    case YB_RO_SHARDS: rc = count(cmdname, id, arg, 1, YB_SHARD_MAX, &r->shards); break;
    case YB_RO_SHARD_ENV:
        if (!*arg || strlen(arg) > 255 || arg[strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                     "abcdefghijklmnopqrstuvwxyz0123456789_")])
            rc = bad(cmdname, id, arg, "an environment variable's name (letters, digits, _)");
        r->shard_env = arg;
        break;
    case YB_RO_START_AT:
        if (yb_parse_walltime(arg, &r->start_at_ns) < 0)
            rc = bad(cmdname, id, arg, YB_FORMS_WALLTIME);
        r->start_at = arg;
        break;
    case YB_RO_RUN_ID:
        if (!*arg || strlen(arg) > YB_RUN_ID_MAX || arg[strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                     "abcdefghijklmnopqrstuvwxyz0123456789_.-")])
            rc = bad(cmdname, id, arg, "1 to 64 letters, digits, '_', '.' or '-'");
        r->run_id = arg;
        break;
    case 'q': r->quiet = 1; break;
    case 'v': r->verbose = 1; break;
    default: return 1;
    }
    return rc;
}

int yb_runopts_id(unsigned cmd, const char *name)
{
    for (size_t i = 0; i < N_OPTS; i++)
        if (applies(&OPTS[i], cmd) && !strcmp(OPTS[i].name, name))
            return OPTS[i].id;
    return -1;
}

int yb_runopts_applies(unsigned cmd, int id)
{
    return find(cmd, id) != NULL;
}

int yb_runopts_repeatable(int id)
{
    return id >= YB_RO_REWRITE_PATH && id <= YB_RO_MAP_AUTHORITY;
}

int yb_runopts_load_model(const char *cmdname, yb_runopts *r)
{
    yb_engine_opts *o = &r->o;
    const char *sessions = r->sessions;
    uint64_t v;
    if (!strcmp(sessions, "reuse"))
        o->policy = YB_SESS_REUSE;
    else if (!strcmp(sessions, "per-request"))
        o->policy = YB_SESS_PER_REQUEST;
    else if (!strcmp(sessions, "original"))
        o->policy = YB_SESS_ORIGINAL;
    else if (!strncmp(sessions, "pool=", 5) && yb_parse_u64(sessions + 5, 1, 100000, &v) == 0) {
        /* retired: -c N is N sessions now (h2load's meaning), so pool=N
         * is -c N; kept working (warned) for the scripts that used it */
        if (r->given['c'] && o->concurrency != v)
            return yb_usage_error(cmdname, "--sessions pool=%llu and -c %u both set the number "
                                  "of sessions now: give -c N (sessions) and -m M (requests in "
                                  "flight on each)", (unsigned long long)v, o->concurrency);
        yb_errorf("warning: --sessions pool=%llu is -c %llu now (-c N: N sessions, -m M: M "
                  "requests in flight on each); running --sessions reuse -c %llu",
                  (unsigned long long)v, (unsigned long long)v, (unsigned long long)v);
        o->policy = YB_SESS_REUSE;
        o->concurrency = (unsigned)v;
        r->given['c'] = 1;
    } else
        return yb_usage_error(cmdname, "--sessions '%s': expected reuse, per-request or "
                              "original", sessions);
    int open_loop = r->rate || o->timing_original;
    if (r->rate && o->timing_original)
        return yb_usage_error(cmdname, "--rate and --timing original exclude each other");
    if (r->given[YB_RO_SPEED] && !o->timing_original)
        return yb_usage_error(cmdname, "--speed goes with --timing original");
    static const int OPEN_ONLY[] = {YB_RO_SPIN, YB_RO_BACKLOG, YB_RO_BACKLOG_BYTES};
    for (size_t i = 0; i < sizeof OPEN_ONLY / sizeof OPEN_ONLY[0]; i++)
        if (r->given[OPEN_ONLY[i]] && !open_loop)
            return yb_usage_error(cmdname, "%s applies to the open loop only (--rate or "
                                  "--timing original)", yb_runopts_name(OPEN_ONLY[i]));
    if (r->given['m'] && o->streams > 1 && o->policy == YB_SESS_PER_REQUEST)
        return yb_usage_error(cmdname, "-m does not apply with --sessions per-request: each "
                              "session carries one request");
    if (r->given['c'] && o->policy == YB_SESS_ORIGINAL && open_loop)
        return yb_usage_error(cmdname, "-c does not apply to an open loop with --sessions "
                              "original: requests go out when due, on their recorded "
                              "connection's session");
    if (!o->speed)
        o->speed = 1.0;
    if (r->subscriptions) {
        /* N Subscribe calls held open: the closed loop at -c N, cycling
         * through the corpus for the run's duration */
        if (!o->duration_ns)
            return yb_usage_error(cmdname, "--subscriptions needs --duration");
        if (r->rate || o->timing_original || o->requests)
            return yb_usage_error(cmdname, "--subscriptions is a closed loop for --duration: "
                                  "no --rate, --timing or -n");
        /* N calls in flight: N sessions, or N / M sessions of M streams */
        if (r->given['c'])
            return yb_usage_error(cmdname, "--subscriptions N sets -c N (N / M with -m M)");
        if (r->subscriptions % o->streams)
            return yb_usage_error(cmdname, "--subscriptions %llu with -m %u: N must be a "
                                  "multiple of M (N / M sessions of M calls each)",
                                  (unsigned long long)r->subscriptions, o->streams);
        o->concurrency = (unsigned)(r->subscriptions / o->streams);
    }
    return 0;
}

int yb_runopts_shard(const char *cmdname, yb_runopts *r)
{
    for (int id = YB_RO_SHARD; id <= YB_RO_RUN_ID; id++)
        if (r->given[id] > 1)
            return yb_usage_error(cmdname, "%s given twice", yb_runopts_name(id));
    if (r->given[YB_RO_SHARD] && (r->given[YB_RO_SHARDS] || r->given[YB_RO_SHARD_ENV]))
        return yb_usage_error(cmdname, "--shard I/N excludes --shards and --shard-from-env (give "
                              "one: the index on the command line, or from the environment)");
    if (r->given[YB_RO_SHARDS] != r->given[YB_RO_SHARD_ENV])
        return yb_usage_error(cmdname, "%s", r->given[YB_RO_SHARDS]
                                                 ? "--shards N goes with --shard-from-env VAR "
                                                   "(or give --shard I/N)"
                                                 : "--shard-from-env VAR needs --shards N (the "
                                                   "number of shards)");
    if (r->shard_env) {
        const char *v = getenv(r->shard_env);
        if (!v)
            return yb_usage_error(cmdname, "--shard-from-env %s: the environment variable %s "
                                  "is not set", r->shard_env, r->shard_env);
        if (yb_shard_parse_index(v, (unsigned)r->shards, &r->o.shard) < 0)
            return yb_usage_error(cmdname, "--shard-from-env %s: %s='%.40s' is not a shard "
                                  "index (an integer 0..%llu for --shards %llu)", r->shard_env,
                                  r->shard_env, v, (unsigned long long)r->shards - 1,
                                  (unsigned long long)r->shards);
        r->shard_opt = YB_RO_SHARD_ENV;
    }
    if (r->start_at) {
        int64_t now = yb_walltime_now();
        if (r->start_at_ns < now - 1000000000LL)
            return yb_usage_error(cmdname, "--start-at '%s' is %.1f s in the past (the clock "
                                  "reads %lld.%03lld)", r->start_at,
                                  (double)(now - r->start_at_ns) / 1e9,
                                  (long long)(now / 1000000000LL),
                                  (long long)(now % 1000000000LL / 1000000));
    }
    return 0;
}

int yb_check_shard_load(const char *cmdname, const yb_runopts *r, const yb_engine_opts *o,
                        const char *what)
{
    if (!yb_shard_divides(&o->shard))
        return 0;
    int open_loop = o->sched.kind != YB_SCHED_NONE || o->timing_original;
    if (o->policy == YB_SESS_ORIGINAL && open_loop)
        return 0; /* its sessions are the recorded connections, divided as records are */
    if (o->concurrency < o->shard.count)
        return yb_usage_error(cmdname, "%s%s%u sessions (-c) cannot be divided among %u shards "
                              "(%s; session s is shard s mod N's): give -c %u or more",
                              what ? what : "", what ? ": " : "", o->concurrency,
                              o->shard.count, yb_runopts_name(r->shard_opt), o->shard.count);
    return 0;
}

void yb_runopts_bind_headers(const yb_runopts *r, yb_engine_opts *o)
{
    o->codec.extra = r->extra;
    o->codec.n_extra = r->n_extra;
    if (r->host_header)
        o->codec.authority = r->host_header;
    if (r->user_agent)
        o->codec.user_agent = r->user_agent;
}

int yb_check_tls_applies(const char *cmd, const yb_runopts *r, const char *url)
{
    static const int TLS_ONLY[] = {YB_RO_CACERT, 'k', YB_RO_CERT, YB_RO_KEY, YB_RO_TLS_MIN,
                                   YB_RO_TLS_MAX, YB_RO_CIPHERS, YB_RO_KEYLOG, YB_RO_TLS_RESUME,
                                   YB_RO_SERVERNAME};
    for (size_t i = 0; i < sizeof TLS_ONLY / sizeof TLS_ONLY[0]; i++)
        if (r->given[TLS_ONLY[i]])
            return yb_usage_error(cmd, "%s applies to TLS targets (https://, grpcs://), not '%s'",
                                  yb_runopts_name(TLS_ONLY[i]), url);
    return 0;
}

int yb_check_plain_applies(const char *cmd, const yb_runopts *r, const char *url)
{
    if (r->given[YB_RO_IO])
        return yb_usage_error(cmd, "--io applies to plain targets (http://, grpc://), not '%s' "
                              "(TLS sessions read and write through libuv)", url);
    return 0;
}

int yb_check_outputs(const char *cmd, const char *const *paths, size_t n, const char *append,
                     FILE **text)
{
    char err[600];
    const char *out = NULL;
    *text = stdout;
    for (size_t i = 0; i <= n; i++) {
        const char *p = i < n ? paths[i] : append;
        if (!p)
            continue;
        if (yb_outfile_is_stdout(p)) {
            if (out)
                return yb_usage_error(cmd, "at most one output can be standard output ('-')");
            out = p;
            *text = stderr; /* the human report makes room: --json - | jq works */
        }
        if (yb_outfile_check(p, i == n, err, sizeof err) < 0) {
            yb_errorf("%s", err);
            return YB_EXIT_USAGE;
        }
    }
    return 0;
}

int yb_check_shared(const char *cmd, const yb_runopts *r)
{
    const yb_tls_client_opts *t = &r->o.tls;
    if (r->given[YB_RO_PWFILE] && !r->user)
        return yb_usage_error(cmd, "--password-file needs --user");
    if ((r->given[YB_RO_METRICS_LINGER] || r->given[YB_RO_METRICS_SERIES]) && !r->metrics_listen)
        return yb_usage_error(cmd, "%s goes with --metrics-listen",
                              r->given[YB_RO_METRICS_LINGER] ? "--metrics-linger"
                                                             : "--metrics-max-series");
    if (r->user && r->tokfile)
        return yb_usage_error(cmd, "--user and --token-file exclude each other (one credential)");
    if (r->no_credentials && (r->user || r->tokfile))
        return yb_usage_error(cmd, "--no-credentials excludes --user and --token-file");
    if ((t->cert != NULL) != (t->key != NULL))
        return yb_usage_error(cmd, "--cert and --key go together");
    if (t->min_version && t->max_version && t->min_version > t->max_version)
        return yb_usage_error(cmd, "--tls-min is above --tls-max");
    if (t->insecure && t->cacert)
        return yb_usage_error(cmd, "--cacert does not apply with -k (nothing is verified)");
    if (t->ciphers && t->min_version == TLS1_3_VERSION)
        return yb_usage_error(cmd, "--ciphers sets TLS 1.2 cipher suites: it does not apply "
                              "with --tls-min 1.3");
    /* with --fan-out, -c is per target and the targets share the threads
     * (each thread runs a lane per target it serves) */
    if (r->o.concurrency < r->o.threads && !r->fan_out)
        return yb_usage_error(cmd, "-c (%u) must be at least -t (%u)", r->o.concurrency,
                              r->o.threads);
    if (!r->telemetry && (r->given[YB_RO_TELE_INTERVAL] || r->given[YB_RO_TELE_BASELINE] ||
                          r->given[YB_RO_TELE_PATH]))
        return yb_usage_error(cmd, "%s needs --telemetry",
                              r->given[YB_RO_TELE_INTERVAL]   ? "--telemetry-interval"
                              : r->given[YB_RO_TELE_BASELINE] ? "--telemetry-baseline"
                                                              : "--telemetry-path");
    if ((uint64_t)r->o.concurrency * r->o.streams > 1000000)
        return yb_usage_error(cmd, "-c %u -m %u: at most 1000000 requests in flight (N x M)",
                              r->o.concurrency, r->o.streams);
    return 0;
}
