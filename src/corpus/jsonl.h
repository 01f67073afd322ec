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
/* Fills r (initialised, heap-owned) from obj.  Returns 0, or -1 with a
 * message naming the offending key in err. */
int yb_jsonl_to_request(const json_t *obj, yb_request *r, char *err, size_t errlen);

/* Returns {"yangblast_corpus": {...}} for h, or NULL on ENOMEM. */
json_t *yb_jsonl_from_header(const yb_corpus_header *h);
/* Fills h (initialised, heap-owned) from a header line.  Returns 0 or -1
 * with err. */
int yb_jsonl_to_header(const json_t *obj, yb_corpus_header *h, char *err, size_t errlen);

#endif
