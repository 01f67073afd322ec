/* Reading JSON reports (yangblast-report(5)) back: the one reader of
 * saved reports for every command that takes them (compare, merge), with
 * messages that name the file and the key. */
#ifndef YB_REPORT_READER_H
#define YB_REPORT_READER_H

#include <jansson.h>

#define YB_REPORT_MAX_BYTES (256u << 20) /* a report larger than this is refused */

/* Reads the JSON document at path (at most YB_REPORT_MAX_BYTES; duplicate
 * keys refused; what reads it is named by `what` in the size message,
 * e.g. "compare").  Returns the document (caller json_decref's), or NULL
 * with "PATH: line L, column C: ..." or the like in err. */
json_t *yb_report_read(const char *path, const char *what, char *err, size_t errlen);

/* The member key of object o, which must be of type want: JSON_OBJECT,
 * JSON_ARRAY, JSON_STRING, JSON_TRUE (a boolean), JSON_REAL (any number
 * >= 0) or JSON_INTEGER (an integer >= 0).  Returns it (borrowed), or
 * NULL with "PATH: PREFIXKEY: missing (expected ...)" / "expected ...,
 * found ..." in err.  prefix is the dotted path of o ("summary."). */
json_t *yb_report_member(const char *path, const json_t *o, const char *prefix, const char *key,
                         json_type want, char *err, size_t errlen);

#endif
