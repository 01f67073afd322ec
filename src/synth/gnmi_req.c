#include "config.h"
#include "synth/gnmi_req.h"
#include "gnmi/gnmi_json.h"
#include "util/yaml_json.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A request file or value file larger than a corpus entry could not become
 * one anyway. */
#define MAX_FILE YB_CORPUS_MAX_ENTRY

int yb_gnmi_enc_parse(const char *s, yb_gnmi_enc *enc)
{
    if (!strcasecmp(s, "json_ietf") || !strcasecmp(s, "json-ietf"))
        *enc = YB_GNMI_ENC_JSON_IETF;
    else if (!strcasecmp(s, "json"))
        *enc = YB_GNMI_ENC_JSON;
    else if (!strcasecmp(s, "ascii"))
        *enc = YB_GNMI_ENC_ASCII;
    else
        return -1;
    return 0;
}

/* Reads a whole file (at most MAX_FILE bytes) into a malloc'd,
 * NUL-terminated buffer.  Returns 0, or -1 with err naming the file. */
static int slurp(const char *path, char **out, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    while (b) {
        if (n + 1 >= cap) {
            char *nb = cap > MAX_FILE ? NULL : realloc(b, cap * 2);
            if (!nb) {
                snprintf(err, errlen, cap > MAX_FILE ? "%s: larger than %u bytes"
                                                   : "%s: out of memory",
                       path, MAX_FILE);
                free(b);
                fclose(f);
                return -1;
            }
            b = nb;
            cap *= 2;
        }
        size_t k = fread(b + n, 1, cap - 1 - n, f);
        n += k;
        if (k == 0)
            break;
    }
    if (!b || ferror(f)) {
        snprintf(err, errlen, "%s: %s", path, b ? "read error" : "out of memory");
        free(b);
        fclose(f);
        return -1;
    }
    fclose(f);
    b[n] = 0;
    *out = b;
    *len = n;
    return 0;
}

/* Parses a request or value file: YAML when its name ends in .yaml or .yml
 * or its text does not start with '{' or '[', else JSON.  Returns a new
 * value or NULL with err naming the file (and line). */
static json_t *load_doc(const char *path, const char *text, size_t n, char *err, size_t errlen)
{
    const char *dot = strrchr(path, '.');
    int yaml = dot && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml"));
    size_t i = strspn(text, " \t\r\n");
    if (!yaml && (i == n || (text[i] != '{' && text[i] != '[')))
        yaml = i < n; /* an empty file is a JSON error, not a YAML null */
    if (yaml)
        return yb_yaml_to_json(path, (const uint8_t *)text, n, err, errlen);
    json_error_t je;
    json_t *j = json_loadb(text, n, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
    if (!j)
        snprintf(err, errlen, "%s:%d:%d: invalid JSON: %s", path, je.line, je.column, je.text);
    return j;
}

typedef struct {
    const char *file; /* the request file, for messages and value-file paths */
    yb_gnmi_enc def_enc;
    char *err;
    size_t errlen;
} ctx;

static int check_path(ctx *c, const char *where, const json_t *p)
{
    if (!json_is_string(p)) {
        snprintf(c->err, c->errlen, "%s: %s: must be a gNMI path string (\"/a/b[k=v]\")", c->file,
               where);
        return -1;
    }
    return 0;
}

/* The value of one item: the "value" key, or the contents of the file
 * named by "value-file" (JSON, or text for ascii).  Returns a new reference
 * or NULL with err. */
static json_t *item_value(ctx *c, const char *where, const json_t *item, yb_gnmi_enc enc)
{
    const json_t *v = json_object_get(item, "value"), *vf = json_object_get(item, "value-file");
    if (v && vf) {
        snprintf(c->err, c->errlen, "%s: %s: give \"value\" or \"value-file\", not both", c->file,
               where);
        return NULL;
    }
    if (v) {
        if (enc == YB_GNMI_ENC_ASCII && !json_is_string(v)) {
            snprintf(c->err, c->errlen, "%s: %s.value: an ascii value must be a string", c->file,
                   where);
            return NULL;
        }
        return json_incref((json_t *)v);
    }
    if (!vf) {
        snprintf(c->err, c->errlen, "%s: %s: missing \"value\" (or \"value-file\")", c->file, where);
        return NULL;
    }
    if (!json_is_string(vf) || !json_string_length(vf) ||
        strlen(json_string_value(vf)) != json_string_length(vf)) {
        snprintf(c->err, c->errlen, "%s: %s.value-file: must be a file name", c->file, where);
        return NULL;
    }
    /* A relative name is taken next to the request file. */
    const char *name = json_string_value(vf);
    const char *slash = strrchr(c->file, '/');
    size_t dl = name[0] != '/' && slash ? (size_t)(slash - c->file) + 1 : 0;
    char *full = malloc(dl + strlen(name) + 1);
    if (!full) {
        snprintf(c->err, c->errlen, "out of memory");
        return NULL;
    }
    memcpy(full, c->file, dl);
    memcpy(full + dl, name, strlen(name) + 1);
    char *text = NULL, sub[400];
    size_t n = 0;
    json_t *out = NULL;
    if (slurp(full, &text, &n, sub, sizeof sub) < 0) {
        snprintf(c->err, c->errlen, "%s: %s.value-file: %s", c->file, where, sub);
    } else if (enc == YB_GNMI_ENC_ASCII) {
        if (strlen(text) != n || !(out = json_stringn(text, n)))
            snprintf(c->err, c->errlen, "%s: %s.value-file: %s is not text (NUL bytes or invalid "
                                      "UTF-8)", c->file, where, full);
    } else if (!(out = load_doc(full, text, n, sub, sizeof sub))) {
        snprintf(c->err, c->errlen, "%s: %s.value-file: %s", c->file, where, sub);
    }
    free(text);
    free(full);
    return out;
}

/* Turns one request-file item into an Update of the decoded form
 * ({"path": ..., "val": {"json_ietf_val": ...}}).  Returns a new object or
 * NULL with err. */
static json_t *item_update(ctx *c, const char *list, size_t i, const json_t *item)
{
    char where[80];
    snprintf(where, sizeof where, "%s[%zu]", list, i);
    if (!json_is_object(item)) {
        snprintf(c->err, c->errlen, "%s: %s: must be an object {\"path\", \"value\", \"encoding\"}",
               c->file, where);
        return NULL;
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)item, k, v)
    {
        if (strcmp(k, "path") && strcmp(k, "value") && strcmp(k, "value-file") &&
            strcmp(k, "encoding")) {
            snprintf(c->err, c->errlen, "%s: %s: unknown key \"%s\" (path, value, value-file, "
                                      "encoding)", c->file, where, k);
            return NULL;
        }
    }
    char pw[96];
    snprintf(pw, sizeof pw, "%s.path", where);
    const json_t *path = json_object_get(item, "path");
    if (!path) {
        snprintf(c->err, c->errlen, "%s: %s: missing \"path\"", c->file, where);
        return NULL;
    }
    if (check_path(c, pw, path))
        return NULL;
    yb_gnmi_enc enc = c->def_enc;
    const json_t *e = json_object_get(item, "encoding");
    if (e && (!json_is_string(e) || yb_gnmi_enc_parse(json_string_value(e), &enc) < 0)) {
        snprintf(c->err, c->errlen, "%s: %s.encoding: must be json_ietf, json or ascii", c->file,
               where);
        return NULL;
    }
    json_t *value = item_value(c, where, item, enc);
    if (!value)
        return NULL;
    static const char *const keys[] = {"json_ietf_val", "json_val", "ascii_val"};
    json_t *val = json_object(), *u = json_object();
    if (!val || !u || json_object_set_new(val, keys[enc], value) ||
        json_object_set(u, "path", (json_t *)path) || json_object_set_new(u, "val", val)) {
        json_decref(u);
        snprintf(c->err, c->errlen, "out of memory");
        return NULL;
    }
    return u;
}

/* Adds the items of the request file's list (e.g. "updates") to msg[key]. */
static int add_updates(ctx *c, const json_t *file, const char *list, json_t *msg, const char *key)
{
    const json_t *items = json_object_get(file, list);
    if (!items)
        return 0;
    if (!json_is_array(items)) {
        snprintf(c->err, c->errlen, "%s: %s: must be an array", c->file, list);
        return -1;
    }
    json_t *arr = json_array();
    if (!arr || json_object_set_new(msg, key, arr)) {
        snprintf(c->err, c->errlen, "out of memory");
        return -1;
    }
    size_t i;
    json_t *item;
    json_array_foreach(items, i, item)
    {
        json_t *u = item_update(c, list, i, item);
        if (!u || json_array_append_new(arr, u))
            return -1;
    }
    return 0;
}

static json_t *build_message(ctx *c, const json_t *file)
{
    if (!json_is_object(file)) {
        snprintf(c->err, c->errlen, "%s: must be a mapping (object) of updates, replaces, "
                                  "union-replaces, deletes, prefix", c->file);
        return NULL;
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)file, k, v)
    {
        if (strcmp(k, "prefix") && strcmp(k, "updates") && strcmp(k, "replaces") &&
            strcmp(k, "union-replaces") && strcmp(k, "deletes")) {
            snprintf(c->err, c->errlen, "%s: unknown key \"%s\" (prefix, updates, replaces, "
                                      "union-replaces, deletes)", c->file, k);
            return NULL;
        }
    }
    json_t *msg = json_object();
    if (!msg) {
        snprintf(c->err, c->errlen, "out of memory");
        return NULL;
    }
    const json_t *prefix = json_object_get(file, "prefix");
    const json_t *dels = json_object_get(file, "deletes");
    if (prefix && (check_path(c, "prefix", prefix) || json_object_set(msg, "prefix", (json_t *)prefix)))
        goto fail;
    if (dels) {
        size_t i;
        json_t *d;
        if (!json_is_array(dels)) {
            snprintf(c->err, c->errlen, "%s: deletes: must be an array of paths", c->file);
            goto fail;
        }
        json_array_foreach(dels, i, d)
        {
            char where[64];
            snprintf(where, sizeof where, "deletes[%zu]", i);
            if (check_path(c, where, d))
                goto fail;
        }
        if (json_object_set(msg, "delete", (json_t *)dels))
            goto fail;
    }
    if (add_updates(c, file, "replaces", msg, "replace") ||
        add_updates(c, file, "updates", msg, "update") ||
        add_updates(c, file, "union-replaces", msg, "union_replace"))
        goto fail;
    if (!json_object_size(msg)) {
        snprintf(c->err, c->errlen, "%s: no updates, replaces, union-replaces or deletes", c->file);
        goto fail;
    }
    return msg;
fail:
    json_decref(msg);
    return NULL;
}

/* Rewrites an encoder error about "[0].SetRequest.<field>[i]..." in the
 * request file's terms ("updates[i]..."). */
static void file_terms(ctx *c, const char *gerr)
{
    static const struct {
        const char *msg, *file;
    } MAP[] = {{"[0].SetRequest.update", "updates"},
               {"[0].SetRequest.replace", "replaces"},
               {"[0].SetRequest.union_replace", "union-replaces"},
               {"[0].SetRequest.delete", "deletes"},
               {"[0].SetRequest.prefix", "prefix"}};
    for (size_t i = 0; i < sizeof MAP / sizeof MAP[0]; i++) {
        size_t n = strlen(MAP[i].msg);
        if (!strncmp(gerr, MAP[i].msg, n)) {
            const char *rest = gerr + n;
            /* ".val.json_ietf_val: ..." is the item's value */
            const char *val = strstr(rest, ".val.");
            if (val && strchr(rest, ':') > val) {
                const char *after = strchr(val + 5, ':');
                snprintf(c->err, c->errlen, "%s: %s%.*s.value%s", c->file, MAP[i].file,
                       (int)(val - rest), rest, after ? after : "");
            } else {
                snprintf(c->err, c->errlen, "%s: %s%s", c->file, MAP[i].file, rest);
            }
            return;
        }
    }
    snprintf(c->err, c->errlen, "%s: %s", c->file, gerr);
}

int yb_synth_gnmi_set_body(const char *path, yb_gnmi_enc def_enc, uint8_t **body, size_t *len,
                           char *err, size_t errlen)
{
    ctx c = {path, def_enc, err, errlen};
    char *text = NULL;
    size_t n = 0;
    if (slurp(path, &text, &n, err, errlen) < 0)
        return -1;
    json_t *file = load_doc(path, text, n, err, errlen);
    free(text);
    if (!file)
        return -1;
    json_t *msg = build_message(&c, file);
    json_decref(file);
    if (!msg)
        return -1;
    json_t *wrap = json_object(), *arr = json_array();
    int rc = -1;
    char gerr[400];
    /* json_object_set_new takes msg's reference even when it fails. */
    if (!wrap || !arr || json_object_set_new(wrap, "SetRequest", json_incref(msg)) ||
        json_array_append(arr, wrap)) {
        snprintf(err, errlen, "out of memory");
    } else if (yb_gnmi_json_to_body("/gnmi.gNMI/Set", arr, body, len, gerr, sizeof gerr) < 0) {
        file_terms(&c, gerr);
    } else {
        rc = 0;
    }
    json_decref(msg);
    json_decref(wrap);
    json_decref(arr);
    return rc;
}

int yb_synth_grpc_request(yb_request *r, const char *rpc, uint8_t *body, size_t len)
{
    yb_request_take_body(r, body, len);
    int rc = yb_request_set_str(&r->method, "POST");
    rc = rc ? rc : yb_request_set_str(&r->path, rpc);
    rc = rc ? rc : yb_request_add_header(r, "content-type", "application/grpc", 16);
    rc = rc ? rc : yb_request_add_header(r, "te", "trailers", 8);
    return rc;
}
