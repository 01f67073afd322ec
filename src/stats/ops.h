/* Per-operation figures of one recorder: a bounded table of named
 * operations (a gNMI RPC, or a RESTCONF method and path template; see
 * engine/opname.h for the names), each with its counts and the end-to-end
 * latency of its successful requests, and one `other` row for the
 * operations beyond the cap.  Memory: at most cap rows + 1, each one
 * HdrHistogram (created with the row). */
#ifndef YB_OPS_H
#define YB_OPS_H

#include <stddef.h>
#include <stdint.h>
#include "stats/hdr.h"

#define YB_OP_NAME_MAX 192    /* bytes of a name, NUL included */
#define YB_OPS_DEFAULT 32     /* distinct operations kept by default */
#define YB_OPS_LIMIT 4096     /* the highest --max-operations */
#define YB_OP_NONE UINT32_MAX /* a request counted in no operation */

typedef struct {
    char *name;      /* at most YB_OP_NAME_MAX bytes, NUL included (owned;
                      * NULL in `other`: a fleet keeps a table per target) */
    uint64_t count, ok, errors;
    uint64_t bytes;  /* request + response bytes of every completed request */
    yb_hdr *e2e;     /* successful requests only, µs */
} yb_op_stats;

typedef struct {
    size_t cap;          /* distinct operations kept (0 = YB_OPS_DEFAULT) */
    size_t n, alloc;
    yb_op_stats *op;     /* op[0..n) in order of first appearance */
    yb_op_stats other;   /* the rest; e2e created on first use */
} yb_ops;

/* The index of operation name in t, adding it while fewer than cap are
 * kept; beyond the cap, and when out of memory, the index of `other`
 * (yb_ops_cap(t)).  Returns the index. */
uint32_t yb_ops_index(yb_ops *t, const char *name);
/* The cap in force (cap, or YB_OPS_DEFAULT when 0); also other's index. */
size_t yb_ops_cap(const yb_ops *t);
/* Counts one completed request in row idx (YB_OP_NONE: nothing): ok when
 * it succeeded, with its end-to-end latency e2e_us (< 0: none). */
void yb_ops_record(yb_ops *t, uint32_t idx, int ok, uint64_t bytes, int64_t e2e_us);
/* Adds src's rows into dst by name (dst takes src's cap when its own is
 * 0 or smaller); rows that
 * do not fit go to dst's other.  Returns 0 or -ENOMEM. */
int yb_ops_merge(yb_ops *dst, const yb_ops *src);
void yb_ops_free(yb_ops *t);

#endif
