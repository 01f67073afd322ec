/* libFuzzer target: the scale-out options' parsers of untrusted text,
 * --start-at TIME (util/walltime.h) and --shard I/N (engine/shard.h), on a
 * NUL-terminated copy of exactly the input's length (ASan sees a read past
 * its end).  Oracles: a time that parses is within the documented range
 * and reads back the same from its own Unix form (@S.NNNNNNNNN); a shard
 * that parses has 0 <= I < N <= YB_SHARD_MAX and prints back to the
 * input. */
#include "config.h"
#include "engine/shard.h"
#include "util/walltime.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    char *s = malloc(len + 1);
    if (!s)
        return 0;
    memcpy(s, data, len);
    s[len] = 0;
    int64_t t;
    if (yb_parse_walltime(s, &t) == 0) {
        if (t < 0 || t > INT64_C(7258118399999999999))
            abort(); /* outside 1970 .. 2199 */
        char back[48];
        snprintf(back, sizeof back, "@%lld.%09lld", (long long)(t / 1000000000),
                 (long long)(t % 1000000000));
        int64_t u;
        if (yb_parse_walltime(back, &u) != 0 || u != t)
            abort(); /* its own Unix form reads differently */
    }
    yb_shard sh;
    if (yb_shard_parse(s, &sh) == 0) {
        if (sh.count < 1 || sh.count > YB_SHARD_MAX || sh.index >= sh.count)
            abort();
        char back[32];
        snprintf(back, sizeof back, "%u/%u", sh.index, sh.count);
        /* leading zeros aside, the text is the pair */
        if (!strchr(s, '0') && strcmp(back, s))
            abort();
    }
    free(s);
    return 0;
}
