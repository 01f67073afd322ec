/* Small YAML files that users write by hand (the inventory, plan files),
 * read as a tree of nodes that keeps every node's line, so that a reader
 * walking it against its schema can name file, line and key in each
 * message.  The input is untrusted: aliases are refused (no YAML bombs),
 * a second document is refused (never read only part of a file), and the
 * file size, nesting depth, node count and scalar length are capped. */
#ifndef YB_YAMLTREE_H
#define YB_YAMLTREE_H

#include <stddef.h>
#include <stdint.h>

#define YB_YTREE_MAX_DEPTH 16 /* nested collections, at most */

typedef enum { YB_YN_SCALAR, YB_YN_MAP, YB_YN_SEQ } yb_ynode_type;

typedef struct yb_ynode {
    yb_ynode_type type;
    unsigned line;          /* 1-based */
    int plain;              /* scalar written without quotes (null is plain) */
    char *s;                /* scalar text, NUL-terminated ("" for collections) */
    struct yb_ynode **kid;  /* MAP: key, value, key, value...; SEQ: items */
    size_t n, cap;
} yb_ynode;

typedef struct {
    const char *what;       /* for messages: "an inventory", "a plan" */
    size_t max_bytes;       /* whole file */
    unsigned max_depth;     /* nested collections, <= YB_YTREE_MAX_DEPTH */
    size_t max_nodes;       /* scalars + collections */
    size_t max_scalar;      /* bytes in one scalar */
} yb_ytree_limits;

/* Builds the tree of the one document in buf[0..len), named `file` in
 * messages.  Returns 0 and *root (a MAP, SEQ or SCALAR, owned by the
 * caller: yb_ynode_free; NULL for an empty document), or -1 with err
 * "FILE:LINE: reason". */
int yb_ytree_parse(const char *file, const uint8_t *buf, size_t len, const yb_ytree_limits *lim,
                   yb_ynode **root, char *err, size_t errlen);

/* Reads the regular file at path whole (at most max bytes; a file that
 * changes while read is refused).  Returns 0 and *buf (malloc'd, caller
 * frees), *len, or -1 with err "PATH: reason". */
int yb_ytree_read_file(const char *path, size_t max, uint8_t **buf, size_t *len, char *err,
                       size_t errlen);

void yb_ynode_free(yb_ynode *n);

/* 1 when v is a plain null scalar (empty, ~, null in any case). */
int yb_ynode_is_null(const yb_ynode *v);

/* The value of key `key` in mapping m, or NULL. */
const yb_ynode *yb_ynode_get(const yb_ynode *m, const char *key);

/* Writes "FILE:LINE: " and the formatted message to err; returns -1. */
int yb_ytree_err(char *err, size_t errlen, const char *file, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
