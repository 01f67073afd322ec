/* JSON-lines view of corpus records, for `corpus cat` and `corpus import`.
 * One JSON object per record; bodies and header values as text when they
 * are valid UTF-8, else base64 under a "_base64" key (see yangblast-corpus.5). */
#ifndef YB_JSONL_H
#define YB_JSONL_H

#include <jansson.h>
#include "corpus/corpus.h"

/* Key of the optional first line that carries the corpus header. */
#define YB_JSONL_HEADER_KEY "yangblast_corpus"

/* Returns a new JSON object for r (caller json_decref's) or NULL on ENOMEM. */
json_t *yb_jsonl_from_request(const yb_request *r);
/* Keys of the decoded gNMI form (yangblast-corpus(5)): "grpc" holds the
 * body as gNMI messages, or null when the body is kept as "body"/
 * "body_base64", with the reason under "grpc_raw_reason". */
#define YB_JSONL_GRPC_KEY "grpc"
#define YB_JSONL_GRPC_WHY_KEY "grpc_raw_reason"

/* As yb_jsonl_from_request, for `corpus cat --decode`: a gnmi record's body
 * becomes "grpc" (gnmi_json.h) when that form encodes back to exactly the
 * same bytes, else it stays with "grpc": null and the reason.  Returns a
 * new object or NULL on ENOMEM. */
json_t *yb_jsonl_from_request_decoded(const yb_request *r);
/* Fills r (initialised, heap-owned) from obj.  Returns 0, or -1 with a
 * message naming the offending key in err. */
int yb_jsonl_to_request(const json_t *obj, yb_request *r, char *err, size_t errlen);

/* Returns {"yangblast_corpus": {...}} for h, or NULL on ENOMEM. */
json_t *yb_jsonl_from_header(const yb_corpus_header *h);
/* Fills h (initialised, heap-owned) from a header line.  Returns 0 or -1
 * with err. */
int yb_jsonl_to_header(const json_t *obj, yb_corpus_header *h, char *err, size_t errlen);

/* What one line of JSON-lines input was (yb_jsonl_parse_line). */
enum { YB_JSONL_BLANK = 0, YB_JSONL_RECORD = 1, YB_JSONL_HEADER = 2 };
/* Parses one line of `corpus import` input (n bytes): a record into r
 * (initialised, heap-owned) that the corpus writer accepts, or, when
 * header_ok, a header line into h.  Returns YB_JSONL_BLANK, _RECORD or
 * _HEADER; -1 with a message naming the offending key in err; -2 when the
 * line looks like a piece of pretty-printed JSON (err then says to convert
 * the input with `jq -c`). */
int yb_jsonl_parse_line(const char *line, size_t n, int header_ok, yb_request *r,
                        yb_corpus_header *h, char *err, size_t errlen);

#endif
