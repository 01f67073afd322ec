/* Cost model and fault injection for `yangblast serve` (see cost.h). */
#include "config.h"
#include "serve/cost.h"
#include "util/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* ---- random numbers ---------------------------------------------------- */

void yb_rng_seed(yb_rng *r, uint64_t seed) { r->s = seed; }

uint64_t yb_rng_next(yb_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double yb_rng_unit(yb_rng *r) { return (double)(yb_rng_next(r) >> 11) * 0x1.0p-53; }

/* ---- service time ------------------------------------------------------- */

int yb_service_time_parse(const char *s, yb_service_time *out)
{
    yb_service_time st = {0};
    const char *plus = strchr(s, '+');
    size_t mlen = plus ? (size_t)(plus - s) : strlen(s);
    if (plus) {
        static const char PK[] = "+per-kb:";
        if (strncmp(plus, PK, sizeof PK - 1) || yb_parse_duration(plus + sizeof PK - 1,
                                                                  &st.per_kb_ns) < 0)
            return -EINVAL;
    }
    if (mlen > 6 && !strncmp(s, "fixed:", 6)) {
        st.dist = YB_DIST_FIXED;
        if (yb_parse_duration_n(s + 6, mlen - 6, &st.a_ns) < 0)
            return -EINVAL;
    } else if (mlen > 4 && !strncmp(s, "exp:", 4)) {
        st.dist = YB_DIST_EXP;
        if (yb_parse_duration_n(s + 4, mlen - 4, &st.a_ns) < 0)
            return -EINVAL;
    } else if (mlen > 8 && !strncmp(s, "uniform:", 8)) {
        const char *a = s + 8, *end = s + mlen;
        const char *dots = NULL;
        for (const char *q = a; q + 1 < end; q++)
            if (q[0] == '.' && q[1] == '.') {
                dots = q;
                break;
            }
        st.dist = YB_DIST_UNIFORM;
        if (!dots || yb_parse_duration_n(a, (size_t)(dots - a), &st.a_ns) < 0 ||
            yb_parse_duration_n(dots + 2, (size_t)(end - dots - 2), &st.b_ns) < 0 || st.b_ns < st.a_ns)
            return -EINVAL;
    } else {
        return -EINVAL;
    }
    *out = st;
    return 0;
}

uint64_t yb_service_time_draw(const yb_service_time *st, yb_rng *r, size_t body_len)
{
    uint64_t t = 0;
    switch (st->dist) {
    case YB_DIST_FIXED:
        t = st->a_ns;
        break;
    case YB_DIST_UNIFORM:
        t = st->a_ns + (uint64_t)((double)(st->b_ns - st->a_ns) * yb_rng_unit(r));
        break;
    case YB_DIST_EXP: {
        double u = yb_rng_unit(r);
        double v = -(double)st->a_ns * log(1.0 - u);
        /* Cap the tail at 1000 means: a single draw must not wedge a worker. */
        t = v > 1000.0 * (double)st->a_ns ? st->a_ns * 1000 : (uint64_t)v;
        break;
    }
    }
    if (st->per_kb_ns)
        t += (uint64_t)((double)st->per_kb_ns * (double)body_len / 1024.0);
    return t;
}

/* ---- faults -------------------------------------------------------------- */

const char *yb_fault_name(yb_fault_kind k)
{
    static const char *const N[] = {"reset", "stall", "goaway", "status"};
    return (unsigned)k < YB_FAULT__COUNT ? N[k] : "?";
}

/* Parses "@P" at s (P in 0..1) or "@#N" (the N-th request only); empty s
 * means probability 1. */
static int parse_prob(const char *s, double *p, uint64_t *nth)
{
    *nth = 0;
    if (!*s) {
        *p = 1.0;
        return 0;
    }
    if (s[0] == '@' && s[1] == '#') {
        *p = 0.0;
        return yb_parse_u64(s + 2, 1, UINT64_MAX, nth);
    }
    if (*s != '@' || yb_parse_double(s + 1, p) < 0 || *p > 1.0)
        return -1;
    return 0;
}

int yb_fault_parse(const char *s, yb_fault *out)
{
    yb_fault f = {0};
    const char *at = strchr(s, '@');
    size_t head = at ? (size_t)(at - s) : strlen(s);
    if (!strncmp(s, "reset", head) && head == 5) {
        f.kind = YB_FAULT_RESET;
        if (parse_prob(s + head, &f.p, &f.nth) < 0)
            return -EINVAL;
    } else if (head > 6 && !strncmp(s, "stall:", 6)) {
        f.kind = YB_FAULT_STALL;
        if (yb_parse_duration_n(s + 6, head - 6, &f.dur_ns) < 0 || parse_prob(s + head, &f.p, &f.nth) < 0)
            return -EINVAL;
    } else if (head > 7 && !strncmp(s, "status:", 7)) {
        char buf[16];
        uint64_t v;
        if (head - 7 >= sizeof buf)
            return -EINVAL;
        memcpy(buf, s + 7, head - 7);
        buf[head - 7] = 0;
        /* gRPC codes 0..16 or HTTP statuses 100..599 */
        if (yb_parse_u64(buf, 0, 599, &v) < 0 || (v > 16 && v < 100))
            return -EINVAL;
        f.kind = YB_FAULT_STATUS;
        f.code = (int)v;
        if (parse_prob(s + head, &f.p, &f.nth) < 0)
            return -EINVAL;
    } else if (!at && !strncmp(s, "goaway-after:", 13)) {
        f.kind = YB_FAULT_GOAWAY_AFTER;
        if (yb_parse_u64(s + 13, 1, UINT32_MAX, &f.n) < 0)
            return -EINVAL;
    } else {
        return -EINVAL;
    }
    *out = f;
    return 0;
}

void yb_faults_roll(const yb_fault *f, size_t n, uint64_t seq, yb_rng *r, yb_fault_verdict *v,
                    uint64_t *counts)
{
    memset(v, 0, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        if (f[i].kind == YB_FAULT_GOAWAY_AFTER)
            continue;
        /* Probability 1 and 0 need no draw; keeps runs reproducible when
         * a sure fault is added next to a random one. */
        int hit = f[i].nth ? seq == f[i].nth
                  : f[i].p >= 1.0 ? 1 : f[i].p <= 0.0 ? 0 : yb_rng_unit(r) < f[i].p;
        if (!hit)
            continue;
        switch (f[i].kind) {
        case YB_FAULT_RESET:
            if (v->reset)
                continue;
            v->reset = 1;
            v->status = 0;
            break;
        case YB_FAULT_STATUS:
            if (v->reset || v->status)
                continue;
            v->status = f[i].code;
            break;
        case YB_FAULT_STALL:
            v->stall_ns += f[i].dur_ns;
            break;
        default:
            continue;
        }
        if (counts)
            counts[f[i].kind]++;
    }
}

int yb_grpc_to_http(int c)
{
    switch (c) {
    case 0: return 200;
    case 3: case 9: case 11: return 400;
    case 16: return 401;
    case 7: return 403;
    case 5: return 404;
    case 6: case 10: return 409;
    case 8: return 429;
    case 12: return 501;
    case 14: return 503;
    case 4: return 504;
    default: return 500;
    }
}

int yb_http_to_grpc(int s)
{
    switch (s) {
    case 400: return 13;
    case 401: return 16;
    case 403: return 7;
    case 404: return 12;
    case 429: case 502: case 503: case 504: return 14;
    default: return 2;
    }
}

/* ---- workers and queue ------------------------------------------------- */

enum { J_IDLE = 0, J_QUEUED, J_SERVICE, J_STALL };

static void on_timer(uv_poll_t *p, int status, int events);

int yb_sched_init(yb_sched *s, uv_loop_t *loop, unsigned workers)
{
    memset(s, 0, sizeof *s);
    s->loop = loop;
    s->workers = workers;
    s->t0 = s->t_last = s->b_last = uv_hrtime();
    /* uv_hrtime reads CLOCK_MONOTONIC: deadlines arm the timer as they are. */
    s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (s->tfd < 0) {
        int e = -errno;
        s->loop = NULL;
        return e;
    }
    int rc = uv_poll_init(loop, &s->poll, s->tfd);
    if (rc == 0 && (rc = uv_poll_start(&s->poll, UV_READABLE, on_timer)) < 0)
        uv_close((uv_handle_t *)&s->poll, NULL); /* initialised: the loop finishes it */
    if (rc < 0) {
        close(s->tfd);
        s->tfd = -1;
        s->loop = NULL;
        return rc;
    }
    s->poll.data = s;
    uv_unref((uv_handle_t *)&s->poll); /* nothing timed yet */
    return 0;
}

void yb_sched_cleanup(yb_sched *s)
{
    if (s->loop && !uv_is_closing((uv_handle_t *)&s->poll)) {
        uv_close((uv_handle_t *)&s->poll, NULL); /* stops polling tfd now */
        close(s->tfd);
        s->tfd = -1;
    }
    free(s->heap);
    s->heap = NULL;
    s->hlen = s->hcap = 0;
}

/* Accumulates queue-depth × time before the depth changes. */
static void q_account(yb_sched *s)
{
    uint64_t now = uv_hrtime();
    s->q_area += (long double)s->qlen * (long double)(now - s->t_last);
    s->t_last = now;
}

/* Accumulates busy workers × time before the count changes. */
static void b_account(yb_sched *s)
{
    uint64_t now = uv_hrtime();
    s->b_area += (long double)s->busy * (long double)(now - s->b_last);
    s->b_last = now;
}

long double yb_sched_busy_area(yb_sched *s)
{
    b_account(s);
    return s->b_area;
}

void yb_sched_queue_stats(yb_sched *s, size_t *max, double *mean)
{
    q_account(s);
    uint64_t span = s->t_last - s->t0;
    *max = s->qmax;
    *mean = span ? (double)(s->q_area / (long double)span) : 0.0;
}

/* ---- deadline heap ---- */

static void heap_swap(yb_sched *s, size_t a, size_t b)
{
    yb_job *t = s->heap[a];
    s->heap[a] = s->heap[b];
    s->heap[b] = t;
    s->heap[a]->heap_idx = a;
    s->heap[b]->heap_idx = b;
}

static void heap_up(yb_sched *s, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (s->heap[p]->deadline <= s->heap[i]->deadline)
            break;
        heap_swap(s, p, i);
        i = p;
    }
}

static void heap_down(yb_sched *s, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->hlen && s->heap[l]->deadline < s->heap[m]->deadline)
            m = l;
        if (r < s->hlen && s->heap[r]->deadline < s->heap[m]->deadline)
            m = r;
        if (m == i)
            return;
        heap_swap(s, i, m);
        i = m;
    }
}

static int heap_push(yb_sched *s, yb_job *j)
{
    if (s->hlen == s->hcap) {
        size_t nc = s->hcap ? s->hcap * 2 : 64;
        yb_job **nh = realloc(s->heap, nc * sizeof *nh);
        if (!nh)
            return -ENOMEM;
        s->heap = nh;
        s->hcap = nc;
    }
    j->heap_idx = s->hlen;
    s->heap[s->hlen++] = j;
    heap_up(s, j->heap_idx);
    return 0;
}

static void heap_remove(yb_sched *s, yb_job *j)
{
    size_t i = j->heap_idx;
    if (i >= s->hlen || s->heap[i] != j)
        return;
    s->hlen--;
    if (i != s->hlen) {
        s->heap[i] = s->heap[s->hlen];
        s->heap[i]->heap_idx = i;
        heap_down(s, i);
        heap_up(s, i);
    }
}

/* Arms the timer for the earliest deadline, to the nanosecond (a deadline
 * already past fires at once).  The timer is left as it is when it already
 * holds that deadline, and left to fire for nothing when the heap is
 * empty, so a steady stream of delays costs one syscall a request; the
 * handle keeps the loop alive only while a job is timed, as a stopped
 * timer would not. */
static void arm(yb_sched *s)
{
    if (s->hlen == 0) {
        uv_unref((uv_handle_t *)&s->poll);
        return;
    }
    uv_ref((uv_handle_t *)&s->poll);
    if (s->heap[0]->deadline == s->armed)
        return;
    uint64_t d = s->heap[0]->deadline;
    struct itimerspec its = {.it_value = {.tv_sec = (time_t)(d / 1000000000u),
                                          .tv_nsec = (long)(d % 1000000000u)}};
    if (timerfd_settime(s->tfd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
        s->armed = d;
}

static void pump(yb_sched *s);

/* Moves j to its next phase; calls done when there is none. */
static void advance(yb_sched *s, yb_job *j)
{
    for (;;) {
        switch (j->state) {
        case J_QUEUED: /* got a worker */
            b_account(s);
            s->busy++;
            j->state = J_SERVICE;
            if (j->service_ns) {
                j->deadline = uv_hrtime() + j->service_ns;
                if (heap_push(s, j) == 0)
                    return;
                /* No room to time it: answer now rather than never. */
            }
            continue;
        case J_SERVICE:
            b_account(s);
            s->busy--;
            j->state = J_STALL;
            if (j->stall_ns) {
                j->deadline = uv_hrtime() + j->stall_ns;
                if (heap_push(s, j) == 0)
                    return;
            }
            continue;
        case J_STALL:
        default:
            j->state = J_IDLE;
            j->done(j);
            return;
        }
    }
}

/* Hands free workers to queued jobs, in arrival order. */
static void pump(yb_sched *s)
{
    if (s->pumping)
        return;
    s->pumping = 1;
    while (s->qhead && (s->workers == 0 || s->busy < s->workers)) {
        yb_job *j = s->qhead;
        q_account(s);
        s->qhead = j->qnext;
        if (!s->qhead)
            s->qtail = NULL;
        s->qlen--;
        j->qnext = NULL;
        advance(s, j);
    }
    s->pumping = 0;
    arm(s);
}

static void on_timer(uv_poll_t *p, int status, int events)
{
    (void)status;
    (void)events;
    yb_sched *s = p->data;
    uint64_t n;
    while (read(s->tfd, &n, sizeof n) > 0) /* consume the expiry (non-blocking) */
        ;
    s->armed = 0;
    uint64_t now = uv_hrtime();
    s->pumping = 1;
    while (s->hlen && s->heap[0]->deadline <= now) {
        yb_job *j = s->heap[0];
        heap_remove(s, j);
        advance(s, j);
    }
    s->pumping = 0;
    pump(s);
}

int yb_sched_submit(yb_sched *s, yb_job *j)
{
    j->state = J_QUEUED;
    j->qnext = NULL;
    s->jobs++;
    /* Fast path: a free worker and nothing timed: finish in place. */
    if (!s->qhead && (s->workers == 0 || s->busy < s->workers) && !j->service_ns &&
        !j->stall_ns) {
        j->state = J_IDLE;
        j->done(j);
        return 0;
    }
    q_account(s);
    if (s->qtail)
        s->qtail->qnext = j;
    else
        s->qhead = j;
    s->qtail = j;
    s->qlen++;
    if (s->qlen > s->qmax)
        s->qmax = s->qlen;
    pump(s);
    return 0;
}

int yb_sched_pending(const yb_job *j) { return j->state != J_IDLE; }

void yb_sched_cancel(yb_sched *s, yb_job *j)
{
    switch (j->state) {
    case J_QUEUED: {
        q_account(s);
        yb_job **pp = &s->qhead, *prev = NULL;
        while (*pp && *pp != j) {
            prev = *pp;
            pp = &(*pp)->qnext;
        }
        if (*pp) {
            *pp = j->qnext;
            if (s->qtail == j)
                s->qtail = prev;
            s->qlen--;
        }
        break;
    }
    case J_SERVICE:
        heap_remove(s, j);
        b_account(s);
        s->busy--;
        break;
    case J_STALL:
        heap_remove(s, j);
        break;
    default:
        return;
    }
    j->state = J_IDLE;
    pump(s);
}
