/* Reading saved JSON reports (see reader.h). */
#include "config.h"
#include "report/reader.h"
#include "util/json_type.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    FILE *f;
    size_t total;
    int too_big;
} reader;

static size_t read_cb(void *buf, size_t len, void *ud)
{
    reader *r = ud;
    size_t n = fread(buf, 1, len, r->f);
    r->total += n;
    if (r->total > YB_REPORT_MAX_BYTES) {
        r->too_big = 1;
        return (size_t)-1;
    }
    return n;
}

json_t *yb_report_read(const char *path, const char *what, char *err, size_t errlen)
{
    reader r = {fopen(path, "rb"), 0, 0};
    if (!r.f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    json_error_t je;
    json_t *j = json_load_callback(read_cb, &r, JSON_REJECT_DUPLICATES, &je);
    int rerr = ferror(r.f);
    fclose(r.f);
    if (r.too_big) {
        json_decref(j);
        snprintf(err, errlen, "%s: larger than %u MiB: not a report %s reads", path,
                 YB_REPORT_MAX_BYTES >> 20, what);
        return NULL;
    }
    if (rerr) {
        json_decref(j);
        snprintf(err, errlen, "%s: read error", path);
        return NULL;
    }
    if (!j) {
        snprintf(err, errlen, "%s: line %d, column %d: %s", path, je.line, je.column, je.text);
        return NULL;
    }
    return j;
}

static const char *want_name(json_type want)
{
    switch (want) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_TRUE: return "a boolean";
    case JSON_INTEGER: return "an integer";
    default: return "a number";
    }
}

json_t *yb_report_member(const char *path, const json_t *o, const char *prefix, const char *key,
                         json_type want, char *err, size_t errlen)
{
    json_t *v = json_object_get(o, key);
    const char *what = want_name(want);
    if (!v) {
        snprintf(err, errlen, "%s: %s%s: missing (expected %s)", path, prefix, key, what);
        return NULL;
    }
    int ok = want == JSON_REAL ? json_is_number(v)
             : want == JSON_TRUE ? json_is_boolean(v)
                                 : json_typeof(v) == want;
    if (!ok) {
        snprintf(err, errlen, "%s: %s%s: expected %s, found %s", path, prefix, key, what,
                 yb_json_type_name(v));
        return NULL;
    }
    if ((want == JSON_REAL || want == JSON_INTEGER) && !(json_number_value(v) >= 0)) {
        snprintf(err, errlen, "%s: %s%s: expected %s >= 0, found %g", path, prefix, key, what,
                 json_number_value(v));
        return NULL;
    }
    return v;
}
