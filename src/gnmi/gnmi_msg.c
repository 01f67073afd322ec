#include "config.h"
#include "gnmi/gnmi_msg.h"
#include "util/varint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void yb_gnmi_path_free(Gnmi__Path *p)
{
    /* Every part of a parsed Path is malloc'd the way protobuf-c's unpack
     * allocates, so its own free walks it (NULL names of a half-built
     * element included). */
    gnmi__path__free_unpacked(p, NULL);
}

static char *dupn(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

/* Reads one path-string token at *sp up to an unescaped character of stop
 * (or the end), undoing '\' escapes (a '\' takes the next character as it
 * is, as ygot's reference implementation does).  Returns a malloc'd copy
 * and advances *sp to the stop character; NULL with *rc = -EINVAL for a
 * dangling '\' or a stop-less end when need_stop, -ENOMEM. */
static char *read_token(const char **sp, const char *stop, int need_stop, int *rc)
{
    const char *s = *sp;
    size_t n = 0, i = 0;
    while (s[i] && !strchr(stop, s[i])) {
        if (s[i] == '\\' && !s[++i]) {
            *rc = -EINVAL;
            return NULL;
        }
        i++;
        n++;
    }
    if (need_stop && !s[i]) {
        *rc = -EINVAL;
        return NULL;
    }
    char *d = malloc(n + 1);
    if (!d) {
        *rc = -ENOMEM;
        return NULL;
    }
    for (size_t j = 0, k = 0; j < i; j++, k++) {
        if (s[j] == '\\')
            j++;
        d[k] = s[j];
    }
    d[n] = 0;
    *sp = s + i;
    return d;
}

/* Parses "[k=v]" groups at *sp into e.  Returns 0 or -EINVAL/-ENOMEM. */
static int parse_keys(const char **sp, Gnmi__PathElem *e)
{
    const char *s = *sp;
    int rc = 0;
    while (*s == '[') {
        s++;
        Gnmi__PathElem__KeyEntry **nk = realloc(e->key, (e->n_key + 1) * sizeof *nk);
        if (!nk)
            return -ENOMEM;
        e->key = nk;
        Gnmi__PathElem__KeyEntry *ke = malloc(sizeof *ke);
        if (!ke)
            return -ENOMEM;
        gnmi__path_elem__key_entry__init(ke);
        ke->key = ke->value = NULL;
        nk[e->n_key++] = ke;
        /* A key name ends at the first unescaped '='; an unescaped ']'
         * before it is a key without a value. */
        if (!(ke->key = read_token(&s, "=]", 1, &rc)))
            return rc;
        if (*s != '=' || !*ke->key)
            return -EINVAL;
        s++;
        if (!(ke->value = read_token(&s, "]", 1, &rc)))
            return rc;
        s++;
    }
    *sp = s;
    return 0;
}

/* Splits a leading "origin:" off s as gnmic does: s does not start with
 * '/', and its first ':' comes before any '/' or '[' and is followed by
 * '/' or the end ("openconfig-acl:acl/..." has no origin).  Returns the
 * origin's length (0 = none). */
static size_t origin_len(const char *s)
{
    if (*s == '/')
        return 0;
    size_t n = strcspn(s, ":/[\\");
    if (s[n] != ':' || (s[n + 1] && s[n + 1] != '/'))
        return 0;
    return n;
}

int yb_gnmi_path_parse(const char *s, Gnmi__Path **out)
{
    Gnmi__Path *p = malloc(sizeof *p);
    if (!p)
        return -ENOMEM;
    gnmi__path__init(p);
    int rc = 0;
    size_t on = origin_len(s);
    if (on) {
        if (!(p->origin = dupn(s, on))) {
            yb_gnmi_path_free(p);
            return -ENOMEM;
        }
        s += on + 1;
    }
    if (*s == '/')
        s++;
    while (*s && !rc) {
        Gnmi__PathElem **ne = realloc(p->elem, (p->n_elem + 1) * sizeof *ne);
        Gnmi__PathElem *e = ne ? malloc(sizeof *e) : NULL;
        if (ne)
            p->elem = ne;
        if (!e) {
            rc = -ENOMEM;
            break;
        }
        gnmi__path_elem__init(e);
        e->name = NULL;
        p->elem[p->n_elem++] = e;
        if (!(e->name = read_token(&s, "/[", 0, &rc)))
            break;
        if (!*e->name) {
            rc = -EINVAL;
            break;
        }
        rc = parse_keys(&s, e);
        if (!rc && *s == '/')
            s++;
        else if (!rc && *s)
            rc = -EINVAL;
    }
    if (rc) {
        yb_gnmi_path_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

/* A growing text buffer for formatting; on ENOMEM it stops growing and
 * only counts. */
typedef struct {
    char *b;
    size_t n, cap;
    int oom;
} tbuf;

static void put(tbuf *t, const char *s, size_t n, const char *escape)
{
    for (size_t i = 0; i < n; i++) {
        int esc = escape && strchr(escape, s[i]) != NULL;
        if (t->n + 3 > t->cap && !t->oom) {
            size_t nc = t->cap ? 2 * t->cap : 128;
            char *nb = realloc(t->b, nc);
            if (nb) {
                t->b = nb;
                t->cap = nc;
            } else {
                t->oom = 1;
            }
        }
        if (!t->oom) {
            if (esc)
                t->b[t->n] = '\\';
            t->b[t->n + (size_t)esc] = s[i];
        }
        t->n += 1 + (size_t)esc;
    }
}

/* Characters escaped with '\' in names, key names and key values: those
 * that would otherwise end the token, and '\' itself. */
#define ESC_NAME "\\/["
#define ESC_KEY "\\=]"
#define ESC_VALUE "\\]"

char *yb_gnmi_path_to_text(const Gnmi__Path *p, int with_origin)
{
    tbuf t = {0};
    if (with_origin && p->origin && *p->origin) {
        put(&t, p->origin, strlen(p->origin), NULL);
        put(&t, ":", 1, NULL);
    }
    if (p->n_elem == 0)
        put(&t, "/", 1, NULL);
    for (size_t i = 0; i < p->n_elem; i++) {
        const Gnmi__PathElem *e = p->elem[i];
        put(&t, "/", 1, NULL);
        put(&t, e->name ? e->name : "", e->name ? strlen(e->name) : 0, ESC_NAME);
        for (size_t k = 0; k < e->n_key; k++) {
            const char *kk = e->key[k]->key ? e->key[k]->key : "";
            const char *kv = e->key[k]->value ? e->key[k]->value : "";
            put(&t, "[", 1, NULL);
            put(&t, kk, strlen(kk), ESC_KEY);
            put(&t, "=", 1, NULL);
            put(&t, kv, strlen(kv), ESC_VALUE);
            put(&t, "]", 1, NULL);
        }
    }
    put(&t, "", 1, NULL); /* the terminating NUL */
    if (t.oom) {
        free(t.b);
        return NULL;
    }
    return t.b;
}

int yb_gnmi_path_text_exact(const Gnmi__Path *p)
{
    if ((p->target && *p->target) || p->n_element || p->base.n_unknown_fields)
        return 0;
    if (p->origin && p->origin[strcspn(p->origin, ":/[\\")])
        return 0; /* "origin:" would not read back as this origin */
    for (size_t i = 0; i < p->n_elem; i++) {
        const Gnmi__PathElem *e = p->elem[i];
        if (!e->name || !*e->name || e->base.n_unknown_fields)
            return 0;
        for (size_t k = 0; k < e->n_key; k++)
            if (!e->key[k]->key || !*e->key[k]->key || e->key[k]->base.n_unknown_fields)
                return 0;
    }
    return 1;
}

size_t yb_gnmi_path_format(const Gnmi__Path *p, char *buf, size_t cap)
{
    char *s = yb_gnmi_path_to_text(p, 1);
    size_t n = s ? strlen(s) : 0;
    if (cap) {
        size_t c = n < cap - 1 ? n : cap - 1;
        if (s)
            memcpy(buf, s, c);
        buf[c] = 0;
    }
    free(s);
    return n;
}

int yb_wire_varint(const uint8_t *b, size_t len, size_t *off, uint64_t *v)
{
    *v = 0;
    for (unsigned shift = 0; shift < 70 && *off < len; shift += 7) {
        uint8_t c = b[(*off)++];
        *v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return 0;
    }
    return -1;
}

/* Walks the wire bytes b[0..len) of a message of type d, nesting at most
 * max deep; with count, counts the top-level length-delimited fields
 * number field (another wire type for it is malformed).  Returns 0 or -1. */
static int wire_walk(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t len,
                     int depth, int max, uint64_t field, size_t *count)
{
    if (depth > max)
        return -1;
    size_t off = 0;
    while (off < len) {
        uint64_t tag, n;
        if (yb_wire_varint(b, len, &off, &tag))
            return -1;
        if (count && tag >> 3 == field) {
            if ((tag & 7) != 2)
                return -1;
            (*count)++;
        }
        switch (tag & 7) {
        case 0:
            if (yb_wire_varint(b, len, &off, &n))
                return -1;
            break;
        case 1:
        case 5: {
            size_t w = (tag & 7) == 1 ? 8 : 4;
            if (len - off < w)
                return -1;
            off += w;
            break;
        }
        case 2: {
            if (yb_wire_varint(b, len, &off, &n) || n > len - off)
                return -1;
            const ProtobufCFieldDescriptor *f =
                d && tag >> 3 <= UINT32_MAX
                    ? protobuf_c_message_descriptor_get_field(d, (unsigned)(tag >> 3))
                    : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
                wire_walk(f->descriptor, b + off, (size_t)n, depth + 1, max, 0, NULL))
                return -1;
            off += (size_t)n;
            break;
        }
        default: return -1; /* groups and invalid wire types */
        }
    }
    return 0;
}

int yb_gnmi_wire_depth_ok(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len,
                          int max_depth)
{
    return wire_walk(d, buf, len, 1, max_depth, 0, NULL);
}

int yb_gnmi_wire_count(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len,
                       const char *field, size_t *n)
{
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(d, field);
    *n = 0;
    if (!f)
        return -1;
    return yb_gnmi_wire_count_id(d, buf, len, f->id, n);
}

int yb_gnmi_wire_count_id(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len,
                          uint32_t field, size_t *n)
{
    *n = 0;
    if (!field || !protobuf_c_message_descriptor_get_field(d, field))
        return -1;
    return wire_walk(d, buf, len, 1, YB_GNMI_MAX_DEPTH, field, n);
}

int yb_grpc_append(const ProtobufCMessage *m, uint8_t **buf, size_t *len)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    if (n > UINT32_MAX)
        return -EFBIG;
    /* + 1: an empty first message still gets a buffer of its own */
    uint8_t *b = realloc(*buf, *len + YB_GRPC_PREFIX + n + 1);
    if (!b)
        return -ENOMEM;
    uint8_t *p = b + *len;
    p[0] = 0;
    p[1] = (uint8_t)(n >> 24);
    p[2] = (uint8_t)(n >> 16);
    p[3] = (uint8_t)(n >> 8);
    p[4] = (uint8_t)n;
    protobuf_c_message_pack(m, p + YB_GRPC_PREFIX);
    *buf = b;
    *len += YB_GRPC_PREFIX + n;
    return 0;
}

int yb_grpc_frame(const ProtobufCMessage *m, uint8_t **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    return yb_grpc_append(m, out, len);
}

int yb_gnmi_set_json_head(int replace, const Gnmi__Path *path, size_t json_len, uint8_t **out,
                          size_t *len)
{
    /* field numbers of gnmi.proto: SetRequest.replace 3, .update 4;
     * Update.path 1, .val 3; TypedValue.json_ietf_val 11 -- each
     * length-delimited (wire type 2), packed in field order, so the
     * value's bytes come last */
    enum { SET_REPLACE = 3 << 3 | 2, SET_UPDATE = 4 << 3 | 2, UPD_PATH = 1 << 3 | 2,
           UPD_VAL = 3 << 3 | 2, TV_JSON_IETF = 11 << 3 | 2 };
    *out = NULL;
    *len = 0;
    size_t pl = protobuf_c_message_get_packed_size(&path->base);
    uint64_t tv = 1 + yb_varint_len(json_len) + (uint64_t)json_len;
    uint64_t upd = 1 + yb_varint_len(pl) + pl + 1 + yb_varint_len(tv) + tv;
    uint64_t msg = 1 + yb_varint_len(upd) + upd;
    if (msg > UINT32_MAX)
        return -EFBIG;
    size_t n = YB_GRPC_PREFIX + (size_t)(msg - json_len);
    uint8_t *b = malloc(n), *p = b;
    if (!b)
        return -ENOMEM;
    *p++ = 0;
    *p++ = (uint8_t)(msg >> 24);
    *p++ = (uint8_t)(msg >> 16);
    *p++ = (uint8_t)(msg >> 8);
    *p++ = (uint8_t)msg;
    *p++ = replace ? SET_REPLACE : SET_UPDATE;
    p += yb_varint_put(p, upd);
    *p++ = UPD_PATH;
    p += yb_varint_put(p, pl);
    p += protobuf_c_message_pack(&path->base, p);
    *p++ = UPD_VAL;
    p += yb_varint_put(p, tv);
    *p++ = TV_JSON_IETF;
    p += yb_varint_put(p, json_len);
    if ((size_t)(p - b) != n) { /* (cannot happen) */
        free(b);
        return -EFBIG;
    }
    *out = b;
    *len = n;
    return 0;
}

int yb_grpc_next(const uint8_t *buf, size_t len, size_t *off, const uint8_t **msg,
                 size_t *msglen, size_t max)
{
    size_t o = *off;
    if (o == len)
        return 0;
    if (o > len || len - o < YB_GRPC_PREFIX || buf[o] != 0)
        return -1;
    size_t n = ((size_t)buf[o + 1] << 24) | ((size_t)buf[o + 2] << 16) |
               ((size_t)buf[o + 3] << 8) | buf[o + 4];
    if (n > max || len - o - YB_GRPC_PREFIX < n)
        return -1;
    *msg = buf + o + YB_GRPC_PREFIX;
    *msglen = n;
    *off = o + YB_GRPC_PREFIX + n;
    return 1;
}

ProtobufCMessage *yb_gnmi_unpack(const ProtobufCMessageDescriptor *d, const uint8_t *buf,
                                 size_t len)
{
    if (yb_gnmi_wire_depth_ok(d, buf, len, YB_GNMI_MAX_DEPTH) < 0)
        return NULL;
    return protobuf_c_message_unpack(d, NULL, len, buf);
}
