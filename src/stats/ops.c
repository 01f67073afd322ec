/* Per-operation figures (see ops.h). */
#include "config.h"
#include "stats/ops.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t yb_ops_cap(const yb_ops *t)
{
    return t->cap ? t->cap : YB_OPS_DEFAULT;
}

static yb_op_stats *row(yb_ops *t, uint32_t idx)
{
    return idx < t->n ? &t->op[idx] : &t->other;
}

uint32_t yb_ops_index(yb_ops *t, const char *name)
{
    size_t cap = yb_ops_cap(t);
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->op[i].name, name))
            return (uint32_t)i;
    if (t->n >= cap)
        goto other;
    if (t->n == t->alloc) {
        /* grows with the rows, so the cap may change; from one row, since
         * a fleet keeps a table per target, most with one operation */
        size_t na = t->alloc ? t->alloc * 2 : 1;
        yb_op_stats *g = realloc(t->op, (na < cap ? na : cap) * sizeof *g);
        if (!g)
            goto other;
        t->op = g;
        t->alloc = na < cap ? na : cap;
    }
    yb_op_stats *o = &t->op[t->n];
    memset(o, 0, sizeof *o);
    if (!(o->name = strndup(name, YB_OP_NAME_MAX - 1)))
        goto other;
    if (!(o->e2e = yb_hdr_new_default())) {
        free(o->name);
        goto other;
    }
    return (uint32_t)t->n++;
other:
    return (uint32_t)cap;
}

void yb_ops_record(yb_ops *t, uint32_t idx, int ok, uint64_t bytes, int64_t e2e_us)
{
    if (idx == YB_OP_NONE)
        return;
    yb_op_stats *o = row(t, idx);
    o->count++;
    o->bytes += bytes;
    if (!ok) {
        o->errors++;
        return;
    }
    o->ok++;
    if (e2e_us < 0)
        return;
    if (!o->e2e && !(o->e2e = yb_hdr_new_default()))
        return;
    yb_hdr_record(o->e2e, e2e_us);
}

static int add_row(yb_op_stats *d, const yb_op_stats *s)
{
    d->count += s->count;
    d->ok += s->ok;
    d->errors += s->errors;
    d->bytes += s->bytes;
    if (!s->e2e)
        return 0;
    if (!d->e2e && !(d->e2e = yb_hdr_new_default()))
        return -ENOMEM;
    return yb_hdr_add(d->e2e, s->e2e) < 0 ? -ENOMEM : 0;
}

int yb_ops_merge(yb_ops *dst, const yb_ops *src)
{
    /* a recorder made for the merge takes the workers' cap; else the larger */
    if (!dst->cap || yb_ops_cap(src) > yb_ops_cap(dst))
        dst->cap = src->cap;
    for (size_t i = 0; i < src->n; i++) {
        int rc = add_row(row(dst, yb_ops_index(dst, src->op[i].name)), &src->op[i]);
        if (rc < 0)
            return rc;
    }
    return add_row(&dst->other, &src->other);
}

void yb_ops_free(yb_ops *t)
{
    for (size_t i = 0; i < t->n; i++) {
        yb_hdr_free(t->op[i].e2e);
        free(t->op[i].name);
    }
    free(t->op);
    yb_hdr_free(t->other.e2e);
    memset(t, 0, sizeof *t);
}
