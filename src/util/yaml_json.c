#include "config.h"
#include "util/yaml_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* The value of a plain (unquoted, untagged) scalar: numbers, true, false and
 * null are read by jansson, so they mean what they mean in JSON; the YAML
 * spellings ~, empty, Null, True, ... are added.  Returns a new value, or
 * NULL with *why set. */
static json_t *plain_scalar(const char *s, size_t n, const char **why)
{
    static const char *const NULLS[] = {"", "~", "Null", "NULL"};
    static const char *const TRUES[] = {"True", "TRUE"}, *const FALSES[] = {"False", "FALSE"};
    for (size_t i = 0; i < sizeof NULLS / sizeof NULLS[0]; i++)
        if (!strcmp(s, NULLS[i]))
            return json_null();
    for (size_t i = 0; i < 2; i++) {
        if (!strcmp(s, TRUES[i]))
            return json_true();
        if (!strcmp(s, FALSES[i]))
            return json_false();
    }
    const char *t = s + (*s == '-' || *s == '+');
    if (!strcmp(t, ".inf") || !strcmp(t, ".Inf") || !strcmp(t, ".INF") || !strcmp(s, ".nan") ||
        !strcmp(s, ".NaN") || !strcmp(s, ".NAN")) {
        *why = "infinity and NaN have no JSON form";
        return NULL;
    }
    json_error_t je;
    json_t *v = json_loadb(s, n, JSON_DECODE_ANY, &je);
    if (v && (json_is_number(v) || json_is_boolean(v) || json_is_null(v)))
        return v;
    json_decref(v);
    if (!v && strstr(je.text, "too big")) { /* jansson: "too big (negative) integer" */
        *why = "an integer beyond 64 bits";
        return NULL;
    }
    return json_stringn(s, n); /* 007, 1.2.3, yes, ... */
}

typedef struct {
    json_t *v;  /* the container (owned by its parent, or the root) */
    char *key;  /* a mapping's key waiting for its value */
} frame;

json_t *yb_yaml_to_json(const char *name, const uint8_t *buf, size_t len, char *err,
                        size_t errlen)
{
    yaml_parser_t p;
    yaml_event_t ev;
    frame st[YB_YAML_MAX_DEPTH];
    int top = -1, docs = 0, done = 0;
    size_t nodes = 0;
    json_t *root = NULL;
    const char *why = NULL;
    unsigned long line = 1;
    if (!yaml_parser_initialize(&p)) {
        snprintf(err, errlen, "%s: out of memory", name);
        return NULL;
    }
    yaml_parser_set_input_string(&p, buf, len);
    while (!done && !why) {
        if (!yaml_parser_parse(&p, &ev)) {
            snprintf(err, errlen, "%s:%lu: %s%s%s", name, (unsigned long)p.problem_mark.line + 1,
                     p.problem ? p.problem : "invalid YAML", p.context ? " " : "",
                     p.context ? p.context : "");
            goto fail;
        }
        line = (unsigned long)ev.start_mark.line + 1;
        json_t *v = NULL;
        int opens = 0;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT: done = 1; break;
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1)
                why = "more than one document";
            break;
        case YAML_ALIAS_EVENT: why = "aliases (*name) are not accepted"; break;
        case YAML_SCALAR_EVENT: {
            const char *s = (const char *)ev.data.scalar.value;
            size_t n = ev.data.scalar.length;
            const char *tag = (const char *)ev.data.scalar.tag;
            int quoted = ev.data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
                         (tag && !strcmp(tag, YAML_STR_TAG));
            int is_key = top >= 0 && json_is_object(st[top].v) && !st[top].key;
            if (quoted || is_key)
                v = json_stringn(s, n);
            else
                v = plain_scalar(s, n, &why);
            if (!v && !why)
                why = "out of memory";
            break;
        }
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            v = ev.type == YAML_SEQUENCE_START_EVENT ? json_array() : json_object();
            opens = 1;
            if (!v)
                why = "out of memory";
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT: top--; break;
        default: break;
        }
        yaml_event_delete(&ev);
        if (!v)
            continue;
        if (++nodes > YB_YAML_MAX_NODES) {
            why = "more than " "1000000" " nodes";
        } else if (opens && top + 1 >= YB_YAML_MAX_DEPTH) {
            why = "nested deeper than 64";
        } else if (top < 0) {
            root = v;
            v = NULL;
        } else if (json_is_array(st[top].v)) {
            if (json_array_append(st[top].v, v))
                why = "out of memory";
        } else if (!st[top].key) {
            /* a key: plain text whatever it looks like; a collection is no key */
            if (!json_is_string(v))
                why = "a mapping key must be a scalar";
            else if (json_object_get(st[top].v, json_string_value(v)))
                why = "duplicate mapping key";
            else if (!(st[top].key = strdup(json_string_value(v))))
                why = "out of memory";
            json_decref(v);
            continue;
        } else {
            if (json_object_set(st[top].v, st[top].key, v))
                why = "out of memory";
            free(st[top].key);
            st[top].key = NULL;
        }
        if (!why && opens) {
            top++;
            st[top].v = v ? v : root;
            st[top].key = NULL;
        }
        json_decref(v); /* the parent (or root) holds it */
    }
    if (why) {
        snprintf(err, errlen, "%s:%lu: %s", name, line, why);
        goto fail;
    }
    yaml_parser_delete(&p);
    return root ? root : json_null();
fail:
    for (; top >= 0; top--)
        free(st[top].key);
    json_decref(root);
    yaml_parser_delete(&p);
    return NULL;
}
