/* yangblast synth acl|gnmi: write a synthesized corpus (openconfig-acl
 * workloads, or copies of the SetRequest of a gnmic-style request file). */
#include "config.h"
#include "cli/cli.h"
#include "corpus/corpus.h"
#include "synth/acl.h"
#include "synth/gnmi_req.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void help(void)
{
    printf("Usage: yangblast synth acl [OPTIONS] -o FILE\n"
           "       yangblast synth gnmi --set-request FILE [--count N] [--encoding E] -o FILE\n\n"
           "Synthesize an openconfig-acl workload: each request creates (or replaces,\n"
           "reads, deletes) one ACL set of --rules IPv4 rules with a unique name.\n\n"
           "  -o, --output FILE       corpus to write (.ybc; '-' = stdout)\n"
           "  -p, --proto P           restconf (default) or gnmi\n"
           "  -n, --count N           number of requests (default 1000)\n"
           "  -r, --rules R           rules per ACL set (default %d for restconf, %d for\n"
           "                          gnmi: ~14.5 KB of request data per request)\n"
           "  -s, --seed S            seed for rule contents (default 1)\n"
           "      --op OP             create (default), replace, delete, get;\n"
           "                          gnmi only: subscribe, capabilities\n"
           "      --method M          RESTCONF create method: PATCH (default), POST, PUT\n"
           "      --mode M            subscribe mode: once (default), poll, stream\n"
           "      --sample-interval D STREAM SAMPLE interval (default 1s)\n"
           "      --polls N           POLL: Poll messages after the request (default 3)\n"
           "      --name-prefix P     ACL set names P_000001... (default YB_ACL)\n"
           "      --unique            names P_000001_{{iter}}...: templated records whose\n"
           "                          sets never collide across passes over the corpus\n"
           "      --lifecycle         per set a chain of create, get, delete run in order\n"
           "                          on one session (the store ends as it began)\n"
           "      --authority HOST    recorded authority / Host (default localhost)\n"
           "      --scheme S          recorded scheme: https (default) or http\n"
           "      --level L           zstd level of the records, 1..19 (default 1: on\n"
           "                          these records faster and smaller than 3)\n"
           "  -h, --help              this help\n\n"
           "synth gnmi writes --count (default 1) copies of the gNMI SetRequest described\n"
           "by a gnmic-style request file (YAML or JSON: \"updates\", \"replaces\",\n"
           "\"union-replaces\" as [{\"path\", \"value\" or \"value-file\", \"encoding\"}],\n"
           "\"deletes\" as [path], optional \"prefix\"; see yangblast(1)).\n"
           "      --set-request FILE  the request file\n"
           "      --encoding E        encoding of items without one: json_ietf (default),\n"
           "                          json or ascii\n"
           "  -n, --count, --authority, --scheme, --level, -o as above\n",
           YB_SYNTH_DEFAULT_RULES_RESTCONF, YB_SYNTH_DEFAULT_RULES_GNMI);
}

static const char *const OP_NAMES[] = {"create", "replace", "delete", "get", "subscribe",
                                       "capabilities"};

static int parse_op(const char *s, yb_synth_op *op)
{
    for (size_t i = 0; i < sizeof OP_NAMES / sizeof OP_NAMES[0]; i++)
        if (!strcmp(s, OP_NAMES[i])) {
            *op = (yb_synth_op)i;
            return 0;
        }
    return -1;
}

/* Most zstd threads synth gnmi starts (synth acl makes and compresses
 * its blocks in threads of its own: make_all): this thread makes an ACL
 * record in about 4 us, a zstd thread compresses one (14.5 KB at level 1,
 * its digits apart) in about 5 us, so two keep up with it; more would
 * only cost memory. */
#define SYNTH_ZSTD_THREADS 2

/* Compresses w's records in worker threads, one per CPU besides this
 * thread's, at least one and up to SYNTH_ZSTD_THREADS (the writer's
 * default is one); the writer has this thread compress a block too when
 * the threads lag.  One thread per CPU would have the scheduler share
 * this thread's CPU with them (on 2 CPUs: 1M records in 6.1 s instead
 * of 5.2, bench/corpus_size.sh).  The file's bytes do not depend on the
 * count.  Should threads be refused, the writer stays as it was (the
 * same records). */
static void compress_aside(yb_corpus_writer *w)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN) - 1;
    n = n < 1 ? 1 : n > SYNTH_ZSTD_THREADS ? SYNTH_ZSTD_THREADS : n;
    (void)yb_corpus_writer_set_threads(w, (unsigned)n);
}

/* ---- level 1: records made by several threads, a block each ---- */

/* Most threads making records. */
#define SYNTH_MAKERS 8
/* Blocks being made, or made and waiting to be written, at most, with n
 * threads: one each, and as many again made while an older block is
 * still being compressed (a thread goes on to the next block rather than
 * wait), and two.  Each keeps its parts, its frames and its zstd
 * contexts (synth acl -n 1000000 peaks at 16 MB of RSS on 2 CPUs). */
#define SYNTH_BLOCKS(n) (2 * (n) + 2)

/* The CPUs this process may run on (taskset(1) gives fewer). */
static unsigned cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (unsigned)n;
}

/* A block made (gathered, then sealed) or being made. */
typedef struct {
    yb_corpus_block *b;
    uint64_t start, n; /* its records */
    int done;          /* made: its turn to be written may come */
} job;

/* The records: record i (of total) is request i / steps, step i % steps;
 * written through w in this thread (make_serial) or, at level 1, in
 * blocks made by several threads (make_all, the rest of the fields).
 * Blocks end where the writer ends its own (yb_corpus_block_full: after
 * the record that brings one to 1 MiB), so a block's first record is
 * known once the one before it is gathered: one thread gathers at a
 * time, in block order, and compresses what it gathered while the next
 * thread gathers the next block. */
typedef struct {
    const yb_synth_acl_opts *o;
    const yb_synth_op *life; /* the steps' operations, or NULL */
    unsigned steps;
    uint64_t total;
    yb_corpus_writer *w;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t next_job, next_write; /* blocks */
    uint64_t next_start;           /* the next block's first record */
    int gathering;                 /* a thread gathers a block */
    int rc;                        /* the first failure */
    uint64_t bad;                  /* its request */
    /* block objects: spare, or in a job (jobs[j % njobs] is block j's) */
    yb_corpus_block *spare[SYNTH_BLOCKS(SYNTH_MAKERS)];
    job jobs[SYNTH_BLOCKS(SYNTH_MAKERS)];
    unsigned nspare, njobs, made;
} makers;

/* Makes record i (o: this thread's copy of m->o; sp: its scratch) and
 * adds it to b, or to m->w when b is NULL; bodies come split as the
 * corpus keeps them (format 2), so the writer need not look for their
 * digits.  Returns 0 or a negative errno. */
static int add_record(const makers *m, yb_synth_acl_opts *o, uint64_t i, yb_synth_split *sp,
                      yb_corpus_block *b)
{
    yb_request r;
    yb_request_init(&r);
    if (m->life)
        o->op = m->life[i % m->steps];
    int rc = yb_synth_acl_request_split(o, i / m->steps, &r, sp);
    r.conn_order = (uint32_t)i;
    if (m->steps > 1 && i % m->steps == 0)
        r.chain = m->steps;
    const uint8_t *skel = (const uint8_t *)sp->skel, *dig = (const uint8_t *)sp->dig;
    if (rc == 1)
        rc = b ? yb_corpus_block_add_split(b, &r, skel, sp->sn, dig, sp->dn)
               : yb_corpus_writer_add_split(m->w, &r, skel, sp->sn, dig, sp->dn);
    else if (!rc)
        rc = b ? yb_corpus_block_add(b, &r) : yb_corpus_writer_add(m->w, &r);
    yb_request_cleanup(&r);
    return rc;
}

/* Gathers the records from jb->start into jb->b until it is full or
 * they end; sets jb->n.  Returns 0 or a negative errno with *bad the
 * request. */
static int gather(const makers *m, yb_synth_acl_opts *o, job *jb, yb_synth_split *sp,
                  uint64_t *bad)
{
    jb->n = 0;
    for (uint64_t i = jb->start; i < m->total && !yb_corpus_block_full(jb->b); i++) {
        int rc = add_record(m, o, i, sp, jb->b);
        if (rc) {
            *bad = i / m->steps;
            return rc;
        }
        jb->n++;
    }
    return 0;
}

/* Records failure rc at request bad (the first one counts). */
static void failed(makers *m, int rc, uint64_t bad)
{
    if (!m->rc) {
        m->rc = rc;
        m->bad = bad;
    }
    pthread_cond_broadcast(&m->cv);
}

/* Writes the made blocks whose turn it is, in order (under mu): a full
 * one as its frames, the last (not full) adopted by the writer, which
 * adds the trailer to it. */
static void write_ready(makers *m)
{
    for (;;) {
        job *jb = &m->jobs[m->next_write % m->njobs];
        if (m->rc || m->next_write >= m->next_job || !jb->done)
            return;
        int rc = yb_corpus_block_full(jb->b) ? yb_corpus_writer_add_block(m->w, jb->b)
                                              : yb_corpus_writer_adopt(m->w, jb->b);
        if (rc) {
            failed(m, rc, jb->start / m->steps);
            return;
        }
        m->spare[m->nspare++] = jb->b;
        jb->b = NULL;
        jb->done = 0;
        m->next_write++;
        pthread_cond_broadcast(&m->cv);
    }
}

/* Takes the next block to gather (under mu): waits for the turn and for
 * a block object (each may be waiting to be written).  Returns its job,
 * or NULL once the records are all taken or one failed. */
static job *take_job(makers *m)
{
    while (!m->rc && m->next_start < m->total &&
           (m->gathering || (!m->nspare && m->made == m->njobs) ||
            m->next_job - m->next_write >= m->njobs))
        pthread_cond_wait(&m->cv, &m->mu);
    if (m->rc || m->next_start >= m->total)
        return NULL;
    yb_corpus_block *b = NULL;
    if (m->nspare) {
        b = m->spare[--m->nspare];
    } else if ((b = yb_corpus_block_new())) {
        m->made++;
    } else {
        failed(m, -ENOMEM, m->next_start / m->steps);
        return NULL;
    }
    job *jb = &m->jobs[m->next_job++ % m->njobs];
    jb->b = b;
    jb->start = m->next_start;
    jb->done = 0;
    m->gathering = 1;
    return jb;
}

/* A thread making records: takes the next block, gathers it, lets the
 * next thread gather, compresses its block, and writes it and those
 * after it if the ones before it are written (else the thread writing
 * the one before does). */
static void *maker(void *arg)
{
    makers *m = arg;
    yb_synth_acl_opts o = *m->o;
    yb_synth_split sp = {0};
    pthread_mutex_lock(&m->mu);
    job *jb;
    while ((jb = take_job(m))) {
        pthread_mutex_unlock(&m->mu);
        uint64_t bad = 0;
        int rc = gather(m, &o, jb, &sp, &bad);
        pthread_mutex_lock(&m->mu);
        m->gathering = 0;
        m->next_start = jb->start + jb->n;
        pthread_cond_broadcast(&m->cv);
        if (rc) {
            failed(m, rc, bad);
            break;
        }
        pthread_mutex_unlock(&m->mu);
        /* (the last block, not full, is adopted as it is: the writer
         * adds the trailer to it) */
        if (yb_corpus_block_full(jb->b))
            rc = yb_corpus_block_seal(jb->b);
        pthread_mutex_lock(&m->mu);
        if (rc) {
            failed(m, rc, jb->start / m->steps);
            break;
        }
        jb->done = 1;
        write_ready(m);
    }
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    yb_synth_split_free(&sp);
    return NULL;
}

/* Writes the total records of m at level 1: blocks of records made by
 * one thread per CPU (this one included), each block gathered and
 * compressed by the thread that makes it, so its bytes are still in
 * that CPU's cache when they are compressed (handed to another thread,
 * zstd would read them from another CPU's cache or from memory).  The blocks are the
 * writer's own, the file the one a single thread makes (and `corpus cat
 * -H | corpus import` of it).  Returns 0 or a negative errno with m->bad
 * the request. */
static int make_all(makers *m)
{
    if (pthread_mutex_init(&m->mu, NULL))
        return -ENOMEM;
    if (pthread_cond_init(&m->cv, NULL)) {
        pthread_mutex_destroy(&m->mu);
        return -ENOMEM;
    }
    unsigned n = cpus();
    n = n > SYNTH_MAKERS ? SYNTH_MAKERS : n;
    m->njobs = SYNTH_BLOCKS(n);
    pthread_t thr[SYNTH_MAKERS];
    unsigned started = 0;
    while (started + 1 < n && !pthread_create(&thr[started], NULL, maker, m))
        started++;
    maker(m); /* (and alone when no thread starts) */
    for (unsigned t = 0; t < started; t++)
        pthread_join(thr[t], NULL);
    if (!m->rc && m->next_write != m->next_job) /* (cannot happen) */
        m->rc = -EIO;
    for (unsigned i = 0; i < m->njobs; i++)
        yb_corpus_block_free(m->jobs[i].b);
    for (unsigned i = 0; i < m->nspare; i++)
        yb_corpus_block_free(m->spare[i]);
    pthread_cond_destroy(&m->cv);
    pthread_mutex_destroy(&m->mu);
    return m->rc;
}

/* Writes the total records of m through m->w, in this thread (levels
 * other than 1: one zstd stream, which threads could not share).
 * Returns 0 or a negative errno with m->bad the request. */
static int make_serial(makers *m)
{
    yb_synth_acl_opts o = *m->o;
    yb_synth_split sp = {0};
    int rc = 0;
    for (uint64_t i = 0; i < m->total && !rc; i++)
        if ((rc = add_record(m, &o, i, &sp, NULL)))
            m->bad = i / m->steps;
    yb_synth_split_free(&sp);
    return rc;
}

/* Writes count copies of the request file's SetRequest to out. */
static int synth_gnmi(const char *file, yb_gnmi_enc enc, uint64_t count, const char *authority,
                      const char *scheme, unsigned level, const char *out)
{
    char err[512];
    uint8_t *body;
    size_t len;
    if (yb_synth_gnmi_set_body(file, enc, &body, &len, err, sizeof err) < 0) {
        yb_errorf("%s", err);
        return YB_EXIT_USAGE;
    }
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    char source[600];
    snprintf(source, sizeof source, "synth gnmi --set-request %s --count %llu", file,
             (unsigned long long)count);
    h.producer = (char *)PACKAGE_NAME " " PACKAGE_VERSION " synth";
    h.source = source;
    h.level = level;
    yb_corpus_writer *w = yb_corpus_writer_open(out, &h, err, sizeof err);
    if (!w) {
        free(body);
        yb_errorf("%s", err);
        return YB_EXIT_USAGE;
    }
    compress_aside(w);
    /* every record has the same body: where the writer keeps bodies split
     * (format 2), split once and added as its parts, not copied and split
     * again per record */
    uint8_t *skel = NULL, *dig = NULL;
    size_t sn = 0, dn = 0;
    if (yb_corpus_writer_splits(w) && (skel = malloc(len + 1)) && (dig = malloc(2 * len + 1)))
        yb_corpus_split(body, len, skel, &sn, dig, &dn);
    for (uint64_t k = 0; k < count; k++) {
        yb_request r;
        yb_request_init(&r);
        r.protocol = YB_PROTO_GNMI;
        r.conn_order = (uint32_t)k;
        uint8_t *copy = dig ? NULL : malloc(len + 1);
        int rc = dig || copy ? 0 : -ENOMEM;
        if (copy)
            memcpy(copy, body, len);
        rc = rc ? rc : yb_request_set_str(&r.scheme, scheme);
        rc = rc ? rc : yb_request_set_str(&r.authority, authority);
        if (rc)
            free(copy);
        rc = rc ? rc : yb_synth_grpc_request(&r, "/gnmi.gNMI/Set", copy, copy ? len : 0);
        if (!rc && dig) {
            r.body_len = len;
            rc = yb_corpus_writer_add_split(w, &r, skel, sn, dig, dn);
        } else if (!rc) {
            rc = yb_corpus_writer_add(w, &r);
        }
        /* what the corpus refuses in the record (a body too large for an
         * entry), said as such rather than as EINVAL */
        const char *why = rc == -EINVAL ? yb_request_problem(&r) : NULL;
        yb_request_cleanup(&r);
        if (rc) { /* never leave a partial corpus behind */
            yb_corpus_writer_abort(w);
            free(body);
            free(skel);
            free(dig);
            if (why)
                yb_errorf("%s: cannot write request %llu: %s (%zu bytes)", out,
                          (unsigned long long)k, why, len);
            else
                yb_errorf("%s: cannot write request %llu: %s", out, (unsigned long long)k,
                          strerror(-rc));
            return YB_EXIT_RUNTIME;
        }
    }
    free(body);
    free(skel);
    free(dig);
    if (yb_corpus_writer_close(w, err, sizeof err) < 0) {
        yb_errorf("%s", err);
        return YB_EXIT_RUNTIME;
    }
    return YB_EXIT_OK;
}

int yb_cmd_synth(int argc, char **argv)
{
    enum {
        O_OP = 256, O_METHOD, O_MODE, O_SAMPLE, O_POLLS, O_PREFIX, O_AUTH, O_SCHEME, O_SETREQ,
        O_ENCODING, O_UNIQUE, O_LIFECYCLE, O_LEVEL, O_END
    };
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"proto", required_argument, NULL, 'p'},
        {"count", required_argument, NULL, 'n'},  {"rules", required_argument, NULL, 'r'},
        {"seed", required_argument, NULL, 's'},   {"op", required_argument, NULL, O_OP},
        {"method", required_argument, NULL, O_METHOD},
        {"mode", required_argument, NULL, O_MODE},
        {"sample-interval", required_argument, NULL, O_SAMPLE},
        {"polls", required_argument, NULL, O_POLLS},
        {"name-prefix", required_argument, NULL, O_PREFIX},
        {"authority", required_argument, NULL, O_AUTH},
        {"scheme", required_argument, NULL, O_SCHEME},
        {"set-request", required_argument, NULL, O_SETREQ},
        {"encoding", required_argument, NULL, O_ENCODING},
        {"unique", no_argument, NULL, O_UNIQUE},
        {"lifecycle", no_argument, NULL, O_LIFECYCLE},
        {"level", required_argument, NULL, O_LEVEL},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    yb_synth_acl_opts o;
    yb_synth_acl_defaults(&o);
    const char *out = NULL, *set_request = NULL;
    yb_gnmi_enc enc = YB_GNMI_ENC_JSON_IETF;
    /* Level 1 by measurement (bench/corpus_size.sh): on synthesized ACL
     * records it is faster than the writer's default 3 and its output is
     * smaller too; `make corpora` asks for 19. */
    unsigned level = 1;
    uint64_t v;
    unsigned char given[O_END] = {0};
    int c;
    optind = 1;
    opterr = 0; /* option errors are worded by yb_bad_option */
    while ((c = getopt_long(argc, argv, ":o:p:n:r:s:h", opts, NULL)) != -1) {
        if (c > 0 && c < O_END)
            given[c] = 1;
        switch (c) {
        case 'o': out = optarg; break;
        case 'p':
            if (yb_proto_parse(optarg, &o.proto) < 0 ||
                (o.proto != YB_PROTO_RESTCONF && o.proto != YB_PROTO_GNMI))
                return yb_usage_error("synth", "--proto must be restconf or gnmi, not '%s'", optarg);
            break;
        case 'n':
            if (yb_parse_u64(optarg, 1, UINT32_MAX, &v) < 0)
                return yb_usage_error("synth", "--count must be an integer in 1..%u", UINT32_MAX);
            o.count = v;
            break;
        case 'r':
            if (yb_parse_u64(optarg, 0, 100000, &v) < 0)
                return yb_usage_error("synth", "--rules must be an integer in 0..100000");
            o.rules = (unsigned)v;
            break;
        case 's':
            if (yb_parse_u64(optarg, 0, UINT64_MAX, &v) < 0)
                return yb_usage_error("synth", "--seed must be a non-negative integer");
            o.seed = v;
            break;
        case O_OP:
            if (parse_op(optarg, &o.op) < 0)
                return yb_usage_error("synth", "unknown --op '%s'", optarg);
            break;
        case O_METHOD: o.method = optarg; break;
        case O_MODE:
            if (!strcmp(optarg, "once")) o.sub_mode = YB_SUB_ONCE;
            else if (!strcmp(optarg, "poll")) o.sub_mode = YB_SUB_POLL;
            else if (!strcmp(optarg, "stream")) o.sub_mode = YB_SUB_STREAM;
            else return yb_usage_error("synth", "--mode must be once, poll or stream");
            break;
        case O_SAMPLE:
            if (yb_parse_duration(optarg, &o.sample_ns) < 0 || o.sample_ns == 0)
                return yb_usage_error("synth", "--sample-interval '%s': expected "
                                      YB_FORMS_DURATION " above 0", optarg);
            break;
        case O_POLLS:
            if (yb_parse_u64(optarg, 0, 100000, &v) < 0)
                return yb_usage_error("synth", "--polls must be an integer in 0..100000");
            o.polls = (unsigned)v;
            break;
        case O_PREFIX: o.name_prefix = optarg; break;
        case O_AUTH: o.authority = optarg; break;
        case O_SCHEME:
            if (strcmp(optarg, "http") && strcmp(optarg, "https"))
                return yb_usage_error("synth", "--scheme must be http or https");
            o.scheme = optarg;
            break;
        case O_SETREQ: set_request = optarg; break;
        case O_UNIQUE: o.unique = 1; break;
        case O_LIFECYCLE: break; /* given[] says it */
        case O_LEVEL:
            if (yb_parse_u64(optarg, YB_CORPUS_LEVEL_MIN, YB_CORPUS_LEVEL_MAX, &v) < 0)
                return yb_usage_error("synth", "--level must be an integer in %d..%d",
                                      YB_CORPUS_LEVEL_MIN, YB_CORPUS_LEVEL_MAX);
            level = (unsigned)v;
            break;
        case O_ENCODING:
            if (yb_gnmi_enc_parse(optarg, &enc) < 0)
                return yb_usage_error("synth", "--encoding must be json_ietf, json or ascii, "
                                      "not '%s'", optarg);
            break;
        case 'h': help(); return YB_EXIT_OK;
        default: return yb_bad_option("synth", c, argv);
        }
    }
    if (optind >= argc)
        return yb_usage_error("synth", "missing workload name (acl or gnmi)");
    if (strcmp(argv[optind], "acl") && strcmp(argv[optind], "gnmi"))
        return yb_usage_error("synth", "unknown workload '%s' (acl or gnmi)", argv[optind]);
    if (optind + 1 < argc)
        return yb_usage_error("synth", "unexpected argument '%s'", argv[optind + 1]);
    if (!out)
        return yb_usage_error("synth", "missing -o FILE");
    if (!strcmp(argv[optind], "gnmi")) {
        /* The acl workload's options say nothing about a request file. */
        static const struct {
            int code;
            const char *name;
        } ACL_ONLY[] = {{'p', "--proto"},          {'r', "--rules"},     {'s', "--seed"},
                        {O_OP, "--op"},            {O_METHOD, "--method"}, {O_MODE, "--mode"},
                        {O_SAMPLE, "--sample-interval"}, {O_POLLS, "--polls"},
                        {O_PREFIX, "--name-prefix"}, {O_UNIQUE, "--unique"},
                        {O_LIFECYCLE, "--lifecycle"}};
        for (size_t i = 0; i < sizeof ACL_ONLY / sizeof ACL_ONLY[0]; i++)
            if (given[ACL_ONLY[i].code])
                return yb_usage_error("synth", "%s applies to synth acl, not synth gnmi",
                                      ACL_ONLY[i].name);
        if (!set_request)
            return yb_usage_error("synth", "synth gnmi needs --set-request FILE");
        return synth_gnmi(set_request, enc, given['n'] ? o.count : 1, o.authority, o.scheme,
                          level, out);
    }
    if (given[O_SETREQ] || given[O_ENCODING])
        return yb_usage_error("synth", "%s applies to synth gnmi, not synth acl",
                              given[O_SETREQ] ? "--set-request" : "--encoding");
    /* Options that would be silently ignored are refused. */
    int content = o.op == YB_SYNTH_CREATE || o.op == YB_SYNTH_REPLACE;
    if (given[O_METHOD] && (o.proto != YB_PROTO_RESTCONF || o.op != YB_SYNTH_CREATE))
        return yb_usage_error("synth", "--method is the RESTCONF create method: it does not "
                              "apply to --proto %s --op %s", yb_proto_name(o.proto), OP_NAMES[o.op]);
    if (given[O_MODE] && o.op != YB_SYNTH_SUBSCRIBE)
        return yb_usage_error("synth", "--mode applies to --op subscribe only, not --op %s",
                              OP_NAMES[o.op]);
    if (given[O_SAMPLE] && (o.op != YB_SYNTH_SUBSCRIBE || o.sub_mode != YB_SUB_STREAM))
        return yb_usage_error("synth", "--sample-interval applies to --op subscribe --mode "
                              "stream only");
    if (given[O_POLLS] && (o.op != YB_SYNTH_SUBSCRIBE || o.sub_mode != YB_SUB_POLL))
        return yb_usage_error("synth", "--polls applies to --op subscribe --mode poll only");
    if ((given['r'] || given['s']) && !content)
        return yb_usage_error("synth", "%s sets the rules' content: it applies to --op create "
                              "and replace only, not --op %s", given['r'] ? "--rules" : "--seed",
                              OP_NAMES[o.op]);
    if (given[O_LIFECYCLE] && given[O_OP])
        return yb_usage_error("synth", "--lifecycle is its own operations (create, get, delete "
                              "of each set): not with --op %s", OP_NAMES[o.op]);
    if (given[O_UNIQUE] && (o.op == YB_SYNTH_SUBSCRIBE || o.op == YB_SYNTH_CAPABILITIES))
        return yb_usage_error("synth", "--unique makes ACL set names unique per pass: --op %s "
                              "names no set", OP_NAMES[o.op]);
    const char *why = yb_synth_acl_check(&o);
    if (why)
        return yb_usage_error("synth", "%s", why);

    yb_corpus_header h;
    yb_corpus_header_init(&h);
    char source[256];
    char rules[16] = "auto";
    if (o.rules != YB_SYNTH_RULES_AUTO)
        snprintf(rules, sizeof rules, "%u", o.rules);
    snprintf(source, sizeof source, "synth acl --proto %s --op %s --count %llu --rules %s --seed %llu%s",
             yb_proto_name(o.proto), given[O_LIFECYCLE] ? "lifecycle" : OP_NAMES[o.op],
             (unsigned long long)o.count, rules, (unsigned long long)o.seed,
             o.unique ? " --unique" : "");
    h.producer = (char *)PACKAGE_NAME " " PACKAGE_VERSION " synth";
    h.source = source;
    h.level = level;
    char err[512];
    yb_corpus_writer *w = yb_corpus_writer_open(out, &h, err, sizeof err);
    if (!w) {
        yb_errorf("%s", err);
        return YB_EXIT_USAGE;
    }
    /* --lifecycle: per set a chain of three, create, get, delete */
    static const yb_synth_op LIFE[] = {YB_SYNTH_CREATE, YB_SYNTH_GET, YB_SYNTH_DELETE};
    unsigned steps = given[O_LIFECYCLE] ? 3 : 1;
    makers m = {.o = &o, .life = steps > 1 ? LIFE : NULL, .steps = steps,
                .total = o.count * steps, .w = w};
    int rc = level == 1 ? make_all(&m) : make_serial(&m);
    if (rc) { /* never leave a partial corpus behind */
        yb_corpus_writer_abort(w);
        yb_errorf("%s: cannot synthesize request %llu: %s", out, (unsigned long long)m.bad,
                  strerror(-rc));
        return YB_EXIT_RUNTIME;
    }
    if (yb_corpus_writer_close(w, err, sizeof err) < 0) {
        yb_errorf("%s", err);
        return YB_EXIT_RUNTIME;
    }
    return YB_EXIT_OK;
}
