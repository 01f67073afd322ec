/* What kind of JSON value a jansson value is, in words, for the messages
 * of every reader of JSON input (compare, the HTML report, ...). */
#ifndef YB_JSON_TYPE_H
#define YB_JSON_TYPE_H

#include <jansson.h>

/* Returns a static phrase: "an object", "an array", "a string", "a number",
 * "a boolean" or "null". */
static inline const char *yb_json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

#endif
