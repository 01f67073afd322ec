/* In-memory openconfig-acl datastore for `yangblast serve`: one jansson
 * tree shared by the RESTCONF and gNMI front ends, addressed by a small
 * protocol-neutral path (yb_spath) and changed in all-or-nothing
 * transactions.
 *
 * The tree holds YANG-JSON (RFC 7951) with module prefixes stripped from
 * member names ("openconfig-acl:acl-sets" is stored as "acl-sets"), under
 * a root object {"acl": {...}}.  Leaf values are kept as received, so an
 * identity such as "openconfig-acl:ACL_IPV4" reads back unchanged; list
 * keys compare with or without such a prefix.
 *
 * Transactions are copy-on-write on jansson's reference counts: a
 * transaction shallow-copies the root and every node on the way to a
 * change whose refcount shows it is still shared with the committed tree,
 * so a failed operation is discarded by dropping the working copy, and a
 * commit costs one pointer swap.  Not thread-safe: one loop owns a store. */
#ifndef YB_SERVE_STORE_H
#define YB_SERVE_STORE_H

#include <jansson.h>
#include <stddef.h>

/* Caps of a path (untrusted input): more segments, keys or bytes are
 * refused with -E2BIG. */
#define YB_SPATH_MAX_SEGS 32
#define YB_SPATH_MAX_KEYS 4
#define YB_SPATH_ARENA 4096

typedef struct {
    const char *name;                    /* prefix stripped */
    const char *key_name[YB_SPATH_MAX_KEYS]; /* NULL = positional (RESTCONF) */
    const char *key_val[YB_SPATH_MAX_KEYS];
    unsigned nkeys;
} yb_spath_seg;

/* A path from the datastore root: seg[0] is normally "acl".  All strings
 * live in arena.  Initialise with yb_spath_init; plain data, no cleanup. */
typedef struct {
    yb_spath_seg seg[YB_SPATH_MAX_SEGS];
    unsigned n;
    size_t used;
    char arena[YB_SPATH_ARENA];
} yb_spath;

void yb_spath_init(yb_spath *p);
/* Appends a segment named name[0..len) (a "module:" prefix is stripped).
 * Returns 0, -EINVAL (empty name) or -E2BIG. */
int yb_spath_push(yb_spath *p, const char *name, size_t len);
/* Adds a key to the last segment: key_name NULL for a positional key
 * (its name comes from the list's schema).  Returns 0, -EINVAL (no
 * segment) or -E2BIG. */
int yb_spath_add_key(yb_spath *p, const char *key_name, const char *val, size_t len);
/* Parses a RESTCONF data resource path, the part after "/restconf/data"
 * ("/openconfig-acl:acl/acl-sets/acl-set=A,ACL_IPV4"; empty = the whole
 * datastore), splitting keys on ',' and percent-decoding names and key
 * values.  Returns 0, -EINVAL (bad escape or syntax) or -E2BIG. */
int yb_spath_from_restconf(yb_spath *p, const char *s, size_t len);
/* Formats p as a gNMI path string ("acl/acl-sets/acl-set[name=A][type=T]")
 * into buf (always NUL-terminated).  Returns the untruncated length. */
size_t yb_spath_format(const yb_spath *p, char *buf, size_t cap);

typedef struct yb_store yb_store;

/* Returns an empty store ({"acl": {"acl-sets": {}}}) or NULL (ENOMEM). */
yb_store *yb_store_new(void);
void yb_store_free(yb_store *s);
/* A static description of the last failed operation ("" if none). */
const char *yb_store_error(const yb_store *s);

/* Returns a new reference: a copy of v with the "module:" prefix removed
 * from every member name, or NULL (ENOMEM). */
json_t *yb_store_canon(const json_t *v);
/* The schema key names of list `name` (acl-set: name,type; acl-entry:
 * sequence-id; interface: id; ingress/egress-acl-set: set-name,type);
 * unknown lists are keyed by "name".  Returns the count (≥ 1). */
unsigned yb_store_list_keys(const char *name, const char *const **keys);
/* 1 when `name` is one of the keyed lists above (a POST of an object
 * under it adds an entry), else 0. */
int yb_store_is_list(const char *name);

/* Reads the node at p in the committed tree.  *out is borrowed: valid
 * until the next change to the store.  Returns 0, -ENOENT (missing) or
 * -EINVAL (the path runs through a leaf or a list without keys). */
int yb_store_get(yb_store *s, const yb_spath *p, json_t **out);

/* ---- changes: between begin and commit/abort -------------------------- */

/* Starts a transaction (one at a time).  Returns 0 or -ENOMEM. */
int yb_store_begin(yb_store *s);
/* Publishes the transaction's changes. */
void yb_store_commit(yb_store *s);
/* Drops the transaction's changes. */
void yb_store_abort(yb_store *s);

/* In each, value is a canonical (yb_store_canon) node value and is
 * consumed (the caller's reference is taken over, even on failure).  A
 * list-entry target (keys in the last segment) takes an object whose key
 * members, when present, must equal the path's keys (missing ones are
 * filled in).  Every function returns 0 or a negative code and leaves the
 * reason in yb_store_error: -ENOENT, -EEXIST, -EINVAL, -ENOMEM. */

/* Replaces (or creates, with any missing ancestors) the node at p;
 * *created (may be NULL) gets 1 when it did not exist.  (RESTCONF PUT,
 * gNMI replace.) */
int yb_store_replace(yb_store *s, const yb_spath *p, json_t *value, int *created);
/* Merges value into the node at p: objects member by member, keyed lists
 * entry by entry, everything else replaced.  must_exist = 1 (RESTCONF
 * PATCH): -ENOENT when a list entry on the path, or the target itself if
 * it is a list entry or a leaf, is missing (containers spring into
 * being).  must_exist = 0 (gNMI update): creates what is missing. */
int yb_store_merge(yb_store *s, const yb_spath *p, json_t *value, int must_exist);
/* Creates child `child` (canonical name) of the node at p with value
 * (RESTCONF POST): for a list, every entry of value (an array, or one
 * object) is added, -EEXIST when one is already there; for anything else,
 * -EEXIST when the child exists.  -ENOENT when p is missing as for merge
 * with must_exist. */
int yb_store_create(yb_store *s, const yb_spath *p, const char *child, json_t *value);
/* Removes the node at p (the whole "acl" container empties instead).
 * Returns 0 or -ENOENT. */
int yb_store_delete(yb_store *s, const yb_spath *p);

/* Calls fn for every ACL set at or under p (p = the root, "acl",
 * "acl/acl-sets", "acl/acl-sets/acl-set" or one keyed set) in the
 * committed tree, with the set object (borrowed) and its name and type
 * (without prefix; "" when missing).  Returns the number of sets visited,
 * or -ENOTSUP when p lies below a set (the caller then reads the node with
 * yb_store_get) or outside the acl tree. */
int yb_store_foreach_set(yb_store *s, const yb_spath *p,
                         void (*fn)(void *ud, const json_t *set, const char *name,
                                    const char *type),
                         void *ud);

#endif
