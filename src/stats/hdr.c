/* HDR histogram after Gil Tene's HdrHistogram.
 *
 * Layout (the same as every HdrHistogram implementation, so that indexes,
 * equivalent-value ranges and the V2 encoding agree with theirs):
 *  - sub_bucket_count = smallest power of two >= 2 * 10^sigfigs; within the
 *    first bucket every integer in [0, sub_bucket_count) << unit_magnitude
 *    has its own slot, which is what bounds the relative error to
 *    10^-sigfigs;
 *  - each further bucket doubles the range and reuses only the upper half
 *    of its sub-buckets (the lower half is covered by the previous bucket),
 *    so the counts array holds (bucket_count + 1) * sub_bucket_count / 2
 *    slots.
 * The counts array is mapped once, when the histogram is made: recording
 * never needs to allocate.  Until a histogram has more than MANY distinct
 * slots they are kept apart, the first FEW in the struct, and the mapping
 * is not written at all (see FEW). */
#include "config.h"
#include "stats/hdr.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zlib.h>

/* Cookies of the V2 encoding.  The low nibble of the second byte (0x10)
 * flags the "LEB128-64b9B + ZigZag" word format; readers compare the
 * cookie with that nibble masked out, as HdrHistogram does. */
#define V2_ENCODING_COOKIE 0x1c849303u
#define V2_COMPRESSED_COOKIE 0x1c849304u
#define COOKIE_WORD_FLAG 0x10u
#define COOKIE_BASE(c) ((c) & ~0xf0u)
#define V2_HEADER_LEN 40  /* cookie, length, offset, digits, lo, hi, ratio */
#define V2_MAX_WORD 9     /* LEB128-64b9B: at most 9 bytes per count */

/* A decoded histogram's counts array is allocated from untrusted header
 * fields: refuse layouts beyond 2^22 slots (32 MiB) rather than let a
 * hostile .hlog line allocate without bound.  yangblast's default layout
 * needs 23,552 slots; 5 digits over 1..2^62 needs about 6 million. */
#define DECODE_MAX_COUNTS (1 << 22)

/* A histogram's first FEW distinct slots are kept in its struct, not in
 * its counts array: a run keeps a recorder per target with fifteen
 * histograms each, most of which see one or a few values per target (the
 * set-up phases of its one session), and each slot written in the array
 * costs a whole page of memory, and a page fault when first written
 * (about one per request of a fleet's target at first, when its latencies
 * spread over the array's pages).  Past FEW slots they move to an array
 * on the heap, sorted as well, which grows up to MANY; past MANY (or when
 * the heap has no room: recording never fails) they move to the counts,
 * for good (a reset keeps them there). */
#define FEW 8
#define MANY 128

typedef struct {
    int32_t idx;
    int64_t n;
} hdr_slot;

struct yb_hdr {
    int64_t lowest, highest;
    int sigfigs;
    int unit_magnitude;
    int sub_bucket_count_magnitude;
    int sub_bucket_half_count_magnitude;
    int32_t sub_bucket_count, sub_bucket_half_count;
    int64_t sub_bucket_mask;
    int32_t bucket_count;
    int32_t counts_len;
    int64_t total;
    int64_t min_value; /* raw (clamped) values, INT64_MAX / 0 when empty */
    int64_t max_value;
    uint64_t clamped;
    int64_t *counts;   /* counts_len slots, mmap'd; all zero while n_few >= 0 */
    int n_few;         /* -1: counts holds every count; else sl[0..n_few)
                        * do, by ascending slot, each count > 0 */
    int cap_few;       /* room in sl: FEW, or up to MANY on the heap */
    int hint;          /* the kept slot found or made last: a phase that
                        * takes one value most of the time finds it there
                        * without a search (valid while < n_few) */
    hdr_slot *sl;      /* few, or (more than FEW) a heap array (owned) */
    hdr_slot few[FEW];
};

/* ---- layout ------------------------------------------------------------ */

static int floor_log2(uint64_t v)
{
    return 63 - __builtin_clzll(v);
}

static int32_t buckets_to_cover(int64_t value, int32_t sub_bucket_count, int unit_magnitude)
{
    int64_t smallest_untrackable = (int64_t)sub_bucket_count << unit_magnitude;
    int32_t n = 1;

    while (smallest_untrackable <= value) {
        if (smallest_untrackable > INT64_MAX / 2)
            return n + 1;
        smallest_untrackable <<= 1;
        n++;
    }
    return n;
}

/* Computes the layout into *h (counts not touched).  Returns 0 or -1. */
static int layout(yb_hdr *h, int64_t lowest, int64_t highest, int sigfigs)
{
    int64_t single_unit_max = 2;
    int m = 0;

    /* highest >= 2 * lowest, written so a hostile lowest cannot overflow */
    if (lowest < 1 || sigfigs < 1 || sigfigs > 5 || highest > INT64_MAX / 2 ||
        lowest > highest / 2)
        return -1;
    for (int i = 0; i < sigfigs; i++)
        single_unit_max *= 10;
    while (((int64_t)1 << m) < single_unit_max)
        m++;
    h->lowest = lowest;
    h->highest = highest;
    h->sigfigs = sigfigs;
    h->unit_magnitude = floor_log2((uint64_t)lowest);
    h->sub_bucket_count_magnitude = m;
    h->sub_bucket_half_count_magnitude = (m > 1 ? m : 1) - 1;
    if (h->unit_magnitude + m > 62)
        return -1;
    h->sub_bucket_count = (int32_t)1 << (h->sub_bucket_half_count_magnitude + 1);
    h->sub_bucket_half_count = h->sub_bucket_count / 2;
    h->sub_bucket_mask = ((int64_t)h->sub_bucket_count - 1) << h->unit_magnitude;
    h->bucket_count = buckets_to_cover(highest, h->sub_bucket_count, h->unit_magnitude);
    h->counts_len = (h->bucket_count + 1) * h->sub_bucket_half_count;
    return 0;
}

static size_t counts_size(int32_t counts_len)
{
    return (size_t)counts_len * sizeof(int64_t);
}

/* A histogram's slots are mostly zero (a phase of a few requests writes a
 * handful of its tens of thousands), so its counts come straight from
 * mmap, whose pages cost nothing until written, not from calloc, which may
 * hand back used heap memory and zero all of it: a run keeps a recorder
 * per target, and the unwritten pages of their histograms would otherwise
 * be paid in RSS and in time.  The struct is apart from them (a page of
 * its own for each histogram otherwise), and holds the first slots (FEW). */
static yb_hdr *alloc_layout(const yb_hdr *tmpl)
{
    yb_hdr *h = malloc(sizeof(*h));
    void *m;

    if (!h)
        return NULL;
    m = mmap(NULL, counts_size(tmpl->counts_len), PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        free(h);
        return NULL;
    }
    memcpy(h, tmpl, sizeof(*h));
    h->counts = m;
    h->n_few = 0;
    h->sl = h->few;
    h->cap_few = FEW;
    h->hint = 0;
    h->total = 0;
    h->min_value = INT64_MAX;
    h->max_value = 0;
    h->clamped = 0;
    return h;
}

yb_hdr *yb_hdr_new(int64_t lowest, int64_t highest, int sigfigs)
{
    yb_hdr tmpl;

    memset(&tmpl, 0, sizeof(tmpl));
    if (layout(&tmpl, lowest, highest, sigfigs) < 0)
        return NULL;
    return alloc_layout(&tmpl);
}

yb_hdr *yb_hdr_new_default(void)
{
    return yb_hdr_new(1, INT64_C(3600000000), 3);
}

void yb_hdr_free(yb_hdr *h)
{
    if (!h)
        return;
    munmap(h->counts, counts_size(h->counts_len));
    if (h->sl != h->few)
        free(h->sl);
    free(h);
}

static int32_t counts_index_for(const yb_hdr *h, int64_t v);

void yb_hdr_reset(yb_hdr *h)
{
    if (!h)
        return;
    if (h->total > 0 && h->n_few < 0) {
        /* only the slots from the least to the greatest value are not zero */
        int32_t lo = counts_index_for(h, h->min_value), hi = counts_index_for(h, h->max_value);
        if (lo < 0)
            lo = 0;
        if (hi >= h->counts_len)
            hi = h->counts_len - 1;
        if (lo <= hi)
            memset(&h->counts[lo], 0, (size_t)(hi - lo + 1) * sizeof(int64_t));
    }
    /* The counts are all zero again.  A histogram that had moved to its
     * counts array stays there: its pages are in memory already, and one
     * that is reset every interval (the per-second ones) would otherwise
     * pay the kept slots' search and insertion again for its first MANY
     * distinct values each time. */
    if (h->n_few > 0)
        h->n_few = 0;
    h->total = 0;
    h->min_value = INT64_MAX;
    h->max_value = 0;
    h->clamped = 0;
}

/* ---- index arithmetic (values are >= 0 here) ---------------------------- */

static int bucket_index(const yb_hdr *h, int64_t v)
{
    int pow2ceiling = 64 - __builtin_clzll((uint64_t)(v | h->sub_bucket_mask));

    return pow2ceiling - h->unit_magnitude - (h->sub_bucket_half_count_magnitude + 1);
}

static int32_t sub_bucket_index(const yb_hdr *h, int64_t v, int b)
{
    return (int32_t)(v >> (b + h->unit_magnitude));
}

static int32_t counts_index(const yb_hdr *h, int b, int32_t sb)
{
    int32_t base = (int32_t)(b + 1) << h->sub_bucket_half_count_magnitude;

    return base + (sb - h->sub_bucket_half_count);
}

static int32_t counts_index_for(const yb_hdr *h, int64_t v)
{
    int b = bucket_index(h, v);

    return counts_index(h, b, sub_bucket_index(h, v, b));
}

static int64_t value_from_index(const yb_hdr *h, int32_t idx)
{
    int b = (idx >> h->sub_bucket_half_count_magnitude) - 1;
    int32_t sb = (idx & (h->sub_bucket_half_count - 1)) + h->sub_bucket_half_count;

    if (b < 0) {
        sb -= h->sub_bucket_half_count;
        b = 0;
    }
    return (int64_t)sb << (b + h->unit_magnitude);
}

static int64_t equivalent_range(const yb_hdr *h, int64_t v)
{
    int b = bucket_index(h, v);
    int32_t sb = sub_bucket_index(h, v, b);
    int adj = sb >= h->sub_bucket_count ? b + 1 : b;

    return (int64_t)1 << (h->unit_magnitude + adj);
}

static int64_t lowest_equivalent(const yb_hdr *h, int64_t v)
{
    int b = bucket_index(h, v);

    return (int64_t)sub_bucket_index(h, v, b) << (b + h->unit_magnitude);
}

static int64_t highest_equivalent(const yb_hdr *h, int64_t v)
{
    return lowest_equivalent(h, v) + equivalent_range(h, v) - 1;
}

static int64_t median_equivalent(const yb_hdr *h, int64_t v)
{
    return lowest_equivalent(h, v) + (equivalent_range(h, v) >> 1);
}

int64_t yb_hdr_lowest_equivalent(const yb_hdr *h, int64_t value)
{
    return (h && value >= 0) ? lowest_equivalent(h, value) : 0;
}

int64_t yb_hdr_highest_equivalent(const yb_hdr *h, int64_t value)
{
    return (h && value >= 0) ? highest_equivalent(h, value) : 0;
}

/* ---- slots --------------------------------------------------------------- */

/* The first of the kept slots sl[0..n_few) at or after slot i (n_few
 * when none): a binary search, as a target's histograms may keep MANY. */
static int kept_at(const yb_hdr *h, int32_t i)
{
    int lo = 0, hi = h->n_few;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (h->sl[mid].idx < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The count in slot i (0 <= i < counts_len). */
static int64_t slot(const yb_hdr *h, int32_t i)
{
    if (h->n_few < 0)
        return h->counts[i];
    int k = kept_at(h, i);
    return k < h->n_few && h->sl[k].idx == i ? h->sl[k].n : 0;
}

/* The first slot at or after i with a count (> 0), or counts_len when
 * none; *n gets its count.  Only the slots up to the greatest value's can
 * hold one. */
static int32_t next_slot(const yb_hdr *h, int32_t i, int64_t *n)
{
    if (h->total <= 0)
        return h->counts_len;
    if (h->n_few >= 0) {
        int k = kept_at(h, i);
        if (k == h->n_few)
            return h->counts_len;
        *n = h->sl[k].n;
        return h->sl[k].idx;
    }
    int32_t hi = counts_index_for(h, h->max_value);
    if (hi >= h->counts_len)
        hi = h->counts_len - 1;
    for (; i <= hi; i++)
        if (h->counts[i] != 0) {
            *n = h->counts[i];
            return i;
        }
    return h->counts_len;
}

/* Makes room for more kept slots: FEW in the struct, then 4 times as many
 * on the heap, up to MANY.  Returns 0, or -1 when they must go to the
 * counts instead (MANY reached, or no memory). */
static int keep_more(yb_hdr *h)
{
    if (h->cap_few >= MANY)
        return -1;
    int cap = h->cap_few * 4 < MANY ? h->cap_few * 4 : MANY;
    hdr_slot *s = h->sl == h->few ? malloc((size_t)cap * sizeof *s)
                                  : realloc(h->sl, (size_t)cap * sizeof *s);
    if (!s)
        return -1;
    if (h->sl == h->few)
        memcpy(s, h->few, (size_t)h->n_few * sizeof *s);
    h->sl = s;
    h->cap_few = cap;
    return 0;
}

/* Moves the kept slots to the counts array, for good. */
static void to_counts(yb_hdr *h)
{
    for (int k = 0; k < h->n_few; k++)
        h->counts[h->sl[k].idx] = h->sl[k].n;
    h->n_few = -1;
    if (h->sl != h->few)
        free(h->sl);
    h->sl = h->few;
    h->cap_few = FEW;
}

/* Adds n (> 0) to slot i (0 <= i < counts_len); the totals are the
 * caller's.  A slot that finds no room among the kept ones moves them all
 * to the counts array. */
static void add_slot(yb_hdr *h, int32_t i, int64_t n)
{
    if (h->n_few < 0) {
        h->counts[i] += n;
        return;
    }
    int k = kept_at(h, i);
    if (k < h->n_few && h->sl[k].idx == i) {
        h->sl[k].n += n;
        h->hint = k;
        return;
    }
    if (h->n_few == h->cap_few && keep_more(h) < 0) {
        to_counts(h);
        h->counts[i] += n;
        return;
    }
    memmove(&h->sl[k + 1], &h->sl[k], (size_t)(h->n_few - k) * sizeof h->sl[0]);
    h->sl[k].idx = i;
    h->sl[k].n = n;
    h->n_few++;
    h->hint = k;
}

/* ---- recording ------------------------------------------------------------ */

/* Adds count (> 0) of value (within [lowest, highest]) with the totals:
 * the slot's common cases (the counts array, the kept slot found last)
 * inline, the search only on a miss -- a run pays this several times per
 * request. */
static inline void record_in_range(yb_hdr *h, int64_t value, int64_t count)
{
    int32_t idx = counts_index_for(h, value);
    if (idx < 0 || idx >= h->counts_len) /* cannot happen within the range */
        return;
    if (h->n_few < 0)
        h->counts[idx] += count;
    else if (h->hint < h->n_few && h->sl[h->hint].idx == idx)
        h->sl[h->hint].n += count;
    else
        add_slot(h, idx, count);
    h->total += count;
    if (value < h->min_value)
        h->min_value = value;
    if (value > h->max_value)
        h->max_value = value;
}

void yb_hdr_record_n(yb_hdr *h, int64_t value, int64_t count)
{
    if (!h || count <= 0)
        return;
    if (value < h->lowest || value > h->highest) {
        h->clamped += (uint64_t)count;
        value = value < h->lowest ? h->lowest : h->highest;
    }
    record_in_range(h, value, count);
}

void yb_hdr_record(yb_hdr *h, int64_t value)
{
    if (!h)
        return;
    if (value < h->lowest || value > h->highest)
        yb_hdr_record_n(h, value, 1); /* clamped */
    else
        record_in_range(h, value, 1);
}

static bool same_layout(const yb_hdr *a, const yb_hdr *b)
{
    return a->counts_len == b->counts_len && a->unit_magnitude == b->unit_magnitude &&
           a->sub_bucket_count == b->sub_bucket_count && a->lowest == b->lowest &&
           a->highest == b->highest;
}

int yb_hdr_uses_counts(const yb_hdr *h)
{
    return h && h->n_few < 0;
}

int yb_hdr_add(yb_hdr *dst, const yb_hdr *src)
{
    if (!dst || !src)
        return -1;
    if (src->total == 0) {
        dst->clamped += src->clamped;
        return 0;
    }
    /* only the slots between src's smallest and largest value: the rest
     * are zero, and a mostly empty histogram (a few phases of one target's
     * requests) is merged without touching its untouched pages */
    int32_t lo = counts_index_for(src, src->min_value);
    int64_t n;
    if (lo < 0)
        lo = 0;
    if (same_layout(dst, src)) {
        for (int32_t i = next_slot(src, lo, &n); i < src->counts_len; i = next_slot(src, i + 1, &n))
            add_slot(dst, i, n);
        dst->total += src->total;
        if (src->min_value < dst->min_value)
            dst->min_value = src->min_value;
        if (src->max_value > dst->max_value)
            dst->max_value = src->max_value;
    } else {
        /* Different layouts: re-record each slot at its lowest value, which
         * is what HdrHistogram's add does in this case. */
        for (int32_t i = next_slot(src, lo, &n); i < src->counts_len; i = next_slot(src, i + 1, &n))
            yb_hdr_record_n(dst, value_from_index(src, i), n);
    }
    dst->clamped += src->clamped;
    return 0;
}

/* ---- queries ------------------------------------------------------------- */

int64_t yb_hdr_count(const yb_hdr *h)
{
    return h ? h->total : 0;
}

uint64_t yb_hdr_clamped(const yb_hdr *h)
{
    return h ? h->clamped : 0;
}

void yb_hdr_add_clamped(yb_hdr *h, uint64_t n)
{
    if (h)
        h->clamped += n;
}

int64_t yb_hdr_min(const yb_hdr *h)
{
    if (!h || h->total == 0)
        return 0;
    return lowest_equivalent(h, h->min_value);
}

int64_t yb_hdr_max(const yb_hdr *h)
{
    if (!h || h->total == 0 || h->max_value == 0)
        return 0;
    return highest_equivalent(h, h->max_value);
}

double yb_hdr_mean(const yb_hdr *h)
{
    double sum = 0.0;
    int64_t n;

    if (!h || h->total == 0)
        return 0.0;
    /* Each slot stands for the middle of its equivalent range, as in
     * HdrHistogram's getMean(). */
    for (int32_t i = next_slot(h, 0, &n); i < h->counts_len; i = next_slot(h, i + 1, &n))
        sum += (double)median_equivalent(h, value_from_index(h, i)) * (double)n;
    return sum / (double)h->total;
}

double yb_hdr_stddev(const yb_hdr *h)
{
    double mean, acc = 0.0;
    int64_t n;

    if (!h || h->total == 0)
        return 0.0;
    mean = yb_hdr_mean(h);
    for (int32_t i = next_slot(h, 0, &n); i < h->counts_len; i = next_slot(h, i + 1, &n)) {
        double d = (double)median_equivalent(h, value_from_index(h, i)) - mean;
        acc += d * d * (double)n;
    }
    return sqrt(acc / (double)h->total);
}

int64_t yb_hdr_percentile(const yb_hdr *h, double p)
{
    double req;
    int64_t want, cum = 0;

    if (!h || h->total == 0)
        return 0;
    if (isnan(p))
        p = 0.0;
    /* Step one ulp down before ceil(): 99.9% of 1000 computes as
     * 999.0000000000001 in binary floating point and must still mean the
     * 999th value, as in HdrHistogram's getValueAtPercentile(). */
    req = nextafter(p, -INFINITY);
    req = req < 0.0 ? 0.0 : (req > 100.0 ? 100.0 : req);
    want = (int64_t)ceil(req / 100.0 * (double)h->total);
    if (want < 1)
        want = 1;
    /* the slots below the least value are zero: start there */
    int32_t lo = counts_index_for(h, h->min_value);
    int64_t n;
    for (int32_t i = next_slot(h, lo > 0 ? lo : 0, &n); i < h->counts_len;
         i = next_slot(h, i + 1, &n)) {
        cum += n;
        if (cum >= want) {
            int64_t v = value_from_index(h, i);
            return p <= 0.0 ? lowest_equivalent(h, v) : highest_equivalent(h, v);
        }
    }
    return 0;
}

/* ---- .hgrm text ---------------------------------------------------------- */

/* HdrHistogram's PercentileIterator step: a fixed number of ticks per
 * "half distance to 100%", so each halving of the remaining distance gets
 * the same number of rows. */
static double next_level(double level, int ticks_per_half)
{
    double rest = 100.0 - level;
    double e = rest > 0.0 ? floor(log(100.0 / rest) / log(2)) : 56.0;
    int64_t ticks;

    if (!(e >= 0.0))
        e = 0.0;
    if (e > 56.0) /* keeps the tick count below 2^63 */
        e = 56.0;
    ticks = (int64_t)ticks_per_half * ((int64_t)1 << ((int)e + 1));
    return level + 100.0 / (double)ticks;
}

/* The walk of HdrHistogram's percentile iterator, shared by the .hgrm text
 * and the JSON percentile curve: a slot may yield several rows (one per
 * level it reaches) until the cumulative count covers the total, then one
 * last row at 100%.  Calls row(value, level in %, cumulative count, last)
 * for each row; stops early when row returns non-zero and returns that,
 * else 0.  Nothing is called for an empty histogram. */
static int walk_percentiles(const yb_hdr *h, int ticks_per_half,
                            int (*row)(void *ud, int64_t value, double level, int64_t cum,
                                       bool last),
                            void *ud)
{
    double level = 0.0;
    int64_t cum = 0;
    int32_t i = 0;
    bool fresh = true;
    int rc;

    if (h->total <= 0)
        return 0;
    while (cum < h->total && i < h->counts_len) {
        int64_t c = slot(h, i);

        if (fresh) {
            cum += c;
            fresh = false;
        }
        if (c != 0 && (100.0 * (double)cum) / (double)h->total >= level) {
            if ((rc = row(ud, highest_equivalent(h, value_from_index(h, i)), level, cum, false)))
                return rc;
            level = next_level(level, ticks_per_half);
            continue;
        }
        if (c == 0) /* the empty slots up to the next one only move on */
            i = next_slot(h, i + 1, &c);
        else
            i++;
        fresh = true;
    }
    if (i >= h->counts_len)
        i = h->counts_len - 1;
    return row(ud, highest_equivalent(h, value_from_index(h, i)), 100.0, cum, true);
}

typedef struct {
    FILE *f;
    int d;
    double scale;
} hgrm_ctx;

static int hgrm_row(void *ud, int64_t value, double level, int64_t cum, bool last)
{
    const hgrm_ctx *c = ud;
    double v = (double)value / c->scale;

    if (last)
        return fprintf(c->f, "%12.*f %2.12f %10" PRId64 "\n", c->d, v, 1.0, cum) < 0 ? -1 : 0;
    return fprintf(c->f, "%12.*f %2.12f %10" PRId64 " %14.2f\n", c->d, v, level / 100.0, cum,
                   1.0 / (1.0 - level / 100.0)) < 0
               ? -1
               : 0;
}

int yb_hdr_write_hgrm(const yb_hdr *h, FILE *f, double scale)
{
    if (!h || !f || !(scale > 0.0))
        return -1;
    hgrm_ctx c = {f, h->sigfigs, scale};
    int d = h->sigfigs;
    if (fprintf(f, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount",
                "1/(1-Percentile)") < 0)
        return -1;
    if (walk_percentiles(h, 5, hgrm_row, &c) < 0)
        return -1;
    if (fprintf(f, "#[Mean    = %12.*f, StdDeviation   = %12.*f]\n", d, yb_hdr_mean(h) / scale, d,
                yb_hdr_stddev(h) / scale) < 0 ||
        fprintf(f, "#[Max     = %12.*f, Total count    = %12" PRId64 "]\n", d,
                (double)yb_hdr_max(h) / scale, h->total) < 0 ||
        fprintf(f, "#[Buckets = %12" PRId32 ", SubBuckets     = %12" PRId32 "]\n", h->bucket_count,
                h->sub_bucket_count) < 0)
        return -1;
    return 0;
}

typedef struct {
    double *pct;
    int64_t *val;
    size_t n, cap;
} curve_ctx;

static int curve_row(void *ud, int64_t value, double level, int64_t cum, bool last)
{
    curve_ctx *c = ud;
    (void)cum;
    if (c->n == c->cap)
        return 1; /* full: the caller's cap is the curve's resolution */
    c->pct[c->n] = last ? 100.0 : level;
    c->val[c->n++] = value;
    return 0;
}

size_t yb_hdr_percentile_curve(const yb_hdr *h, double *pct, int64_t *val, size_t cap)
{
    curve_ctx c = {pct, val, 0, cap};
    if (!h || !pct || !val || cap < 2)
        return 0;
    /* Below the cap the walk runs to 100%; at the cap the last slot is
     * replaced by the 100% row, so the curve always ends at the maximum. */
    if (walk_percentiles(h, 5, curve_row, &c) == 1) {
        pct[cap - 1] = 100.0;
        val[cap - 1] = yb_hdr_max(h);
    }
    return c.n;
}

/* ---- V2 encoding ----------------------------------------------------------- */

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void put_be64(uint8_t *p, uint64_t v)
{
    put_be32(p, (uint32_t)(v >> 32));
    put_be32(p + 4, (uint32_t)v);
}

static uint32_t get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get_be64(const uint8_t *p)
{
    return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

/* ZigZag, then LEB128 with at most 9 bytes: the 9th byte carries a full 8
 * bits, which is how HdrHistogram fits 64 bits in 9 bytes. */
static size_t put_zigzag(uint8_t *p, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    size_t n = 0;

    while (n < 8 && z >= 0x80) {
        p[n++] = (uint8_t)(z | 0x80);
        z >>= 7;
    }
    p[n++] = (uint8_t)z;
    return n;
}

/* Returns bytes consumed, or 0 when the word runs past end. */
static size_t get_zigzag(const uint8_t *p, size_t avail, int64_t *out)
{
    uint64_t z = 0;
    size_t n = 0;

    for (;;) {
        uint8_t b;

        if (n >= avail)
            return 0;
        b = p[n];
        if (n == 8) {
            z |= (uint64_t)b << 56;
            n++;
            break;
        }
        z |= (uint64_t)(b & 0x7f) << (7 * n);
        n++;
        if (!(b & 0x80))
            break;
    }
    *out = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
    return n;
}

int yb_hdr_encode_compressed(const yb_hdr *h, uint8_t **out, size_t *len)
{
    uint8_t *raw = NULL, *comp = NULL;
    size_t rawlen = V2_HEADER_LEN, cap;
    uLongf clen;
    int32_t limit, i;
    union {
        double d;
        uint64_t u;
    } ratio = {.d = 1.0};

    if (!h || !out || !len)
        return -1;
    /* Like HdrHistogram, stop after the slot of the largest value. */
    limit = counts_index_for(h, h->max_value) + 1;
    if (limit > h->counts_len)
        limit = h->counts_len;
    cap = V2_HEADER_LEN + (size_t)limit * V2_MAX_WORD;
    raw = malloc(cap);
    if (!raw)
        goto fail;
    put_be32(raw, V2_ENCODING_COOKIE | COOKIE_WORD_FLAG);
    put_be32(raw + 8, 0); /* normalizing index offset: never shifted */
    put_be32(raw + 12, (uint32_t)h->sigfigs);
    put_be64(raw + 16, (uint64_t)h->lowest);
    put_be64(raw + 24, (uint64_t)h->highest);
    put_be64(raw + 32, ratio.u);
    for (i = 0; i < limit;) {
        int64_t c = 0;
        int32_t next = next_slot(h, i, &c);

        if (next > limit)
            next = limit;
        if (next > i) {
            int64_t zeros = next - i;

            /* A single zero is written as the count 0, runs as -length. */
            rawlen += put_zigzag(raw + rawlen, zeros > 1 ? -zeros : 0);
            i = next;
        } else {
            rawlen += put_zigzag(raw + rawlen, c);
            i++;
        }
    }
    put_be32(raw + 4, (uint32_t)(rawlen - V2_HEADER_LEN));

    clen = compressBound((uLong)rawlen);
    comp = malloc(8 + (size_t)clen);
    if (!comp)
        goto fail;
    if (compress2(comp + 8, &clen, raw, (uLong)rawlen, Z_DEFAULT_COMPRESSION) != Z_OK ||
        clen > UINT32_MAX)
        goto fail;
    put_be32(comp, V2_COMPRESSED_COOKIE | COOKIE_WORD_FLAG);
    put_be32(comp + 4, (uint32_t)clen);
    free(raw);
    *out = comp;
    *len = 8 + (size_t)clen;
    return 0;
fail:
    free(comp);
    free(raw);
    return -1;
}

/* Inflates exactly want bytes into dst.  Returns 0 or -1. */
static int inflate_exact(z_stream *zs, uint8_t *dst, size_t want)
{
    zs->next_out = dst;
    zs->avail_out = (uInt)want;
    while (zs->avail_out > 0) {
        int rc = inflate(zs, Z_NO_FLUSH);

        if (rc == Z_STREAM_END)
            break;
        if (rc != Z_OK) /* Z_BUF_ERROR: input exhausted; others: corrupt */
            return -1;
    }
    return zs->avail_out == 0 ? 0 : -1;
}

yb_hdr *yb_hdr_decode_compressed(const uint8_t *buf, size_t len)
{
    z_stream zs;
    bool zs_live = false;
    uint8_t hdr[V2_HEADER_LEN];
    uint8_t *payload = NULL;
    yb_hdr tmpl, *h = NULL;
    uint32_t clen, plen;
    uint64_t lowest, highest;
    int32_t idx = 0;
    size_t pos = 0;

    if (!buf || len < 8 || COOKIE_BASE(get_be32(buf)) != V2_COMPRESSED_COOKIE)
        return NULL;
    clen = get_be32(buf + 4);
    if (clen > len - 8)
        return NULL;
    memset(&zs, 0, sizeof(zs));
    zs.next_in = (Bytef *)(uintptr_t)(buf + 8); /* zlib's API is not const-correct */
    zs.avail_in = (uInt)clen;
    if (inflateInit(&zs) != Z_OK)
        return NULL;
    zs_live = true;
    if (inflate_exact(&zs, hdr, sizeof(hdr)) < 0)
        goto fail;
    if (COOKIE_BASE(get_be32(hdr)) != V2_ENCODING_COOKIE || get_be32(hdr + 8) != 0)
        goto fail;
    plen = get_be32(hdr + 4);
    lowest = get_be64(hdr + 16);
    highest = get_be64(hdr + 24);
    if (lowest > INT64_MAX || highest > INT64_MAX || get_be32(hdr + 12) > 5)
        goto fail;
    memset(&tmpl, 0, sizeof(tmpl));
    if (layout(&tmpl, (int64_t)lowest, (int64_t)highest, (int)get_be32(hdr + 12)) < 0 ||
        tmpl.counts_len > DECODE_MAX_COUNTS)
        goto fail;
    /* Every word advances at least one slot, so a longer payload is a lie. */
    if (plen == 0 || plen > (uint64_t)tmpl.counts_len * V2_MAX_WORD)
        goto fail;
    payload = malloc(plen);
    if (!payload || inflate_exact(&zs, payload, plen) < 0)
        goto fail;
    /* The stream must end right here, checksum included: a cut or
     * corrupted buffer is refused rather than half-read. */
    {
        uint8_t extra;

        zs.next_out = &extra;
        zs.avail_out = 1;
        if (inflate(&zs, Z_FINISH) != Z_STREAM_END || zs.avail_out != 1)
            goto fail;
    }
    inflateEnd(&zs);
    zs_live = false;

    h = alloc_layout(&tmpl);
    if (!h)
        goto fail;
    to_counts(h); /* written straight into the counts */
    while (pos < plen) {
        int64_t v;
        size_t n = get_zigzag(payload + pos, plen - pos, &v);

        if (n == 0)
            goto fail;
        pos += n;
        if (v < 0) {
            /* A zero run; -INT64_MIN would overflow, and any run must stay
             * inside the array. */
            if (v == INT64_MIN || -v > (int64_t)(h->counts_len - idx))
                goto fail;
            idx += (int32_t)-v;
            continue;
        }
        if (idx >= h->counts_len || v > INT64_MAX - h->total)
            goto fail;
        if (v > 0) {
            int64_t lo = value_from_index(h, idx);

            h->counts[idx] = v;
            h->total += v;
            if (lo < h->min_value)
                h->min_value = lo;
            h->max_value = lo; /* slots ascend: the last one seen is the max */
        }
        idx++;
    }
    free(payload);
    return h;
fail:
    if (zs_live)
        inflateEnd(&zs);
    free(payload);
    yb_hdr_free(h);
    return NULL;
}
