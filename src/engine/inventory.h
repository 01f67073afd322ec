/* An inventory (`--targets FILE`): the switches a run talks to, read from
 * YAML (libyaml) and validated as a whole before any traffic.  Two shapes
 * (yangblast-inventory(5)): the native one (`targets:` a sequence, with
 * `defaults:`), and gnmic's targets file (`targets:` a mapping keyed by
 * address).  Secrets are held by reference only: the name of an environment
 * variable or a file path, checked to exist here and read when the run
 * starts; a literal `password:` or `token:` is refused.
 *
 * Every error names the file, the line and the key:
 *   "FILE:LINE: unknown key 'x' in target 'sw1'"
 * The input is untrusted: aliases are refused (no YAML bombs), the file,
 * the nesting depth, the node count and every scalar are capped. */
#ifndef YB_INVENTORY_H
#define YB_INVENTORY_H

#include <stddef.h>
#include <stdint.h>
#include "engine/schedule.h"

#define YB_INV_MAX_BYTES (4u << 20)  /* whole file */
#define YB_INV_MAX_DEPTH 16          /* nested collections */
#define YB_INV_MAX_NODES 200000      /* scalars + collections */
#define YB_INV_MAX_SCALAR 4096       /* bytes in one scalar */
#define YB_INV_MAX_TARGETS 10000
#define YB_INV_MAX_NAME 64           /* target names: [A-Za-z0-9._-]+ */

typedef enum { YB_SECRET_NONE = 0, YB_SECRET_PASSWORD, YB_SECRET_TOKEN } yb_secret_kind;

/* One target after `defaults:` are merged (its own keys win).  Strings are
 * owned by the inventory; NULL = not given. */
typedef struct {
    char *name;
    unsigned line;            /* where the target starts, for later messages */
    char *restconf;           /* http:// or https:// URL */
    char *gnmi;               /* grpc:// or grpcs:// URL */
    char **aliases;           /* for --route authority */
    size_t n_aliases;
    char **label_key, **label_value;
    size_t n_labels;
    char *user;
    yb_secret_kind secret;    /* what the reference below gives */
    char *secret_env;         /* environment variable holding it, or */
    char *secret_file;        /* file whose first line holds it */
    char *tls_ca, *tls_cert, *tls_key, *tls_server_name;
    int tls_insecure;         /* skip verification */
    unsigned concurrency;     /* 0 = not given */
    yb_schedule *rate;        /* same syntax as --rate; NULL = not given
                               * (owned, with its reference to the steps) */
} yb_inv_target;

typedef struct {
    yb_inv_target *target;
    size_t n;
    int gnmic;                /* read from gnmic's shape */
} yb_inventory;

/* Reads and validates the inventory at path (at most YB_INV_MAX_BYTES).
 * Returns 0 and fills *inv (free with yb_inventory_free), or -1 with a
 * message "PATH:LINE: ..." in err (*inv is then empty). */
int yb_inventory_load(const char *path, yb_inventory *inv, char *err, size_t errlen);

/* The same over len bytes at buf, named `name` in messages. */
int yb_inventory_parse(const char *name, const uint8_t *buf, size_t len, yb_inventory *inv,
                       char *err, size_t errlen);

/* Returns the target named name (or with that alias), or NULL. */
const yb_inv_target *yb_inventory_find(const yb_inventory *inv, const char *name);

void yb_inventory_free(yb_inventory *inv);

#endif
