/* The one option table of the commands that run the engine (`run` and
 * `experiment`): every option is defined once, with the commands it
 * applies to, its value's parser and its --help line.  A command builds
 * its getopt table from it (plus its own few options), hands each option
 * to yb_runopts_apply, and prints its --help from it. */
#ifndef YB_RUNOPTS_H
#define YB_RUNOPTS_H

#include <getopt.h>
#include <stdio.h>
#include "engine/engine.h"
#include "report/threshold.h"

/* Which command an option applies to (bit mask); YB_RO_PLAN marks the
 * options that are keys of a plan file's workloads (yangblast-inventory(5),
 * PLAN), with the same names and values as on the command line. */
enum { YB_RO_RUN = 1, YB_RO_EXPERIMENT = 2, YB_RO_PLAN = 4,
       /* experiment sweep: run's options but the load model and the
        * outputs a sweep makes itself (see sweep_own in runopts.c) */
       YB_RO_SWEEP = 8 };

/* Long-only option ids (short options use their letter). */
enum {
    YB_RO_SESSIONS = 256, YB_RO_TLS_RESUME, YB_RO_CACERT, YB_RO_CERT, YB_RO_KEY, YB_RO_TLS_MIN,
    YB_RO_TLS_MAX, YB_RO_CIPHERS, YB_RO_KEYLOG, YB_RO_USER, YB_RO_PWFILE, YB_RO_TOKFILE,
    YB_RO_NO_CREDENTIALS, YB_RO_TIMEOUT, YB_RO_MAXBODY, YB_RO_MAXERR, YB_RO_JSON, YB_RO_UNIT,
    YB_RO_TARGET, YB_RO_RATE, YB_RO_BACKLOG, YB_RO_BACKLOG_BYTES, YB_RO_TIMING, YB_RO_SPEED, YB_RO_SPIN, YB_RO_HGRM,
    YB_RO_HLOG, YB_RO_CSV, YB_RO_SUBS, YB_RO_LOG, YB_RO_LOG_FORMAT, YB_RO_SERIES,
    YB_RO_TARGETS, YB_RO_FAN_OUT, YB_RO_SPLIT, YB_RO_ROUTE,
    YB_RO_THRESHOLD, YB_RO_ABORT_ON_FAIL,
    YB_RO_SERVERNAME, YB_RO_CONNECT_TO, YB_RO_HTML, YB_RO_MAX_OPS,
    YB_RO_ACCEPT, YB_RO_ACCEPT_GRPC, YB_RO_EXPECT, YB_RO_PLAN_FILE,
    YB_RO_TELEMETRY, YB_RO_TELE_INTERVAL, YB_RO_TELE_BASELINE, YB_RO_TELE_PATH,
    YB_RO_TEMPLATES, YB_RO_SEED,
    YB_RO_REWRITE_PATH, YB_RO_SET_HEADER, YB_RO_DROP_HEADER, YB_RO_REWRITE_BODY,
    YB_RO_MAP_AUTHORITY,
    YB_RO_METRICS_LISTEN, YB_RO_METRICS_LINGER, YB_RO_METRICS_SERIES,
    YB_RO_SHARD, YB_RO_SHARDS, YB_RO_SHARD_ENV, YB_RO_START_AT, YB_RO_RUN_ID,
    YB_RO_IO,
    YB_RO_END, /* first id free for a command's own options */
};

#define YB_RO_MAX_HEADERS 64
#define YB_RO_MAX_TARGETS 8 /* --target URLs (one per kind of record is routed) */

#define YB_RO_MAX_SEEN 512

/* One option as applied: its id and value (NULL for a flag). */
typedef struct {
    int id;
    const char *arg;
} yb_ro_seen;

/* Everything the shared options set.  Strings point into argv.  Copy it
 * with yb_runopts_copy (it owns the --rate schedule's reference to its
 * steps, and the rewrite rules); free with yb_runopts_cleanup. */
typedef struct {
    yb_engine_opts o;        /* engine options (yb_engine_defaults first) */
    const char *target;      /* the first --target */
    const char *targets[YB_RO_MAX_TARGETS]; /* every --target, in order */
    size_t n_targets;
    const char *inventory;   /* --targets FILE */
    int fan_out;             /* --fan-out */
    int split;               /* --split: the load model divided among the targets */
    int route_authority;     /* --route authority */
    const char *const *pick; /* with fan_out: only the inventory targets of
                              * these names (n_pick; NULL = every target) */
    size_t n_pick;
    const char *plan;        /* --plan FILE (src/cli/plan.h) */
    const char *rate;        /* --rate as given (parsed into o.sched) */
    const char *sessions;    /* --sessions as given ("reuse" by default) */
    const char *json, *unit, *hgrm, *hlog, *csv;
    const char *html;        /* --html: the HTML report (report/html.h) */
    const char *log, *series; /* streamed as the run goes (report/stream.h) */
    const char *metrics_listen; /* --metrics-listen ADDR:PORT (report/metrics.h) */
    uint64_t metrics_linger_ns; /* --metrics-linger: serve this long after the report */
    uint64_t metrics_series;  /* --metrics-max-series (0 = default) */
    int log_csv;             /* --log-format csv */
    const char *user, *pwfile, *tokfile;
    int no_credentials;
    int quiet;
    int verbose;             /* -v: announce new error reasons */
    uint64_t max_errors, subscriptions;
    yb_thresholds th;        /* --threshold (each parsed as given), --abort-on-fail */
    const char *servername;  /* --servername: SNI and the name verified */
    const char *connect_to;  /* --connect-to HOST:PORT:ADDR:PORT */
    yb_header extra[YB_RO_MAX_HEADERS];
    size_t n_extra;
    const char *host_header; /* -H 'Host: NAME': Host / :authority */
    const char *user_agent;  /* -H 'User-Agent: ...': replaces ours */
    int telemetry;           /* --telemetry: device telemetry (src/telemetry) */
    uint64_t tele_interval_ns, tele_baseline_ns;
    const char *tele_paths[13]; /* --telemetry-path (YB_TM_MAX_PATHS) */
    size_t n_tele_paths;
    struct {
        yb_rw_kind kind;
        const char *spec;
    } rw[YB_REWRITE_MAX_RULES]; /* the rewrite options, in order (checked as given) */
    size_t n_rw;
    yb_rewrite *rewrite;     /* built by yb_runopts_rewrite, freed by yb_runopts_cleanup */
    /* Scale-out (engine/shard.h): o.shard is set by --shard I/N, or by
     * --shards N with --shard-from-env VAR once yb_runopts_shard has read
     * VAR; shard_opt is the option to name in messages (0 = not sharded). */
    uint64_t shards;         /* --shards N */
    const char *shard_env;   /* --shard-from-env VAR */
    int shard_opt;
    int64_t start_at_ns;     /* --start-at, ns since the Unix epoch (0 = none) */
    const char *start_at;    /* --start-at as given */
    const char *run_id;      /* --run-id, or NULL: derived (yb_run_id) */
    unsigned char given[YB_RO_END]; /* option id -> times given */
    yb_ro_seen seen[YB_RO_MAX_SEEN]; /* every option applied, in order */
    size_t n_seen;
    int seen_overflow;       /* more than YB_RO_MAX_SEEN (the run id refuses) */
} yb_runopts;

/* Sets the defaults (yb_engine_defaults, --sessions reuse). */
void yb_runopts_init(yb_runopts *r);

/* Builds the getopt_long table for cmd (YB_RO_RUN / YB_RO_EXPERIMENT):
 * the shared options that apply to cmd, then `own` (terminated by a zero
 * entry), then the terminator, into out (cap entries), and the matching
 * short-option string (starting with ':' so a missing value is told from
 * an unknown option) into shortopts (scap bytes, own_short appended).
 * Returns 0, or -1 when out or shortopts is too small. */
int yb_runopts_getopt(unsigned cmd, const struct option *own, const char *own_short,
                      struct option *out, size_t cap, char *shortopts, size_t scap);

/* Applies option id with its value arg (NULL for flags) for command name
 * cmdname (bit cmd).  Returns 0; 1 when id is not a shared option of cmd;
 * or YB_EXIT_USAGE with a message "yangblast CMD: ..." printed that says
 * what the option accepts. */
int yb_runopts_apply(unsigned cmd, const char *cmdname, int id, const char *arg, yb_runopts *r);

/* Returns the id of the option named name (long name, no dashes) that
 * applies to cmd, or -1. */
int yb_runopts_id(unsigned cmd, const char *name);
/* 1 when option id applies to cmd (YB_RO_PLAN: is a workload key). */
int yb_runopts_applies(unsigned cmd, int id);
/* 1 when option id adds to what it gave before each time it is given (the
 * rewrite rules): a plan file's key may then hold a list of values. */
int yb_runopts_repeatable(int id);

/* Checks and completes the load model and session policy that r's
 * options set (cmdname names the command in messages): --sessions parsed
 * into r->o.policy, options of the open loop refused without it, --speed
 * without --timing original, -m with per-request sessions, -c with an open
 * loop of original sessions, --subscriptions (needs --duration; sets -c).
 * Returns 0 or YB_EXIT_USAGE with the reason printed. */
int yb_runopts_load_model(const char *cmdname, yb_runopts *r);

/* Completes the scale-out options once all are given: --shards with
 * --shard-from-env (the index read from the environment variable, checked
 * below N), neither with --shard, and --start-at not in the past by more
 * than a second.  Returns 0 or YB_EXIT_USAGE with the reason printed
 * (naming the option, and the variable). */
int yb_runopts_shard(const char *cmdname, yb_runopts *r);

/* Refuses (YB_EXIT_USAGE, reason printed) a workload o that cannot be
 * divided among its shards: fewer sessions (-c) than shards, since session
 * s is shard s mod N's (an open loop of recorded sessions, which has no
 * -c, is exempt).  what (may be NULL) names the workload in the message.
 * Returns 0 when o is not divided or divides. */
int yb_check_shard_load(const char *cmdname, const yb_runopts *r, const yb_engine_opts *o,
                        const char *what);

/* Points o's codec settings at the -H headers: the extra headers, and a
 * Host (Host / :authority, instead of the target's) or User-Agent
 * (instead of yangblast's) given with -H.  Call after yb_engine_bind. */
void yb_runopts_bind_headers(const yb_runopts *r, yb_engine_opts *o);

/* Builds the rewrite rules given (--rewrite-path, --set-header,
 * --drop-header, --rewrite-body, --map-authority) into r->rewrite and
 * o->rewrite, and applies them to every record of o->corpus_path before
 * the run: a record they cannot rewrite is refused (exit 2, naming the
 * record and the rule), a rule that changes no record is warned about.
 * Returns 0 (also when there are none) or YB_EXIT_USAGE / YB_EXIT_RUNTIME
 * with the reason printed.  Call before the run; yb_runopts_cleanup
 * frees the rules. */
int yb_runopts_rewrite(const char *cmd, yb_runopts *r, yb_engine_opts *o);
/* Sets *dst to a copy of src that holds what it owns on its own: its own
 * reference to the --rate schedule's steps (engine/schedule.h), and no
 * rewrite rules (dst->rewrite NULL: yb_runopts_rewrite builds a copy's
 * own).  Strings still point where src's do.  Clean each up on its own. */
void yb_runopts_copy(yb_runopts *dst, const yb_runopts *src);
/* Frees what r owns: the rules yb_runopts_rewrite built, its reference to
 * the --rate schedule's steps.  The engine options copied from r->o (views,
 * plan.h) must not be used after it. */
void yb_runopts_cleanup(yb_runopts *r);

/* Prints the --help lines of the shared options of cmd, in groups. */
void yb_runopts_help(FILE *f, unsigned cmd);

/* Returns the option's name as the user would type it ("-c", "--rate"). */
const char *yb_runopts_name(int id);

/* Refuses (YB_EXIT_USAGE with the reason printed) any TLS option given
 * for url, a target without TLS, where it would be ignored (url is
 * printed: pass a parsed target, whose user-info was refused); returns 0
 * when none was given. */
int yb_check_tls_applies(const char *cmd, const yb_runopts *r, const char *url);
/* The same for --io, which applies to plain targets only: call it when
 * every target is TLS (url as above). */
int yb_check_plain_applies(const char *cmd, const yb_runopts *r, const char *url);

/* Refuses (YB_EXIT_USAGE, reason printed) the combinations of shared
 * options that contradict each other or would be ignored: --password-file
 * without --user, two credentials, --cert without --key, --tls-min above
 * --tls-max, --cacert with -k, --ciphers with --tls-min 1.3, -c below -t,
 * --metrics-linger or --metrics-max-series without --metrics-listen.
 * Returns 0 when there is none. */
int yb_check_shared(const char *cmd, const yb_runopts *r);

/* Checks every output path before the run (paths[0..n) replaced whole,
 * append appended to; NULLs skipped): each can be written, and at most one
 * is "-" (standard output), in which case *text is stderr (where the human
 * report then goes), else stdout.  Returns 0 or YB_EXIT_USAGE with the
 * path and reason printed. */
int yb_check_outputs(const char *cmd, const char *const *paths, size_t n, const char *append,
                     FILE **text);

#endif
