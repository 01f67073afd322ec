/* `yangblast serve`: listeners, TLS set-up (including an in-memory
 * self-signed certificate), connection registry with --max-sessions and
 * --idle-timeout, signals, statistics. */
#include "config.h"
#include "serve/serve_priv.h"
#include "util/outfile.h"
#include "util/util.h"

#include <errno.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void yb_serve_defaults(yb_serve_opts *o)
{
    memset(o, 0, sizeof *o);
    o->restconf = "127.0.0.1:8443";
    o->gnmi = "127.0.0.1:8080";
    o->service.dist = YB_DIST_FIXED;
    o->seed = 1;
    o->max_body = 16u << 20;
    o->out = stdout;
}

/* ---- registry / counters -------------------------------------------------------- */

void yb_server_conn_add(yb_server *s, yb_sconn *c)
{
    c->prev = NULL;
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    s->nconns++;
    s->st.conns[c->proto]++;
}

void yb_server_conn_remove(yb_server *s, yb_sconn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else if (s->conns == c)
        s->conns = c->next;
    else
        return;
    if (c->next)
        c->next->prev = c->prev;
    s->nconns--;
}

void yb_server_count_http(yb_server *s, int status)
{
    if (status >= 0 && status < 600)
        s->st.http_status[status]++;
}

void yb_server_count_grpc(yb_server *s, int code)
{
    if (code >= 0 && code <= 16)
        s->st.grpc_status[code]++;
}

/* ---- addresses -------------------------------------------------------------------- */

/* "ADDR:PORT", ":PORT" (loopback), "[v6]:PORT".  Returns 0 or -1. */
static int parse_addr(const char *s, struct sockaddr_storage *ss)
{
    char host[64];
    const char *port;
    if (s[0] == '[') {
        const char *e = strchr(s, ']');
        if (!e || e[1] != ':' || (size_t)(e - s - 1) >= sizeof host)
            return -1;
        memcpy(host, s + 1, (size_t)(e - s - 1));
        host[e - s - 1] = 0;
        port = e + 2;
    } else {
        const char *c = strrchr(s, ':');
        if (!c || (size_t)(c - s) >= sizeof host || memchr(s, ':', (size_t)(c - s)))
            return -1;
        memcpy(host, s, (size_t)(c - s));
        host[c - s] = 0;
        if (!host[0])
            memcpy(host, "127.0.0.1", 10);
        port = c + 1;
    }
    uint64_t p;
    if (yb_parse_u64(port, 0, 65535, &p) < 0)
        return -1;
    if (strchr(host, ':'))
        return uv_ip6_addr(host, (int)p, (struct sockaddr_in6 *)ss) ? -1 : 0;
    return uv_ip4_addr(host, (int)p, (struct sockaddr_in *)ss) ? -1 : 0;
}

/* "ip:port" of a bound handle, ready for a URL ([v6]:port). */
static int bound_name(uv_tcp_t *h, char *buf, size_t cap)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    char ip[64];
    if (uv_tcp_getsockname(h, (struct sockaddr *)&ss, &len) < 0)
        return -1;
    if (ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)&ss;
        uv_ip6_name(a, ip, sizeof ip);
        snprintf(buf, cap, "[%s]:%u", ip, (unsigned)ntohs(a->sin6_port));
    } else {
        const struct sockaddr_in *a = (const void *)&ss;
        uv_ip4_name(a, ip, sizeof ip);
        snprintf(buf, cap, "%s:%u", ip, (unsigned)ntohs(a->sin_port));
    }
    return 0;
}

/* ---- self-signed certificate ---------------------------------------------------- */

/* Writes data to path through yb_outfile (a regular file by temp +
 * rename, with mode; a device or pipe in place; "-" to stdout).  Returns 0
 * or -errno. */
static int write_file_atomic(const char *path, const void *data, size_t len, int mode)
{
    yb_outfile o;
    char err[256];
    if (yb_outfile_open(&o, path, 0, err, sizeof err) < 0)
        return errno ? -errno : -EIO;
    if (o.tmp && fchmod(fileno(o.f), (mode_t)mode) < 0) {
        int e = errno;
        yb_outfile_abort(&o);
        return -e;
    }
    if (fwrite(data, 1, len, o.f) != len) {
        int e = errno ? errno : EIO;
        yb_outfile_abort(&o);
        return -e;
    }
    return yb_outfile_commit(&o, err, sizeof err) < 0 ? (errno ? -errno : -EIO) : 0;
}

/* Generates an EC P-256 key and a one-year certificate for localhost,
 * 127.0.0.1 and ::1, as PEM text (malloc'd, caller frees).  Returns 0 or
 * -ENOMEM. */
static int make_self_signed(char **cert_pem, char **key_pem)
{
    int rc = -ENOMEM;
    EVP_PKEY *pk = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    BIO *bc = BIO_new(BIO_s_mem()), *bk = BIO_new(BIO_s_mem());
    X509_EXTENSION *ext = NULL;
    X509V3_CTX v3;
    *cert_pem = *key_pem = NULL;
    if (!pk || !x || !bc || !bk)
        goto out;
    X509_set_version(x, 2);
    uint64_t serial = uv_hrtime();
    ASN1_INTEGER_set_uint64(X509_get_serialNumber(x), serial);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 365L * 24 * 3600);
    X509_set_pubkey(x, pk);
    X509_NAME *nm = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(nm, "CN", MBSTRING_ASC, (const unsigned char *)"localhost", -1,
                               -1, 0);
    X509_NAME_add_entry_by_txt(nm, "O", MBSTRING_ASC,
                               (const unsigned char *)"yangblast serve", -1, -1, 0);
    X509_set_issuer_name(x, nm);
    X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
    static const char *const EXT[][2] = {
        {"subjectAltName", "DNS:localhost,IP:127.0.0.1,IP:::1"},
        {"basicConstraints", "critical,CA:TRUE"},
        {"keyUsage", "critical,digitalSignature,keyCertSign"},
        {"extendedKeyUsage", "serverAuth"},
    };
    for (size_t i = 0; i < sizeof EXT / sizeof EXT[0]; i++) {
        ext = X509V3_EXT_conf(NULL, &v3, EXT[i][0], EXT[i][1]);
        if (!ext || !X509_add_ext(x, ext, -1))
            goto out;
        X509_EXTENSION_free(ext);
        ext = NULL;
    }
    if (!X509_sign(x, pk, EVP_sha256()))
        goto out;
    if (!PEM_write_bio_X509(bc, x) || !PEM_write_bio_PrivateKey(bk, pk, NULL, NULL, 0, NULL, NULL))
        goto out;
    char *p;
    long n = BIO_get_mem_data(bc, &p);
    if (n <= 0 || !(*cert_pem = malloc((size_t)n + 1)))
        goto out;
    memcpy(*cert_pem, p, (size_t)n);
    (*cert_pem)[n] = 0;
    n = BIO_get_mem_data(bk, &p);
    if (n <= 0 || !(*key_pem = malloc((size_t)n + 1)))
        goto out;
    memcpy(*key_pem, p, (size_t)n);
    (*key_pem)[n] = 0;
    rc = 0;
out:
    if (rc) {
        free(*cert_pem);
        free(*key_pem);
        *cert_pem = *key_pem = NULL;
    }
    X509_EXTENSION_free(ext);
    BIO_free(bc);
    BIO_free(bk);
    X509_free(x);
    EVP_PKEY_free(pk);
    return rc;
}

/* The TLS contexts of both endpoints.  yb_tls_server_ctx_new reads PEM
 * files, so a generated certificate passes through a private temporary
 * directory that is removed as soon as the contexts hold the key. */
static int make_tls(const yb_serve_opts *o, yb_tls_ctx **rc_tls, yb_tls_ctx **gn_tls,
                    char *err, size_t errlen)
{
    char dir[] = "/tmp/yb-serve.XXXXXX", cpath[64], kpath[64];
    char *cert = NULL, *key = NULL;
    int rc = -EINVAL, have_dir = 0;
    yb_tls_server_opts so = {0};
    *rc_tls = *gn_tls = NULL;
    if (o->self_signed) {
        if (make_self_signed(&cert, &key) < 0) {
            snprintf(err, errlen, "cannot generate a self-signed certificate");
            goto out;
        }
        if (!mkdtemp(dir)) {
            snprintf(err, errlen, "cannot create a temporary directory: %s", strerror(errno));
            goto out;
        }
        have_dir = 1;
        snprintf(cpath, sizeof cpath, "%s/cert.pem", dir);
        snprintf(kpath, sizeof kpath, "%s/key.pem", dir);
        if (write_file_atomic(cpath, cert, strlen(cert), 0600) < 0 ||
            write_file_atomic(kpath, key, strlen(key), 0600) < 0) {
            snprintf(err, errlen, "cannot write the temporary certificate");
            goto out;
        }
        if (o->write_cert) {
            int w = write_file_atomic(o->write_cert, cert, strlen(cert), 0644);
            if (w < 0) {
                snprintf(err, errlen, "--write-cert %s: %s", o->write_cert, strerror(-w));
                goto out;
            }
        }
        so.cert = cpath;
        so.key = kpath;
    } else {
        so.cert = o->tls_cert;
        so.key = o->tls_key;
    }
    so.tickets = !o->no_resumption; /* switches resume sessions unless told not to */
    so.alpn = "http/1.1";
    if (!(*rc_tls = yb_tls_server_ctx_new(&so, err, errlen)))
        goto out;
    so.alpn = "h2";
    if (!(*gn_tls = yb_tls_server_ctx_new(&so, err, errlen)))
        goto out;
    rc = 0;
out:
    if (have_dir) {
        unlink(cpath);
        unlink(kpath);
        rmdir(dir);
    }
    if (key) {
        OPENSSL_cleanse(key, strlen(key));
        free(key);
    }
    free(cert);
    if (rc) {
        yb_tls_ctx_free(*rc_tls);
        yb_tls_ctx_free(*gn_tls);
        *rc_tls = *gn_tls = NULL;
    }
    return rc;
}

/* ---- run ---------------------------------------------------------------------------- */

typedef struct {
    yb_server s;
    uv_loop_t loop;
    uv_tcp_t lis[2];
    int lis_on[2];
    yb_tls_ctx *tls[2];
    uv_signal_t sig[2];
    uv_timer_t sweep;
    int sweep_on;
} runner;

static void on_refused_closed(uv_handle_t *h) { free(h); }

static void on_connection(uv_stream_t *l, int status)
{
    runner *r = l->data;
    yb_server *s = &r->s;
    int proto = l == (uv_stream_t *)&r->lis[YB_SP_GNMI] ? YB_SP_GNMI : YB_SP_RESTCONF;
    if (status < 0 || s->stopping)
        return;
    if (s->o->max_sessions && s->nconns >= s->o->max_sessions) {
        /* Refuse: accept and close at once (the peer sees EOF). */
        uv_tcp_t *t = malloc(sizeof *t);
        if (!t || uv_tcp_init(s->loop, t) < 0) {
            free(t);
            return;
        }
        (void)uv_accept(l, (uv_stream_t *)t);
        s->st.refused++;
        uv_close((uv_handle_t *)t, on_refused_closed);
        return;
    }
    if (proto == YB_SP_GNMI)
        (void)yb_gnmi_accept(s, l, r->tls[1]);
    else
        (void)yb_restconf_accept(s, l, r->tls[0]);
}

static void close_conn(yb_sconn *c)
{
    if (c->proto == YB_SP_GNMI)
        yb_gnmi_shutdown_conn(c);
    else
        yb_transport_close(c->t);
}

static void on_sweep(uv_timer_t *t)
{
    runner *r = t->data;
    yb_server *s = &r->s;
    uint64_t now = uv_hrtime(), idle = s->o->idle_timeout_ns;
    yb_sconn *c = s->conns;
    while (c) {
        yb_sconn *next = c->next;
        if (c->inflight == 0 && now - c->last_active >= idle) {
            s->st.idle_closed++;
            c->last_active = UINT64_MAX / 2;   /* count once; close is async */
            close_conn(c);
        }
        c = next;
    }
}

static void stop(runner *r)
{
    yb_server *s = &r->s;
    if (s->stopping)
        return;
    s->stopping = 1;
    for (int i = 0; i < 2; i++) {
        if (r->lis_on[i])
            uv_close((uv_handle_t *)&r->lis[i], NULL);
        r->lis_on[i] = 0;
        uv_close((uv_handle_t *)&r->sig[i], NULL);
    }
    if (r->sweep_on)
        uv_close((uv_handle_t *)&r->sweep, NULL);
    r->sweep_on = 0;
    for (yb_sconn *c = s->conns, *n; c; c = n) {
        n = c->next;
        close_conn(c);
    }
    yb_sched_cleanup(&s->sched);
}

static void on_signal(uv_signal_t *h, int signum)
{
    (void)signum;
    stop(h->data);
}

static const char *const METHOD_NAMES[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "other"};
static const char *const RPC_NAMES[] = {"Capabilities", "Get", "Set", "Subscribe", "other"};
static const char *const GRPC_NAMES[] = {
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED"};

static uint64_t sum(const uint64_t *a, size_t n)
{
    uint64_t t = 0;
    for (size_t i = 0; i < n; i++)
        t += a[i];
    return t;
}

static void print_summary(FILE *f, const yb_serve_stats *st, double secs, size_t qmax,
                          double qmean)
{
    fprintf(f, "serve: stopped after %.3f s\n", secs);
    fprintf(f, "connections: restconf %llu, gnmi %llu, refused %llu, idle-closed %llu\n",
            (unsigned long long)st->conns[0], (unsigned long long)st->conns[1],
            (unsigned long long)st->refused, (unsigned long long)st->idle_closed);
    fprintf(f, "requests: restconf %llu (", (unsigned long long)sum(st->methods, YB_M__COUNT));
    for (int i = 0; i < YB_M__COUNT; i++)
        fprintf(f, "%s%s %llu", i ? " " : "", METHOD_NAMES[i], (unsigned long long)st->methods[i]);
    fprintf(f, "); gnmi %llu (", (unsigned long long)sum(st->rpcs, YB_RPC__COUNT));
    for (int i = 0; i < YB_RPC__COUNT; i++)
        fprintf(f, "%s%s %llu", i ? " " : "", RPC_NAMES[i], (unsigned long long)st->rpcs[i]);
    fprintf(f, ")\nhttp status:");
    for (int i = 0; i < 600; i++)
        if (st->http_status[i])
            fprintf(f, " %d=%llu", i, (unsigned long long)st->http_status[i]);
    fprintf(f, "\ngrpc status:");
    for (int i = 0; i <= 16; i++)
        if (st->grpc_status[i])
            fprintf(f, " %s=%llu", GRPC_NAMES[i], (unsigned long long)st->grpc_status[i]);
    fprintf(f, "\nqueue depth: max %zu mean %.3f\nfaults:", qmax, qmean);
    for (int i = 0; i < YB_FAULT__COUNT; i++)
        fprintf(f, " %s %llu", yb_fault_name((yb_fault_kind)i), (unsigned long long)st->faults[i]);
    fprintf(f, "; streams refused after GOAWAY %llu", (unsigned long long)st->streams_refused);
    fprintf(f, "\nauth failures: %llu, bad input: %llu\n", (unsigned long long)st->auth_failures,
            (unsigned long long)st->bad_input);
    fflush(f);
}

static int write_stats(const char *path, const yb_serve_stats *st, double secs, size_t qmax,
                       double qmean)
{
    json_t *j = json_object(), *rc = json_object(), *gn = json_object(), *hs = json_object(),
           *gs = json_object(), *fl = json_object();
    int ret = -ENOMEM;
    char *text = NULL;
    if (!j || !rc || !gn || !hs || !gs || !fl)
        goto out;
    json_object_set_new(rc, "total", json_integer((json_int_t)sum(st->methods, YB_M__COUNT)));
    for (int i = 0; i < YB_M__COUNT; i++)
        json_object_set_new(rc, METHOD_NAMES[i], json_integer((json_int_t)st->methods[i]));
    json_object_set_new(gn, "total", json_integer((json_int_t)sum(st->rpcs, YB_RPC__COUNT)));
    for (int i = 0; i < YB_RPC__COUNT; i++)
        json_object_set_new(gn, RPC_NAMES[i], json_integer((json_int_t)st->rpcs[i]));
    for (int i = 0; i < 600; i++)
        if (st->http_status[i]) {
            char k[8];
            snprintf(k, sizeof k, "%d", i);
            json_object_set_new(hs, k, json_integer((json_int_t)st->http_status[i]));
        }
    for (int i = 0; i <= 16; i++)
        if (st->grpc_status[i])
            json_object_set_new(gs, GRPC_NAMES[i], json_integer((json_int_t)st->grpc_status[i]));
    for (int i = 0; i < YB_FAULT__COUNT; i++)
        json_object_set_new(fl, yb_fault_name((yb_fault_kind)i),
                            json_integer((json_int_t)st->faults[i]));
    json_object_set_new(j, "duration_s", json_real(secs));
    json_object_set_new(j, "connections",
                        json_pack("{s:I,s:I,s:I,s:I}", "restconf", (json_int_t)st->conns[0],
                                  "gnmi", (json_int_t)st->conns[1], "refused",
                                  (json_int_t)st->refused, "idle_closed",
                                  (json_int_t)st->idle_closed));
    json_object_set_new(j, "requests", json_pack("{s:O,s:O}", "restconf", rc, "gnmi", gn));
    json_object_set_new(j, "http_status", json_incref(hs));
    json_object_set_new(j, "grpc_status", json_incref(gs));
    json_object_set_new(j, "queue_depth", json_pack("{s:I,s:f}", "max", (json_int_t)qmax,
                                                    "mean", qmean));
    json_object_set_new(j, "faults", json_incref(fl));
    json_object_set_new(j, "streams_refused", json_integer((json_int_t)st->streams_refused));
    json_object_set_new(j, "auth_failures", json_integer((json_int_t)st->auth_failures));
    json_object_set_new(j, "bad_input", json_integer((json_int_t)st->bad_input));
    json_object_set_new(j, "bytes_in", json_pack("{s:I,s:I}", "restconf",
                                                 (json_int_t)st->bytes_in[0], "gnmi",
                                                 (json_int_t)st->bytes_in[1]));
    json_object_set_new(j, "bytes_out", json_pack("{s:I,s:I}", "restconf",
                                                  (json_int_t)st->bytes_out[0], "gnmi",
                                                  (json_int_t)st->bytes_out[1]));
    text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
    if (!text)
        goto out;
    size_t n = strlen(text);
    text[n] = '\n';
    ret = write_file_atomic(path, text, n + 1, 0644);
    text[n] = 0;
out:
    free(text);
    json_decref(j);
    json_decref(rc);
    json_decref(gn);
    json_decref(hs);
    json_decref(gs);
    json_decref(fl);
    return ret;
}

static void walk_close(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

int yb_serve_run(const yb_serve_opts *o, char *err, size_t errlen)
{
    runner *r = calloc(1, sizeof *r);
    yb_server *s;
    const char *addr[2] = {o->restconf, o->gnmi};
    struct sockaddr_storage ss[2];
    int rc = -EINVAL, loop_ok = 0, sched_ok = 0;
    char names[2][80];

    if (!r) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    s = &r->s;
    s->o = o;
    for (int i = 0; i < YB_SERVE_MAX_FAULTS && (size_t)i < o->n_faults; i++)
        if (o->faults[i].kind == YB_FAULT_GOAWAY_AFTER)
            s->goaway_after = (unsigned)o->faults[i].n;
    for (int i = 0; i < 2; i++) {
        r->lis_on[i] = strcmp(addr[i], "off") != 0;
        if (r->lis_on[i] && parse_addr(addr[i], &ss[i]) < 0) {
            snprintf(err, errlen, "--%s: bad address '%s' (want ADDR:PORT, :PORT or off)",
                     i ? "gnmi" : "restconf", addr[i]);
            r->lis_on[i] = 0;
            goto out;
        }
    }
    if (!r->lis_on[0] && !r->lis_on[1]) {
        snprintf(err, errlen, "both --restconf and --gnmi are off: nothing to serve");
        goto out;
    }
    if ((o->tls_cert || o->self_signed) && make_tls(o, &r->tls[0], &r->tls[1], err, errlen) < 0)
        goto out;
    if (o->auth_user) {
        size_t ul = strlen(o->auth_user), pl = strlen(o->auth_password ? o->auth_password : "");
        char *up = malloc(ul + pl + 2);
        char *b64 = NULL;
        if (up) {
            memcpy(up, o->auth_user, ul);
            up[ul] = ':';
            memcpy(up + ul + 1, o->auth_password ? o->auth_password : "", pl + 1);
            b64 = yb_base64_encode(up, ul + 1 + pl);
            OPENSSL_cleanse(up, ul + pl + 1);
            free(up);
        }
        if (!b64 || !(s->basic_auth = malloc(strlen(b64) + 7))) {
            free(b64);
            snprintf(err, errlen, "out of memory");
            rc = -ENOMEM;
            goto out;
        }
        memcpy(s->basic_auth, "Basic ", 6);
        memcpy(s->basic_auth + 6, b64, strlen(b64) + 1);
        free(b64);
    }
    if (!(s->store = yb_store_new())) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
        goto out;
    }
    if (uv_loop_init(&r->loop) < 0) {
        snprintf(err, errlen, "cannot create the event loop");
        goto out;
    }
    loop_ok = 1;
    s->loop = &r->loop;
    yb_rng_seed(&s->rng, o->seed);
    if (yb_sched_init(&s->sched, s->loop, o->workers) < 0) {
        snprintf(err, errlen, "cannot create a timer");
        goto out;
    }
    sched_ok = 1;
    for (int i = 0; i < 2; i++) {
        if (!r->lis_on[i])
            continue;
        int e = uv_tcp_init(s->loop, &r->lis[i]);
        r->lis[i].data = r;
        if (e == 0)
            e = uv_tcp_bind(&r->lis[i], (const struct sockaddr *)&ss[i], 0);
        if (e == 0)
            e = uv_listen((uv_stream_t *)&r->lis[i], 511, on_connection);
        if (e == 0)
            e = bound_name(&r->lis[i], names[i], sizeof names[i]);
        if (e < 0) {
            snprintf(err, errlen, "--%s %s: %s", i ? "gnmi" : "restconf", addr[i],
                     uv_strerror(e));
            goto out;
        }
    }
    for (int i = 0; i < 2; i++) {
        uv_signal_init(s->loop, &r->sig[i]);
        r->sig[i].data = r;
        uv_signal_start(&r->sig[i], on_signal, i ? SIGINT : SIGTERM);
    }
    if (o->idle_timeout_ns) {
        uint64_t period = o->idle_timeout_ns / 4000000;
        if (period < 10)
            period = 10;
        if (period > 1000)
            period = 1000;
        uv_timer_init(s->loop, &r->sweep);
        r->sweep.data = r;
        uv_timer_start(&r->sweep, on_sweep, period, period);
        r->sweep_on = 1;
    }
    signal(SIGPIPE, SIG_IGN);
    s->t_start = uv_hrtime();
    fprintf(o->out, "serve: restconf ");
    if (r->lis_on[0])
        fprintf(o->out, "%s://%s", r->tls[0] ? "https" : "http", names[0]);
    else
        fprintf(o->out, "off");
    fprintf(o->out, " gnmi ");
    if (r->lis_on[1])
        fprintf(o->out, "%s://%s\n", r->tls[1] ? "grpcs" : "grpc", names[1]);
    else
        fprintf(o->out, "off\n");
    fflush(o->out);

    rc = uv_run(s->loop, UV_RUN_DEFAULT) < 0 ? -EIO : 0;
    sched_ok = 0;
    loop_ok = 1;
    {
        size_t qmax;
        double qmean, secs = (double)(uv_hrtime() - s->t_start) / 1e9;
        yb_sched_queue_stats(&s->sched, &qmax, &qmean);
        print_summary(o->out, &s->st, secs, qmax, qmean);
        if (o->stats_path) {
            int w = write_stats(o->stats_path, &s->st, secs, qmax, qmean);
            if (w < 0) {
                snprintf(err, errlen, "--stats %s: %s", o->stats_path, strerror(-w));
                rc = -EIO;
            }
        }
    }
out:
    if (loop_ok) {
        if (sched_ok)
            yb_sched_cleanup(&s->sched);
        /* Close whatever set-up left open, then let the closes finish. */
        uv_walk(&r->loop, walk_close, NULL);
        uv_run(&r->loop, UV_RUN_DEFAULT);
        uv_loop_close(&r->loop);
    }
    yb_tls_ctx_free(r->tls[0]);
    yb_tls_ctx_free(r->tls[1]);
    yb_store_free(s->store);
    free(s->basic_auth);
    free(r);
    return rc;
}
