#include "config.h"
#include "cli/runcommon.h"
#include "cli/cli.h"
#include "tmpl/pick.h"
#include "tmpl/tmpl.h"
#include "report/metrics.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <time.h>

/* Reads the first line of path into a malloc'd string.  Returns NULL with
 * a message printed. */
static char *read_secret_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        yb_errorf("%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, f);
    fclose(f);
    if (n < 0) {
        free(line);
        yb_errorf("%s: empty", path);
        return NULL;
    }
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = 0;
    return line;
}

/* Returns "PREFIX VALUE" in a malloc'd string (NULL on ENOMEM). */
static char *join(const char *prefix, const char *value)
{
    size_t m = strlen(prefix) + strlen(value) + 2;
    char *h = malloc(m);
    if (h)
        snprintf(h, m, "%s %s", prefix, value);
    return h;
}

static void wipe(char **s)
{
    if (*s) {
        explicit_bzero(*s, strlen(*s));
        free(*s);
        *s = NULL;
    }
}

/* 1 when s holds a control character: a bearer token goes into a header
 * value verbatim, where one would break the framing of every request (a
 * password only travels base64-encoded or as gNMI metadata). */
static int has_ctl(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

int yb_credentials_load(const char *user, const char *password_file, const char *token_file,
                        yb_credentials *c)
{
    if (user)
        return yb_credentials_from(user, "YANGBLAST_PASSWORD", password_file, c);
    return yb_credentials_from(NULL, "YANGBLAST_TOKEN", token_file, c);
}

int yb_credentials_from(const char *user, const char *env, const char *file, yb_credentials *c)
{
    memset(c, 0, sizeof *c);
    if (user) {
        if (file)
            c->password = read_secret_file(file);
        else if (getenv(env))
            c->password = strdup(getenv(env));
        else
            yb_errorf("--user given but no password: set %s or --password-file", env);
        if (!c->password)
            return -1;
        size_t n = strlen(user) + 1 + strlen(c->password);
        char *up = malloc(n + 1);
        if (up) {
            snprintf(up, n + 1, "%s:%s", user, c->password);
            char *b64 = yb_base64_encode(up, n);
            explicit_bzero(up, n);
            free(up);
            if (b64) {
                c->auth_header = join("Basic", b64);
                wipe(&b64);
            }
        }
    } else if (file || getenv(env)) {
        c->token = file ? read_secret_file(file) : strdup(getenv(env));
        if (!c->token)
            return -1;
        if (has_ctl(c->token)) {
            yb_errorf("%s: the token contains a control character", file ? file : env);
            yb_credentials_cleanup(c);
            return -1;
        }
        c->auth_header = join("Bearer", c->token);
    } else {
        return 0;
    }
    if (!c->auth_header) {
        yb_errorf("out of memory");
        yb_credentials_cleanup(c);
        return -1;
    }
    return 0;
}

void yb_credentials_cleanup(yb_credentials *c)
{
    wipe(&c->password);
    wipe(&c->token);
    wipe(&c->auth_header);
}

/* Prints the mixed-corpus refusal: every protocol with its count. */
static void refuse_mixed(const char *path, const uint64_t *n, size_t np)
{
    char list[256] = "";
    size_t len = 0;
    for (size_t i = 0; i < np; i++)
        if (n[i] && len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s %llu",
                                    len ? ", " : "", yb_proto_name((yb_proto)i),
                                    (unsigned long long)n[i]);
    yb_errorf("%s: the corpus mixes protocols that travel over different codecs (%s "
              "records): one target cannot take them all; route them to two (run --target "
              "http(s)://... --target grpc(s)://...: RESTCONF records to the first, gNMI to the "
              "other), or split it, e.g. yangblast corpus cat %s | jq -c "
              "'select(.protocol==\"gnmi\")' | yangblast corpus import -o gnmi.ybc",
              path, list, path);
}

int yb_pick_codec(const char *path, const yb_codec_ops **ops, const char **proto,
                  char *redacted, size_t rlen, yb_census_tmpl *tc)
{
    uint64_t n[YB_CENSUS_N];
    yb_proto first;
    int rc = yb_corpus_census(path, n, &first, redacted, rlen, tc);
    if (rc)
        return rc;
    uint64_t h2 = n[YB_PROTO_GNMI] + n[YB_PROTO_HTTP2], total = h2;
    for (size_t i = 0; i < YB_CENSUS_N; i++)
        total += yb_proto_is_h2((yb_proto)i) ? 0 : n[i];
    if (h2 != 0 && h2 != total) {
        refuse_mixed(path, n, YB_CENSUS_N);
        return YB_EXIT_USAGE;
    }
    *proto = yb_proto_name(first);
    *ops = h2 ? &yb_h2_client_ops : &yb_h1_client_ops;
    return 0;
}

/* Reads every record of r (the corpus at path) as yb_corpus_census
 * describes, adding to n, *first_proto, *total and tc.  Returns 0 or -1
 * with err (a reading error, a broken chain or a bad template). */
static int census_pass(yb_corpus_reader *r, const char *path, uint64_t *n, yb_proto *first_proto,
                       uint64_t *total, yb_census_tmpl *tc, char *err, size_t errlen)
{
    const yb_request *q;
    int rc;
    uint32_t chain_left = 0, chain_n = 0;
    uint64_t chain_at = 0;
    while ((rc = yb_corpus_reader_next(r, &q, err, errlen)) == 1) {
        if (!(*total)++)
            *first_proto = q->protocol;
        /* a protocol beyond the known ones counts as unspecified (HTTP/1.1) */
        n[(unsigned)q->protocol < YB_CENSUS_N ? q->protocol : YB_PROTO_UNSPECIFIED]++;
        int later_step = chain_left > 0; /* a chain's second or later record */
        /* chains: whole, and none inside another (the source relies on it) */
        if (q->chain && chain_left) {
            snprintf(err, errlen, "%s: record %llu starts a chain inside the chain of %u "
                     "records that starts at record %llu", path, (unsigned long long)(*total - 1),
                     chain_n, (unsigned long long)chain_at);
            return -1;
        }
        if (chain_left)
            chain_left--;
        else if (q->chain) {
            chain_left = q->chain - 1;
            chain_n = q->chain;
            chain_at = *total - 1;
        }
        if (tc && (q->templated || tc->all)) {
            char terr[600];
            tc->templated++;
            if (yb_tmpl_check(q, terr, sizeof terr) < 0) {
                snprintf(err, errlen, "%s: record %llu: template %s", path,
                         (unsigned long long)(*total - 1), terr);
                return -1;
            }
            if (!later_step && yb_pick_wanted(q)) {
                snprintf(err, errlen, "%s: record %llu: template: its {{prev....}} "
                         "placeholders take values from the response of the step before, but "
                         "it is not a later step of a chain (field \"chain\" on the chain's "
                         "first record)", path, (unsigned long long)(*total - 1));
                return -1;
            }
        }
    }
    if (rc == 0 && chain_left) {
        snprintf(err, errlen, "%s: the corpus ends inside the chain of %u records that "
                 "starts at record %llu", path, chain_n, (unsigned long long)chain_at);
        return -1;
    }
    return rc;
}

int yb_corpus_census(const char *path, uint64_t *n, yb_proto *first_proto, char *redacted,
                     size_t rlen, yb_census_tmpl *tc)
{
    char err[1024];
    yb_corpus_reader *r = yb_corpus_reader_open(path, err, sizeof err);
    if (!r) {
        yb_errorf("%s", err);
        return YB_EXIT_USAGE;
    }
    /* Every record, not just the first: the engine runs one codec, and a
     * record of the other kind could only be skipped, never sent. */
    uint64_t total = 0;
    memset(n, 0, YB_CENSUS_N * sizeof *n);
    *first_proto = YB_PROTO_UNSPECIFIED;
    int rc = 0;
    /* The writer's summary says as much without a pass over the records,
     * unless templates are to be compiled or a chain is broken (the pass
     * names the record at fault).  A summary that lies is found by the
     * reader at the trailer; before that, a record the codec cannot send
     * stops the run, naming it. */
    const yb_corpus_summary *s = yb_corpus_reader_summary(r);
    if (s && s->chains_whole && !s->templated && !(tc && tc->all)) {
        for (size_t i = 0; i < YB_CENSUS_N; i++)
            total += n[i] = s->count[i];
        *first_proto = s->first;
    } else
        rc = census_pass(r, path, n, first_proto, &total, tc, err, sizeof err);
    const yb_corpus_header *h = yb_corpus_reader_header(r);
    size_t nr = 0;
    redacted[0] = 0;
    for (size_t i = 0; i < h->n_redactions && nr < rlen; i++)
        nr += (size_t)snprintf(redacted + nr, rlen - nr, "%s%s", i ? ", " : "", h->redactions[i]);
    yb_corpus_reader_close(r);
    if (rc < 0) {
        yb_errorf("%s", err);
        return YB_EXIT_USAGE;
    }
    if (total == 0) {
        yb_errorf("%s: the corpus has no records", path);
        return YB_EXIT_USAGE;
    }
    return 0;
}

int yb_check_templates(const char *cmd, const char *corpus, int seed_given,
                       const yb_census_tmpl *tc)
{
    if (seed_given && !tc->templated)
        return yb_usage_error(cmd, "--seed seeds the placeholders of templated records, but %s "
                              "has none (mark records \"template\": true, or give --templates)",
                              corpus);
    return 0;
}

uint64_t yb_random_seed(void)
{
    uint64_t s = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f || fread(&s, sizeof s, 1, f) != 1)
        s = uv_hrtime() ^ (uint64_t)getpid() << 32;
    if (f)
        fclose(f);
    return s;
}

void yb_engine_defaults(yb_engine_opts *o)
{
    memset(o, 0, sizeof *o);
    o->threads = 1;
    o->concurrency = 1;
    o->streams = 1;
    o->timeout_ns = 30ull * 1000000000ull;
    o->cache_bytes = 256ull << 20;
    o->grace_ns = 2ull * 1000000000ull;
    o->max_backlog = 10000;
    o->max_backlog_bytes = 64ull << 20;
    o->codec.max_body = 64ull << 20;
    o->codec.user_agent = PACKAGE_NAME "/" PACKAGE_VERSION;
}

void yb_engine_bind(yb_engine_opts *o, const yb_credentials *c, const char *user)
{
    o->codec.authority = o->target.authority;
    o->codec.target_name = o->target.host; /* an inventory's name replaces it */
    o->codec.scheme = o->target.tls ? "https" : "http";
    o->codec.auth_header = c->auth_header;
    o->codec.user = user;
    o->codec.password = c->password;
    o->codec.timeout_ns = o->timeout_ns;
    o->codec.streams = o->streams;
}

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int yb_run_timed(const yb_engine_opts *o, yb_recorder *rec, double *cpu_user_s,
                 double *cpu_sys_s, char *err, size_t errlen)
{
    yb_plan plan;
    yb_plan_single(&plan, o);
    return yb_run_plan_timed(&plan, rec, NULL, cpu_user_s, cpu_sys_s, err, errlen);
}

/* Makes room for the plan's sessions among the process's open files: one
 * descriptor each (at most the concurrency of every pair open at once;
 * per-request sessions: its requests in flight), plus a reserve for the
 * loops, timers, corpus readers and outputs.  Returns 0, or -1 with a
 * message in err when even the hard limit is too low. */
static int room_for_sessions(const yb_plan *plan, char *err, size_t errlen)
{
    const uint64_t reserve = 64 + 4 * (uint64_t)plan->workers + plan->n_pairs;
    uint64_t sessions = 0, hard;
    for (size_t i = 0; i < plan->n_pairs; i++) {
        const yb_engine_opts *o = plan->pair[i].workload;
        uint64_t per = o->policy == YB_SESS_PER_REQUEST && o->streams ? o->streams : 1;
        sessions += (uint64_t)o->concurrency * per;
    }
    uint64_t cur = yb_nofile_raise(sessions + reserve, &hard);
    if (!cur || cur >= sessions + reserve)
        return 0;
    snprintf(err, errlen, "%llu sessions need about %llu open files, but RLIMIT_NOFILE is %llu "
             "(hard limit %llu): raise the hard limit (ulimit -Hn, or LimitNOFILE= for a "
             "service) or open fewer sessions", (unsigned long long)sessions,
             (unsigned long long)(sessions + reserve), (unsigned long long)cur,
             (unsigned long long)hard);
    return -1;
}

int yb_run_plan_timed(const yb_plan *plan, yb_recorder *rec, yb_recorder *per_pair,
                      double *cpu_user_s, double *cpu_sys_s, char *err, size_t errlen)
{
    if (room_for_sessions(plan, err, errlen) < 0)
        return -1;
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    int rc = yb_engine_run_plan(plan, rec, per_pair, err, errlen);
    getrusage(RUSAGE_SELF, &ru1);
    *cpu_user_s = tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime);
    *cpu_sys_s = tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime);
    return rc;
}

int yb_check_corpus_target(const char *cmd, const char *corpus, const char *proto, int h2,
                           const yb_target *t, const char *url, unsigned streams)
{
    if (!h2 && (!strcmp(t->scheme, "grpc") || !strcmp(t->scheme, "grpcs")))
        return yb_usage_error(cmd, "%s is a %s corpus (HTTP/1.1), but the target '%s' carries "
                              "gRPC over HTTP/2 only: use http:// or https://",
                              corpus, proto, url);
    if (!h2 && streams > 1)
        return yb_usage_error(cmd, "-m %u sets HTTP/2 streams per session, but %s is a %s "
                              "corpus (HTTP/1.1: one request at a time per connection)",
                              streams, corpus, proto);
    return 0;
}

int yb_check_redactions(const char *cmd, const char *corpus, const char *redacted,
                        const yb_credentials *c, int no_credentials)
{
    if (no_credentials && !*redacted)
        return yb_usage_error(cmd, "--no-credentials applies to a corpus whose credentials were "
                              "redacted; %s has none redacted", corpus);
    if (!*redacted || c->auth_header || no_credentials)
        return 0;
    return yb_usage_error(cmd, "%s: its credentials were redacted (%s): give --user (password "
                          "from YANGBLAST_PASSWORD or --password-file) or --token-file (or "
                          "YANGBLAST_TOKEN), or --no-credentials to send none",
                          corpus, redacted);
}

int yb_live_metrics_start(const char *cmd, const char *listen, uint64_t max_series,
                          int open_loop, double rate, yb_metrics **m)
{
    *m = NULL;
    if (!listen)
        return 0;
    yb_metrics_opts mo = {.listen = listen, .max_series = (size_t)max_series,
                          .open_loop = open_loop, .rate = rate};
    char err[512];
    if (!(*m = yb_metrics_open(&mo, err, sizeof err)))
        return yb_usage_error(cmd, "%s", err);
    return 0;
}

void yb_live_metrics_end(yb_metrics *m, uint64_t linger_ns, volatile sig_atomic_t *stop)
{
    if (!m)
        return;
    yb_metrics_report_written(m);
    /* the run's own stop is over (and reported): the next signal ends
     * the lingering */
    *stop = 0;
    for (uint64_t slept = 0; slept < linger_ns && !*stop; slept += 50000000ull) {
        struct timespec ts = {0, 50000000L};
        nanosleep(&ts, NULL);
    }
    yb_metrics_free(m);
}
