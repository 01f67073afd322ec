/* Identical byte strings shared by the prepared requests of one thread.
 *
 * A fleet prepares the same corpus once per target: a thousand copies of
 * each 14.5 KB gNMI body, alike byte for byte.  A table hands out one
 * counted copy of each distinct string instead.  One table per thread
 * (the engine: one per worker), used by one thread at a time: no locks. */
#ifndef YB_BLOBS_H
#define YB_BLOBS_H

#include <stddef.h>
#include <stdint.h>

typedef struct yb_blobs yb_blobs;

/* Returns a new, empty table, or NULL. */
yb_blobs *yb_blobs_new(void);
/* Frees the table; every string taken from it must have been put back. */
void yb_blobs_free(yb_blobs *t);
/* A copy of p[0..len) (len > 0) shared with every other holder of the same
 * bytes, counted: give it back with yb_blob_put.  Returns it, or NULL when
 * out of memory. */
const uint8_t *yb_blob_get(yb_blobs *t, const uint8_t *p, size_t len);
/* Gives back a string from yb_blob_get on t (freed with its last holder). */
void yb_blob_put(yb_blobs *t, const uint8_t *data);

#endif
