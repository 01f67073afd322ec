/* The openconfig-system view of `yangblast serve` (see system.h): the OS's
 * own figures from /proc, sampled once a second, plus the modelled worker
 * occupancy of each device.  Everything read from /proc is bounded: files
 * are read into capped buffers and parsed with strtoull under checks. */
#include "config.h"
#include "serve/system.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_CPUS 1024
#define MAX_TASKS 256
#define STAT_CAP (256 * 1024)   /* /proc/stat with many CPUs and interrupts */
#define SMALL_CAP 8192

typedef struct {
    uint64_t total, idle, user, kernel; /* ticks */
} cpu_ticks;

typedef struct {
    unsigned total, user, kernel, idle; /* percent over the last second */
} cpu_pct;

typedef struct {
    long tid;
    char comm[32];
    uint64_t ticks;         /* utime + stime */
    unsigned pct;
} task_info;

typedef struct {
    yb_sched *sched;
    unsigned workers;
    unsigned pct;
} dev_info;

/* What one sample read: the counters the figures are differences of. */
typedef struct {
    uint64_t t;             /* uv_hrtime; 0 = empty */
    unsigned ncpu;
    cpu_ticks *cpu;         /* [0] ALL, [1..ncpu] */
    uint64_t proc;          /* this process's utime + stime */
    unsigned ntask;
    task_info *task;
    long double *area;      /* per device: busy workers x ns */
} snap;

/* Samples every TICK_MS into a ring of RING: a figure is the difference
 * between a fresh sample, taken when a request reads the tree, and the
 * sample one second older, so "the last second" ends at the request. */
#define TICK_MS 100
#define RING 12

struct yb_sys {
    uv_timer_t timer;
    int timer_on;
    long clk;               /* ticks per second */
    long page;
    uint64_t btime_ns;      /* boot time, ns since the epoch */
    snap ring[RING];
    unsigned head;
    snap now;               /* the fresh sample of the last read */
    unsigned ncpu;          /* per-CPU entries of the figures (cpu[0] is ALL) */
    cpu_pct cpu[MAX_CPUS + 1];
    unsigned proc_pct;
    task_info task[MAX_TASKS];
    unsigned ntask;
    unsigned ndev;
    dev_info *dev;
    char *buf;              /* STAT_CAP bytes for /proc/stat */
};

/* ---- /proc readers ------------------------------------------------------ */

/* Reads path into buf (at most cap - 1 bytes, NUL-terminated).  Returns
 * the length or -errno. */
static long read_text(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t n = 0;
    while (n < cap - 1) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    return (long)n;
}

/* The next unsigned number in *p (skipping blanks); 0 when none. */
static uint64_t next_u64(const char **p)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!isdigit((unsigned char)*s)) {
        *p = s;
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    *p = end;
    return errno ? 0 : (uint64_t)v;
}

/* A /proc/.../stat line: comm (between the first '(' and the last ')'),
 * then utime + stime (fields 14, 15), starttime (22) and rss (24).
 * Returns 0 or -EINVAL. */
typedef struct {
    char comm[32];
    uint64_t utime, stime, start, rss;
} pstat;

static int parse_pstat(const char *text, pstat *ps)
{
    const char *l = strchr(text, '('), *r = strrchr(text, ')');
    if (!l || !r || r < l)
        return -EINVAL;
    size_t cl = (size_t)(r - l - 1);
    if (cl >= sizeof ps->comm)
        cl = sizeof ps->comm - 1;
    memcpy(ps->comm, l + 1, cl);
    ps->comm[cl] = '\0';
    /* Field 3 (state) follows ") "; field f is token f - 3 after it. */
    const char *p = r + 1;
    while (*p == ' ')
        p++;
    if (!*p)
        return -EINVAL;
    p++;                /* the state letter */
    uint64_t v[22];
    for (int f = 4; f <= 24; f++) {
        while (*p == ' ')
            p++;
        if (*p == '-')  /* signed fields (priority, nice): not needed */
            p++;
        if (!isdigit((unsigned char)*p))
            return -EINVAL;
        v[f - 4] = next_u64(&p);
    }
    ps->utime = v[14 - 4];
    ps->stime = v[15 - 4];
    ps->start = v[22 - 4];
    ps->rss = v[24 - 4];
    return 0;
}

static int read_pstat(const char *path, pstat *ps)
{
    char buf[SMALL_CAP];
    long n = read_text(path, buf, sizeof buf);
    if (n < 0)
        return (int)n;
    return parse_pstat(buf, ps);
}

/* /proc/stat: the aggregate and per-CPU tick counters (into t[0] and
 * t[1..]), and btime.  Returns the number of CPUs (0 on failure). */
static unsigned read_cpus(yb_sys *y, cpu_ticks *t, uint64_t *btime)
{
    if (read_text("/proc/stat", y->buf, STAT_CAP) < 0)
        return 0;
    unsigned n = 0;
    for (const char *line = y->buf; line && *line;) {
        const char *nl = strchr(line, '\n');
        if (!strncmp(line, "cpu", 3)) {
            const char *p = line + 3;
            unsigned idx = 0;
            if (isdigit((unsigned char)*p)) {
                uint64_t k = next_u64(&p);
                idx = k < MAX_CPUS ? (unsigned)k + 1 : 0;
                if (!idx)
                    goto next;
            }
            uint64_t f[8] = {0};
            for (int i = 0; i < 8; i++)
                f[i] = next_u64(&p);
            /* user nice system idle iowait irq softirq steal */
            t[idx].total = f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7];
            t[idx].idle = f[3] + f[4];
            t[idx].user = f[0] + f[1];
            t[idx].kernel = f[2] + f[5] + f[6];
            if (idx > n)
                n = idx;
        } else if (!strncmp(line, "btime ", 6)) {
            const char *p = line + 6;
            *btime = next_u64(&p);
        }
    next:
        line = nl ? nl + 1 : NULL;
    }
    return n;
}

static unsigned pct_of(uint64_t part, uint64_t whole)
{
    if (!whole)
        return 0;
    uint64_t v = (part * 100 + whole / 2) / whole;
    return v > 100 ? 100 : (unsigned)v;
}

/* Percent of one core: ticks over secs seconds. */
static unsigned core_pct(const yb_sys *y, uint64_t ticks, double secs)
{
    if (secs <= 0 || y->clk <= 0)
        return 0;
    double v = (double)ticks / (double)y->clk / secs * 100.0 + 0.5;
    return v > 1e6 ? 1000000u : (unsigned)v;
}

/* The threads of this process (at most MAX_TASKS) into out; 0 if the
 * directory cannot be read. */
static unsigned read_tasks(task_info *out)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 0;
    unsigned n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < MAX_TASKS) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        char path[64];
        pstat ps;
        snprintf(path, sizeof path, "/proc/self/task/%.20s/stat", e->d_name);
        if (read_pstat(path, &ps) < 0)
            continue;
        const char *p = e->d_name;
        out[n].tid = (long)next_u64(&p);
        memcpy(out[n].comm, ps.comm, sizeof out[n].comm);
        out[n].ticks = ps.utime + ps.stime;
        out[n].pct = 0;
        n++;
    }
    closedir(d);
    return n;
}

/* ---- the sampler ---------------------------------------------------------- */

static int snap_alloc(snap *sn, unsigned ndev)
{
    sn->cpu = calloc(MAX_CPUS + 1, sizeof *sn->cpu);
    sn->task = calloc(MAX_TASKS, sizeof *sn->task);
    sn->area = calloc(ndev ? ndev : 1, sizeof *sn->area);
    return sn->cpu && sn->task && sn->area ? 0 : -1;
}

static void snap_free(snap *sn)
{
    free(sn->cpu);
    free(sn->task);
    free(sn->area);
}

static void take(yb_sys *y, snap *sn)
{
    uint64_t bt = 0;
    sn->t = uv_hrtime();
    memset(sn->cpu, 0, (MAX_CPUS + 1) * sizeof *sn->cpu);
    sn->ncpu = read_cpus(y, sn->cpu, &bt);
    if (bt)
        y->btime_ns = bt * 1000000000ull;
    pstat ps;
    sn->proc = read_pstat("/proc/self/stat", &ps) == 0 ? ps.utime + ps.stime : 0;
    sn->ntask = read_tasks(sn->task);
    for (unsigned k = 0; k < y->ndev; k++)
        sn->area[k] = y->dev[k].sched ? yb_sched_busy_area(y->dev[k].sched) : 0;
}

static uint64_t dif(uint64_t b, uint64_t a) { return b > a ? b - a : 0; }

/* The figures over the second before now: a fresh sample against the
 * newest ring sample at least a second older (or the oldest there is). */
static void figures(yb_sys *y)
{
    if (y->now.t && uv_hrtime() - y->now.t < 20000000u)
        return;     /* read within the last 20 ms: still fresh */
    take(y, &y->now);
    const snap *b = &y->now, *old1 = NULL, *oldest = NULL;
    for (unsigned i = 0; i < RING; i++) {
        const snap *r = &y->ring[i];
        if (!r->t || r->t >= b->t)
            continue;
        if (b->t - r->t >= 1000000000u && (!old1 || r->t > old1->t))
            old1 = r;   /* the newest a second old or more */
        if (!oldest || r->t < oldest->t)
            oldest = r;
    }
    const snap *a = old1 ? old1 : oldest;
    y->ncpu = b->ncpu;
    if (!a)
        return;
    double secs = (double)(b->t - a->t) / 1e9;
    for (unsigned i = 0; i <= b->ncpu; i++) {
        const cpu_ticks *p = &a->cpu[i], *q = &b->cpu[i];
        uint64_t dt = dif(q->total, p->total), di = dif(q->idle, p->idle);
        if (!dt)
            continue;
        y->cpu[i].total = pct_of(dt > di ? dt - di : 0, dt);
        y->cpu[i].user = pct_of(dif(q->user, p->user), dt);
        y->cpu[i].kernel = pct_of(dif(q->kernel, p->kernel), dt);
        y->cpu[i].idle = pct_of(di, dt);
    }
    y->proc_pct = core_pct(y, dif(b->proc, a->proc), secs);
    y->ntask = b->ntask;
    for (unsigned i = 0; i < b->ntask; i++) {
        y->task[i] = b->task[i];
        y->task[i].pct = 0;
        for (unsigned j = 0; j < a->ntask; j++)
            if (a->task[j].tid == b->task[i].tid)
                y->task[i].pct = core_pct(y, dif(b->task[i].ticks, a->task[j].ticks), secs);
    }
    for (unsigned k = 0; k < y->ndev; k++) {
        dev_info *d = &y->dev[k];
        long double span = (long double)(b->t - a->t) * (d->workers ? d->workers : 1);
        long double v = (b->area[k] - a->area[k]) / span * 100.0L + 0.5L;
        d->pct = v < 0 ? 0 : v > 1e6L ? 1000000u : (unsigned)v;
    }
}

static void on_tick(uv_timer_t *t)
{
    yb_sys *y = t->data;
    take(y, &y->ring[y->head]);
    y->head = (y->head + 1) % RING;
}

yb_sys *yb_sys_new(uv_loop_t *loop, unsigned ndev)
{
    yb_sys *y = calloc(1, sizeof *y);
    if (!y)
        return NULL;
    y->buf = malloc(STAT_CAP);
    y->dev = calloc(ndev ? ndev : 1, sizeof *y->dev);
    int ok = y->buf && y->dev && snap_alloc(&y->now, ndev) == 0;
    for (unsigned i = 0; ok && i < RING; i++)
        ok = snap_alloc(&y->ring[i], ndev) == 0;
    if (!ok || uv_timer_init(loop, &y->timer) < 0) {
        yb_sys_free(y);
        return NULL;
    }
    y->ndev = ndev;
    y->clk = sysconf(_SC_CLK_TCK);
    y->page = sysconf(_SC_PAGESIZE);
    y->timer.data = y;
    y->timer_on = 1;
    uv_unref((uv_handle_t *)&y->timer);
    uv_timer_start(&y->timer, on_tick, TICK_MS, TICK_MS);
    on_tick(&y->timer);
    return y;
}

void yb_sys_set_device(yb_sys *y, unsigned k, yb_sched *sched, unsigned workers)
{
    if (!y || k >= y->ndev)
        return;
    y->dev[k].sched = sched;
    y->dev[k].workers = workers;
    /* the samples so far had no workers to read: start them from now */
    long double area = yb_sched_busy_area(sched);
    for (unsigned i = 0; i < RING; i++)
        y->ring[i].area[k] = area;
}

void yb_sys_stop(yb_sys *y)
{
    if (!y || !y->timer_on)
        return;
    y->timer_on = 0;
    for (unsigned k = 0; k < y->ndev; k++)
        y->dev[k].sched = NULL;     /* the devices' schedulers are going */
    uv_close((uv_handle_t *)&y->timer, NULL);
}

void yb_sys_free(yb_sys *y)
{
    if (!y)
        return;
    snap_free(&y->now);
    for (unsigned i = 0; i < RING; i++)
        snap_free(&y->ring[i]);
    free(y->buf);
    free(y->dev);
    free(y);
}

/* ---- the tree ---------------------------------------------------------------- */

int yb_sys_path(const yb_spath *p) { return p->n > 0 && !strcmp(p->seg[0].name, "system"); }

static int match(const yb_spath *p, const yb_sys_leaf *l)
{
    if (p->n > l->n)
        return 0;
    for (unsigned i = 0; i < p->n; i++) {
        const yb_spath_seg *g = &p->seg[i];
        if (strcmp(g->name, "*") && strcmp(g->name, l->name[i]))
            return 0;
        for (unsigned j = 0; j < g->nkeys; j++) {
            if (!l->key[i] || j > 0)
                return 0;
            if (g->key_name[j] && strcmp(g->key_name[j], l->key[i]))
                return 0;
            if (strcmp(g->key_val[j], "*") && strcmp(g->key_val[j], l->kval[i]))
                return 0;
        }
    }
    return 1;
}

typedef struct {
    const yb_spath *p;
    yb_sys_leaf_fn fn;
    void *ud;
    size_t count;
    yb_sys_leaf l;
} walk_ctx;

/* Emits the leaf made of the base elements already in w->l (nbase of
 * them) plus the names in rest (NULL-terminated). */
static void put(walk_ctx *w, unsigned nbase, const char *const *rest, int is_str, const char *s,
                uint64_t u)
{
    unsigned n = nbase;
    for (; *rest && n < YB_SYS_MAX_ELEMS; rest++, n++) {
        w->l.name[n] = *rest;
        w->l.key[n] = NULL;
        w->l.kval[n] = NULL;
    }
    w->l.n = n;
    w->l.is_str = is_str;
    w->l.s = s;
    w->l.u = u;
    if (match(w->p, &w->l)) {
        w->count++;
        w->fn(w->ud, &w->l);
    }
}

#define PATH(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Sets element i of the leaf being built. */
static void elem(walk_ctx *w, unsigned i, const char *name, const char *key, const char *kval)
{
    w->l.name[i] = name;
    w->l.key[i] = key;
    w->l.kval[i] = kval;
}

/* Whether anything at or below the base elements can match: saves reading
 * /proc for parts of the tree nobody asked for. */
static int wanted(const walk_ctx *w, unsigned nbase)
{
    const yb_spath *p = w->p;
    unsigned n = p->n < nbase ? p->n : nbase;
    for (unsigned i = 0; i < n; i++) {
        if (strcmp(p->seg[i].name, "*") && strcmp(p->seg[i].name, w->l.name[i]))
            return 0;
        if (w->l.key[i] && p->seg[i].nkeys == 1 && strcmp(p->seg[i].key_val[0], "*") &&
            strcmp(p->seg[i].key_val[0], w->l.kval[i]))
            return 0;
    }
    return 1;
}

static void put_cpu(walk_ctx *w, const cpu_pct *c, const char *idx, int all)
{
    elem(w, 2, "cpu", "index", idx);
    if (!wanted(w, 3))
        return;
    elem(w, 3, "state", NULL, NULL);
    uint64_t iv = 0;
    if (!all) {
        const char *p = idx;
        iv = next_u64(&p);
    }
    put(w, 4, PATH("index"), all, all ? "ALL" : NULL, iv);
    put(w, 4, PATH("total", "instant"), 0, NULL, c->total);
    put(w, 4, PATH("user", "instant"), 0, NULL, c->user);
    put(w, 4, PATH("kernel", "instant"), 0, NULL, c->kernel);
    put(w, 4, PATH("idle", "instant"), 0, NULL, c->idle);
}

/* /proc/meminfo: MemTotal, MemAvailable, MemFree in bytes. */
static void read_mem(uint64_t *total, uint64_t *avail, uint64_t *free_)
{
    char buf[SMALL_CAP];
    *total = *avail = *free_ = 0;
    if (read_text("/proc/meminfo", buf, sizeof buf) < 0)
        return;
    static const char *const K[] = {"MemTotal:", "MemAvailable:", "MemFree:"};
    uint64_t *out[] = {total, avail, free_};
    for (int i = 0; i < 3; i++) {
        const char *p = strstr(buf, K[i]);
        if (p) {
            p += strlen(K[i]);
            *out[i] = next_u64(&p) * 1024;
        }
    }
}

static void put_process(walk_ctx *w, const yb_sys *y, const char *pid, const char *name,
                        uint64_t start_ns, uint64_t ut_ns, uint64_t st_ns, unsigned pct,
                        uint64_t mem, uint64_t memtotal)
{
    elem(w, 2, "process", "pid", pid);
    if (!wanted(w, 3))
        return;
    (void)y;
    elem(w, 3, "state", NULL, NULL);
    const char *p = pid;
    put(w, 4, PATH("pid"), 0, NULL, next_u64(&p));
    put(w, 4, PATH("name"), 1, name, 0);
    put(w, 4, PATH("start-time"), 0, NULL, start_ns);
    put(w, 4, PATH("cpu-usage-user"), 0, NULL, ut_ns);
    put(w, 4, PATH("cpu-usage-system"), 0, NULL, st_ns);
    put(w, 4, PATH("cpu-utilization"), 0, NULL, pct);
    put(w, 4, PATH("memory-usage"), 0, NULL, mem);
    put(w, 4, PATH("memory-utilization"), 0, NULL, memtotal ? pct_of(mem, memtotal) : 0);
}

static uint64_t ticks_ns(const yb_sys *y, uint64_t t)
{
    return y->clk > 0 ? t * (1000000000ull / (uint64_t)y->clk) : 0;
}

size_t yb_sys_walk(yb_sys *y, unsigned k, const yb_spath *p, yb_sys_leaf_fn fn, void *ud)
{
    walk_ctx w = {p, fn, ud, 0, {0}};
    char idx[24];
    if (!yb_sys_path(p) || k >= y->ndev)
        return 0;
    figures(y);
    elem(&w, 0, "system", NULL, NULL);

    elem(&w, 1, "cpus", NULL, NULL);
    if (wanted(&w, 2)) {
        put_cpu(&w, &y->cpu[0], "ALL", 1);
        for (unsigned i = 1; i <= y->ncpu; i++) {
            snprintf(idx, sizeof idx, "%u", i - 1);
            put_cpu(&w, &y->cpu[i], idx, 0);
        }
    }

    uint64_t mt = 0, ma = 0, mf = 0;
    elem(&w, 1, "memory", NULL, NULL);
    int mem_read = 0;
    if (wanted(&w, 2)) {
        read_mem(&mt, &ma, &mf);
        mem_read = 1;
        elem(&w, 2, "state", NULL, NULL);
        put(&w, 3, PATH("physical"), 0, NULL, mt);
        put(&w, 3, PATH("used"), 0, NULL, mt > ma ? mt - ma : 0);
        put(&w, 3, PATH("free"), 0, NULL, mf);
    }

    elem(&w, 1, "processes", NULL, NULL);
    if (wanted(&w, 2)) {
        if (!mem_read)
            read_mem(&mt, &ma, &mf);
        pstat ps;
        if (read_pstat("/proc/self/stat", &ps) == 0) {
            char pid[24], name[64];
            snprintf(pid, sizeof pid, "%ld", (long)getpid());
            snprintf(name, sizeof name, "%s", ps.comm);
            put_process(&w, y, pid, name, y->btime_ns + ticks_ns(y, ps.start),
                        ticks_ns(y, ps.utime), ticks_ns(y, ps.stime), y->proc_pct,
                        ps.rss * (uint64_t)(y->page > 0 ? y->page : 4096), mt);
            /* The other threads, when there are any, as their own entries
             * keyed by thread id (as /proc lists them): per-thread CPU. */
            for (unsigned i = 0; y->ntask > 1 && i < y->ntask; i++) {
                const task_info *t = &y->task[i];
                if (t->tid == (long)getpid())
                    continue;
                char tid[24], tname[64];
                snprintf(tid, sizeof tid, "%ld", t->tid);
                snprintf(tname, sizeof tname, "%s/%s", ps.comm, t->comm);
                put_process(&w, y, tid, tname, 0, ticks_ns(y, t->ticks), 0, t->pct, 0, mt);
            }
        }
        const dev_info *d = &y->dev[k];
        put_process(&w, y, "0", "serve-model-busy", 0, 0, 0, d->pct, 0, mt);
    }
    return w.count;
}

/* ---- RESTCONF JSON ---------------------------------------------------------- */

typedef struct {
    unsigned top;           /* index of the element the document is named after */
    json_t *root;           /* the value of the document's one member */
    int err;
} json_ctx;

static json_t *key_json(const char *v)
{
    const char *p = v;
    if (isdigit((unsigned char)*v)) {
        uint64_t u = next_u64(&p);
        if (!*p && u <= INT64_MAX)
            return json_integer((json_int_t)u);
    }
    return json_string(v);
}

/* The entry of list array arr whose key is kval, created when missing.
 * Returns a borrowed reference or NULL on ENOMEM. */
static json_t *list_entry(json_t *arr, const char *key, const char *kval)
{
    json_t *kv = key_json(kval);
    if (!kv)
        return NULL;
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) {
        if (json_equal(json_object_get(e, key), kv)) {
            json_decref(kv);
            return e;
        }
    }
    e = json_object();
    if (!e) {
        json_decref(kv);
        return NULL;
    }
    /* Both _new calls take their reference even when they fail. */
    if (json_object_set_new(e, key, kv) < 0) {
        json_decref(e);
        return NULL;
    }
    return json_array_append_new(arr, e) < 0 ? NULL : e;
}

static void json_leaf(void *ud, const yb_sys_leaf *l)
{
    json_ctx *x = ud;
    if (x->err)
        return;
    json_t *val = l->is_str ? json_string(l->s) : json_integer((json_int_t)l->u);
    if (!val) {
        x->err = 1;
        return;
    }
    unsigned t = x->top;
    if (t == l->n - 1) {            /* the request names the leaf itself */
        json_decref(x->root);
        x->root = val;
        return;
    }
    if (!x->root)
        x->root = l->key[t] ? json_array() : json_object();
    json_t *cur = x->root;
    if (cur && l->key[t])
        cur = list_entry(cur, l->key[t], l->kval[t]);
    for (unsigned i = t + 1; cur && i < l->n - 1; i++) {
        json_t *next = json_object_get(cur, l->name[i]);
        if (!next) {
            next = l->key[i] ? json_array() : json_object();
            if (!next || json_object_set_new(cur, l->name[i], next) < 0) {
                cur = NULL;
                break;
            }
        }
        cur = l->key[i] ? list_entry(next, l->key[i], l->kval[i]) : next;
    }
    if (!cur || json_object_set_new(cur, l->name[l->n - 1], val) < 0) {
        if (!cur)
            json_decref(val);
        x->err = 1;
    }
}

json_t *yb_sys_json(yb_sys *y, unsigned k, const yb_spath *p, int *nomem)
{
    json_ctx x = {p->n ? p->n - 1 : 0, NULL, 0};
    *nomem = 0;
    size_t n = yb_sys_walk(y, k, p, json_leaf, &x);
    if (x.err || (n && !x.root)) {
        json_decref(x.root);
        *nomem = 1;
        return NULL;
    }
    if (!n)
        return NULL;
    char name[YB_SPATH_ARENA + 32];
    snprintf(name, sizeof name, "openconfig-system:%s", p->seg[x.top].name);
    json_t *doc = json_object();
    if (!doc || json_object_set_new(doc, name, x.root) < 0) {
        json_decref(doc);
        *nomem = 1;
        return NULL;
    }
    return doc;
}
