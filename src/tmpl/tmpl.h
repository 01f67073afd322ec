/* Request templates: a record's path, header values and body may hold
 * placeholders ({{iter}}, {{random:1..100}}, ...) filled per request (see
 * yangblast-corpus(5), TEMPLATES).  A template is compiled once, when its
 * record is prepared, into a list of parts: literal bytes, placeholder
 * values, and lengths of regions (HTTP/1.1 Content-Length, protobuf length
 * prefixes, the gRPC message prefix) that depend on the values filled in.
 * Filling one is two passes over the parts (sizes, then bytes) and never
 * parses anything again.
 *
 * Values depend only on the request (its index in the run, pass, worker,
 * session), the run's seed and the target: the same --seed gives the same
 * bytes whatever the timing.  The same placeholder written twice in one
 * record (same text) has one value per request, so a name in the path and
 * the body agree. */
#ifndef YB_TMPL_H
#define YB_TMPL_H

#include <stddef.h>
#include <stdint.h>
#include "corpus/corpus.h"
#include "tmpl/key.h"

/* Caps: distinct placeholders and nested regions in one template; items
 * of one {{choice:...}} (bytes inside one placeholder's braces:
 * YB_TMPL_MAX_INNER, tmpl/key.h). */
#define YB_TMPL_MAX_PH 32
#define YB_TMPL_MAX_REGIONS 64
#define YB_TMPL_MAX_ITEMS 256

/* What a request's placeholders are filled from. */
typedef struct {
    uint64_t iter;     /* pass over the corpus (0 = first) */
    uint64_t index;    /* the request's index in the run (every worker) */
    uint64_t worker;   /* its worker thread, from 0 */
    uint64_t session;  /* the session it is sent on, numbered from 1 in the run */
    uint64_t seed;     /* --seed */
    const char *target;/* the target's name (inventory) or host; NULL = "" */
    const yb_tmpl_got *got; /* a chain step's {{prev....}} values (n_got) */
    size_t n_got;
} yb_tmpl_vars;

/* Region length encodings. */
typedef enum {
    YB_TMPL_LEN_DEC = 1, /* ASCII decimal (Content-Length) */
    YB_TMPL_LEN_VARINT,  /* protobuf varint */
    YB_TMPL_LEN_BE32,    /* 4-byte big endian (gRPC message prefix) */
} yb_tmpl_len;

typedef struct yb_tmpl yb_tmpl;

/* A growable output buffer (p owned by its user; free(p) when done). */
typedef struct {
    uint8_t *p;
    size_t len, cap;
} yb_tmpl_buf;

/* Returns a new empty template, or NULL (ENOMEM). */
yb_tmpl *yb_tmpl_new(void);
void yb_tmpl_free(yb_tmpl *t);

/* Appends literal bytes.  Returns 0 or -ENOMEM. */
int yb_tmpl_lit(yb_tmpl *t, const void *p, size_t n);
/* Appends text whose {{...}} are placeholders (compiled here).  Returns 0,
 * -ENOMEM, or -EINVAL with err saying which placeholder is wrong and why
 * (unknown, unterminated, bad range, bad argument, too many). */
int yb_tmpl_text(yb_tmpl *t, const void *p, size_t n, char *err, size_t errlen);
/* Writes here the length, in encoding enc, of a region that a later
 * yb_tmpl_begin(t, id) starts (HTTP/1.1: Content-Length comes before the
 * rest of the head, the body after it).  Returns the region's id, -ENOMEM
 * or -E2BIG (over YB_TMPL_MAX_REGIONS). */
int yb_tmpl_length(yb_tmpl *t, yb_tmpl_len enc);
/* Starts region id (from yb_tmpl_length), which ends at the matching
 * yb_tmpl_close.  Returns 0, -ENOMEM, or -EINVAL (not a region waiting to
 * start). */
int yb_tmpl_begin(yb_tmpl *t, int id);
/* yb_tmpl_length then yb_tmpl_begin: the length right before what it
 * measures (protobuf, gRPC).  Returns 0, -ENOMEM or -E2BIG. */
int yb_tmpl_open(yb_tmpl *t, yb_tmpl_len enc);
/* Ends the innermost open region.  Returns 0, or -EINVAL when none is open. */
int yb_tmpl_close(yb_tmpl *t);
/* Number of placeholder occurrences (0: the template is a constant). */
size_t yb_tmpl_gaps(const yb_tmpl *t);
/* 1 when t has a {{target}} placeholder. */
int yb_tmpl_uses_target(const yb_tmpl *t);
/* Bytes of literal text (what the template weighs in a cache). */
size_t yb_tmpl_size(const yb_tmpl *t);

/* Fills t for one request into out (out->len set; grown as needed).
 * Returns 0, -ENOMEM, -ENOENT when a {{prev....}} value is not in v->got,
 * or -EINVAL when a region is still open or a length does not fit its
 * encoding. */
int yb_tmpl_fill(const yb_tmpl *t, const yb_tmpl_vars *v, yb_tmpl_buf *out);

/* 1 when p[0..n) contains "{{" (could hold a placeholder). */
int yb_tmpl_has(const void *p, size_t n);

/* Compiles a record's body into t: a gRPC body (gNMI) message by message,
 * with placeholders allowed in the string and bytes fields of Set, Get,
 * Subscribe and Capabilities requests (json_ietf_val, path elements, ...)
 * and every length prefix recomputed per request; any other body as text.
 * Returns 0, -ENOMEM, or -EINVAL with err (naming the message and field). */
int yb_tmpl_body(yb_tmpl *t, const yb_request *r, char *err, size_t errlen);

/* Checks every template of record r (path, header values, body) at load
 * time.  Returns 0, or -1 with err naming the field and the placeholder. */
int yb_tmpl_check(const yb_request *r, char *err, size_t errlen);

#endif
