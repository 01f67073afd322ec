/* libFuzzer target: JSON-lines import (`corpus import`), with a round-trip
 * oracle.
 *
 * The input is JSON-lines text, parsed line by line as `corpus import`
 * does (yb_jsonl_parse_line).  The records it accepts are written to a
 * corpus and read back: the reader must return the same records, field for
 * field, and the same header; and each record printed as `corpus cat` does
 * (and as `corpus cat --decode` does: gNMI bodies as messages, which the
 * inputs may also use) and parsed again must be the same record.  Any
 * mismatch aborts. */
#include "config.h"
#include "corpus/corpus.h"
#include "corpus/jsonl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RECORDS 64

static char path[128];

static void fail(const char *what)
{
    fprintf(stderr, "round trip mismatch: %s\n", what);
    abort();
}

/* corpus cat's printing, then import's parsing, gives the same record. */
static void json_round_trip(const yb_request *q, int decode)
{
    json_t *j = decode ? yb_jsonl_from_request_decoded(q) : yb_jsonl_from_request(q);
    if (!j)
        fail("cannot print a record as JSON");
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (!s)
        fail("cannot dump a record");
    yb_request r;
    yb_request_init(&r);
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    char err[400];
    if (yb_jsonl_parse_line(s, strlen(s), 0, &r, &h, err, sizeof err) != YB_JSONL_RECORD)
        fail(err);
    if (!yb_request_equal(q, &r))
        fail("corpus cat | corpus import changed a record");
    yb_request_cleanup(&r);
    yb_corpus_header_cleanup(&h);
    free(s);
}

static void header_same(const yb_corpus_header *a, const yb_corpus_header *b)
{
    if (strcmp(a->source, b->source) || a->n_redactions != b->n_redactions ||
        (a->created_unix_ns && a->created_unix_ns != b->created_unix_ns))
        fail("header");
    for (size_t i = 0; i < a->n_redactions; i++)
        if (strcmp(a->redactions[i], b->redactions[i]))
            fail("header redactions");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0])
        snprintf(path, sizeof path, "%s/yb-fuzz-jsonl.%d.ybc",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid());
    static yb_request recs[MAX_RECORDS];
    size_t n = 0;
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    char err[400];
    const char *p = (const char *)data, *end = p + size;
    for (size_t lineno = 1; p < end && n < MAX_RECORDS; lineno++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        yb_request_init(&recs[n]);
        int rc = yb_jsonl_parse_line(p, len, lineno == 1, &recs[n], &h, err, sizeof err);
        if (rc == YB_JSONL_RECORD) {
            if (yb_request_problem(&recs[n]))
                fail("an accepted record the writer would refuse");
            json_round_trip(&recs[n], 0);
            json_round_trip(&recs[n], 1);
            n++;
        } else {
            if (rc < 0 && !err[0])
                fail("a refused line without a message");
            yb_request_cleanup(&recs[n]);
        }
        p += len;
    }
    if (yb_request_set_str(&h.producer, "fuzz"))
        abort();
    yb_corpus_writer *w = yb_corpus_writer_open(path, &h, err, sizeof err);
    if (!w)
        fail(err);
    for (size_t i = 0; i < n; i++)
        if (yb_corpus_writer_add(w, &recs[i]))
            fail("the writer refused an accepted record");
    if (yb_corpus_writer_close(w, err, sizeof err))
        fail(err);
    yb_corpus_reader *rd = yb_corpus_reader_open(path, err, sizeof err);
    if (!rd)
        fail(err);
    header_same(&h, yb_corpus_reader_header(rd));
    const yb_request *q;
    for (size_t i = 0; i < n; i++)
        if (yb_corpus_reader_next(rd, &q, err, sizeof err) != 1 || !yb_request_equal(q, &recs[i]))
            fail("a record read back differs");
    if (yb_corpus_reader_next(rd, &q, err, sizeof err) != 0)
        fail("more records read back than written");
    yb_corpus_reader_close(rd);
    for (size_t i = 0; i < n; i++)
        yb_request_cleanup(&recs[i]);
    yb_corpus_header_cleanup(&h);
    unlink(path);
    return 0;
}
