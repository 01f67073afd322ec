/* yangblast corpus info|cat|import. */
#include "config.h"
#include "cli/cli.h"
#include "corpus/corpus.h"
#include "corpus/jsonl.h"
#include "util/util.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

/* ---- counting distinct values for `info` ----------------------------- */

/* Every distinct value is kept (a hash table of counts, the strings in one
 * arena), so the top ten and the number of other values are exact; past
 * TALLY_BYTES of keys a new value is no longer kept and the report says
 * ">=" (bounded memory on any corpus). */
#define TALLY_BYTES (512u << 20)

typedef struct {
    const char *key; /* in the arena; NULL = empty slot */
    uint64_t n;
    uint64_t hash;
} tally_item;

typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    char data[];
} arena_block;

typedef struct {
    tally_item *slots; /* open addressing, power-of-two size */
    size_t n, mask;
    arena_block *arena;
    size_t bytes;      /* key bytes kept */
    uint64_t other;    /* records whose value was not kept */
    int saturated;     /* some distinct values were not kept */
} tally;

static uint64_t hash_str(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

/* Copies len bytes of key into the arena; returns the copy or NULL. */
static const char *arena_dup(tally *t, const char *key, size_t len)
{
    arena_block *b = t->arena;
    if (!b || b->cap - b->used < len + 1) {
        size_t cap = len + 1 > (1u << 20) ? len + 1 : (1u << 20);
        if (!(b = malloc(sizeof *b + cap)))
            return NULL;
        b->next = t->arena;
        b->used = 0;
        b->cap = cap;
        t->arena = b;
    }
    char *p = b->data + b->used;
    memcpy(p, key, len);
    p[len] = '\0';
    b->used += len + 1;
    t->bytes += len + 1;
    return p;
}

/* Doubles the table (or makes the first one).  Returns 0 or -1. */
static int tally_grow(tally *t)
{
    size_t cap = t->slots ? 2 * (t->mask + 1) : 1024;
    tally_item *ns = calloc(cap, sizeof *ns);
    if (!ns)
        return -1;
    for (size_t i = 0; t->slots && i <= t->mask; i++) {
        if (!t->slots[i].key)
            continue;
        size_t j = (size_t)t->slots[i].hash & (cap - 1);
        while (ns[j].key)
            j = (j + 1) & (cap - 1);
        ns[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = ns;
    t->mask = cap - 1;
    return 0;
}

/* Counts key; returns 0 or -1 on ENOMEM. */
static int tally_add(tally *t, const char *key)
{
    if ((!t->slots || 2 * (t->n + 1) > t->mask + 1) && tally_grow(t))
        return -1;
    size_t len = strlen(key);
    uint64_t h = hash_str(key, len);
    size_t i = (size_t)h & t->mask;
    for (; t->slots[i].key; i = (i + 1) & t->mask)
        if (t->slots[i].hash == h && !strcmp(t->slots[i].key, key)) {
            t->slots[i].n++;
            return 0;
        }
    if (t->bytes + len + 1 > TALLY_BYTES) {
        t->other++;
        t->saturated = 1;
        return 0;
    }
    if (!(t->slots[i].key = arena_dup(t, key, len)))
        return -1;
    t->slots[i].n = 1;
    t->slots[i].hash = h;
    t->n++;
    return 0;
}

static int by_count(const void *a, const void *b)
{
    const tally_item *x = a, *y = b;
    if (x->n != y->n)
        return x->n < y->n ? 1 : -1;
    return strcmp(x->key, y->key);
}

/* Prints the limit most frequent values, then the others summed with their
 * number of distinct values.  Compacts and sorts the table (it can no
 * longer be added to). */
static void tally_print(tally *t, const char *title, size_t limit)
{
    size_t n = 0;
    for (size_t i = 0; t->slots && i <= t->mask; i++)
        if (t->slots[i].key)
            t->slots[n++] = t->slots[i];
    if (n) /* an empty tally has no array at all */
        qsort(t->slots, n, sizeof *t->slots, by_count);
    printf("%s:\n", title);
    for (size_t i = 0; i < n && i < limit; i++)
        printf("  %10" PRIu64 "  %s\n", t->slots[i].n, t->slots[i].key);
    uint64_t rest = t->other;
    for (size_t i = limit; i < n; i++)
        rest += t->slots[i].n;
    if (rest)
        printf("  %10" PRIu64 "  (%s%zu other values)\n", rest, t->saturated ? ">= " : "",
               (n > limit ? n - limit : 0) + (t->saturated ? 1 : 0));
}

static void tally_free(tally *t)
{
    while (t->arena) {
        arena_block *b = t->arena;
        t->arena = b->next;
        free(b);
    }
    free(t->slots);
}

/* Distinct connection ids, exact up to CONN_MAX. */
#define CONN_MAX (1u << 20)
typedef struct {
    uint64_t *slots; /* open addressing; value+1 stored, 0 = empty */
    size_t n;
    int saturated;
} idset;

static int idset_add(idset *s, uint64_t id)
{
    if (!s->slots && !(s->slots = calloc(2 * CONN_MAX, sizeof *s->slots)))
        return -1;
    if (s->n >= CONN_MAX) {
        s->saturated = 1;
        return 0;
    }
    size_t mask = 2 * CONN_MAX - 1, i = (size_t)(id * 0x9e3779b97f4a7c15ull) & mask;
    while (s->slots[i]) {
        if (s->slots[i] == id + 1)
            return 0;
        i = (i + 1) & mask;
    }
    s->slots[i] = id + 1;
    s->n++;
    return 0;
}

static int cmd_info(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            printf("Usage: yangblast corpus info FILE\n\n"
                   "Print record count; counts by protocol, method and path; body sizes;\n"
                   "recorded time span; number of original connections.\n");
            return YB_EXIT_OK;
        }
        return yb_usage_error("corpus info", "bad option");
    }
    if (optind + 1 != argc)
        return yb_usage_error("corpus info", "expected exactly one FILE");
    const char *path = argv[optind];
    char err[512];
    yb_corpus_reader *r = yb_corpus_reader_open(path, err, sizeof err);
    if (!r) {
        yb_errorf("%s", err);
        return YB_EXIT_USAGE;
    }
    tally protos = {0}, methods = {0}, paths = {0};
    idset conns = {0};
    uint64_t n = 0, body = 0, maxbody = 0, tmin = UINT64_MAX, tmax = 0;
    const yb_request *q;
    int rc, ret = YB_EXIT_OK;
    while ((rc = yb_corpus_reader_next(r, &q, err, sizeof err)) == 1) {
        n++;
        body += q->body_len;
        if (q->body_len > maxbody)
            maxbody = q->body_len;
        if (q->timestamp_ns < tmin)
            tmin = q->timestamp_ns;
        if (q->timestamp_ns > tmax)
            tmax = q->timestamp_ns;
        if (tally_add(&protos, yb_proto_name(q->protocol)) || tally_add(&methods, q->method) ||
            tally_add(&paths, q->path) || idset_add(&conns, q->conn_id)) {
            yb_errorf("%s: out of memory", path);
            ret = YB_EXIT_RUNTIME;
            goto out;
        }
    }
    if (rc < 0) {
        yb_errorf("%s", err);
        ret = YB_EXIT_USAGE;
        goto out;
    }
    const yb_corpus_header *h = yb_corpus_reader_header(r);
    printf("file:        %s\n", path);
    printf("format:      %u\n", h->format_version);
    printf("producer:    %s\n", h->producer);
    printf("source:      %s\n", h->source);
    printf("redactions:  ");
    for (size_t i = 0; i < h->n_redactions; i++)
        printf("%s%s", i ? ", " : "", h->redactions[i]);
    printf("%s\n", h->n_redactions ? "" : "(none)");
    printf("records:     %" PRIu64 "\n", n);
    printf("body bytes:  %" PRIu64 " total, %.1f mean, %" PRIu64 " max\n", body,
           n ? (double)body / (double)n : 0.0, maxbody);
    printf("time span:   %.6f s\n", n ? (double)(tmax - tmin) / 1e9 : 0.0);
    printf("connections: %s%zu\n", conns.saturated ? ">= " : "", conns.n);
    tally_print(&protos, "protocols", 10);
    tally_print(&methods, "methods", 10);
    tally_print(&paths, "paths", 10);
out:
    tally_free(&protos);
    tally_free(&methods);
    tally_free(&paths);
    free(conns.slots);
    yb_corpus_reader_close(r);
    return ret;
}

static int cmd_cat(int argc, char **argv)
{
    static const struct option opts[] = {{"with-header", no_argument, NULL, 'H'},
                                         {"decode", no_argument, NULL, 'd'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c, with_header = 0, decode = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "Hdh", opts, NULL)) != -1) {
        if (c == 'H') {
            with_header = 1;
            continue;
        }
        if (c == 'd') {
            decode = 1;
            continue;
        }
        if (c == 'h') {
            printf("Usage: yangblast corpus cat [--with-header] [--decode] FILE\n\n"
                   "Print one JSON object per record (see yangblast-corpus(5)).  With\n"
                   "--with-header, the first line carries the corpus header.  With\n"
                   "--decode, gNMI bodies are printed as their messages (\"grpc\", paths as\n"
                   "/a/b[k=v], JSON values inline) whenever that form imports back to\n"
                   "the same bytes; other bodies stay as they are, with \"grpc\": null and\n"
                   "the reason in \"grpc_raw_reason\".\n");
            return YB_EXIT_OK;
        }
        return yb_usage_error("corpus cat", "bad option");
    }
    if (optind + 1 != argc)
        return yb_usage_error("corpus cat", "expected exactly one FILE");
    char err[512];
    yb_corpus_reader *r = yb_corpus_reader_open(argv[optind], err, sizeof err);
    if (!r) {
        yb_errorf("%s", err);
        return YB_EXIT_USAGE;
    }
    int ret = YB_EXIT_OK, rc;
    if (with_header) {
        json_t *j = yb_jsonl_from_header(yb_corpus_reader_header(r));
        if (!j || json_dumpf(j, stdout, JSON_COMPACT) < 0) {
            json_decref(j);
            yb_errorf("%s: cannot print header", argv[optind]);
            yb_corpus_reader_close(r);
            return YB_EXIT_RUNTIME;
        }
        json_decref(j);
        putchar('\n');
    }
    const yb_request *q;
    while ((rc = yb_corpus_reader_next(r, &q, err, sizeof err)) == 1) {
        json_t *j = decode ? yb_jsonl_from_request_decoded(q) : yb_jsonl_from_request(q);
        if (!j || json_dumpf(j, stdout, JSON_COMPACT) < 0) {
            json_decref(j);
            yb_errorf("%s: cannot print record %" PRIu64, argv[optind],
                      yb_corpus_reader_index(r) - 1);
            ret = YB_EXIT_RUNTIME;
            break;
        }
        json_decref(j);
        putchar('\n');
    }
    if (rc < 0) {
        yb_errorf("%s", err);
        ret = YB_EXIT_USAGE;
    }
    if (fflush(stdout) != 0 && ret == YB_EXIT_OK) {
        yb_errorf("write error on standard output");
        ret = YB_EXIT_RUNTIME;
    }
    yb_corpus_reader_close(r);
    return ret;
}

/* Reads one line of any length into *buf.  Returns its length, or -1 at
 * EOF; -2 when longer than max. */
static ssize_t read_line(FILE *f, char **buf, size_t *cap, size_t max)
{
    ssize_t n = getline(buf, cap, f);
    if (n < 0)
        return -1;
    if ((size_t)n > max)
        return -2;
    return n;
}

#define REFUSED_SHOWN 20 /* refused lines named one by one */

static int cmd_import(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *out = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        if (c == 'o') {
            out = optarg;
            continue;
        }
        if (c == 'h') {
            printf("Usage: yangblast corpus import [FILE] -o OUT\n\n"
                   "Read JSON lines (as printed by 'corpus cat', '-' or no FILE = stdin)\n"
                   "and write the corpus OUT.  A first line with a \"%s\" key\n"
                   "sets the header's source and redactions.\n",
                   YB_JSONL_HEADER_KEY);
            return YB_EXIT_OK;
        }
        return yb_usage_error("corpus import", "bad option");
    }
    if (!out)
        return yb_usage_error("corpus import", "missing -o OUT");
    if (optind + 1 < argc)
        return yb_usage_error("corpus import", "expected at most one FILE");
    const char *in = optind < argc ? argv[optind] : "-";
    FILE *f = strcmp(in, "-") ? fopen(in, "r") : stdin;
    if (!f) {
        yb_errorf("%s: cannot open: %s", in, strerror(errno));
        return YB_EXIT_USAGE;
    }
    char *line = NULL, err[512], lerr[400];
    size_t cap = 0, lineno = 0, refused = 0;
    ssize_t n;
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    yb_corpus_writer *w = NULL;
    int ret = YB_EXIT_OK;
    /* Every refused line is named (up to REFUSED_SHOWN of them), so one
     * pass shows all that must be fixed; then nothing is written. */
    while ((n = read_line(f, &line, &cap, YB_CORPUS_MAX_ENTRY * 2u)) != -1) {
        lineno++;
        if (n == -2) {
            yb_errorf("%s:%zu: line too long", in, lineno);
            ret = YB_EXIT_USAGE;
            break;
        }
        yb_request q;
        yb_request_init(&q);
        int rc = yb_jsonl_parse_line(line, (size_t)n, lineno == 1, &q, &h, lerr, sizeof lerr);
        if (rc == YB_JSONL_RECORD && !refused && !w) {
            /* A header line restates the header, producer included, so that
             * `cat --with-header | import` gives back the same file. */
            if ((!*h.source && yb_request_set_str(&h.source, "corpus import")) ||
                (!*h.producer &&
                 yb_request_set_str(&h.producer, PACKAGE_NAME " " PACKAGE_VERSION " import"))) {
                yb_request_cleanup(&q);
                yb_errorf("out of memory");
                ret = YB_EXIT_RUNTIME;
                break;
            }
            if (!(w = yb_corpus_writer_open(out, &h, err, sizeof err))) {
                yb_request_cleanup(&q);
                yb_errorf("%s", err);
                ret = YB_EXIT_USAGE;
                break;
            }
        }
        if (rc == YB_JSONL_RECORD && w && !refused) {
            int wrc = yb_corpus_writer_add(w, &q);
            if (wrc) {
                yb_request_cleanup(&q);
                yb_errorf("%s: cannot write: %s", out, strerror(-wrc));
                ret = YB_EXIT_RUNTIME;
                break;
            }
        }
        yb_request_cleanup(&q);
        if (rc < 0) {
            if (++refused <= REFUSED_SHOWN)
                yb_errorf("%s:%zu: %s", in, lineno, lerr);
            ret = YB_EXIT_USAGE;
            if (rc == -2) /* pretty-printed: every line would be refused */
                break;
        }
    }
    if (refused > REFUSED_SHOWN)
        yb_errorf("%s: %zu more lines refused", in, refused - REFUSED_SHOWN);
    if (refused)
        yb_errorf("%s: %zu line%s refused; nothing written to %s", in, refused,
                  refused == 1 ? "" : "s", out);
    if (ret == YB_EXIT_OK && ferror(f)) {
        yb_errorf("%s: read error", in);
        ret = YB_EXIT_USAGE;
    }
    if (ret == YB_EXIT_OK && !w) { /* no records: still write an empty corpus */
        if ((!*h.producer &&
             yb_request_set_str(&h.producer, PACKAGE_NAME " " PACKAGE_VERSION " import")) ||
            !(w = yb_corpus_writer_open(out, &h, err, sizeof err))) {
            yb_errorf("%s", err);
            ret = YB_EXIT_USAGE;
        }
    }
    if (w) {
        if (ret != YB_EXIT_OK) {
            yb_corpus_writer_abort(w);
        } else if (yb_corpus_writer_close(w, err, sizeof err) < 0) {
            yb_errorf("%s", err);
            ret = YB_EXIT_RUNTIME;
        }
    }
    free(line);
    yb_corpus_header_cleanup(&h);
    if (f != stdin)
        fclose(f);
    return ret;
}

int yb_cmd_corpus(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "Usage: yangblast corpus info FILE\n"
                   "       yangblast corpus cat [--with-header] [--decode] FILE\n"
                   "       yangblast corpus import [FILE] -o OUT\n"
                   "Each subcommand takes --help.\n");
        return argc < 2 ? YB_EXIT_USAGE : YB_EXIT_OK;
    }
    if (!strcmp(argv[1], "info"))
        return cmd_info(argc - 1, argv + 1);
    if (!strcmp(argv[1], "cat"))
        return cmd_cat(argc - 1, argv + 1);
    if (!strcmp(argv[1], "import"))
        return cmd_import(argc - 1, argv + 1);
    return yb_usage_error("corpus", "unknown subcommand '%s' (info, cat, import)", argv[1]);
}
