/* In-memory openconfig-acl datastore: a generic YANG-JSON path walker over
 * a jansson tree with copy-on-write transactions (see store.h). */
#include "config.h"
#include "util/util.h"
#include "serve/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct yb_store {
    json_t *root;       /* committed tree: {"acl": {...}} */
    json_t *work;       /* transaction's working root or NULL */
    const char *err;
};

/* ---- paths ------------------------------------------------------------------ */

void yb_spath_init(yb_spath *p)
{
    p->n = 0;
    p->used = 0;
}

/* Copies s[0..len) into the arena.  Returns the copy or NULL (full). */
static const char *arena_put(yb_spath *p, const char *s, size_t len)
{
    if (len >= sizeof p->arena - p->used)
        return NULL;
    char *d = p->arena + p->used;
    memcpy(d, s, len);
    d[len] = 0;
    p->used += len + 1;
    return d;
}

/* "module:name" -> "name" (a member-name or identity prefix). */
static const char *strip_prefix(const char *s, size_t *len)
{
    const char *c = memchr(s, ':', *len);
    if (!c)
        return s;
    *len -= (size_t)(c + 1 - s);
    return c + 1;
}

int yb_spath_push(yb_spath *p, const char *name, size_t len)
{
    name = strip_prefix(name, &len);
    if (len == 0)
        return -EINVAL;
    if (p->n >= YB_SPATH_MAX_SEGS)
        return -E2BIG;
    yb_spath_seg *g = &p->seg[p->n];
    g->name = arena_put(p, name, len);
    if (!g->name)
        return -E2BIG;
    g->nkeys = 0;
    p->n++;
    return 0;
}

int yb_spath_add_key(yb_spath *p, const char *key_name, const char *val, size_t len)
{
    if (p->n == 0)
        return -EINVAL;
    yb_spath_seg *g = &p->seg[p->n - 1];
    if (g->nkeys >= YB_SPATH_MAX_KEYS)
        return -E2BIG;
    const char *kn = NULL;
    if (key_name) {
        size_t kl = strlen(key_name);
        key_name = strip_prefix(key_name, &kl);
        if (!(kn = arena_put(p, key_name, kl)))
            return -E2BIG;
    }
    const char *kv = arena_put(p, val, len);
    if (!kv)
        return -E2BIG;
    g->key_name[g->nkeys] = kn;
    g->key_val[g->nkeys] = kv;
    g->nkeys++;
    return 0;
}

/* Percent-decodes s[0..len) into out (cap bytes).  Returns the decoded
 * length or -EINVAL (bad escape, NUL) / -E2BIG. */
static long pct_decode(const char *s, size_t len, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        int c = (unsigned char)s[i];
        if (c == '%') {
            if (i + 2 >= len)
                return -EINVAL;
            int h = yb_hexval(s[i + 1]), l = yb_hexval(s[i + 2]);
            if (h < 0 || l < 0)
                return -EINVAL;
            c = h * 16 + l;
            i += 2;
        }
        if (c == 0)
            return -EINVAL;
        if (o >= cap)
            return -E2BIG;
        out[o++] = (char)c;
    }
    return (long)o;
}

int yb_spath_from_restconf(yb_spath *p, const char *s, size_t len)
{
    char tmp[YB_SPATH_ARENA];
    size_t i = 0;
    yb_spath_init(p);
    while (i < len && s[i] == '/')
        i++;
    while (i < len) {
        size_t j = i;
        while (j < len && s[j] != '/')
            j++;
        /* One segment s[i..j): NAME or NAME=K1,K2 (keys may be empty). */
        size_t eq = i;
        while (eq < j && s[eq] != '=')
            eq++;
        long n = pct_decode(s + i, eq - i, tmp, sizeof tmp);
        if (n < 0)
            return (int)n;
        int rc = yb_spath_push(p, tmp, (size_t)n);
        if (rc)
            return rc;
        if (eq < j) {
            size_t k = eq + 1;
            for (;;) {
                size_t c = k;
                while (c < j && s[c] != ',')
                    c++;
                n = pct_decode(s + k, c - k, tmp, sizeof tmp);
                if (n < 0)
                    return (int)n;
                if ((rc = yb_spath_add_key(p, NULL, tmp, (size_t)n)))
                    return rc;
                if (c >= j)
                    break;
                k = c + 1;
            }
        }
        i = j;
        while (i < len && s[i] == '/')
            i++;
    }
    return 0;
}

size_t yb_spath_format(const yb_spath *p, char *buf, size_t cap)
{
    size_t n = 0;
#define PUT(str)                                                                   \
    do {                                                                           \
        const char *s_ = (str);                                                    \
        size_t l_ = strlen(s_);                                                    \
        if (cap > 0 && n < cap - 1) {                                              \
            size_t c_ = l_ < cap - 1 - n ? l_ : cap - 1 - n;                       \
            memcpy(buf + n, s_, c_);                                               \
        }                                                                          \
        n += l_;                                                                   \
    } while (0)
    for (unsigned i = 0; i < p->n; i++) {
        const yb_spath_seg *g = &p->seg[i];
        if (i)
            PUT("/");
        PUT(g->name);
        const char *const *names;
        unsigned nk = yb_store_list_keys(g->name, &names);
        for (unsigned k = 0; k < g->nkeys; k++) {
            PUT("[");
            PUT(g->key_name[k] ? g->key_name[k] : k < nk ? names[k] : "name");
            PUT("=");
            PUT(g->key_val[k]);
            PUT("]");
        }
    }
#undef PUT
    if (cap > 0)
        buf[n < cap ? n : cap - 1] = 0;
    return n;
}

/* ---- schema ------------------------------------------------------------------ */

unsigned yb_store_list_keys(const char *name, const char *const **keys)
{
    static const char *const SET[] = {"name", "type"};
    static const char *const ENTRY[] = {"sequence-id"};
    static const char *const IFACE[] = {"id"};
    static const char *const BIND[] = {"set-name", "type"};
    static const char *const DEF[] = {"name"};
    if (!strcmp(name, "acl-set")) {
        *keys = SET;
        return 2;
    }
    if (!strcmp(name, "acl-entry")) {
        *keys = ENTRY;
        return 1;
    }
    if (!strcmp(name, "interface")) {
        *keys = IFACE;
        return 1;
    }
    if (!strcmp(name, "ingress-acl-set") || !strcmp(name, "egress-acl-set")) {
        *keys = BIND;
        return 2;
    }
    *keys = DEF;
    return 1;
}

/* Names of the lists this datastore knows to be keyed (everything else
 * that holds an array is a leaf-list and is replaced whole on merge). */
int yb_store_is_list(const char *name)
{
    return !strcmp(name, "acl-set") || !strcmp(name, "acl-entry") ||
           !strcmp(name, "interface") || !strcmp(name, "ingress-acl-set") ||
           !strcmp(name, "egress-acl-set");
}

/* ---- helpers ----------------------------------------------------------------- */

json_t *yb_store_canon(const json_t *v)
{
    if (json_is_object(v)) {
        json_t *o = json_object();
        const char *k;
        json_t *m;
        if (!o)
            return NULL;
        json_object_foreach((json_t *)v, k, m) {
            size_t kl = strlen(k);
            const char *sk = strip_prefix(k, &kl);
            json_t *c = yb_store_canon(m);
            if (!c || json_object_setn_new(o, sk, kl, c)) {
                json_decref(o);
                return NULL;
            }
        }
        return o;
    }
    if (json_is_array(v)) {
        json_t *a = json_array();
        size_t i;
        json_t *m;
        if (!a)
            return NULL;
        json_array_foreach(v, i, m) {
            json_t *c = yb_store_canon(m);
            if (!c || json_array_append_new(a, c)) {
                json_decref(a);
                return NULL;
            }
        }
        return a;
    }
    return json_incref((json_t *)v);
}

/* Text of a key leaf for comparison: strings without an identity prefix,
 * integers in decimal.  Returns 0 or -1 (not a scalar key). */
static int key_text(const json_t *v, char *buf, size_t cap, const char **out, size_t *len)
{
    if (json_is_string(v)) {
        *len = json_string_length(v);
        *out = strip_prefix(json_string_value(v), len);
        return 0;
    }
    if (json_is_integer(v)) {
        int n = snprintf(buf, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        if (n < 0 || (size_t)n >= cap)
            return -1;
        *out = buf;
        *len = (size_t)n;
        return 0;
    }
    if (json_is_boolean(v)) {
        *out = json_is_true(v) ? "true" : "false";
        *len = strlen(*out);
        return 0;
    }
    return -1;
}

static int key_equal(const json_t *v, const char *want)
{
    char buf[32];
    const char *t;
    size_t tl, wl = strlen(want);
    if (key_text(v, buf, sizeof buf, &t, &tl) < 0)
        return 0;
    want = strip_prefix(want, &wl);
    return tl == wl && !memcmp(t, want, tl);
}

/* The key name of key k of segment g. */
static const char *seg_key_name(const yb_spath_seg *g, unsigned k)
{
    const char *const *names;
    unsigned nk = yb_store_list_keys(g->name, &names);
    if (g->key_name[k])
        return g->key_name[k];
    return k < nk ? names[k] : "name";
}

/* Index of the entry of array a matching g's keys, or -1. */
static long find_entry(const json_t *a, const yb_spath_seg *g)
{
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e) {
        if (!json_is_object(e))
            continue;
        unsigned k;
        for (k = 0; k < g->nkeys; k++) {
            const json_t *v = json_object_get(e, seg_key_name(g, k));
            if (!v || !key_equal(v, g->key_val[k]))
                break;
        }
        if (k == g->nkeys)
            return (long)i;
    }
    return -1;
}

/* Index of the entry of a with the same schema keys as object e (list
 * `name`), -1 when none, -2 when e lacks a key. */
static long find_same(const json_t *a, const char *name, const json_t *e)
{
    const char *const *keys;
    unsigned nk = yb_store_list_keys(name, &keys);
    const char *vals[YB_SPATH_MAX_KEYS];
    char bufs[YB_SPATH_MAX_KEYS][32];
    for (unsigned k = 0; k < nk; k++) {
        const json_t *v = json_object_get(e, keys[k]);
        size_t l;
        if (!v || key_text(v, bufs[k], sizeof bufs[k], &vals[k], &l) < 0)
            return -2;
    }
    size_t i;
    json_t *d;
    json_array_foreach(a, i, d) {
        unsigned k;
        if (!json_is_object(d))
            continue;
        for (k = 0; k < nk; k++) {
            const json_t *v = json_object_get(d, keys[k]);
            char b[32];
            const char *t;
            size_t tl;
            if (!v || key_text(v, b, sizeof b, &t, &tl) < 0 || tl != strlen(vals[k]) ||
                memcmp(t, vals[k], tl))
                break;
        }
        if (k == nk)
            return (long)i;
    }
    return -1;
}

/* 1 when object e has every schema key of list `name`. */
static int has_keys(const char *name, const json_t *e)
{
    const char *const *keys;
    unsigned nk = yb_store_list_keys(name, &keys);
    for (unsigned k = 0; k < nk; k++)
        if (!json_object_get(e, keys[k]))
            return 0;
    return 1;
}

/* Copy-on-write: returns obj[key] made private to the working tree (obj
 * itself must be private), or NULL when missing / ENOMEM (*oom set). */
static json_t *cow_member(json_t *obj, const char *key, int *oom)
{
    json_t *c = json_object_get(obj, key);
    if (!c || c->refcount <= 1 || (!json_is_object(c) && !json_is_array(c)))
        return c;
    json_t *d = json_copy(c);
    if (!d || json_object_set_new(obj, key, d)) {
        *oom = 1;
        return NULL;
    }
    return d;
}

static json_t *cow_index(json_t *arr, size_t i, int *oom)
{
    json_t *c = json_array_get(arr, i);
    if (!c || c->refcount <= 1 || (!json_is_object(c) && !json_is_array(c)))
        return c;
    json_t *d = json_copy(c);
    if (!d || json_array_set_new(arr, i, d)) {
        *oom = 1;
        return NULL;
    }
    return d;
}

/* ---- store ------------------------------------------------------------------- */

yb_store *yb_store_new(void)
{
    yb_store *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->root = json_pack("{s:{s:{}}}", "acl", "acl-sets");
    if (!s->root) {
        free(s);
        return NULL;
    }
    s->err = "";
    return s;
}

void yb_store_free(yb_store *s)
{
    if (!s)
        return;
    json_decref(s->work);
    json_decref(s->root);
    free(s);
}

const char *yb_store_error(const yb_store *s) { return s->err; }

int yb_store_begin(yb_store *s)
{
    if (s->work)
        return -EBUSY;
    s->work = json_copy(s->root);
    return s->work ? 0 : -ENOMEM;
}

void yb_store_commit(yb_store *s)
{
    if (!s->work)
        return;
    json_decref(s->root);
    s->root = s->work;
    s->work = NULL;
}

void yb_store_abort(yb_store *s)
{
    json_decref(s->work);
    s->work = NULL;
}

static int fail(yb_store *s, int rc, const char *why)
{
    s->err = why;
    return rc;
}

int yb_store_get(yb_store *s, const yb_spath *p, json_t **out)
{
    json_t *cur = s->root;
    for (unsigned i = 0; i < p->n; i++) {
        const yb_spath_seg *g = &p->seg[i];
        if (!json_is_object(cur))
            return fail(s, -EINVAL, "path continues below a leaf");
        json_t *c = json_object_get(cur, g->name);
        if (!c)
            return fail(s, -ENOENT, "no such data node");
        if (g->nkeys) {
            if (!json_is_array(c))
                return fail(s, -EINVAL, "keys given for a node that is not a list");
            long idx = find_entry(c, g);
            if (idx < 0)
                return fail(s, -ENOENT, "no such list entry");
            c = json_array_get(c, (size_t)idx);
        } else if (json_is_array(c) && i + 1 < p->n) {
            return fail(s, -EINVAL, "list entry keys missing");
        }
        cur = c;
    }
    *out = cur;
    return 0;
}

/* Creation policy of the walk to a target's parent. */
enum { WALK_NONE = 0, WALK_CONTAINERS = 1, WALK_ALL = 2 };

/* New list entry object holding g's keys (integers stay integers when
 * they look like one, as for sequence-id). */
static json_t *entry_from_keys(const yb_spath_seg *g)
{
    json_t *e = json_object();
    for (unsigned k = 0; e && k < g->nkeys; k++) {
        const char *v = g->key_val[k];
        char *end;
        json_t *jv;
        long long n = strtoll(v, &end, 10);
        if (*v && !*end && (*v != '0' || !v[1]) && *v != '+' && *v != ' ')
            jv = json_integer(n);
        else
            jv = json_string(v);
        if (!jv || json_object_set_new(e, seg_key_name(g, k), jv)) {
            json_decref(e);
            return NULL;
        }
    }
    return e;
}

/* Walks the working tree to segment `upto` (exclusive), making every node
 * on the way private.  Returns the private object holding segment upto, or
 * NULL with *rc set. */
static json_t *walk_mut(yb_store *s, const yb_spath *p, unsigned upto, int policy, int *rc)
{
    json_t *cur = s->work;
    int oom = 0;
    for (unsigned i = 0; i < upto; i++) {
        const yb_spath_seg *g = &p->seg[i];
        json_t *c = cow_member(cur, g->name, &oom);
        if (oom)
            goto nomem;
        if (!c) {
            if (policy == WALK_NONE || (g->nkeys && policy != WALK_ALL)) {
                *rc = fail(s, -ENOENT, g->nkeys ? "no such list entry" : "no such data node");
                return NULL;
            }
            c = g->nkeys ? json_array() : json_object();
            if (!c || json_object_set_new(cur, g->name, c))
                goto nomem;
        }
        if (g->nkeys) {
            if (!json_is_array(c)) {
                *rc = fail(s, -EINVAL, "keys given for a node that is not a list");
                return NULL;
            }
            long idx = find_entry(c, g);
            if (idx < 0) {
                if (policy != WALK_ALL) {
                    *rc = fail(s, -ENOENT, "no such list entry");
                    return NULL;
                }
                json_t *e = entry_from_keys(g);
                if (!e || json_array_append_new(c, e))
                    goto nomem;
                idx = (long)json_array_size(c) - 1;
            }
            c = cow_index(c, (size_t)idx, &oom);
            if (oom)
                goto nomem;
        } else if (!json_is_object(c)) {
            *rc = fail(s, -EINVAL, json_is_array(c) ? "list entry keys missing"
                                                    : "path continues below a leaf");
            return NULL;
        }
        cur = c;
    }
    return cur;
nomem:
    *rc = fail(s, -ENOMEM, "out of memory");
    return NULL;
}

/* Checks that list entry v agrees with the keys of g and fills in missing
 * key members.  Returns 0 or -EINVAL / -ENOMEM. */
static int fix_entry_keys(yb_store *s, const yb_spath_seg *g, json_t *v)
{
    if (!json_is_object(v))
        return fail(s, -EINVAL, "a list entry must be a JSON object");
    for (unsigned k = 0; k < g->nkeys; k++) {
        const char *kn = seg_key_name(g, k);
        const json_t *have = json_object_get(v, kn);
        if (have) {
            if (!key_equal(have, g->key_val[k]))
                return fail(s, -EINVAL, "key in the body differs from the key in the path");
            continue;
        }
        json_t *e = entry_from_keys(g);
        if (!e)
            return fail(s, -ENOMEM, "out of memory");
        int rc = json_object_set(v, kn, json_object_get(e, kn));
        json_decref(e);
        if (rc)
            return fail(s, -ENOMEM, "out of memory");
    }
    return 0;
}

/* A value written at the datastore root must be {"acl": {...}}: the only
 * tree served.  Returns 0 with *acl set, or fail()'s -EINVAL. */
static int root_acl(yb_store *s, json_t *value, json_t **acl)
{
    if (!json_is_object(value))
        return fail(s, -EINVAL, "the datastore root must be an object");
    *acl = json_object_get(value, "acl");
    if (!json_is_object(*acl) || json_object_size(value) != 1)
        return fail(s, -EINVAL, "only openconfig-acl:acl is served");
    return 0;
}

int yb_store_replace(yb_store *s, const yb_spath *p, json_t *value, int *created)
{
    int rc = 0;
    if (created)
        *created = 0;
    if (!s->work) {
        rc = fail(s, -EINVAL, "no transaction");
        goto out;
    }
    if (p->n == 0) {
        json_t *acl;
        if ((rc = root_acl(s, value, &acl)) < 0)
            goto out;
        rc = json_object_set(s->work, "acl", acl) ? fail(s, -ENOMEM, "out of memory") : 0;
        goto out;
    }
    json_t *parent = walk_mut(s, p, p->n - 1, WALK_ALL, &rc);
    if (!parent)
        goto out;
    const yb_spath_seg *g = &p->seg[p->n - 1];
    if (g->nkeys == 0) {
        if (created)
            *created = json_object_get(parent, g->name) == NULL;
        if (json_object_set(parent, g->name, value))
            rc = fail(s, -ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = fix_entry_keys(s, g, value)))
        goto out;
    int oom = 0;
    json_t *arr = cow_member(parent, g->name, &oom);
    if (oom) {
        rc = fail(s, -ENOMEM, "out of memory");
        goto out;
    }
    if (!arr) {
        arr = json_array();
        if (!arr || json_object_set_new(parent, g->name, arr)) {
            rc = fail(s, -ENOMEM, "out of memory");
            goto out;
        }
    }
    if (!json_is_array(arr)) {
        rc = fail(s, -EINVAL, "keys given for a node that is not a list");
        goto out;
    }
    long idx = find_entry(arr, g);
    if (created)
        *created = idx < 0;
    if (idx < 0 ? json_array_append(arr, value) : json_array_set(arr, (size_t)idx, value))
        rc = fail(s, -ENOMEM, "out of memory");
out:
    json_decref(value);
    return rc;
}

static int merge_obj(yb_store *s, json_t *dst, json_t *src);

/* Merges keyed list src (array) into private array dst of list `name`. */
static int merge_list(yb_store *s, json_t *dst, const char *name, json_t *src)
{
    size_t i;
    json_t *e;
    json_array_foreach(src, i, e) {
        if (!json_is_object(e))
            return fail(s, -EINVAL, "a list entry must be a JSON object");
        long idx = find_same(dst, name, e);
        if (idx == -2)
            return fail(s, -EINVAL, "a list entry lacks one of its keys");
        if (idx < 0) {
            if (json_array_append(dst, e))
                return fail(s, -ENOMEM, "out of memory");
            continue;
        }
        int oom = 0;
        json_t *d = cow_index(dst, (size_t)idx, &oom);
        if (oom)
            return fail(s, -ENOMEM, "out of memory");
        int rc = merge_obj(s, d, e);
        if (rc)
            return rc;
    }
    return 0;
}

/* Merges object src into private object dst. */
static int merge_obj(yb_store *s, json_t *dst, json_t *src)
{
    const char *k;
    json_t *v;
    json_object_foreach(src, k, v) {
        json_t *d = json_object_get(dst, k);
        int oom = 0, rc;
        if (d && json_is_object(d) && json_is_object(v)) {
            d = cow_member(dst, k, &oom);
            if (oom)
                return fail(s, -ENOMEM, "out of memory");
            if ((rc = merge_obj(s, d, v)))
                return rc;
        } else if (d && json_is_array(d) && json_is_array(v) && yb_store_is_list(k)) {
            d = cow_member(dst, k, &oom);
            if (oom)
                return fail(s, -ENOMEM, "out of memory");
            if ((rc = merge_list(s, d, k, v)))
                return rc;
        } else {
            if (json_is_array(v) && yb_store_is_list(k)) {
                /* A new list: its entries must carry their keys too. */
                size_t i;
                json_t *e;
                json_array_foreach(v, i, e)
                    if (!json_is_object(e) || !has_keys(k, e))
                        return fail(s, -EINVAL, "a list entry lacks one of its keys");
            }
            if (json_object_set(dst, k, v))
                return fail(s, -ENOMEM, "out of memory");
        }
    }
    return 0;
}

int yb_store_merge(yb_store *s, const yb_spath *p, json_t *value, int must_exist)
{
    int rc = 0, oom = 0;
    if (!s->work) {
        rc = fail(s, -EINVAL, "no transaction");
        goto out;
    }
    if (p->n == 0) {
        json_t *acl;
        if ((rc = root_acl(s, value, &acl)) < 0)
            goto out;
        rc = merge_obj(s, s->work, value);
        goto out;
    }
    json_t *parent = walk_mut(s, p, p->n - 1, must_exist ? WALK_CONTAINERS : WALK_ALL, &rc);
    if (!parent)
        goto out;
    const yb_spath_seg *g = &p->seg[p->n - 1];
    json_t *cur = cow_member(parent, g->name, &oom);
    if (oom) {
        rc = fail(s, -ENOMEM, "out of memory");
        goto out;
    }
    if (g->nkeys) {
        if ((rc = fix_entry_keys(s, g, value)))
            goto out;
        if (cur && !json_is_array(cur)) {
            rc = fail(s, -EINVAL, "keys given for a node that is not a list");
            goto out;
        }
        long idx = cur ? find_entry(cur, g) : -1;
        if (idx < 0) {
            if (must_exist) {
                rc = fail(s, -ENOENT, "no such list entry");
                goto out;
            }
            json_incref(value);
            rc = yb_store_replace(s, p, value, NULL);
            goto out;
        }
        json_t *e = cow_index(cur, (size_t)idx, &oom);
        rc = oom ? fail(s, -ENOMEM, "out of memory") : merge_obj(s, e, value);
        goto out;
    }
    if (!cur) {
        if (must_exist && !json_is_object(value) &&
            !(json_is_array(value) && yb_store_is_list(g->name))) {
            rc = fail(s, -ENOENT, "no such data node");
            goto out;
        }
        if (json_is_array(value) && yb_store_is_list(g->name)) {
            json_t *a = json_array();
            if (!a || json_object_set_new(parent, g->name, a)) {
                rc = fail(s, -ENOMEM, "out of memory");
                goto out;
            }
            rc = merge_list(s, a, g->name, value);
            goto out;
        }
        if (json_object_set(parent, g->name, value))
            rc = fail(s, -ENOMEM, "out of memory");
        goto out;
    }
    if (json_is_object(cur) && json_is_object(value))
        rc = merge_obj(s, cur, value);
    else if (json_is_array(cur) && json_is_array(value) && yb_store_is_list(g->name))
        rc = merge_list(s, cur, g->name, value);
    else if (json_is_object(cur) != json_is_object(value))
        rc = fail(s, -EINVAL, "value does not match the kind of the target node");
    else if (json_object_set(parent, g->name, value))
        rc = fail(s, -ENOMEM, "out of memory");
out:
    json_decref(value);
    return rc;
}

int yb_store_create(yb_store *s, const yb_spath *p, const char *child, json_t *value)
{
    int rc = 0, oom = 0;
    if (!s->work) {
        rc = fail(s, -EINVAL, "no transaction");
        goto out;
    }
    json_t *node = walk_mut(s, p, p->n, WALK_CONTAINERS, &rc);
    if (!node)
        goto out;
    if (!json_is_object(node)) {
        rc = fail(s, -EINVAL, "cannot create a child of a leaf");
        goto out;
    }
    if (yb_store_is_list(child) || json_is_array(value)) {
        json_t *arr = cow_member(node, child, &oom);
        if (oom) {
            rc = fail(s, -ENOMEM, "out of memory");
            goto out;
        }
        if (!arr) {
            arr = json_array();
            if (!arr || json_object_set_new(node, child, arr)) {
                rc = fail(s, -ENOMEM, "out of memory");
                goto out;
            }
        }
        if (!json_is_array(arr)) {
            rc = fail(s, -EINVAL, "the target is not a list");
            goto out;
        }
        if (json_is_object(value)) {
            json_t *a = json_array();
            if (!a || json_array_append(a, value)) {
                json_decref(a);
                rc = fail(s, -ENOMEM, "out of memory");
                goto out;
            }
            json_decref(value);
            value = a;
        }
        if (json_array_size(value) == 0) {
            rc = fail(s, -EINVAL, "no list entry to create");
            goto out;
        }
        size_t i;
        json_t *e;
        json_array_foreach(value, i, e) {
            if (!json_is_object(e)) {
                rc = fail(s, -EINVAL, "a list entry must be a JSON object");
                goto out;
            }
            long idx = find_same(arr, child, e);
            if (idx == -2) {
                rc = fail(s, -EINVAL, "a list entry lacks one of its keys");
                goto out;
            }
            if (idx >= 0) {
                rc = fail(s, -EEXIST, "the list entry already exists");
                goto out;
            }
            if (json_array_append(arr, e)) {
                rc = fail(s, -ENOMEM, "out of memory");
                goto out;
            }
        }
        goto out;
    }
    if (json_object_get(node, child)) {
        rc = fail(s, -EEXIST, "the data node already exists");
        goto out;
    }
    if (json_object_set(node, child, value))
        rc = fail(s, -ENOMEM, "out of memory");
out:
    json_decref(value);
    return rc;
}

int yb_store_delete(yb_store *s, const yb_spath *p)
{
    int rc = 0, oom = 0;
    if (!s->work)
        return fail(s, -EINVAL, "no transaction");
    if (p->n == 0 || (p->n == 1 && !strcmp(p->seg[0].name, "acl") && !p->seg[0].nkeys)) {
        json_t *empty = json_object();
        if (!empty || json_object_set_new(s->work, "acl", empty))
            return fail(s, -ENOMEM, "out of memory");
        return 0;
    }
    json_t *parent = walk_mut(s, p, p->n - 1, WALK_NONE, &rc);
    if (!parent)
        return rc;
    const yb_spath_seg *g = &p->seg[p->n - 1];
    if (!g->nkeys) {
        if (json_object_del(parent, g->name))
            return fail(s, -ENOENT, "no such data node");
        return 0;
    }
    json_t *arr = cow_member(parent, g->name, &oom);
    if (oom)
        return fail(s, -ENOMEM, "out of memory");
    if (!arr)
        return fail(s, -ENOENT, "no such list entry");
    if (!json_is_array(arr))
        return fail(s, -EINVAL, "keys given for a node that is not a list");
    long idx = find_entry(arr, g);
    if (idx < 0)
        return fail(s, -ENOENT, "no such list entry");
    json_array_remove(arr, (size_t)idx);
    /* RFC 7951 encodes no empty lists. */
    if (json_array_size(arr) == 0)
        json_object_del(parent, g->name);
    return 0;
}

int yb_store_foreach_set(yb_store *s, const yb_spath *p,
                         void (*fn)(void *ud, const json_t *set, const char *name,
                                    const char *type),
                         void *ud)
{
    static const char *const LEVELS[] = {"acl", "acl-sets", "acl-set"};
    unsigned keyed = 0;
    if (p->n > 3)
        return -ENOTSUP;
    for (unsigned i = 0; i < p->n; i++) {
        if (strcmp(p->seg[i].name, LEVELS[i]))
            return -ENOTSUP;
        if (p->seg[i].nkeys) {
            if (i != 2)
                return -ENOTSUP;
            keyed = 1;
        }
    }
    const json_t *sets = json_object_get(json_object_get(json_object_get(s->root, "acl"),
                                                          "acl-sets"),
                                         "acl-set");
    if (!json_is_array(sets))
        return 0;
    int n = 0;
    size_t i;
    json_t *e;
    json_array_foreach(sets, i, e) {
        if (!json_is_object(e))
            continue;
        if (keyed) {
            unsigned k;
            const yb_spath_seg *g = &p->seg[2];
            for (k = 0; k < g->nkeys; k++) {
                const json_t *v = json_object_get(e, seg_key_name(g, k));
                if (!v || !key_equal(v, g->key_val[k]))
                    break;
            }
            if (k < g->nkeys)
                continue;
        }
        const char *name = json_string_value(json_object_get(e, "name"));
        const char *type = json_string_value(json_object_get(e, "type"));
        size_t tl = type ? strlen(type) : 0;
        fn(ud, e, name ? name : "", type ? strip_prefix(type, &tl) : "");
        n++;
    }
    return n;
}
