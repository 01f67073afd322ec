/* Unit tests for the HTTP/2 client codec (src/codec/h2_client.c), against
 * an nghttp2 server session in memory whose connection window the test
 * opens by hand (no automatic WINDOW_UPDATE), so that what the client
 * writes while the window is shut can be seen write by write. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "corpus/corpus.h"

#define BODY 40000 /* a request body: one and a half fit the initial 65,535-byte window */
#define MAXX 8

typedef struct {
    /* the client's side */
    yb_codec *c;
    yb_codec_cfg cfg;
    yb_codec_host host;
    yb_prepared post, get;
    yb_exchange x[MAXX];
    unsigned nx, done, ok, ready;
    /* what the client wrote and the server has not read yet */
    uint8_t *wire;
    size_t wire_len, wire_cap;
    unsigned writes;
    /* the server */
    nghttp2_session *srv;
    unsigned headers_seen; /* request HEADERS the server received */
    size_t data_seen;      /* request DATA bytes it received */
} fixture;

static int cl_write(void *host, const uv_buf_t *bufs, unsigned n)
{
    fixture *f = host;
    f->writes++;
    for (unsigned i = 0; i < n; i++) {
        if (f->wire_len + bufs[i].len > f->wire_cap) {
            f->wire_cap = (f->wire_len + bufs[i].len) * 2;
            f->wire = realloc(f->wire, f->wire_cap);
            assert_non_null(f->wire);
        }
        memcpy(f->wire + f->wire_len, bufs[i].base, bufs[i].len);
        f->wire_len += bufs[i].len;
    }
    return 1;
}

static void cl_done(void *host, yb_exchange *x)
{
    fixture *f = host;
    f->done++;
    f->ok += x->res.err == YB_ERR_NONE && x->res.grpc_status == 0;
}

static void cl_close(void *host, int fatal, yb_err_class why, const char *reason)
{
    (void)host; (void)why;
    fail_msg("the client closed (fatal %d): %s", fatal, reason ? reason : "");
}

static void cl_ready(void *host)
{
    ((fixture *)host)->ready = 1;
}

/* ---- the server: answers every request once its body has ended -------- */

static const uint8_t grpc_empty[5] = {0, 0, 0, 0, 0}; /* one empty gRPC message */

static ssize_t srv_body(nghttp2_session *s, int32_t sid, uint8_t *buf, size_t len,
                        uint32_t *flags, nghttp2_data_source *src, void *ud)
{
    (void)src; (void)ud;
    assert_true(len >= sizeof grpc_empty);
    memcpy(buf, grpc_empty, sizeof grpc_empty);
    *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
    static const nghttp2_nv tr[] = {{(uint8_t *)"grpc-status", (uint8_t *)"0", 11, 1, 0}};
    assert_int_equal(nghttp2_submit_trailer(s, sid, tr, 1), 0);
    return sizeof grpc_empty;
}

static int srv_frame(nghttp2_session *s, const nghttp2_frame *fr, void *ud)
{
    fixture *f = ud;
    if (fr->hd.type == NGHTTP2_HEADERS && fr->headers.cat == NGHTTP2_HCAT_REQUEST)
        f->headers_seen++;
    if (fr->hd.type == NGHTTP2_DATA)
        f->data_seen += fr->hd.length;
    if ((fr->hd.type == NGHTTP2_HEADERS || fr->hd.type == NGHTTP2_DATA) &&
        (fr->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
        static const nghttp2_nv h[] = {
            {(uint8_t *)":status", (uint8_t *)"200", 7, 3, 0},
            {(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16, 0}};
        nghttp2_data_provider dp = {.read_callback = srv_body};
        assert_int_equal(nghttp2_submit_response(s, fr->hd.stream_id, h, 2, &dp), 0);
    }
    return 0;
}

/* The server reads all the client wrote. */
static void to_server(fixture *f)
{
    if (f->wire_len)
        assert_int_equal(nghttp2_session_mem_recv(f->srv, f->wire, f->wire_len),
                         (ssize_t)f->wire_len);
    f->wire_len = 0;
}

/* The client reads all the server has to send, then flushes, as the
 * engine's pool does after each read. */
static void to_client(fixture *f)
{
    for (;;) {
        const uint8_t *d;
        ssize_t n = nghttp2_session_mem_send(f->srv, &d);
        assert_true(n >= 0);
        if (!n)
            break;
        assert_int_equal(yb_h2_client_ops.on_read(f->c, d, (size_t)n, 1), 0);
    }
    yb_h2_client_ops.flush(f->c, 1);
}

static void prepare(fixture *f, yb_prepared *p, const char *method, size_t body)
{
    yb_request r;
    yb_request_init(&r);
    r.protocol = YB_PROTO_GNMI;
    assert_int_equal(yb_request_set_str(&r.method, method), 0);
    assert_int_equal(yb_request_set_str(&r.path, "/test.T/Call"), 0);
    assert_int_equal(yb_request_set_str(&r.authority, "t"), 0);
    assert_int_equal(yb_request_set_str(&r.scheme, "http"), 0);
    if (body) {
        uint8_t *b = calloc(1, body);
        assert_non_null(b);
        b[1] = (uint8_t)((body - 5) >> 24), b[2] = (uint8_t)((body - 5) >> 16);
        b[3] = (uint8_t)((body - 5) >> 8), b[4] = (uint8_t)(body - 5);
        yb_request_take_body(&r, b, body);
    }
    memset(p, 0, sizeof *p);
    assert_int_equal(yb_h2_client_ops.prepare(&f->cfg, &r, p), 0);
    yb_request_cleanup(&r);
}

static yb_exchange *submit(fixture *f, const yb_prepared *p)
{
    assert_true(f->nx < MAXX);
    yb_exchange *x = &f->x[f->nx++];
    memset(x, 0, sizeof *x);
    x->req = p;
    x->res.grpc_status = -1;
    assert_true(yb_h2_client_ops.capacity(f->c) > 0);
    assert_int_equal(yb_h2_client_ops.submit(f->c, x, 1), 0);
    return x;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->cfg = (yb_codec_cfg){.authority = "t", .scheme = "http", .max_body = 1 << 20, .streams = 10};
    f->host = (yb_codec_host){.write = cl_write, .done = cl_done, .close = cl_close,
                              .ready = cl_ready};
    prepare(f, &f->post, "POST", BODY);
    prepare(f, &f->get, "POST", 0);
    nghttp2_session_callbacks *cb;
    assert_int_equal(nghttp2_session_callbacks_new(&cb), 0);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, srv_frame);
    nghttp2_option *opt;
    assert_int_equal(nghttp2_option_new(&opt), 0);
    /* the test alone opens the server's receive window */
    nghttp2_option_set_no_auto_window_update(opt, 1);
    assert_int_equal(nghttp2_session_server_new2(&f->srv, cb, f, opt), 0);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cb);
    assert_int_equal(nghttp2_submit_settings(f->srv, NGHTTP2_FLAG_NONE, NULL, 0), 0);
    f->c = yb_h2_client_ops.create(&f->cfg, &f->host, f);
    assert_non_null(f->c);
    assert_int_equal(yb_h2_client_ops.start(f->c), 0);
    to_server(f);
    to_client(f);
    to_server(f); /* our SETTINGS ACK */
    assert_true(f->ready);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    yb_h2_client_ops.destroy(f->c);
    nghttp2_session_del(f->srv);
    yb_h2_client_ops.prepared_free(&f->post);
    yb_h2_client_ops.prepared_free(&f->get);
    free(f->wire);
    free(f);
    return 0;
}

/* Two requests, one after the other: the first body whole (the server
 * then answers it), 25,535 bytes of the second, which shut the window. */
static void shut_window(fixture *f)
{
    submit(f, &f->post);
    yb_h2_client_ops.flush(f->c, 1);
    submit(f, &f->post);
    yb_h2_client_ops.flush(f->c, 1);
}

/* Requests submitted while the server's connection window is shut keep
 * their HEADERS until the WINDOW_UPDATE that lets their DATA go, and then
 * leave with it in one write; nothing stalls. */
static void test_headers_wait_for_window(void **state)
{
    fixture *f = *state;
    shut_window(f);
    to_server(f); /* the first body whole, 25,535 bytes of the second: the window is shut */
    assert_int_equal(f->headers_seen, 2);
    assert_int_equal(f->data_seen, 65535);
    to_client(f); /* the first answer; no WINDOW_UPDATE yet */
    assert_int_equal(f->done, 1);
    assert_int_equal(f->ok, 1);

    unsigned w = f->writes;
    submit(f, &f->post); /* what the engine does with the freed slot */
    yb_h2_client_ops.flush(f->c, 1);
    assert_int_equal(f->writes, w); /* nothing written: its DATA cannot go */
    assert_int_equal(f->wire_len, 0);

    /* the window opens: HEADERS and DATA in one write */
    assert_int_equal(nghttp2_submit_window_update(f->srv, NGHTTP2_FLAG_NONE, 0, 1 << 20), 0);
    to_client(f);
    assert_int_equal(f->writes, w + 1);
    to_server(f);
    assert_int_equal(f->headers_seen, 3);
    assert_int_equal(f->data_seen, 3 * BODY);
    to_client(f);
    assert_int_equal(f->done, 3);
    assert_int_equal(f->ok, 3);
}

/* A request without a body is written at once, shut window or not: it
 * needs no window. */
static void test_no_body_goes_at_once(void **state)
{
    fixture *f = *state;
    shut_window(f);
    to_server(f);
    to_client(f);
    assert_int_equal(f->done, 1);
    unsigned w = f->writes;
    submit(f, &f->post);
    submit(f, &f->get);
    yb_h2_client_ops.flush(f->c, 1);
    assert_int_equal(f->writes, w + 1);
    to_server(f);
    assert_int_equal(f->headers_seen, 4); /* both: one write carries the held HEADERS too */
    to_client(f);
    assert_int_equal(f->done, 2);
    assert_int_equal(nghttp2_submit_window_update(f->srv, NGHTTP2_FLAG_NONE, 0, 1 << 20), 0);
    to_client(f);
    to_server(f);
    to_client(f);
    assert_int_equal(f->done, 4);
    assert_int_equal(f->ok, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_headers_wait_for_window, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_body_goes_at_once, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
