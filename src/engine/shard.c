/* The division of a run among shards (see shard.h). */
#include "config.h"
#include "engine/shard.h"
#include "util/util.h"

#include <string.h>

int yb_shard_divides(const yb_shard *s)
{
    return s && s->count > 1;
}

int yb_shard_parse(const char *spec, yb_shard *s)
{
    const char *slash = spec ? strchr(spec, '/') : NULL;
    uint64_t i, n;
    if (!slash || yb_parse_u64_n(spec, (size_t)(slash - spec), 0, YB_SHARD_MAX - 1, &i) < 0 ||
        yb_parse_u64(slash + 1, 1, YB_SHARD_MAX, &n) < 0 || i >= n)
        return -1;
    s->index = (unsigned)i;
    s->count = (unsigned)n;
    return 0;
}

int yb_shard_parse_index(const char *value, unsigned count, yb_shard *s)
{
    uint64_t i;
    if (!value || count < 1 || count > YB_SHARD_MAX ||
        yb_parse_u64(value, 0, count - 1, &i) < 0)
        return -1;
    s->index = (unsigned)i;
    s->count = count;
    return 0;
}

uint64_t yb_shard_part(const yb_shard *s, uint64_t total)
{
    if (!yb_shard_divides(s))
        return total;
    return total / s->count + (s->index < total % s->count ? 1 : 0);
}

int yb_shard_takes(const yb_shard *s, uint64_t k)
{
    return !yb_shard_divides(s) || k % s->count == s->index;
}

void yb_shard_lane(const yb_shard *s, unsigned place, unsigned span, unsigned *worker,
                   unsigned *workers)
{
    if (!yb_shard_divides(s)) {
        *worker = place;
        *workers = span;
        return;
    }
    *worker = place * s->count + s->index;
    *workers = span * s->count;
}
