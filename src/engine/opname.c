/* Operation names (see opname.h). */
#include "config.h"
#include "engine/opname.h"
#include "gnmi/gnmi_msg.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A bounded writer: once full, it marks the end with "..." and takes no
 * more. */
typedef struct {
    char *buf;
    size_t cap, len;
    int full;
} wbuf;

static void put(wbuf *w, char c)
{
    if (w->full)
        return;
    if (w->len + 1 >= w->cap) {
        w->full = 1;
        size_t at = w->cap > 4 ? w->cap - 4 : 0;
        memcpy(w->buf + at, "...", 3);
        w->len = at + 3;
        w->buf[w->len] = '\0';
        return;
    }
    w->buf[w->len++] = (c > 0x20 && c < 0x7f) ? c : '?';
    w->buf[w->len] = '\0';
}

static void puts_(wbuf *w, const char *s)
{
    while (*s)
        put(w, *s++);
}

/* Past a template placeholder "{{...}}" starting at c (its '/' and ','
 * are not the path's), or c + 1. */
static const char *skip_ph(const char *c, const char *end)
{
    if (end - c >= 4 && c[0] == '{' && c[1] == '{')
        for (const char *q = c + 2; q + 1 < end; q++)
            if (q[0] == '}' && q[1] == '}')
                return q + 2;
    return c + 1;
}

/* The end of the path segment starting at p: the next '/' outside
 * placeholders, or end. */
static const char *seg_end_of(const char *p, const char *end)
{
    while (p < end && *p != '/')
        p = skip_ph(p, end);
    return p < end ? p : end;
}

size_t yb_op_path_template(const char *path, char *out, size_t cap)
{
    wbuf w = {out, cap, 0, 0};
    out[0] = '\0';
    const char *end = path + strcspn(path, "?#");
    const char *p = path;
    while (p < end && !w.full) {
        const char *seg_end = seg_end_of(p, end);
        const char *eq = memchr(p, '=', (size_t)(seg_end - p));
        if (!eq)
            eq = seg_end;
        for (const char *c = p; c < eq; c++)
            put(&w, *c);
        if (eq < seg_end) { /* a list entry: keys become {1},{2},... */
            unsigned k = 1;
            char ph[16];
            put(&w, '=');
            snprintf(ph, sizeof ph, "{%u}", k);
            puts_(&w, ph);
            for (const char *c = eq + 1; c < seg_end && !w.full; c = skip_ph(c, seg_end))
                if (*c == ',') {
                    snprintf(ph, sizeof ph, ",{%u}", ++k);
                    puts_(&w, ph);
                }
        }
        if (seg_end < end)
            put(&w, '/');
        p = seg_end + 1;
    }
    return w.len;
}

/* The kind a SetRequest in a gRPC body carries alone: its top-level
 * fields only (a flat walk, no recursion into hostile nesting).
 * Returns "update", "replace", "delete", "union_replace", or NULL (none,
 * several, compressed or malformed). */
static const char *set_kind(const uint8_t *body, size_t len)
{
    static const char *const kinds[7] = {NULL, NULL, "delete", "replace", "update", NULL,
                                         "union_replace"};
    if (len < 5 || body[0] != 0)
        return NULL;
    uint64_t mlen = (uint64_t)body[1] << 24 | (uint64_t)body[2] << 16 | (uint64_t)body[3] << 8 |
                    body[4];
    if (mlen > len - 5)
        return NULL;
    const uint8_t *m = body + 5;
    size_t off = 0;
    const char *kind = NULL;
    while (off < mlen) {
        uint64_t tag, n;
        if (yb_wire_varint(m, mlen, &off, &tag) < 0)
            return NULL;
        switch (tag & 7) {
        case 0: if (yb_wire_varint(m, mlen, &off, &n) < 0) return NULL; break;
        case 1: n = 8; goto skip;
        case 5: n = 4; goto skip;
        case 2:
            if (yb_wire_varint(m, mlen, &off, &n) < 0)
                return NULL;
        skip:
            if (n > mlen - off)
                return NULL;
            off += n;
            break;
        default: return NULL;
        }
        uint64_t field = tag >> 3;
        const char *k = field < 7 ? kinds[field] : NULL;
        if (!k)
            continue;
        if (kind && kind != k)
            return NULL; /* more than one kind */
        kind = k;
    }
    return kind;
}

#define GNMI_PREFIX "/gnmi.gNMI/"

size_t yb_op_name(const yb_request *r, char *out, size_t cap)
{
    static const char *const rpcs[] = {"Capabilities", "Get", "Set", "Subscribe"};
    if (yb_proto_is_h2(r->protocol) && !strncmp(r->path, GNMI_PREFIX, strlen(GNMI_PREFIX))) {
        const char *rpc = r->path + strlen(GNMI_PREFIX);
        for (size_t i = 0; i < sizeof rpcs / sizeof rpcs[0]; i++) {
            if (strcmp(rpc, rpcs[i]))
                continue;
            const char *k = i == 2 ? set_kind(r->body, r->body_len) : NULL;
            snprintf(out, cap, "%s%s%s", rpcs[i], k ? "." : "", k ? k : "");
            return strlen(out);
        }
    }
    wbuf w = {out, cap, 0, 0};
    out[0] = '\0';
    puts_(&w, r->method);
    if (w.full || cap - w.len < 5)
        return w.len;
    out[w.len++] = ' ';
    out[w.len] = '\0';
    return w.len + yb_op_path_template(r->path, out + w.len, cap - w.len);
}
