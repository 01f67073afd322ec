/* HdrHistogram interval logs of a run's shards merged into one (see
 * merge.h): each line's start re-based on the earliest StartTime, the
 * histograms of one second and tag added with the recorder's own interval
 * addition, the result written by the run's own .hlog writer. */
#include "config.h"
#include "report/merge.h"
#include "util/outfile.h"
#include "util/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LOG_BYTES (256u << 20) /* an interval log larger than this is refused */
#define MAX_SECONDS 604800         /* a week of seconds after the earliest start */
#define MAX_TAGS 4096              /* distinct tags in one second */
#define MAX_TAG 512                /* bytes of a tag */
#define START_KEY "#[StartTime: "

typedef struct {
    yb_interval *iv;        /* second k after the earliest start, iv[k].t == k */
    size_t n;
    double start;           /* the earliest StartTime */
} merged;

/* The StartTime of log buf (the number after "#[StartTime: " on a comment
 * line before the first interval).  Returns 0 or -1. */
static int start_time(const char *buf, size_t len, double *out)
{
    size_t pos = 0;
    while (pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - (buf + pos)) : len - pos;
        const char *l = buf + pos;
        pos += ll + 1;
        if (ll && l[0] != '#' && l[0] != '"')
            return -1; /* an interval before any StartTime */
        size_t kl = strlen(START_KEY);
        if (ll > kl && !memcmp(l, START_KEY, kl)) {
            size_t e = kl;
            while (e < ll && l[e] != ' ' && l[e] != ']')
                e++;
            return yb_parse_double_n(l + kl, e - kl, out);
        }
    }
    return -1;
}

/* Makes m->iv[0..n) exist.  Returns 0 or -ENOMEM. */
static int extend(merged *m, size_t n)
{
    if (n <= m->n)
        return 0;
    yb_interval *g = realloc(m->iv, n * sizeof *g);
    if (!g)
        return -ENOMEM;
    for (size_t k = m->n; k < n; k++) {
        memset(&g[k], 0, sizeof g[k]);
        g[k].t = k;
    }
    m->iv = g;
    m->n = n;
    return 0;
}

/* Next comma-separated field of line l[*pos..ll): its start and length. */
static const char *field(const char *l, size_t ll, size_t *pos, size_t *fl)
{
    if (*pos > ll)
        return NULL;
    const char *f = l + *pos, *c = memchr(f, ',', ll - *pos);
    *fl = c ? (size_t)(c - f) : ll - *pos;
    *pos += *fl + 1;
    return f;
}

/* One interval line (no newline) of log `name`, started at log_start, into m.
 * Returns 0, -1 (err says) or -2. */
static int add_line(merged *m, const char *name, size_t lineno, double log_start, const char *l,
                    size_t ll, char *err, size_t errlen)
{
    char tag[MAX_TAG + 1] = "";
    size_t pos = 0, fl[4];
    const char *f[4];
    if (ll > 4 && !memcmp(l, "Tag=", 4)) {
        const char *c = memchr(l, ',', ll);
        size_t tl = c ? (size_t)(c - l) - 4 : 0;
        if (!c || tl == 0 || tl > MAX_TAG || memchr(l + 4, ' ', tl)) {
            snprintf(err, errlen, "%s:%zu: Tag=: expected a tag of 1 to %d bytes without "
                     "spaces, then a comma", name, lineno, MAX_TAG);
            return -1;
        }
        memcpy(tag, l + 4, tl);
        tag[tl] = 0;
        pos = tl + 5;
    }
    for (int i = 0; i < 4; i++)
        if (!(f[i] = field(l, ll, &pos, &fl[i]))) {
            snprintf(err, errlen, "%s:%zu: expected StartTimestamp,Interval_Length,"
                     "Interval_Max,Interval_Compressed_Histogram", name, lineno);
            return -1;
        }
    double start, length, max;
    if (pos <= ll /* a fifth field */ || yb_parse_double_n(f[0], fl[0], &start) < 0 ||
        yb_parse_double_n(f[1], fl[1], &length) < 0 || yb_parse_double_n(f[2], fl[2], &max) < 0) {
        snprintf(err, errlen, "%s:%zu: expected StartTimestamp,Interval_Length,Interval_Max "
                 "(numbers >= 0),Interval_Compressed_Histogram", name, lineno);
        return -1;
    }
    double at = log_start - m->start + start;
    if (!(at >= 0 && at < MAX_SECONDS)) {
        snprintf(err, errlen, "%s:%zu: StartTimestamp %.3f: more than a week after the earliest "
                 "StartTime", name, lineno, start);
        return -1;
    }
    size_t k = (size_t)llround(at);
    uint8_t *raw = NULL;
    size_t rl = 0;
    yb_hdr *h = NULL;
    if (fl[3] <= (1u << 24) && yb_base64_decode(f[3], fl[3], &raw, &rl) == 0)
        h = yb_hdr_decode_compressed(raw, rl);
    if (!h) {
        free(raw);
        snprintf(err, errlen, "%s:%zu: the histogram is not base64 of HdrHistogram's V2 "
                 "compressed encoding", name, lineno);
        return -1;
    }
    yb_hdr_free(h);
    if (extend(m, k + 1) < 0) {
        free(raw);
        return -2;
    }
    yb_interval one;
    yb_interval_tag t = {tag, raw, rl, 0};
    memset(&one, 0, sizeof one);
    if (tag[0]) {
        size_t i = 0;
        while (i < m->iv[k].n_tags && strcmp(m->iv[k].tags[i].tag, tag))
            i++;
        if (i == m->iv[k].n_tags && i >= MAX_TAGS) {
            free(raw);
            snprintf(err, errlen, "%s:%zu: more than %d tags in one second", name, lineno,
                     MAX_TAGS);
            return -1;
        }
        one.tags = &t;
        one.n_tags = 1;
    } else {
        one.hist = raw;
        one.hist_len = rl;
    }
    int rc = yb_interval_add(&m->iv[k], &one);
    free(raw);
    return rc < 0 ? -2 : 0;
}

static int add_log(merged *m, const char *buf, size_t len, const char *name, double log_start,
                   char *err, size_t errlen)
{
    size_t pos = 0, lineno = 0;
    while (pos < len) {
        const char *l = buf + pos, *nl = memchr(l, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - l) : len - pos;
        pos += ll + 1;
        lineno++;
        if (ll && l[ll - 1] == '\r')
            ll--;
        if (!ll || l[0] == '#' || l[0] == '"')
            continue; /* comments, the legend */
        int rc = add_line(m, name, lineno, log_start, l, ll, err, errlen);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static void merged_free(merged *m)
{
    for (size_t k = 0; k < m->n; k++)
        yb_interval_cleanup(&m->iv[k]);
    free(m->iv);
}

static int emit(FILE *f, void *ud)
{
    const merged *m = ud;
    if (yb_report_hlog_header(f, m->start) < 0)
        return -1;
    for (size_t k = 0; k < m->n; k++)
        if (yb_report_hlog_interval(f, &m->iv[k]) < 0)
            return -1;
    return 0;
}

/* Merges the logs into *m.  Returns 0, -1 or -2. */
static int merge_bufs(merged *m, const char *const *bufs, const size_t *lens,
                      const char *const *names, size_t n, char *err, size_t errlen)
{
    double *starts = calloc(n ? n : 1, sizeof *starts);
    int rc = -1;
    memset(m, 0, sizeof *m);
    if (!starts) {
        snprintf(err, errlen, "out of memory");
        return -2;
    }
    for (size_t i = 0; i < n; i++) {
        if (start_time(bufs[i], lens[i], &starts[i]) < 0 || !(starts[i] < 1e11)) {
            snprintf(err, errlen, "%s: no \"#[StartTime: SECONDS ...]\" line before the first "
                     "interval: not an interval log run --hlog wrote", names[i]);
            goto out;
        }
        if (i == 0 || starts[i] < m->start)
            m->start = starts[i];
    }
    for (size_t i = 0; i < n; i++)
        if ((rc = add_log(m, bufs[i], lens[i], names[i], starts[i], err, errlen)) < 0)
            goto out;
    rc = 0;
out:
    if (rc == -2)
        snprintf(err, errlen, "out of memory");
    free(starts);
    return rc;
}

int yb_merge_hlog_bufs(FILE *f, const char *const *bufs, const size_t *lens,
                       const char *const *names, size_t n, char *err, size_t errlen)
{
    merged m;
    int rc = merge_bufs(&m, bufs, lens, names, n, err, errlen);
    if (rc == 0 && f && emit(f, &m) < 0) {
        snprintf(err, errlen, "write failed");
        rc = -2;
    }
    merged_free(&m);
    return rc;
}

/* Reads the file at path (at most MAX_LOG_BYTES) into *buf.  Returns 0 or
 * -1 with err. */
static int slurp(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 0, n = 0;
    char *b = NULL;
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    for (;;) {
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 65536;
            char *g = nc <= MAX_LOG_BYTES + 1 ? realloc(b, nc) : NULL;
            if (!g) {
                snprintf(err, errlen, cap >= MAX_LOG_BYTES ? "%s: larger than %u MiB"
                                                           : "%s: out of memory (%u MiB cap)",
                         path, MAX_LOG_BYTES >> 20);
                free(b);
                fclose(f);
                return -1;
            }
            b = g;
            cap = nc;
        }
        size_t r = fread(b + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    int rerr = ferror(f);
    fclose(f);
    if (rerr) {
        free(b);
        snprintf(err, errlen, "%s: read error", path);
        return -1;
    }
    *buf = b;
    *len = n;
    return 0;
}

int yb_merge_hlogs(const char *out, const char *const *in, size_t n, char *err, size_t errlen)
{
    char **bufs = calloc(n ? n : 1, sizeof *bufs);
    size_t *lens = calloc(n ? n : 1, sizeof *lens);
    merged m;
    int rc = -2;
    memset(&m, 0, sizeof m);
    if (!bufs || !lens) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    rc = -1;
    for (size_t i = 0; i < n; i++)
        if (slurp(in[i], &bufs[i], &lens[i], err, errlen) < 0)
            goto out;
    if ((rc = merge_bufs(&m, (const char *const *)bufs, lens, in, n, err, errlen)) < 0)
        goto out;
    if (yb_write_atomic(out, emit, &m, err, errlen) < 0)
        rc = -2;
out:
    merged_free(&m);
    for (size_t i = 0; bufs && i < n; i++)
        free(bufs[i]);
    free(bufs);
    free(lens);
    return rc;
}
