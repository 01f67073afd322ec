/* Transport tests: server and client transports on one uv loop over
 * 127.0.0.1, with certificates generated at start-up through the OpenSSL
 * API (EC P-256: fast, also under valgrind). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "transport/transport.h"

/* ---- certificates ------------------------------------------------------- */

static char tmpdir[64];
static char srv_cert[128], srv_key[128], cli_cert[128], cli_key[128], keylog_path[128];
static char leaf_cert[128], leaf_key[128], forged_cert[128], forged_key[128];

static int add_ext(X509 *x, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509_EXTENSION *e;
    int ok;

    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
    e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!e)
        return -1;
    ok = X509_add_ext(x, e, -1);
    X509_EXTENSION_free(e);
    return ok ? 0 : -1;
}

/* Writes a self-signed certificate (usable as its own CA) and its key. */
static int make_cert(const char *cn, long serial, const char *certpath, const char *keypath)
{
    EVP_PKEY *pk = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    X509_NAME *name;
    FILE *f = NULL;
    int rc = -1;

    if (!pk || !x)
        goto out;
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 86400);
    X509_set_pubkey(x, pk);
    name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(x, name);
    if (add_ext(x, NID_basic_constraints, "critical,CA:TRUE") < 0 ||
        add_ext(x, NID_key_usage, "critical,digitalSignature,keyCertSign") < 0 ||
        add_ext(x, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1") < 0)
        goto out;
    if (!X509_sign(x, pk, EVP_sha256()))
        goto out;
    f = fopen(certpath, "w");
    if (!f || !PEM_write_X509(f, x))
        goto out;
    fclose(f);
    f = fopen(keypath, "w");
    if (!f || !PEM_write_PrivateKey(f, pk, NULL, NULL, 0, NULL, NULL))
        goto out;
    rc = 0;
out:
    if (f)
        fclose(f);
    X509_free(x);
    EVP_PKEY_free(pk);
    return rc;
}

/* A leaf certificate for localhost with a key of its own, issued by the
 * server certificate (a CA) and signed with signer_key: the server's key
 * gives a valid chain, another key a forged one. */
static int make_leaf(const char *signer_key, const char *certpath, const char *keypath)
{
    EVP_PKEY *pk = EVP_EC_gen("P-256"), *ca_key = NULL;
    X509 *x = X509_new(), *ca = NULL;
    X509_NAME *name;
    FILE *f = NULL;
    int rc = -1;

    if (!pk || !x || !(f = fopen(srv_cert, "r")) || !(ca = PEM_read_X509(f, NULL, NULL, NULL)))
        goto out;
    fclose(f);
    if (!(f = fopen(signer_key, "r")) || !(ca_key = PEM_read_PrivateKey(f, NULL, NULL, NULL)))
        goto out;
    fclose(f);
    f = NULL;
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 86400);
    X509_set_pubkey(x, pk);
    name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"leaf", -1, -1, 0);
    X509_set_issuer_name(x, X509_get_subject_name(ca));
    if (add_ext(x, NID_subject_alt_name, "DNS:localhost") < 0 || !X509_sign(x, ca_key, EVP_sha256()))
        goto out;
    f = fopen(certpath, "w");
    if (!f || !PEM_write_X509(f, x))
        goto out;
    fclose(f);
    f = fopen(keypath, "w");
    if (!f || !PEM_write_PrivateKey(f, pk, NULL, NULL, 0, NULL, NULL))
        goto out;
    rc = 0;
out:
    if (f)
        fclose(f);
    X509_free(x);
    X509_free(ca);
    EVP_PKEY_free(pk);
    EVP_PKEY_free(ca_key);
    return rc;
}

static int group_setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/yb-transport-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    snprintf(srv_cert, sizeof srv_cert, "%s/server.pem", tmpdir);
    snprintf(srv_key, sizeof srv_key, "%s/server.key", tmpdir);
    snprintf(cli_cert, sizeof cli_cert, "%s/client.pem", tmpdir);
    snprintf(cli_key, sizeof cli_key, "%s/client.key", tmpdir);
    snprintf(keylog_path, sizeof keylog_path, "%s/keylog.txt", tmpdir);
    snprintf(leaf_cert, sizeof leaf_cert, "%s/leaf.pem", tmpdir);
    snprintf(leaf_key, sizeof leaf_key, "%s/leaf.key", tmpdir);
    snprintf(forged_cert, sizeof forged_cert, "%s/forged.pem", tmpdir);
    snprintf(forged_key, sizeof forged_key, "%s/forged.key", tmpdir);
    if (make_cert("localhost", 1, srv_cert, srv_key) < 0 ||
        make_cert("yb-client", 2, cli_cert, cli_key) < 0 ||
        make_leaf(srv_key, leaf_cert, leaf_key) < 0 ||
        make_leaf(cli_key, forged_cert, forged_key) < 0)
        return -1;
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    unlink(srv_cert);
    unlink(srv_key);
    unlink(cli_cert);
    unlink(cli_key);
    unlink(keylog_path);
    rmdir(tmpdir);
    return 0;
}

/* ---- fixture: one listener, one client connection at a time -------------- */

enum srv_mode { SRV_ECHO, SRV_PAUSE_FIRST, SRV_PUSH, SRV_RESET, SRV_IGNORE, SRV_RECORDS_CLOSE,
                SRV_PUSH_RESET };
enum cli_mode { CLI_ECHO, CLI_CLOSE_IN_READY, CLI_WAIT, CLI_PAUSED_RECV, CLI_ECHO_RECORDS,
                CLI_READ_TO_CLOSE, CLI_CLOSE_LATER, CLI_PAUSE_LATER, CLI_REPLY };

typedef struct {
    uv_loop_t loop;
    yb_uring *ring;             /* the client's, or NULL (fx_ring) */
    uv_tcp_t listener;
    uv_timer_t watchdog;
    uv_timer_t later;           /* CLI_CLOSE_LATER, CLI_PAUSE_LATER */
    int stopped;
    int port;
    int timed_out;
    enum srv_mode smode;
    enum cli_mode cmode;
    yb_tls_ctx *stls, *ctls;
    const char *sni;
    uint64_t timeout_ns;

    /* server connection */
    yb_transport *srv;
    int srv_accepted, srv_ready_calls, srv_close_calls, srv_paused;
    int srv_queued, srv_drains, srv_write_rc, cli_paused;
    yb_err_class srv_ready, srv_close;
    char srv_err[192];

    /* client connection */
    yb_transport *cli;
    int ready_calls, close_calls, drains, write_rc, wrote, reads;
    int writes_at_once, writes_queued;  /* CLI_ECHO_RECORDS: rc 1 / rc 0 */
    yb_err_class ready, closed;
    char err[192], alpn[32];
    int resumed;
    uint64_t t_start, t_conn, t_tls, t_drained;
    uint8_t *payload, *echo;
    size_t payload_len, echo_len;
} fx_t;

static void maybe_stop(fx_t *f)
{
    if (f->close_calls && f->srv_close_calls == f->srv_accepted) {
        f->stopped = 1;
        uv_stop(&f->loop);
    }
}

static void maybe_resume_server(fx_t *f)
{
    if (f->srv && f->srv_paused && f->wrote) {
        f->srv_paused = 0;
        yb_transport_pause(f->srv, 0);
    }
}

static void maybe_resume_client(fx_t *f)
{
    if (f->cli && f->cli_paused && f->srv_write_rc != -100) {
        f->cli_paused = 0;
        yb_transport_pause(f->cli, 0);
    }
}

/* CLI_CLOSE_LATER: closes the client while its receive is out on the
 * ring; CLI_PAUSE_LATER: pauses it then (the answer arrives meanwhile)
 * and resumes it on the next tick. */
static void on_later(uv_timer_t *tm)
{
    fx_t *f = tm->data;

    if (!f->cli)
        return;
    if (f->cmode == CLI_CLOSE_LATER) {
        yb_transport_close(f->cli);
    } else if (!f->cli_paused) {
        f->cli_paused = 1;
        yb_transport_pause(f->cli, 1);
        uv_buf_t b = uv_buf_init((char *)f->payload, (unsigned)f->payload_len);
        f->write_rc = yb_transport_write(f->cli, &b, 1);
        f->wrote = 1;
        uv_timer_start(&f->later, on_later, 30, 0);
    } else {
        f->cli_paused = 0;
        yb_transport_pause(f->cli, 0);
    }
}

static void srv_on_ready(yb_transport *t, void *ud, yb_err_class st)
{
    fx_t *f = ud;

    f->srv_ready_calls++;
    f->srv_ready = st;
    if (st != YB_ERR_NONE) {
        snprintf(f->srv_err, sizeof f->srv_err, "%s", yb_transport_error_text(t));
        return;
    }
    if (f->smode == SRV_RESET) {
        yb_transport_reset(t);
    } else if (f->smode == SRV_PUSH_RESET) {
        /* the data, then at once an RST: the client reads the one and
         * answers into the other */
        uv_buf_t b = uv_buf_init((char *)f->payload, (unsigned)f->payload_len);

        f->srv_write_rc = yb_transport_write(t, &b, 1);
        yb_transport_reset(t);
    } else if (f->smode == SRV_PUSH) {
        uv_buf_t b = uv_buf_init((char *)f->payload, (unsigned)f->payload_len);

        f->srv_write_rc = yb_transport_write(t, &b, 1);
        maybe_resume_client(f);
    } else if (f->smode == SRV_RECORDS_CLOSE) {
        /* a record per 5,000 bytes, then close_notify: one flight */
        for (size_t o = 0; o < f->payload_len; o += 5000) {
            size_t n = f->payload_len - o < 5000 ? f->payload_len - o : 5000;
            uv_buf_t b = uv_buf_init((char *)f->payload + o, (unsigned)n);

            assert_int_equal(yb_transport_write(t, &b, 1), 1);
        }
        yb_transport_close(t);
    } else if (f->smode == SRV_PAUSE_FIRST) {
        yb_transport_pause(t, 1);
        f->srv_paused = 1;
        maybe_resume_server(f);
    }
}

static void srv_on_read(yb_transport *t, void *ud, const uint8_t *data, size_t len)
{
    uv_buf_t b = uv_buf_init((char *)data, (unsigned)len);

    fx_t *f = ud;

    if (yb_transport_write(t, &b, 1) == 0)
        f->srv_queued++;
}

static void srv_on_drain(yb_transport *t, void *ud)
{
    fx_t *f = ud;

    (void)t;
    f->srv_drains++;
}

static void srv_on_close(yb_transport *t, void *ud, yb_err_class reason)
{
    fx_t *f = ud;

    (void)t;
    f->srv_close_calls++;
    f->srv_close = reason;
    f->srv = NULL;
    maybe_stop(f);
}

static const yb_transport_cbs srv_cbs = { srv_on_ready, srv_on_read, srv_on_drain, srv_on_close };

static void on_connection(uv_stream_t *s, int status)
{
    fx_t *f = s->data;

    assert_int_equal(status, 0);
    if (f->smode == SRV_IGNORE)
        return;                 /* the kernel completes the handshake; we stay silent */
    f->srv = yb_transport_accept(s, NULL, f->stls, &srv_cbs, f);
    assert_non_null(f->srv);
    f->srv_accepted++;
}

static void cli_on_ready(yb_transport *t, void *ud, yb_err_class st)
{
    fx_t *f = ud;
    uv_buf_t b;

    f->ready_calls++;
    f->ready = st;
    f->t_start = yb_transport_t_start(t);
    f->t_conn = yb_transport_t_connected(t);
    f->t_tls = yb_transport_t_tls_done(t);
    if (st != YB_ERR_NONE)
        return;
    snprintf(f->alpn, sizeof f->alpn, "%s", yb_transport_alpn(t));
    f->resumed = yb_transport_tls_resumed(t);
    if (f->cmode == CLI_CLOSE_IN_READY) {
        yb_transport_close(t);
        /* Must be harmless: the transport is closing, not freed. */
        b = uv_buf_init((char *)"x", 1);
        assert_true(yb_transport_write(t, &b, 1) < 0);
        yb_transport_close(t);
        return;
    }
    if (f->cmode == CLI_WAIT || f->cmode == CLI_READ_TO_CLOSE || f->cmode == CLI_REPLY)
        return;
    if (f->cmode == CLI_CLOSE_LATER || f->cmode == CLI_PAUSE_LATER) {
        uv_timer_start(&f->later, on_later, 20, 0);
        return;
    }
    if (f->cmode == CLI_PAUSED_RECV) {
        yb_transport_pause(t, 1);
        f->cli_paused = 1;
        maybe_resume_client(f);
        return;
    }
    if (f->cmode == CLI_ECHO_RECORDS) {
        /* one TLS record's worth per write, as an HTTP/1.1 request is */
        for (size_t o = 0; o < f->payload_len; o += 16384) {
            size_t n = f->payload_len - o < 16384 ? f->payload_len - o : 16384;
            b = uv_buf_init((char *)f->payload + o, (unsigned)n);
            f->write_rc = yb_transport_write(t, &b, 1);
            assert_true(f->write_rc == 0 || f->write_rc == 1);
            if (f->write_rc)
                f->writes_at_once++;
            else
                f->writes_queued++;
        }
        f->wrote = 1;
        maybe_resume_server(f);
        return;
    }
    b = uv_buf_init((char *)f->payload, (unsigned)f->payload_len);
    f->write_rc = yb_transport_write(t, &b, 1);
    f->wrote = 1;
    maybe_resume_server(f);
}

static void cli_on_read(yb_transport *t, void *ud, const uint8_t *data, size_t len)
{
    fx_t *f = ud;

    assert_false(f->cli_paused);    /* nothing is delivered while paused */
    assert_true(f->echo_len + len <= f->payload_len);
    memcpy(f->echo + f->echo_len, data, len);
    f->echo_len += len;
    f->reads++;
    if (f->cmode == CLI_READ_TO_CLOSE)
        return;                 /* the server closes */
    if (f->cmode == CLI_REPLY) {
        /* answers while the ring delivers: the answer is sent with the
         * next receive linked behind it */
        uv_buf_t b = uv_buf_init((char *)"reply", 5);

        if (f->echo_len == f->payload_len)
            f->write_rc = yb_transport_write(t, &b, 1);
        return;
    }
    if (f->echo_len == f->payload_len) {
        yb_transport_close(t);
        yb_transport_close(t);  /* twice: still one on_close */
    }
}

static void cli_on_drain(yb_transport *t, void *ud)
{
    fx_t *f = ud;

    f->drains++;
    f->t_drained = yb_transport_t_drained(t);
}

static void cli_on_close(yb_transport *t, void *ud, yb_err_class reason)
{
    fx_t *f = ud;

    f->close_calls++;
    f->closed = reason;
    snprintf(f->err, sizeof f->err, "%s", yb_transport_error_text(t));
    f->cli = NULL;
    maybe_stop(f);
}

static const yb_transport_cbs cli_cbs = { cli_on_ready, cli_on_read, cli_on_drain, cli_on_close };

static void on_watchdog(uv_timer_t *tm)
{
    fx_t *f = tm->data;

    f->timed_out = f->stopped = 1;
    uv_stop(&f->loop);
}

static fx_t *fx_new(enum srv_mode smode, int listen_too)
{
    fx_t *f = calloc(1, sizeof *f);
    struct sockaddr_in a;
    struct sockaddr_storage ss;
    int len = sizeof ss;

    assert_non_null(f);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    f->smode = smode;
    uv_timer_init(&f->loop, &f->watchdog);
    f->watchdog.data = f;
    uv_unref((uv_handle_t *)&f->watchdog);
    uv_timer_init(&f->loop, &f->later);
    f->later.data = f;
    uv_unref((uv_handle_t *)&f->later);
    uv_tcp_init(&f->loop, &f->listener);
    f->listener.data = f;
    assert_int_equal(uv_ip4_addr("127.0.0.1", 0, &a), 0);
    assert_int_equal(uv_tcp_bind(&f->listener, (const struct sockaddr *)&a, 0), 0);
    assert_int_equal(uv_tcp_getsockname(&f->listener, (struct sockaddr *)&ss, &len), 0);
    f->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    /* Small fixed socket buffers (inherited by accepted sockets, and they
     * switch off autotuning) so that large writes have to queue. */
    {
        int sz = 32 * 1024;

        assert_int_equal(uv_send_buffer_size((uv_handle_t *)&f->listener, &sz), 0);
        sz = 32 * 1024;
        assert_int_equal(uv_recv_buffer_size((uv_handle_t *)&f->listener, &sz), 0);
    }
    if (listen_too)
        assert_int_equal(uv_listen((uv_stream_t *)&f->listener, 16, on_connection), 0);
    return f;
}

/* Gives the fixture's client a ring, as a worker's sessions have. */
static void fx_ring(fx_t *f)
{
    char err[128] = "";

    f->ring = yb_uring_new(&f->loop, err, sizeof err);
    if (!f->ring)
        fail_msg("io_uring: %s", err);
    assert_int_equal(yb_uring_start(f->ring), 0);
    assert_true(yb_uring_ready(f->ring));
}

static void fx_free(fx_t *f)
{
    uv_close((uv_handle_t *)&f->listener, NULL);
    uv_close((uv_handle_t *)&f->watchdog, NULL);
    uv_close((uv_handle_t *)&f->later, NULL);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    if (f->ring) {
        assert_int_equal(yb_uring_inflight(f->ring), 0);
        yb_uring_free(f->ring);
    }
    assert_int_equal(uv_loop_close(&f->loop), 0);
    yb_tls_ctx_free(f->stls);
    yb_tls_ctx_free(f->ctls);
    free(f->payload);
    free(f->echo);
    free(f);
}

static void fx_payload(fx_t *f, size_t n)
{
    size_t i;

    free(f->payload);
    free(f->echo);
    f->payload = malloc(n);
    f->echo = malloc(n);
    assert_non_null(f->payload);
    assert_non_null(f->echo);
    for (i = 0; i < n; i++)
        f->payload[i] = (uint8_t)(i * 7 + (i >> 10));
    f->payload_len = n;
}

/* Runs one client connection to the fixture's port until both ends closed. */
static void fx_run(fx_t *f, enum cli_mode cmode)
{
    struct sockaddr_in a;
    yb_err_class err = YB_ERR__COUNT;

    f->cmode = cmode;
    f->ready_calls = f->close_calls = f->drains = f->wrote = f->reads = 0;
    f->writes_at_once = f->writes_queued = 0;
    f->write_rc = -100;
    f->srv_accepted = f->srv_ready_calls = f->srv_close_calls = f->srv_paused = 0;
    f->srv_queued = f->srv_drains = f->cli_paused = 0;
    f->srv_write_rc = -100;
    f->echo_len = 0;
    f->resumed = -1;
    f->stopped = 0;
    f->t_drained = 0;
    f->err[0] = f->alpn[0] = f->srv_err[0] = '\0';
    uv_ip4_addr("127.0.0.1", f->port, &a);
    f->cli = yb_transport_connect(&f->loop, f->ring, (const struct sockaddr *)&a, f->ctls, f->sni,
                                  f->timeout_ns, &cli_cbs, f, &err);
    assert_non_null(f->cli);
    assert_int_equal(err, YB_ERR_NONE);
    uv_timer_start(&f->watchdog, on_watchdog, 30000, 0);
    if (!f->ring) {
        uv_run(&f->loop, UV_RUN_DEFAULT);
    } else {
        /* as a worker's loop runs with a ring (engine/worker.c), until
         * both ends closed and the ring has nothing left */
        for (;;) {
            uv_update_time(&f->loop);
            if (yb_uring_loop_events(f->ring) || uv_backend_timeout(&f->loop) == 0)
                (void)uv_run(&f->loop, UV_RUN_NOWAIT);
            yb_uring_reap(f->ring);
            if (f->timed_out || (f->stopped && !yb_uring_inflight(f->ring)))
                break;
            uv_update_time(&f->loop);
            yb_uring_wait(f->ring, uv_backend_timeout(&f->loop));
        }
    }
    uv_timer_stop(&f->watchdog);
    assert_false(f->timed_out);
    assert_int_equal(f->close_calls, 1);
    assert_int_equal(f->srv_close_calls, f->srv_accepted);
}

static yb_tls_ctx *server_ctx(const char *alpn, const char *client_ca, int tickets)
{
    yb_tls_server_opts o = { .cert = srv_cert, .key = srv_key, .alpn = alpn,
                             .client_ca = client_ca, .tickets = tickets };
    char err[256] = "";
    yb_tls_ctx *c;

    c = yb_tls_server_ctx_new(&o, err, sizeof err);
    if (!c)
        fail_msg("server ctx: %s", err);
    return c;
}

static yb_tls_ctx *server_ctx_with(const char *cert, const char *key)
{
    yb_tls_server_opts o = { .cert = cert, .key = key, .tickets = 1 };
    char err[256] = "";
    yb_tls_ctx *c = yb_tls_server_ctx_new(&o, err, sizeof err);

    if (!c)
        fail_msg("server ctx: %s", err);
    return c;
}

static yb_tls_ctx *client_ctx(const yb_tls_client_opts *o)
{
    char err[256] = "";
    yb_tls_ctx *c = yb_tls_client_ctx_new(o, err, sizeof err);

    if (!c)
        fail_msg("client ctx: %s", err);
    return c;
}

static void assert_echo_ok(fx_t *f)
{
    assert_int_equal(f->ready_calls, 1);
    assert_int_equal(f->ready, YB_ERR_NONE);
    assert_int_equal(f->echo_len, f->payload_len);
    assert_memory_equal(f->echo, f->payload, f->payload_len);
    assert_int_equal(f->closed, YB_ERR_NONE);
    assert_int_equal(f->srv_accepted, 1);
    assert_int_equal(f->srv_close, YB_ERR_CLOSED);
    assert_true(f->t_start > 0 && f->t_conn >= f->t_start);
}

/* ---- tests ---------------------------------------------------------------- */

static void test_parse_version(void **state)
{
    int v = 0;

    (void)state;
    assert_int_equal(yb_tls_parse_version("1.2", &v), 0);
    assert_int_equal(v, TLS1_2_VERSION);
    assert_int_equal(yb_tls_parse_version("1.3", &v), 0);
    assert_int_equal(v, TLS1_3_VERSION);
    assert_int_equal(yb_tls_parse_version("1.4", &v), -1);
    assert_int_equal(yb_tls_parse_version("", &v), -1);
}

static void test_ctx_errors(void **state)
{
    yb_tls_client_opts co = { .cacert = "/nonexistent/ca.pem" };
    yb_tls_server_opts so = { .cert = srv_cert, .key = cli_key };
    char err[256] = "";

    (void)state;
    assert_null(yb_tls_client_ctx_new(&co, err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/ca.pem"));
    co = (yb_tls_client_opts){ .alpn = "h2,,x" };
    assert_null(yb_tls_client_ctx_new(&co, err, sizeof err));
    assert_non_null(strstr(err, "ALPN"));
    assert_null(yb_tls_server_ctx_new(&so, err, sizeof err));
    assert_non_null(strstr(err, "mismatch"));
}

/* Plain TCP echo of 1 MiB; the server starts reading only after the
 * client's write returned, so whatever the kernel did not take is queued
 * and must still arrive in order. */
static void test_plain_echo_1mib(void **state)
{
    fx_t *f = fx_new(SRV_PAUSE_FIRST, 1);

    (void)state;
    fx_payload(f, 1 << 20);
    f->timeout_ns = 10ull * 1000000000;    /* armed, then stopped at ready */
    fx_run(f, CLI_ECHO);
    assert_echo_ok(f);
    assert_int_equal(f->t_tls, 0);
    assert_string_equal(f->alpn, "");
    fx_free(f);
}

/* 1 MiB from the server (fixed 64 KiB socket buffer) to a paused client:
 * the write cannot reach the kernel at once, so it queues (returns 0) and
 * on_drain follows once the client reads. */
static void test_plain_1mib_queue_drain(void **state)
{
    fx_t *f = fx_new(SRV_PUSH, 1);

    (void)state;
    fx_payload(f, 1 << 20);
    fx_run(f, CLI_PAUSED_RECV);
    assert_echo_ok(f);
    assert_int_equal(f->srv_write_rc, 0);
    assert_int_equal(f->srv_drains, 1);
    fx_free(f);
}

/* The same through TLS: ciphertext queues in the transport. */
static void test_tls_1mib_queue_drain(void **state)
{
    fx_t *f = fx_new(SRV_PUSH, 1);
    yb_tls_client_opts co = { .cacert = srv_cert };

    (void)state;
    f->stls = server_ctx(NULL, NULL, 1);
    f->ctls = client_ctx(&co);
    f->sni = "localhost";
    fx_payload(f, 1 << 20);
    fx_run(f, CLI_PAUSED_RECV);
    assert_echo_ok(f);
    assert_int_equal(f->srv_write_rc, 0);
    assert_int_equal(f->srv_drains, 1);
    fx_free(f);
}

static void test_plain_small_write_direct(void **state)
{
    fx_t *f = fx_new(SRV_ECHO, 1);

    (void)state;
    fx_payload(f, 100);
    fx_run(f, CLI_ECHO);
    assert_echo_ok(f);
    assert_int_equal(f->write_rc, 1);      /* taken by uv_try_write at once */
    assert_int_equal(f->drains, 0);
    fx_free(f);
}

/* TLS, one record's worth (an HTTP/1.1 request): the output BIO hands
 * the record to the kernel itself, which takes it at once. */
static void test_tls_small_write_direct(void **state)
{
    fx_t *f = fx_new(SRV_ECHO, 1);
    yb_tls_client_opts co = { .cacert = srv_cert };

    (void)state;
    f->stls = server_ctx(NULL, NULL, 1);
    f->ctls = client_ctx(&co);
    f->sni = "localhost";
    fx_payload(f, 15000);
    fx_run(f, CLI_ECHO);
    assert_echo_ok(f);
    assert_int_equal(f->write_rc, 1);
    assert_int_equal(f->drains, 0);
    fx_free(f);
}

/* TLS, 8 MiB as 512 one-record writes to a server that reads nothing
 * until the last (more than the client's send buffer, at most 4 MiB by
 * default, and the server's 32 KiB take): the first go straight to the
 * kernel, one of them only in part once the buffers fill, the rest queue
 * behind it; all arrive, in order, and on_drain follows. */
static void test_tls_record_writes_fill_queue(void **state)
{
    fx_t *f = fx_new(SRV_PAUSE_FIRST, 1);
    yb_tls_client_opts co = { .cacert = srv_cert };

    (void)state;
    f->stls = server_ctx(NULL, NULL, 1);
    f->ctls = client_ctx(&co);
    f->sni = "localhost";
    fx_payload(f, 8 << 20);
    fx_run(f, CLI_ECHO_RECORDS);
    assert_echo_ok(f);
    assert_true(f->writes_at_once >= 1);
    assert_true(f->writes_queued >= 1);
    assert_int_equal(f->writes_at_once + f->writes_queued, 512);
    assert_int_equal(f->drains, 1);
    fx_free(f);
}

/* TLS: three records and close_notify arrive in one socket read; their
 * plaintext reaches on_read in one call (the application then answers
 * them all with one write, not one per record), before the close. */
static void test_tls_records_one_read(void **state)
{
    fx_t *f = fx_new(SRV_RECORDS_CLOSE, 1);
    yb_tls_client_opts co = { .cacert = srv_cert };

    (void)state;
    f->stls = server_ctx(NULL, NULL, 0);
    f->ctls = client_ctx(&co);
    f->sni = "localhost";
    fx_payload(f, 15000);
    fx_run(f, CLI_READ_TO_CLOSE);
    assert_int_equal(f->ready, YB_ERR_NONE);
    assert_int_equal(f->echo_len, f->payload_len);
    assert_memory_equal(f->echo, f->payload, f->payload_len);
    assert_int_equal(f->reads, 1);
    assert_int_equal(f->closed, YB_ERR_CLOSED);
    fx_free(f);
}

static void test_close_in_ready(void **state)
{
    fx_t *f = fx_new(SRV_ECHO, 1);

    (void)state;
    fx_run(f, CLI_CLOSE_IN_READY);
    assert_int_equal(f->ready, YB_ERR_NONE);
    assert_int_equal(f->closed, YB_ERR_NONE);
    fx_free(f);
}

/* TLS with verification against the generated CA, SNI "localhost", ALPN
 * where the server's preference (h2) beats the client's order. */
static void test_tls_verify_ok_alpn(void **state)
{
    fx_t *f = fx_new(SRV_ECHO, 1);
    yb_tls_client_opts co = { .cacert = srv_cert, .alpn = "http/1.1,h2" };

    (void)state;
    f->stls = server_ctx("h2,http/1.1", NULL, 1);
    f->ctls = client_ctx(&co);
    f->sni = "localhost";
    f->timeout_ns = 10ull * 1000000000;
    fx_payload(f, 256 * 1024);
    fx_run(f, CLI_ECHO);
    assert_echo_ok(f);
    assert_string_equal(f->alpn, "h2");
    assert_int_equal(f->resumed, 0);
    assert_true(f->t_tls >= f->t_conn && f->t_conn > 0);
    fx_free(f);
}

static void test_tls_verify_ip(void **state)
{
    fx_t *f = fx_new(SRV_ECHO, 1);
    yb_tls_client_opts co = { .cacert = srv_cert };

    (void)state;
    f->stls = server_ctx(NULL, NULL, 1);
    f->ctls = client_ctx(&co);
    f->sni = "127.0.0.1";                   /* checked against the IP SAN */
    fx_payload(f, 1000);
    fx_run(f, CLI_ECHO);
    assert_echo_ok(f);
    assert_string_equal(f->alpn, "");
    fx_free(f);
}

/* Without the CA (system store only) the self-signed certificate fails. */
static void test_tls_verify_fail(void **state)
{
    fx_t *f = fx_new(SRV_ECHO, 1);
    yb_tls_client_opts co = { 0 };

    (void)state;
    f->stls = server_ctx(NULL, NULL, 1);
    f->ctls = client_ctx(&co);
    f->sni = "localhost";
    fx_payload(f, 10);
    fx_run(f, CLI_ECHO);
    assert_int_equal(f->ready_calls, 1);
    assert_int_equal(f->ready, YB_ERR_TLS);
    assert_int_equal(f->closed, YB_ERR_TLS);
    assert_string_equal(f->err, "tls: certificate verify failed: self-signed certificate");
    fx_free(f);
}

static void test_tls_hostname_mismatch(void **state)
{
    fx_t *f = fx_new(SRV_ECHO, 1);
    yb_tls_client_opts co = { .cacert = srv_cert };

    (void)state;
    f->stls = server_ctx(NULL, NULL, 1);
    f->ctls = client_ctx(&co);
    f->sni = "switch1.example.net";
    fx_payload(f, 10);
    fx_run(f, CLI_ECHO);
    assert_int_equal(f->ready, YB_ERR_TLS);
    assert_non_null(strstr(f->err, "hostname mismatch"));
    fx_free(f);
}

static void test_tls_insecure(void **state)
{
    fx_t *f = fx_new(SRV_ECHO, 1);
    yb_tls_client_opts co = { .insecure = 1 };

    (void)state;
    f->stls = server_ctx(NULL, NULL, 1);
    f->ctls = client_ctx(&co);
    f->sni = "switch1.example.net";         /* neither CA nor name checked */
    fx_payload(f, 5000);
    fx_run(f, CLI_ECHO);
    assert_echo_ok(f);
    fx_free(f);
}

static void resumption(int version)
{
    fx_t *f = fx_new(SRV_ECHO, 1);
    yb_tls_client_opts co = { .cacert = srv_cert, .session_cache = 1,
                              .min_version = version, .max_version = version,
                              .keylog = keylog_path };
    char line[512];
    FILE *kl;
    int found = 0;
    const char *prefix = version == TLS1_3_VERSION ? "CLIENT_TRAFFIC_SECRET_0 "
                                                   : "CLIENT_RANDOM ";

    f->stls = server_ctx(NULL, NULL, 1);
    f->ctls = client_ctx(&co);
    f->sni = "localhost";
    fx_payload(f, 2000);
    fx_run(f, CLI_ECHO);
    assert_echo_ok(f);
    assert_int_equal(f->resumed, 0);
    fx_run(f, CLI_ECHO);                    /* same target: offers the cached session */
    assert_echo_ok(f);
    assert_int_equal(f->resumed, 1);
    fx_free(f);

    kl = fopen(keylog_path, "r");
    assert_non_null(kl);
    while (fgets(line, sizeof line, kl))
        if (strncmp(line, prefix, strlen(prefix)) == 0)
            found++;
    fclose(kl);
    unlink(keylog_path);
    assert_true(found >= 2);
}

static void test_tls12_resumption(void **state)
{
    (void)state;
    resumption(TLS1_2_VERSION);
}

static void test_tls13_resumption(void **state)
{
    (void)state;
    resumption(TLS1_3_VERSION);
}

static void test_tls_no_tickets_no_resumption(void **state)
{
    fx_t *f = fx_new(SRV_ECHO, 1);
    yb_tls_client_opts co = { .cacert = srv_cert, .session_cache = 1 };

    (void)state;
    f->stls = server_ctx(NULL, NULL, 0);
    f->ctls = client_ctx(&co);
    f->sni = "localhost";
    fx_payload(f, 100);
    fx_run(f, CLI_ECHO);
    assert_echo_ok(f);
    fx_run(f, CLI_ECHO);
    assert_echo_ok(f);
    assert_int_equal(f->resumed, 0);
    fx_free(f);
}

static void test_refused(void **state)
{
    fx_t *f = fx_new(SRV_ECHO, 0);          /* bound, not listening: RST */

    (void)state;
    fx_run(f, CLI_ECHO);
    assert_int_equal(f->ready_calls, 1);
    assert_int_equal(f->ready, YB_ERR_REFUSED);
    assert_int_equal(f->closed, YB_ERR_REFUSED);
    assert_int_equal(f->srv_accepted, 0);
    assert_string_equal(f->err, "connect: connection refused");
    fx_free(f);
}

/* TCP connects (kernel backlog) but nobody answers the ClientHello. */
static void test_connect_timeout(void **state)
{
    fx_t *f = fx_new(SRV_IGNORE, 1);
    yb_tls_client_opts co = { .insecure = 1 };

    (void)state;
    f->ctls = client_ctx(&co);
    f->timeout_ns = 200ull * 1000000;
    fx_run(f, CLI_ECHO);
    assert_int_equal(f->ready_calls, 1);
    assert_int_equal(f->ready, YB_ERR_CONNECT_TIMEOUT);
    assert_int_equal(f->closed, YB_ERR_CONNECT_TIMEOUT);
    assert_string_equal(f->err, "timeout after 200ms (TLS handshake)");
    fx_free(f);
}

static void test_peer_reset(void **state)
{
    fx_t *f = fx_new(SRV_RESET, 1);

    (void)state;
    fx_run(f, CLI_WAIT);
    assert_int_equal(f->ready, YB_ERR_NONE);
    assert_int_equal(f->closed, YB_ERR_RESET);
    assert_int_equal(f->srv_close, YB_ERR_NONE);
    fx_free(f);
}

/* ---- plain TCP on a ring ------------------------------------------------ */

/* A small write is copied and queued on the ring (0, not 1) and its
 * on_drain follows; its drained time is when the ring handed it to the
 * kernel: after the connect, before the answer was read. */
static void test_ring_small_echo(void **state)
{
    fx_t *f = fx_new(SRV_ECHO, 1);

    (void)state;
    fx_ring(f);
    fx_payload(f, 100);
    fx_run(f, CLI_ECHO);
    assert_echo_ok(f);
    assert_int_equal(f->write_rc, 0);
    assert_int_equal(f->drains, 1);
    assert_true(f->t_drained >= f->t_conn && f->t_conn > 0);
    /* again on the same ring: nothing was left on it */
    fx_run(f, CLI_ECHO);
    assert_echo_ok(f);
    assert_int_equal(f->drains, 1);
    fx_free(f);
}

/* 1 MiB to a server that reads only after the write returned: too large
 * for the ring's copy, it goes to the kernel at once (what it does not
 * take queues), as without a ring, while the answer comes back through
 * the ring's receives (32 KiB at most each, where libuv reads 64), in
 * order. */
static void test_ring_echo_1mib(void **state)
{
    fx_t *f = fx_new(SRV_PAUSE_FIRST, 1);

    (void)state;
    fx_ring(f);
    fx_payload(f, 1 << 20);
    fx_run(f, CLI_ECHO);
    assert_echo_ok(f);
    assert_true(f->write_rc == 0 || f->write_rc == 1);
    assert_int_equal(f->drains, !f->write_rc);
    assert_true(f->reads >= 32);
    fx_free(f);
}

/* 1 MiB pushed to a client paused from its start: nothing is received
 * until it resumes, then everything, in order. */
static void test_ring_paused_from_start(void **state)
{
    fx_t *f = fx_new(SRV_PUSH, 1);

    (void)state;
    fx_ring(f);
    fx_payload(f, 1 << 20);
    fx_run(f, CLI_PAUSED_RECV);
    assert_echo_ok(f);
    assert_int_equal(f->srv_write_rc, 0);
    fx_free(f);
}

/* Paused while its receive is out: the answer that receive brings is
 * held, and handed over only after the resume. */
static void test_ring_paused_with_receive_out(void **state)
{
    fx_t *f = fx_new(SRV_ECHO, 1);

    (void)state;
    fx_ring(f);
    fx_payload(f, 3000);
    fx_run(f, CLI_PAUSE_LATER);
    assert_echo_ok(f);
    assert_int_equal(f->write_rc, 0);
    assert_int_equal(f->reads, 1);
    fx_free(f);
}

/* Closed while its receive is out on the ring: the receive is cancelled,
 * on_close still comes once (after the ring let go of the transport), and
 * the ring is empty after. */
static void test_ring_close_with_receive_out(void **state)
{
    fx_t *f = fx_new(SRV_ECHO, 1);

    (void)state;
    fx_ring(f);
    fx_run(f, CLI_CLOSE_LATER);
    assert_int_equal(f->ready, YB_ERR_NONE);
    assert_int_equal(f->closed, YB_ERR_NONE);
    assert_int_equal(f->reads, 0);
    assert_int_equal(yb_uring_inflight(f->ring), 0);
    fx_free(f);
}

/* Closed in on_ready, before any receive: then an echo on the same ring. */
static void test_ring_close_in_ready(void **state)
{
    fx_t *f = fx_new(SRV_ECHO, 1);

    (void)state;
    fx_ring(f);
    fx_run(f, CLI_CLOSE_IN_READY);
    assert_int_equal(f->ready, YB_ERR_NONE);
    fx_payload(f, 10);
    fx_run(f, CLI_ECHO);
    assert_echo_ok(f);
    fx_free(f);
}

/* The peer's RST ends the ring's receive: reset, with its reason. */
static void test_ring_peer_reset(void **state)
{
    fx_t *f = fx_new(SRV_RESET, 1);

    (void)state;
    fx_ring(f);
    fx_run(f, CLI_WAIT);
    assert_int_equal(f->ready, YB_ERR_NONE);
    assert_int_equal(f->closed, YB_ERR_RESET);
    assert_string_equal(f->err, "reset: connection reset by peer (while reading)");
    fx_free(f);
}

/* The peer's data then FIN: all of the data, then a clean close. */
static void test_ring_peer_eof(void **state)
{
    fx_t *f = fx_new(SRV_RECORDS_CLOSE, 1);

    (void)state;
    fx_ring(f);
    fx_payload(f, 15000);
    fx_run(f, CLI_READ_TO_CLOSE);
    assert_int_equal(f->echo_len, f->payload_len);
    assert_memory_equal(f->echo, f->payload, f->payload_len);
    assert_int_equal(f->closed, YB_ERR_CLOSED);
    assert_string_equal(f->err, "");
    fx_free(f);
}

/* The peer's data, then its RST: the answer written while the data is
 * delivered goes out with the next receive linked behind it, and fails;
 * the pair ends with the send's one completion (the kernel drops the
 * receive's), the transport closes as reset, once, and the ring is empty
 * (else this would not return). */
static void test_ring_linked_send_fails(void **state)
{
    fx_t *f = fx_new(SRV_PUSH_RESET, 1);

    (void)state;
    fx_ring(f);
    fx_payload(f, 200);
    fx_run(f, CLI_REPLY);
    assert_int_equal(f->ready, YB_ERR_NONE);
    assert_int_equal(f->echo_len, f->payload_len);
    assert_int_equal(f->write_rc, 0);
    assert_int_equal(f->closed, YB_ERR_RESET);
    assert_int_equal(f->close_calls, 1);
    assert_int_equal(f->drains, 0);     /* the answer never left */
    assert_string_equal(f->err, "reset: connection reset by peer (while writing)");
    fx_free(f);
}

/* A TLS connection never uses the ring (its small write goes to the
 * kernel at once, as without one). */
static void test_ring_not_for_tls(void **state)
{
    fx_t *f = fx_new(SRV_ECHO, 1);
    yb_tls_client_opts co = { .cacert = srv_cert };

    (void)state;
    fx_ring(f);
    f->stls = server_ctx(NULL, NULL, 1);
    f->ctls = client_ctx(&co);
    f->sni = "localhost";
    fx_payload(f, 100);
    fx_run(f, CLI_ECHO);
    assert_echo_ok(f);
    assert_int_equal(f->write_rc, 1);
    assert_int_equal(f->drains, 0);
    fx_free(f);
}

/* Waits on r until its alarm fires (at most `limit` waits of 100 ms);
 * returns the time it was seen, 0 if never. */
static uint64_t alarm_seen(yb_uring *r, int limit)
{
    for (int i = 0; i < limit; i++) {
        yb_uring_wait(r, 100);
        if (yb_uring_alarm_fired(r))
            return uv_hrtime();
    }
    return 0;
}

/* The ring's alarm: never early, once, a moved one at its new time only
 * (an earlier time fires before the first would have), 0 and an
 * unchanged time are no-ops, and a ring not started takes none. */
static void test_ring_alarm(void **state)
{
    (void)state;
    uv_loop_t loop;
    char err[256];
    assert_int_equal(uv_loop_init(&loop), 0);
    yb_uring *r = yb_uring_new(&loop, err, sizeof err);
    if (!r) {
        uv_loop_close(&loop);
        skip(); /* no io_uring here: the worker keeps its timerfd */
    }
    assert_int_equal(yb_uring_alarm(r, uv_hrtime() + 1000000), -1); /* not started */
    assert_int_equal(yb_uring_start(r), 0);
    assert_int_equal(yb_uring_alarm(r, 0), 0);
    assert_int_equal(yb_uring_alarm_fired(r), 0);

    uint64_t at = uv_hrtime() + 3000000;
    assert_int_equal(yb_uring_alarm(r, at), 0);
    assert_int_equal(yb_uring_alarm(r, at), 0); /* the same: nothing queued */
    uint64_t seen = alarm_seen(r, 20);
    assert_true(seen >= at);
    assert_int_equal(yb_uring_alarm_fired(r), 0); /* said once */

    /* moved earlier before it fires: seen before the first time */
    uint64_t far = uv_hrtime() + 5000000000ull;
    assert_int_equal(yb_uring_alarm(r, far), 0);
    yb_uring_wait(r, 0); /* in the kernel now */
    at = uv_hrtime() + 2000000;
    assert_int_equal(yb_uring_alarm(r, at), 0);
    seen = alarm_seen(r, 20);
    assert_true(seen >= at && seen < far);
    /* and only once: no second completion for the first time */
    yb_uring_wait(r, 0);
    assert_int_equal(yb_uring_alarm_fired(r), 0);

    /* a time already past fires at once */
    assert_int_equal(yb_uring_alarm(r, uv_hrtime() - 1000), 0);
    assert_true(alarm_seen(r, 20) != 0);
    yb_uring_free(r);
    uv_loop_close(&loop);
}

/* yb_uring_on_due: the hook runs between two completions once the
 * alarm's time has passed (before the rest of the burst is handed over),
 * once when the hook moves the alarm on, and never without a hook. */
static char due_log[16];
static size_t due_n;
static yb_uring *due_ring;

static void due_op_done(yb_uring_op *op, int res)
{
    (void)op;
    assert_true(res > 0);
    if (due_n + 1 < sizeof due_log)
        due_log[due_n++] = 'r';
}

static void due_hook(void *ud)
{
    assert_ptr_equal(ud, &due_log);
    if (due_n + 1 < sizeof due_log)
        due_log[due_n++] = 'D';
    /* as the worker does: what was due went out; the next time is later */
    assert_int_equal(yb_uring_alarm(due_ring, uv_hrtime() + 5000000000ull), 0);
}

/* Queues a receive of each of 3 socket pairs (data already there), then
 * an alarm whose time has passed, and reaps: the receives complete as
 * they are handed over, before the alarm's timeout. */
static void due_burst(yb_uring *r, int hook)
{
    int sv[3][2];
    yb_uring_op ops[3];
    char bufs[3][8];
    memset(ops, 0, sizeof ops);
    memset(due_log, 0, sizeof due_log);
    due_n = 0;
    yb_uring_on_due(r, hook ? due_hook : NULL, &due_log);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]), 0);
        assert_int_equal(write(sv[i][1], "x", 1), 1);
        ops[i].done = due_op_done;
        assert_int_equal(yb_uring_recv(r, &ops[i], sv[i][0], bufs[i], sizeof bufs[i]), 0);
    }
    assert_int_equal(yb_uring_alarm(r, uv_hrtime() - 1000), 0);
    for (int i = 0; i < 10 && due_n < 3 + (size_t)hook; i++)
        yb_uring_wait(r, 100);
    for (int i = 0; i < 3; i++) {
        close(sv[i][0]);
        close(sv[i][1]);
    }
}

static void test_ring_on_due(void **state)
{
    (void)state;
    uv_loop_t loop;
    char err[256];
    assert_int_equal(uv_loop_init(&loop), 0);
    yb_uring *r = yb_uring_new(&loop, err, sizeof err);
    if (!r) {
        uv_loop_close(&loop);
        skip();
    }
    assert_int_equal(yb_uring_start(r), 0);
    due_ring = r;
    /* the alarm's time had passed when the first receive was handed
     * over: the hook comes after it, once (it moved the alarm on) */
    due_burst(r, 1);
    assert_string_equal(due_log, "rDrr");
    (void)alarm_seen(r, 2); /* the moved alarm's first time's completion */
    /* no hook: the three, then the alarm as before */
    yb_uring_alarm(r, uv_hrtime() + 5000000000ull);
    due_burst(r, 0);
    assert_string_equal(due_log, "rrr");
    yb_uring_free(r);
    uv_loop_close(&loop);
}

static void test_mtls_without_cert_fails(void **state)
{
    fx_t *f = fx_new(SRV_ECHO, 1);
    yb_tls_client_opts co = { .cacert = srv_cert };

    (void)state;
    f->stls = server_ctx(NULL, cli_cert, 1);
    f->ctls = client_ctx(&co);
    f->sni = "localhost";
    fx_run(f, CLI_WAIT);
    /* TLS 1.3 clients finish before the server judges their certificate,
     * so the failure shows either at on_ready or at on_close. */
    assert_true(f->ready == YB_ERR_TLS || f->closed == YB_ERR_TLS);
    assert_int_equal(f->srv_ready, YB_ERR_TLS);
    assert_non_null(strstr(f->srv_err, "certificate"));
    fx_free(f);
}

static void test_mtls_with_cert(void **state)
{
    fx_t *f = fx_new(SRV_ECHO, 1);
    yb_tls_client_opts co = { .cacert = srv_cert, .cert = cli_cert, .key = cli_key };

    (void)state;
    f->stls = server_ctx("h2", cli_cert, 1);
    f->ctls = client_ctx(&co);
    f->sni = "localhost";
    fx_payload(f, 3000);
    fx_run(f, CLI_ECHO);
    assert_echo_ok(f);
    assert_int_equal(f->srv_ready, YB_ERR_NONE);
    fx_free(f);
}

/* ---- EC keys decoded directly (tls_eckey.c) ------------------------------ */

static X509 *read_cert(const char *path)
{
    FILE *f = fopen(path, "r");
    X509 *x = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;

    if (f)
        fclose(f);
    assert_non_null(x);
    return x;
}

static EVP_PKEY *read_key(const char *path)
{
    FILE *f = fopen(path, "r");
    EVP_PKEY *k = f ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : NULL;

    if (f)
        fclose(f);
    assert_non_null(k);
    return k;
}

/* Once a client context exists, a certificate's EC key is decoded by
 * OpenSSL's built-in EC method (no provider behind the key), and that key
 * still verifies what its private key signed and nothing else. */
static void test_ec_keys_direct(void **state)
{
    yb_tls_client_opts co = { .insecure = 1 };
    yb_tls_ctx *c;
    X509 *srv, *cli;
    EVP_PKEY *priv, *pub;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned char sig[128];
    size_t siglen = sizeof sig;
    static const unsigned char msg[] = "a CertificateVerify's content";

    (void)state;
    c = client_ctx(&co);
    srv = read_cert(srv_cert);
    cli = read_cert(cli_cert);
    pub = X509_get0_pubkey(srv);
    assert_non_null(pub);
    assert_null(EVP_PKEY_get0_provider(pub));   /* decoded directly */
    priv = read_key(srv_key);
    assert_non_null(md);
    assert_int_equal(EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, priv), 1);
    assert_int_equal(EVP_DigestSign(md, sig, &siglen, msg, sizeof msg), 1);
    assert_int_equal(EVP_MD_CTX_reset(md), 1);
    assert_int_equal(EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, pub), 1);
    assert_int_equal(EVP_DigestVerify(md, sig, siglen, msg, sizeof msg), 1);
    sig[siglen / 2] ^= 1;
    assert_int_equal(EVP_MD_CTX_reset(md), 1);
    assert_int_equal(EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, pub), 1);
    assert_int_not_equal(EVP_DigestVerify(md, sig, siglen, msg, sizeof msg), 1);
    sig[siglen / 2] ^= 1;
    assert_int_equal(EVP_MD_CTX_reset(md), 1);
    assert_int_equal(EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, X509_get0_pubkey(cli)), 1);
    assert_int_not_equal(EVP_DigestVerify(md, sig, siglen, msg, sizeof msg), 1);
    /* certificate signatures: its own (self-signed), not another key's */
    assert_int_equal(X509_verify(srv, pub), 1);
    assert_int_not_equal(X509_verify(srv, X509_get0_pubkey(cli)), 1);
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(priv);
    X509_free(srv);
    X509_free(cli);
    yb_tls_ctx_free(c);
}

/* A chain: the server presents a leaf issued by the trusted CA, whose key
 * (decoded directly) checks the leaf's signature: accepted when the CA
 * signed it, refused when another key did (same issuer name). */
static void test_tls_chain_signature(void **state)
{
    yb_tls_client_opts co = { .cacert = srv_cert };
    fx_t *f;

    (void)state;
    f = fx_new(SRV_ECHO, 1);
    f->stls = server_ctx_with(leaf_cert, leaf_key);
    f->ctls = client_ctx(&co);
    f->sni = "localhost";
    fx_payload(f, 100);
    fx_run(f, CLI_ECHO);
    assert_echo_ok(f);
    fx_free(f);

    f = fx_new(SRV_ECHO, 1);
    f->stls = server_ctx_with(forged_cert, forged_key);
    f->ctls = client_ctx(&co);
    f->sni = "localhost";
    fx_payload(f, 100);
    fx_run(f, CLI_ECHO);
    assert_int_equal(f->ready, YB_ERR_TLS);
    assert_string_equal(f->err, "tls: certificate verify failed: certificate signature failure");
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_version),
        cmocka_unit_test(test_ctx_errors),
        cmocka_unit_test(test_plain_echo_1mib),
        cmocka_unit_test(test_plain_1mib_queue_drain),
        cmocka_unit_test(test_tls_1mib_queue_drain),
        cmocka_unit_test(test_plain_small_write_direct),
        cmocka_unit_test(test_tls_small_write_direct),
        cmocka_unit_test(test_tls_record_writes_fill_queue),
        cmocka_unit_test(test_tls_records_one_read),
        cmocka_unit_test(test_close_in_ready),
        cmocka_unit_test(test_tls_verify_ok_alpn),
        cmocka_unit_test(test_tls_verify_ip),
        cmocka_unit_test(test_tls_verify_fail),
        cmocka_unit_test(test_tls_hostname_mismatch),
        cmocka_unit_test(test_tls_insecure),
        cmocka_unit_test(test_tls12_resumption),
        cmocka_unit_test(test_tls13_resumption),
        cmocka_unit_test(test_tls_no_tickets_no_resumption),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_connect_timeout),
        cmocka_unit_test(test_peer_reset),
        cmocka_unit_test(test_ring_small_echo),
        cmocka_unit_test(test_ring_echo_1mib),
        cmocka_unit_test(test_ring_paused_from_start),
        cmocka_unit_test(test_ring_paused_with_receive_out),
        cmocka_unit_test(test_ring_close_with_receive_out),
        cmocka_unit_test(test_ring_close_in_ready),
        cmocka_unit_test(test_ring_peer_reset),
        cmocka_unit_test(test_ring_peer_eof),
        cmocka_unit_test(test_ring_linked_send_fails),
        cmocka_unit_test(test_ring_not_for_tls),
        cmocka_unit_test(test_ring_alarm),
        cmocka_unit_test(test_ring_on_due),
        cmocka_unit_test(test_mtls_without_cert_fails),
        cmocka_unit_test(test_mtls_with_cert),
        cmocka_unit_test(test_ec_keys_direct),
        cmocka_unit_test(test_tls_chain_signature),
    };

    /* as yangblast does: OpenSSL's blocks through the allocation cache */
    if (yb_tls_mem_init() != 0)
        return 1;
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
