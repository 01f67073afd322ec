/* HDR histogram (after Gil Tene's HdrHistogram): fixed memory, values
 * recorded with a bounded relative error (significant decimal digits).
 * yangblast records latencies in microseconds from 1 µs to 1 h with 3
 * significant digits.  Outputs stay compatible with HdrHistogram's .hgrm
 * percentile text and its V2 compressed encoding (used by .hlog). */
#ifndef YB_HDR_H
#define YB_HDR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct yb_hdr yb_hdr;

/* Creates a histogram for values in [lowest, highest] (lowest >= 1) with
 * sigfigs in 1..5.  Returns NULL on bad arguments or ENOMEM. */
yb_hdr *yb_hdr_new(int64_t lowest, int64_t highest, int sigfigs);
/* The yangblast default: 1 µs .. 3,600,000,000 µs (1 h), 3 digits. */
yb_hdr *yb_hdr_new_default(void);
void yb_hdr_free(yb_hdr *h);
/* Empties h.  One whose values had moved to its counts array keeps
 * recording there. */
void yb_hdr_reset(yb_hdr *h);
/* 1 when h's counts are in its counts array (more distinct values than
 * it keeps apart, now or before a reset), 0 while it keeps them apart
 * (or h is NULL). */
int yb_hdr_uses_counts(const yb_hdr *h);

/* Records value (clamped into [lowest, highest]; clamps are counted). */
void yb_hdr_record(yb_hdr *h, int64_t value);
void yb_hdr_record_n(yb_hdr *h, int64_t value, int64_t count);
/* Adds every count of src into dst (same parameters).  Returns 0 or -1. */
int yb_hdr_add(yb_hdr *dst, const yb_hdr *src);

int64_t yb_hdr_count(const yb_hdr *h);
int64_t yb_hdr_min(const yb_hdr *h);   /* 0 when empty */
int64_t yb_hdr_max(const yb_hdr *h);   /* 0 when empty; highest equivalent value */
double yb_hdr_mean(const yb_hdr *h);   /* 0 when empty */
double yb_hdr_stddev(const yb_hdr *h);
/* Value at percentile p (0..100), as HdrHistogram computes it; 0 when empty. */
int64_t yb_hdr_percentile(const yb_hdr *h, double p);
/* How many recorded values fell outside [lowest, highest] and were clamped
 * (a count of values, not of calls); 0 for NULL. */
uint64_t yb_hdr_clamped(const yb_hdr *h);
/* Counts n more values as clamped: for a histogram read back from its
 * encoding, which does not carry that count.  Nothing for NULL. */
void yb_hdr_add_clamped(yb_hdr *h, uint64_t n);
/* The smallest / largest value sharing value's slot: the histogram cannot
 * tell them apart.  value >= 0; returns 0 for NULL or a negative value. */
int64_t yb_hdr_lowest_equivalent(const yb_hdr *h, int64_t value);
int64_t yb_hdr_highest_equivalent(const yb_hdr *h, int64_t value);

/* Writes the percentile distribution in HdrHistogram's .hgrm text format,
 * values divided by scale (e.g. 1000.0 for µs → ms).  Returns 0 or -1. */
int yb_hdr_write_hgrm(const yb_hdr *h, FILE *f, double scale);
/* The same distribution as the .hgrm rows, for plotting: fills pct[i]
 * (percentile, 0..100) and val[i] (the value at it, unscaled) with the
 * rows of .hgrm's walk (5 ticks per halving of the distance to 100%),
 * the last one at 100% (the maximum).  When there are more than cap rows
 * the walk stops at cap - 1 and the last point is still the maximum.
 * Returns the number of points (0 for an empty histogram or cap < 2). */
size_t yb_hdr_percentile_curve(const yb_hdr *h, double *pct, int64_t *val, size_t cap);

/* Encodes in HdrHistogram's V2 compressed format (deflate of the V2
 * encoding, with the compressed-cookie header), as used in .hlog interval
 * logs.  Returns 0 and a malloc'd buffer, or -1. */
int yb_hdr_encode_compressed(const yb_hdr *h, uint8_t **out, size_t *len);
/* Decodes the V2 compressed format into a new histogram.  Returns NULL on
 * malformed input (never crashes on hostile bytes). */
yb_hdr *yb_hdr_decode_compressed(const uint8_t *buf, size_t len);

#endif
