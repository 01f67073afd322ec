/* Reads an HdrHistogram interval log (.hlog) with yangblast's own decoder
 * and prints, per untagged interval line, "START LENGTH MAX_MS COUNT
 * P50_US MAX_US", per tagged line ("Tag=NAME,..."), "tag NAME START LENGTH
 * MAX_MS COUNT P50_US MAX_US"; then "total COUNT" (untagged lines) and,
 * when there are tags, "tags LINES COUNT".  Exits 1 on any line that does
 * not follow the published format or whose histogram does not decode, on
 * a tag that is not WORKLOAD/TARGET/OPERATION without ',' or white space,
 * and, when the log has tags, on any interval whose tagged histograms do
 * not add up to its untagged one value for value.  Used by the tests for
 * the --hlog round trip. */
#include "config.h"
#include "stats/hdr.h"
#include "util/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double start;
    yb_hdr *untagged, *tagged; /* the untagged line; the sum of the tagged ones */
} interval;

static interval *ivs;
static size_t n_ivs;

/* The interval starting at start (made when new), or NULL. */
static interval *interval_at(double start)
{
    for (size_t i = 0; i < n_ivs; i++)
        if (ivs[i].start == start)
            return &ivs[i];
    interval *v = realloc(ivs, (n_ivs + 1) * sizeof *v);
    if (!v)
        return NULL;
    ivs = v;
    v = &ivs[n_ivs];
    v->start = start;
    v->untagged = yb_hdr_new_default();
    v->tagged = yb_hdr_new_default();
    if (!v->untagged || !v->tagged)
        return NULL;
    n_ivs++;
    return v;
}

/* 1 when h and g hold the same values (their encodings are equal). */
static int same(const yb_hdr *h, const yb_hdr *g)
{
    uint8_t *a, *b;
    size_t la, lb;
    if (yb_hdr_encode_compressed(h, &a, &la) < 0)
        return 0;
    if (yb_hdr_encode_compressed(g, &b, &lb) < 0) {
        free(a);
        return 0;
    }
    int eq = la == lb && !memcmp(a, b, la);
    free(a);
    free(b);
    return eq;
}

/* A tag as yangblast writes it: WORKLOAD/TARGET/OPERATION, no ',' or
 * white space. */
static int tag_ok(const char *t, size_t n)
{
    size_t slashes = 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i] == ' ' || t[i] == '\t' || t[i] == ',')
            return 0;
        slashes += t[i] == '/';
    }
    const char *a = memchr(t, '/', n);
    return slashes >= 2 && a != t && a[1] != '/' && (size_t)(a - t) + 2 < n;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: hlog_check FILE\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int lineno = 0, saw_version = 0, saw_start = 0, saw_legend = 0, rc = 0;
    int64_t total = 0, tagged_total = 0, tag_lines = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        lineno++;
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = 0;
        if (!strncmp(line, "#[Histogram log format version ", 31)) {
            saw_version = 1;
            continue;
        }
        if (!strncmp(line, "#[StartTime: ", 13)) {
            saw_start = 1;
            continue;
        }
        if (line[0] == '#')
            continue;
        if (!strcmp(line, "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
                          "\"Interval_Compressed_Histogram\"")) {
            saw_legend = 1;
            continue;
        }
        const char *body = line, *tag = NULL;
        size_t tag_len = 0;
        if (!strncmp(line, "Tag=", 4)) {
            tag = line + 4;
            const char *comma = strchr(tag, ',');
            if (!comma || !tag_ok(tag, (size_t)(comma - tag))) {
                fprintf(stderr, "%s:%d: bad tag\n", argv[1], lineno);
                rc = 1;
                continue;
            }
            tag_len = (size_t)(comma - tag);
            body = comma + 1;
        }
        double start, len, max;
        int off = 0;
        if (sscanf(body, "%lf,%lf,%lf,%n", &start, &len, &max, &off) != 3 || off <= 0) {
            fprintf(stderr, "%s:%d: not an interval line\n", argv[1], lineno);
            rc = 1;
            continue;
        }
        const char *b64 = body + off;
        uint8_t *buf;
        size_t blen;
        if (yb_base64_decode(b64, strlen(b64), &buf, &blen) < 0) {
            fprintf(stderr, "%s:%d: bad base64\n", argv[1], lineno);
            rc = 1;
            continue;
        }
        yb_hdr *h = yb_hdr_decode_compressed(buf, blen);
        free(buf);
        interval *iv = h ? interval_at(start) : NULL;
        if (!h || !iv) {
            fprintf(stderr, "%s:%d: histogram does not decode\n", argv[1], lineno);
            yb_hdr_free(h);
            rc = 1;
            continue;
        }
        if (tag) {
            printf("tag %.*s ", (int)tag_len, tag);
            yb_hdr_add(iv->tagged, h);
            tagged_total += yb_hdr_count(h);
            tag_lines++;
        } else {
            yb_hdr_add(iv->untagged, h);
            total += yb_hdr_count(h);
        }
        printf("%.3f %.3f %.3f %" PRId64 " %" PRId64 " %" PRId64 "\n", start, len, max,
               yb_hdr_count(h), yb_hdr_percentile(h, 50), yb_hdr_max(h));
        yb_hdr_free(h);
    }
    free(line);
    fclose(f);
    if (!saw_version || !saw_start || !saw_legend) {
        fprintf(stderr, "%s: missing header lines (version %d, start %d, legend %d)\n", argv[1],
                saw_version, saw_start, saw_legend);
        rc = 1;
    }
    for (size_t i = 0; i < n_ivs; i++) {
        if (tag_lines && !same(ivs[i].untagged, ivs[i].tagged)) {
            fprintf(stderr, "%s: interval %.3f: the tagged histograms (%" PRId64 " values) do "
                    "not add up to the untagged one (%" PRId64 ")\n", argv[1], ivs[i].start,
                    yb_hdr_count(ivs[i].tagged), yb_hdr_count(ivs[i].untagged));
            rc = 1;
        }
        yb_hdr_free(ivs[i].untagged);
        yb_hdr_free(ivs[i].tagged);
    }
    free(ivs);
    printf("total %" PRId64 "\n", total);
    if (tag_lines)
        printf("tags %" PRId64 " %" PRId64 "\n", tag_lines, tagged_total);
    return rc;
}
