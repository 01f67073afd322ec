/* openconfig-acl workload synthesizer: deterministic requests that create,
 * replace, read or delete ACL sets over RESTCONF or gNMI, shaped like
 * SONiC's openconfig-acl payloads. */
#ifndef YB_SYNTH_ACL_H
#define YB_SYNTH_ACL_H

#include <stdint.h>
#include "corpus/corpus.h"

typedef enum {
    YB_SYNTH_CREATE = 0, /* RESTCONF --method (PATCH default) / gNMI Set update */
    YB_SYNTH_REPLACE,    /* RESTCONF PUT of each set / gNMI Set replace */
    YB_SYNTH_DELETE,     /* RESTCONF DELETE / gNMI Set delete */
    YB_SYNTH_GET,        /* RESTCONF GET / gNMI GetRequest */
    YB_SYNTH_SUBSCRIBE,  /* gNMI Subscribe (mode below) */
    YB_SYNTH_CAPABILITIES, /* gNMI CapabilityRequest */
} yb_synth_op;

typedef enum { YB_SUB_ONCE = 0, YB_SUB_POLL, YB_SUB_STREAM } yb_sub_mode;

typedef struct {
    yb_proto proto;          /* YB_PROTO_RESTCONF or YB_PROTO_GNMI */
    yb_synth_op op;
    const char *method;      /* RESTCONF create method: PATCH, POST or PUT */
    uint64_t count;          /* requests */
    unsigned rules;          /* rules per ACL set (YB_SYNTH_RULES_AUTO = default) */
    uint64_t seed;
    const char *name_prefix; /* set names: PREFIX_000001 ... */
    const char *authority;   /* recorded :authority / Host */
    const char *scheme;      /* http or https */
    yb_sub_mode sub_mode;    /* for YB_SYNTH_SUBSCRIBE */
    uint64_t sample_ns;      /* SAMPLE interval for STREAM subscriptions */
    unsigned polls;          /* POLL: number of Poll messages after the request */
    int unique;              /* names end in _{{iter}}: templated records whose
                              * sets never collide across passes */
} yb_synth_acl_opts;

/* Default rules per set: about 14.5 KB of request data per create request,
 * as in the SONiC session study (the gNMI encoding is more compact, so it
 * takes one more rule to carry the same amount of data). */
#define YB_SYNTH_DEFAULT_RULES_RESTCONF 12
#define YB_SYNTH_DEFAULT_RULES_GNMI 13
#define YB_SYNTH_RULES_AUTO ((unsigned)-1)

/* Fills o with the defaults (RESTCONF, create, PATCH, 1000 requests,
 * automatic rule count, seed 1, "YB_ACL", "localhost", "https"). */
void yb_synth_acl_defaults(yb_synth_acl_opts *o);

/* Returns NULL when o is consistent, else a static message. */
const char *yb_synth_acl_check(const yb_synth_acl_opts *o);

/* Builds request k (0-based) into r (initialised by the caller with
 * yb_request_init; heap-owned, free with yb_request_cleanup).  Equal
 * options and k always give an identical record.  Returns 0 or -ENOMEM. */
int yb_synth_acl_request(const yb_synth_acl_opts *o, uint64_t k, yb_request *r);

/* A body split as the corpus' format 2 keeps it (see
 * yb_corpus_writer_add_split): skel[0..sn) and dig[0..dn).  The buffers
 * are kept from call to call; zero-initialise, free with
 * yb_synth_split_free. */
typedef struct yb_synth_rules yb_synth_rules;
typedef struct {
    char *skel, *dig;
    size_t sn, dn, skel_cap, dig_cap;
    yb_synth_rules *rules; /* the rules' skeletons, made once (acl.c) */
} yb_synth_split;

/* As yb_synth_acl_request, but a body holding the set's JSON (create
 * and replace: RESTCONF's, and gNMI's SetRequest with the bytes before
 * its JSON split too) is written split into sp, never whole: r->body
 * stays NULL and
 * r->body_len is its length.  Returns 1 when the body is in sp, 0 when
 * r is complete as yb_synth_acl_request makes it, or a negative errno. */
int yb_synth_acl_request_split(const yb_synth_acl_opts *o, uint64_t k, yb_request *r,
                               yb_synth_split *sp);
void yb_synth_split_free(yb_synth_split *sp);

/* Writes the JSON of ACL set k ("openconfig-acl:acl-set" list member) as a
 * malloc'd string (caller frees); NULL on ENOMEM. */
char *yb_synth_acl_set_json(const yb_synth_acl_opts *o, uint64_t k);

#endif
