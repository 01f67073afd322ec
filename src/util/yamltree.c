/* YAML as a tree of nodes with their lines (see yamltree.h). */
#include "config.h"
#include "util/yamltree.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

void yb_ynode_free(yb_ynode *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n; i++)
        yb_ynode_free(n->kid[i]);
    free(n->kid);
    free(n->s);
    free(n);
}

static int add_kid(yb_ynode *p, yb_ynode *k)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        yb_ynode **kid = realloc(p->kid, cap * sizeof *kid);
        if (!kid)
            return -1;
        p->kid = kid;
        p->cap = cap;
    }
    p->kid[p->n++] = k;
    return 0;
}

int yb_ytree_err(char *err, size_t errlen, const char *file, unsigned line, const char *fmt, ...)
{
    int k = snprintf(err, errlen, "%s:%u: ", file, line);
    if (k >= 0 && (size_t)k < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return -1;
}

#define FERR(line, ...) yb_ytree_err(err, errlen, file, line, __VA_ARGS__)

/* One node of event ev at line, added under the open collection (if any). */
static yb_ynode *new_node(const yaml_event_t *ev, unsigned line)
{
    yb_ynode *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->line = line;
    if (ev->type == YAML_SCALAR_EVENT) {
        n->type = YB_YN_SCALAR;
        n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        n->s = strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
    } else {
        n->type = ev->type == YAML_MAPPING_START_EVENT ? YB_YN_MAP : YB_YN_SEQ;
        n->s = strdup("");
    }
    if (!n->s) {
        free(n);
        return NULL;
    }
    return n;
}

int yb_ytree_parse(const char *file, const uint8_t *buf, size_t len, const yb_ytree_limits *lim,
                   yb_ynode **root, char *err, size_t errlen)
{
    yaml_parser_t p;
    yaml_event_t ev;
    yb_ynode *stack[YB_YTREE_MAX_DEPTH + 1];
    unsigned max_depth = lim->max_depth < YB_YTREE_MAX_DEPTH ? lim->max_depth : YB_YTREE_MAX_DEPTH;
    size_t depth = 0, nodes = 0;
    int rc = -1, done = 0, docs = 0;
    *root = NULL;
    if (len > lim->max_bytes)
        return FERR(1, "larger than %zu bytes", lim->max_bytes);
    if (!yaml_parser_initialize(&p))
        return FERR(1, "out of memory");
    yaml_parser_set_input_string(&p, buf, len);
    while (!done) {
        if (!yaml_parser_parse(&p, &ev)) {
            FERR((unsigned)p.problem_mark.line + 1, "YAML syntax error: %s%s%s",
                 p.problem ? p.problem : "unreadable", p.context ? " " : "",
                 p.context ? p.context : "");
            goto out;
        }
        unsigned line = (unsigned)ev.start_mark.line + 1;
        yb_ynode *n = NULL;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1) { /* never read only part of a file */
                FERR(line, "a second YAML document: %s is one document", lim->what);
                yaml_event_delete(&ev);
                goto out;
            }
            break;
        case YAML_ALIAS_EVENT:
            /* an alias can repeat a subtree exponentially (a "billion
             * laughs" bomb): these files have no use for them */
            FERR(line, "YAML aliases (*%s) are not accepted in %s",
                 ev.data.alias.anchor ? (const char *)ev.data.alias.anchor : "", lim->what);
            yaml_event_delete(&ev);
            goto out;
        case YAML_SCALAR_EVENT:
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if (++nodes > lim->max_nodes) {
                FERR(line, "more than %zu YAML nodes", lim->max_nodes);
                yaml_event_delete(&ev);
                goto out;
            }
            if (ev.type == YAML_SCALAR_EVENT &&
                (ev.data.scalar.length > lim->max_scalar ||
                 memchr(ev.data.scalar.value, 0, ev.data.scalar.length))) {
                FERR(line, "a value longer than %zu bytes or with a NUL byte", lim->max_scalar);
                yaml_event_delete(&ev);
                goto out;
            }
            if (!(n = new_node(&ev, line)) || (depth && add_kid(stack[depth - 1], n) < 0)) {
                FERR(line, "out of memory");
                yb_ynode_free(n);
                yaml_event_delete(&ev);
                goto out;
            }
            if (!depth && !*root)
                *root = n;
            else if (!depth) { /* cannot happen within one document */
                yb_ynode_free(n);
                break;
            }
            if (n->type != YB_YN_SCALAR) {
                if (depth == max_depth) {
                    FERR(line, "nested deeper than %u levels", max_depth);
                    yaml_event_delete(&ev);
                    goto out;
                }
                stack[depth++] = n;
            }
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            if (depth)
                depth--;
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    rc = 0;
out:
    yaml_parser_delete(&p);
    if (rc < 0) {
        yb_ynode_free(*root);
        *root = NULL;
    }
    return rc;
}

int yb_ytree_read_file(const char *path, size_t max, uint8_t **out, size_t *outlen, char *err,
                       size_t errlen)
{
    *out = NULL;
    *outlen = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        int e = fd < 0 ? errno : EINVAL;
        if (fd >= 0)
            close(fd);
        snprintf(err, errlen, "%s: cannot read: %s", path,
                 e == EINVAL ? "not a regular file" : strerror(e));
        return -1;
    }
    if ((uint64_t)st.st_size > max) {
        close(fd);
        snprintf(err, errlen, "%s:1: larger than %zu bytes", path, max);
        return -1;
    }
    /* read one byte past the size seen: a file that grew is caught too */
    size_t cap = (size_t)st.st_size + 1, len = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        close(fd);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    while (len < cap) {
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
            close(fd);
            free(buf);
            return -1;
        }
        if (!r)
            break;
        len += (size_t)r;
    }
    close(fd);
    if (len == cap) {
        snprintf(err, errlen, "%s: changed while being read", path);
        free(buf);
        return -1;
    }
    *out = buf;
    *outlen = len;
    return 0;
}

int yb_ynode_is_null(const yb_ynode *v)
{
    return v->type == YB_YN_SCALAR && v->plain &&
           (!v->s[0] || !strcmp(v->s, "~") || !strcasecmp(v->s, "null"));
}

const yb_ynode *yb_ynode_get(const yb_ynode *m, const char *key)
{
    for (size_t i = 0; i + 1 < m->n; i += 2)
        if (m->kid[i]->type == YB_YN_SCALAR && !strcmp(m->kid[i]->s, key))
            return m->kid[i + 1];
    return NULL;
}
