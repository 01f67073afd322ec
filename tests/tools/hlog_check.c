/* Reads an HdrHistogram interval log (.hlog) with yangblast's own decoder
 * and prints, per interval line, "START LENGTH MAX_MS COUNT P50_US MAX_US";
 * then "total COUNT".  Exits 1 on any line that does not follow the
 * published format or whose histogram does not decode.  Used by the tests
 * for the --hlog round trip. */
#include "config.h"
#include "stats/hdr.h"
#include "util/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    int64_t total = 0;
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
        double start, len, max;
        int off = 0;
        if (sscanf(line, "%lf,%lf,%lf,%n", &start, &len, &max, &off) != 3 || off <= 0) {
            fprintf(stderr, "%s:%d: not an interval line\n", argv[1], lineno);
            rc = 1;
            continue;
        }
        const char *b64 = line + off;
        uint8_t *buf;
        size_t blen;
        if (yb_base64_decode(b64, strlen(b64), &buf, &blen) < 0) {
            fprintf(stderr, "%s:%d: bad base64\n", argv[1], lineno);
            rc = 1;
            continue;
        }
        yb_hdr *h = yb_hdr_decode_compressed(buf, blen);
        free(buf);
        if (!h) {
            fprintf(stderr, "%s:%d: histogram does not decode\n", argv[1], lineno);
            rc = 1;
            continue;
        }
        printf("%.3f %.3f %.3f %" PRId64 " %" PRId64 " %" PRId64 "\n", start, len, max,
               yb_hdr_count(h), yb_hdr_percentile(h, 50), yb_hdr_max(h));
        total += yb_hdr_count(h);
        yb_hdr_free(h);
    }
    free(line);
    fclose(f);
    if (!saw_version || !saw_start || !saw_legend) {
        fprintf(stderr, "%s: missing header lines (version %d, start %d, legend %d)\n", argv[1],
                saw_version, saw_start, saw_legend);
        rc = 1;
    }
    printf("total %" PRId64 "\n", total);
    return rc;
}
