/* Device telemetry sessions (see telemetry.h): one thread, one libuv loop,
 * one session per device on the project's transport and codecs. */
#include "config.h"
#include "telemetry/telemetry.h"
#include "gnmi/gnmi_msg.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_OBS (1u << 20)      /* per device: ~24 MiB, hours of 1 s samples */
#define BODY_KEEP (1u << 20)    /* RESTCONF: the part of a GET body read */
#define STOP_GRACE_MS 2000      /* sessions get this long to end politely */

/* What a session asks for, besides --telemetry-path. */
static const char *const GNMI_PATHS[] = {
    "/openconfig-system:system/cpus/cpu[index=*]/state/total/instant",
    "/openconfig-system:system/memory/state",
    "/openconfig-system:system/processes/process[pid=*]/state",
};
/* RESTCONF: the same data in three GETs; an answer is the last element's
 * value ({"openconfig-system:cpus": ...}), read below its gNMI parent. */
static const char *const RESTCONF_PATHS[] = {
    "/restconf/data/openconfig-system:system/cpus",
    "/restconf/data/openconfig-system:system/memory/state",
    "/restconf/data/openconfig-system:system/processes",
};
static const char *const RESTCONF_PARENT[] = {"/system", "/system/memory", "/system"};
#define N_OWN 3

typedef struct tsess {
    struct yb_telemetry *tm;
    yb_tm_device *dev;
    const yb_tm_target *tg;
    yb_codec_cfg cfg;           /* the run's, with the body kept (RESTCONF) */
    yb_tls_ctx *tls;
    yb_transport *t;
    const yb_codec_ops *ops;
    yb_codec *codec;
    yb_codec_host host;
    yb_mem_budget budget;
    yb_prepared prep[N_OWN + YB_TM_MAX_PATHS];
    size_t n_prep;
    yb_exchange x;
    int busy;                   /* x in flight */
    size_t next;                /* RESTCONF: the next path of this round */
    int closed;                 /* the transport is gone (or never came) */
    int stopping;
    uint64_t system_leaves;     /* system leaves seen (supported) */
    uv_timer_t poll;            /* RESTCONF: one round per interval */
    int poll_on;
} tsess;

struct yb_telemetry {
    const yb_tm_cfg *cfg;
    uv_loop_t loop;
    uv_async_t wake;
    uv_timer_t grace;
    uv_thread_t thread;
    int thread_on;
    volatile int stop_req;
    char extra_pfx[YB_TM_MAX_PATHS][512]; /* --telemetry-path as leaf-path text */
    tsess *s;
    yb_tm_device *dev;
    size_t n;
    double cpu_s;
};

/* ---- observations ----------------------------------------------------------- */

static void obs_add(yb_tm_device *d, uint64_t t, uint32_t kind, uint32_t id, double v)
{
    if (d->n_obs == d->cap_obs) {
        size_t cap = d->cap_obs ? d->cap_obs * 2 : 1024;
        yb_tm_obs *o = cap <= MAX_OBS ? realloc(d->obs, cap * sizeof *o) : NULL;
        if (!o) {
            d->obs_dropped++;
            return;
        }
        d->obs = o;
        d->cap_obs = cap;
    }
    d->obs[d->n_obs++] = (yb_tm_obs){t, kind, id, v};
}

/* The index of name in a device's table (added when new; -1 when full). */
static long name_index(yb_tm_name **tab, size_t *n, uint64_t id, const char *name, int by_name)
{
    for (size_t i = 0; i < *n; i++)
        if (by_name ? !strcmp((*tab)[i].name, name) : (*tab)[i].id == id) {
            if (!by_name && name && *name)
                snprintf((*tab)[i].name, sizeof (*tab)[i].name, "%s", name);
            return (long)i;
        }
    if (*n >= YB_TM_MAX_NAMES)
        return -1;
    yb_tm_name *t = realloc(*tab, (*n + 1) * sizeof *t);
    if (!t)
        return -1;
    *tab = t;
    t[*n].id = by_name ? *n : id;
    snprintf(t[*n].name, sizeof t[*n].name, "%s", name ? name : "");
    return (long)(*n)++;
}

/* A leaf path as elements: names without their module, the first key. */
#define MAX_ELEMS 16
typedef struct {
    unsigned n;
    char name[MAX_ELEMS][64];
    char key[MAX_ELEMS][32];
    char kval[MAX_ELEMS][64];
} lpath;

static void lpath_push(lpath *p, const char *name, const char *key, const char *kval)
{
    if (p->n >= MAX_ELEMS)
        return;
    const char *c = strchr(name, ':');
    snprintf(p->name[p->n], sizeof p->name[0], "%s", c ? c + 1 : name);
    snprintf(p->key[p->n], sizeof p->key[0], "%s", key ? key : "");
    snprintf(p->kval[p->n], sizeof p->kval[0], "%s", kval ? kval : "");
    p->n++;
}

static void lpath_text(const lpath *p, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < p->n && n < cap; i++) {
        int w = *p->key[i] ? snprintf(buf + n, cap - n, "/%s[%s=%s]", p->name[i], p->key[i],
                                      p->kval[i])
                           : snprintf(buf + n, cap - n, "/%s", p->name[i]);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

/* When a sample arriving now was measured: an instant figure covers the
 * interval before it, so it is placed in the middle of that interval. */
static uint64_t sample_time(const tsess *s)
{
    uint64_t now = uv_hrtime(), half = s->tm->cfg->interval_ns / 2;
    return now > half ? now - half : now;
}

static int is(const lpath *p, unsigned i, const char *name)
{
    return i < p->n && !strcmp(p->name[i], name);
}

/* One leaf value: files it by what it is. */
static void leaf(tsess *s, const lpath *p, uint64_t t, int is_num, double v, const char *str)
{
    yb_tm_device *d = s->dev;
    if (is_num && s->tm->cfg->n_paths) {
        char txt[512];
        lpath_text(p, txt, sizeof txt);
        for (size_t i = 0; i < s->tm->cfg->n_paths; i++) {
            size_t l = strlen(s->tm->extra_pfx[i]);
            if (!strncmp(txt, s->tm->extra_pfx[i], l) && (txt[l] == '\0' || txt[l] == '/')) {
                long k = name_index(&d->extras, &d->n_extras, 0, txt, 1);
                if (k >= 0)
                    obs_add(d, t, YB_TM_EXTRA, (uint32_t)k, v);
                break;
            }
        }
    }
    if (is(p, 0, "system")) {
        if (is(p, 1, "cpus") && is(p, 2, "cpu") && is(p, 3, "state") && is(p, 4, "total") &&
            (p->n == 5 || is(p, 5, "instant")) && is_num) {
            s->system_leaves++;
            if (!strcmp(p->kval[2], "ALL")) {
                obs_add(d, t, YB_TM_CPU_ALL, 0, v);
            } else {
                char *end;
                unsigned long k = strtoul(p->kval[2], &end, 10);
                if (*p->kval[2] && !*end && k < UINT32_MAX)
                    obs_add(d, t, YB_TM_CPU_N, (uint32_t)k, v);
            }
            return;
        }
        if (is(p, 1, "memory") && is(p, 2, "state") && p->n == 4 && is_num &&
            (is(p, 3, "physical") || is(p, 3, "used"))) {
            s->system_leaves++;
            obs_add(d, t, is(p, 3, "used") ? YB_TM_MEM_USED : YB_TM_MEM_PHYS, 0, v);
            return;
        }
        if (is(p, 1, "processes") && is(p, 2, "process") && is(p, 3, "state") && p->n == 5) {
            char *end;
            unsigned long long pid = strtoull(p->kval[2], &end, 10);
            if (!*p->kval[2] || *end)
                return;
            s->system_leaves++;
            long k = name_index(&d->procs, &d->n_procs, pid,
                                is(p, 4, "name") && str ? str : NULL, 0);
            if (k < 0)
                return;
            if (is(p, 4, "cpu-utilization") && is_num)
                obs_add(d, t, YB_TM_PROC_CPU, (uint32_t)k, v);
            else if (is(p, 4, "memory-usage") && is_num)
                obs_add(d, t, YB_TM_PROC_MEM, (uint32_t)k, v);
            return;
        }
        if (is(p, 1, "cpus") || is(p, 1, "memory") || is(p, 1, "processes")) {
            s->system_leaves++;
            return;     /* leaves we do not chart (user, kernel, free, ...) */
        }
    }
}

/* A JSON value under p: scalars are leaves, objects nest, a list's
 * entries take their key from a member named like the list's usual key. */
static void json_leaves(tsess *s, lpath *p, const json_t *v, uint64_t t, int depth)
{
    if (depth > 12)
        return;
    if (json_is_number(v)) {
        leaf(s, p, t, 1, json_number_value(v), NULL);
    } else if (json_is_string(v)) {
        /* RFC 7951 puts 64-bit integers in strings */
        const char *str = json_string_value(v);
        char *end;
        double d = strtod(str, &end);
        leaf(s, p, t, *str && !*end, d, str);
    } else if (json_is_object(v)) {
        const char *k;
        json_t *m;
        json_object_foreach((json_t *)v, k, m) {
            unsigned n = p->n;
            lpath_push(p, k, NULL, NULL);
            json_leaves(s, p, m, t, depth + 1);
            p->n = n;
        }
    } else if (json_is_array(v) && p->n) {
        static const char *const KEYS[] = {"index", "pid", "name"};
        size_t i;
        json_t *e;
        json_array_foreach((json_t *)v, i, e) {
            const char *key = NULL;
            char kval[64] = "";
            for (size_t j = 0; !key && j < 3; j++) {
                json_t *kv = json_object_get(e, KEYS[j]);
                if (json_is_string(kv))
                    snprintf(kval, sizeof kval, "%s", json_string_value(kv));
                else if (json_is_integer(kv))
                    snprintf(kval, sizeof kval, "%lld", (long long)json_integer_value(kv));
                else
                    continue;
                key = KEYS[j];
            }
            unsigned last = p->n - 1;
            snprintf(p->key[last], sizeof p->key[0], "%s", key ? key : "");
            snprintf(p->kval[last], sizeof p->kval[0], "%s", kval);
            json_leaves(s, p, e, t, depth + 1);
            p->key[last][0] = p->kval[last][0] = '\0';
        }
    }
}

static void add_gpath(lpath *lp, const Gnmi__Path *gp)
{
    for (size_t i = 0; gp && i < gp->n_elem; i++) {
        const Gnmi__PathElem *e = gp->elem[i];
        const char *k = e->n_key && e->key[0]->key ? e->key[0]->key : NULL;
        lpath_push(lp, e->name ? e->name : "", k, k ? e->key[0]->value : NULL);
    }
}

/* yb_codec_host.notification: a Subscribe notification's updates. */
static void on_notification(void *host, const struct Gnmi__Notification *nf)
{
    tsess *s = host;
    uint64_t t = sample_time(s);
    s->dev->notifications++;
    s->dev->updates += nf->n_update;
    for (size_t i = 0; i < nf->n_update; i++) {
        const Gnmi__Update *u = nf->update[i];
        lpath lp = {0};
        add_gpath(&lp, nf->prefix);
        add_gpath(&lp, u->path);
        const Gnmi__TypedValue *tv = u->val;
        if (!tv)
            continue;
        switch (tv->value_case) {
        case GNMI__TYPED_VALUE__VALUE_UINT_VAL: leaf(s, &lp, t, 1, (double)tv->uint_val, NULL); break;
        case GNMI__TYPED_VALUE__VALUE_INT_VAL: leaf(s, &lp, t, 1, (double)tv->int_val, NULL); break;
        case GNMI__TYPED_VALUE__VALUE_DOUBLE_VAL: leaf(s, &lp, t, 1, tv->double_val, NULL); break;
        case GNMI__TYPED_VALUE__VALUE_FLOAT_VAL: leaf(s, &lp, t, 1, tv->float_val, NULL); break;
        case GNMI__TYPED_VALUE__VALUE_STRING_VAL: {
            char *end;
            double d = strtod(tv->string_val, &end);
            leaf(s, &lp, t, *tv->string_val && !*end, d, tv->string_val);
            break;
        }
        case GNMI__TYPED_VALUE__VALUE_JSON_IETF_VAL:
        case GNMI__TYPED_VALUE__VALUE_JSON_VAL: {
            const ProtobufCBinaryData *b = tv->value_case == GNMI__TYPED_VALUE__VALUE_JSON_VAL
                                               ? &tv->json_val : &tv->json_ietf_val;
            json_t *j = json_loadb((const char *)b->data, b->len, JSON_DECODE_ANY, NULL);
            if (j) {
                json_leaves(s, &lp, j, t, 0);
                json_decref(j);
            }
            break;
        }
        default:
            break;
        }
    }
}

/* ---- sessions ------------------------------------------------------------------ */

static void sess_close(tsess *s)
{
    if (s->t && !s->closed)
        yb_transport_close(s->t);
}

static void submit_next(tsess *s);

static int host_write(void *host, const uv_buf_t *bufs, unsigned n)
{
    tsess *s = host;
    return s->t && !s->closed ? yb_transport_write(s->t, bufs, n) : -1;
}

/* Keeps the first reason a device's telemetry went wrong. */
__attribute__((format(printf, 2, 3))) static void note(tsess *s, const char *fmt, ...)
{
    if (*s->dev->note)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->dev->note, sizeof s->dev->note, fmt, ap);
    va_end(ap);
}

/* A RESTCONF GET answer for request k: its JSON under the path's parent. */
static void restconf_body(tsess *s, size_t k, const uint8_t *body, size_t len)
{
    json_t *j = json_loadb((const char *)body, len, 0, NULL);
    if (!j)
        return;
    lpath lp = {0};
    Gnmi__Path *gp = NULL;
    if (k < N_OWN) {
        if (yb_gnmi_path_parse(RESTCONF_PARENT[k], &gp) == 0)
            add_gpath(&lp, gp);
    } else if (yb_gnmi_path_parse(s->tm->cfg->paths[k - N_OWN], &gp) == 0) {
        add_gpath(&lp, gp);
        if (lp.n)
            lp.n--;
    }
    yb_gnmi_path_free(gp);
    json_leaves(s, &lp, j, sample_time(s), 0);
    json_decref(j);
}

static void host_done(void *host, yb_exchange *x)
{
    tsess *s = host;
    s->busy = 0;
    s->dev->bytes_out += x->res.bytes_out;
    s->dev->bytes_in += x->res.bytes_in;
    if (x->res.err != YB_ERR_NONE && !s->stopping) {
        /* A target without the system paths answers with an error status;
         * a dead session has its own reason. */
        int status_err = x->res.err == YB_ERR_STATUS;
        if (status_err && !s->system_leaves)
            note(s, "telemetry not supported by target (%s)", x->res.reason);
        else
            note(s, "telemetry session failed: %s", *x->res.reason ? x->res.reason : "error");
    } else if (s->tg->gnmi && !s->stopping) {
        /* The server ended a STREAM subscription on its own. */
        note(s, "%s", "telemetry subscription ended by the target before the run did");
    }
    if (!s->tg->gnmi && x->body && x->body_len)
        restconf_body(s, (s->next + s->n_prep - 1) % s->n_prep, x->body, x->body_len);
    if (s->stopping) {
        sess_close(s);
        return;
    }
    if (!s->tg->gnmi && s->next % s->n_prep != 0)
        submit_next(s);         /* the rest of this round */
}

static void host_close(void *host, int fatal, yb_err_class why, const char *reason)
{
    tsess *s = host;
    (void)why;
    if (reason && !s->stopping)
        note(s, "telemetry session failed: %s", reason);
    if (fatal || !s->busy)
        sess_close(s);
}

static void host_ready(void *host)
{
    tsess *s = host;
    if (s->tg->gnmi && !s->busy && !s->stopping)
        submit_next(s);
}

/* Starts the next prepared request (gNMI: the one Subscribe; RESTCONF: the
 * next GET of the round). */
static void submit_next(tsess *s)
{
    if (s->busy || s->closed || !s->codec || s->stopping)
        return;
    if (!s->ops->usable(s->codec) || s->ops->capacity(s->codec) == 0)
        return;
    memset(&s->x, 0, sizeof s->x);
    s->x.req = &s->prep[s->next % s->n_prep];
    s->x.owner = s;
    s->next++;
    uint64_t now = uv_hrtime();
    s->x.res.due = now;
    if (s->ops->submit(s->codec, &s->x, now) < 0) {
        note(s, "%s", "telemetry session failed: cannot send the request");
        sess_close(s);
        return;
    }
    s->busy = 1;
    s->dev->requests++;
    if (s->ops->flush)
        s->ops->flush(s->codec, now);
}

static void on_poll(uv_timer_t *t)
{
    tsess *s = t->data;
    if (!s->busy && s->next % s->n_prep == 0)
        submit_next(s);
}

static void on_ready(yb_transport *t, void *ud, yb_err_class st)
{
    tsess *s = ud;
    if (st != YB_ERR_NONE) {
        note(s, "telemetry session failed: %s",
             *yb_transport_error_text(t) ? yb_transport_error_text(t) : yb_err_name(st));
        return;             /* on_close follows */
    }
    s->dev->connected = 1;
    s->dev->sessions++;
    s->codec = s->ops->create(&s->cfg, &s->host, s);
    if (!s->codec || s->ops->start(s->codec) < 0) {
        note(s, "%s", "telemetry session failed: out of memory");
        sess_close(s);
        return;
    }
    if (!s->tg->gnmi) {
        submit_next(s);
        uint64_t ms = s->tm->cfg->interval_ns / 1000000;
        uv_timer_start(&s->poll, on_poll, ms ? ms : 1, ms ? ms : 1);
    }
}

static void on_read(yb_transport *t, void *ud, const uint8_t *d, size_t n)
{
    tsess *s = ud;
    (void)t;
    uint64_t now = uv_hrtime();
    if (!s->codec)
        return;
    if (s->ops->on_read(s->codec, d, n, now) < 0) {
        note(s, "%s", "telemetry session failed: protocol error");
        sess_close(s);
        return;
    }
    if (s->ops->flush)
        s->ops->flush(s->codec, now);
}

static void on_drain(yb_transport *t, void *ud)
{
    tsess *s = ud;
    (void)t;
    if (s->codec)
        s->ops->on_drain(s->codec, uv_hrtime());
}

static void on_tclose(yb_transport *t, void *ud, yb_err_class reason)
{
    tsess *s = ud;
    if (reason != YB_ERR_NONE && reason != YB_ERR_CLOSED && !s->stopping)
        note(s, "telemetry session failed: %s",
             *yb_transport_error_text(t) ? yb_transport_error_text(t) : yb_err_name(reason));
    else if (!s->stopping && s->dev->connected)
        note(s, "%s", "telemetry session closed by the target");
    s->closed = 1;
    s->t = NULL;
    s->busy = 0;
    if (s->codec) {
        s->ops->destroy(s->codec);
        s->codec = NULL;
    }
    if (s->poll_on)
        uv_timer_stop(&s->poll);
}

static const yb_transport_cbs CBS = {on_ready, on_read, on_drain, on_tclose};

/* ---- the thread ------------------------------------------------------------------ */

static void walk_close(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static void on_grace(uv_timer_t *t)
{
    yb_telemetry *tm = t->data;
    for (size_t i = 0; i < tm->n; i++)
        sess_close(&tm->s[i]);
}

static void on_wake(uv_async_t *a)
{
    yb_telemetry *tm = a->data;
    if (!tm->stop_req)
        return;
    for (size_t i = 0; i < tm->n; i++) {
        tsess *s = &tm->s[i];
        s->stopping = 1;
        if (s->poll_on)
            uv_timer_stop(&s->poll);
        if (s->busy && s->codec && s->tg->gnmi && s->ops->finish &&
            s->ops->finish(s->codec, &s->x) == 0) {
            if (s->ops->flush)
                s->ops->flush(s->codec, uv_hrtime());
            continue;   /* done follows, then the close */
        }
        if (!s->busy)
            sess_close(s);
    }
    uv_timer_start(&tm->grace, on_grace, STOP_GRACE_MS, 0);
    uv_close((uv_handle_t *)&tm->wake, NULL);
}

static int all_closed(const yb_telemetry *tm)
{
    for (size_t i = 0; i < tm->n; i++)
        if (!tm->s[i].closed)
            return 0;
    return 1;
}

static void thread_main(void *arg)
{
    yb_telemetry *tm = arg;
    for (size_t i = 0; i < tm->n; i++) {
        tsess *s = &tm->s[i];
        yb_err_class e = YB_ERR_NONE;
        s->t = yb_transport_connect(&tm->loop, NULL, (const struct sockaddr *)&s->tg->target->addr,
                                    s->tls, s->tg->target->tls ? yb_target_servername(s->tg->target)
                                                               : NULL,
                                    10000000000ull, &CBS, s, &e);
        if (!s->t) {
            note(s, "telemetry session failed: cannot connect (%s)", yb_err_name(e));
            s->closed = 1;
        }
    }
    while (uv_run(&tm->loop, UV_RUN_ONCE)) {
        if (tm->stop_req && all_closed(tm))
            break;
    }
    uv_walk(&tm->loop, walk_close, NULL);
    uv_run(&tm->loop, UV_RUN_DEFAULT);
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) == 0)
        tm->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* The Subscribe request: STREAM, SAMPLE every interval, JSON_IETF. */
static int subscribe_body(const yb_tm_cfg *cfg, uint8_t **body, size_t *len, char *err,
                          size_t errlen)
{
    size_t n = N_OWN + cfg->n_paths;
    Gnmi__Path *paths[N_OWN + YB_TM_MAX_PATHS] = {0};
    Gnmi__Subscription subs[N_OWN + YB_TM_MAX_PATHS], *sp[N_OWN + YB_TM_MAX_PATHS];
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = i < N_OWN ? GNMI_PATHS[i] : cfg->paths[i - N_OWN];
        if (yb_gnmi_path_parse(p, &paths[i]) < 0) {
            snprintf(err, errlen, "--telemetry-path '%s': not a gNMI path (/a/b[k=v]/c)", p);
            rc = -EINVAL;
            goto out;
        }
        gnmi__subscription__init(&subs[i]);
        subs[i].path = paths[i];
        subs[i].mode = GNMI__SUBSCRIPTION_MODE__SAMPLE;
        subs[i].sample_interval = cfg->interval_ns;
        sp[i] = &subs[i];
    }
    Gnmi__SubscriptionList sl = GNMI__SUBSCRIPTION_LIST__INIT;
    sl.n_subscription = n;
    sl.subscription = sp;
    sl.mode = GNMI__SUBSCRIPTION_LIST__MODE__STREAM;
    sl.encoding = GNMI__ENCODING__JSON_IETF;
    Gnmi__SubscribeRequest r = GNMI__SUBSCRIBE_REQUEST__INIT;
    r.request_case = GNMI__SUBSCRIBE_REQUEST__REQUEST_SUBSCRIBE;
    r.subscribe = &sl;
    if (yb_grpc_frame(&r.base, body, len) < 0) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
    }
out:
    for (size_t i = 0; i < n; i++)
        yb_gnmi_path_free(paths[i]);
    return rc;
}

/* A gNMI path as a RESTCONF data resource: /restconf/data/a/b=v1,v2/c,
 * key values percent-encoded.  Returns 0, or -1 when it does not fit. */
static int restconf_path(const char *gpath, char *out, size_t cap)
{
    Gnmi__Path *gp = NULL;
    if (yb_gnmi_path_parse(gpath, &gp) < 0)
        return -1;
    size_t n = 0;
    int w = snprintf(out, cap, "/restconf/data");
    n = w > 0 ? (size_t)w : 0;
    for (size_t i = 0; gp && i < gp->n_elem && n < cap; i++) {
        const Gnmi__PathElem *e = gp->elem[i];
        w = snprintf(out + n, cap - n, "/%s", e->name);
        n += w > 0 ? (size_t)w : 0;
        for (size_t k = 0; k < e->n_key && n < cap; k++) {
            out[n++] = k ? ',' : '=';
            for (const char *v = e->key[k]->value; v && *v && n + 3 < cap; v++) {
                unsigned char ch = (unsigned char)*v;
                if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || strchr("-._~:", ch))
                    out[n++] = (char)ch;
                else
                    n += (size_t)snprintf(out + n, cap - n, "%%%02X", ch);
            }
        }
    }
    yb_gnmi_path_free(gp);
    if (n + 1 >= cap)
        return -1;
    out[n] = '\0';
    return 0;
}

/* Prepares s's requests.  Returns 0 or -1 with err. */
static int sess_prepare(tsess *s, const yb_tm_cfg *cfg, const uint8_t *sub, size_t sub_len,
                        char *err, size_t errlen)
{
    const yb_target *tg = s->tg->target;
    yb_request r;
    yb_request_init(&r);
    int rc = 0;
    if (yb_request_set_str(&r.scheme, tg->tls ? "https" : "http") < 0 ||
        yb_request_set_str(&r.authority, tg->authority) < 0)
        rc = -ENOMEM;
    size_t n = s->tg->gnmi ? 1 : N_OWN + cfg->n_paths;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (s->tg->gnmi) {
            r.protocol = YB_PROTO_GNMI;
            if (yb_request_set_str(&r.method, "POST") < 0 ||
                yb_request_set_str(&r.path, "/gnmi.gNMI/Subscribe") < 0 ||
                yb_request_set_body(&r, sub, sub_len) < 0) {
                rc = -ENOMEM;
                break;
            }
        } else {
            r.protocol = YB_PROTO_RESTCONF;
            char conv[1024];
            const char *p = i < N_OWN ? RESTCONF_PATHS[i] : conv;
            if (i >= N_OWN && restconf_path(cfg->paths[i - N_OWN], conv, sizeof conv) < 0) {
                rc = -E2BIG;
                break;
            }
            if (yb_request_set_str(&r.method, "GET") < 0 || yb_request_set_str(&r.path, p) < 0 ||
                yb_request_add_header(&r, "Accept", "application/yang-data+json", 26) < 0) {
                rc = -ENOMEM;
                break;
            }
        }
        if ((rc = s->ops->prepare(&s->cfg, &r, &s->prep[i])) < 0)
            break;
        s->n_prep++;
        yb_request_cleanup(&r);
        yb_request_init(&r);
        if (yb_request_set_str(&r.scheme, tg->tls ? "https" : "http") < 0 ||
            yb_request_set_str(&r.authority, tg->authority) < 0)
            rc = -ENOMEM;
    }
    yb_request_cleanup(&r);
    if (rc < 0)
        snprintf(err, errlen, "telemetry for %s: cannot prepare its requests (%s)",
                 s->tg->label, strerror(-rc));
    return rc < 0 ? -1 : 0;
}

yb_telemetry *yb_telemetry_start(const yb_tm_cfg *cfg, char *err, size_t errlen)
{
    yb_telemetry *tm = calloc(1, sizeof *tm);
    uint8_t *sub = NULL;
    size_t sub_len = 0;
    int loop_ok = 0;
    if (!tm || !(tm->s = calloc(cfg->n ? cfg->n : 1, sizeof *tm->s)) ||
        !(tm->dev = calloc(cfg->n ? cfg->n : 1, sizeof *tm->dev))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    tm->cfg = cfg;
    tm->n = cfg->n;
    for (size_t i = 0; i < cfg->n_paths; i++) {
        Gnmi__Path *p;
        if (yb_gnmi_path_parse(cfg->paths[i], &p) < 0) {
            snprintf(err, errlen, "--telemetry-path '%s': not a gNMI path (/a/b[k=v]/c)",
                     cfg->paths[i]);
            goto fail;
        }
        /* its leaves' text, as lpath_text writes them: the prefix of the
         * leaves it brings ("*" keys and names are matched as given) */
        lpath lp = {0};
        add_gpath(&lp, p);
        lpath_text(&lp, tm->extra_pfx[i], sizeof tm->extra_pfx[i]);
        yb_gnmi_path_free(p);
    }
    if (subscribe_body(cfg, &sub, &sub_len, err, errlen) < 0)
        goto fail;
    if (uv_loop_init(&tm->loop) < 0) {
        snprintf(err, errlen, "cannot create the telemetry event loop");
        goto fail;
    }
    loop_ok = 1;
    for (size_t i = 0; i < cfg->n; i++) {
        tsess *s = &tm->s[i];
        s->tm = tm;
        s->dev = &tm->dev[i];
        s->tg = &cfg->targets[i];
        s->dev->tg = s->tg;
        s->cfg = *s->tg->codec;
        s->cfg.streams = 1;
        s->cfg.keep_body = s->tg->gnmi ? 0 : BODY_KEEP;
        if (s->cfg.max_body < BODY_KEEP)
            s->cfg.max_body = BODY_KEEP;
        s->cfg.timeout_ns = 0;  /* a STREAM lasts the run */
        s->ops = s->tg->gnmi ? &yb_h2_client_ops : &yb_h1_client_ops;
        s->budget.limit = YB_MEM_BUDGET_DEFAULT;
        s->host.write = host_write;
        s->host.done = host_done;
        s->host.close = host_close;
        s->host.ready = host_ready;
        s->host.notification = s->tg->gnmi ? on_notification : NULL;
        s->host.budget = &s->budget;
        if (s->tg->target->tls) {
            yb_tls_client_opts to = *s->tg->tls;
            to.alpn = s->tg->gnmi ? "h2" : "http/1.1";
            to.session_cache = 0;
            if (!(s->tls = yb_tls_client_ctx_new(&to, err, errlen)))
                goto fail;
        }
        if (sess_prepare(s, cfg, sub, sub_len, err, errlen) < 0)
            goto fail;
        uv_timer_init(&tm->loop, &s->poll);
        s->poll.data = s;
        s->poll_on = 1;
    }
    free(sub);
    sub = NULL;
    uv_async_init(&tm->loop, &tm->wake, on_wake);
    tm->wake.data = tm;
    uv_timer_init(&tm->loop, &tm->grace);
    tm->grace.data = tm;
    if (uv_thread_create(&tm->thread, thread_main, tm) < 0) {
        snprintf(err, errlen, "cannot start the telemetry thread");
        goto fail;
    }
    tm->thread_on = 1;
    return tm;
fail:
    free(sub);
    if (tm && loop_ok) {
        uv_walk(&tm->loop, walk_close, NULL);
        uv_run(&tm->loop, UV_RUN_DEFAULT);
        uv_loop_close(&tm->loop);
        loop_ok = 0;
    }
    if (tm)
        tm->n = tm->s && tm->dev ? cfg->n : 0;
    if (tm && !loop_ok) {
        /* yb_telemetry_free, without the loop */
        for (size_t i = 0; tm->s && i < tm->n; i++) {
            for (size_t k = 0; k < tm->s[i].n_prep; k++)
                tm->s[i].ops->prepared_free(&tm->s[i].prep[k]);
            yb_tls_ctx_free(tm->s[i].tls);
        }
        free(tm->s);
        free(tm->dev);
        free(tm);
    }
    return NULL;
}

/* Sleeps ns, waking every 50 ms to look at *stop. */
static void nap(uint64_t ns, volatile const int *stop)
{
    uint64_t end = uv_hrtime() + ns;
    while (!(stop && *stop)) {
        uint64_t now = uv_hrtime();
        if (now >= end)
            break;
        uint64_t d = end - now < 50000000 ? end - now : 50000000;
        struct timespec ts = {0, (long)d};
        nanosleep(&ts, NULL);
    }
}

void yb_telemetry_baseline(const yb_telemetry *t, volatile const int *stop)
{
    if (t)
        nap(t->cfg->baseline_ns, stop);
}

void yb_telemetry_stop(yb_telemetry *t, volatile const int *stop)
{
    if (!t || !t->thread_on)
        return;
    uint64_t tail = 2 * t->cfg->interval_ns;
    nap(tail < 2000000000ull ? 2000000000ull : tail, stop);
    t->stop_req = 1;
    uv_async_send(&t->wake);
    uv_thread_join(&t->thread);
    t->thread_on = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->s[i].system_leaves)
            t->dev[i].supported = 1;
        else if (!*t->dev[i].note)
            snprintf(t->dev[i].note, sizeof t->dev[i].note,
                     "telemetry not supported by target (no openconfig-system data in %s)",
                     t->s[i].tg->gnmi ? "the subscription" : "the GET answers");
}

void yb_telemetry_free(yb_telemetry *t)
{
    if (!t)
        return;
    if (t->thread_on) {
        t->stop_req = 1;
        uv_async_send(&t->wake);
        uv_thread_join(&t->thread);
    }
    uv_loop_close(&t->loop);
    for (size_t i = 0; i < t->n; i++) {
        for (size_t k = 0; k < t->s[i].n_prep; k++)
            t->s[i].ops->prepared_free(&t->s[i].prep[k]);
        yb_tls_ctx_free(t->s[i].tls);
        free(t->dev[i].obs);
        free(t->dev[i].procs);
        free(t->dev[i].extras);
    }
    free(t->s);
    free(t->dev);
    free(t);
}

size_t yb_telemetry_devices(const yb_telemetry *t, const yb_tm_device **out)
{
    *out = t->dev;
    return t->n;
}

const yb_tm_cfg *yb_telemetry_cfg(const yb_telemetry *t) { return t->cfg; }
double yb_telemetry_cpu_s(const yb_telemetry *t) { return t->cpu_s; }
