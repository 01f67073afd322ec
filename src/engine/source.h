/* A worker's share of the corpus as a stream of prepared requests: the
 * j-th record the workload takes (after routing, yb_source_route) belongs
 * to worker j mod n.  Streams the file (bounded memory); when the
 * whole share fits in cache_bytes (measured by reading it once before
 * anything is kept) and the run may send a record of it twice, it is kept
 * prepared and cycled from memory instead of being decoded again on every
 * pass. */
#ifndef YB_SOURCE_H
#define YB_SOURCE_H

#include "codec/codec.h"
#include "corpus/rewrite.h"
#include "stats/ops.h"

typedef struct yb_source yb_source;
struct yb_authmap; /* engine/route.h */
struct yb_blobs;   /* codec/blobs.h */

/* Opens path for worker `worker` of `n`.  by_conn = 1 shares whole
 * recorded connections (conn_id mod n) instead of records (j mod n).
 * Returns NULL with err. */
yb_source *yb_source_new(const char *path, unsigned worker, unsigned n, int by_conn,
                         const yb_codec_ops *ops, const yb_codec_cfg *cfg, uint64_t cache_bytes,
                         char *err, size_t errlen);
/* The run takes at most n requests from this source (-n's share): when
 * that is no more than the share has records, none is sent twice and the
 * share is streamed, never cached.  Before the first yb_source_next. */
void yb_source_uses(yb_source *s, uint64_t n);
/* Takes only the records of one codec (YB_ROUTE_H1 / _H2, plan.h) from
 * a mixed corpus; the others belong to another workload.  Before the first
 * yb_source_next. */
void yb_source_route(yb_source *s, int route);
/* Takes only the records whose recorded authority names target `target`
 * of m (engine/route.h; m outlives the source).  Before the first
 * yb_source_next. */
void yb_source_authority(yb_source *s, const struct yb_authmap *m, int target);
/* Rewrites each record with rw (corpus/rewrite.h; NULL = none, must
 * outlive the source) before it is prepared: once per record, not per
 * request.  A record whose rules matched a --map-authority rule is sent
 * for its new authority instead of the target's.  Before the first
 * yb_source_next. */
void yb_source_rewrite(yb_source *s, const yb_rewrite *rw);
/* Names each request's operation when it is prepared (engine/opname.h)
 * and sets its op to the index in t (stats/ops.h), which must outlive
 * the source.  Before the first yb_source_next; without it, op is
 * YB_OP_NONE. */
void yb_source_ops(yb_source *s, yb_ops *t);
/* Prepares what the cache may keep with its bodies shared through t
 * (codec/blobs.h; NULL = none), which must outlive the source and is
 * used on the source's thread only.  Before the first yb_source_next. */
void yb_source_blobs(yb_source *s, struct yb_blobs *t);
/* The most bytes of prepared requests the cache has held (0 = nothing was
 * ever cached). */
uint64_t yb_source_cache_peak(const yb_source *s);
/* Number of completed passes over the share (cycles so far). */
uint64_t yb_source_passes(const yb_source *s);
/* Next prepared request, cycling at the end of the share when cycle = 1.
 * Returns 1 with *out (release it with yb_source_release), 0 when the
 * share is exhausted (or empty), -1 with err on a corpus error, which
 * includes a record the codec cannot send (another protocol, a field that
 * would break the framing): never skipped, since a skipped record would be
 * counted without having started. */
int yb_source_next(yb_source *s, int cycle, yb_prepared **out, char *err, size_t errlen);
/* Reads and prepares the whole share ahead of the run when it fits the
 * cache, so the first pass does not decode the corpus on the clock (an
 * open-loop schedule would see it as the generator's lateness).  Returns
 * 0 (also when the share is too big: the source then streams from the
 * start), or -1 with err (as yb_source_next). */
int yb_source_warm(yb_source *s, char *err, size_t errlen);
/* Gives back a request from yb_source_next (freed unless cached). */
void yb_source_release(yb_source *s, yb_prepared *p);
void yb_source_free(yb_source *s);

#endif
