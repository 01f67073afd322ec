/* Shards: one run divided among N processes (--shard I/N), each taking
 * its deterministic share, so that the N of them together do exactly what
 * one process would have done, nothing twice.  This file owns the
 * arithmetic of that division; everything else asks it.
 *
 * The rule is one stride: item k of the run (the k-th due time of a
 * pair's open-loop schedule, the k-th request of its -n count, the k-th
 * record it takes from its corpus, the k-th recorded connection with
 * --sessions original, the k-th session of -c, the k-th inventory target
 * of a --fan-out) belongs to shard k mod N.  Within a shard, the items it
 * owns are shared among its workers as a whole run's would be among
 * theirs: the shard is one more level of the interleaving the plan already
 * does (plan.h: a pair's worker w of `span` takes items k * span + w), so
 * worker w of shard I is worker w * N + I of span * N, and its request k
 * is the run's global request (k * span + w) * N + I.
 *
 * Pure arithmetic: no I/O, no clocks. */
#ifndef YB_SHARD_H
#define YB_SHARD_H

#include <stdint.h>

#define YB_SHARD_MAX 1024 /* shards of one run at most */

/* Shard `index` of `count` (0 <= index < count).  count 0 or 1: the whole
 * run (not sharded). */
typedef struct {
    unsigned index, count;
} yb_shard;

/* 1 when s divides the run (count > 1). */
int yb_shard_divides(const yb_shard *s);

/* Parses "I/N" (decimal, 0 <= I < N <= YB_SHARD_MAX; no sign, no spaces)
 * into *s.  Returns 0, or -1 when spec is anything else. */
int yb_shard_parse(const char *spec, yb_shard *s);

/* Parses an index I alone (e.g. an environment variable's value) for a
 * run of count shards (1 <= count <= YB_SHARD_MAX) into *s.  Returns 0,
 * or -1 when it is not a decimal integer below count. */
int yb_shard_parse_index(const char *value, unsigned count, yb_shard *s);

/* How many of the items 0 .. total - 1 belong to shard s: those k with
 * k mod N = I, i.e. total / N, plus one when I < total mod N.  The parts
 * of the N shards add up to total.  A whole run (not divided) has them
 * all. */
uint64_t yb_shard_part(const yb_shard *s, uint64_t total);

/* 1 when item k belongs to shard s (k mod N = I; always for a whole run). */
int yb_shard_takes(const yb_shard *s, uint64_t k);

/* Worker `place` of the `span` workers a pair runs on inside shard s:
 * sets *worker and *workers to its place among all the shards' workers of
 * the pair (place * N + I of span * N), so that the stride
 * k * workers + worker it takes its items by interleaves the shards too.
 * A whole run leaves them place and span. */
void yb_shard_lane(const yb_shard *s, unsigned place, unsigned span, unsigned *worker,
                   unsigned *workers);

#endif
