/* Rewrite rules applied to corpus records when they are prepared for a
 * replay (in the spirit of GoReplay's rewrite rules): replace a path
 * prefix, set or drop a header, substitute text in bodies (a POSIX
 * extended regular expression or a fixed string), map one recorded
 * authority to another.  The rules come from the command line (run's
 * --rewrite-path, --set-header, --drop-header, --rewrite-body,
 * --map-authority) or from a plan file; each is parsed once by
 * yb_rewrite_add, and yb_rewrite_apply turns a record into its rewritten
 * copy.  A gNMI record's body is rewritten in its text form (gnmi_json.h:
 * paths as /a/b[k=v], json_ietf_val inline) and encoded back.
 *
 * The syntax of each rule is documented in yangblast(1).  A rule set is
 * read-only once built: several worker threads may apply it at once. */
#ifndef YB_REWRITE_H
#define YB_REWRITE_H

#include <stddef.h>
#include <stdint.h>
#include "corpus/corpus.h"

typedef enum {
    YB_RW_PATH,        /* "FROM=TO": a path starting with FROM starts with TO instead */
    YB_RW_SET_HEADER,  /* "Name: value": replaces every recorded Name (or adds it) */
    YB_RW_DROP_HEADER, /* "Name": removes every recorded Name */
    YB_RW_BODY,        /* "s/RE/REPL/[gi]" or "s/TEXT/REPL/F[gi]" (any delimiter) */
    YB_RW_AUTHORITY,   /* "A=B": a record recorded for authority A is sent for B */
    YB_RW_KINDS
} yb_rw_kind;

/* Most rules in one set (each kind together). */
#define YB_REWRITE_MAX_RULES 256

typedef struct yb_rewrite yb_rewrite;

/* Returns the option name of a kind without dashes ("rewrite-path",
 * "set-header", "drop-header", "rewrite-body", "map-authority"). */
const char *yb_rewrite_kind_name(yb_rw_kind k);
/* Returns the kind whose name (as above) is name, or -1. */
int yb_rewrite_kind_parse(const char *name);

/* Returns an empty rule set, or NULL when out of memory. */
yb_rewrite *yb_rewrite_new(void);
void yb_rewrite_free(yb_rewrite *rw);

/* The most bytes a body may grow to under the body rules (a record whose
 * body would grow beyond it is refused, naming the rule). */
#define YB_REWRITE_BODY_LIMIT (YB_CORPUS_MAX_ENTRY / 2)
/* Lowers that limit for rw (a larger one is taken as the default).  The
 * fuzz target lowers it: under the sanitizers every regexec reads the
 * whole remaining subject (their interceptor's strlen), so a rule with an
 * empty match on every byte of a body grown to megabytes by the rules
 * before it costs quadratic time there, and milliseconds without them. */
void yb_rewrite_set_body_limit(yb_rewrite *rw, size_t limit);

/* Parses spec as a rule of kind k and appends it (its text is copied).
 * Returns 0, or -1 with err saying what the rule needs (without the
 * option's name, which the caller knows): an empty FROM, a path not
 * starting with '/', a header name that is not a token or one yangblast
 * owns (Host, Content-Length, credentials, ...), a value with CR, LF or
 * NUL, a regular expression regcomp refuses (with its message), an
 * unknown flag, too many rules. */
int yb_rewrite_add(yb_rewrite *rw, yb_rw_kind k, const char *spec, char *err, size_t errlen);

/* Number of rules, and whether any rule of kind k was added. */
size_t yb_rewrite_count(const yb_rewrite *rw);
int yb_rewrite_has(const yb_rewrite *rw, yb_rw_kind k);
/* Writes rule i as the user gave it, e.g. "--rewrite-body 's/a/b/g'",
 * into buf (len bytes, truncated).  Returns buf. */
const char *yb_rewrite_describe(const yb_rewrite *rw, size_t i, char *buf, size_t len);

/* Writes the rewritten copy of in into out (initialised by
 * yb_request_init; heap-owned, the caller cleans it up, also on error).
 * Path and authority rules are tables (the first rule whose FROM matches
 * is used); header and body rules apply in the order given, each to the
 * result of the ones before.  *authority_mapped (may be NULL) is set to 1
 * when a --map-authority rule matched: the record is then to be sent for
 * its (new) authority rather than the target's.  hits, when not NULL,
 * has yb_rewrite_count entries: each is incremented when its rule changed
 * the record.  Returns 0, or -1 with err naming the rule and why the
 * record cannot be rewritten: a gNMI body without a text form, or a gRPC
 * body of another service, whose bytes a rule would change; a rewritten
 * gNMI text that is not JSON or does not encode; a body that would outgrow a
 * corpus entry, or a result the corpus would refuse (a path that no
 * longer starts with '/', ...). */
int yb_rewrite_apply(const yb_rewrite *rw, const yb_request *in, yb_request *out,
                     int *authority_mapped, uint64_t *hits, char *err, size_t errlen);

/* Applies rw to every record of the corpus at path, before a run, so
 * that no record is found unsendable while requests go out.  hits (as
 * above) counts the records each rule changed.  Returns 0, or -1 with err
 * naming the file, the record index and the reason. */
int yb_rewrite_check_corpus(const yb_rewrite *rw, const char *path, uint64_t *hits, char *err,
                            size_t errlen);

#endif
