#include "config.h"
#include "gnmi/gnmi_json.h"
#include "gnmi/gnmi_msg.h"
#include "util/util.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deeper JSON or protobuf nesting is refused: the deepest real gNMI
 * request (a leaf-list of leaf-lists in a TypedValue) is far shallower, and
 * recursion stays bounded on hostile input. */
#define MAX_DEPTH 64

static const struct {
    const char *path;
    const ProtobufCMessageDescriptor *type;
} RPCS[] = {
    {"/gnmi.gNMI/Set", &gnmi__set_request__descriptor},
    {"/gnmi.gNMI/Get", &gnmi__get_request__descriptor},
    {"/gnmi.gNMI/Subscribe", &gnmi__subscribe_request__descriptor},
    {"/gnmi.gNMI/Capabilities", &gnmi__capability_request__descriptor},
};

const ProtobufCMessageDescriptor *yb_gnmi_request_type(const char *rpc_path)
{
    for (size_t i = 0; rpc_path && i < sizeof RPCS / sizeof RPCS[0]; i++)
        if (!strcmp(rpc_path, RPCS[i].path))
            return RPCS[i].type;
    return NULL;
}

/* ---- shared ------------------------------------------------------------- */

/* Bytes of one element of a repeated field of type t (protobuf-c's layout). */
static size_t elem_size(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64: return 8;
    case PROTOBUF_C_TYPE_DOUBLE: return sizeof(double);
    case PROTOBUF_C_TYPE_FLOAT: return sizeof(float);
    case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING: return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE: return sizeof(ProtobufCMessage *);
    default: return 4; /* 32-bit integers and enums */
    }
}

/* How a json_val / json_ietf_val text was laid out, so that the inline
 * value is printed back byte for byte: "compact" (the default, what import
 * writes for a value without "json_format"), "spaced" (", " and ": " on
 * one line, Python's json.dumps default), "indentN" (newlines, N spaces per
 * level, as jansson, Python's indent=N and Go's MarshalIndent print). */
static int format_flags(const char *name, size_t *flags)
{
    uint64_t n;
    if (!strcmp(name, "compact"))
        *flags = JSON_COMPACT;
    else if (!strcmp(name, "spaced"))
        *flags = 0;
    else if (!strncmp(name, "indent", 6) && yb_parse_u64(name + 6, 1, 31, &n) == 0)
        *flags = JSON_INDENT(n);
    else
        return -1;
    *flags |= JSON_ENCODE_ANY;
    return 0;
}

/* ---- decoding: protobuf-c message -> JSON ------------------------------------ */

typedef struct {
    char *why;
    size_t whylen;
    int depth;
} dec;

static void whyf(dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void whyf(dec *d, const char *fmt, ...)
{
    if (d->why[0])
        return; /* keep the first (innermost) reason */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->why, d->whylen, fmt, ap);
    va_end(ap);
}

static json_t *msg_to_json(dec *d, const ProtobufCMessage *m);

static json_t *double_to_json(double v)
{
    if (isnan(v))
        return json_string("NaN");
    if (isinf(v))
        return json_string(v > 0 ? "Infinity" : "-Infinity");
    return json_real(v);
}

static json_t *u64_string(uint64_t v)
{
    char b[24];
    snprintf(b, sizeof b, "%" PRIu64, v);
    return json_string(b);
}

static json_t *i64_string(int64_t v)
{
    char b[24];
    snprintf(b, sizeof b, "%" PRId64, v);
    return json_string(b);
}

static json_t *bytes_to_json(const ProtobufCBinaryData *b)
{
    char *s = yb_base64_encode(b->data, b->len);
    json_t *j = s ? json_string(s) : NULL;
    free(s);
    return j;
}

static json_t *path_to_json(dec *d, const Gnmi__Path *p)
{
    if (yb_gnmi_path_text_exact(p)) {
        char *s = yb_gnmi_path_to_text(p, 1);
        json_t *j = s && yb_utf8_valid((const uint8_t *)s, strlen(s)) ? json_string(s) : NULL;
        free(s);
        if (!j)
            whyf(d, "a path that is not UTF-8 text");
        return j;
    }
    /* The object form keeps what the string form cannot say. */
    json_t *o = msg_to_json(d, &p->base);
    if (!o)
        return NULL;
    if (p->n_elem) {
        char *s = yb_gnmi_path_to_text(p, 0);
        json_t *j = s && yb_utf8_valid((const uint8_t *)s, strlen(s)) ? json_string(s) : NULL;
        free(s);
        if (!j || json_object_set_new(o, "elem", j)) {
            whyf(d, "a path that is not UTF-8 text");
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

/* A json_val / json_ietf_val as an inline value when it prints back to the
 * same bytes in one of the layouts format_flags knows; else as base64. */
static int json_bytes_to_json(json_t *o, const char *key, const ProtobufCBinaryData *b)
{
    json_error_t je;
    json_t *v = b->len ? json_loadb((const char *)b->data, b->len,
                                    JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je)
                       : NULL;
    if (v) {
        /* Compact first (a space may sit inside a string), then the layout
         * the text looks like. */
        char alt[32] = "spaced";
        const uint8_t *nl = memchr(b->data, '\n', b->len);
        if (nl) {
            size_t n = 0;
            while (nl + 1 + n < b->data + b->len && nl[1 + n] == ' ')
                n++;
            snprintf(alt, sizeof alt, "indent%zu", n);
        }
        const char *layouts[] = {"compact", alt};
        for (size_t i = 0; i < 2; i++) {
            size_t flags;
            char *s = format_flags(layouts[i], &flags) == 0 ? json_dumps(v, flags) : NULL;
            int same = s && strlen(s) == b->len && !memcmp(s, b->data, b->len);
            free(s);
            if (!same)
                continue;
            if (json_object_set_new(o, key, v))
                return -1;
            return i ? json_object_set_new(o, "json_format", json_string(layouts[i])) : 0;
        }
        json_decref(v);
    }
    char k64[32];
    snprintf(k64, sizeof k64, "%s_base64", key);
    return json_object_set_new(o, k64, bytes_to_json(b));
}

static json_t *typed_value_to_json(dec *d, const Gnmi__TypedValue *tv)
{
    if (tv->value_case != GNMI__TYPED_VALUE__VALUE_JSON_VAL &&
        tv->value_case != GNMI__TYPED_VALUE__VALUE_JSON_IETF_VAL)
        return msg_to_json(d, &tv->base);
    if (tv->base.n_unknown_fields) {
        whyf(d, "unknown field %" PRIu32 " in gnmi.TypedValue", tv->base.unknown_fields[0].tag);
        return NULL;
    }
    json_t *o = json_object();
    int ietf = tv->value_case == GNMI__TYPED_VALUE__VALUE_JSON_IETF_VAL;
    if (!o || json_bytes_to_json(o, ietf ? "json_ietf_val" : "json_val",
                                 ietf ? &tv->json_ietf_val : &tv->json_val)) {
        whyf(d, "out of memory");
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *value_to_json(dec *d, const ProtobufCFieldDescriptor *f, const void *p)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32: return json_integer(*(const int32_t *)p);
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32: return json_integer(*(const uint32_t *)p);
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64: return i64_string(*(const int64_t *)p);
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64: return u64_string(*(const uint64_t *)p);
    case PROTOBUF_C_TYPE_FLOAT: return double_to_json(*(const float *)p);
    case PROTOBUF_C_TYPE_DOUBLE: return double_to_json(*(const double *)p);
    case PROTOBUF_C_TYPE_BOOL: return json_boolean(*(const protobuf_c_boolean *)p);
    case PROTOBUF_C_TYPE_ENUM: {
        int v = *(const int *)p;
        const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(f->descriptor, v);
        return ev ? json_string(ev->name) : json_integer(v);
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)p;
        if (!s)
            s = "";
        if (!yb_utf8_valid((const uint8_t *)s, strlen(s))) {
            whyf(d, "field %s is not UTF-8 text", f->name);
            return NULL;
        }
        return json_string(s);
    }
    case PROTOBUF_C_TYPE_BYTES: return bytes_to_json(p);
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *m = *(ProtobufCMessage *const *)p;
        if (!m)
            return json_object();
        if (m->descriptor == &gnmi__path__descriptor)
            return path_to_json(d, (const Gnmi__Path *)m);
        if (m->descriptor == &gnmi__typed_value__descriptor)
            return typed_value_to_json(d, (const Gnmi__TypedValue *)m);
        return msg_to_json(d, m);
    }
    }
    whyf(d, "field %s has an unsupported type", f->name);
    return NULL;
}

/* 1 when a proto3 field without presence holds its zero value (protobuf-c
 * then leaves it out of the wire form, and so does the JSON form). */
static int zeroish(const ProtobufCFieldDescriptor *f, const void *p)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)p;
        return !s || !*s;
    }
    case PROTOBUF_C_TYPE_BYTES: return ((const ProtobufCBinaryData *)p)->len == 0;
    case PROTOBUF_C_TYPE_MESSAGE: return *(ProtobufCMessage *const *)p == NULL;
    case PROTOBUF_C_TYPE_FLOAT: return *(const float *)p == 0;
    case PROTOBUF_C_TYPE_DOUBLE: return *(const double *)p == 0;
    default: break;
    }
    static const uint8_t zero[8];
    return !memcmp(p, zero, elem_size(f->type));
}

static json_t *msg_to_json(dec *d, const ProtobufCMessage *m)
{
    const ProtobufCMessageDescriptor *md = m->descriptor;
    if (m->n_unknown_fields) {
        whyf(d, "unknown field %" PRIu32 " in %s", m->unknown_fields[0].tag, md->name);
        return NULL;
    }
    if (++d->depth > MAX_DEPTH) {
        whyf(d, "messages nested deeper than %d", MAX_DEPTH);
        return NULL;
    }
    json_t *o = json_object();
    if (!o)
        goto oom;
    for (unsigned i = 0; i < md->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &md->fields[i];
        const char *member = (const char *)m + f->offset;
        const char *qmember = (const char *)m + f->quantifier_offset;
        json_t *v;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)qmember;
            if (!n)
                continue;
            const char *arr = *(char *const *)member;
            if (!(v = json_array()))
                goto oom;
            for (size_t k = 0; k < n; k++) {
                json_t *e = value_to_json(d, f, arr + k * elem_size(f->type));
                if (!e || json_array_append_new(v, e)) {
                    json_decref(v);
                    goto fail;
                }
            }
        } else {
            if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
                if (*(const uint32_t *)qmember != f->id)
                    continue;
            } else if (zeroish(f, member)) {
                continue;
            }
            if (!(v = value_to_json(d, f, member)))
                goto fail;
        }
        if (json_object_set_new(o, f->name, v))
            goto oom;
    }
    d->depth--;
    return o;
oom:
    whyf(d, "out of memory");
fail:
    json_decref(o);
    return NULL;
}

/* ---- encoding: JSON -> protobuf-c message --------------------------------------- */

typedef struct {
    char where[512]; /* the key being read, e.g. "[0].SetRequest.update[1]" */
    size_t wn;
    char *err;
    size_t errlen;
    int depth;
} enc;

static void errf(enc *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void errf(enc *e, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (e->wn)
        snprintf(e->err, e->errlen, "%s: %s", e->where, msg);
    else
        snprintf(e->err, e->errlen, "%s", msg);
}

/* Appends a key (".name", or "[i]" when name is NULL) to where; returns
 * the length to restore. */
static size_t push(enc *e, const char *name, size_t i)
{
    size_t old = e->wn;
    int k = name ? snprintf(e->where + e->wn, sizeof e->where - e->wn, "%s%s",
                            e->wn ? "." : "", name)
                 : snprintf(e->where + e->wn, sizeof e->where - e->wn, "[%zu]", i);
    if (k > 0)
        e->wn += (size_t)k;
    if (e->wn >= sizeof e->where)
        e->wn = sizeof e->where - 1;
    return old;
}

static void pop(enc *e, size_t old)
{
    e->wn = old;
    e->where[old] = 0;
}

static int json_to_msg(enc *e, const ProtobufCMessageDescriptor *d, const json_t *j,
                       ProtobufCMessage **out);

static char *dup_json_string(enc *e, const json_t *j)
{
    if (!json_is_string(j) || strlen(json_string_value(j)) != json_string_length(j)) {
        errf(e, "must be a string without NUL");
        return NULL;
    }
    char *s = strdup(json_string_value(j));
    if (!s)
        errf(e, "out of memory");
    return s;
}

/* An integer in [min, max] from a JSON integer or a decimal string (the
 * proto3 JSON mapping writes 64-bit integers as strings). */
static int get_int(enc *e, const json_t *j, int64_t min, uint64_t max, int64_t *sv, uint64_t *uv)
{
    uint64_t mag;
    int neg = 0;
    if (json_is_integer(j)) {
        json_int_t v = json_integer_value(j);
        neg = v < 0;
        mag = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    } else if (json_is_string(j)) {
        const char *s = json_string_value(j);
        neg = *s == '-';
        if (yb_parse_u64(s + neg, 0, UINT64_MAX, &mag) < 0 ||
            strlen(s) != json_string_length(j))
            goto bad;
    } else {
        goto bad;
    }
    if (neg ? mag > (uint64_t)0 - (uint64_t)min : mag > max)
        goto bad;
    if (neg)
        *sv = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    else
        *sv = mag > (uint64_t)INT64_MAX ? 0 : (int64_t)mag;
    *uv = neg ? 0 : mag;
    return 0;
bad:
    if (min < 0)
        errf(e, "must be an integer in %" PRId64 "..%" PRIu64 " (a number or a decimal string)",
             min, max);
    else
        errf(e, "must be an integer in 0..%" PRIu64 " (a number or a decimal string)", max);
    return -1;
}

static int get_double(enc *e, const json_t *j, double *v)
{
    if (json_is_number(j)) {
        *v = json_number_value(j);
        return 0;
    }
    if (json_is_string(j)) {
        const char *s = json_string_value(j);
        if (!strcmp(s, "NaN")) {
            *v = NAN;
            return 0;
        }
        if (!strcmp(s, "Infinity") || !strcmp(s, "-Infinity")) {
            *v = *s == '-' ? -INFINITY : INFINITY;
            return 0;
        }
    }
    errf(e, "must be a number, \"NaN\", \"Infinity\" or \"-Infinity\"");
    return -1;
}

static int get_bytes(enc *e, const json_t *j, ProtobufCBinaryData *b)
{
    if (!json_is_string(j) ||
        yb_base64_decode(json_string_value(j), json_string_length(j), &b->data, &b->len) < 0) {
        errf(e, "must be a base64 string");
        return -1;
    }
    return 0;
}

/* Sets the value at p (a field of type f->type) from j.  Returns 0 or -1. */
static int set_value(enc *e, const ProtobufCFieldDescriptor *f, const json_t *j, void *p)
{
    int64_t sv;
    uint64_t uv;
    double dv;
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        if (get_int(e, j, INT32_MIN, INT32_MAX, &sv, &uv))
            return -1;
        *(int32_t *)p = (int32_t)sv;
        return 0;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        if (get_int(e, j, 0, UINT32_MAX, &sv, &uv))
            return -1;
        *(uint32_t *)p = (uint32_t)uv;
        return 0;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        if (get_int(e, j, INT64_MIN, INT64_MAX, &sv, &uv))
            return -1;
        *(int64_t *)p = sv;
        return 0;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        if (get_int(e, j, 0, UINT64_MAX, &sv, &uv))
            return -1;
        *(uint64_t *)p = uv;
        return 0;
    case PROTOBUF_C_TYPE_FLOAT:
        if (get_double(e, j, &dv))
            return -1;
        if (isfinite(dv) && fabs(dv) > FLT_MAX) {
            errf(e, "is out of range for a float");
            return -1;
        }
        *(float *)p = (float)dv;
        return 0;
    case PROTOBUF_C_TYPE_DOUBLE:
        if (get_double(e, j, &dv))
            return -1;
        *(double *)p = dv;
        return 0;
    case PROTOBUF_C_TYPE_BOOL:
        if (!json_is_boolean(j)) {
            errf(e, "must be true or false");
            return -1;
        }
        *(protobuf_c_boolean *)p = json_is_true(j);
        return 0;
    case PROTOBUF_C_TYPE_ENUM: {
        const ProtobufCEnumDescriptor *ed = f->descriptor;
        const ProtobufCEnumValue *ev =
            json_is_string(j) ? protobuf_c_enum_descriptor_get_value_by_name(ed, json_string_value(j))
                              : NULL;
        if (ev) {
            *(int *)p = ev->value;
            return 0;
        }
        if (json_is_integer(j) && json_integer_value(j) >= INT32_MIN &&
            json_integer_value(j) <= INT32_MAX) {
            *(int *)p = (int)json_integer_value(j);
            return 0;
        }
        char names[200] = "";
        size_t n = 0;
        for (unsigned i = 0; i < ed->n_values && n < sizeof names; i++) {
            int k = snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", ed->values[i].name);
            if (k > 0)
                n += (size_t)k;
        }
        errf(e, "must be one of %s (or a number)", names);
        return -1;
    }
    case PROTOBUF_C_TYPE_STRING: {
        char *s = dup_json_string(e, j);
        if (!s)
            return -1;
        *(char **)p = s;
        return 0;
    }
    case PROTOBUF_C_TYPE_BYTES: return get_bytes(e, j, p);
    case PROTOBUF_C_TYPE_MESSAGE:
        return json_to_msg(e, f->descriptor, j, (ProtobufCMessage **)p);
    }
    errf(e, "unsupported field type");
    return -1;
}

/* A Path from its string form or its object form {"origin", "elem" (a
 * path string), "target", "element"}. */
static int path_from_json(enc *e, const json_t *j, ProtobufCMessage **out)
{
    const char *text = json_is_string(j) ? json_string_value(j) : NULL;
    const json_t *elem = json_is_object(j) ? json_object_get(j, "elem") : NULL;
    if (elem && !(text = json_is_string(elem) ? json_string_value(elem) : NULL)) {
        size_t old = push(e, "elem", 0);
        errf(e, "must be a path string");
        pop(e, old);
        return -1;
    }
    if (!json_is_string(j) && !json_is_object(j)) {
        errf(e, "must be a path string (\"/a/b[k=v]\") or an object");
        return -1;
    }
    if (text && strlen(text) != json_string_length(elem ? elem : j)) {
        errf(e, "must be a path string without NUL");
        return -1;
    }
    Gnmi__Path *p = NULL;
    int rc = yb_gnmi_path_parse(text ? text : "", &p);
    if (rc) {
        size_t old = elem ? push(e, "elem", 0) : e->wn;
        if (rc == -ENOMEM)
            errf(e, "out of memory");
        else
            errf(e, "malformed gNMI path \"%.200s\" (expected /a/b[key=value]; escape ']' and "
                    "'\\' in values with '\\')",
                 text);
        pop(e, old);
        return -1;
    }
    *out = &p->base;
    if (!json_is_object(j))
        return 0;
    if (elem && *p->origin) {
        size_t old = push(e, "elem", 0);
        errf(e, "an origin belongs in \"origin\", not in the path string");
        pop(e, old);
        return -1;
    }
    /* The remaining keys are the message's own (origin, target, element). */
    json_t *rest = json_deep_copy(j);
    if (!rest) {
        errf(e, "out of memory");
        return -1;
    }
    json_object_del(rest, "elem");
    ProtobufCMessage *m = NULL;
    rc = json_to_msg(e, &gnmi__path__descriptor, rest, &m);
    json_decref(rest);
    if (rc)
        return -1;
    Gnmi__Path *q = (Gnmi__Path *)m;
    /* Move the parsed elements into the message built from the rest. */
    q->n_elem = p->n_elem;
    q->elem = p->elem;
    p->n_elem = 0;
    p->elem = NULL;
    yb_gnmi_path_free(p);
    *out = m;
    return 0;
}

/* The TypedValue keys that are not gnmi.proto fields: json_format and the
 * _base64 spelling of json_val / json_ietf_val. */
static int typed_value_extra(enc *e, const char *key, const json_t *v, const json_t *obj,
                             Gnmi__TypedValue *tv)
{
    if (!strcmp(key, "json_format")) {
        size_t flags;
        if (!json_is_string(v) || format_flags(json_string_value(v), &flags) < 0) {
            errf(e, "must be \"compact\", \"spaced\" or \"indentN\" (N in 1..31)");
            return -1;
        }
        if (!json_object_get(obj, "json_val") && !json_object_get(obj, "json_ietf_val")) {
            errf(e, "applies to an inline json_val or json_ietf_val only");
            return -1;
        }
        return 0;
    }
    int ietf = !strcmp(key, "json_ietf_val_base64");
    ProtobufCBinaryData *b = ietf ? &tv->json_ietf_val : &tv->json_val;
    if (tv->value_case != GNMI__TYPED_VALUE__VALUE__NOT_SET) {
        errf(e, "a TypedValue holds one value: another one is given");
        return -1;
    }
    if (get_bytes(e, v, b))
        return -1;
    tv->value_case = ietf ? GNMI__TYPED_VALUE__VALUE_JSON_IETF_VAL : GNMI__TYPED_VALUE__VALUE_JSON_VAL;
    return 0;
}

/* An inline json_val / json_ietf_val: the value printed in its layout. */
static int typed_value_json(enc *e, const json_t *v, const json_t *obj, ProtobufCBinaryData *b)
{
    const json_t *fmt = json_object_get(obj, "json_format");
    size_t flags = JSON_COMPACT | JSON_ENCODE_ANY;
    if (fmt && (!json_is_string(fmt) || format_flags(json_string_value(fmt), &flags) < 0))
        flags = JSON_COMPACT | JSON_ENCODE_ANY; /* reported by typed_value_extra */
    char *s = json_dumps(v, flags);
    if (!s) {
        errf(e, "cannot print this JSON value");
        return -1;
    }
    b->data = (uint8_t *)s;
    b->len = strlen(s);
    return 0;
}

static int json_to_msg(enc *e, const ProtobufCMessageDescriptor *d, const json_t *j,
                       ProtobufCMessage **out)
{
    *out = NULL;
    if (e->depth >= MAX_DEPTH) {
        errf(e, "nested deeper than %d", MAX_DEPTH);
        return -1;
    }
    if (d == &gnmi__path__descriptor && (json_is_string(j) || json_object_get(j, "elem")))
        return path_from_json(e, j, out);
    if (!json_is_object(j)) {
        errf(e, "must be an object (a %s)", d->name);
        return -1;
    }
    ProtobufCMessage *m = calloc(1, d->sizeof_message);
    if (!m) {
        errf(e, "out of memory");
        return -1;
    }
    d->message_init(m);
    *out = m;
    e->depth++;
    const char *key;
    json_t *v;
    int rc = 0;
    json_object_foreach((json_t *)j, key, v)
    {
        size_t old = push(e, key, 0);
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(d, key);
        if (d == &gnmi__typed_value__descriptor && !f &&
            (!strcmp(key, "json_format") || !strcmp(key, "json_val_base64") ||
             !strcmp(key, "json_ietf_val_base64"))) {
            rc = typed_value_extra(e, key, v, j, (Gnmi__TypedValue *)m);
        } else if (!f) {
            errf(e, "unknown field of %s", d->name);
            rc = -1;
        } else if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            if (!json_is_array(v)) {
                errf(e, "must be an array");
                rc = -1;
            } else if (json_array_size(v)) {
                size_t n = json_array_size(v), es = elem_size(f->type);
                char *arr = calloc(n, es);
                if (!arr) {
                    errf(e, "out of memory");
                    rc = -1;
                } else {
                    /* Count first: protobuf-c's free walks n elements, and
                     * calloc'd ones are NULL / zero, which it skips. */
                    *(size_t *)((char *)m + f->quantifier_offset) = n;
                    *(char **)((char *)m + f->offset) = arr;
                    for (size_t i = 0; i < n && !rc; i++) {
                        size_t o2 = push(e, NULL, i);
                        rc = set_value(e, f, json_array_get(v, i), arr + i * es);
                        pop(e, o2);
                    }
                }
            }
        } else if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            uint32_t *cs = (uint32_t *)((char *)m + f->quantifier_offset);
            if (*cs) {
                errf(e, "only one of a oneof may be given (%s holds another)", d->name);
                rc = -1;
            } else {
                void *member = (char *)m + f->offset;
                if (d == &gnmi__typed_value__descriptor && f->type == PROTOBUF_C_TYPE_BYTES &&
                    (f->id == 10 || f->id == 11))
                    rc = typed_value_json(e, v, j, member);
                else
                    rc = set_value(e, f, v, member);
                *cs = f->id; /* also after a failure: the free needs the case */
            }
        } else {
            rc = set_value(e, f, v, (char *)m + f->offset);
        }
        if (!rc)
            pop(e, old);
        if (rc)
            break;
    }
    e->depth--;
    if (rc) {
        protobuf_c_message_free_unpacked(m, NULL);
        *out = NULL;
        return -1;
    }
    return 0;
}

int yb_gnmi_json_to_message(const ProtobufCMessageDescriptor *d, const json_t *obj,
                            const char *where, ProtobufCMessage **out, char *err, size_t errlen)
{
    enc e = {.err = err, .errlen = errlen};
    snprintf(e.where, sizeof e.where, "%s", where ? where : "");
    e.wn = strlen(e.where);
    return json_to_msg(&e, d, obj, out);
}

int yb_gnmi_json_to_body(const char *rpc_path, const json_t *msgs, uint8_t **out, size_t *len,
                         char *err, size_t errlen)
{
    *out = NULL;
    *len = 0;
    const ProtobufCMessageDescriptor *d = yb_gnmi_request_type(rpc_path);
    if (!d) {
        snprintf(err, errlen, "gNMI messages need the record's path to be /gnmi.gNMI/Set, Get, "
                              "Subscribe or Capabilities, not %.200s",
                 rpc_path ? rpc_path : "(none)");
        return -1;
    }
    if (!json_is_array(msgs)) {
        snprintf(err, errlen, "must be an array of {\"%s\": {...}} (or null with \"body\")",
                 d->short_name);
        return -1;
    }
    uint8_t *buf = NULL;
    size_t n = 0, i;
    json_t *one;
    json_array_foreach(msgs, i, one)
    {
        enc e = {.err = err, .errlen = errlen};
        push(&e, NULL, i);
        json_t *body = json_object_get(one, d->short_name);
        if (!json_is_object(one) || json_object_size(one) != 1 || !body) {
            errf(&e, "must be {\"%s\": {...}} (the message type of %s)", d->short_name, rpc_path);
            free(buf);
            return -1;
        }
        push(&e, d->short_name, 0);
        ProtobufCMessage *m;
        if (json_to_msg(&e, d, body, &m)) {
            free(buf);
            return -1;
        }
        int rc = yb_grpc_append(m, &buf, &n);
        protobuf_c_message_free_unpacked(m, NULL);
        if (rc) {
            errf(&e, "out of memory or a message over 4 GiB");
            free(buf);
            return -1;
        }
    }
    *out = buf;
    *len = n;
    return 0;
}

/* ---- the decoded form, checked to encode back ---------------------------------- */

static json_t *decode_messages(const ProtobufCMessageDescriptor *d, const uint8_t *body,
                               size_t len, char *why, size_t whylen)
{
    dec dc = {.why = why, .whylen = whylen};
    json_t *arr = json_array();
    if (!arr) {
        whyf(&dc, "out of memory");
        return NULL;
    }
    size_t off = 0, k = 0;
    while (off < len) {
        if (len - off < YB_GRPC_PREFIX) {
            whyf(&dc, "truncated gRPC prefix at byte %zu", off);
            goto fail;
        }
        if (body[off] != 0) {
            whyf(&dc, "message %zu has the gRPC compressed flag (0x%02x)", k, body[off]);
            goto fail;
        }
        size_t n = ((size_t)body[off + 1] << 24) | ((size_t)body[off + 2] << 16) |
                   ((size_t)body[off + 3] << 8) | body[off + 4];
        if (n > len - off - YB_GRPC_PREFIX) {
            whyf(&dc, "message %zu is truncated (%zu of %zu bytes)", k,
                 len - off - YB_GRPC_PREFIX, n);
            goto fail;
        }
        const uint8_t *mb = body + off + YB_GRPC_PREFIX;
        if (yb_gnmi_wire_depth_ok(d, mb, n, MAX_DEPTH) < 0) {
            whyf(&dc, "message %zu is not a valid %s (or nests deeper than %d)", k, d->name,
                 MAX_DEPTH);
            goto fail;
        }
        ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, n, mb);
        if (!m) {
            whyf(&dc, "message %zu is not a valid %s", k, d->name);
            goto fail;
        }
        json_t *o = msg_to_json(&dc, m);
        protobuf_c_message_free_unpacked(m, NULL);
        json_t *w = o ? json_object() : NULL;
        if (!o || !w || json_object_set_new(w, d->short_name, o) || json_array_append_new(arr, w)) {
            if (o && !w)
                json_decref(o);
            whyf(&dc, "message %zu: out of memory", k);
            goto fail;
        }
        off += YB_GRPC_PREFIX + n;
        k++;
    }
    return arr;
fail:
    json_decref(arr);
    return NULL;
}

json_t *yb_gnmi_body_to_json(const char *rpc_path, const uint8_t *body, size_t len, char *why,
                             size_t whylen)
{
    why[0] = 0;
    const ProtobufCMessageDescriptor *d = yb_gnmi_request_type(rpc_path);
    if (!d) {
        snprintf(why, whylen, "no gNMI request type for path %.200s", rpc_path ? rpc_path : "");
        return NULL;
    }
    json_t *arr = decode_messages(d, body, len, why, whylen);
    if (!arr)
        return NULL;
    /* The check import will make: the printed text, read back and encoded,
     * is the recorded body. */
    char *text = json_dumps(arr, JSON_COMPACT);
    json_error_t je;
    json_t *back = text ? json_loads(text, JSON_REJECT_DUPLICATES, &je) : NULL;
    free(text);
    uint8_t *enc_body = NULL;
    size_t enc_len = 0;
    char err[300];
    int rc = back ? yb_gnmi_json_to_body(rpc_path, back, &enc_body, &enc_len, err, sizeof err) : -1;
    json_decref(back);
    if (rc < 0) {
        snprintf(why, whylen, "the decoded form does not encode back (%s)",
                 back ? err : "out of memory");
    } else if (enc_len != len || (len && memcmp(enc_body, body, len))) {
        size_t at = 0;
        while (at < len && at < enc_len && enc_body[at] == body[at])
            at++;
        snprintf(why, whylen, "re-encoding differs from the recorded bytes at byte %zu of %zu "
                              "(field order, zero values or map entries written differently)",
                 at, len);
        rc = -1;
    }
    free(enc_body);
    if (rc < 0) {
        json_decref(arr);
        return NULL;
    }
    return arr;
}
