/* Live metrics (see metrics.h): lanes published by the workers, the
 * exposition (Prometheus text or OpenMetrics) and the listener thread. */
#include "config.h"
#include "report/metrics.h"
#include "report/metrics_http.h"
#include "report/report.h"
#include "util/util.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FRESH 4u /* in lane.mid: the middle buffer holds a newer snapshot */

/* What a worker publishes: its recorder's counters and live histograms. */
typedef struct {
    uint64_t started, completed, ok, errors[YB_ERR__COUNT];
    uint64_t status[YB_MAX_STATUS], grpc[YB_GRPC_CODES + 1];
    uint64_t bytes_out, bytes_in, sessions_opened, tls_full, tls_resumed;
    uint64_t cut_off, unsent, retried, notifications, updates;
    uint64_t in_flight, backlog; /* gauges */
    uint64_t running;            /* 1 while the worker runs */
    uint64_t threads;            /* the same, from one lane per worker only */
    yb_live_hist h;
} snap;

struct yb_metrics_lane {
    size_t series;          /* index in yb_metrics.series */
    snap buf[3];            /* triple buffer */
    _Atomic unsigned mid;   /* the middle buffer's index, | FRESH when unread */
    unsigned back;          /* the worker's */
    unsigned front;         /* the server's */
    uint64_t next_pub;      /* the worker's: when to publish next */
};

typedef struct {
    char workload[YB_METRICS_LABEL_MAX], target[YB_METRICS_LABEL_MAX];
} series;

/* The self-check's window: figures at the previous scrape. */
typedef struct {
    uint64_t t;                  /* uv_hrtime-like monotonic ns */
    double cpu_s;
    uint64_t run_ns, wait_ns, invol, ticks, steal;
    uint64_t late_above, late_n, wait_above, wait_n;
    int saturated, starved, behind, limited;
} selfcheck;

struct yb_metrics {
    yb_metrics_opts o;
    int lfd;                     /* listening socket */
    int wake[2];                 /* a pipe: wakes the server to quit */
    char addr[80];
    pthread_t thread;
    int started;
    _Atomic int quit;
    _Atomic int written;         /* the report is written */
    pthread_mutex_t lock;        /* lanes, series, grouped (never taken by workers) */
    yb_metrics_lane **lanes;
    size_t n_lanes, cap_lanes;
    series *series;              /* max_series + 1 (the last: other) */
    size_t n_series;
    int other_used;
    uint64_t *grouped;           /* hashes of the label pairs grouped as other */
    size_t n_grouped, cap_grouped;
    uint64_t refused;            /* connections closed at once: every slot taken */
    selfcheck sc;
};

/* ---- lanes ------------------------------------------------------------- */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A label value as the exposition may carry it: printable ASCII only (the
 * rest becomes '_'), at most YB_METRICS_LABEL_MAX - 1 bytes. */
static void label_copy(char *dst, const char *src)
{
    size_t i = 0;
    for (; src && src[i] && i + 1 < YB_METRICS_LABEL_MAX; i++)
        dst[i] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '_';
    dst[i] = 0;
}

static uint64_t pair_hash(const char *a, const char *b)
{
    uint64_t h = 1469598103934665603ull;
    for (; *a; a++)
        h = (h ^ (uint8_t)*a) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull; /* separator: ("ab","c") != ("a","bc") */
    for (; *b; b++)
        h = (h ^ (uint8_t)*b) * 1099511628211ull;
    return h;
}

/* The series of (workload, target), added while there is room, else
 * other (counting the pair once).  m->lock held.  Returns its index, or
 * SIZE_MAX when out of memory. */
static size_t series_of(yb_metrics *m, const char *workload, const char *target)
{
    series s;
    label_copy(s.workload, workload);
    label_copy(s.target, target);
    for (size_t i = 0; i < m->n_series; i++)
        if (!strcmp(m->series[i].workload, s.workload) && !strcmp(m->series[i].target, s.target))
            return i;
    if (m->n_series < m->o.max_series) {
        m->series[m->n_series] = s;
        return m->n_series++;
    }
    uint64_t h = pair_hash(s.workload, s.target);
    size_t k = 0;
    while (k < m->n_grouped && m->grouped[k] != h)
        k++;
    if (k == m->n_grouped) {
        if (m->n_grouped == m->cap_grouped) {
            size_t cap = m->cap_grouped ? 2 * m->cap_grouped : 64;
            uint64_t *g = realloc(m->grouped, cap * sizeof *g);
            if (!g)
                return SIZE_MAX;
            m->grouped = g;
            m->cap_grouped = cap;
        }
        m->grouped[m->n_grouped++] = h;
    }
    m->other_used = 1;
    return m->o.max_series;
}

yb_metrics_lane *yb_metrics_lane_new(yb_metrics *m, const char *workload, const char *target,
                                     char *err, size_t errlen)
{
    yb_metrics_lane *l = calloc(1, sizeof *l);
    if (!l) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    atomic_init(&l->mid, 1u);
    l->back = 0;
    l->front = 2;
    pthread_mutex_lock(&m->lock);
    int ok = 0;
    if (m->n_lanes == m->cap_lanes) {
        size_t cap = m->cap_lanes ? 2 * m->cap_lanes : 16;
        yb_metrics_lane **v = realloc(m->lanes, cap * sizeof *v);
        if (v) {
            m->lanes = v;
            m->cap_lanes = cap;
        }
    }
    if (m->n_lanes < m->cap_lanes && (l->series = series_of(m, workload, target)) != SIZE_MAX) {
        m->lanes[m->n_lanes++] = l;
        ok = 1;
    }
    pthread_mutex_unlock(&m->lock);
    if (!ok) {
        free(l);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    return l;
}

void yb_metrics_publish(yb_metrics_lane *l, const yb_recorder *r, uint64_t in_flight,
                        uint64_t backlog, int thread, uint64_t now, int final)
{
    if (!l || (!final && now < l->next_pub))
        return;
    l->next_pub = now + YB_METRICS_PUBLISH_NS;
    snap *s = &l->buf[l->back];
    s->started = r->started;
    s->completed = r->completed;
    s->ok = r->ok;
    memcpy(s->errors, r->errors, sizeof s->errors);
    yb_recorder_statuses(r, s->status);
    memcpy(s->grpc, r->grpc, sizeof s->grpc);
    s->bytes_out = r->bytes_out;
    s->bytes_in = r->bytes_in;
    s->sessions_opened = r->sessions_opened;
    s->tls_full = r->tls_full;
    s->tls_resumed = r->tls_resumed;
    s->cut_off = r->cut_off;
    s->unsent = r->unsent;
    s->retried = r->retried;
    s->notifications = r->notifications;
    s->updates = r->updates;
    s->in_flight = final ? 0 : in_flight;
    s->backlog = final ? 0 : backlog;
    s->running = !final;
    s->threads = thread && !final;
    if (r->live)
        s->h = *r->live;
    /* hand the filled buffer over, take the one the server left */
    unsigned old = atomic_exchange_explicit(&l->mid, l->back | FRESH, memory_order_acq_rel);
    l->back = old & 3u;
}

/* The server's side: the lane's latest snapshot. */
static const snap *lane_read(yb_metrics_lane *l)
{
    if (atomic_load_explicit(&l->mid, memory_order_acquire) & FRESH) {
        unsigned old = atomic_exchange_explicit(&l->mid, l->front, memory_order_acq_rel);
        l->front = old & 3u;
    }
    return &l->buf[l->front];
}

static void snap_add(snap *d, const snap *s)
{
    d->started += s->started;
    d->completed += s->completed;
    d->ok += s->ok;
    for (size_t i = 0; i < YB_ERR__COUNT; i++)
        d->errors[i] += s->errors[i];
    for (size_t i = 0; i < YB_MAX_STATUS; i++)
        d->status[i] += s->status[i];
    for (size_t i = 0; i <= YB_GRPC_CODES; i++)
        d->grpc[i] += s->grpc[i];
    d->bytes_out += s->bytes_out;
    d->bytes_in += s->bytes_in;
    d->sessions_opened += s->sessions_opened;
    d->tls_full += s->tls_full;
    d->tls_resumed += s->tls_resumed;
    d->cut_off += s->cut_off;
    d->unsent += s->unsent;
    d->retried += s->retried;
    d->notifications += s->notifications;
    d->updates += s->updates;
    d->in_flight += s->in_flight;
    d->backlog += s->backlog;
    d->running += s->running;
    d->threads += s->threads;
    for (size_t h = 0; h < YB_H__COUNT; h++) {
        for (size_t b = 0; b <= YB_LIVE_BOUNDS; b++)
            d->h.n[h][b] += s->h.n[h][b];
        d->h.sum_us[h] += s->h.sum_us[h];
    }
}

/* ---- the exposition ------------------------------------------------------- */

typedef struct {
    char *p;
    size_t len, cap;
    int failed;
    int om;          /* OpenMetrics */
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap * 2;
        while (cap - b->len <= (size_t)n)
            cap *= 2;
        char *p = cap <= YB_METRICS_BODY_MAX ? realloc(b->p, cap) : NULL;
        if (!p) {
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
}

/* "# HELP" and "# TYPE" of a family.  name is the sample name without
 * _total; a counter's family is NAME_total in Prometheus text and NAME in
 * OpenMetrics, whose samples are NAME_total in both. */
static void family(sbuf *b, const char *name, const char *type, const char *help)
{
    int counter = !strcmp(type, "counter");
    const char *suffix = counter && !b->om ? "_total" : "";
    put(b, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix, help, name, suffix, type);
}

/* Label value escaping (label_copy left printable ASCII only). */
static void put_label(sbuf *b, const char *key, const char *v)
{
    char esc[2 * YB_METRICS_LABEL_MAX];
    size_t k = 0;
    for (; *v && k + 2 < sizeof esc; v++) {
        if (*v == '\\' || *v == '"')
            esc[k++] = '\\';
        esc[k++] = *v;
    }
    esc[k] = 0;
    put(b, "%s=\"%s\"", key, esc);
}

static void sample_start(sbuf *b, const char *name, const char *suffix, const series *s)
{
    put(b, "%s%s{", name, suffix);
    put_label(b, "workload", s->workload);
    put(b, ",");
    put_label(b, "target", s->target);
}

/* One sample of series s: NAME{workload,target[,k="v"]} value. */
static void sample(sbuf *b, const char *name, const char *suffix, const series *s,
                   const char *k, const char *v, uint64_t value)
{
    sample_start(b, name, suffix, s);
    if (k) {
        put(b, ",");
        put_label(b, k, v);
    }
    put(b, "} %llu\n", (unsigned long long)value);
}

/* µs as decimal seconds ("0.00025", "2.5", "60.0"). */
static void secs(char *buf, size_t cap, uint64_t us)
{
    uint64_t whole = us / 1000000, frac = us % 1000000;
    if (!frac) {
        snprintf(buf, cap, "%llu.0", (unsigned long long)whole);
        return;
    }
    char f[8];
    snprintf(f, sizeof f, "%06llu", (unsigned long long)frac);
    size_t n = strlen(f);
    while (n > 1 && f[n - 1] == '0')
        f[--n] = 0;
    snprintf(buf, cap, "%llu.%s", (unsigned long long)whole, f);
}

typedef uint64_t (*snap_field)(const snap *s);
#define FIELD(f)                                                                             \
    static uint64_t get_##f(const snap *s)                                                    \
    {                                                                                         \
        return s->f;                                                                          \
    }
FIELD(started)
FIELD(unsent)
FIELD(cut_off)
FIELD(retried)
FIELD(bytes_out)
FIELD(bytes_in)
FIELD(sessions_opened)
FIELD(notifications)
FIELD(updates)
FIELD(in_flight)
FIELD(backlog)
FIELD(running)
#undef FIELD

/* The families with one sample per series and no label of their own. */
static const struct {
    const char *name, *type, *help;
    snap_field f;
} SIMPLE[] = {
    {"yangblast_requests_started", "counter", "Requests written to a session.", get_started},
    {"yangblast_requests_unsent", "counter",
     "Requests due before the run stopped that were never written to a session.", get_unsent},
    {"yangblast_requests_cut_off", "counter", "Requests in flight when the run was stopped.",
     get_cut_off},
    {"yangblast_requests_retried", "counter",
     "Requests re-run on another session (HTTP/2 refused stream, GOAWAY).", get_retried},
    {"yangblast_sent_bytes", "counter",
     "Request bytes of completed requests (application data, before TLS).", get_bytes_out},
    {"yangblast_received_bytes", "counter",
     "Response bytes of completed requests (application data, after TLS).", get_bytes_in},
    {"yangblast_sessions_opened", "counter", "Sessions opened by completed requests.",
     get_sessions_opened},
    {"yangblast_subscribe_notifications", "counter", "gNMI Subscribe notifications received.",
     get_notifications},
    {"yangblast_subscribe_updates", "counter",
     "Updates inside the Subscribe notifications received.", get_updates},
    {"yangblast_requests_in_flight", "gauge",
     "Requests written to a session and not answered yet.", get_in_flight},
    {"yangblast_requests_backlog", "gauge",
     "Requests due and waiting for a free session or stream.", get_backlog},
    {"yangblast_workers_running", "gauge",
     "Worker threads still running this workload against this target.", get_running},
};

static void counters(sbuf *b, const series *sr, const snap *acc, size_t n)
{
    for (size_t k = 0; k < sizeof SIMPLE / sizeof SIMPLE[0]; k++) {
        int counter = !strcmp(SIMPLE[k].type, "counter");
        family(b, SIMPLE[k].name, SIMPLE[k].type, SIMPLE[k].help);
        for (size_t i = 0; i < n; i++)
            sample(b, SIMPLE[k].name, counter ? "_total" : "", &sr[i], NULL, NULL,
                   SIMPLE[k].f(&acc[i]));
    }
    family(b, "yangblast_requests", "counter",
           "Requests completed, by outcome (ok: success, error: any error class).");
    for (size_t i = 0; i < n; i++) {
        sample(b, "yangblast_requests", "_total", &sr[i], "outcome", "ok", acc[i].ok);
        sample(b, "yangblast_requests", "_total", &sr[i], "outcome", "error",
               acc[i].completed - acc[i].ok);
    }
    family(b, "yangblast_request_errors", "counter", "Failed requests by error class.");
    for (size_t i = 0; i < n; i++)
        for (int c = 1; c < YB_ERR__COUNT; c++)
            sample(b, "yangblast_request_errors", "_total", &sr[i], "class",
                   yb_err_name((yb_err_class)c), acc[i].errors[c]);
    family(b, "yangblast_http_responses", "counter",
           "Completed requests by HTTP status (none: no status line).");
    for (size_t i = 0; i < n; i++)
        for (int st = 0; st < YB_MAX_STATUS; st++)
            if (acc[i].status[st]) {
                char v[8];
                snprintf(v, sizeof v, "%d", st);
                sample(b, "yangblast_http_responses", "_total", &sr[i], "status",
                       st ? v : "none", acc[i].status[st]);
            }
    family(b, "yangblast_grpc_responses", "counter", "gNMI calls by gRPC status code.");
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c <= YB_GRPC_CODES; c++)
            if (acc[i].grpc[c]) {
                char v[8];
                snprintf(v, sizeof v, "%d", c);
                sample(b, "yangblast_grpc_responses", "_total", &sr[i], "code",
                       c < YB_GRPC_CODES ? v : "other", acc[i].grpc[c]);
            }
    family(b, "yangblast_tls_handshakes", "counter", "TLS handshakes, full or resumed.");
    for (size_t i = 0; i < n; i++) {
        sample(b, "yangblast_tls_handshakes", "_total", &sr[i], "kind", "full",
               acc[i].tls_full);
        sample(b, "yangblast_tls_handshakes", "_total", &sr[i], "kind", "resumed",
               acc[i].tls_resumed);
    }
}

static void histograms(sbuf *b, const series *sr, const snap *acc, size_t n)
{
    const char *name = "yangblast_latency_seconds";
    family(b, name, "histogram",
           "Latency by phase (as in the report: phases of successful requests; e2e_failed: "
           "failed ones; lateness, generator_lateness, session_wait: every request sent).");
    char le[32];
    for (size_t i = 0; i < n; i++)
        for (int h = 0; h < YB_H__COUNT; h++) {
            const uint64_t *c = acc[i].h.n[h];
            uint64_t cum = 0, total = 0;
            for (size_t k = 0; k <= YB_LIVE_BOUNDS; k++)
                total += c[k];
            if (!total)
                continue; /* a phase nothing went through */
            const char *ph = yb_hist_name((yb_hist_id)h);
            for (size_t k = 0; k <= YB_LIVE_BOUNDS; k++) {
                cum += c[k];
                if (k < YB_LIVE_BOUNDS)
                    secs(le, sizeof le, yb_live_bounds_us[k]);
                else
                    snprintf(le, sizeof le, "+Inf");
                sample_start(b, name, "_bucket", &sr[i]);
                put(b, ",phase=\"%s\",le=\"%s\"} %llu\n", ph, le, (unsigned long long)cum);
            }
            sample_start(b, name, "_sum", &sr[i]);
            put(b, ",phase=\"%s\"} %.6f\n", ph, (double)acc[i].h.sum_us[h] / 1e6);
            sample_start(b, name, "_count", &sr[i]);
            put(b, ",phase=\"%s\"} %llu\n", ph, (unsigned long long)total);
        }
}

/* ---- the generator's own figures and the self-check ----------------------- */

/* Every thread's time on a CPU and runnable but waiting for one (ns),
 * summed from /proc/self/task/N/schedstat (0 where the kernel does not
 * say). */
static void sched_all(uint64_t *run, uint64_t *wait)
{
    *run = *wait = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%.20s/schedstat", e->d_name);
        FILE *f = fopen(path, "r");
        unsigned long long r = 0, w = 0;
        if (f) {
            if (fscanf(f, "%llu %llu", &r, &w) == 2) {
                *run += r;
                *wait += w;
            }
            fclose(f);
        }
    }
    closedir(d);
}

/* Values of live histogram h above bound index k's bound, and all. */
static void above(const snap *acc, size_t n, int h, size_t k, uint64_t *hi, uint64_t *all)
{
    *hi = *all = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t b = 0; b <= YB_LIVE_BOUNDS; b++) {
            *all += acc[i].h.n[h][b];
            if (b > k)
                *hi += acc[i].h.n[h][b];
        }
}

/* The self-check of the report (report.h yb_report_self_check), judged on
 * the window since the previous scrape (at least a second; a shorter one
 * keeps the previous verdicts). */
static void self_check(yb_metrics *m, sbuf *b, const snap *acc, size_t n, double cpu_s,
                       uint64_t invol)
{
    selfcheck now = m->sc;
    now.t = now_ns();
    now.cpu_s = cpu_s;
    now.invol = invol;
    sched_all(&now.run_ns, &now.wait_ns);
    if (yb_cpu_ticks(&now.ticks, &now.steal) < 0)
        now.ticks = now.steal = 0;
    /* the lateness limit: 1 ms, or a tenth of the interval at a fixed
     * rate, rounded up to a bucket bound */
    double limit_us = 1000.0;
    if (m->o.rate > 0 && 100000.0 / m->o.rate > limit_us)
        limit_us = 100000.0 / m->o.rate;
    size_t k = 0;
    while (k + 1 < YB_LIVE_BOUNDS && (double)yb_live_bounds_us[k] < limit_us)
        k++;
    above(acc, n, YB_H_GEN_LATE, k, &now.late_above, &now.late_n);
    above(acc, n, YB_H_SESSION_WAIT, k, &now.wait_above, &now.wait_n);
    uint64_t threads = 0;
    for (size_t i = 0; i < n; i++)
        threads += acc[i].threads;
    const selfcheck *p = &m->sc;
    double dt = (double)(now.t - p->t) / 1e9;
    if (dt >= 1.0 && threads) {
        double util = (now.cpu_s - p->cpu_s) / (dt * (double)threads);
        double invol_s = (double)(now.invol - p->invol) / (dt * (double)threads);
        uint64_t run = now.run_ns - p->run_ns, wait = now.wait_ns - p->wait_ns;
        double runq = run + wait ? (double)wait / (double)(run + wait) : 0;
        uint64_t ticks = now.ticks - p->ticks;
        double steal = ticks ? (double)(now.steal - p->steal) / (double)ticks : 0;
        now.saturated = util > 0.9;
        now.starved = runq > YB_STARVED_RUNQ_SHARE || invol_s > YB_STARVED_INVOL_PER_S ||
                      steal > YB_STARVED_STEAL_SHARE;
        /* p99 above the limit: more than 1% of the window's values */
        uint64_t ln = now.late_n - p->late_n, wn = now.wait_n - p->wait_n;
        now.behind = m->o.open_loop && ln && (now.late_above - p->late_above) * 100 > ln;
        now.limited = m->o.open_loop && wn && (now.wait_above - p->wait_above) * 100 > wn;
        m->sc = now;
    }
    family(b, "yangblast_self_check", "gauge",
           "The generator's self-check over the last scrape interval (1 = the condition "
           "holds): cpu_saturated, cpu_starved (others took its CPU), behind_schedule (its "
           "own lateness), target_limited (waiting for a session or stream).");
    const char *names[4] = {"cpu_saturated", "cpu_starved", "behind_schedule",
                            "target_limited"};
    int vals[4] = {m->sc.saturated, m->sc.starved, m->sc.behind, m->sc.limited};
    for (int i = 0; i < 4; i++)
        put(b, "yangblast_self_check{check=\"%s\"} %d\n", names[i], vals[i]);
}

static void generator(yb_metrics *m, sbuf *b, const snap *acc, size_t n, uint64_t grouped)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    double sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    const char *tot = "_total";
    family(b, "yangblast_generator_cpu_seconds", "counter",
           "CPU time of the yangblast process, user and system.");
    put(b, "yangblast_generator_cpu_seconds%s{mode=\"user\"} %.6f\n", tot, user);
    put(b, "yangblast_generator_cpu_seconds%s{mode=\"system\"} %.6f\n", tot, sys);
    family(b, "yangblast_generator_involuntary_switches", "counter",
           "Involuntary context switches of the yangblast process.");
    put(b, "yangblast_generator_involuntary_switches%s %llu\n", tot,
        (unsigned long long)ru.ru_nivcsw);
    self_check(m, b, acc, n, user + sys, (uint64_t)ru.ru_nivcsw);
    family(b, "yangblast_metrics_series_grouped", "gauge",
           "(workload, target) label pairs beyond --metrics-max-series, added up under "
           "workload=\"other\", target=\"other\".");
    put(b, "yangblast_metrics_series_grouped %llu\n", (unsigned long long)grouped);
    family(b, "yangblast_report_written", "gauge",
           "1 once the run's reports are written: the figures are final.");
    put(b, "yangblast_report_written %d\n", atomic_load(&m->written));
}

int yb_metrics_render(yb_metrics *m, int openmetrics, char **out, size_t *len)
{
    sbuf b = {malloc(65536), 0, 65536, 0, openmetrics};
    if (!b.p)
        return -1;
    /* the lanes' latest snapshots, added up per series */
    pthread_mutex_lock(&m->lock);
    size_t n = m->n_series + (m->other_used ? 1 : 0);
    series *sr = malloc((n ? n : 1) * sizeof *sr);
    snap *acc = calloc(n ? n : 1, sizeof *acc);
    uint64_t grouped = m->n_grouped;
    if (sr && acc) {
        memcpy(sr, m->series, m->n_series * sizeof *sr);
        if (m->other_used) {
            snprintf(sr[n - 1].workload, sizeof sr[n - 1].workload, "other");
            snprintf(sr[n - 1].target, sizeof sr[n - 1].target, "other");
        }
        for (size_t i = 0; i < m->n_lanes; i++) {
            yb_metrics_lane *l = m->lanes[i];
            snap_add(&acc[l->series < m->n_series ? l->series : n - 1], lane_read(l));
        }
    }
    pthread_mutex_unlock(&m->lock);
    if (!sr || !acc) {
        free(sr);
        free(acc);
        free(b.p);
        return -1;
    }
    counters(&b, sr, acc, n);
    histograms(&b, sr, acc, n);
    generator(m, &b, acc, n, grouped);
    if (openmetrics)
        put(&b, "# EOF\n");
    free(sr);
    free(acc);
    if (b.failed) {
        free(b.p);
        return -1;
    }
    *out = b.p;
    *len = b.len;
    return 0;
}

/* ---- the listener ----------------------------------------------------------- */

typedef struct {
    int fd;                 /* -1 = free slot */
    uint64_t deadline;
    uint8_t in[YB_METRICS_REQ_MAX + 1];
    size_t in_len;
    int eof;
    uint8_t *out;           /* the answer, once judged */
    size_t out_len, out_off;
} conn;

static void conn_close(conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->out);
    c->fd = -1;
    c->out = NULL;
    c->in_len = c->out_len = c->out_off = 0;
    c->eof = 0;
}

/* Builds the answer to verdict v.  Returns 0, or -1 (close without one). */
static int answer(yb_metrics *m, conn *c, const yb_metrics_verdict *v)
{
    char *body = NULL;
    size_t blen = 0;
    int status = v->status;
    yb_h1_header hd[2];
    size_t nh = 0;
    if (status == 200 && yb_metrics_render(m, v->openmetrics, &body, &blen) < 0)
        status = 500;
    if (status == 200) {
        const char *ct = v->openmetrics
                             ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                             : "text/plain; version=0.0.4; charset=utf-8";
        hd[nh++] = (yb_h1_header){"Content-Type", 12, ct, strlen(ct)};
    } else {
        const char *txt = status == 404   ? "not found: GET /metrics\n"
                          : status == 405 ? "method not allowed: GET /metrics\n"
                                          : "bad request\n";
        body = strdup(txt);
        blen = body ? strlen(body) : 0;
        hd[nh++] = (yb_h1_header){"Content-Type", 12, "text/plain", 10};
        if (status == 405)
            hd[nh++] = (yb_h1_header){"Allow", 5, "GET", 3};
    }
    int rc = yb_h1_serialize_response(status, NULL, hd, nh, (const uint8_t *)body, blen, 0,
                                      &c->out, &c->out_len);
    free(body);
    return rc == 0 ? 0 : -1;
}

/* Reads what the peer sent and judges it once complete. */
static void conn_read(yb_metrics *m, conn *c, yb_h1_req *parser)
{
    size_t room = sizeof c->in - c->in_len;
    ssize_t n = room ? recv(c->fd, c->in + c->in_len, room, MSG_DONTWAIT) : 0;
    if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            conn_close(c);
        return;
    }
    if (n == 0 && room)
        c->eof = 1;
    c->in_len += (size_t)n;
    yb_metrics_verdict v;
    int j = yb_metrics_http_judge(parser, c->in, c->in_len, c->eof, &v);
    if (j < 0 || (j == 0 && c->eof) || (j == 1 && answer(m, c, &v) < 0))
        conn_close(c);
}

static void conn_write(conn *c)
{
    ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                     MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            conn_close(c);
        return;
    }
    c->out_off += (size_t)n;
    if (c->out_off == c->out_len) {
        shutdown(c->fd, SHUT_WR);
        conn_close(c);
    }
}

static void accept_all(yb_metrics *m, conn *cs)
{
    for (;;) {
        int fd = accept4(m->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        conn *c = NULL;
        for (size_t i = 0; i < YB_METRICS_MAX_CONNS && !c; i++)
            if (cs[i].fd < 0)
                c = &cs[i];
        if (!c) { /* every slot taken: no queue to grow */
            close(fd);
            m->refused++;
            continue;
        }
        c->fd = fd;
        c->deadline = now_ns() + YB_METRICS_CONN_MS * 1000000ull;
    }
}

static void *serve_main(void *arg)
{
    yb_metrics *m = arg;
    conn *cs = calloc(YB_METRICS_MAX_CONNS, sizeof *cs);
    /* a body is read (within the request cap) only to answer 405 rather than 413 */
    yb_h1_req *parser = yb_h1_req_new(YB_METRICS_REQ_MAX);
    if (!cs || !parser) {
        free(cs);
        yb_h1_req_free(parser);
        return NULL;
    }
    for (size_t i = 0; i < YB_METRICS_MAX_CONNS; i++)
        cs[i].fd = -1;
    while (!atomic_load(&m->quit)) {
        struct pollfd pf[YB_METRICS_MAX_CONNS + 2];
        conn *pc[YB_METRICS_MAX_CONNS + 2];
        nfds_t np = 0;
        pf[np] = (struct pollfd){m->wake[0], POLLIN, 0};
        pc[np++] = NULL;
        pf[np] = (struct pollfd){m->lfd, POLLIN, 0};
        pc[np++] = NULL;
        uint64_t now = now_ns(), next = now + 1000000000ull;
        for (size_t i = 0; i < YB_METRICS_MAX_CONNS; i++) {
            conn *c = &cs[i];
            if (c->fd < 0)
                continue;
            if (now >= c->deadline) { /* slow or silent: its slot goes back */
                conn_close(c);
                continue;
            }
            if (c->deadline < next)
                next = c->deadline;
            pf[np] = (struct pollfd){c->fd, (short)(c->out ? POLLOUT : POLLIN), 0};
            pc[np++] = c;
        }
        int ms = (int)((next - now) / 1000000ull) + 1;
        if (poll(pf, np, ms) <= 0)
            continue;
        if (pf[1].revents & POLLIN)
            accept_all(m, cs);
        for (nfds_t i = 2; i < np; i++) {
            conn *c = pc[i];
            if (c->fd < 0 || !pf[i].revents)
                continue;
            if (c->out)
                conn_write(c);
            else
                conn_read(m, c, parser);
            if (c->fd >= 0 && c->out && c->out_off == 0)
                conn_write(c); /* the answer is ready: try at once */
        }
    }
    for (size_t i = 0; i < YB_METRICS_MAX_CONNS; i++)
        conn_close(&cs[i]);
    free(cs);
    yb_h1_req_free(parser);
    return NULL;
}

/* ---- life cycle ------------------------------------------------------------- */

static int bind_listener(yb_metrics *m, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    if (yb_parse_listen(m->o.listen, &ss) < 0) {
        snprintf(err, errlen, "--metrics-listen '%s': expected ADDR:PORT, :PORT or [v6]:PORT "
                 "(numeric address)", m->o.listen);
        return -1;
    }
    socklen_t sl = ss.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                            : sizeof(struct sockaddr_in);
    int one = 1;
    m->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (m->lfd < 0 || setsockopt(m->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(m->lfd, (struct sockaddr *)&ss, sl) < 0 || listen(m->lfd, 16) < 0) {
        snprintf(err, errlen, "--metrics-listen '%s': %s", m->o.listen, strerror(errno));
        return -1;
    }
    sl = sizeof ss;
    char ip[INET6_ADDRSTRLEN] = "?";
    if (getsockname(m->lfd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof ip);
            snprintf(m->addr, sizeof m->addr, "[%s]:%u", ip, (unsigned)ntohs(a->sin6_port));
        } else {
            struct sockaddr_in *a = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
            snprintf(m->addr, sizeof m->addr, "%s:%u", ip, (unsigned)ntohs(a->sin_port));
        }
    }
    return 0;
}

yb_metrics *yb_metrics_open(const yb_metrics_opts *o, char *err, size_t errlen)
{
    yb_metrics *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    m->o = *o;
    if (!m->o.max_series)
        m->o.max_series = YB_METRICS_SERIES_DEFAULT;
    m->lfd = m->wake[0] = m->wake[1] = -1;
    pthread_mutex_init(&m->lock, NULL);
    atomic_init(&m->quit, 0);
    atomic_init(&m->written, 0);
    if (!(m->series = calloc(m->o.max_series + 1, sizeof *m->series))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    if (bind_listener(m, err, errlen) < 0)
        goto fail;
    if (pipe2(m->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
        snprintf(err, errlen, "--metrics-listen: %s", strerror(errno));
        goto fail;
    }
    /* the self-check's first window starts now */
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    m->sc.t = now_ns();
    m->sc.cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                  (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    m->sc.invol = (uint64_t)ru.ru_nivcsw;
    sched_all(&m->sc.run_ns, &m->sc.wait_ns);
    if (yb_cpu_ticks(&m->sc.ticks, &m->sc.steal) < 0)
        m->sc.ticks = m->sc.steal = 0;
    if (pthread_create(&m->thread, NULL, serve_main, m) != 0) {
        snprintf(err, errlen, "--metrics-listen: cannot start its thread");
        goto fail;
    }
    m->started = 1;
    return m;
fail:
    yb_metrics_free(m);
    return NULL;
}

const char *yb_metrics_address(const yb_metrics *m)
{
    return m->addr;
}

void yb_metrics_report_written(yb_metrics *m)
{
    if (m)
        atomic_store(&m->written, 1);
}

void yb_metrics_free(yb_metrics *m)
{
    if (!m)
        return;
    if (m->started) {
        atomic_store(&m->quit, 1);
        ssize_t w = write(m->wake[1], "q", 1);
        (void)w;
        pthread_join(m->thread, NULL);
    }
    if (m->lfd >= 0)
        close(m->lfd);
    for (int i = 0; i < 2; i++)
        if (m->wake[i] >= 0)
            close(m->wake[i]);
    for (size_t i = 0; i < m->n_lanes; i++)
        free(m->lanes[i]);
    free(m->lanes);
    free(m->series);
    free(m->grouped);
    pthread_mutex_destroy(&m->lock);
    free(m);
}
