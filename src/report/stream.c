/* Outputs written while the run goes (see stream.h): the workers' lanes,
 * the writer thread, and the formats of --log and --series lines.  The
 * .hlog lines and the series' objects come from the same functions as the
 * end-of-run outputs (yb_report_hlog_interval, yb_report_interval_json),
 * so a streamed file holds what the end-of-run writer would have written. */
#include "config.h"
#include "report/stream.h"
#include "report/report.h"
#include "util/outfile.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#define SECONDS_QUEUE 256        /* sealed seconds a lane may have waiting */
#define OUT_BUF (1u << 20)       /* stdio buffer of each output */
#define OUT_FLUSH (256u << 10)   /* flush once this much is buffered */
#define NO_BOUND UINT64_MAX

/* One finished request, as a worker hands it over. */
typedef struct {
    yb_result res;       /* its reason included */
    uint64_t record, index, session;
    unsigned workload, target;
} log_entry;

struct yb_stream_lane {
    yb_stream *s;
    unsigned worker;
    /* the log ring: the worker writes entries and then head, the writer
     * reads entries below head and then moves tail */
    log_entry *ring;
    _Atomic uint64_t head, tail, dropped;
    /* sealed seconds, handed over under mu */
    pthread_mutex_t mu;
    yb_interval q[SECONDS_QUEUE];
    size_t q_n;
    uint64_t handed;      /* seconds handed over so far (t of the next one) */
    int ended;            /* the worker has ended ... */
    uint64_t n_seconds;   /* ... having sealed this many */
};

/* One output file, written in place. */
typedef struct {
    const char *name;     /* as the user gave it */
    yb_outfile of;
    int opened;
    FILE *f;              /* of.f, or our own on a dup of standard output */
    int own_f;
    char *buf;
    size_t pending;       /* bytes buffered since the last flush */
    int err;              /* errno of the first failed write (then no more) */
} out;

struct yb_stream {
    yb_stream_opts o;
    out log, series, hlog;
    unsigned n_lanes;
    yb_stream_lane *lanes;
    uint64_t run_start;
    double start_unix_s;
    pthread_t thread;
    int started;
    atomic_int stop;
    atomic_int begun;         /* run_start is set: the writer may write */
    /* the writer's: seconds [next_sec, next_sec + n_acc) being added up */
    uint64_t next_sec;
    yb_interval *acc;
    size_t n_acc, cap_acc;
    uint64_t log_lines, seconds, seconds_late;
    int oom;
};

/* ---- output files -------------------------------------------------------- */

/* Opens o for path through the output-file owner (util/outfile.h), in
 * place: "-" (standard output, through a descriptor of our own so that
 * its buffer never mixes with stdout's), a device, FIFO or socket as they
 * are, and a regular file truncated to grow from empty.  Returns 0 or -1
 * with err. */
static int out_open(out *o, const char *path, char *err, size_t errlen)
{
    o->name = path;
    if (!path)
        return 0;
    if (yb_outfile_open(&o->of, path, 1, err, errlen) < 0)
        return -1;
    o->opened = 1;
    if (o->of.keep_open) {
        int fd = dup(fileno(o->of.f));
        if (fd < 0 || !(o->f = fdopen(fd, "a"))) {
            snprintf(err, errlen, "%s: cannot write to standard output: %s", path,
                     strerror(errno));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        o->own_f = 1;
    } else {
        o->f = o->of.f;
        struct stat st;
        /* a file named by the user starts empty (not a descriptor it handed
         * over, /dev/fd/N, which it positioned itself) */
        if (strncmp(path, "/dev/", 5) && fstat(fileno(o->f), &st) == 0 && S_ISREG(st.st_mode) &&
            ftruncate(fileno(o->f), 0) < 0) {
            snprintf(err, errlen, "%s: cannot truncate: %s", path, strerror(errno));
            return -1;
        }
    }
    /* one buffer far larger than a line, flushed at line ends only: a
     * write never ends inside a line */
    if ((o->buf = malloc(OUT_BUF)))
        setvbuf(o->f, o->buf, _IOFBF, OUT_BUF);
    return 0;
}

static void out_flush(out *o)
{
    if (!o->f || o->err || !o->pending)
        return;
    if (fflush(o->f) != 0)
        o->err = errno ? errno : EIO;
    o->pending = 0;
}

/* Notes that a line of len bytes went into o's buffer. */
static void out_line(out *o, int rc, size_t len)
{
    if (rc < 0 || ferror(o->f)) {
        if (!o->err)
            o->err = errno ? errno : EIO;
        return;
    }
    o->pending += len;
    if (o->pending >= OUT_FLUSH)
        out_flush(o);
}

static int out_close(out *o, char *err, size_t errlen)
{
    if (!o->opened)
        return 0;
    out_flush(o);
    if (o->own_f && fclose(o->f) != 0 && !o->err)
        o->err = errno ? errno : EIO;
    char e2[512];
    /* flushes and closes (an in-place file has nothing to rename) */
    if (yb_outfile_commit(&o->of, e2, sizeof e2) < 0 && !o->err)
        o->err = EIO;
    o->f = NULL;
    o->opened = 0;
    free(o->buf);
    o->buf = NULL;
    if (o->err) {
        snprintf(err, errlen, "%s: write failed: %s", o->name, strerror(o->err));
        return -1;
    }
    return 0;
}

/* ---- the per-request log ------------------------------------------------- */

static const char *const LOG_FIELDS[] = {
    "record", "index", "shard", "workload", "target", "worker", "session",
    "t_due_ns", "t_start_ns", "t_sent_ns", "t_first_byte_ns", "t_done_ns",
    "e2e_ns", "service_ns", "lateness_ns", "gen_late_ns", "session_wait_ns", "connect_ns", "tls_ns", "h2_ns", "write_ns", "ttfb_ns",
    "bytes_out", "bytes_in", "status", "grpc_status", "notifications", "updates", "error",
    "reason",
};
#define N_LOG_FIELDS (sizeof LOG_FIELDS / sizeof LOG_FIELDS[0])

/* The phases of the log, in LOG_FIELDS order. */
static const yb_hist_id LOG_PHASES[] = {YB_H_E2E,      YB_H_SERVICE,      YB_H_LATENESS,
                                        YB_H_GEN_LATE, YB_H_SESSION_WAIT, YB_H_CONNECT,
                                        YB_H_TLS,      YB_H_H2,           YB_H_WRITE,
                                        YB_H_TTFB};

/* A growing line with a cap: appends never overrun, a line that would
 * is cut (it cannot be: LINE_MAX covers every field at its widest). */
#define LINE_MAX_BYTES (1024 + 6 * YB_REASON_MAX)
typedef struct {
    char b[LINE_MAX_BYTES];
    size_t n;
} line;

static void addc(line *l, char c)
{
    if (l->n + 1 < sizeof l->b)
        l->b[l->n++] = c;
}

static void add(line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(line *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(l->b + l->n, sizeof l->b - l->n, fmt, ap);
    va_end(ap);
    if (k > 0)
        l->n += (size_t)k < sizeof l->b - l->n ? (size_t)k : sizeof l->b - l->n - 1;
}

/* A point in time as ns since the run's start, or none (0 = did not happen). */
static void add_time(line *l, int csv, uint64_t t, uint64_t start, const char *sep)
{
    if (!t)
        add(l, "%s%s", csv ? "" : "null", sep);
    else
        add(l, "%" PRId64 "%s", (int64_t)(t - start), sep);
}

/* The reason as a JSON string body or a CSV field: bytes from the network
 * may be anything, so control characters are escaped and a reason that is
 * not valid UTF-8 has its non-ASCII bytes replaced by '?'. */
static void add_reason(line *l, int csv, const char *r)
{
    size_t len = strlen(r);
    int utf8 = yb_utf8_valid((const uint8_t *)r, len);
    int quote = csv && strpbrk(r, ",\"\r\n") != NULL;
    if (!csv || quote)
        add(l, "\"");
    for (const unsigned char *p = (const unsigned char *)r; *p; p++) {
        unsigned c = *p;
        if (c >= 0x80 && !utf8)
            c = '?';
        if (csv && c == '"') {
            addc(l, '"');
            addc(l, '"');
        } else if (csv) {
            addc(l, (char)c);
        } else if (c == '"' || c == '\\') {
            addc(l, '\\');
            addc(l, (char)c);
        } else if (c < 0x20 || c == 0x7f) {
            add(l, "\\u%04x", c);
        } else {
            addc(l, (char)c);
        }
    }
    if (!csv || quote)
        add(l, "\"");
}

/* Formats e as one line (JSON object or CSV row, fields in LOG_FIELDS
 * order). */
static void format_entry(line *l, const yb_stream *s, const yb_stream_lane *lane,
                         const log_entry *e)
{
    const yb_result *r = &e->res;
    int csv = s->o.log_csv;
    const char *sep = csv ? "," : ",";
    char key[48];
    size_t f = 0;
#define KEY()                                                                       \
    do {                                                                            \
        if (!csv) {                                                                 \
            snprintf(key, sizeof key, "%s\"%s\":", f ? "" : "{", LOG_FIELDS[f]);    \
            add(l, "%s", key);                                                      \
        }                                                                           \
        f++;                                                                        \
    } while (0)
    l->n = 0;
    KEY(); add(l, "%" PRIu64 "%s", e->record, sep);
    KEY(); add(l, "%" PRIu64 "%s", e->index, sep);
    KEY(); add(l, "%u%s", s->o.shard, sep);
    KEY(); add(l, "%u%s", e->workload, sep);
    KEY(); add(l, "%u%s", e->target, sep);
    KEY(); add(l, "%u%s", lane->worker, sep);
    KEY();
    if (e->session)
        add(l, "%" PRIu64 "%s", e->session, sep);
    else
        add(l, "%s%s", csv ? "" : "null", sep);
    uint64_t times[] = {r->due, r->send_start, r->sent, r->first_byte, r->done};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        KEY();
        add_time(l, csv, times[i], s->run_start, sep);
    }
    for (size_t i = 0; i < sizeof LOG_PHASES / sizeof LOG_PHASES[0]; i++) {
        uint64_t ns;
        KEY();
        if (yb_result_phase(r, LOG_PHASES[i], &ns))
            add(l, "%" PRIu64 "%s", ns, sep);
        else
            add(l, "%s%s", csv ? "" : "null", sep);
    }
    KEY(); add(l, "%" PRIu64 "%s", r->bytes_out, sep);
    KEY(); add(l, "%" PRIu64 "%s", r->bytes_in, sep);
    KEY();
    if (r->status > 0)
        add(l, "%d%s", r->status, sep);
    else
        add(l, "%s%s", csv ? "" : "null", sep);
    KEY();
    if (r->grpc_status >= 0)
        add(l, "%d%s", r->grpc_status, sep);
    else
        add(l, "%s%s", csv ? "" : "null", sep);
    KEY(); add(l, "%" PRIu64 "%s", r->notifications, sep);
    KEY(); add(l, "%" PRIu64 "%s", r->updates, sep);
    KEY();
    if (r->err == YB_ERR_NONE)
        add(l, "%s%s", csv ? "" : "null", sep);
    else
        add(l, csv ? "%s%s" : "\"%s\"%s", yb_err_name(r->err), sep);
    KEY();
    const char *reason = yb_result_reason(r);
    if (reason[0])
        add_reason(l, csv, reason);
    else if (!csv)
        add(l, "null");
    add(l, csv ? "\n" : "}\n");
#undef KEY
}

/* Writes every entry waiting in lane l's ring.  Writer thread. */
static void drain_log(yb_stream *s, yb_stream_lane *l)
{
    uint64_t tail = atomic_load_explicit(&l->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&l->head, memory_order_acquire);
    line ln;
    for (; tail != head; tail++) {
        const log_entry *e = &l->ring[tail % YB_STREAM_RING];
        if (!s->log.err) {
            format_entry(&ln, s, l, e);
            out_line(&s->log, (int)fwrite(ln.b, 1, ln.n, s->log.f) == (int)ln.n ? 0 : -1, ln.n);
            s->log_lines++;
        }
    }
    atomic_store_explicit(&l->tail, tail, memory_order_release);
}

/* ---- seconds ------------------------------------------------------------- */

/* Writes one second to --series and --hlog. */
static void write_second(yb_stream *s, const yb_interval *iv)
{
    if (s->series.f && !s->series.err) {
        json_t *j = yb_report_interval_json(iv);
        char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
        if (text) {
            size_t n = strlen(text);
            int rc = fwrite(text, 1, n, s->series.f) == n && fputc('\n', s->series.f) != EOF;
            out_line(&s->series, rc ? 0 : -1, n + 1);
        } else {
            s->oom = 1;
        }
        free(text);
        json_decref(j);
    }
    if (s->hlog.f && !s->hlog.err) {
        /* a line may be long (a base64 histogram): flushed whole at once */
        out_line(&s->hlog, yb_report_hlog_interval(s->hlog.f, iv), 1);
        out_flush(&s->hlog);
    }
    s->seconds++;
}

/* Makes acc cover seconds up to sec (inclusive).  Returns 0 or -1. */
static int acc_reach(yb_stream *s, uint64_t sec)
{
    size_t need = (size_t)(sec - s->next_sec) + 1;
    if (need <= s->n_acc)
        return 0;
    if (need > s->cap_acc) {
        size_t cap = s->cap_acc ? s->cap_acc * 2 : 16;
        while (cap < need)
            cap *= 2;
        yb_interval *a = realloc(s->acc, cap * sizeof *a);
        if (!a)
            return -1;
        s->acc = a;
        s->cap_acc = cap;
    }
    for (size_t i = s->n_acc; i < need; i++) {
        memset(&s->acc[i], 0, sizeof s->acc[i]);
        s->acc[i].t = s->next_sec + i;
    }
    s->n_acc = need;
    return 0;
}

int yb_stream_tagged(const yb_stream *s)
{
    return s && s->hlog.f;
}

/* 1 when someone wants the sealed seconds. */
static int wants_seconds(const yb_stream *s)
{
    return s->series.f || s->hlog.f || s->o.on_second;
}

/* Writes the first k seconds of acc and drops them; running: some worker
 * has not ended yet. */
static void acc_write(yb_stream *s, size_t k, int running)
{
    if (k == 0)
        return;
    for (size_t i = 0; i < k; i++) {
        /* a second is whole once its end has passed (the last one is not) */
        if (s->o.on_second && running &&
            uv_hrtime() >= s->run_start + (s->acc[i].t + 1) * 1000000000ull)
            s->o.on_second(&s->acc[i], s->o.second_ud);
        write_second(s, &s->acc[i]);
        yb_interval_cleanup(&s->acc[i]);
    }
    memmove(s->acc, s->acc + k, (s->n_acc - k) * sizeof *s->acc);
    s->n_acc -= k;
    s->next_sec += k;
}

/* Takes the seconds lane l handed over into acc; returns the number of
 * seconds l has sealed for good (NO_BOUND once it ended with all of them
 * handed over).  Writer thread. */
static uint64_t take_seconds(yb_stream *s, yb_stream_lane *l)
{
    yb_interval q[SECONDS_QUEUE];
    pthread_mutex_lock(&l->mu);
    size_t n = l->q_n;
    memcpy(q, l->q, n * sizeof q[0]);
    l->q_n = 0;
    uint64_t bound = l->ended && l->handed == l->n_seconds ? NO_BOUND : l->handed;
    pthread_mutex_unlock(&l->mu);
    for (size_t i = 0; i < n; i++) {
        if (q[i].t >= s->next_sec && acc_reach(s, q[i].t) == 0) {
            if (yb_interval_add(&s->acc[q[i].t - s->next_sec], &q[i]) < 0)
                s->oom = 1;
        } else {
            s->oom = 1; /* cannot happen unless memory ran out */
        }
        yb_interval_cleanup(&q[i]);
    }
    return bound;
}

/* One pass of the writer: every lane's log lines, then every second that
 * all lanes have sealed. */
static void writer_pass(yb_stream *s)
{
    uint64_t bound = NO_BOUND;
    for (unsigned i = 0; i < s->n_lanes; i++) {
        if (s->log.f)
            drain_log(s, &s->lanes[i]);
        if (wants_seconds(s)) {
            uint64_t b = take_seconds(s, &s->lanes[i]);
            if (b < bound)
                bound = b;
        }
    }
    if (!s->oom && bound > s->next_sec) {
        size_t k = bound - s->next_sec < s->n_acc ? (size_t)(bound - s->next_sec) : s->n_acc;
        acc_write(s, k, bound != NO_BOUND);
    }
    out_flush(&s->log);
    out_flush(&s->series);
    out_flush(&s->hlog);
}

static void *writer_main(void *arg)
{
    yb_stream *s = arg;
    while (!atomic_load(&s->stop)) {
        if (atomic_load(&s->begun))
            writer_pass(s);
        struct timespec ts = {0, YB_STREAM_POLL_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (atomic_load(&s->begun))
        writer_pass(s); /* what the workers handed over last */
    return NULL;
}

/* ---- the stream's life cycle --------------------------------------------- */

yb_stream *yb_stream_open(const yb_stream_opts *o, char *err, size_t errlen)
{
    yb_stream *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->o = *o;
    if (out_open(&s->log, o->log, err, errlen) < 0 ||
        out_open(&s->series, o->series, err, errlen) < 0 ||
        out_open(&s->hlog, o->hlog, err, errlen) < 0) {
        yb_stream_free(s);
        return NULL;
    }
    if (s->log.f && o->log_csv) {
        for (size_t i = 0; i < N_LOG_FIELDS; i++)
            fprintf(s->log.f, "%s%s", LOG_FIELDS[i], i + 1 < N_LOG_FIELDS ? "," : "\n");
        out_line(&s->log, 0, 1);
        out_flush(&s->log);
    }
    return s;
}

int yb_stream_lanes(yb_stream *s, unsigned workers, char *err, size_t errlen)
{
    if (!(s->lanes = calloc(workers, sizeof *s->lanes))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (unsigned i = 0; i < workers; i++) {
        yb_stream_lane *l = &s->lanes[i];
        l->s = s;
        l->worker = i;
        pthread_mutex_init(&l->mu, NULL);
        s->n_lanes = i + 1;
        if (s->log.f && !(l->ring = malloc(YB_STREAM_RING * sizeof *l->ring))) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}

int yb_stream_launch(yb_stream *s, char *err, size_t errlen)
{
    if (pthread_create(&s->thread, NULL, writer_main, s) != 0) {
        snprintf(err, errlen, "cannot start the output writer thread");
        return -1;
    }
    s->started = 1;
    return 0;
}

void yb_stream_start(yb_stream *s, uint64_t run_start)
{
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    /* the wall clock of run_start: now, less what has gone by since */
    uint64_t now = uv_hrtime(), since = now > run_start ? now - run_start : 0;
    s->start_unix_s = (double)wall.tv_sec + (double)wall.tv_nsec / 1e9 - (double)since / 1e9;
    s->run_start = run_start;
    if (s->hlog.f) {
        out_line(&s->hlog, yb_report_hlog_header(s->hlog.f, s->start_unix_s), 1);
        out_flush(&s->hlog);
    }
    atomic_store(&s->begun, 1); /* after what the writer reads */
}

yb_stream_lane *yb_stream_lane_of(yb_stream *s, unsigned worker)
{
    return s && worker < s->n_lanes ? &s->lanes[worker] : NULL;
}

int yb_stream_logs(const yb_stream_lane *l)
{
    return l && l->ring;
}

void yb_stream_result(yb_stream_lane *l, const yb_result *res, uint64_t record,
                      uint64_t index, uint64_t session, unsigned workload, unsigned target)
{
    if (!l->ring)
        return;
    uint64_t head = atomic_load_explicit(&l->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&l->tail, memory_order_acquire);
    if (head - tail >= YB_STREAM_RING) {
        atomic_fetch_add_explicit(&l->dropped, 1, memory_order_relaxed);
        return;
    }
    log_entry *e = &l->ring[head % YB_STREAM_RING];
    e->res = *res;
    e->record = record;
    e->index = index;
    e->session = session;
    e->workload = workload;
    e->target = target;
    atomic_store_explicit(&l->head, head + 1, memory_order_release);
}

int yb_stream_second(yb_stream_lane *l, const yb_interval *iv)
{
    if (!wants_seconds(l->s)) {
        l->handed++; /* nobody wants seconds */
        return 0;
    }
    yb_interval c;
    if (yb_interval_copy(&c, iv) < 0)
        return -1;
    pthread_mutex_lock(&l->mu);
    int full = l->q_n == SECONDS_QUEUE;
    if (!full) {
        l->q[l->q_n++] = c;
        l->handed++;
    }
    pthread_mutex_unlock(&l->mu);
    if (full)
        yb_interval_cleanup(&c);
    return full ? -1 : 0;
}

void yb_stream_lane_end(yb_stream_lane *l, uint64_t n_seconds)
{
    pthread_mutex_lock(&l->mu);
    l->ended = 1;
    l->n_seconds = n_seconds;
    pthread_mutex_unlock(&l->mu);
}

int yb_stream_end(yb_stream *s, const yb_recorder *merged, char *err, size_t errlen)
{
    if (!s->started)
        return 0;
    atomic_store(&s->stop, 1);
    pthread_join(s->thread, NULL);
    s->started = 0;
    /* Seconds not written yet (a lane that could not hand them all over,
     * or one that ended early): the merged recorder holds the same sums. */
    if (s->series.f || s->hlog.f)
        for (uint64_t t = s->next_sec; merged && t < merged->n_iv; t++) {
            write_second(s, &merged->iv[t]);
            s->seconds_late++;
        }
    for (size_t i = 0; i < s->n_acc; i++)
        yb_interval_cleanup(&s->acc[i]);
    s->n_acc = 0;
    if (s->oom) {
        snprintf(err, errlen, "out of memory while writing the streamed outputs");
        return -1;
    }
    return 0;
}

int yb_stream_close(yb_stream *s, yb_stream_stats *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    st->log_lines = s->log_lines;
    for (unsigned i = 0; i < s->n_lanes; i++)
        st->log_dropped += atomic_load(&s->lanes[i].dropped);
    st->seconds = s->seconds;
    st->seconds_late = s->seconds_late;
    int rc = 0;
    char e2[512];
    if (out_close(&s->log, err, errlen) < 0)
        rc = -1;
    if (out_close(&s->series, rc ? e2 : err, rc ? sizeof e2 : errlen) < 0)
        rc = -1;
    if (out_close(&s->hlog, rc ? e2 : err, rc ? sizeof e2 : errlen) < 0)
        rc = -1;
    return rc;
}

void yb_stream_free(yb_stream *s)
{
    if (!s)
        return;
    if (s->started) {
        atomic_store(&s->stop, 1);
        pthread_join(s->thread, NULL);
    }
    char err[256];
    out_close(&s->log, err, sizeof err);
    out_close(&s->series, err, sizeof err);
    out_close(&s->hlog, err, sizeof err);
    for (unsigned i = 0; i < s->n_lanes; i++) {
        yb_stream_lane *l = &s->lanes[i];
        for (size_t k = 0; k < l->q_n; k++)
            yb_interval_cleanup(&l->q[k]);
        free(l->ring);
        pthread_mutex_destroy(&l->mu);
    }
    free(s->lanes);
    for (size_t i = 0; i < s->n_acc; i++)
        yb_interval_cleanup(&s->acc[i]);
    free(s->acc);
    free(s);
}
