/* The stub transport and server set-up of the serve fuzz targets (see
 * serve_stub.h). */
#include "config.h"
#include "serve_stub.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUT_KEEP (1u << 20)

struct yb_transport {
    yb_transport_cbs cbs;
    void *ud;
    int paused, closing;
    uint8_t *out;
    size_t out_len, out_cap;
};

/* ---- transport.h, the part serve uses -------------------------------------- */

yb_tls_ctx *yb_tls_server_ctx_new(const yb_tls_server_opts *o, char *err, size_t errlen)
{
    (void)o;
    snprintf(err, errlen, "no TLS in the fuzz stub");
    return NULL;
}

void yb_tls_ctx_free(yb_tls_ctx *c) { (void)c; }

static yb_transport *accepted;

yb_transport *yb_transport_accept(uv_stream_t *server, yb_uring *ring, yb_tls_ctx *tls,
                                  const yb_transport_cbs *cbs, void *ud)
{
    (void)server;
    (void)ring;
    (void)tls;
    yb_transport *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cbs = *cbs;
    t->ud = ud;
    accepted = t;
    return t;
}

int yb_transport_write(yb_transport *t, const uv_buf_t *bufs, unsigned n)
{
    if (t->closing)
        return -1;
    for (unsigned i = 0; i < n; i++) {
        size_t len = bufs[i].len;
        if (len > OUT_KEEP - t->out_len)
            len = OUT_KEEP - t->out_len;
        if (len > t->out_cap - t->out_len) {
            size_t nc = t->out_cap ? t->out_cap : 4096;
            while (nc - t->out_len < len)
                nc *= 2;
            uint8_t *no = realloc(t->out, nc);
            if (!no)
                abort();
            t->out = no;
            t->out_cap = nc;
        }
        if (len)
            memcpy(t->out + t->out_len, bufs[i].base, len);
        t->out_len += len;
    }
    return 1;
}

void yb_transport_close(yb_transport *t) { t->closing = 1; }
void yb_transport_reset(yb_transport *t) { t->closing = 1; }
void yb_transport_pause(yb_transport *t, int paused) { t->paused = paused; }

/* ---- the server --------------------------------------------------------------- */

static yb_serve_opts opts;
static yb_server srv;
static uv_loop_t loop;
static int loop_ok;

yb_server *stub_server_begin(unsigned o)
{
    if (!loop_ok) {
        if (uv_loop_init(&loop) != 0 || yb_sched_init(&srv.sched, &loop, 0) != 0)
            abort();
        /* The openconfig-system view, so that inputs reach its paths too
         * (kept for the process's life, as the loop is). */
        if (!(srv.sys = yb_sys_new(&loop, 1)))
            abort();
        yb_sys_set_device(srv.sys, 0, &srv.sched, 0);
        loop_ok = 1;
    }
    yb_serve_defaults(&opts);
    opts.max_body = 1u << 20;
    opts.sink = (o & STUB_SINK) != 0;
    if (o & STUB_AUTH) {
        opts.auth_user = "admin";
        opts.auth_password = "pw";
    }
    if (o & STUB_FAULTS) {
        opts.faults[opts.n_faults++] = (yb_fault){.kind = YB_FAULT_RESET, .p = 0.05};
        opts.faults[opts.n_faults++] = (yb_fault){.kind = YB_FAULT_STATUS, .p = 0.1, .code = 503};
        opts.faults[opts.n_faults++] = (yb_fault){.kind = YB_FAULT_STATUS, .p = 0.1, .code = 14};
    }
    if (o & STUB_GOAWAY)
        opts.faults[opts.n_faults++] = (yb_fault){.kind = YB_FAULT_GOAWAY_AFTER, .n = 3};
    srv.o = &opts;
    srv.loop = &loop;
    srv.store = yb_store_new();
    if (!srv.store)
        abort();
    yb_rng_seed(&srv.rng, 1);
    memset(&srv.st, 0, sizeof srv.st);
    /* as yb_serve_run: Basic base64("admin:pw") */
    srv.basic_auth = (o & STUB_AUTH) ? (char *)"Basic YWRtaW46cHc=" : NULL;
    srv.conns = NULL;
    srv.nconns = 0;
    srv.stopping = 0;
    srv.t_start = uv_hrtime();
    srv.goaway_after = (o & STUB_GOAWAY) ? 3 : 0;
    srv.req_seq = 0;
    return &srv;
}

/* SERVE_STUB_DEBUG=1: one line per input with what the server answered,
 * to see that seeds reach the handlers they are meant for. */
static void debug_line(const yb_server *s)
{
    fprintf(stderr, "serve stub: rpcs");
    for (int i = 0; i < YB_RPC__COUNT; i++)
        fprintf(stderr, " %llu", (unsigned long long)s->st.rpcs[i]);
    fprintf(stderr, " grpc");
    for (int i = 0; i <= 16; i++)
        if (s->st.grpc_status[i])
            fprintf(stderr, " %d=%llu", i, (unsigned long long)s->st.grpc_status[i]);
    fprintf(stderr, " http");
    for (int i = 0; i < 600; i++)
        if (s->st.http_status[i])
            fprintf(stderr, " %d=%llu", i, (unsigned long long)s->st.http_status[i]);
    fprintf(stderr, " auth-failures %llu bad-input %llu refused %llu\n",
            (unsigned long long)s->st.auth_failures, (unsigned long long)s->st.bad_input,
            (unsigned long long)s->st.streams_refused);
}

void stub_server_end(yb_server *s)
{
    static int debug = -1;
    if (debug < 0)
        debug = getenv("SERVE_STUB_DEBUG") != NULL;
    if (debug)
        debug_line(s);
    if (s->conns)
        abort(); /* a connection outlived its stub_end */
    /* No transaction may be left open, and the tree must serialise. */
    if (yb_store_begin(s->store) != 0)
        abort();
    yb_store_abort(s->store);
    yb_spath root;
    yb_spath_init(&root);
    json_t *node;
    if (yb_store_get(s->store, &root, &node) != 0)
        abort();
    char *text = json_dumps(node, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text)
        abort();
    free(text);
    yb_store_free(s->store);
    s->store = NULL;
    /* Let closed handles (Subscribe samplers, linger timers) finish. */
    uv_run(&loop, UV_RUN_NOWAIT);
}

/* ---- connections ---------------------------------------------------------------- */

yb_transport *stub_accept(yb_server *s, int gnmi)
{
    accepted = NULL;
    int rc = gnmi ? yb_gnmi_accept(s, NULL, NULL) : yb_restconf_accept(s, NULL, NULL);
    if (rc != 0 || !accepted)
        return NULL;
    yb_transport *t = accepted;
    t->cbs.on_ready(t, t->ud, YB_ERR_NONE);
    return t;
}

int stub_read(yb_transport *t, const uint8_t *d, size_t n)
{
    if (t->closing)
        return -1;
    if (t->paused) {
        uv_run(&loop, UV_RUN_NOWAIT);
        if (t->paused || t->closing)
            return -1;
    }
    t->cbs.on_read(t, t->ud, d, n);
    return 0;
}

const uint8_t *stub_take(yb_transport *t, size_t *n)
{
    *n = t->out_len;
    t->out_len = 0;
    return t->out;
}

int stub_closed(const yb_transport *t) { return t->closing; }

void stub_end(yb_transport *t)
{
    t->cbs.on_close(t, t->ud, t->closing ? YB_ERR_NONE : YB_ERR_CLOSED);
    free(t->out);
    free(t);
}
