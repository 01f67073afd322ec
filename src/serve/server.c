/* `yangblast serve`: listeners, TLS set-up (including an in-memory
 * self-signed certificate), connection registry with --max-sessions and
 * --idle-timeout, signals, and the fleet of --devices: one listener pair,
 * datastore and queue per device on one loop. */
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
#include <sys/resource.h>
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
    o->devices = 1;
    /* epoll, as a switch's own server does: a ring changes the rhythm of
     * the answers a client sees (bench/README, "The sink on io_uring") */
    o->io = YB_IO_EPOLL;
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
int yb_serve_write_file(const char *path, const void *data, size_t len, int mode)
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
        if (yb_serve_write_file(cpath, cert, strlen(cert), 0600) < 0 ||
            yb_serve_write_file(kpath, key, strlen(key), 0600) < 0) {
            snprintf(err, errlen, "cannot write the temporary certificate");
            goto out;
        }
        if (o->write_cert) {
            int w = yb_serve_write_file(o->write_cert, cert, strlen(cert), 0644);
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

typedef struct runner runner;

/* One emulated device: its server state (datastore, workers and queue,
 * fault sequence, statistics) and its own listeners. */
typedef struct {
    yb_server s;
    runner *r;
    uv_tcp_t lis[2];
    int lis_on[2];          /* listener initialised and not yet closed */
    int sched_on;           /* s.sched initialised and not yet cleaned up */
    char url[2][96];        /* "https://127.0.0.1:8443", or "off" */
} device;

/* What the devices share: the loop, the TLS contexts, the credentials,
 * the signals and the idle sweep. */
struct runner {
    const yb_serve_opts *o;
    uv_loop_t loop;
    yb_uring *ring;                   /* plain connections' I/O, or NULL (--io epoll) */
    device *dev;
    unsigned ndev;
    int enabled[2];                   /* the protocol is not "off" */
    struct sockaddr_storage base[2];  /* device 0's listener addresses */
    uint32_t ip0;                     /* --device-addresses: device 0's IPv4, host order */
    yb_tls_ctx *tls[2];
    char *basic_auth;
    uv_signal_t sig[2];
    int sig_on;
    uv_timer_t sweep;
    int sweep_on, stopping;
    yb_sys *sys;
};

static void on_refused_closed(uv_handle_t *h) { free(h); }

static void on_connection(uv_stream_t *l, int status)
{
    device *d = l->data;
    yb_server *s = &d->s;
    int proto = l == (uv_stream_t *)&d->lis[YB_SP_GNMI] ? YB_SP_GNMI : YB_SP_RESTCONF;
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
        (void)yb_gnmi_accept(s, l, d->r->tls[YB_SP_GNMI]);
    else
        (void)yb_restconf_accept(s, l, d->r->tls[YB_SP_RESTCONF]);
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
    uint64_t now = uv_hrtime(), idle = r->o->idle_timeout_ns;
    for (unsigned k = 0; k < r->ndev; k++) {
        yb_server *s = &r->dev[k].s;
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
}

static void stop(runner *r)
{
    if (r->stopping)
        return;
    r->stopping = 1;
    for (unsigned k = 0; k < r->ndev; k++) {
        device *d = &r->dev[k];
        d->s.stopping = 1;
        for (int i = 0; i < 2; i++) {
            if (d->lis_on[i])
                uv_close((uv_handle_t *)&d->lis[i], NULL);
            d->lis_on[i] = 0;
        }
        for (yb_sconn *c = d->s.conns, *n; c; c = n) {
            n = c->next;
            close_conn(c);
        }
        if (d->sched_on)
            yb_sched_cleanup(&d->s.sched);
        d->sched_on = 0;
    }
    yb_sys_stop(r->sys);
    for (int i = 0; r->sig_on && i < 2; i++)
        uv_close((uv_handle_t *)&r->sig[i], NULL);
    r->sig_on = 0;
    if (r->sweep_on)
        uv_close((uv_handle_t *)&r->sweep, NULL);
    r->sweep_on = 0;
}

static void on_signal(uv_signal_t *h, int signum)
{
    (void)signum;
    stop(h->data);
}

static const char *const OPT_NAME[2] = {"--restconf", "--gnmi"};

static uint16_t port_of(const struct sockaddr_storage *ss)
{
    return ntohs(ss->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)ss)->sin6_port
                                           : ((const struct sockaddr_in *)ss)->sin_port);
}

static int same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return 0;
    if (a->ss_family == AF_INET6)
        return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
    return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
           ((const struct sockaddr_in *)b)->sin_addr.s_addr;
}

/* Parses the listener addresses and checks that the fleet fits: ports
 * port..port+N-1 within 65535, the two protocols' ranges apart, the
 * --device-addresses range within 127.0.0.0/8.  Returns 0 or -EINVAL
 * with a message. */
static int plan_addresses(runner *r, char *err, size_t errlen)
{
    const yb_serve_opts *o = r->o;
    const char *addr[2] = {o->restconf, o->gnmi};
    unsigned n = r->ndev;
    for (int i = 0; i < 2; i++) {
        r->enabled[i] = strcmp(addr[i], "off") != 0;
        if (r->enabled[i] && yb_parse_listen(addr[i], &r->base[i]) < 0) {
            snprintf(err, errlen, "%s: bad address '%s' (want ADDR:PORT, :PORT or off)",
                     OPT_NAME[i], addr[i]);
            return -EINVAL;
        }
    }
    if (!r->enabled[0] && !r->enabled[1]) {
        snprintf(err, errlen, "both --restconf and --gnmi are off: nothing to serve");
        return -EINVAL;
    }
    if (o->device_addresses) {
        struct sockaddr_in a;
        if (uv_ip4_addr(o->device_addresses, 0, &a) != 0 ||
            (ntohl(a.sin_addr.s_addr) >> 24) != 127) {
            snprintf(err, errlen, "--device-addresses '%s': want an IPv4 address in "
                     "127.0.0.0/8 (e.g. 127.0.1.1)", o->device_addresses);
            return -EINVAL;
        }
        r->ip0 = ntohl(a.sin_addr.s_addr);
        if ((uint64_t)r->ip0 + n - 1 > 0x7ffffffeu) {
            snprintf(err, errlen, "--device-addresses %s: %u devices go past 127.255.255.254",
                     o->device_addresses, n);
            return -EINVAL;
        }
        for (int i = 0; i < 2; i++) {
            const struct sockaddr_in *b = (const struct sockaddr_in *)&r->base[i];
            if (r->enabled[i] && (b->sin_family != AF_INET ||
                                  ntohl(b->sin_addr.s_addr) != 0x7f000001u)) {
                snprintf(err, errlen, "--device-addresses gives every device its own address: "
                         "give %s as :PORT, not '%s'", OPT_NAME[i], addr[i]);
                return -EINVAL;
            }
        }
    }
    for (int i = 0; i < 2; i++) {
        unsigned p = port_of(&r->base[i]);
        if (r->enabled[i] && p && !o->device_addresses && p + (n - 1) > 65535) {
            snprintf(err, errlen, "%s %s: %u devices need ports %u..%u, past 65535", OPT_NAME[i],
                     addr[i], n, p, p + n - 1);
            return -EINVAL;
        }
    }
    unsigned p0 = port_of(&r->base[0]), p1 = port_of(&r->base[1]);
    unsigned span = o->device_addresses ? 1 : n; /* ports each protocol takes on one address */
    if (n > 1 && r->enabled[0] && r->enabled[1] && p0 && p1 &&
        same_host(&r->base[0], &r->base[1]) && (p0 > p1 ? p0 - p1 : p1 - p0) < span) {
        snprintf(err, errlen, "--restconf ports %u..%u and --gnmi ports %u..%u overlap for %u "
                 "devices", p0, p0 + span - 1, p1, p1 + span - 1, n);
        return -EINVAL;
    }
    return 0;
}

/* Device k's listener address for protocol proto: device 0's port + k
 * (port 0 stays "any free port"), or with --device-addresses its own
 * address on the same port. */
static void device_addr(const runner *r, int proto, unsigned k, struct sockaddr_storage *out)
{
    *out = r->base[proto];
    uint16_t p = port_of(out);
    if (r->o->device_addresses) {
        ((struct sockaddr_in *)out)->sin_addr.s_addr = htonl(r->ip0 + k);
    } else if (p) {
        if (out->ss_family == AF_INET6)
            ((struct sockaddr_in6 *)out)->sin6_port = htons((uint16_t)(p + k));
        else
            ((struct sockaddr_in *)out)->sin_port = htons((uint16_t)(p + k));
    }
}

/* Makes room for `listeners` listening sockets and `timers` (one timerfd
 * per device's cost model) plus a reserve and at least as many connections
 * as listeners: raises the soft RLIMIT_NOFILE to the hard limit when it is
 * short.  Returns 0 (a warning on stderr when connections will be scarce),
 * or -EINVAL with a message when not even the listeners and timers fit. */
static int fd_budget(unsigned listeners, unsigned timers, char *err, size_t errlen)
{
    const uint64_t reserve = 64; /* stdio, the loop's own descriptors, signals, files written */
    uint64_t need = (uint64_t)listeners + timers + reserve, want = need + listeners, hard;
    uint64_t cur = yb_nofile_raise(want, &hard);
    if (!cur || cur >= want)
        return 0;
    if (cur < need) {
        snprintf(err, errlen, "%u listeners and %u timers need at least %llu open files, but "
                 "RLIMIT_NOFILE is %llu (hard limit %llu): raise it (ulimit -n) or serve fewer "
                 "devices", listeners, timers, (unsigned long long)need, (unsigned long long)cur,
                 (unsigned long long)hard);
        return -EINVAL;
    }
    fprintf(stderr, "yangblast serve: warning: RLIMIT_NOFILE %llu leaves room for only %llu "
            "connections across %u listeners (ulimit -n raises it)\n",
            (unsigned long long)cur, (unsigned long long)(cur - need), listeners);
    return 0;
}

/* "Basic base64(user:password)" in r->basic_auth.  Returns 0 or -ENOMEM. */
static int make_basic_auth(runner *r)
{
    const yb_serve_opts *o = r->o;
    const char *pw = o->auth_password ? o->auth_password : "";
    size_t ul = strlen(o->auth_user), pl = strlen(pw);
    char *up = malloc(ul + pl + 2), *b64 = NULL;
    if (up) {
        memcpy(up, o->auth_user, ul);
        up[ul] = ':';
        memcpy(up + ul + 1, pw, pl + 1);
        b64 = yb_base64_encode(up, ul + 1 + pl);
        OPENSSL_cleanse(up, ul + pl + 1);
        free(up);
    }
    if (!b64 || !(r->basic_auth = malloc(strlen(b64) + 7))) {
        free(b64);
        return -ENOMEM;
    }
    memcpy(r->basic_auth, "Basic ", 6);
    memcpy(r->basic_auth + 6, b64, strlen(b64) + 1);
    free(b64);
    return 0;
}

/* Sets up device k: datastore, RNG, workers, listeners.  Returns 0, or
 * -ENOMEM / -EINVAL with a message naming the device and address. */
static int device_start(runner *r, unsigned k, char *err, size_t errlen)
{
    const yb_serve_opts *o = r->o;
    device *d = &r->dev[k];
    yb_server *s = &d->s;
    const char *addr[2] = {o->restconf, o->gnmi};
    d->r = r;
    s->o = o;
    s->loop = &r->loop;
    s->ring = r->ring;
    s->basic_auth = r->basic_auth;
    for (size_t i = 0; i < o->n_faults; i++)
        if (o->faults[i].kind == YB_FAULT_GOAWAY_AFTER)
            s->goaway_after = (unsigned)o->faults[i].n;
    if (!(s->store = yb_store_new())) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    /* Device 0 draws exactly what a single server always drew; the others
     * get streams of their own, spread over the state space by an odd
     * constant that is not splitmix's step (that would only shift them). */
    yb_rng_seed(&s->rng, o->seed + (uint64_t)k * 0xd1b54a32d192ed03ull);
    /* its own capacity when --workers lists one per device */
    size_t nw = o->n_device_workers;
    unsigned workers = !nw ? o->workers : o->device_workers[k < nw ? k : nw - 1];
    int trc = yb_sched_init(&s->sched, s->loop, workers);
    if (trc < 0) {
        snprintf(err, errlen, "cannot create a timer: %s", strerror(-trc));
        return -EINVAL;
    }
    d->sched_on = 1;
    s->sys = r->sys;
    s->index = k;
    yb_sys_set_device(r->sys, k, &s->sched, workers);
    for (int i = 0; i < 2; i++) {
        char name[80];
        struct sockaddr_storage ss;
        snprintf(d->url[i], sizeof d->url[i], "off");
        if (!r->enabled[i])
            continue;
        device_addr(r, i, k, &ss);
        int e = uv_tcp_init(s->loop, &d->lis[i]);
        d->lis[i].data = d;
        if (e == 0) {
            d->lis_on[i] = 1;
            e = uv_tcp_bind(&d->lis[i], (const struct sockaddr *)&ss, 0);
        }
        if (e == 0)
            e = uv_listen((uv_stream_t *)&d->lis[i], 511, on_connection);
        if (e == 0)
            e = bound_name(&d->lis[i], name, sizeof name);
        if (e < 0) {
            char want[80] = "";
            if (r->ndev > 1) {
                char ip[64] = "?";
                if (ss.ss_family == AF_INET6)
                    uv_ip6_name((const struct sockaddr_in6 *)&ss, ip, sizeof ip);
                else
                    uv_ip4_name((const struct sockaddr_in *)&ss, ip, sizeof ip);
                snprintf(want, sizeof want, " (device " YB_SERVE_DEVICE_NAME " on %s port %u)",
                         k + 1, ip, (unsigned)port_of(&ss));
            }
            snprintf(err, errlen, "%s %s%s: %s", OPT_NAME[i], addr[i], want, uv_strerror(e));
            return -EINVAL;
        }
        snprintf(d->url[i], sizeof d->url[i], "%s://%s",
                 i == YB_SP_GNMI ? (r->tls[i] ? "grpcs" : "grpc") : (r->tls[i] ? "https" : "http"),
                 name);
    }
    return 0;
}

/* The "serve: ..." lines: one device exactly as it always was; a fleet as
 * one line per device, then a last line saying all are ready. */
static void print_ready(const runner *r)
{
    FILE *f = r->o->out;
    if (r->ndev == 1) {
        fprintf(f, "serve: restconf %s gnmi %s\n", r->dev[0].url[0], r->dev[0].url[1]);
    } else {
        for (unsigned k = 0; k < r->ndev; k++)
            fprintf(f, "serve: " YB_SERVE_DEVICE_NAME " restconf %s gnmi %s\n", k + 1,
                    r->dev[k].url[0], r->dev[k].url[1]);
        fprintf(f, "serve: %u devices ready", r->ndev);
        if (r->o->write_inventory)
            fprintf(f, "; inventory %s", r->o->write_inventory);
        fputc('\n', f);
    }
    fflush(f);
}

/* A yb_serve_device_info per device (malloc'd), or NULL. */
static yb_serve_device_info *device_infos(runner *r)
{
    yb_serve_device_info *info = calloc(r->ndev, sizeof *info);
    for (unsigned k = 0; info && k < r->ndev; k++) {
        device *d = &r->dev[k];
        snprintf(info[k].name, sizeof info[k].name, YB_SERVE_DEVICE_NAME, k + 1);
        info[k].url[0] = d->url[0];
        info[k].url[1] = d->url[1];
        info[k].st = &d->s.st;
        yb_sched_queue_stats(&d->s.sched, &info[k].qmax, &info[k].qmean);
    }
    return info;
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
    yb_serve_device_info *info = NULL;
    int rc = -EINVAL, loop_ok = 0;

    if (!r) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    r->o = o;
    r->ndev = o->devices ? o->devices : 1;
    if (r->ndev > YB_SERVE_MAX_DEVICES) {
        snprintf(err, errlen, "--devices %u: at most %d", r->ndev, YB_SERVE_MAX_DEVICES);
        goto out;
    }
    if (plan_addresses(r, err, errlen) < 0 ||
        fd_budget(r->ndev * (unsigned)(r->enabled[0] + r->enabled[1]), r->ndev, err, errlen) < 0)
        goto out;
    if ((o->tls_cert || o->self_signed) && make_tls(o, &r->tls[0], &r->tls[1], err, errlen) < 0)
        goto out;
    if (o->auth_user && make_basic_auth(r) < 0) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
        goto out;
    }
    if (!(r->dev = calloc(r->ndev, sizeof *r->dev))) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
        goto out;
    }
    if (uv_loop_init(&r->loop) < 0) {
        snprintf(err, errlen, "cannot create the event loop");
        goto out;
    }
    loop_ok = 1;
    /* --io auto: a kernel without io_uring (or one that forbids it) leaves
     * libuv to do all the I/O; this thread is the ring's only user */
    if (o->io != YB_IO_EPOLL) {
        char rerr[128];
        r->ring = yb_uring_new(&r->loop, rerr, sizeof rerr);
        if (r->ring && yb_uring_start(r->ring) < 0) {
            snprintf(rerr, sizeof rerr, "io_uring: cannot enable the ring");
            yb_uring_free(r->ring);
            r->ring = NULL;
        }
        if (!r->ring && o->io == YB_IO_URING) {
            snprintf(err, errlen, "--io uring: %s", rerr);
            goto out;
        }
    }
    if (!(r->sys = yb_sys_new(&r->loop, r->ndev))) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
        goto out;
    }
    for (unsigned k = 0; k < r->ndev; k++)
        if ((rc = device_start(r, k, err, errlen)) < 0)
            goto out;
    rc = -EINVAL;
    if (o->write_inventory) {
        if (!(info = device_infos(r))) {
            snprintf(err, errlen, "out of memory");
            rc = -ENOMEM;
            goto out;
        }
        if (yb_serve_write_inventory(o, info, r->ndev, err, errlen) < 0)
            goto out;
        free(info);
        info = NULL;
    }
    for (int i = 0; i < 2; i++) {
        uv_signal_init(&r->loop, &r->sig[i]);
        r->sig[i].data = r;
        uv_signal_start(&r->sig[i], on_signal, i ? SIGINT : SIGTERM);
    }
    r->sig_on = 1;
    if (o->idle_timeout_ns) {
        uint64_t period = o->idle_timeout_ns / 4000000;
        if (period < 10)
            period = 10;
        if (period > 1000)
            period = 1000;
        uv_timer_init(&r->loop, &r->sweep);
        r->sweep.data = r;
        uv_timer_start(&r->sweep, on_sweep, period, period);
        r->sweep_on = 1;
    }
    signal(SIGPIPE, SIG_IGN);
    uint64_t t_start = uv_hrtime();
    for (unsigned k = 0; k < r->ndev; k++)
        r->dev[k].s.t_start = t_start;
    print_ready(r);

    if (r->ring) {
        yb_uring_run(r->ring);
        rc = 0;
    } else {
        rc = uv_run(&r->loop, UV_RUN_DEFAULT) < 0 ? -EIO : 0;
    }
    double secs = (double)(uv_hrtime() - t_start) / 1e9;
    if (!(info = device_infos(r))) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
        goto out;
    }
    yb_serve_print_summary(o->out, info, r->ndev, secs);
    if (o->stats_path) {
        int w = yb_serve_write_stats(o->stats_path, info, r->ndev, secs);
        if (w < 0) {
            snprintf(err, errlen, "--stats %s: %s", o->stats_path, strerror(-w));
            rc = -EIO;
        }
    }
out:
    free(info);
    if (loop_ok) {
        yb_sys_stop(r->sys);
        for (unsigned k = 0; k < r->ndev; k++)
            if (r->dev[k].sched_on)
                yb_sched_cleanup(&r->dev[k].s.sched);
        /* Close whatever set-up left open, then let the closes finish. */
        uv_walk(&r->loop, walk_close, NULL);
        if (r->ring)
            yb_uring_run(r->ring); /* and the ring's last completions */
        else
            uv_run(&r->loop, UV_RUN_DEFAULT);
        yb_uring_free(r->ring);
        uv_loop_close(&r->loop);
    }
    for (unsigned k = 0; r->dev && k < r->ndev; k++)
        yb_store_free(r->dev[k].s.store);
    yb_sys_free(r->sys);
    yb_tls_ctx_free(r->tls[0]);
    yb_tls_ctx_free(r->tls[1]);
    free(r->basic_auth);
    free(r->dev);
    free(r);
    return rc;
}
