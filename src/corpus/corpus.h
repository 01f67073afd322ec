/* yangblast corpus: the request record model and the streaming .ybc
 * reader/writer.  This is the only module that knows the file format
 * (see man/yangblast-corpus.5 and corpus.proto).
 *
 * Memory: the reader and writer hold one record and one zstd window at a
 * time, so corpora larger than RAM stream through in bounded memory. */
#ifndef YB_CORPUS_H
#define YB_CORPUS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define YB_CORPUS_FORMAT_VERSION 1
/* Format 2: the records' entries in blocks, each a skeleton (every run
 * of digits replaced by one '0') and the digits apart, which compress far
 * better separately; written at level 1 and at levels
 * YB_CORPUS_SPLIT_LEVEL and above.
 * The newest format this reader reads. */
#define YB_CORPUS_FORMAT_SPLIT 2
#define YB_CORPUS_FORMAT_NEWEST 2
/* Largest single entry accepted by the reader (and produced by the writer). */
#define YB_CORPUS_MAX_ENTRY (64u * 1024u * 1024u)

typedef enum {
    YB_PROTO_UNSPECIFIED = 0,
    YB_PROTO_RESTCONF = 1, /* RESTCONF over HTTP/1.1 */
    YB_PROTO_GNMI = 2,     /* gNMI: gRPC over HTTP/2 */
    YB_PROTO_HTTP1 = 3,    /* other HTTP/1.1 */
    YB_PROTO_HTTP2 = 4,    /* other HTTP/2 (incl. other gRPC services) */
} yb_proto;

/* Returns a static lower-case name ("restconf", "gnmi", "http1", "http2",
 * "unspecified"). */
const char *yb_proto_name(yb_proto p);
/* Parses a name as printed by yb_proto_name; returns 0 or -1. */
int yb_proto_parse(const char *name, yb_proto *out);
/* Returns 1 when records of this protocol travel over HTTP/2, else 0. */
int yb_proto_is_h2(yb_proto p);

typedef struct {
    char *name;          /* NUL-terminated, lower case on the wire for h2 */
    uint8_t *value;      /* not NUL-terminated in general */
    size_t value_len;
} yb_header;

/* Most accepted statuses a record lists (of each kind). */
#define YB_REQUEST_MAX_ACCEPT 16

typedef struct {
    yb_proto protocol;
    char *method, *scheme, *authority, *path;   /* NUL-terminated, never NULL */
    yb_header *headers;
    size_t n_headers;
    uint8_t *body;
    size_t body_len;
    uint64_t timestamp_ns;    /* relative to the first record */
    uint64_t conn_id;
    uint32_t conn_order;
    uint32_t expected_status; /* 0 = unknown */
    int32_t expected_grpc;    /* -1 = unknown, else gRPC status code */
    int templated;            /* 1: path, header values and body are templates
                               * (tmpl/tmpl.h), filled per request */
    /* Statuses that count as success for this record besides the run's
     * rule (--accept, --accept-grpc add to them): HTTP statuses 100..999
     * and gRPC codes 0..16, each list at most YB_REQUEST_MAX_ACCEPT long
     * (a count above it, as read from a file, makes the record invalid). */
    uint16_t accept_status[YB_REQUEST_MAX_ACCEPT];
    size_t n_accept_status;
    uint16_t accept_grpc[YB_REQUEST_MAX_ACCEPT];
    size_t n_accept_grpc;
    uint32_t chain;           /* >= 2: the first of a chain of this many records
                               * (itself and the chain - 1 after it), each sent
                               * when the one before it completed; 0 = none */
} yb_request;

/* Most records in one chain (yb_request.chain). */
#define YB_CHAIN_MAX 64

/* The value a redacted credential is replaced with (capture); the header's
 * redactions list names the headers that hold it. */
#define YB_CORPUS_REDACTED "<redacted>"

typedef struct {
    uint32_t format_version;
    uint64_t created_unix_ns;
    char *producer;          /* never NULL */
    char *source;            /* never NULL */
    char **redactions;
    size_t n_redactions;
    unsigned level;          /* zstd level of the records, YB_CORPUS_LEVEL_MIN..MAX;
                              * 0 = YB_CORPUS_LEVEL_DEFAULT (and from files
                              * that do not say).  Recorded so that a rewrite
                              * (cat --with-header | import) gives the same file */
} yb_corpus_header;

/* ---- record helpers (heap-owned records, used by importers/synth) ---- */

/* Zeroes *r and sets string fields to "" and expected_grpc to -1. */
void yb_request_init(yb_request *r);
/* Frees everything r owns and re-initialises it. */
void yb_request_cleanup(yb_request *r);
/* Sets *dst (owned by r) to a copy of s; returns 0 or -ENOMEM. */
int yb_request_set_str(char **dst, const char *s);
/* Appends a header (copies name and value); returns 0 or -ENOMEM. */
int yb_request_add_header(yb_request *r, const char *name,
                          const void *value, size_t value_len);
/* Replaces the body with a copy; returns 0 or -ENOMEM. */
int yb_request_set_body(yb_request *r, const void *body, size_t len);
/* Takes ownership of a malloc'd body. */
void yb_request_take_body(yb_request *r, uint8_t *body, size_t len);
/* Makes dst (overwritten, not cleaned up first) a heap-owned deep copy of
 * src.  Returns 0 or -ENOMEM (dst then initialised). */
int yb_request_copy(yb_request *dst, const yb_request *src);
/* Returns 1 when s is a non-empty HTTP token (RFC 9110 tchar*), else 0. */
int yb_http_token_ok(const char *s);
/* Returns NULL when r can be written to a corpus, else a static
 * description of the first problem (a method or header name that is not an
 * HTTP token, spaces or control characters in scheme, authority or path, CR,
 * LF or NUL in a header value, a status over 999, a body too large for one
 * entry).  The writer refuses such records, and the reader reports them as
 * invalid, so a corpus can never smuggle one request into another on the
 * wire; importers call this first to skip a record instead of failing. */
const char *yb_request_problem(const yb_request *r);
/* The same, and sets *key to the record field at fault ("method", "scheme",
 * "authority", "path", "headers", "expected_status" or "body"; NULL when
 * there is no problem) and *header to the header's index for "headers". */
const char *yb_request_problem_key(const yb_request *r, const char **key, size_t *header);
/* Returns 1 when a and b are equal field for field, else 0. */
int yb_request_equal(const yb_request *a, const yb_request *b);

void yb_corpus_header_init(yb_corpus_header *h);
void yb_corpus_header_cleanup(yb_corpus_header *h);
/* Adds a redaction name unless already listed; returns 0 or -ENOMEM. */
int yb_corpus_header_add_redaction(yb_corpus_header *h, const char *name);

/* ---- writer ---- */

typedef struct yb_corpus_writer yb_corpus_writer;

/* Opens PATH for writing through yb_outfile: a regular file's data goes
 * to a temporary file beside it (.PATH.XXXXXX) that yb_corpus_writer_close
 * renames into place (a symbolic link is followed and stays a link); a
 * device, FIFO or socket is written in place; "-" writes to stdout.  The header is written immediately; a header with
 * created_unix_ns == 0 gets the current time (or SOURCE_DATE_EPOCH).  The
 * records are compressed at h->level (a level out of range is refused).
 * Returns a writer or NULL with a message in err (size errlen). */
yb_corpus_writer *yb_corpus_writer_open(const char *path,
                                        const yb_corpus_header *h,
                                        char *err, size_t errlen);
/* Appends a record; returns 0 or a negative errno (the writer is then
 * poisoned and close will discard the file). */
int yb_corpus_writer_add(yb_corpus_writer *w, const yb_request *r);
/* The same for a record the caller has just had yb_request_problem
 * accept (capture, which skips and counts the records that fail it): r is
 * not checked again.  Passing any other record breaks the corpus format's
 * promise that a record cannot smuggle a request onto the wire. */
int yb_corpus_writer_add_checked(yb_corpus_writer *w, const yb_request *r);
/* The same for a record whose body comes split as format 2 keeps it
 * (see yangblast-corpus(5), DIGITS APART): r->body_len is the body's
 * length (r->body is not read), skel[0..sn) its skeleton (each run of
 * digits one '0') and dig[0..dn) its runs of digits, each followed by
 * ','.  A writer of format 2 gathers the parts as they are, so a
 * producer that knows where its digits go spares the writer splitting
 * them; other writers join them.  The records read back are those
 * yb_corpus_writer_add would write for the joined body, the file's bytes
 * too.  Returns 0 or a negative errno (-EINVAL also for parts that do not
 * make body_len bytes, or an empty body: then use yb_corpus_writer_add). */
int yb_corpus_writer_add_split(yb_corpus_writer *w, const yb_request *r, const uint8_t *skel,
                               size_t sn, const uint8_t *dig, size_t dn);
/* Returns 1 when w writes format 2 (its level keeps the digits apart),
 * where yb_corpus_writer_add_split gathers the parts as they come, else 0
 * (it joins them first: yb_corpus_writer_add is as cheap). */
int yb_corpus_writer_splits(const yb_corpus_writer *w);
/* Splits b[0..n) into the parts yb_corpus_writer_add_split takes: each
 * run of digits one '0' in skel, itself and a ',' in dig.  skel needs
 * room for n bytes, dig for 2n.  Sets *sn and *dn.  For a producer whose
 * body (or a part of it) is the same from record to record: split once,
 * added many times. */
void yb_corpus_split(const uint8_t *b, size_t n, uint8_t *skel, size_t *sn, uint8_t *dig,
                     size_t *dn);
/* zstd compression levels a writer accepts (yb_corpus_header.level), and
 * the one it uses unless told (see bench/corpus_size.sh for what they cost
 * and give). */
#define YB_CORPUS_LEVEL_MIN 1u
#define YB_CORPUS_LEVEL_MAX 19u
#define YB_CORPUS_LEVEL_DEFAULT 3u
#define YB_CORPUS_SPLIT_LEVEL 10u
/* Copies the records and trailer of the corpus at `from` (made by this
 * writer: the magic and header end its first zstd frame) after w's
 * header, as they are, without decompressing them: a corpus gets a new
 * header for the price of a file copy.  Only close or abort may follow.
 * Returns 0, or -1 with a message in err (the writer is then poisoned). */
int yb_corpus_writer_splice(yb_corpus_writer *w, const char *from, char *err, size_t errlen);
/* At level 1 a writer compresses each block of records (format 2) as
 * zstd frames of its own, in one worker thread while the caller makes
 * the next records; this sets n such threads (1..YB_CORPUS_THREADS_MAX;
 * started at the first full block, as many as the system gives: with
 * none, the caller's thread compresses; with threads, the caller's
 * thread compresses a block itself when one is already waiting for
 * them, so it works rather than waits).  The file's bytes are the same
 * whatever n (a frame depends only on its block).  At other levels the
 * records are compressed in the caller's thread and this does nothing.
 * A thread costs a few MB of memory.  Call before the first record.
 * Returns 0; -EINVAL after a record or a splice or for n out of range. */
int yb_corpus_writer_set_threads(yb_corpus_writer *w, unsigned n);
#define YB_CORPUS_THREADS_MAX 64u
/* Blocks made apart (level 1): records gathered and compressed in the
 * thread that makes them (their bytes still in its CPU's cache; several
 * threads each making blocks of their own), then added to a writer in
 * order.  A block is one block of format 2 (yangblast-corpus(5), DIGITS
 * APART) of whatever records it holds, at most 1 MiB plus 64 MiB of them;
 * its frames depend only on its records, so a file made of the same
 * blocks is the same whichever thread made each.
 * yb_corpus_block_new returns an empty block or NULL (out of memory);
 * free with yb_corpus_block_free.  yb_corpus_block_add and _add_split
 * take a record as yb_corpus_writer_add and _add_split do (the same
 * checks); yb_corpus_block_seal compresses the block's records (call it
 * in the thread that filled it); yb_corpus_writer_add_block writes a
 * sealed block's frames after w's records (those added to w itself before
 * it included) and counts its records in w, then empties b for the next
 * records.  Each returns 0 or a negative errno; an error poisons the
 * block (its add to a writer fails with it) or, for add_block, the writer
 * (-EINVAL also when w is not at level 1 or b not sealed). */
typedef struct yb_corpus_block yb_corpus_block;
yb_corpus_block *yb_corpus_block_new(void);
void yb_corpus_block_free(yb_corpus_block *b);
int yb_corpus_block_add(yb_corpus_block *b, const yb_request *r);
int yb_corpus_block_add_split(yb_corpus_block *b, const yb_request *r, const uint8_t *skel,
                              size_t sn, const uint8_t *dig, size_t dn);
/* Returns the number of records in b. */
uint64_t yb_corpus_block_count(const yb_corpus_block *b);
/* Whether b is as full as the writer's blocks get: the writer ends its
 * own block after the record that brings it to 1 MiB, so blocks ended
 * when this turns true (the last one adopted) make the file the writer
 * makes of the same records, byte for byte. */
int yb_corpus_block_full(const yb_corpus_block *b);
/* Empties b (a poisoned one too) for other records. */
void yb_corpus_block_clear(yb_corpus_block *b);
int yb_corpus_block_seal(yb_corpus_block *b);
int yb_corpus_writer_add_block(yb_corpus_writer *w, yb_corpus_block *b);
/* Makes the records of b, not sealed, the ones w is gathering (its block
 * held none): w goes on from them as if they had been added to it (the
 * trailer joins them at close), and b is emptied.  Returns 0 or a
 * negative errno (as add_block's). */
int yb_corpus_writer_adopt(yb_corpus_writer *w, yb_corpus_block *b);
/* Returns the number of records added so far. */
uint64_t yb_corpus_writer_count(const yb_corpus_writer *w);
/* Writes the trailer, flushes, fsyncs and renames into place.  Returns 0;
 * or a negative errno with a message in err, in which case nothing exists
 * under the final name that was not there before.  Frees w. */
int yb_corpus_writer_close(yb_corpus_writer *w, char *err, size_t errlen);
/* Discards everything written (removes the temporary file); frees w. */
void yb_corpus_writer_abort(yb_corpus_writer *w);

/* ---- reader ---- */

typedef struct yb_corpus_reader yb_corpus_reader;

/* Opens a .ybc file ("-" = stdin) and reads its header.  Returns a reader
 * or NULL with a message naming the file in err. */
yb_corpus_reader *yb_corpus_reader_open(const char *path, char *err, size_t errlen);
/* Returns the header (owned by the reader). */
const yb_corpus_header *yb_corpus_reader_header(const yb_corpus_reader *r);
/* Reads the next request.  Returns 1 and sets *out (owned by the reader,
 * valid until the next call or close), 0 at the clean end of the corpus
 * (trailer seen, count matches), or -1 with a message naming the file and
 * record index in err. */
int yb_corpus_reader_next(yb_corpus_reader *r, const yb_request **out,
                          char *err, size_t errlen);
/* Rewinds to the first record (re-opens the file); returns 0 or -1 with err.
 * Not possible on stdin. */
int yb_corpus_reader_rewind(yb_corpus_reader *r, char *err, size_t errlen);
/* From now on, records come without the headers that hold the redaction
 * placeholder (named in the header's redactions list): a replay never
 * sends the placeholder. */
void yb_corpus_reader_drop_redacted(yb_corpus_reader *r);
/* From now on, every entry is decoded by protobuf-c, none by the reader's
 * own decoder of request entries (which takes only entries on which the
 * two agree): for tests and fuzz targets that compare the two. */
void yb_corpus_reader_protobuf_only(yb_corpus_reader *r);
/* What a corpus' writer knew of all its records when it closed the file:
 * enough for a run to check the corpus without reading it first. */
typedef struct {
    uint64_t count[YB_PROTO_HTTP2 + 1]; /* records per protocol (an unknown
                                         * one counts as unspecified) */
    yb_proto first;      /* the first record's protocol (unspecified: none) */
    uint64_t templated;  /* records marked templated */
    int chains_whole;    /* 1: every chain complete, none inside another */
    uint64_t units;      /* records outside chains plus chains: what a run
                          * shares out (0: not known, a file written before
                          * it was counted) */
} yb_corpus_summary;

/* Returns the summary stored at the end of the file, or NULL when there is
 * none: files written before summaries existed, and input that is not a
 * regular file (standard input, a pipe), whose end cannot be read first.
 * Owned by the reader.  It is a claim until the reader reaches the
 * trailer: yb_corpus_reader_next then fails (a corrupt corpus) when the
 * records do not match it, and when the trailer announces a summary that
 * a regular file lacks (cut short). */
const yb_corpus_summary *yb_corpus_reader_summary(const yb_corpus_reader *r);
/* Returns the index of the next record to be read. */
uint64_t yb_corpus_reader_index(const yb_corpus_reader *r);
void yb_corpus_reader_close(yb_corpus_reader *r);

/* For tests: joins a format-2 block's skeleton and digits into out as
 * the reader does, in n steps: step k joins on until stop[k] (it may pass
 * it, never cap[k]; both raised to where the join stands) and sets
 * ends[k] to where it stopped.  sse2_only: without the AVX2 code the
 * reader takes when the machine has it.  Returns the length joined when
 * the block is whole after step n - 1, -2 when it is not (yet), -1 when
 * the parts do not fit together. */
ptrdiff_t yb_corpus_join_steps(const uint8_t *skel, size_t sn, const uint8_t *dig, size_t dn,
                               uint8_t *out, const size_t *stop, const size_t *cap,
                               size_t *ends, size_t n, int sse2_only);

#endif
