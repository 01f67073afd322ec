/* Values a chain step takes from the previous step's response (see
 * pick.h): the placeholders' syntax, their compilation per record, and
 * the extraction from a response (a JSON pointer into a RESTCONF body, a
 * header, an update of a gNMI GetResponse). */
#include "config.h"
#include "tmpl/pick.h"
#include "gnmi/gnmi_msg.h"
#include "util/json_type.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { PK_JSON, PK_HEADER, PK_GNMI } pkind;

typedef struct {
    pkind k;
    uint64_t key;      /* yb_tmpl_key of its inner text */
    char text[96];     /* "{{prev.json:/a}}" as written (printable, capped): for reasons */
    char *ptr;         /* JSON pointer (json, gnmi; "" = the whole value) */
    char *name;        /* header: its name in lower case */
    char *path;        /* gnmi: the path's text form, without origin */
} spec;

struct yb_pick {
    spec s[YB_PICK_MAX];
    size_t n;
};

/* ---- syntax ---------------------------------------------------------------- */

static int ptr_ok(const char *p, size_t n)
{
    if (n && p[0] != '/')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] == '~' && (i + 1 == n || (p[i + 1] != '0' && p[i + 1] != '1')))
            return 0;
    return 1;
}

static int token_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Where a gNMI spec's '#' (the JSON pointer) starts: the first '#' outside
 * [...] and not escaped, or n. */
static size_t gnmi_split(const char *p, size_t n)
{
    int in_key = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\\')
            i++;
        else if (p[i] == '[')
            in_key = 1;
        else if (p[i] == ']')
            in_key = 0;
        else if (p[i] == '#' && !in_key)
            return i;
    }
    return n;
}

#define FORMS "prev.json:POINTER, prev.header:NAME or prev.gnmi:PATH[#POINTER]"

int yb_pick_check(const char *in, size_t n, const char **why)
{
    if (n > 10 && !memcmp(in, "prev.json:", 10)) {
        if (!ptr_ok(in + 10, n - 10)) {
            *why = "a JSON pointer is empty or starts with '/', and '~' is ~0 or ~1 (RFC 6901)";
            return -1;
        }
        return 0;
    }
    if (n == 10 && !memcmp(in, "prev.json:", 10))
        return 0; /* the whole body */
    if (n >= 12 && !memcmp(in, "prev.header:", 12)) {
        for (size_t i = 12; i < n; i++)
            if (!token_char(in[i])) {
                *why = "a header name is an HTTP token";
                return -1;
            }
        if (n == 12) {
            *why = "prev.header takes the header's name";
            return -1;
        }
        return 0;
    }
    if (n >= 10 && !memcmp(in, "prev.gnmi:", 10)) {
        const char *p = in + 10;
        size_t pn = n - 10, h = gnmi_split(p, pn);
        char path[YB_TMPL_MAX_INNER + 1];
        Gnmi__Path *gp = NULL;
        if (!h || h >= sizeof path || memchr(p, 0, h)) {
            *why = "prev.gnmi takes a gNMI path (/a/b[k=v]), then #POINTER optionally";
            return -1;
        }
        memcpy(path, p, h);
        path[h] = 0;
        int rc = yb_gnmi_path_parse(path, &gp);
        yb_gnmi_path_free(gp);
        if (rc == -ENOMEM) {
            *why = "out of memory";
            return -1;
        }
        if (rc < 0) {
            *why = "not a gNMI path (/a/b[k=v])";
            return -1;
        }
        if (h < pn && !ptr_ok(p + h + 1, pn - h - 1)) {
            *why = "the JSON pointer after '#' is empty or starts with '/', and '~' is ~0 or ~1 "
                   "(RFC 6901)";
            return -1;
        }
        return 0;
    }
    *why = "unknown placeholder (the previous response's values: " FORMS ")";
    return -1;
}

/* ---- compiling a record's picks ---------------------------------------------- */

static void spec_free(spec *s)
{
    free(s->ptr);
    free(s->name);
    free(s->path);
}

void yb_pick_free(yb_pick *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        spec_free(&p->s[i]);
    free(p);
}

static char *dup_n(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        if (n)
            memcpy(s, p, n);
        s[n] = 0;
    }
    return s;
}

/* Fills s from the inner text in[0..n) (checked by yb_pick_check). */
static int spec_build(spec *s, const char *in, size_t n)
{
    size_t k = 0;
    memcpy(s->text, "{{", 2);
    k = 2;
    for (size_t i = 0; i < n && k + 6 < sizeof s->text; i++)
        s->text[k++] = in[i] >= 0x20 && in[i] < 0x7f ? in[i] : '?';
    if (k + 6 >= sizeof s->text) {
        memcpy(s->text + k, "...", 3);
        k += 3;
    }
    memcpy(s->text + k, "}}", 3);
    s->key = yb_tmpl_key(in, n);
    if (!memcmp(in, "prev.json:", 10)) {
        s->k = PK_JSON;
        return (s->ptr = dup_n(in + 10, n - 10)) ? 0 : -ENOMEM;
    }
    if (!memcmp(in, "prev.header:", 12)) {
        s->k = PK_HEADER;
        if (!(s->name = dup_n(in + 12, n - 12)))
            return -ENOMEM;
        for (char *c = s->name; *c; c++)
            if (*c >= 'A' && *c <= 'Z')
                *c = (char)(*c - 'A' + 'a');
        return 0;
    }
    s->k = PK_GNMI;
    const char *p = in + 10;
    size_t pn = n - 10, h = gnmi_split(p, pn);
    char *txt = dup_n(p, h);
    Gnmi__Path *gp = NULL;
    int rc = txt ? yb_gnmi_path_parse(txt, &gp) : -ENOMEM;
    free(txt);
    if (rc == 0 && !(s->path = yb_gnmi_path_to_text(gp, 0)))
        rc = -ENOMEM;
    yb_gnmi_path_free(gp);
    if (rc)
        return rc == -ENOMEM ? -ENOMEM : -EINVAL;
    s->ptr = h < pn ? dup_n(p + h + 1, pn - h - 1) : dup_n("", 0);
    return s->ptr ? 0 : -ENOMEM;
}

/* Adds the picks of text b[0..n) to pk. */
static int scan(yb_pick *pk, const char *field, const uint8_t *b, size_t n, char *err,
                size_t errlen)
{
    for (size_t i = 0; i + 7 < n; i++) {
        if (b[i] != '{' || b[i + 1] != '{' || memcmp(b + i + 2, "prev.", 5))
            continue;
        size_t s = i + 2, e = s;
        while (e + 1 < n && !(b[e] == '}' && b[e + 1] == '}') && e - s <= YB_TMPL_MAX_INNER)
            e++;
        if (e + 1 >= n || e - s > YB_TMPL_MAX_INNER)
            return 0; /* unterminated: the template's own check says so */
        const char *in = (const char *)b + s;
        uint64_t key = yb_tmpl_key(in, e - s);
        size_t j = 0;
        while (j < pk->n && pk->s[j].key != key)
            j++;
        const char *why = NULL;
        if (j == pk->n) {
            if (pk->n == YB_PICK_MAX) {
                snprintf(err, errlen, "%s: more than %d distinct {{prev....}} placeholders",
                         field, YB_PICK_MAX);
                return -EINVAL;
            }
            if (yb_pick_check(in, e - s, &why) < 0) {
                snprintf(err, errlen, "%s: placeholder '{{%.*s}}': %s", field,
                         (int)(e - s < 60 ? e - s : 60), in, why);
                return -EINVAL;
            }
            int rc = spec_build(&pk->s[pk->n++], in, e - s);
            if (rc)
                return rc;
        }
        i = e + 1;
    }
    return 0;
}

int yb_pick_wanted(const yb_request *r)
{
    static const uint8_t PFX[] = "{{prev.";
    if (r->path && memmem(r->path, strlen(r->path), PFX, 7))
        return 1;
    for (size_t i = 0; i < r->n_headers; i++)
        if (r->headers[i].value_len && memmem(r->headers[i].value, r->headers[i].value_len, PFX, 7))
            return 1;
    return r->body_len && memmem(r->body, r->body_len, PFX, 7) != NULL;
}

int yb_pick_compile(const yb_request *r, yb_pick **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!yb_pick_wanted(r))
        return 0;
    yb_pick *pk = calloc(1, sizeof *pk);
    if (!pk)
        return -ENOMEM;
    int rc = r->path ? scan(pk, "path", (const uint8_t *)r->path, strlen(r->path), err, errlen)
                     : 0;
    for (size_t i = 0; !rc && i < r->n_headers; i++) {
        char field[96];
        snprintf(field, sizeof field, "header '%.64s'", r->headers[i].name);
        rc = scan(pk, field, r->headers[i].value, r->headers[i].value_len, err, errlen);
    }
    if (!rc && r->body_len)
        rc = scan(pk, "body", r->body, r->body_len, err, errlen);
    if (rc || !pk->n) {
        yb_pick_free(pk);
        return rc;
    }
    *out = pk;
    return 0;
}

/* ---- extraction ------------------------------------------------------------------ */

void yb_pick_vals_free(yb_pick_vals *v)
{
    free(v->buf);
    memset(v, 0, sizeof *v);
}

/* Writes the first n bytes of p, printable, to buf. */
static const char *printable(char *buf, size_t cap, const char *p, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 4 < cap; i++)
        buf[k++] = p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?';
    if (n && k + 4 >= cap) {
        memcpy(buf + k, "...", 3);
        k += 3;
    }
    buf[k] = 0;
    return buf;
}

/* Follows JSON pointer ptr from root.  Returns the value, or NULL with
 * why (naming the pointer's tokens, never a value). */
static json_t *follow(json_t *root, const char *ptr, const char *in_what, char *why, size_t wl)
{
    json_t *cur = root;
    const char *p = ptr;
    char tok[YB_TMPL_MAX_INNER + 1], q[80], at[80];
    while (*p) {
        const char *t0 = ++p; /* past '/' */
        size_t k = 0;
        while (*p && *p != '/') {
            if (*p == '~') {
                tok[k++] = p[1] == '1' ? '/' : '~';
                p += 2;
            } else
                tok[k++] = *p++;
        }
        tok[k] = 0;
        printable(at, sizeof at, ptr, (size_t)(t0 - 1 - ptr));
        if (json_is_object(cur)) {
            json_t *n = json_object_get(cur, tok);
            if (!n) {
                snprintf(why, wl, "no member '%s' at '%s' in %s",
                         printable(q, sizeof q, tok, k), at[0] ? at : "/", in_what);
                return NULL;
            }
            cur = n;
        } else if (json_is_array(cur)) {
            uint64_t idx = 0;
            int ok = k > 0 && k <= 9 && (k == 1 || tok[0] != '0');
            for (size_t i = 0; ok && i < k; i++) {
                ok = tok[i] >= '0' && tok[i] <= '9';
                idx = idx * 10 + (uint64_t)(tok[i] - '0');
            }
            if (!ok) {
                snprintf(why, wl, "'%s' is not an array index (at '%s' in %s)",
                         printable(q, sizeof q, tok, k), at[0] ? at : "/", in_what);
                return NULL;
            }
            if (idx >= json_array_size(cur)) {
                snprintf(why, wl, "index %llu beyond the %zu items of the array at '%s' in %s",
                         (unsigned long long)idx, json_array_size(cur), at[0] ? at : "/",
                         in_what);
                return NULL;
            }
            cur = json_array_get(cur, (size_t)idx);
        } else {
            snprintf(why, wl, "'%s' is %s, not an object or array, in %s", at[0] ? at : "/",
                     yb_json_type_name(cur), in_what);
            return NULL;
        }
    }
    return cur;
}

/* Appends bytes p[0..n) as the value of s to out.  Returns 0, -ENOMEM,
 * or -ENOENT with why. */
static int put_value(const spec *s, yb_pick_vals *out, const void *p, size_t n, char *why,
                     size_t wl)
{
    const uint8_t *b = p;
    if (!n) { /* never sent as if it were a value */
        snprintf(why, wl, "%s: the value is empty (not sent)", s->text);
        return -ENOENT;
    }
    for (size_t i = 0; i < n; i++)
        if (b[i] < 0x20 || b[i] == 0x7f) {
            snprintf(why, wl, "%s: the value holds a control character (not sent)", s->text);
            return -ENOENT;
        }
    if (n > YB_PICK_VALUE_MAX || n > YB_PICK_VALUES_MAX - out->len) {
        snprintf(why, wl, "%s: the value is over %u bytes (%zu)", s->text,
                 n > YB_PICK_VALUE_MAX ? YB_PICK_VALUE_MAX : YB_PICK_VALUES_MAX, n);
        return -ENOENT;
    }
    if (out->len + n > out->cap) { /* (n > 0: buf is never NULL once a value is in) */
        uint8_t *nb = realloc(out->buf, out->len + n);
        if (!nb)
            return -ENOMEM;
        out->buf = nb;
        out->cap = out->len + n;
    }
    if (n)
        memcpy(out->buf + out->len, p, n);
    out->got[out->n++] = (yb_tmpl_got){s->key, NULL, n};
    out->len += n;
    return 0;
}

/* The value at s->ptr in j as text: a string's characters, any other
 * value's compact JSON. */
static int put_json(const spec *s, json_t *j, const char *in_what, yb_pick_vals *out, char *why,
                    size_t wl)
{
    char w[400];
    json_t *v = follow(j, s->ptr, in_what, w, sizeof w);
    if (!v) {
        snprintf(why, wl, "%s: %s", s->text, w);
        return -ENOENT;
    }
    if (json_is_string(v))
        return put_value(s, out, json_string_value(v), json_string_length(v), why, wl);
    char *d = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!d)
        return -ENOMEM;
    int rc = put_value(s, out, d, strlen(d), why, wl);
    free(d);
    return rc;
}

static int get_header(const spec *s, const yb_pick_resp *rs, yb_pick_vals *out, char *why,
                      size_t wl)
{
    size_t nl = strlen(s->name), i = 0;
    const char *h = (const char *)rs->head;
    while (h && i < rs->head_len) {
        const char *eol = memchr(h + i, '\n', rs->head_len - i);
        size_t e = eol ? (size_t)(eol - h) : rs->head_len;
        if (e - i > nl + 1 && !memcmp(h + i, s->name, nl) && h[i + nl] == ':') {
            size_t v0 = i + nl + 1, v1 = e;
            while (v0 < v1 && (h[v0] == ' ' || h[v0] == '\t'))
                v0++;
            while (v1 > v0 && (h[v1 - 1] == ' ' || h[v1 - 1] == '\t' || h[v1 - 1] == '\r'))
                v1--;
            return put_value(s, out, h + v0, v1 - v0, why, wl);
        }
        i = e + 1;
    }
    snprintf(why, wl, "%s: no header '%s' in the previous response", s->text, s->name);
    return -ENOENT;
}

/* The text form of prefix + path (no origin), malloc'd, or NULL. */
static char *full_path(const Gnmi__Path *prefix, const Gnmi__Path *path)
{
    Gnmi__Path t = GNMI__PATH__INIT;
    size_t a = prefix ? prefix->n_elem : 0, b = path ? path->n_elem : 0;
    Gnmi__PathElem **e = malloc((a + b + 1) * sizeof *e);
    if (!e)
        return NULL;
    for (size_t i = 0; i < a; i++)
        e[i] = prefix->elem[i];
    for (size_t i = 0; i < b; i++)
        e[a + i] = path->elem[i];
    t.n_elem = a + b;
    t.elem = e;
    char *s = yb_gnmi_path_to_text(&t, 0);
    free(e);
    return s;
}

/* The value of the update at s->path in the GetResponse r. */
static int get_gnmi(const spec *s, const Gnmi__GetResponse *r, yb_pick_vals *out, char *why,
                    size_t wl)
{
    size_t updates = 0;
    for (size_t i = 0; i < r->n_notification; i++) {
        const Gnmi__Notification *nf = r->notification[i];
        for (size_t j = 0; j < nf->n_update; j++, updates++) {
            const Gnmi__Update *u = nf->update[j];
            char *fp = full_path(nf->prefix, u->path);
            if (!fp)
                return -ENOMEM;
            int same = !strcmp(fp, s->path);
            free(fp);
            if (!same)
                continue;
            const Gnmi__TypedValue *v = u->val;
            char num[32];
            int n;
            switch (v ? v->value_case : GNMI__TYPED_VALUE__VALUE__NOT_SET) {
            case GNMI__TYPED_VALUE__VALUE_JSON_IETF_VAL:
            case GNMI__TYPED_VALUE__VALUE_JSON_VAL: {
                const ProtobufCBinaryData *d = v->value_case == GNMI__TYPED_VALUE__VALUE_JSON_VAL
                                                   ? &v->json_val : &v->json_ietf_val;
                json_error_t je;
                json_t *jv = json_loadb((const char *)d->data, d->len, JSON_DECODE_ANY, &je);
                if (!jv) {
                    snprintf(why, wl, "%s: the update's JSON value does not parse (line %d: "
                             "%.80s)", s->text, je.line, je.text);
                    return -ENOENT;
                }
                int rc = put_json(s, jv, "the update's JSON value", out, why, wl);
                json_decref(jv);
                return rc;
            }
            case GNMI__TYPED_VALUE__VALUE_STRING_VAL:
            case GNMI__TYPED_VALUE__VALUE_ASCII_VAL:
            case GNMI__TYPED_VALUE__VALUE_INT_VAL:
            case GNMI__TYPED_VALUE__VALUE_UINT_VAL:
            case GNMI__TYPED_VALUE__VALUE_BOOL_VAL: {
                if (s->ptr[0]) {
                    snprintf(why, wl, "%s: the update's value is a scalar, not JSON a pointer "
                             "can go into", s->text);
                    return -ENOENT;
                }
                if (v->value_case == GNMI__TYPED_VALUE__VALUE_STRING_VAL ||
                    v->value_case == GNMI__TYPED_VALUE__VALUE_ASCII_VAL) {
                    const char *t = v->value_case == GNMI__TYPED_VALUE__VALUE_STRING_VAL
                                        ? v->string_val : v->ascii_val;
                    return put_value(s, out, t ? t : "", t ? strlen(t) : 0, why, wl);
                }
                n = v->value_case == GNMI__TYPED_VALUE__VALUE_INT_VAL
                        ? snprintf(num, sizeof num, "%lld", (long long)v->int_val)
                    : v->value_case == GNMI__TYPED_VALUE__VALUE_UINT_VAL
                        ? snprintf(num, sizeof num, "%llu", (unsigned long long)v->uint_val)
                        : snprintf(num, sizeof num, "%s", v->bool_val ? "true" : "false");
                return put_value(s, out, num, (size_t)n, why, wl);
            }
            default:
                snprintf(why, wl, "%s: the update's value is not JSON, a string, an integer or "
                         "a boolean (TypedValue case %d)", s->text, v ? (int)v->value_case : 0);
                return -ENOENT;
            }
        }
    }
    snprintf(why, wl, "%s: no update at %s in the previous GetResponse (%zu updates)", s->text,
             s->path, updates);
    return -ENOENT;
}

int yb_pick_extract(const yb_pick *pk, const yb_pick_resp *rs, yb_pick_vals *out, char *why,
                    size_t whylen)
{
    out->n = 0;
    out->len = 0;
    json_t *body = NULL;
    Gnmi__GetResponse *gr = NULL;
    int rc = 0;
    for (size_t i = 0; i < pk->n && !rc; i++) {
        const spec *s = &pk->s[i];
        if (s->k == PK_HEADER) {
            rc = get_header(s, rs, out, why, whylen);
            continue;
        }
        if (!rs->body_whole) {
            snprintf(why, whylen, "%s: the previous response's body was not kept whole (over "
                     "%u bytes, or over the worker's response memory budget)", s->text,
                     YB_PICK_BODY_MAX);
            rc = -ENOENT;
        } else if (s->k == PK_JSON && rs->grpc) {
            snprintf(why, whylen, "%s: the previous response is a gRPC message, not a JSON body "
                     "(prev.gnmi reads a GetResponse)", s->text);
            rc = -ENOENT;
        } else if (s->k == PK_GNMI && !rs->grpc) {
            snprintf(why, whylen, "%s: the previous response is not a gNMI response",
                     s->text);
            rc = -ENOENT;
        } else if (s->k == PK_JSON) {
            json_error_t je;
            if (!body &&
                !(body = json_loadb((const char *)rs->body, rs->body_len, JSON_DECODE_ANY, &je))) {
                snprintf(why, whylen, "%s: the previous response's body (%zu bytes) is not "
                         "JSON (line %d: %.80s)", s->text, rs->body_len, je.line, je.text);
                rc = -ENOENT;
            } else
                rc = put_json(s, body, "the previous response's body", out, why, whylen);
        } else {
            if (!gr && !(gr = (Gnmi__GetResponse *)yb_gnmi_unpack(
                             &gnmi__get_response__descriptor, rs->body, rs->body_len))) {
                snprintf(why, whylen, "%s: the previous response is not a gNMI GetResponse",
                         s->text);
                rc = -ENOENT;
            } else
                rc = get_gnmi(s, gr, out, why, whylen);
        }
    }
    json_decref(body);
    if (gr)
        gnmi__get_response__free_unpacked(gr, NULL);
    for (size_t i = 0, off = 0; !rc && i < out->n; off += out->got[i++].n)
        out->got[i].p = out->buf + off; /* (the buffer has stopped moving) */
    return rc;
}
