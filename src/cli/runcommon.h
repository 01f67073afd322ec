/* What `run` and `experiment` share: credentials (from the environment or
 * files, never argv), picking the codec from a corpus, and one timed
 * engine run. */
#ifndef YB_RUNCOMMON_H
#define YB_RUNCOMMON_H

#include <signal.h>
#include "engine/engine.h"

struct yb_metrics; /* report/metrics.h */

typedef struct {
    char *password;    /* secret or NULL */
    char *token;       /* secret or NULL */
    char *auth_header; /* "Basic ..." / "Bearer ..." or NULL */
} yb_credentials;

/* Loads credentials: with user, the password from password_file or the
 * YANGBLAST_PASSWORD environment variable; else a bearer token from
 * token_file or YANGBLAST_TOKEN (if any).  Returns 0, or -1 with a message
 * printed (c is then empty). */
int yb_credentials_load(const char *user, const char *password_file, const char *token_file,
                        yb_credentials *c);
/* The same from references: with user, the password from file or the
 * environment variable env; else a bearer token from file or env (if
 * any).  Returns 0, or -1 with a message printed. */
int yb_credentials_from(const char *user, const char *env, const char *file, yb_credentials *c);
/* Wipes and frees the secrets. */
void yb_credentials_cleanup(yb_credentials *c);

/* Templates found while the corpus is counted (NULL = not looked at):
 * every templated record (all of them with all = 1, --templates) is
 * compiled, so a malformed template is refused before the run (exit 2,
 * naming the record, the field and the placeholder). */
typedef struct {
    int all;              /* --templates */
    uint64_t templated;   /* out: records that are templates */
} yb_census_tmpl;

/* Reads the whole corpus (or the summary its writer stored: see
 * yb_corpus_census) to choose the codec (HTTP/1.1 or HTTP/2) and
 * the protocol name (static) of its first record, and lists the header's
 * redacted credential names, comma-separated, in redacted (rlen bytes; ""
 * when none).  A corpus whose records need both codecs is refused, naming
 * each protocol with its count.  Returns 0 or YB_EXIT_USAGE with a message
 * printed. */
int yb_pick_codec(const char *path, const yb_codec_ops **ops, const char **proto,
                  char *redacted, size_t rlen, yb_census_tmpl *tc);

/* Counts the records of the corpus at path per protocol into n[0 ..
 * YB_CENSUS_N - 1], sets *first_proto (the first record's), and lists the
 * redacted credential names as yb_pick_codec does.  Takes the counts from
 * the corpus' summary (corpus.h) when it has one, no templated records
 * and whole chains and tc->all is not set; else reads every record,
 * checking chains and compiling templates.  Returns 0 or
 * YB_EXIT_USAGE with a message printed (unreadable or empty corpus). */
#define YB_CENSUS_N (YB_PROTO_HTTP2 + 1)
int yb_corpus_census(const char *path, uint64_t *n, yb_proto *first_proto, char *redacted,
                     size_t rlen, yb_census_tmpl *tc);

/* Refuses --seed (seed_given) when the census found no templated record:
 * it would seed nothing.  Returns 0 or YB_EXIT_USAGE (message printed). */
int yb_check_templates(const char *cmd, const char *corpus, int seed_given,
                       const yb_census_tmpl *tc);
/* A seed for a run without --seed (from /dev/urandom). */
uint64_t yb_random_seed(void);

/* Refuses (YB_EXIT_USAGE, message printed) a corpus the target cannot
 * carry: an HTTP/1.1 corpus against grpc:// or grpcs://, or -m above 1 for
 * an HTTP/1.1 corpus.  (A gNMI corpus over http:// is h2c, over https://
 * TLS with ALPN h2.)  Returns 0 when it fits. */
int yb_check_corpus_target(const char *cmd, const char *corpus, const char *proto, int h2,
                           const yb_target *t, const char *url, unsigned streams);
/* Refuses (YB_EXIT_USAGE, message naming the redacted headers) to replay
 * a corpus whose credentials were redacted without credentials of our own
 * (c) unless no_credentials.  Returns 0 otherwise. */
int yb_check_redactions(const char *cmd, const char *corpus, const char *redacted,
                        const yb_credentials *c, int no_credentials);

/* Fills o with the defaults shared by every command that runs the engine:
 * one thread, one slot, one stream, 30 s timeout, 256 MiB prepared-request
 * cache per worker, 2 s grace after a stop, 64 MiB response cap, 10000
 * backlog. */
void yb_engine_defaults(yb_engine_opts *o);
/* Points o->codec at what it sends besides the records: the target's
 * authority and scheme (o->target must be parsed), credentials (c may
 * hold none) and user, the timeout and stream cap now in o. */
void yb_engine_bind(yb_engine_opts *o, const yb_credentials *c, const char *user);

/* Runs the engine and measures the process' CPU time around it.  Returns
 * what yb_engine_run returns. */
int yb_run_timed(const yb_engine_opts *o, yb_recorder *rec, double *cpu_user_s,
                 double *cpu_sys_s, char *err, size_t errlen);
/* The same for a plan (yb_engine_run_plan). */
int yb_run_plan_timed(const yb_plan *plan, yb_recorder *rec, yb_recorder *per_pair,
                      double *cpu_user_s, double *cpu_sys_s, char *err, size_t errlen);

/* --metrics-listen: opens the live metrics at listen (NULL: none; *m =
 * NULL) with max_series label pairs (0 = default), the self-check judging
 * lateness as the report does for an open loop at a fixed rate (0 =
 * none).  Returns 0, or YB_EXIT_USAGE with the reason printed. */
int yb_live_metrics_start(const char *cmd, const char *listen, uint64_t max_series,
                          int open_loop, double rate, struct yb_metrics **m);
/* After the reports are written: marks m's figures final, serves them
 * linger_ns longer (clearing *stop first: a signal that sets it again
 * ends the lingering) and closes m.  m NULL: nothing. */
void yb_live_metrics_end(struct yb_metrics *m, uint64_t linger_ns,
                         volatile sig_atomic_t *stop);

#endif
