#include "config.h"
#include "corpus/jsonl.h"
#include "gnmi/gnmi_json.h"
#include "util/util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Sets obj[key] (text) or obj[key_base64] for bytes.  Returns 0 or -1. */
static int set_bytes(json_t *obj, const char *key, const uint8_t *b, size_t n)
{
    if (yb_utf8_valid(b, n)) /* an empty field may have b == NULL: jansson refuses that */
        return json_object_set_new(obj, key, json_stringn(n ? (const char *)b : "", n));
    char k64[64];
    snprintf(k64, sizeof k64, "%s_base64", key);
    char *s = yb_base64_encode(b, n);
    if (!s)
        return -1;
    int rc = json_object_set_new(obj, k64, json_string(s));
    free(s);
    return rc;
}

/* Sets o[key] to the list of codes (omitted when empty).  Returns 0 or -1. */
static int set_codes(json_t *o, const char *key, const uint16_t *v, size_t n)
{
    if (!n)
        return 0;
    json_t *a = json_array();
    if (!a)
        return -1;
    for (size_t i = 0; i < n && i < YB_REQUEST_MAX_ACCEPT; i++)
        if (json_array_append_new(a, json_integer(v[i]))) {
            json_decref(a);
            return -1;
        }
    return json_object_set_new(o, key, a);
}

json_t *yb_jsonl_from_request(const yb_request *r)
{
    json_t *o = json_object(), *hs = json_array();
    if (!o || !hs)
        goto fail;
    int rc = json_object_set_new(o, "protocol", json_string(yb_proto_name(r->protocol)));
    rc |= json_object_set_new(o, "method", json_string(r->method));
    rc |= json_object_set_new(o, "scheme", json_string(r->scheme));
    rc |= json_object_set_new(o, "authority", json_string(r->authority));
    rc |= json_object_set_new(o, "path", json_string(r->path));
    for (size_t i = 0; i < r->n_headers; i++) {
        json_t *h = json_object();
        if (!h || json_array_append_new(hs, h))
            goto fail;
        rc |= json_object_set_new(h, "name", json_string(r->headers[i].name));
        rc |= set_bytes(h, "value", r->headers[i].value, r->headers[i].value_len);
    }
    rc |= json_object_set(o, "headers", hs);
    rc |= set_bytes(o, "body", r->body, r->body_len);
    rc |= json_object_set_new(o, "timestamp_ns", json_integer((json_int_t)r->timestamp_ns));
    rc |= json_object_set_new(o, "conn_id", json_integer((json_int_t)r->conn_id));
    rc |= json_object_set_new(o, "conn_order", json_integer(r->conn_order));
    if (r->expected_status)
        rc |= json_object_set_new(o, "expected_status", json_integer(r->expected_status));
    if (r->expected_grpc >= 0)
        rc |= json_object_set_new(o, "expected_grpc_status", json_integer(r->expected_grpc));
    if (r->templated)
        rc |= json_object_set_new(o, "template", json_true());
    rc |= set_codes(o, "accept_status", r->accept_status, r->n_accept_status);
    rc |= set_codes(o, "accept_grpc_status", r->accept_grpc, r->n_accept_grpc);
    if (r->chain)
        rc |= json_object_set_new(o, "chain", json_integer(r->chain));
    json_decref(hs);
    if (rc) {
        json_decref(o);
        return NULL;
    }
    return o;
fail:
    json_decref(o);
    json_decref(hs);
    return NULL;
}

json_t *yb_jsonl_from_request_decoded(const yb_request *r)
{
    json_t *j = yb_jsonl_from_request(r);
    if (!j || r->protocol != YB_PROTO_GNMI)
        return j;
    char why[300];
    json_t *msgs = yb_gnmi_body_to_json(r->path, r->body, r->body_len, why, sizeof why);
    json_t *o = json_object();
    if (!o)
        goto fail;
    /* Same keys in the same order, the body replaced by its messages (or
     * kept, with "grpc": null and the reason next to it). */
    const char *k;
    json_t *v;
    int rc = 0;
    json_object_foreach(j, k, v)
    {
        int is_body = !strcmp(k, "body") || !strcmp(k, "body_base64");
        if (!is_body || !msgs)
            rc |= json_object_set(o, k, v);
        if (is_body && msgs) {
            rc |= json_object_set_new(o, YB_JSONL_GRPC_KEY, msgs);
            msgs = NULL;
        } else if (is_body) {
            rc |= json_object_set_new(o, YB_JSONL_GRPC_KEY, json_null());
            rc |= json_object_set_new(o, YB_JSONL_GRPC_WHY_KEY, json_string(why));
        }
    }
    if (rc)
        goto fail;
    json_decref(msgs);
    json_decref(j);
    return o;
fail:
    json_decref(msgs);
    json_decref(o);
    json_decref(j);
    return NULL;
}

static const char *const REQUEST_KEYS[] = {
    "protocol", "method", "scheme", "authority", "path", "headers", "body", "body_base64",
    "timestamp_ns", "conn_id", "conn_order", "expected_status", "expected_grpc_status",
    "template", "chain", "accept_status", "accept_grpc_status", YB_JSONL_GRPC_KEY,
    YB_JSONL_GRPC_WHY_KEY, NULL};

static int known_key(const char *k, const char *const *keys)
{
    for (; *keys; keys++)
        if (!strcmp(k, *keys))
            return 1;
    return 0;
}

/* Reads obj[key] text or obj[key_base64] into a malloc'd buffer.  Returns
 * 0 (absent → empty), or -1 with err. */
static int get_bytes(const json_t *obj, const char *key, uint8_t **out, size_t *len, char *err,
                     size_t errlen)
{
    char k64[64];
    snprintf(k64, sizeof k64, "%s_base64", key);
    json_t *t = json_object_get(obj, key), *b = json_object_get(obj, k64);
    *out = NULL;
    *len = 0;
    if (t && b) {
        seterr(err, errlen, "both \"%s\" and \"%s\" given", key, k64);
        return -1;
    }
    if (t) {
        if (!json_is_string(t)) {
            seterr(err, errlen, "\"%s\" must be a string", key);
            return -1;
        }
        size_t n = json_string_length(t);
        *out = malloc(n + 1);
        if (!*out) {
            seterr(err, errlen, "out of memory");
            return -1;
        }
        memcpy(*out, json_string_value(t), n);
        (*out)[n] = 0;
        *len = n;
        return 0;
    }
    if (b) {
        if (!json_is_string(b) ||
            yb_base64_decode(json_string_value(b), json_string_length(b), out, len) < 0) {
            seterr(err, errlen, "\"%s\" must be a base64 string", k64);
            return -1;
        }
    }
    return 0;
}

/* Reads an optional non-negative integer in [0, max].  Returns 0 or -1. */
static int get_uint(const json_t *obj, const char *key, uint64_t max, uint64_t *out, char *err,
                    size_t errlen)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0 ||
        (uint64_t)json_integer_value(v) > max) {
        seterr(err, errlen, "\"%s\" must be an integer in 0..%llu", key, (unsigned long long)max);
        return -1;
    }
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

/* Reads obj[key], an array of at most YB_REQUEST_MAX_ACCEPT integers in
 * min..max, into v / *n (absent: none).  Returns 0 or -1 with err. */
static int get_codes(const json_t *obj, const char *key, unsigned min, unsigned max,
                     uint16_t *v, size_t *n, char *err, size_t errlen)
{
    json_t *a = json_object_get(obj, key), *x;
    size_t i;
    *n = 0;
    if (!a)
        return 0;
    if (!json_is_array(a) || json_array_size(a) > YB_REQUEST_MAX_ACCEPT) {
        seterr(err, errlen, "\"%s\" must be an array of at most %d codes", key,
               YB_REQUEST_MAX_ACCEPT);
        return -1;
    }
    json_array_foreach(a, i, x)
    {
        if (!json_is_integer(x) || json_integer_value(x) < (json_int_t)min ||
            json_integer_value(x) > (json_int_t)max) {
            seterr(err, errlen, "\"%s\"[%zu] must be an integer in %u..%u", key, i, min, max);
            return -1;
        }
        v[(*n)++] = (uint16_t)json_integer_value(x);
    }
    return 0;
}

static int get_str(const json_t *obj, const char *key, int required, char **dst, char *err,
                   size_t errlen)
{
    json_t *v = json_object_get(obj, key);
    if (!v) {
        if (required) {
            seterr(err, errlen, "missing \"%s\"", key);
            return -1;
        }
        return 0;
    }
    if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
        seterr(err, errlen, "\"%s\" must be a string without NUL", key);
        return -1;
    }
    if (yb_request_set_str(dst, json_string_value(v))) {
        seterr(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

static int get_headers(const json_t *obj, yb_request *r, char *err, size_t errlen)
{
    json_t *hs = json_object_get(obj, "headers");
    if (!hs)
        return 0;
    if (!json_is_array(hs)) {
        seterr(err, errlen, "\"headers\" must be an array");
        return -1;
    }
    size_t i;
    json_t *h;
    json_array_foreach(hs, i, h)
    {
        json_t *n = json_object_get(h, "name");
        if (!json_is_object(h) || !json_is_string(n) ||
            strlen(json_string_value(n)) != json_string_length(n)) {
            seterr(err, errlen, "headers[%zu] must be {\"name\": string, \"value\": string}", i);
            return -1;
        }
        uint8_t *v;
        size_t vl;
        char sub[200];
        if (get_bytes(h, "value", &v, &vl, sub, sizeof sub) < 0) {
            seterr(err, errlen, "headers[%zu]: %s", i, sub);
            return -1;
        }
        int rc = yb_request_add_header(r, json_string_value(n), v ? v : (uint8_t *)"", vl);
        free(v);
        if (rc) {
            seterr(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}

int yb_jsonl_to_request(const json_t *obj, yb_request *r, char *err, size_t errlen)
{
    if (!json_is_object(obj)) {
        seterr(err, errlen, "a record must be a JSON object");
        return -1;
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        if (!known_key(k, REQUEST_KEYS)) {
            seterr(err, errlen, "unknown key \"%s\"", k);
            return -1;
        }
    }
    json_t *p = json_object_get(obj, "protocol");
    if (!json_is_string(p) || yb_proto_parse(json_string_value(p), &r->protocol) < 0) {
        seterr(err, errlen, "\"protocol\" must be one of restconf, gnmi, http1, http2");
        return -1;
    }
    if (get_str(obj, "method", 1, &r->method, err, errlen) ||
        get_str(obj, "scheme", 0, &r->scheme, err, errlen) ||
        get_str(obj, "authority", 0, &r->authority, err, errlen) ||
        get_str(obj, "path", 1, &r->path, err, errlen) || get_headers(obj, r, err, errlen))
        return -1;
    uint8_t *b;
    size_t bl;
    json_t *g = json_object_get(obj, YB_JSONL_GRPC_KEY);
    json_t *gw = json_object_get(obj, YB_JSONL_GRPC_WHY_KEY);
    if (gw && !json_is_string(gw)) {
        seterr(err, errlen, "\"%s\" must be a string", YB_JSONL_GRPC_WHY_KEY);
        return -1;
    }
    if (g && !json_is_null(g)) {
        if (json_object_get(obj, "body") || json_object_get(obj, "body_base64")) {
            seterr(err, errlen, "key \"%s\": give the body either as gNMI messages or as "
                                "\"body\"/\"body_base64\" (with \"%s\": null), not both",
                   YB_JSONL_GRPC_KEY, YB_JSONL_GRPC_KEY);
            return -1;
        }
        if (r->protocol != YB_PROTO_GNMI) {
            seterr(err, errlen, "key \"%s\": gNMI messages need \"protocol\": \"gnmi\"",
                   YB_JSONL_GRPC_KEY);
            return -1;
        }
        char gerr[400];
        if (yb_gnmi_json_to_body(r->path, g, &b, &bl, gerr, sizeof gerr) < 0) {
            seterr(err, errlen, "key \"%s\"%s%s", YB_JSONL_GRPC_KEY, gerr[0] == '[' ? "" : ": ",
                   gerr);
            return -1;
        }
    } else if (get_bytes(obj, "body", &b, &bl, err, errlen) < 0) {
        return -1;
    }
    yb_request_take_body(r, bl ? b : NULL, bl);
    if (!bl)
        free(b);
    uint64_t ts = 0, cid = 0, ord = 0, st = 0, gs = UINT64_MAX, ch = 0;
    if (get_uint(obj, "timestamp_ns", INT64_MAX, &ts, err, errlen) ||
        get_uint(obj, "conn_id", INT64_MAX, &cid, err, errlen) ||
        get_uint(obj, "conn_order", UINT32_MAX, &ord, err, errlen) ||
        get_uint(obj, "expected_status", 999, &st, err, errlen) ||
        get_uint(obj, "expected_grpc_status", 16, &gs, err, errlen) ||
        get_uint(obj, "chain", YB_CHAIN_MAX, &ch, err, errlen))
        return -1;
    if (ch == 1) {
        seterr(err, errlen, "\"chain\" is the number of records in the chain: 2 or more");
        return -1;
    }
    r->chain = (uint32_t)ch;
    r->timestamp_ns = ts;
    r->conn_id = cid;
    r->conn_order = (uint32_t)ord;
    r->expected_status = (uint32_t)st;
    r->expected_grpc = gs == UINT64_MAX ? -1 : (int32_t)gs;
    json_t *tp = json_object_get(obj, "template");
    if (tp && !json_is_boolean(tp)) {
        seterr(err, errlen, "\"template\" must be true or false");
        return -1;
    }
    r->templated = tp && json_is_true(tp);
    return get_codes(obj, "accept_status", 100, 999, r->accept_status, &r->n_accept_status, err,
                     errlen) ||
                   get_codes(obj, "accept_grpc_status", 0, 16, r->accept_grpc, &r->n_accept_grpc,
                             err, errlen)
               ? -1
               : 0;
}

json_t *yb_jsonl_from_header(const yb_corpus_header *h)
{
    json_t *o = json_object(), *red = json_array(), *top = json_object();
    if (!o || !red || !top)
        goto fail;
    for (size_t i = 0; i < h->n_redactions; i++)
        if (json_array_append_new(red, json_string(h->redactions[i])))
            goto fail;
    if (json_object_set_new(o, "format_version", json_integer(h->format_version)) ||
        json_object_set_new(o, "created_unix_ns", json_integer((json_int_t)h->created_unix_ns)) ||
        json_object_set_new(o, "producer", json_string(h->producer)) ||
        json_object_set_new(o, "source", json_string(h->source)) ||
        json_object_set(o, "redactions", red) ||
        (h->level && json_object_set_new(o, "compression_level", json_integer(h->level))) ||
        json_object_set(top, YB_JSONL_HEADER_KEY, o))
        goto fail;
    json_decref(o);
    json_decref(red);
    return top;
fail:
    json_decref(o);
    json_decref(red);
    json_decref(top);
    return NULL;
}

static const char *const HEADER_KEYS[] = {"format_version", "created_unix_ns", "producer",
                                           "source", "redactions", "compression_level", NULL};

int yb_jsonl_to_header(const json_t *obj, yb_corpus_header *h, char *err, size_t errlen)
{
    json_t *o = json_object_get(obj, YB_JSONL_HEADER_KEY);
    if (!json_is_object(o)) {
        seterr(err, errlen, "\"%s\" must be an object", YB_JSONL_HEADER_KEY);
        return -1;
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        if (strcmp(k, YB_JSONL_HEADER_KEY)) {
            seterr(err, errlen, "unknown key \"%s\" next to \"%s\"", k, YB_JSONL_HEADER_KEY);
            return -1;
        }
    }
    json_object_foreach(o, k, v)
    {
        if (!known_key(k, HEADER_KEYS)) {
            seterr(err, errlen, "unknown key \"%s\" in \"%s\"", k, YB_JSONL_HEADER_KEY);
            return -1;
        }
    }
    uint64_t created = 0, level = 0;
    if (get_uint(o, "created_unix_ns", INT64_MAX, &created, err, errlen) ||
        get_uint(o, "compression_level", YB_CORPUS_LEVEL_MAX, &level, err, errlen) ||
        get_str(o, "producer", 0, &h->producer, err, errlen) ||
        get_str(o, "source", 0, &h->source, err, errlen))
        return -1;
    h->created_unix_ns = created;
    h->level = (unsigned)level;
    json_t *red = json_object_get(o, "redactions");
    if (red && !json_is_array(red)) {
        seterr(err, errlen, "\"redactions\" must be an array of strings");
        return -1;
    }
    size_t i;
    json_array_foreach(red, i, v)
    {
        if (!json_is_string(v)) {
            seterr(err, errlen, "\"redactions\" must be an array of strings");
            return -1;
        }
        if (yb_corpus_header_add_redaction(h, json_string_value(v))) {
            seterr(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* 1 when a line that is not valid JSON looks like a piece of a multi-line
 * JSON document: a lone bracket, a "key": value member, or an object or
 * array that is still open at the end of the line. */
static int looks_pretty(const char *line, size_t n, const json_error_t *je)
{
    while (n && is_space(line[n - 1]))
        n--;
    size_t i = 0;
    while (i < n && is_space(line[i]))
        i++;
    if (i == n)
        return 0;
    if (n - i <= 2 && line[i] && strchr("{}[]", line[i]))
        return 1; /* "{", "}", "},", "[", "]" */
    if (line[i] == '"' && memchr(line + i, ':', n - i))
        return 1; /* "key": value, */
    return (line[i] == '{' || line[i] == '[') && (size_t)je->position >= n;
}

int yb_jsonl_parse_line(const char *line, size_t n, int header_ok, yb_request *r,
                        yb_corpus_header *h, char *err, size_t errlen)
{
    static const char jq_hint[] = "; corpus import reads one JSON object per line: "
                                  "convert pretty-printed JSON with `jq -c .` "
                                  "(an array of records with `jq -c '.[]'`)";
    json_error_t je;
    json_t *j = json_loadb(line, n, JSON_REJECT_DUPLICATES, &je);
    if (!j) {
        size_t i = 0;
        while (i < n && is_space(line[i]))
            i++;
        if (i == n)
            return YB_JSONL_BLANK;
        int pretty = looks_pretty(line, n, &je);
        seterr(err, errlen, "invalid JSON: %s%s", je.text, pretty ? jq_hint : "");
        return pretty ? -2 : -1;
    }
    int rc;
    if (json_is_array(j)) {
        seterr(err, errlen, "a record must be a JSON object, not an array%s", jq_hint);
        rc = -2;
    } else if (json_object_get(j, YB_JSONL_HEADER_KEY)) {
        if (!header_ok) {
            seterr(err, errlen, "key \"%s\": a header line may only be the first line",
                   YB_JSONL_HEADER_KEY);
            rc = -1;
        } else {
            rc = yb_jsonl_to_header(j, h, err, errlen) < 0 ? -1 : YB_JSONL_HEADER;
        }
    } else if (yb_jsonl_to_request(j, r, err, errlen) < 0) {
        rc = -1;
    } else {
        const char *key, *why;
        size_t hi;
        rc = YB_JSONL_RECORD;
        if ((why = yb_request_problem_key(r, &key, &hi)) != NULL) {
            if (!strcmp(key, "headers"))
                seterr(err, errlen, "key \"headers\"[%zu]: %s", hi, why);
            else
                seterr(err, errlen, "key \"%s\": %s", key, why);
            rc = -1;
        }
    }
    json_decref(j);
    return rc;
}
