/* RESTCONF front end of `yangblast serve` (RFC 8040 over HTTP/1.1, on the
 * h1 request parser): one request at a time per connection; pipelined
 * bytes wait in a per-connection buffer (reading paused) while the cost
 * model holds the current request.  Answers are batched in a
 * per-connection output buffer and written once per read. */
#include "config.h"
#include "codec/h1.h"
#include "serve/serve_priv.h"

#include <errno.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    yb_sconn base;
    yb_h1_req *req;
    uint8_t *pend;              /* received bytes not yet parsed */
    size_t pend_off, pend_len, pend_cap;
    uint8_t *out;               /* answers not yet written */
    size_t out_len, out_cap;
    yb_job job;
    yb_fault_verdict v;
    int busy;                   /* a complete request awaits its answer */
    int driving;                /* inside drive(): it flushes */
    int close_after;            /* close once the output is written */
    int dead;                   /* transport closing: ignore everything */
    int auth_ok;                /* auth_check's verdict: 1, 0 or -1 */
    int sent_continue;
} rc_conn;

/* ---- output ------------------------------------------------------------------ */

static int out_append(rc_conn *c, const void *p, size_t n)
{
    if (n > c->out_cap - c->out_len) {
        size_t nc = c->out_cap ? c->out_cap : 4096;
        while (nc - c->out_len < n)
            nc *= 2;
        uint8_t *no = realloc(c->out, nc);
        if (!no)
            return -ENOMEM;
        c->out = no;
        c->out_cap = nc;
    }
    memcpy(c->out + c->out_len, p, n);
    c->out_len += n;
    return 0;
}

/* Writes the batch (the transport copies what it cannot send at once, so
 * the buffer is free again on return). */
static void flush(rc_conn *c)
{
    if (c->dead)
        return;
    if (c->out_len) {
        uv_buf_t b = uv_buf_init((char *)c->out, (unsigned)c->out_len);
        c->base.srv->st.bytes_out[YB_SP_RESTCONF] += c->out_len;
        (void)yb_transport_write(c->base.t, &b, 1);
        c->out_len = 0;
    }
    if (c->close_after) {
        c->dead = 1;
        yb_transport_close(c->base.t);
    }
}

/* Queues one answer.  body may be NULL; ctype NULL = no Content-Type. */
static void respond(rc_conn *c, int status, const char *ctype, const yb_h1_header *extra,
                    size_t nextra, const char *body, size_t blen, int head_only)
{
    yb_h1_header h[4];
    size_t n = 0;
    if (ctype && (blen || status == 200))
        h[n++] = (yb_h1_header){"Content-Type", 12, ctype, strlen(ctype)};
    for (size_t i = 0; i < nextra && n < 4; i++)
        h[n++] = extra[i];
    uint8_t *buf;
    size_t len;
    int keep = !c->close_after;
    int rc = yb_h1_serialize_response(status, NULL, h, n,
                                      head_only ? NULL : (const uint8_t *)body, blen, keep,
                                      &buf, &len);
    yb_server_count_http(c->base.srv, status);
    if (rc < 0) {
        c->close_after = 1;
        return;
    }
    if (out_append(c, buf, len) < 0)
        c->close_after = 1;
    free(buf);
}

static const char YANG_JSON[] = "application/yang-data+json";

/* An ietf-restconf:errors answer. */
static void respond_error(rc_conn *c, int status, const char *type, const char *tag,
                          const char *msg, int head_only)
{
    json_t *e = json_pack("{s:{s:[{s:s,s:s,s:s}]}}", "ietf-restconf:errors", "error",
                          "error-type", type, "error-tag", tag, "error-message",
                          msg ? msg : "");
    char *body = e ? json_dumps(e, JSON_COMPACT) : NULL;
    json_decref(e);
    if (!body) {
        respond(c, status, NULL, NULL, 0, NULL, 0, 0);
        return;
    }
    if (status == 401) {
        yb_h1_header wa = {"WWW-Authenticate", 16, "Basic realm=\"yangblast\"", 23};
        respond(c, status, YANG_JSON, &wa, 1, body, strlen(body), head_only);
    } else if (status == 405) {
        static const char ALLOW[] = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS";
        yb_h1_header al = {"Allow", 5, ALLOW, sizeof ALLOW - 1};
        respond(c, status, YANG_JSON, &al, 1, body, strlen(body), head_only);
    } else {
        respond(c, status, YANG_JSON, NULL, 0, body, strlen(body), head_only);
    }
    free(body);
}

/* Maps a store error to an answer. */
static void respond_store_error(rc_conn *c, int rc, int head_only)
{
    const char *why = yb_store_error(c->base.srv->store);
    switch (rc) {
    case -ENOENT: respond_error(c, 404, "protocol", "invalid-value", why, head_only); break;
    case -EEXIST: respond_error(c, 409, "application", "data-exists", why, head_only); break;
    case -E2BIG: respond_error(c, 400, "protocol", "invalid-value", "path too long", head_only); break;
    case -EINVAL: respond_error(c, 400, "protocol", "invalid-value", why, head_only); break;
    default: respond_error(c, 500, "application", "operation-failed", why, head_only); break;
    }
}

/* ---- requests ---------------------------------------------------------------- */

/* The first header named name (lower case) among those of the request
 * head, chunked trailers excluded; *count (may be NULL) gets how many
 * there are.  Returns NULL when none. */
static const yb_h1_header *head_header(const rc_conn *c, const char *name, unsigned *count)
{
    size_t n, nl = strlen(name);
    const yb_h1_header *all = yb_h1_req_headers(c->req, &n), *first = NULL;
    size_t head = yb_h1_req_head_count(c->req);
    unsigned k = 0;
    for (size_t i = 0; i < head && i < n; i++)
        if (all[i].name_len == nl && !strncasecmp(all[i].name, name, nl)) {
            if (!first)
                first = &all[i];
            k++;
        }
    if (count)
        *count = k;
    return first;
}

static int method_index(const char *m)
{
    static const char *const M[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(m, M[i]))
            return i;
    if (!strcmp(m, "HEAD"))
        return YB_M_GET;
    return YB_M_OTHER;
}

/* 1 when the Content-Type names YANG JSON (or plain JSON, which curl
 * users type). */
static int json_media(const yb_h1_header *h)
{
    if (!h)
        return 0;
    size_t n = 0;
    while (n < h->value_len && h->value[n] != ';' && h->value[n] != ' ' && h->value[n] != '\t')
        n++;
    return (n == sizeof YANG_JSON - 1 && !strncasecmp(h->value, YANG_JSON, n)) ||
           (n == 16 && !strncasecmp(h->value, "application/json", n));
}

/* The Location of a created resource, built in a growing buffer: the
 * separators ('/', '=', ',') go in raw, names and key values
 * percent-encoded, so that a key value holding '=' or ',' stays one key. */
typedef struct {
    char *b;
    size_t len, cap;
} loc_buf;

/* Appends s[0..n), percent-encoded unless raw (the RFC 3986 unreserved
 * set and ':' pass).  Keeps b NUL-terminated.  Returns 0 or -ENOMEM. */
static int loc_put(loc_buf *l, const char *s, size_t n, int raw)
{
    static const char HEX[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        char tmp[3];
        size_t k = 1;
        if (raw || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
            (ch >= '0' && ch <= '9') || (ch && strchr("-._~:", ch))) {
            tmp[0] = (char)ch;
        } else {
            tmp[0] = '%';
            tmp[1] = HEX[ch >> 4];
            tmp[2] = HEX[ch & 15];
            k = 3;
        }
        if (k + 1 > l->cap - l->len) {
            size_t nc = l->cap * 2 + k + 64;
            char *nb = realloc(l->b, nc);
            if (!nb)
                return -ENOMEM;
            l->b = nb;
            l->cap = nc;
        }
        memcpy(l->b + l->len, tmp, k);
        l->len += k;
        l->b[l->len] = 0;
    }
    return 0;
}

/* Location of child `child` under request path rpath[0..rlen) (trailing
 * slashes dropped); e is the created entry when the child is a list (its
 * keys end the Location), else NULL.  Returns a malloc'd string or NULL
 * (ENOMEM). */
static char *location(const char *rpath, size_t rlen, const char *child, const json_t *e)
{
    loc_buf l = {NULL, 0, 0};
    while (rlen > 0 && rpath[rlen - 1] == '/')
        rlen--;
    if (loc_put(&l, rpath, rlen, 1) < 0 || loc_put(&l, "/", 1, 1) < 0 ||
        loc_put(&l, child, strlen(child), 0) < 0)
        goto fail;
    if (json_is_object(e)) {
        const char *const *keys;
        unsigned nk = yb_store_list_keys(child, &keys);
        for (unsigned k = 0; k < nk; k++) {
            const json_t *v = json_object_get(e, keys[k]);
            char num[32];
            const char *s = json_string_value(v);
            size_t sl = s ? json_string_length(v) : 0;
            if (json_is_integer(v)) {
                int n = snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
                s = num;
                sl = n > 0 && (size_t)n < sizeof num ? (size_t)n : 0;
            }
            if (loc_put(&l, k ? "," : "=", 1, 1) < 0 || loc_put(&l, s ? s : "", sl, 0) < 0)
                goto fail;
        }
    }
    return l.b;
fail:
    free(l.b);
    return NULL;
}

/* Takes the value out of a RESTCONF body {"module:NAME": value} (already
 * canonical: {"NAME": value}) for target segment g (NULL = datastore
 * root).  Returns a new reference or NULL with *why set. */
static json_t *body_value(json_t *doc, const yb_spath_seg *g, const char **why)
{
    if (!json_is_object(doc)) {
        *why = "the body must be a JSON object";
        return NULL;
    }
    if (!g) {
        if (json_object_size(doc) != 1) {
            *why = "the body must be a JSON object with exactly one member";
            return NULL;
        }
        return json_incref(doc);
    }
    json_t *v = json_object_get(doc, g->name);
    if (!v && !g->nkeys) {
        /* Lenient like SONiC's own payloads (reference 01_create...json
         * sends the container's members bare): a body that does not name
         * the target container is taken as its content. */
        return json_incref(doc);
    }
    if (!v || json_object_size(doc) != 1) {
        *why = "the body must hold exactly one member naming the target resource";
        return NULL;
    }
    if (g->nkeys && json_is_array(v)) {
        if (json_array_size(v) != 1) {
            *why = "a list entry body must hold exactly one entry";
            return NULL;
        }
        v = json_array_get(v, 0);
    }
    return json_incref(v);
}

/* GET: {"openconfig-acl:NAME": node}, list entries as a one-entry array. */
static void do_get(rc_conn *c, const yb_spath *p, int head)
{
    yb_server *s = c->base.srv;
    json_t *node;
    int rc = yb_store_get(s->store, p, &node);
    if (rc) {
        respond_store_error(c, rc, head);
        return;
    }
    const yb_spath_seg *g = p->n ? &p->seg[p->n - 1] : NULL;
    char name[YB_SPATH_ARENA + 16];
    snprintf(name, sizeof name, "openconfig-acl:%s", g ? g->name : "acl");
    json_t *doc = json_object(), *val;
    if (!g)
        val = json_incref(json_object_get(node, "acl"));
    else if (g->nkeys)
        val = json_pack("[O]", node);
    else
        val = json_incref(node);
    char *body = NULL;
    if (doc && val && json_object_set_new(doc, name, val) == 0)
        body = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    if (!body) {
        respond_error(c, 500, "application", "operation-failed", "out of memory", head);
        return;
    }
    respond(c, 200, YANG_JSON, NULL, 0, body, strlen(body), head);
    free(body);
}

/* GET of the openconfig-system tree (system.h): read-only, device k's
 * view. */
static void do_sys_get(rc_conn *c, const yb_spath *p, int mi, int head)
{
    yb_server *s = c->base.srv;
    if (mi != YB_M_GET) {
        respond_error(c, 405, "protocol", "operation-not-supported",
                      "openconfig-system is read-only here", head);
        return;
    }
    int nomem = 0;
    json_t *doc = s->sys ? yb_sys_json(s->sys, s->index, p, &nomem) : NULL;
    char *body = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (!body) {
        if (nomem || doc)
            respond_error(c, 500, "application", "operation-failed", "out of memory", head);
        else
            respond_error(c, 404, "protocol", "invalid-value", "no such node", head);
        return;
    }
    respond(c, 200, YANG_JSON, NULL, 0, body, strlen(body), head);
    free(body);
}

/* Runs the request against the datastore and queues the answer. */
static void execute(rc_conn *c)
{
    yb_server *s = c->base.srv;
    const char *m = yb_h1_req_method(c->req);
    int head = !strcmp(m, "HEAD");
    size_t plen;
    const char *path = yb_h1_req_path(c->req, &plen);
    const char *q = memchr(path, '?', plen);
    if (q)
        plen = (size_t)(q - path);
    static const char DATA[] = "/restconf/data";
    static const char HOSTMETA[] = "/.well-known/host-meta";

    if (plen == sizeof HOSTMETA - 1 && !memcmp(path, HOSTMETA, plen)) {
        static const char XRD[] = "<XRD xmlns='http://docs.oasis-open.org/ns/xri/xrd-1.0'>"
                                  "<Link rel='restconf' href='/restconf'/></XRD>";
        respond(c, 200, "application/xrd+xml", NULL, 0, XRD, sizeof XRD - 1, head);
        return;
    }
    if (plen < sizeof DATA - 1 || memcmp(path, DATA, sizeof DATA - 1) ||
        (plen > sizeof DATA - 1 && path[sizeof DATA - 1] != '/')) {
        respond_error(c, 404, "protocol", "invalid-value", "no such resource", head);
        return;
    }
    int mi = method_index(m);
    if (!strcmp(m, "OPTIONS")) {
        static const char ALLOW[] = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS";
        yb_h1_header h[2] = {{"Allow", 5, ALLOW, sizeof ALLOW - 1},
                             {"Accept-Patch", 12, YANG_JSON, sizeof YANG_JSON - 1}};
        respond(c, 200, NULL, h, 2, NULL, 0, 0);
        return;
    }
    if (mi == YB_M_OTHER) {
        respond_error(c, 405, "protocol", "operation-not-supported", "method not allowed", head);
        return;
    }
    yb_spath p;
    int rc = yb_spath_from_restconf(&p, path + sizeof DATA - 1, plen - (sizeof DATA - 1));
    if (rc) {
        respond_error(c, 400, "protocol", "invalid-value",
                      rc == -E2BIG ? "path too long" : "malformed resource path", head);
        return;
    }
    if (yb_sys_path(&p)) {
        do_sys_get(c, &p, mi, head);
        return;
    }
    if (p.n && strcmp(p.seg[0].name, "acl")) {
        respond_error(c, 404, "protocol", "invalid-value",
                      "only openconfig-acl:acl and openconfig-system:system are served", head);
        return;
    }
    if (mi == YB_M_GET) {
        do_get(c, &p, head);
        return;
    }
    if (mi == YB_M_DELETE) {
        if ((rc = yb_store_begin(s->store)) == 0 && (rc = yb_store_delete(s->store, &p)) == 0) {
            yb_store_commit(s->store);
            respond(c, 204, NULL, NULL, 0, NULL, 0, 0);
            return;
        }
        yb_store_abort(s->store);
        respond_store_error(c, rc, 0);
        return;
    }

    /* POST, PUT, PATCH: a YANG JSON body. */
    if (!json_media(head_header(c, "content-type", NULL))) {
        respond_error(c, 415, "protocol", "invalid-value",
                      "Content-Type must be application/yang-data+json", 0);
        return;
    }
    size_t blen;
    const uint8_t *body = yb_h1_req_body(c->req, &blen);
    json_error_t jerr;
    json_t *raw = body ? json_loadb((const char *)body, blen, JSON_REJECT_DUPLICATES, &jerr) : NULL;
    if (!raw) {
        respond_error(c, 400, "protocol", "malformed-message",
                      body ? jerr.text : "empty body", 0);
        return;
    }
    json_t *doc = yb_store_canon(raw);
    json_decref(raw);
    if (!doc) {
        respond_error(c, 500, "application", "operation-failed", "out of memory", 0);
        return;
    }
    const char *why = NULL;
    json_t *val = NULL;
    const char *child = NULL;
    int created = 0;
    if (mi == YB_M_POST) {
        if (!json_is_object(doc) || json_object_size(doc) != 1) {
            why = "the body must be a JSON object with exactly one member";
        } else {
            void *it = json_object_iter(doc);
            child = json_object_iter_key(it);
            val = json_incref(json_object_iter_value(it));
        }
    } else {
        val = body_value(doc, p.n ? &p.seg[p.n - 1] : NULL, &why);
    }
    if (!val) {
        json_decref(doc);
        respond_error(c, 400, "protocol", "malformed-message", why, 0);
        return;
    }
    char *loc = NULL;
    if (mi == YB_M_POST) {
        const json_t *entry = json_is_array(val) ? json_array_get(val, 0)
                              : yb_store_is_list(child) ? val : NULL;
        loc = location(path, plen, child, entry);
    }
    if ((rc = yb_store_begin(s->store)) == 0) {
        if (mi == YB_M_POST)
            rc = yb_store_create(s->store, &p, child, val);
        else if (mi == YB_M_PUT)
            rc = yb_store_replace(s->store, &p, val, &created);
        else
            rc = yb_store_merge(s->store, &p, val, 1);
        val = NULL;
    }
    json_decref(val);
    json_decref(doc);
    if (rc) {
        yb_store_abort(s->store);
        respond_store_error(c, rc, 0);
        free(loc);
        return;
    }
    yb_store_commit(s->store);
    if (mi == YB_M_POST) {
        yb_h1_header h = {"Location", 8, loc ? loc : "", loc ? strlen(loc) : 0};
        respond(c, 201, NULL, &h, loc ? 1 : 0, NULL, 0, 0);
    } else {
        respond(c, created ? 201 : 204, NULL, NULL, 0, NULL, 0, 0);
    }
    free(loc);
}

/* Sink mode: fixed answers, no parsing, no allocation. */
static void sink_answer(rc_conn *c, int get)
{
    static const char OK[] = "HTTP/1.1 200 OK\r\nContent-Type: application/yang-data+json\r\n"
                             "Content-Length: 0\r\n\r\n";
    static const char OKC[] = "HTTP/1.1 200 OK\r\nContent-Type: application/yang-data+json\r\n"
                              "Content-Length: 0\r\nConnection: close\r\n\r\n";
    static const char NC[] = "HTTP/1.1 204 No Content\r\n\r\n";
    static const char NCC[] = "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n";
    int close = c->close_after;
    const char *r = get ? (close ? OKC : OK) : (close ? NCC : NC);
    size_t n = get ? (close ? sizeof OKC : sizeof OK) - 1 : (close ? sizeof NCC : sizeof NC) - 1;
    c->base.srv->st.http_status[get ? 200 : 204]++;
    if (out_append(c, r, n) < 0)
        c->close_after = 1;
}

/* The answer is due (cost model done). */
static void finish(rc_conn *c)
{
    yb_server *s = c->base.srv;
    int head = !strcmp(yb_h1_req_method(c->req), "HEAD");
    if (c->v.reset) {
        c->dead = 1;
        yb_transport_reset(c->base.t);
        return;
    }
    if (c->v.status) {
        int st = c->v.status <= 16 ? yb_grpc_to_http(c->v.status) : c->v.status;
        if (st < 200 || st == 204 || st == 304)
            respond(c, st, NULL, NULL, 0, NULL, 0, 0);
        else
            respond_error(c, st, "application", "operation-failed", "injected fault", head);
    } else if (c->auth_ok < 0) {
        respond_error(c, 400, "protocol", "malformed-message",
                      "more than one Authorization header", head);
    } else if (!c->auth_ok) {
        respond_error(c, 401, "protocol", "access-denied", "authentication failed", head);
    } else if (s->o->sink) {
        sink_answer(c, !strcmp(yb_h1_req_method(c->req), "GET") || head);
    } else {
        execute(c);
    }
}

static void drive(rc_conn *c);

static void on_job_done(yb_job *j)
{
    rc_conn *c = (rc_conn *)((char *)j - offsetof(rc_conn, job));
    finish(c);
    if (c->dead)
        return;
    c->busy = 0;
    c->base.inflight--;
    c->base.last_active = uv_hrtime();
    yb_h1_req_reset(c->req);
    c->sent_continue = 0;
    if (!c->driving)
        drive(c);
}

/* Credentials: one "Authorization: Basic <token>" (scheme in any case)
 * in the request head; trailers never count.  Returns 1 (accepted or no
 * --auth), 0 (missing or wrong) or -1 (more than one Authorization
 * header: which one would count is ambiguous, so the request is bad). */
static int auth_check(rc_conn *c)
{
    const char *want = c->base.srv->basic_auth;
    if (!want)
        return 1;
    unsigned n;
    const yb_h1_header *h = head_header(c, "authorization", &n);
    if (n > 1)
        return -1;
    size_t wl = strlen(want);
    return h && h->value_len == wl && !strncasecmp(h->value, want, 6) &&
           CRYPTO_memcmp(h->value + 6, want + 6, wl - 6) == 0;
}

/* 1 for a GET or HEAD of the openconfig-system tree: answered by the
 * device's own agent, not the modelled management process, so it takes no
 * worker, service time or fault (reading the device's CPU never takes
 * capacity from the load, nor counts itself in the modelled busy figure). */
static int sys_request(rc_conn *c)
{
    static const char SYS[] = "/restconf/data/openconfig-system:system";
    const char *m = yb_h1_req_method(c->req);
    size_t plen;
    const char *path = yb_h1_req_path(c->req, &plen);
    return c->base.srv->sys && !c->base.srv->o->sink && (!strcmp(m, "GET") || !strcmp(m, "HEAD")) &&
           plen >= sizeof SYS - 1 && !memcmp(path, SYS, sizeof SYS - 1) &&
           (plen == sizeof SYS - 1 || path[sizeof SYS - 1] == '/' ||
            path[sizeof SYS - 1] == '?');
}

/* A complete request arrived: account, roll faults and hand it to the cost
 * model (finish runs now or later). */
static void start_request(rc_conn *c)
{
    yb_server *s = c->base.srv;
    const yb_serve_opts *o = s->o;
    c->busy = 1;
    c->base.inflight++;
    s->st.methods[method_index(yb_h1_req_method(c->req))]++;
    c->close_after = !yb_h1_req_keep_alive(c->req) || s->stopping;
    c->auth_ok = auth_check(c);
    if (c->auth_ok <= 0)
        s->st.auth_failures++;
    if (c->auth_ok > 0 && sys_request(c)) {
        memset(&c->v, 0, sizeof c->v);
        on_job_done(&c->job);
        return;
    }
    if (o->n_faults)
        yb_faults_roll(o->faults, o->n_faults, ++s->req_seq, &s->rng, &c->v, s->st.faults);
    else
        memset(&c->v, 0, sizeof c->v);
    c->job.done = on_job_done;
    c->job.stall_ns = c->v.stall_ns;
    c->job.service_ns = 0;
    if (c->auth_ok > 0) { /* --sink too: a delay to the nanosecond, nothing parsed */
        size_t blen = 0;
        (void)yb_h1_req_body(c->req, &blen);
        c->job.service_ns = yb_service_time_draw(&o->service, &s->rng, blen);
    }
    if (!o->sink) {
        c->job.service_ns += o->auth_user ? o->auth_cost_ns : 0;
        if (!c->base.setup_paid) { /* the session's set-up, on its first request */
            c->base.setup_paid = 1;
            c->job.service_ns += o->session_cost_ns;
        }
    }
    if (yb_sched_submit(&s->sched, &c->job) < 0)
        on_job_done(&c->job);
}

/* A malformed request: answer with the parser's status and close (the
 * byte stream cannot be resynchronised). */
static void bad_request(rc_conn *c)
{
    int st = yb_h1_req_error_status(c->req);
    c->base.srv->st.bad_input++;
    c->close_after = 1;
    respond_error(c, st ? st : 400, "protocol", st == 413 ? "too-big" : "malformed-message",
                  yb_h1_req_error(c->req), 0);
}

/* Parses buffered input until it runs out or a request is held; then
 * writes the batch and pauses or resumes reading. */
static void drive(rc_conn *c)
{
    c->driving = 1;
    while (!c->busy && !c->dead && !c->close_after && c->pend_off < c->pend_len) {
        size_t used = 0;
        yb_h1_rc r = yb_h1_req_feed(c->req, c->pend + c->pend_off, c->pend_len - c->pend_off,
                                    &used);
        c->pend_off += used;
        if (r == YB_H1_COMPLETE) {
            start_request(c);
        } else if (r == YB_H1_ERROR) {
            bad_request(c);
        } else {
            /* Expect: 100-continue: tell the client to send the body. */
            if (!c->sent_continue && yb_h1_req_headers_done(c->req)) {
                const yb_h1_header *e = head_header(c, "expect", NULL);
                c->sent_continue = 1;
                if (e && e->value_len == 12 && !strncasecmp(e->value, "100-continue", 12)) {
                    static const char CONT[] = "HTTP/1.1 100 Continue\r\n\r\n";
                    (void)out_append(c, CONT, sizeof CONT - 1);
                }
            }
            break;
        }
    }
    if (c->pend_off >= c->pend_len)
        c->pend_off = c->pend_len = 0;
    c->driving = 0;
    if (c->dead)
        return;
    flush(c);
    if (!c->dead)
        yb_transport_pause(c->base.t, c->busy);
}

/* ---- transport callbacks ------------------------------------------------------- */

static void on_ready(yb_transport *t, void *ud, yb_err_class st)
{
    (void)t;
    rc_conn *c = ud;
    if (st == YB_ERR_NONE)
        c->base.last_active = uv_hrtime();
}

static void on_read(yb_transport *t, void *ud, const uint8_t *data, size_t len)
{
    (void)t;
    rc_conn *c = ud;
    if (c->dead)
        return;
    c->base.last_active = uv_hrtime();
    c->base.srv->st.bytes_in[YB_SP_RESTCONF] += len;
    /* Compact, then append: the buffer holds at most one read beyond the
     * request in progress, since reading pauses while one is held. */
    if (c->pend_off) {
        memmove(c->pend, c->pend + c->pend_off, c->pend_len - c->pend_off);
        c->pend_len -= c->pend_off;
        c->pend_off = 0;
    }
    if (len > c->pend_cap - c->pend_len) {
        size_t nc = c->pend_cap ? c->pend_cap : 16384;
        while (nc - c->pend_len < len)
            nc *= 2;
        uint8_t *np = realloc(c->pend, nc);
        if (!np) {
            c->dead = 1;
            yb_transport_close(c->base.t);
            return;
        }
        c->pend = np;
        c->pend_cap = nc;
    }
    memcpy(c->pend + c->pend_len, data, len);
    c->pend_len += len;
    if (!c->busy)
        drive(c);
}

static void on_drain(yb_transport *t, void *ud)
{
    (void)t;
    (void)ud;
}

static void on_close(yb_transport *t, void *ud, yb_err_class reason)
{
    (void)t;
    (void)reason;
    rc_conn *c = ud;
    yb_server *s = c->base.srv;
    if (c->busy)
        yb_sched_cancel(&s->sched, &c->job);
    yb_server_conn_remove(s, &c->base);
    yb_h1_req_free(c->req);
    free(c->pend);
    free(c->out);
    free(c);
}

static const yb_transport_cbs RC_CBS = {on_ready, on_read, on_drain, on_close};

int yb_restconf_accept(yb_server *s, uv_stream_t *listener, yb_tls_ctx *tls)
{
    rc_conn *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->req = yb_h1_req_new(s->o->max_body);
    if (!c->req) {
        free(c);
        return -ENOMEM;
    }
    c->base.srv = s;
    c->base.proto = YB_SP_RESTCONF;
    c->base.last_active = uv_hrtime();
    c->base.t = yb_transport_accept(listener, s->ring, tls, &RC_CBS, c);
    if (!c->base.t) {
        yb_h1_req_free(c->req);
        free(c);
        return -EIO;
    }
    yb_server_conn_add(s, &c->base);
    return 0;
}
