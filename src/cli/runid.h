/* The run id: one name for the work a run does, the same on every shard
 * of it and different for different work, so that shard reports can be
 * told apart and merged (yangblast-report(5): run_id). */
#ifndef YB_RUNID_H
#define YB_RUNID_H

#include <stddef.h>
#include "cli/runopts.h"

#define YB_RUN_ID_LEN 32 /* hex digits of a derived id */
#define YB_RUN_ID_MAX 64 /* characters of one given with --run-id */

/* Derives the run id of r into out (YB_RUN_ID_LEN + 1 bytes): the first
 * 128 bits of SHA-256, in hex, over the options that define the work (as
 * applied, sorted by option so their order on the command line does not
 * matter, repeated ones in their order) and the content of the files
 * named in files[0..n) (NULLs skipped: the corpus, the inventory, the
 * plan file; a name that is not a regular file counts by its name),
 * excluding what differs between the shards of one run or
 * does not change the work: --shard, --shards, --shard-from-env,
 * --start-at, --run-id, -t, the outputs and their formats, thresholds,
 * -q/-v, live metrics, and every TLS or credential file (secrets, and
 * paths that may differ between hosts).  Returns 0, or -1 with a message
 * in err (a file that cannot be read). */
int yb_run_id(const yb_runopts *r, const char *const *files, size_t n, char *out,
              char *err, size_t errlen);

/* The seed of the placeholders for a sharded run without --seed: every
 * shard fills its templates as the one run would, from the run id. */
uint64_t yb_run_id_seed(const char *run_id);

#endif
