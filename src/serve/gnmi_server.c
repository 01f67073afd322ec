/* gNMI front end of `yangblast serve`: gRPC over nghttp2's server session
 * (mem_recv / mem_send over the transport), with the gRPC layer by hand:
 * 5-byte message prefixes, :status 200 + content-type application/grpc,
 * trailers grpc-status / grpc-message (percent-encoded), trailers-only
 * responses for errors.
 *
 * Stream objects (with their input and output buffers) are pooled per
 * connection, and mem_send output is collected into one batch per read or
 * completion and written at once, so a sink-mode request costs no
 * allocation of ours once the pools are warm. */
#include "config.h"
#include "gnmi/gnmi_msg.h"
#include "serve/serve_priv.h"

#include <errno.h>
#include <jansson.h>
#include <nghttp2/nghttp2.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    G_OK = 0, G_CANCELLED = 1, G_UNKNOWN = 2, G_INVALID_ARGUMENT = 3, G_NOT_FOUND = 5,
    G_RESOURCE_EXHAUSTED = 8, G_UNIMPLEMENTED = 12, G_INTERNAL = 13, G_UNAVAILABLE = 14,
    G_UNAUTHENTICATED = 16,
};

#define POOL_MAX 64
#define CRED_MAX 256

struct gconn;

/* A STREAM subscription's sampling timer (own allocation: libuv handles
 * close asynchronously and may outlive the stream). */
typedef struct sub {
    uv_timer_t timer;
    struct gstream *st;
    yb_spath *paths;        /* openconfig-acl paths */
    size_t npaths;
    yb_spath *sys_paths;    /* openconfig-system paths (system.h) */
    size_t nsys;
    uint64_t interval_ns;
} sub;

typedef struct gstream {
    struct gconn *c;
    int32_t id;
    int rpc;
    int post, ct_ok;
    int started;            /* a request job was submitted */
    int req_done;           /* END_STREAM received */
    int resp_started;       /* response HEADERS submitted */
    int out_eof;            /* no more messages: trailers after the data */
    int finished;           /* final status decided */
    int deferred;           /* data provider is waiting for data */
    int too_big;
    int auth_ok;            /* check_auth's verdict: 1, 0 or -1 */
    int code;
    char msg[256];
    char user[CRED_MAX], pass[CRED_MAX];
    size_t user_len, pass_len;
    unsigned n_user, n_pass;    /* occurrences in the request headers */
    uint8_t *in;            /* request bytes (gRPC framed) */
    size_t in_len, in_off, in_cap;
    uint64_t in_total;
    uint8_t *out;           /* framed response messages not yet sent */
    size_t out_len, out_off, out_cap;
    yb_job job;
    yb_fault_verdict v;
    /* --sink: a streaming scan of the SetRequest's top-level fields, so the
     * answer carries one UpdateResult per operation without a decode */
    struct {
        uint8_t state;      /* 0 prefix, 1 tag, 2 length, 3 skip, 4 varint value, 5 done */
        uint8_t shift;
        uint32_t pre;       /* gRPC prefix bytes seen */
        uint64_t acc, skip;
        unsigned field;
        uint8_t ops[64];    /* operation kinds in order (first 64) */
        unsigned n_ops;
    } scan;
    /* Subscribe */
    int sub_mode;           /* -1 = no SubscriptionList yet */
    sub *sampler;
    struct gstream *next, *prev;
} gstream;

typedef struct gconn {
    yb_sconn base;
    nghttp2_session *ng;
    uint8_t *out;
    size_t out_len, out_cap;
    gstream *pool;
    unsigned npool;
    gstream *active;
    unsigned begun;
    unsigned open_streams;  /* request streams begun and not closed */
    int32_t goaway_last;    /* last stream id of our GOAWAY; 0 = none sent */
    int dead;
    int in_recv;            /* inside mem_recv: flush afterwards */
    struct lingerer *linger; /* session done: waiting for the client to close */
} gconn;

/* The staged close of a connection whose HTTP/2 session is done (our
 * GOAWAY sent, no stream left).  Closing the socket at once while the
 * client is still sending (requests it wrote before our GOAWAY reached
 * it, WINDOW_UPDATEs) makes the kernel answer with a TCP RST, and a client
 * that meets the RST on a write fails the connection before reading the
 * GOAWAY and the answers still in its socket: answered requests then
 * surface as resets and refused ones are not retried.  So, as RFC 9112
 * section 9.6 describes for HTTP/1.1, the server keeps reading (and
 * discarding) until the client closes, for at most LINGER_MS.  Its own
 * allocation: libuv closes handles asynchronously. */
#define LINGER_MS 2000
typedef struct lingerer {
    uv_timer_t timer;
    gconn *c;               /* NULL once the connection is gone */
} lingerer;

static void conn_flush(gconn *c);

/* ---- helpers ------------------------------------------------------------------ */

static uint64_t now_ns_wall(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int buf_reserve(uint8_t **b, size_t *cap, size_t len, size_t more)
{
    if (more <= *cap - len)
        return 0;
    size_t nc = *cap ? *cap : 1024;
    while (nc - len < more) {
        if (nc > SIZE_MAX / 2)
            return -ENOMEM;
        nc *= 2;
    }
    uint8_t *nb = realloc(*b, nc);
    if (!nb)
        return -ENOMEM;
    *b = nb;
    *cap = nc;
    return 0;
}

/* grpc-message: percent-encode bytes outside printable ASCII and '%'. */
static void pct_encode(const char *s, char *out, size_t cap)
{
    static const char HEX[] = "0123456789ABCDEF";
    size_t o = 0;
    for (; *s && o + 4 < cap; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch < 0x20 || ch > 0x7e || ch == '%') {
            out[o++] = '%';
            out[o++] = HEX[ch >> 4];
            out[o++] = HEX[ch & 15];
        } else {
            out[o++] = (char)ch;
        }
    }
    out[o] = 0;
}

#define NV(n, v, vl)                                                                         \
    {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, (vl),                                    \
     NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE}
#define NVS(n, v) NV(n, v, sizeof(v) - 1)

/* ---- stream pool --------------------------------------------------------------- */

static gstream *stream_get(gconn *c)
{
    gstream *st = c->pool;
    if (st) {
        c->pool = st->next;
        c->npool--;
        uint8_t *in = st->in, *out = st->out;
        size_t ic = st->in_cap, oc = st->out_cap;
        memset(st, 0, sizeof *st);
        st->in = in;
        st->in_cap = ic;
        st->out = out;
        st->out_cap = oc;
    } else if (!(st = calloc(1, sizeof *st))) {
        return NULL;
    }
    st->c = c;
    st->sub_mode = -1;
    st->code = -1;
    st->next = c->active;
    if (c->active)
        c->active->prev = st;
    c->active = st;
    c->base.inflight++;
    return st;
}

static void sampler_closed(uv_handle_t *h)
{
    sub *sb = h->data;
    free(sb->paths);
    free(sb->sys_paths);
    free(sb);
}

static void stream_put(gconn *c, gstream *st)
{
    yb_server *s = c->base.srv;
    if (yb_sched_pending(&st->job))
        yb_sched_cancel(&s->sched, &st->job);
    if (st->sampler) {
        st->sampler->st = NULL;
        uv_close((uv_handle_t *)&st->sampler->timer, sampler_closed);
        st->sampler = NULL;
    }
    if (st->prev)
        st->prev->next = st->next;
    else
        c->active = st->next;
    if (st->next)
        st->next->prev = st->prev;
    c->base.inflight--;
    c->base.last_active = uv_hrtime();
    if (c->npool >= POOL_MAX || st->in_cap > (1u << 20) || st->out_cap > (1u << 20)) {
        free(st->in);
        free(st->out);
        free(st);
        return;
    }
    st->next = c->pool;
    c->pool = st;
    c->npool++;
}

/* ---- responses ------------------------------------------------------------------ */

static ssize_t data_read(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *src, void *ud);

/* Submits the response HEADERS (with a data provider) once. */
static int start_response(gconn *c, gstream *st)
{
    if (st->resp_started)
        return 0;
    static const nghttp2_nv H[] = {NVS(":status", "200"),
                                   NVS("content-type", "application/grpc")};
    nghttp2_data_provider prd = {.source = {.ptr = st}, .read_callback = data_read};
    st->resp_started = 1;
    return nghttp2_submit_response(c->ng, st->id, H, 2, &prd) ? -EIO : 0;
}

/* Appends one framed message holding m. */
static int queue_msg(gconn *c, gstream *st, const ProtobufCMessage *m)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    if (n > UINT32_MAX)
        return -EFBIG;
    if (st->out_off && st->out_off == st->out_len)
        st->out_off = st->out_len = 0;
    if (buf_reserve(&st->out, &st->out_cap, st->out_len, n + YB_GRPC_PREFIX) < 0)
        return -ENOMEM;
    uint8_t *p = st->out + st->out_len;
    p[0] = 0;
    p[1] = (uint8_t)(n >> 24);
    p[2] = (uint8_t)(n >> 16);
    p[3] = (uint8_t)(n >> 8);
    p[4] = (uint8_t)n;
    protobuf_c_message_pack(m, p + YB_GRPC_PREFIX);
    st->out_len += n + YB_GRPC_PREFIX;
    if (start_response(c, st) < 0)
        return -EIO;
    if (st->deferred) {
        st->deferred = 0;
        nghttp2_session_resume_data(c->ng, st->id);
    }
    return 0;
}

/* Ends the stream with code/msg: trailers-only when nothing was sent yet,
 * else trailers after the queued messages. */
static void finish(gconn *c, gstream *st, int code, const char *msg)
{
    if (st->finished)
        return;
    st->finished = 1;
    st->code = code;
    yb_server_count_grpc(c->base.srv, code);
    snprintf(st->msg, sizeof st->msg, "%s", msg ? msg : "");
    if (!st->resp_started) {
        char cs[16], enc[sizeof st->msg * 3];
        snprintf(cs, sizeof cs, "%d", code);
        pct_encode(st->msg, enc, sizeof enc);
        nghttp2_nv h[4] = {NVS(":status", "200"), NVS("content-type", "application/grpc"),
                           {(uint8_t *)"grpc-status", (uint8_t *)cs, 11, strlen(cs),
                            NGHTTP2_NV_FLAG_NONE},
                           {(uint8_t *)"grpc-message", (uint8_t *)enc, 12, strlen(enc),
                            NGHTTP2_NV_FLAG_NONE}};
        st->resp_started = 1;
        st->out_eof = 1;
        (void)nghttp2_submit_response(c->ng, st->id, h, *enc ? 4 : 3, NULL);
        return;
    }
    st->out_eof = 1;
    if (st->deferred) {
        st->deferred = 0;
        nghttp2_session_resume_data(c->ng, st->id);
    }
}

static ssize_t data_read(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *src, void *ud)
{
    (void)ud;
    gstream *st = src->ptr;
    size_t avail = st->out_len - st->out_off;
    size_t n = avail < length ? avail : length;
    memcpy(buf, st->out + st->out_off, n);
    st->out_off += n;
    if (st->out_off == st->out_len) {
        st->out_off = st->out_len = 0;
        if (st->out_eof) {
            *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
            char cs[16], enc[sizeof st->msg * 3];
            snprintf(cs, sizeof cs, "%d", st->code < 0 ? 0 : st->code);
            pct_encode(st->msg, enc, sizeof enc);
            nghttp2_nv t[2] = {{(uint8_t *)"grpc-status", (uint8_t *)cs, 11, strlen(cs),
                                NGHTTP2_NV_FLAG_NONE},
                               {(uint8_t *)"grpc-message", (uint8_t *)enc, 12, strlen(enc),
                                NGHTTP2_NV_FLAG_NONE}};
            if (nghttp2_submit_trailer(ng, id, t, *enc ? 2 : 1) != 0)
                *flags &= ~(uint32_t)NGHTTP2_DATA_FLAG_NO_END_STREAM;
        } else if (n == 0) {
            st->deferred = 1;
            return NGHTTP2_ERR_DEFERRED;
        }
    }
    return (ssize_t)n;
}

/* ---- datastore mapping ---------------------------------------------------------- */

/* prefix + path -> spath.  Returns 0, -EINVAL (unsupported path). */
static int to_spath(const Gnmi__Path *prefix, const Gnmi__Path *path, yb_spath *out)
{
    const Gnmi__Path *parts[2] = {prefix, path};
    yb_spath_init(out);
    for (int k = 0; k < 2; k++) {
        const Gnmi__Path *p = parts[k];
        if (!p)
            continue;
        if (p->n_elem == 0 && p->n_element > 0)
            return -EINVAL;     /* deprecated string elements: unsupported */
        for (size_t i = 0; i < p->n_elem; i++) {
            const Gnmi__PathElem *e = p->elem[i];
            if (!e->name || yb_spath_push(out, e->name, strlen(e->name)) < 0)
                return -EINVAL;
            const char *const *names;
            unsigned nk = yb_store_list_keys(out->seg[out->n - 1].name, &names);
            /* Keys in schema order, so that positional consumers agree. */
            for (unsigned s = 0; s < nk && e->n_key; s++)
                for (size_t j = 0; j < e->n_key; j++)
                    if (e->key[j]->key && !strcmp(e->key[j]->key, names[s]) &&
                        yb_spath_add_key(out, names[s], e->key[j]->value ? e->key[j]->value : "",
                                         e->key[j]->value ? strlen(e->key[j]->value) : 0) < 0)
                        return -EINVAL;
            if (out->seg[out->n - 1].nkeys != e->n_key)
                return -EINVAL;
        }
    }
    if (out->n && strcmp(out->seg[0].name, "acl"))
        return -EINVAL;
    return 0;
}

/* prefix + path -> spath when it names the openconfig-system tree (its
 * first element "system", with or without the module): keys kept by name,
 * as given.  Returns 1 (a system path, out set), 0 (not one) or -EINVAL. */
static int sys_spath(const Gnmi__Path *prefix, const Gnmi__Path *path, yb_spath *out)
{
    const Gnmi__Path *parts[2] = {prefix, path};
    yb_spath_init(out);
    for (int k = 0; k < 2; k++) {
        const Gnmi__Path *p = parts[k];
        if (!p)
            continue;
        if (p->n_elem == 0 && p->n_element > 0)
            return 0;
        for (size_t i = 0; i < p->n_elem; i++) {
            const Gnmi__PathElem *e = p->elem[i];
            if (!e->name || yb_spath_push(out, e->name, strlen(e->name)) < 0)
                return out->n == 0 || !yb_sys_path(out) ? 0 : -EINVAL;
            if (!yb_sys_path(out))
                return 0;
            for (size_t j = 0; j < e->n_key; j++)
                if (!e->key[j]->key || !e->key[j]->value ||
                    yb_spath_add_key(out, e->key[j]->key, e->key[j]->value,
                                     strlen(e->key[j]->value)) < 0)
                    return -EINVAL;
        }
    }
    return yb_sys_path(out);
}

/* One leaf of the system tree as a gNMI Update, in one allocation: the
 * walk's strings live only during its callback. */
typedef struct {
    Gnmi__Update u;
    Gnmi__TypedValue tv;
    Gnmi__Path path;
    Gnmi__PathElem e[YB_SYS_MAX_ELEMS];
    Gnmi__PathElem *ep[YB_SYS_MAX_ELEMS];
    Gnmi__PathElem__KeyEntry k[YB_SYS_MAX_ELEMS];
    Gnmi__PathElem__KeyEntry *kp[YB_SYS_MAX_ELEMS];
    char kval[YB_SYS_MAX_ELEMS][24];
    char str[64];
} sys_update;

typedef struct {
    sys_update **u;
    Gnmi__Update **up;
    size_t n, cap;
    int err;
} sys_collect;

static void sys_leaf(void *ud, const yb_sys_leaf *l)
{
    sys_collect *x = ud;
    if (x->err)
        return;
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 64;
        sys_update **u = realloc(x->u, cap * sizeof *u);
        if (u)
            x->u = u;
        Gnmi__Update **up = u ? realloc(x->up, cap * sizeof *up) : NULL;
        if (!up) {
            x->err = 1;
            return;
        }
        x->up = up;
        x->cap = cap;
    }
    sys_update *m = calloc(1, sizeof *m);
    if (!m) {
        x->err = 1;
        return;
    }
    gnmi__path__init(&m->path);
    for (unsigned i = 0; i < l->n; i++) {
        gnmi__path_elem__init(&m->e[i]);
        m->e[i].name = (char *)(i == 0 ? "openconfig-system:system" : l->name[i]);
        if (l->key[i]) {
            gnmi__path_elem__key_entry__init(&m->k[i]);
            snprintf(m->kval[i], sizeof m->kval[i], "%s", l->kval[i]);
            m->k[i].key = (char *)l->key[i];
            m->k[i].value = m->kval[i];
            m->kp[i] = &m->k[i];
            m->e[i].n_key = 1;
            m->e[i].key = &m->kp[i];
        }
        m->ep[i] = &m->e[i];
    }
    m->path.n_elem = l->n;
    m->path.elem = m->ep;
    gnmi__typed_value__init(&m->tv);
    if (l->is_str) {
        snprintf(m->str, sizeof m->str, "%s", l->s);
        m->tv.value_case = GNMI__TYPED_VALUE__VALUE_STRING_VAL;
        m->tv.string_val = m->str;
    } else {
        m->tv.value_case = GNMI__TYPED_VALUE__VALUE_UINT_VAL;
        m->tv.uint_val = l->u;
    }
    gnmi__update__init(&m->u);
    m->u.path = &m->path;
    m->u.val = &m->tv;
    x->u[x->n] = m;
    x->up[x->n++] = &m->u;
}

static void sys_collect_free(sys_collect *x)
{
    for (size_t i = 0; i < x->n; i++)
        free(x->u[i]);
    free(x->u);
    free(x->up);
}

/* The leaves of the system tree under p as one SubscribeResponse
 * notification stamped ts.  Returns 0, -ENOENT (nothing there) or -ENOMEM. */
static int sys_notify(gconn *c, gstream *st, const yb_spath *p, uint64_t ts)
{
    yb_server *s = c->base.srv;
    sys_collect x = {0};
    if (!s->sys)
        return -ENOENT;
    size_t n = yb_sys_walk(s->sys, s->index, p, sys_leaf, &x);
    int rc = x.err ? -ENOMEM : n ? 0 : -ENOENT;
    if (rc == 0) {
        Gnmi__Notification no = GNMI__NOTIFICATION__INIT;
        no.timestamp = (int64_t)ts;
        no.n_update = x.n;
        no.update = x.up;
        Gnmi__SubscribeResponse r = GNMI__SUBSCRIBE_RESPONSE__INIT;
        r.response_case = GNMI__SUBSCRIBE_RESPONSE__RESPONSE_UPDATE;
        r.update = &no;
        rc = queue_msg(c, st, &r.base) < 0 ? -ENOMEM : 0;
    }
    sys_collect_free(&x);
    return rc;
}

/* A Get whose paths are all openconfig-system paths: one notification per
 * path, every leaf a scalar update (whatever the encoding asked: the
 * leaves are numbers and strings).  Returns 1 when it answered, 0 when the
 * request is not such a Get (the caller answers it). */
static int rpc_get_sys(gconn *c, gstream *st, const Gnmi__GetRequest *req)
{
    yb_server *s = c->base.srv;
    size_t n = req->n_path;
    yb_spath *p = malloc(sizeof *p);
    sys_collect *x = calloc(n ? n : 1, sizeof *x);
    Gnmi__Notification *nots = calloc(n ? n : 1, sizeof *nots);
    Gnmi__Notification **np = calloc(n ? n : 1, sizeof *np);
    int code = G_OK, answered = 1;
    char why[200] = "";
    if (!p || !x || !nots || !np) {
        code = G_INTERNAL;
        snprintf(why, sizeof why, "out of memory");
        goto out;
    }
    int nsys = 0;
    for (size_t i = 0; i < n; i++) {
        int r = sys_spath(req->prefix, req->path[i], p);
        if (r < 0) {
            code = G_INVALID_ARGUMENT;
            snprintf(why, sizeof why, "malformed openconfig-system path");
            goto out;
        }
        nsys += r;
    }
    if (nsys == 0) {
        answered = 0;
        goto out;
    }
    if ((size_t)nsys != n) {
        code = G_INVALID_ARGUMENT;
        snprintf(why, sizeof why, "a Get mixes openconfig-system and openconfig-acl paths");
        goto out;
    }
    uint64_t ts = now_ns_wall();
    for (size_t i = 0; i < n; i++) {
        (void)sys_spath(req->prefix, req->path[i], p);
        size_t got = s->sys ? yb_sys_walk(s->sys, s->index, p, sys_leaf, &x[i]) : 0;
        if (x[i].err) {
            code = G_INTERNAL;
            snprintf(why, sizeof why, "out of memory");
            goto out;
        }
        if (!got) {
            char ptxt[160];
            yb_spath_format(p, ptxt, sizeof ptxt);
            code = G_NOT_FOUND;
            snprintf(why, sizeof why, "%s: no such node", ptxt);
            goto out;
        }
        gnmi__notification__init(&nots[i]);
        nots[i].timestamp = (int64_t)ts;
        nots[i].n_update = x[i].n;
        nots[i].update = x[i].up;
        np[i] = &nots[i];
    }
    Gnmi__GetResponse r = GNMI__GET_RESPONSE__INIT;
    r.n_notification = n;
    r.notification = np;
    if (queue_msg(c, st, &r.base) < 0) {
        code = G_INTERNAL;
        snprintf(why, sizeof why, "out of memory");
    }
out:
    if (answered)
        finish(c, st, code, *why ? why : NULL);
    for (size_t i = 0; x && i < n; i++)
        sys_collect_free(&x[i]);
    free(x);
    free(nots);
    free(np);
    free(p);
    return answered;
}

/* TypedValue -> canonical JSON node value for target g (NULL = root).
 * Returns a new reference or NULL with *why. */
static json_t *typed_to_json(const Gnmi__TypedValue *tv, const yb_spath *p, const char **why)
{
    json_t *v = NULL;
    if (!tv) {
        *why = "update without a value";
        return NULL;
    }
    switch (tv->value_case) {
    case GNMI__TYPED_VALUE__VALUE_JSON_IETF_VAL:
    case GNMI__TYPED_VALUE__VALUE_JSON_VAL: {
        const ProtobufCBinaryData *b = tv->value_case == GNMI__TYPED_VALUE__VALUE_JSON_IETF_VAL
                                           ? &tv->json_ietf_val : &tv->json_val;
        json_error_t e;
        json_t *raw = json_loadb((const char *)b->data, b->len,
                                 JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &e);
        if (!raw) {
            *why = "value is not valid JSON";
            return NULL;
        }
        v = yb_store_canon(raw);
        json_decref(raw);
        break;
    }
    case GNMI__TYPED_VALUE__VALUE_STRING_VAL: v = json_string(tv->string_val); break;
    case GNMI__TYPED_VALUE__VALUE_INT_VAL: v = json_integer(tv->int_val); break;
    case GNMI__TYPED_VALUE__VALUE_UINT_VAL: v = json_integer((json_int_t)tv->uint_val); break;
    case GNMI__TYPED_VALUE__VALUE_BOOL_VAL: v = json_boolean(tv->bool_val); break;
    default:
        *why = "unsupported value encoding (use json_ietf_val)";
        return NULL;
    }
    if (!v) {
        *why = "out of memory or bad string";
        return NULL;
    }
    const yb_spath_seg *g = p->n ? &p->seg[p->n - 1] : NULL;
    const char *name = g ? g->name : "acl";
    /* Accept {"module:NAME": value} as well as the bare value. */
    if (json_is_object(v) && json_object_size(v) == 1 && json_object_get(v, name)) {
        json_t *in = json_incref(json_object_get(v, name));
        json_decref(v);
        v = in;
    }
    if (g && g->nkeys && json_is_array(v)) {
        if (json_array_size(v) != 1) {
            json_decref(v);
            *why = "a list entry value must hold exactly one entry";
            return NULL;
        }
        json_t *in = json_incref(json_array_get(v, 0));
        json_decref(v);
        v = in;
    }
    if (!g) {
        json_t *w = json_pack("{s:o}", "acl", v);
        if (!w)
            *why = "out of memory";
        return w;
    }
    return v;
}

static char *dump_value(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* ---- RPCs ------------------------------------------------------------------------ */

static void rpc_capabilities(gconn *c, gstream *st)
{
    Gnmi__ModelData md = GNMI__MODEL_DATA__INIT;
    md.name = "openconfig-acl";
    md.organization = "OpenConfig working group";
    md.version = "1.3.3";
    Gnmi__ModelData sys = GNMI__MODEL_DATA__INIT;
    sys.name = "openconfig-system";
    sys.organization = "OpenConfig working group";
    sys.version = "2.1.0";
    Gnmi__ModelData *mds[] = {&md, &sys};
    Gnmi__Encoding enc[] = {GNMI__ENCODING__JSON, GNMI__ENCODING__JSON_IETF};
    Gnmi__CapabilityResponse r = GNMI__CAPABILITY_RESPONSE__INIT;
    r.n_supported_models = 2;
    r.supported_models = mds;
    r.n_supported_encodings = 2;
    r.supported_encodings = enc;
    r.gnmi_version = "0.10.0";
    if (queue_msg(c, st, &r.base) < 0)
        finish(c, st, G_INTERNAL, "out of memory");
    else
        finish(c, st, G_OK, NULL);
}

static void rpc_get(gconn *c, gstream *st, const uint8_t *m, size_t len)
{
    yb_server *s = c->base.srv;
    Gnmi__GetRequest *req = (Gnmi__GetRequest *)yb_gnmi_unpack(&gnmi__get_request__descriptor, m, len);
    if (!req) {
        finish(c, st, G_INTERNAL, "cannot parse GetRequest");
        return;
    }
    if (rpc_get_sys(c, st, req)) {
        gnmi__get_request__free_unpacked(req, NULL);
        return;
    }
    size_t n = req->n_path;
    Gnmi__Notification *nots = calloc(n ? n : 1, sizeof *nots);
    Gnmi__Notification **np = calloc(n ? n : 1, sizeof *np);
    Gnmi__Update *ups = calloc(n ? n : 1, sizeof *ups);
    Gnmi__Update **upps = calloc(n ? n : 1, sizeof *upps);
    Gnmi__TypedValue *tvs = calloc(n ? n : 1, sizeof *tvs);
    char **texts = calloc(n ? n : 1, sizeof *texts);
    yb_spath *p = malloc(sizeof *p);
    int code = G_OK;
    const char *why = NULL;
    char whybuf[200];
    if (!nots || !np || !ups || !upps || !tvs || !texts || !p) {
        code = G_INTERNAL;
        why = "out of memory";
        goto out;
    }
    if (req->encoding != GNMI__ENCODING__JSON && req->encoding != GNMI__ENCODING__JSON_IETF) {
        code = G_UNIMPLEMENTED;
        why = "only JSON and JSON_IETF encodings are supported";
        goto out;
    }
    uint64_t ts = now_ns_wall();
    for (size_t i = 0; i < n; i++) {
        json_t *node;
        if (to_spath(req->prefix, req->path[i], p) < 0) {
            code = G_INVALID_ARGUMENT;
            why = "unsupported path (only openconfig-acl:acl is served)";
            goto out;
        }
        int rc = yb_store_get(s->store, p, &node);
        if (rc) {
            char ptxt[160];
            yb_spath_format(p, ptxt, sizeof ptxt);
            snprintf(whybuf, sizeof whybuf, "%s: %s", ptxt, yb_store_error(s->store));
            code = rc == -ENOENT ? G_NOT_FOUND : G_INVALID_ARGUMENT;
            why = whybuf;
            goto out;
        }
        if (!(texts[i] = dump_value(node))) {
            code = G_INTERNAL;
            why = "out of memory";
            goto out;
        }
        gnmi__typed_value__init(&tvs[i]);
        if (req->encoding == GNMI__ENCODING__JSON_IETF) {
            tvs[i].value_case = GNMI__TYPED_VALUE__VALUE_JSON_IETF_VAL;
            tvs[i].json_ietf_val.data = (uint8_t *)texts[i];
            tvs[i].json_ietf_val.len = strlen(texts[i]);
        } else {
            tvs[i].value_case = GNMI__TYPED_VALUE__VALUE_JSON_VAL;
            tvs[i].json_val.data = (uint8_t *)texts[i];
            tvs[i].json_val.len = strlen(texts[i]);
        }
        gnmi__update__init(&ups[i]);
        ups[i].path = req->path[i];
        ups[i].val = &tvs[i];
        upps[i] = &ups[i];
        gnmi__notification__init(&nots[i]);
        nots[i].timestamp = (int64_t)ts;
        nots[i].prefix = req->prefix;
        nots[i].n_update = 1;
        nots[i].update = &upps[i];
        np[i] = &nots[i];
    }
    Gnmi__GetResponse r = GNMI__GET_RESPONSE__INIT;
    r.n_notification = n;
    r.notification = np;
    if (queue_msg(c, st, &r.base) < 0) {
        code = G_INTERNAL;
        why = "out of memory";
    }
out:
    finish(c, st, code, why);
    if (texts)
        for (size_t i = 0; i < n; i++)
            free(texts[i]);
    free(texts);
    free(tvs);
    free(upps);
    free(ups);
    free(np);
    free(nots);
    free(p);
    gnmi__get_request__free_unpacked(req, NULL);
}

static void rpc_set(gconn *c, gstream *st, const uint8_t *m, size_t len)
{
    yb_server *s = c->base.srv;
    Gnmi__SetRequest *req = (Gnmi__SetRequest *)yb_gnmi_unpack(&gnmi__set_request__descriptor, m, len);
    if (!req) {
        finish(c, st, G_INTERNAL, "cannot parse SetRequest");
        return;
    }
    size_t nops = req->n_delete_ + req->n_replace + req->n_update;
    Gnmi__UpdateResult *res = calloc(nops ? nops : 1, sizeof *res);
    Gnmi__UpdateResult **rp = calloc(nops ? nops : 1, sizeof *rp);
    yb_spath *p = malloc(sizeof *p);
    int code = G_OK, in_txn = 0;
    const char *why = NULL;
    char whybuf[300];
    size_t k = 0;
    if (!res || !rp || !p) {
        code = G_INTERNAL;
        why = "out of memory";
        goto out;
    }
    if (req->n_union_replace) {
        code = G_UNIMPLEMENTED;
        why = "union_replace is not supported";
        goto out;
    }
    if (yb_store_begin(s->store) < 0) {
        code = G_INTERNAL;
        why = "out of memory";
        goto out;
    }
    in_txn = 1;
    /* The specification's order: deletes, then replaces, then updates. */
    for (int phase = 0; phase < 3; phase++) {
        size_t cnt = phase == 0 ? req->n_delete_ : phase == 1 ? req->n_replace : req->n_update;
        for (size_t i = 0; i < cnt; i++) {
            Gnmi__Path *path = phase == 0 ? req->delete_[i]
                               : phase == 1 ? req->replace[i]->path : req->update[i]->path;
            int rc;
            if (to_spath(req->prefix, path, p) < 0) {
                code = G_INVALID_ARGUMENT;
                why = "unsupported path (only openconfig-acl:acl is served)";
                goto out;
            }
            if (phase == 0) {
                rc = yb_store_delete(s->store, p);
                if (rc == -ENOENT)
                    rc = 0; /* deleting what is not there succeeds (gNMI 3.4.6) */
            } else {
                const Gnmi__Update *u = phase == 1 ? req->replace[i] : req->update[i];
                json_t *v = typed_to_json(u->val, p, &why);
                if (!v) {
                    code = G_INVALID_ARGUMENT;
                    goto out;
                }
                rc = phase == 1 ? yb_store_replace(s->store, p, v, NULL)
                                : yb_store_merge(s->store, p, v, 0);
            }
            if (rc) {
                char ptxt[160];
                yb_spath_format(p, ptxt, sizeof ptxt);
                snprintf(whybuf, sizeof whybuf, "%s: %s", ptxt, yb_store_error(s->store));
                why = whybuf;
                code = rc == -ENOMEM ? G_INTERNAL : rc == -ENOENT ? G_NOT_FOUND
                                                                  : G_INVALID_ARGUMENT;
                goto out;
            }
            gnmi__update_result__init(&res[k]);
            res[k].path = path;
            res[k].op = phase == 0 ? GNMI__UPDATE_RESULT__OPERATION__DELETE
                        : phase == 1 ? GNMI__UPDATE_RESULT__OPERATION__REPLACE
                                     : GNMI__UPDATE_RESULT__OPERATION__UPDATE;
            rp[k] = &res[k];
            k++;
        }
    }
    Gnmi__SetResponse r = GNMI__SET_RESPONSE__INIT;
    r.prefix = req->prefix;
    r.n_response = k;
    r.response = rp;
    r.timestamp = (int64_t)now_ns_wall();
    if (queue_msg(c, st, &r.base) < 0) {
        code = G_INTERNAL;
        why = "out of memory";
        goto out;
    }
    yb_store_commit(s->store);
    in_txn = 0;
out:
    if (in_txn)
        yb_store_abort(s->store);
    finish(c, st, code, why);
    free(res);
    free(rp);
    free(p);
    gnmi__set_request__free_unpacked(req, NULL);
}

/* ---- Subscribe ----------------------------------------------------------------- */

typedef struct {
    gconn *c;
    gstream *st;
    uint64_t ts;
    int counters;           /* 1 = STREAM sample (counters), 0 = full sets */
    int err;
} emit_ctx;

/* Sets the elements of a set's path on the stack. */
typedef struct {
    Gnmi__Path path;
    Gnmi__PathElem e[3];
    Gnmi__PathElem *ep[3];
    Gnmi__PathElem__KeyEntry k[2];
    Gnmi__PathElem__KeyEntry *kp[2];
} set_path;

static void set_path_init(set_path *sp, const char *name, const char *type)
{
    static const char *const N[] = {"openconfig-acl:acl", "acl-sets", "acl-set"};
    gnmi__path__init(&sp->path);
    for (int i = 0; i < 3; i++) {
        gnmi__path_elem__init(&sp->e[i]);
        sp->e[i].name = (char *)N[i];
        sp->ep[i] = &sp->e[i];
    }
    for (int i = 0; i < 2; i++) {
        gnmi__path_elem__key_entry__init(&sp->k[i]);
        sp->kp[i] = &sp->k[i];
    }
    sp->k[0].key = "name";
    sp->k[0].value = (char *)name;
    sp->k[1].key = "type";
    sp->k[1].value = (char *)type;
    sp->e[2].n_key = 2;
    sp->e[2].key = sp->kp;
    sp->path.n_elem = 3;
    sp->path.elem = sp->ep;
}

/* FNV-1a of the set name: a per-set packet rate, so that counters differ. */
static uint64_t name_rate(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return 1000 + h % 9000;     /* packets per second */
}

static void emit_set(void *ud, const json_t *set, const char *name, const char *type)
{
    emit_ctx *x = ud;
    if (x->err)
        return;
    set_path sp;
    set_path_init(&sp, name, type);
    Gnmi__Notification n = GNMI__NOTIFICATION__INIT;
    n.timestamp = (int64_t)x->ts;
    Gnmi__SubscribeResponse r = GNMI__SUBSCRIBE_RESPONSE__INIT;
    r.response_case = GNMI__SUBSCRIBE_RESPONSE__RESPONSE_UPDATE;
    r.update = &n;
    if (x->counters) {
        /* Counters advance with the time since the server started. */
        uint64_t el = uv_hrtime() - x->c->base.srv->t_start;
        uint64_t pkts = name_rate(name) * el / 1000000000u;
        Gnmi__PathElem state, leaf[2], *sep[2][2];
        Gnmi__Path up[2];
        Gnmi__TypedValue tv[2];
        Gnmi__Update u[2], *upp[2];
        static const char *const LEAF[] = {"matched-packets", "matched-octets"};
        gnmi__path_elem__init(&state);
        state.name = "state";
        for (int i = 0; i < 2; i++) {
            gnmi__path_elem__init(&leaf[i]);
            leaf[i].name = (char *)LEAF[i];
            sep[i][0] = &state;
            sep[i][1] = &leaf[i];
            gnmi__path__init(&up[i]);
            up[i].n_elem = 2;
            up[i].elem = sep[i];
            gnmi__typed_value__init(&tv[i]);
            tv[i].value_case = GNMI__TYPED_VALUE__VALUE_UINT_VAL;
            tv[i].uint_val = i == 0 ? pkts : pkts * 256;
            gnmi__update__init(&u[i]);
            u[i].path = &up[i];
            u[i].val = &tv[i];
            upp[i] = &u[i];
        }
        n.prefix = &sp.path;
        n.n_update = 2;
        n.update = upp;
        if (queue_msg(x->c, x->st, &r.base) < 0)
            x->err = 1;
        return;
    }
    char *text = dump_value(set);
    if (!text) {
        x->err = 1;
        return;
    }
    Gnmi__TypedValue tv = GNMI__TYPED_VALUE__INIT;
    tv.value_case = GNMI__TYPED_VALUE__VALUE_JSON_IETF_VAL;
    tv.json_ietf_val.data = (uint8_t *)text;
    tv.json_ietf_val.len = strlen(text);
    Gnmi__Update u = GNMI__UPDATE__INIT, *up = &u;
    u.path = &sp.path;
    u.val = &tv;
    n.n_update = 1;
    n.update = &up;
    if (queue_msg(x->c, x->st, &r.base) < 0)
        x->err = 1;
    free(text);
}

/* One notification per stored set under each path (or the node itself
 * for a path below a set), then sync_response unless counters.  Returns 0
 * or -ENOMEM. */
static int emit_all(gconn *c, gstream *st, const yb_spath *paths, size_t n, int counters,
                    int sync)
{
    yb_server *s = c->base.srv;
    emit_ctx x = {c, st, now_ns_wall(), counters, 0};
    for (size_t i = 0; i < n && !x.err; i++) {
        int fr = yb_store_foreach_set(s->store, &paths[i], emit_set, &x);
        if (fr != -ENOTSUP || counters)
            continue;
        json_t *node;
        if (yb_store_get(s->store, &paths[i], &node) != 0)
            continue;
        char *text = dump_value(node);
        Gnmi__Path *gp = NULL;
        char ptxt[YB_SPATH_ARENA + 64];
        yb_spath_format(&paths[i], ptxt, sizeof ptxt);
        if (!text || yb_gnmi_path_parse(ptxt, &gp) < 0) {
            free(text);
            x.err = 1;
            break;
        }
        Gnmi__TypedValue tv = GNMI__TYPED_VALUE__INIT;
        tv.value_case = GNMI__TYPED_VALUE__VALUE_JSON_IETF_VAL;
        tv.json_ietf_val.data = (uint8_t *)text;
        tv.json_ietf_val.len = strlen(text);
        Gnmi__Update u = GNMI__UPDATE__INIT, *up = &u;
        u.path = gp;
        u.val = &tv;
        Gnmi__Notification no = GNMI__NOTIFICATION__INIT;
        no.timestamp = (int64_t)x.ts;
        no.n_update = 1;
        no.update = &up;
        Gnmi__SubscribeResponse r = GNMI__SUBSCRIBE_RESPONSE__INIT;
        r.response_case = GNMI__SUBSCRIBE_RESPONSE__RESPONSE_UPDATE;
        r.update = &no;
        if (queue_msg(c, st, &r.base) < 0)
            x.err = 1;
        free(text);
        yb_gnmi_path_free(gp);
    }
    if (!x.err && sync) {
        Gnmi__SubscribeResponse r = GNMI__SUBSCRIBE_RESPONSE__INIT;
        r.response_case = GNMI__SUBSCRIBE_RESPONSE__RESPONSE_SYNC_RESPONSE;
        r.sync_response = 1;
        if (queue_msg(c, st, &r.base) < 0)
            x.err = 1;
    }
    return x.err ? -ENOMEM : 0;
}

/* Everything a subscription covers: its openconfig-acl paths (full sets,
 * or counters for a STREAM sample), its openconfig-system paths (one
 * notification each; a path that matches nothing sends nothing), then
 * sync_response when sync.  Returns 0 or -ENOMEM. */
static int emit_sub(gconn *c, gstream *st, const sub *sb, int counters, int sync)
{
    if (emit_all(c, st, sb->paths, sb->npaths, counters, 0) < 0)
        return -ENOMEM;
    uint64_t ts = now_ns_wall();
    for (size_t i = 0; i < sb->nsys; i++)
        if (sys_notify(c, st, &sb->sys_paths[i], ts) == -ENOMEM)
            return -ENOMEM;
    return sync ? emit_all(c, st, NULL, 0, 0, 1) : 0;
}

static void on_sample(uv_timer_t *t)
{
    sub *sb = t->data;
    gstream *st = sb->st;
    if (!st || st->finished)
        return;
    gconn *c = st->c;
    if (emit_sub(c, st, sb, 1, 0) < 0)
        finish(c, st, G_INTERNAL, "out of memory");
    conn_flush(c);
}

/* Handles one SubscribeRequest message. */
static void sub_message(gconn *c, gstream *st, const uint8_t *m, size_t len)
{
    Gnmi__SubscribeRequest *req = (Gnmi__SubscribeRequest *)yb_gnmi_unpack(&gnmi__subscribe_request__descriptor, m, len);
    if (!req) {
        finish(c, st, G_INTERNAL, "cannot parse SubscribeRequest");
        return;
    }
    if (req->request_case == GNMI__SUBSCRIBE_REQUEST__REQUEST_POLL) {
        if (st->sub_mode != GNMI__SUBSCRIPTION_LIST__MODE__POLL || !st->sampler)
            finish(c, st, G_INVALID_ARGUMENT, "Poll outside a POLL subscription");
        else if (emit_sub(c, st, st->sampler, 0, 1) < 0)
            finish(c, st, G_INTERNAL, "out of memory");
        goto out;
    }
    if (req->request_case != GNMI__SUBSCRIBE_REQUEST__REQUEST_SUBSCRIBE || st->sub_mode >= 0) {
        finish(c, st, G_INVALID_ARGUMENT, "expected one SubscriptionList first");
        goto out;
    }
    Gnmi__SubscriptionList *sl = req->subscribe;
    if (sl->encoding != GNMI__ENCODING__JSON && sl->encoding != GNMI__ENCODING__JSON_IETF) {
        finish(c, st, G_UNIMPLEMENTED, "only JSON and JSON_IETF encodings are supported");
        goto out;
    }
    if (sl->n_subscription == 0 || sl->n_subscription > 16) {
        finish(c, st, G_INVALID_ARGUMENT, "1..16 subscriptions per request");
        goto out;
    }
    st->sub_mode = (int)sl->mode;
    sub *sb = calloc(1, sizeof *sb);
    if (!sb || !(sb->paths = malloc(sl->n_subscription * sizeof *sb->paths)) ||
        !(sb->sys_paths = malloc(sl->n_subscription * sizeof *sb->sys_paths))) {
        if (sb)
            free(sb->paths);
        free(sb);
        finish(c, st, G_INTERNAL, "out of memory");
        goto out;
    }
    sb->st = st;
    sb->interval_ns = 0;
    for (size_t i = 0; i < sl->n_subscription; i++) {
        const Gnmi__Subscription *su = sl->subscription[i];
        int sr = sys_spath(sl->prefix, su->path, &sb->sys_paths[sb->nsys]);
        if (sr > 0) {
            sb->nsys++;
        } else if (sr < 0 || to_spath(sl->prefix, su->path, &sb->paths[sb->npaths++]) < 0) {
            free(sb->paths);
            free(sb->sys_paths);
            free(sb);
            finish(c, st, G_INVALID_ARGUMENT,
                   sr < 0 ? "malformed openconfig-system path"
                          : "unsupported path (only openconfig-acl:acl and "
                            "openconfig-system:system are served)");
            goto out;
        }
        uint64_t iv = su->sample_interval ? su->sample_interval : 1000000000u;
        if (iv < 1000000)
            iv = 1000000;       /* timers tick in milliseconds */
        if (!sb->interval_ns || iv < sb->interval_ns)
            sb->interval_ns = iv;
    }
    if (uv_timer_init(c->base.srv->loop, &sb->timer) < 0) {
        free(sb->paths);
        free(sb);
        finish(c, st, G_INTERNAL, "timer");
        goto out;
    }
    sb->timer.data = sb;
    st->sampler = sb;
    int initial = !sl->updates_only;
    if ((initial ? emit_sub(c, st, sb, 0, 1) : emit_all(c, st, NULL, 0, 0, 1)) < 0) {
        finish(c, st, G_INTERNAL, "out of memory");
        goto out;
    }
    if (sl->mode == GNMI__SUBSCRIPTION_LIST__MODE__ONCE) {
        finish(c, st, G_OK, NULL);
    } else if (sl->mode == GNMI__SUBSCRIPTION_LIST__MODE__STREAM) {
        uint64_t ms = sb->interval_ns / 1000000;
        uv_timer_start(&sb->timer, on_sample, ms, ms);
    }
out:
    gnmi__subscribe_request__free_unpacked(req, NULL);
}

/* Consumes the complete messages buffered on a Subscribe stream. */
static void sub_drain(gconn *c, gstream *st)
{
    yb_server *s = c->base.srv;
    while (!st->finished) {
        const uint8_t *m;
        size_t ml;
        int r = yb_grpc_next(st->in, st->in_len, &st->in_off, &m, &ml, s->o->max_body);
        if (r == 0)
            break;
        if (r < 0) {
            /* A partial message: wait for more unless the client is done
             * or the prefix itself is bad. */
            size_t left = st->in_len - st->in_off;
            if (left >= YB_GRPC_PREFIX) {
                const uint8_t *h = st->in + st->in_off;
                uint64_t want = (uint64_t)h[1] << 24 | (uint64_t)h[2] << 16 |
                                (uint64_t)h[3] << 8 | h[4];
                if (h[0] != 0 || want > s->o->max_body) {
                    s->st.bad_input++;
                    finish(c, st, h[0] ? G_UNIMPLEMENTED : G_RESOURCE_EXHAUSTED,
                           h[0] ? "compressed messages are not supported"
                                : "message larger than --max-body");
                    break;
                }
            }
            if (st->req_done) {
                s->st.bad_input++;
                finish(c, st, G_INTERNAL, "truncated gRPC message");
            }
            break;
        }
        sub_message(c, st, m, ml);
    }
    if (st->in_off == st->in_len)
        st->in_off = st->in_len = 0;
    if (!st->finished && st->req_done &&
        st->sub_mode != GNMI__SUBSCRIPTION_LIST__MODE__STREAM)
        finish(c, st, G_OK, NULL);
}

/* ---- request dispatch ---------------------------------------------------------- */

static const uint8_t EMPTY_MSG[YB_GRPC_PREFIX] = {0, 0, 0, 0, 0};

/* Feeds request bytes to the --sink field scanner: counts the SetRequest's
 * delete (2), replace (3), update (4) and union_replace (6) fields of the
 * first message without keeping or decoding anything. */
static void sink_scan(gstream *st, const uint8_t *d, size_t n)
{
    for (size_t i = 0; i < n && st->scan.state != 5;) {
        switch (st->scan.state) {
        case 0: /* the 5-byte gRPC prefix: keep the message length */
            if (st->scan.pre == 0)
                st->scan.skip = 0;
            if (st->scan.pre >= 1)
                st->scan.skip = (st->scan.skip << 8) | d[i];
            i++;
            if (++st->scan.pre == YB_GRPC_PREFIX) {
                st->scan.acc = st->scan.skip; /* message bytes left */
                st->scan.state = st->scan.acc ? 1 : 5;
                st->scan.skip = 0;
                st->scan.shift = 0;
                st->scan.field = 0;
            }
            break;
        case 1: case 2: case 4: { /* varints: tag, length, scalar value */
            uint8_t b = d[i++];
            st->scan.acc--;
            if (st->scan.shift < 63)
                st->scan.skip |= (uint64_t)(b & 0x7f) << st->scan.shift;
            st->scan.shift += 7;
            if (b & 0x80)
                break;
            uint64_t v = st->scan.skip;
            st->scan.skip = 0;
            st->scan.shift = 0;
            if (st->scan.state == 1) {
                st->scan.field = (unsigned)(v >> 3);
                unsigned wt = (unsigned)(v & 7);
                st->scan.state = wt == 2 ? 2 : wt == 0 ? 4 : 5; /* others: stop scanning */
            } else if (st->scan.state == 2) {
                unsigned f = st->scan.field;
                if ((f == 2 || f == 3 || f == 4 || f == 6) && st->scan.n_ops < sizeof st->scan.ops)
                    st->scan.ops[st->scan.n_ops++] = (uint8_t)f;
                st->scan.skip = v;
                st->scan.state = v ? 3 : 1;
            } else {
                st->scan.state = 1;
            }
            if (st->scan.acc == 0)
                st->scan.state = 5;
            break;
        }
        case 3: { /* skip a length-delimited field's bytes */
            size_t k = n - i < st->scan.skip ? n - i : (size_t)st->scan.skip;
            i += k;
            st->scan.skip -= k;
            st->scan.acc -= k < st->scan.acc ? k : st->scan.acc;
            if (!st->scan.skip) {
                st->scan.state = st->scan.acc ? 1 : 5;
                st->scan.shift = 0;
            }
            break;
        }
        default:
            return;
        }
    }
}
/* SubscribeResponse{sync_response: true} */
static const uint8_t SYNC_MSG[] = {0, 0, 0, 0, 2, 0x18, 0x01};

static void sink_answer(gconn *c, gstream *st)
{
    const uint8_t *m = st->rpc == YB_RPC_SUBSCRIBE ? SYNC_MSG : EMPTY_MSG;
    size_t n = st->rpc == YB_RPC_SUBSCRIBE ? sizeof SYNC_MSG : sizeof EMPTY_MSG;
    uint8_t setresp[YB_GRPC_PREFIX + 4 * sizeof st->scan.ops];
    if (st->rpc == YB_RPC_SET && st->scan.n_ops) {
        /* SetResponse { repeated UpdateResult response = 2 { op = 4 } }:
         * DELETE 1, REPLACE 2, UPDATE 3, UNION_REPLACE 4 */
        size_t len = 4 * st->scan.n_ops;
        setresp[0] = 0;
        setresp[1] = setresp[2] = 0;
        setresp[3] = (uint8_t)(len >> 8);
        setresp[4] = (uint8_t)len;
        for (unsigned i = 0; i < st->scan.n_ops; i++) {
            uint8_t f = st->scan.ops[i];
            uint8_t *u = setresp + YB_GRPC_PREFIX + 4 * i;
            u[0] = 0x12;
            u[1] = 2;
            u[2] = 0x20;
            u[3] = f == 2 ? 1 : f == 3 ? 2 : f == 4 ? 3 : 4;
        }
        m = setresp;
        n = YB_GRPC_PREFIX + len;
    }
    if (buf_reserve(&st->out, &st->out_cap, st->out_len, n) < 0 || start_response(c, st) < 0) {
        finish(c, st, G_INTERNAL, "out of memory");
        return;
    }
    memcpy(st->out + st->out_len, m, n);
    st->out_len += n;
    finish(c, st, G_OK, NULL);
}

/* The cost model released the request: answer it. */
static void on_job_done(yb_job *j)
{
    gstream *st = (gstream *)((char *)j - offsetof(gstream, job));
    gconn *c = st->c;
    yb_server *s = c->base.srv;
    if (st->v.reset) {
        c->dead = 1;
        yb_transport_reset(c->base.t);
        return;
    }
    if (st->v.status) {
        int code = st->v.status > 16 ? yb_http_to_grpc(st->v.status) : st->v.status;
        finish(c, st, code, "injected fault");
    } else if (st->auth_ok < 0) {
        finish(c, st, G_UNAUTHENTICATED, "more than one username or password");
    } else if (!st->auth_ok) {
        finish(c, st, G_UNAUTHENTICATED, "authentication failed");
    } else if (st->too_big) {
        /* answered when the body overflowed */
    } else if (s->o->sink) {
        sink_answer(c, st);
    } else if (st->rpc == YB_RPC_SUBSCRIBE) {
        sub_drain(c, st);
    } else {
        const uint8_t *m = NULL;
        size_t ml = 0, off = 0;
        int r = yb_grpc_next(st->in, st->in_len, &off, &m, &ml, s->o->max_body);
        const uint8_t *m2;
        size_t ml2;
        if (r < 0 || (r == 1 && yb_grpc_next(st->in, st->in_len, &off, &m2, &ml2,
                                             s->o->max_body) != 0)) {
            s->st.bad_input++;
            finish(c, st, G_INTERNAL, r < 0 ? "malformed or truncated gRPC message"
                                            : "more than one request message");
        } else if (r == 0 && st->rpc != YB_RPC_CAPABILITIES) {
            s->st.bad_input++;
            finish(c, st, G_INTERNAL, "no request message");
        } else if (st->rpc == YB_RPC_CAPABILITIES) {
            rpc_capabilities(c, st);
        } else if (st->rpc == YB_RPC_GET) {
            rpc_get(c, st, m, ml);
        } else {
            rpc_set(c, st, m, ml);
        }
    }
    if (!c->in_recv)
        conn_flush(c);
}

/* Credentials: gRPC metadata username and password, each once, from the
 * request headers (trailers never count).  Returns 1 (accepted or no
 * --auth), 0 (missing or wrong) or -1 (one of them more than once: which
 * would count is ambiguous). */
static int check_auth(yb_server *s, gstream *st)
{
    const yb_serve_opts *o = s->o;
    if (!o->auth_user)
        return 1;
    if (st->n_user > 1 || st->n_pass > 1)
        return -1;
    size_t ul = strlen(o->auth_user), pl = strlen(o->auth_password ? o->auth_password : "");
    return st->n_user && st->n_pass && st->user_len == ul && st->pass_len == pl &&
           CRYPTO_memcmp(st->user, o->auth_user, ul) == 0 &&
           CRYPTO_memcmp(st->pass, o->auth_password ? o->auth_password : "", pl) == 0;
}

/* 1 when st is a Get of openconfig-system paths only.  Such a request is
 * answered by the device's own agent, not by the modelled management
 * process: it takes no worker, service time or fault, so that reading the
 * device's CPU never takes capacity from the load (nor counts itself in the
 * modelled busy figure).  Only small requests mentioning "system" are
 * decoded here. */
static int sys_get(yb_server *s, gstream *st)
{
    const uint8_t *m;
    size_t ml, off = 0;
    if (st->rpc != YB_RPC_GET || s->o->sink || !s->sys || !st->in || st->in_len > 4096 ||
        !memmem(st->in, st->in_len, "system", 6) ||
        yb_grpc_next(st->in, st->in_len, &off, &m, &ml, s->o->max_body) != 1)
        return 0;
    Gnmi__GetRequest *req = (Gnmi__GetRequest *)yb_gnmi_unpack(&gnmi__get_request__descriptor, m, ml);
    if (!req)
        return 0;
    yb_spath p;
    int all = req->n_path > 0;
    for (size_t i = 0; all && i < req->n_path; i++)
        all = sys_spath(req->prefix, req->path[i], &p) == 1;
    gnmi__get_request__free_unpacked(req, NULL);
    return all;
}

/* The request (unary: complete; Subscribe: headers) is here: faults, auth
 * and cost, then on_job_done. */
static void start_request(gconn *c, gstream *st)
{
    yb_server *s = c->base.srv;
    const yb_serve_opts *o = s->o;
    st->started = 1;
    st->auth_ok = check_auth(s, st);
    if (st->auth_ok <= 0)
        s->st.auth_failures++;
    if (st->auth_ok > 0 && sys_get(s, st)) {
        memset(&st->v, 0, sizeof st->v);
        on_job_done(&st->job);
        return;
    }
    if (o->n_faults)
        yb_faults_roll(o->faults, o->n_faults, ++s->req_seq, &s->rng, &st->v, s->st.faults);
    st->job.done = on_job_done;
    st->job.stall_ns = st->v.stall_ns;
    st->job.service_ns = 0;
    if (st->auth_ok > 0) /* --sink too: a delay to the nanosecond, nothing parsed */
        st->job.service_ns = yb_service_time_draw(&o->service, &s->rng, st->in_total);
    if (!o->sink) {
        st->job.service_ns += o->auth_user ? o->auth_cost_ns : 0;
        if (!c->base.setup_paid) { /* the session's set-up, on its first request */
            c->base.setup_paid = 1;
            st->job.service_ns += o->session_cost_ns;
        }
    }
    if (yb_sched_submit(&s->sched, &st->job) < 0)
        on_job_done(&st->job);
}

/* ---- nghttp2 callbacks ------------------------------------------------------------ */

static int cb_begin_headers(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
    gconn *c = ud;
    yb_server *s = c->base.srv;
    if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    if (c->goaway_last && f->hd.stream_id > c->goaway_last) {
        /* Above our GOAWAY's last-stream-id (it arrived in the same read,
         * before the GOAWAY left): the client is told it was not
         * processed and will retry it, so it must not run.  Without a
         * stream object every callback ignores it; nghttp2 closes it as
         * refused when the GOAWAY is sent. */
        s->st.streams_refused++;
        return 0;
    }
    gstream *st = stream_get(c);
    if (!st)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    st->id = f->hd.stream_id;
    st->rpc = YB_RPC_OTHER;
    nghttp2_session_set_stream_user_data(ng, st->id, st);
    c->begun++;
    if (++c->open_streams > s->st.streams_max)
        s->st.streams_max = c->open_streams;
    if (s->goaway_after && c->begun == s->goaway_after) {
        /* Streams up to this one are served; later ones are refused. */
        s->st.faults[YB_FAULT_GOAWAY_AFTER]++;
        c->goaway_last = st->id;
        nghttp2_submit_goaway(ng, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_NO_ERROR, NULL, 0);
    }
    return 0;
}

/* Keeps the first occurrence of a credential header (a value of CRED_MAX
 * bytes or more gets length SIZE_MAX: it can never match) and counts them
 * all, since check_auth refuses duplicates. */
static void keep_cred(char *buf, size_t *len, unsigned *n, const uint8_t *v, size_t vl)
{
    if ((*n)++)
        return;
    if (vl < CRED_MAX) {
        memcpy(buf, v, vl);
        *len = vl;
    } else {
        *len = SIZE_MAX;
    }
}

static int cb_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name,
                     size_t nl, const uint8_t *value, size_t vl, uint8_t flags, void *ud)
{
    (void)flags;
    (void)ud;
    if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;       /* trailers of a request: never metadata, nor credentials */
    gstream *st = nghttp2_session_get_stream_user_data(ng, f->hd.stream_id);
    if (!st)
        return 0;
#define IS(lit) (nl == sizeof(lit) - 1 && !memcmp(name, lit, nl))
    if (IS(":path")) {
        static const char *const R[] = {"/gnmi.gNMI/Capabilities", "/gnmi.gNMI/Get",
                                        "/gnmi.gNMI/Set", "/gnmi.gNMI/Subscribe"};
        for (int i = 0; i < 4; i++)
            if (vl == strlen(R[i]) && !memcmp(value, R[i], vl))
                st->rpc = i;
    } else if (IS(":method")) {
        st->post = vl == 4 && !memcmp(value, "POST", 4);
    } else if (IS("content-type")) {
        st->ct_ok = vl >= 16 && !memcmp(value, "application/grpc", 16) &&
                    (vl == 16 || value[16] == '+' || value[16] == ';');
    } else if (IS("username")) {
        keep_cred(st->user, &st->user_len, &st->n_user, value, vl);
    } else if (IS("password")) {
        keep_cred(st->pass, &st->pass_len, &st->n_pass, value, vl);
    }
#undef IS
    return 0;
}

static int cb_data_chunk(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data,
                         size_t len, void *ud)
{
    (void)flags;
    gconn *c = ud;
    yb_server *s = c->base.srv;
    gstream *st = nghttp2_session_get_stream_user_data(ng, id);
    if (!st || st->too_big || st->finished)
        return 0;
    st->in_total += len;
    if (s->o->sink) {
        if (st->rpc == YB_RPC_SET)
            sink_scan(st, data, len); /* counted, not kept */
        return 0;
    }
    if (st->in_total > s->o->max_body + YB_GRPC_PREFIX) {
        st->too_big = 1;
        s->st.bad_input++;
        /* Answered now; the rest of the body is read and dropped (a
         * RST_STREAM could overtake the answer in nghttp2's queue). */
        finish(c, st, G_RESOURCE_EXHAUSTED, "request larger than --max-body");
        return 0;
    }
    if (buf_reserve(&st->in, &st->in_cap, st->in_len, len) < 0)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    memcpy(st->in + st->in_len, data, len);
    st->in_len += len;
    if (st->rpc == YB_RPC_SUBSCRIBE && st->started && !yb_sched_pending(&st->job) &&
        st->auth_ok > 0 && !st->v.status)
        sub_drain(c, st);
    return 0;
}

static int cb_frame_recv(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
    gconn *c = ud;
    yb_server *s = c->base.srv;
    if (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA)
        return 0;
    gstream *st = nghttp2_session_get_stream_user_data(ng, f->hd.stream_id);
    if (!st)
        return 0;
    int end = (f->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
    if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST) {
        s->st.rpcs[st->rpc]++;
        if (!st->post || !st->ct_ok) {
            /* Not gRPC at all: gRPC says HTTP 415 for a bad content-type. */
            static const nghttp2_nv H[] = {NVS(":status", "415")};
            s->st.bad_input++;
            st->finished = st->resp_started = 1;
            yb_server_count_http(s, 415);
            nghttp2_submit_response(ng, st->id, H, 1, NULL);
            return 0;
        }
        if (st->rpc == YB_RPC_OTHER) {
            finish(c, st, G_UNIMPLEMENTED, "unknown method");
            return 0;
        }
        if (st->rpc == YB_RPC_SUBSCRIBE)
            start_request(c, st);   /* messages are handled as they come */
    }
    if (!end || st->req_done)
        return 0;
    st->req_done = 1;
    if (st->finished)
        return 0;
    if (st->rpc == YB_RPC_SUBSCRIBE) {
        if (!s->o->sink && !yb_sched_pending(&st->job) && st->auth_ok > 0 && !st->v.status)
            sub_drain(c, st);
        return 0;
    }
    start_request(c, st);
    return 0;
}

static int cb_stream_close(nghttp2_session *ng, int32_t id, uint32_t err, void *ud)
{
    (void)err;
    gconn *c = ud;
    gstream *st = nghttp2_session_get_stream_user_data(ng, id);
    if (!st)
        return 0;
    nghttp2_session_set_stream_user_data(ng, id, NULL);
    c->open_streams--;
    stream_put(c, st);
    return 0;
}

static nghttp2_session_callbacks *CALLBACKS;

static int callbacks_init(void)
{
    if (CALLBACKS)
        return 0;
    if (nghttp2_session_callbacks_new(&CALLBACKS) != 0)
        return -ENOMEM;
    nghttp2_session_callbacks_set_on_begin_headers_callback(CALLBACKS, cb_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(CALLBACKS, cb_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(CALLBACKS, cb_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(CALLBACKS, cb_frame_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(CALLBACKS, cb_stream_close);
    return 0;
}

/* ---- connection ---------------------------------------------------------------- */

static void linger_closed(uv_handle_t *h) { free(h->data); }

static void linger_expired(uv_timer_t *t)
{
    lingerer *lg = t->data;
    gconn *c = lg->c;
    if (c && !c->dead) {
        c->dead = 1;
        yb_transport_close(c->base.t);
    }
}

/* Starts the staged close (see lingerer); closes at once when no timer can
 * be had. */
static void linger_start(gconn *c)
{
    if (c->linger)
        return;
    lingerer *lg = calloc(1, sizeof *lg);
    if (!lg || uv_timer_init(c->base.srv->loop, &lg->timer) < 0) {
        free(lg);
        c->dead = 1;
        yb_transport_close(c->base.t);
        return;
    }
    lg->c = c;
    lg->timer.data = lg;
    c->linger = lg;
    uv_timer_start(&lg->timer, linger_expired, LINGER_MS, 0);
}

static void linger_stop(gconn *c)
{
    if (!c->linger)
        return;
    c->linger->c = NULL;
    uv_close((uv_handle_t *)&c->linger->timer, linger_closed);
    c->linger = NULL;
}

/* Collects everything nghttp2 wants to send into one batch, writes it,
 * and starts the staged close once the session is done. */
static void conn_flush(gconn *c)
{
    if (c->dead)
        return;
    for (;;) {
        const uint8_t *p;
        ssize_t n = nghttp2_session_mem_send(c->ng, &p);
        if (n < 0) {
            c->dead = 1;
            yb_transport_close(c->base.t);
            return;
        }
        if (n == 0)
            break;
        if (buf_reserve(&c->out, &c->out_cap, c->out_len, (size_t)n) < 0) {
            c->dead = 1;
            yb_transport_close(c->base.t);
            return;
        }
        memcpy(c->out + c->out_len, p, (size_t)n);
        c->out_len += (size_t)n;
    }
    if (c->out_len) {
        uv_buf_t b = uv_buf_init((char *)c->out, (unsigned)c->out_len);
        c->base.srv->st.bytes_out[YB_SP_GNMI] += c->out_len;
        (void)yb_transport_write(c->base.t, &b, 1);
        c->out_len = 0;
    }
    if (!nghttp2_session_want_read(c->ng) && !nghttp2_session_want_write(c->ng))
        linger_start(c);
}

static void on_ready(yb_transport *t, void *ud, yb_err_class st)
{
    (void)t;
    gconn *c = ud;
    if (st != YB_ERR_NONE)
        return;
    c->base.last_active = uv_hrtime();
    conn_flush(c);      /* our SETTINGS */
}

static void on_read(yb_transport *t, void *ud, const uint8_t *data, size_t len)
{
    (void)t;
    gconn *c = ud;
    if (c->dead)
        return;
    c->base.srv->st.bytes_in[YB_SP_GNMI] += len;
    if (c->linger)
        return;         /* the session is done: read and dropped until the close */
    c->base.last_active = uv_hrtime();
    c->in_recv = 1;
    ssize_t n = nghttp2_session_mem_recv(c->ng, data, len);
    c->in_recv = 0;
    if (n < 0) {
        /* Bad preface or a connection error: send what nghttp2 queued
         * (GOAWAY) and close. */
        c->base.srv->st.bad_input++;
        conn_flush(c);
        if (!c->dead) {
            c->dead = 1;
            yb_transport_close(c->base.t);
        }
        return;
    }
    conn_flush(c);
}

static void on_drain(yb_transport *t, void *ud)
{
    (void)t;
    conn_flush(ud);
}

static void on_close(yb_transport *t, void *ud, yb_err_class reason)
{
    (void)t;
    (void)reason;
    gconn *c = ud;
    c->dead = 1;
    linger_stop(c);
    while (c->active)
        stream_put(c, c->active);
    nghttp2_session_del(c->ng);
    while (c->pool) {
        gstream *st = c->pool;
        c->pool = st->next;
        free(st->in);
        free(st->out);
        free(st);
    }
    yb_server_conn_remove(c->base.srv, &c->base);
    free(c->out);
    free(c);
}

static const yb_transport_cbs G_CBS = {on_ready, on_read, on_drain, on_close};

void yb_gnmi_shutdown_conn(yb_sconn *sc)
{
    gconn *c = (gconn *)sc;
    if (c->dead)
        return;
    if (c->linger) {        /* our GOAWAY is out already */
        c->dead = 1;
        yb_transport_close(c->base.t);
        return;
    }
    nghttp2_submit_goaway(c->ng, NGHTTP2_FLAG_NONE,
                          nghttp2_session_get_last_proc_stream_id(c->ng), NGHTTP2_NO_ERROR,
                          NULL, 0);
    conn_flush(c);
    if (!c->dead) {
        c->dead = 1;
        yb_transport_close(c->base.t);
    }
}

int yb_gnmi_accept(yb_server *s, uv_stream_t *listener, yb_tls_ctx *tls)
{
    if (callbacks_init() < 0)
        return -ENOMEM;
    gconn *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->base.srv = s;
    c->base.proto = YB_SP_GNMI;
    c->base.last_active = uv_hrtime();
    if (nghttp2_session_server_new(&c->ng, CALLBACKS, c) != 0) {
        free(c);
        return -ENOMEM;
    }
    /* Room for many concurrent streams and large Set bodies without
     * waiting for WINDOW_UPDATEs. */
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 1024},
                                   {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20}};
    nghttp2_submit_settings(c->ng, NGHTTP2_FLAG_NONE, iv, 2);
    nghttp2_session_set_local_window_size(c->ng, NGHTTP2_FLAG_NONE, 0, 1 << 24);
    c->base.t = yb_transport_accept(listener, s->ring, tls, &G_CBS, c);
    if (!c->base.t) {
        nghttp2_session_del(c->ng);
        free(c);
        return -EIO;
    }
    yb_server_conn_add(s, &c->base);
    return 0;
}
