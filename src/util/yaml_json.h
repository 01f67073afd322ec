/* YAML documents as jansson values, for inputs that users write in YAML as
 * often as in JSON (gnmic request files).  A plain scalar that JSON reads
 * as a number, true, false or null is that (integers within int64), and so
 * are ~, an empty value, Null/NULL, True/TRUE, False/FALSE (the YAML 1.2
 * core schema, without hex and octal); everything else, anything quoted or
 * tagged !!str, and every mapping key, is a string.  The input is untrusted: aliases are refused (no YAML
 * bombs), and the depth and number of nodes are capped. */
#ifndef YB_YAML_JSON_H
#define YB_YAML_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define YB_YAML_MAX_DEPTH 64
#define YB_YAML_MAX_NODES 1000000

/* Converts the single YAML document in buf[0..len) to a new JSON value
 * (caller json_decref's).  Returns NULL with err "NAME:LINE: reason" for a
 * syntax error, an alias, a duplicate or non-scalar mapping key, a value
 * JSON cannot hold (.inf, .nan, an integer beyond int64), more than one
 * document, or input over the caps. */
json_t *yb_yaml_to_json(const char *name, const uint8_t *buf, size_t len, char *err,
                        size_t errlen);

#endif
