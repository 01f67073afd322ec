/* Values a chain step takes from the previous step's response: the
 * {{prev.json:POINTER}}, {{prev.header:NAME}} and {{prev.gnmi:PATH}}
 * placeholders of a template (yangblast-corpus(5), TEMPLATES).  A record's
 * picks are compiled once, when it is prepared (yb_pick_compile); when the
 * step before it completes, yb_pick_extract reads each value out of that
 * response into a yb_pick_vals the step owns, and the step's templates are
 * filled from it (yb_tmpl_vars.got).  A value that is not there fails the
 * step with a reason naming the placeholder and what was missing; the
 * values themselves (a login's token) never appear in a reason. */
#ifndef YB_PICK_H
#define YB_PICK_H

#include <stddef.h>
#include <stdint.h>
#include "corpus/corpus.h"
#include "tmpl/key.h"

/* Caps: distinct picks in one record; bytes of one value; of a step's
 * values together; of the previous response's body and head kept for them. */
#define YB_PICK_MAX 16
#define YB_PICK_VALUE_MAX (16u << 10)
#define YB_PICK_VALUES_MAX (64u << 10)
#define YB_PICK_BODY_MAX (1u << 20)
#define YB_PICK_HEAD_MAX (16u << 10)

typedef struct yb_pick yb_pick;

/* What the previous step's response left for its successor (views valid
 * while the successor's values are extracted). */
typedef struct {
    const uint8_t *body;  /* its body (HTTP/1.1) or unary gRPC message (gNMI) */
    size_t body_len;
    int body_whole;       /* 0: not kept, or cut at YB_PICK_BODY_MAX / the budget */
    int grpc;             /* body is a gRPC response message (no 5-byte prefix) */
    const uint8_t *head;  /* its header fields, "name: value\n" each, names in
                           * lower case (HTTP/2: with the trailers) */
    size_t head_len;
} yb_pick_resp;

/* The values extracted for one step (yb_pick_vals_free frees them). */
typedef struct yb_pick_vals {
    yb_tmpl_got got[YB_PICK_MAX];
    size_t n;
    uint8_t *buf;         /* the values' bytes, got[i].p point into it */
    size_t len, cap;
} yb_pick_vals;

/* Checks the inner text in[0..n) of a {{prev....}} placeholder (from
 * "prev."): prev.json:POINTER (RFC 6901: "" or "/..." with ~0 ~1 escapes),
 * prev.header:NAME (an HTTP token), prev.gnmi:PATH[#POINTER] (a gNMI path
 * string, then a JSON pointer into its JSON value).  Returns 0, or -1 with
 * *why (static) saying what is wrong. */
int yb_pick_check(const char *in, size_t n, const char **why);

/* 1 when r's path, header values or body hold "{{prev.". */
int yb_pick_wanted(const yb_request *r);

/* Compiles the distinct {{prev....}} placeholders of r's path, header
 * values and body.  Returns 0 with *out (NULL when r has none; free with
 * yb_pick_free), -ENOMEM, or -EINVAL with err naming the placeholder. */
int yb_pick_compile(const yb_request *r, yb_pick **out, char *err, size_t errlen);
void yb_pick_free(yb_pick *p);

/* Extracts every value of pk from rs into out (emptied first; its buffer
 * reused).  Returns 0, -ENOMEM, or -ENOENT with why saying which
 * placeholder found nothing and why ("{{prev.json:/token}}: no member
 * 'token' in the previous response's body"), never a value. */
int yb_pick_extract(const yb_pick *pk, const yb_pick_resp *rs, yb_pick_vals *out, char *why,
                    size_t whylen);
void yb_pick_vals_free(yb_pick_vals *v);

#endif
