/* HTTP/1.1 client codec: one exchange at a time per session (no
 * pipelining), responses parsed by codec/h1.c. */
#include "config.h"
#include "codec/codec.h"
#include "codec/h1.h"
#include "tmpl/pick.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct yb_codec {
    const yb_codec_cfg *cfg;
    yb_tmpl_buf fill;     /* a templated request, filled (reused) */
    const yb_codec_host *host;
    void *hostdata;
    yb_h1_resp *resp;
    yb_exchange *cur;     /* the exchange in flight, if any */
    int write_pending;    /* cur's request is still queued in the transport */
    int closing;          /* Connection: close seen, or a fatal error */
    size_t kept;          /* bytes the parser keeps for a chain step, taken
                           * from the worker's budget */
};

/* Brings what the budget holds for the parser's kept response in line with
 * what it has allocated; what does not fit is not kept (the step that
 * reads it then fails, saying so). */
static void budget_kept(yb_codec *c)
{
    size_t a = yb_h1_resp_kept_alloc(c->resp);
    if (a > c->kept && yb_mem_take(c->host->budget, a - c->kept) < 0) {
        yb_h1_resp_keep_drop(c->resp);
        a = yb_h1_resp_kept_alloc(c->resp);
    }
    if (a > c->kept)
        c->kept = a; /* (taken above) */
    else {
        yb_mem_give(c->host->budget, c->kept - a);
        c->kept = a;
    }
}

/* Finds the header line "\r\nNAME: " in head[0..n): sets [*v0, *v1) to its
 * value.  Returns 1 when found. */
static int head_value(const uint8_t *head, size_t n, const char *line, size_t *v0, size_t *v1)
{
    size_t ll = strlen(line);
    for (size_t i = 0; i + ll <= n; i++)
        if (!memcmp(head + i, line, ll)) {
            size_t e = i + ll;
            while (e + 1 < n && !(head[e] == '\r' && head[e + 1] == '\n'))
                e++;
            *v0 = i + ll;
            *v1 = e;
            return 1;
        }
    return 0;
}

/* Compiles a templated record's serialized request w[0..n) (which the
 * serializer has already checked): placeholders in the head, except in our
 * Authorization value (a secret, sent as it is); Content-Length as the
 * length of the body filled per request; the body.  Returns 0, -ENOMEM
 * or -EINVAL (a bad template, or a {{target}} name that would break the
 * head). */
static int compile_wire(const yb_codec_cfg *cfg, const yb_request *r, const uint8_t *w, size_t n,
                        yb_tmpl **out)
{
    char err[512];
    size_t he = 0;
    while (he + 4 <= n && memcmp(w + he, "\r\n\r\n", 4))
        he++;
    if (he + 4 > n)
        return -EINVAL;
    he += 4;
    size_t a0 = he, a1 = he, c0 = he, c1 = he;
    int auth = cfg->auth_header && head_value(w, he, "\r\nAuthorization: ", &a0, &a1);
    int clen = head_value(w, he, "\r\nContent-Length: ", &c0, &c1);
    yb_tmpl *t = yb_tmpl_new();
    if (!t)
        return -ENOMEM;
    int rc, region = -1;
    /* the two spans in head order: Authorization comes first (serializer) */
    if ((rc = yb_tmpl_text(t, w, auth ? a0 : c0, err, sizeof err)) ||
        (auth && ((rc = yb_tmpl_lit(t, w + a0, a1 - a0)) ||
                  (rc = yb_tmpl_text(t, w + a1, c0 - a1, err, sizeof err)))))
        goto fail;
    if (clen && (region = yb_tmpl_length(t, YB_TMPL_LEN_DEC)) < 0) {
        rc = region;
        goto fail;
    }
    if ((rc = yb_tmpl_text(t, w + c1, he - c1, err, sizeof err)) ||
        (clen && (rc = yb_tmpl_begin(t, region))) ||
        (rc = yb_tmpl_body(t, r, err, sizeof err)) || (clen && (rc = yb_tmpl_close(t))))
        goto fail;
    if (yb_tmpl_uses_target(t) && cfg->target_name) {
        for (const char *p = cfg->target_name; *p; p++)
            if ((unsigned char)*p <= 0x20 || *p == 0x7f) {
                rc = -EINVAL;
                goto fail;
            }
    }
    *out = t;
    return 0;
fail:
    yb_tmpl_free(t);
    return rc == -ENOMEM ? -ENOMEM : -EINVAL;
}

static int h1_prepare(const yb_codec_cfg *cfg, const yb_request *r, yb_prepared *out)
{
    if (yb_proto_is_h2(r->protocol))
        return -EPROTONOSUPPORT;
    /* the record's headers, then -H's, then our User-Agent, which
     * replaces a recorded one (as HTTP/2 does) */
    yb_h1_extra x = {.host = cfg->authority, .auth = cfg->auth_header, .extra = cfg->extra,
                     .n_extra = cfg->n_extra, .user_agent = cfg->user_agent};
    memset(out, 0, sizeof *out);
    int rc = yb_h1_serialize_with(r, &x, &out->wire, &out->wire_len);
    if (rc)
        return rc;
    out->protocol = r->protocol;
    out->head = !strcmp(r->method, "HEAD");
    out->body_len = r->body_len;
    out->conn_id = r->conn_id;
    out->expected_status = r->expected_status;
    out->expected_grpc = r->expected_grpc;
    if (r->templated || cfg->templates) {
        if ((rc = compile_wire(cfg, r, out->wire, out->wire_len, &out->tmpl))) {
            free(out->wire);
            out->wire = NULL;
            return rc;
        }
        out->templated = 1;
    }
    return 0;
}

static void h1_prepared_free(yb_prepared *p)
{
    free(p->wire);
    p->wire = NULL;
    yb_tmpl_free(p->tmpl);
    p->tmpl = NULL;
}

static yb_codec *h1_create(const yb_codec_cfg *cfg, const yb_codec_host *host, void *hostdata)
{
    yb_codec *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->resp = yb_h1_resp_new(cfg->max_body);
    if (!c->resp || (cfg->keep_body && yb_h1_resp_keep_body(c->resp, cfg->keep_body) < 0)) {
        yb_h1_resp_free(c->resp);
        free(c);
        return NULL;
    }
    c->cfg = cfg;
    c->host = host;
    c->hostdata = hostdata;
    return c;
}

static void h1_destroy(yb_codec *c)
{
    if (!c)
        return;
    yb_mem_give(c->host->budget, c->kept);
    yb_h1_resp_free(c->resp);
    free(c->fill.p);
    free(c);
}

static int h1_start(yb_codec *c)
{
    (void)c;
    return 0;
}

static unsigned h1_capacity(const yb_codec *c)
{
    return c->cur || c->closing ? 0 : 1;
}

static int h1_usable(const yb_codec *c)
{
    return !c->closing;
}

static int h1_submit(yb_codec *c, yb_exchange *x, uint64_t now)
{
    if (c->cur || c->closing)
        return -EBUSY;
    uv_buf_t b = uv_buf_init((char *)x->req->wire, (unsigned)x->req->wire_len);
    if (x->req->tmpl) {
        /* the transport copies what it cannot write at once, so one
         * buffer per session serves every request */
        yb_tmpl_vars v = yb_exchange_vars(x, c->cfg);
        int frc = yb_tmpl_fill(x->req->tmpl, &v, &c->fill);
        if (frc < 0)
            return frc;
        b = uv_buf_init((char *)c->fill.p, (unsigned)c->fill.len);
    }
    c->cur = x;
    yb_h1_resp_reset(c->resp, x->req->head);
    if (x->req->keep_resp) /* the next step of its chain reads it */
        yb_h1_resp_keep_all(c->resp, YB_PICK_BODY_MAX, YB_PICK_HEAD_MAX);
    if (c->kept)
        budget_kept(c); /* the reset may have let a large body go */
    int rc = c->host->write(c->hostdata, &b, 1);
    if (rc < 0) {
        c->cur = NULL;
        return rc;
    }
    x->res.bytes_out = b.len;
    if (rc == 1)
        x->res.sent = now;
    else
        c->write_pending = 1;
    return 0;
}

static void finish(yb_codec *c, uint64_t now)
{
    yb_exchange *x = c->cur;
    c->cur = NULL;
    c->write_pending = 0;
    x->res.done = now;
    x->res.status = yb_h1_resp_status(c->resp);
    if (!x->res.sent)
        x->res.sent = now; /* the response beat our write-completion callback */
    x->res.err = yb_accept_http(&c->cfg->accept, x->req->accept, x->req->expected_status,
                                x->res.status, x->res.reason, sizeof x->res.reason);
    if (x->res.err != YB_ERR_NONE)
        x->err_body = yb_h1_resp_body_head(c->resp, &x->err_body_len);
    else if (x->req->keep_resp)
        yb_h1_resp_kept(c->resp, &x->body, &x->body_len, &x->body_whole, &x->head, &x->head_len);
    else if (c->cfg->keep_body)
        x->body = yb_h1_resp_body(c->resp, &x->body_len);
    int keep = yb_h1_resp_keep_alive(c->resp);
    if (!keep)
        c->closing = 1;
    c->host->done(c->hostdata, x);
    if (!keep)
        c->host->close(c->hostdata, 0, YB_ERR_NONE, NULL);
}

/* 1 when a response starts like an HTTP/2 server's first frame (SETTINGS
 * or GOAWAY on stream 0) rather than "HTTP/1.x". */
static int looks_h2(const uint8_t *d, size_t n)
{
    return n >= 9 && d[0] == 0 && (d[3] == 0x04 || d[3] == 0x07) && !d[5] && !d[6] && !d[7] &&
           !(d[8] & 0x7f);
}

/* Appends what the response began with (its first line, at most 40
 * bytes, sanitized) to reason: says what was malformed. */
static void quote_start(char *reason, size_t len, const uint8_t *d, size_t n)
{
    size_t k = 0;
    while (k < n && k < 40 && d[k] != '\r' && d[k] != '\n')
        k++;
    yb_reason_append(reason, len, (const uint8_t *)" (response began \"", 19);
    yb_reason_append(reason, len, d, k);
    yb_reason_append(reason, len, (const uint8_t *)"\")", 2);
}

static int h1_on_read(yb_codec *c, const uint8_t *d, size_t n, uint64_t now)
{
    if (!c->cur) {
        /* Bytes nobody asked for: the peer is not speaking HTTP/1.1 the
         * way we are (or pipelines).  The session cannot be trusted. */
        c->closing = 1;
        c->host->close(c->hostdata, 1, YB_ERR_PROTOCOL,
                       "protocol: response bytes with no request outstanding");
        return -EPROTO;
    }
    yb_exchange *x = c->cur;
    if (!x->res.first_byte)
        x->res.first_byte = now;
    x->res.bytes_in += n;
    size_t used = 0;
    yb_h1_rc rc = yb_h1_resp_feed(c->resp, d, n, &used);
    if (x->req->keep_resp)
        budget_kept(c);
    if (rc == YB_H1_ERROR) {
        x->res.err = yb_h1_resp_too_large(c->resp) ? YB_ERR_TOO_LARGE : YB_ERR_PROTOCOL;
        x->res.done = now;
        yb_reason_fmt(x->res.reason, sizeof x->res.reason,
                      x->res.err == YB_ERR_TOO_LARGE ? "too large: %s" : "protocol: %s",
                      yb_h1_resp_error(c->resp));
        if (x->res.err == YB_ERR_PROTOCOL && x->res.bytes_in == n && !looks_h2(d, n))
            quote_start(x->res.reason, sizeof x->res.reason, d, n);
        if (x->res.bytes_in == n && looks_h2(d, n))
            yb_reason_fmt(x->res.reason, sizeof x->res.reason,
                          "protocol: the server answered in HTTP/2 frames, not HTTP/1.1 "
                          "(it does not speak HTTP/1.1)");
        c->closing = 1;
        c->cur = NULL;
        c->host->done(c->hostdata, x);
        c->host->close(c->hostdata, 1, YB_ERR_PROTOCOL, NULL);
        return -EPROTO;
    }
    if (rc == YB_H1_COMPLETE) {
        x->res.bytes_in -= n - used;
        finish(c, now);
        if (used < n && !c->closing) {
            c->closing = 1;
            c->host->close(c->hostdata, 1, YB_ERR_PROTOCOL,
                           "protocol: bytes after the end of a response");
            return -EPROTO;
        }
    }
    return 0;
}

static void h1_on_eof(yb_codec *c, uint64_t now)
{
    if (c->cur && c->cur->res.first_byte && yb_h1_resp_eof(c->resp) == YB_H1_COMPLETE) {
        finish(c, now);
    } else if (c->cur && c->cur->res.first_byte) {
        /* the session fails it as closed: say how far the response got */
        yb_exchange *x = c->cur;
        uint64_t got = yb_h1_resp_body_len(c->resp), want = yb_h1_resp_body_expected(c->resp);
        if (!yb_h1_resp_head_done(c->resp))
            yb_reason_fmt(x->res.reason, sizeof x->res.reason,
                          "closed by peer inside the response head, after %llu bytes",
                          (unsigned long long)x->res.bytes_in);
        else if (want != UINT64_MAX)
            yb_reason_fmt(x->res.reason, sizeof x->res.reason,
                          "closed by peer after %llu of %llu response body bytes",
                          (unsigned long long)got, (unsigned long long)want);
        else
            yb_reason_fmt(x->res.reason, sizeof x->res.reason,
                          "closed by peer after %llu response body bytes (chunked, unfinished)",
                          (unsigned long long)got);
    }
    c->closing = 1;
}

static int h1_cancel(yb_codec *c, yb_exchange *x)
{
    if (c->cur == x)
        c->cur = NULL;
    c->closing = 1;
    return 0; /* HTTP/1.1 cannot abandon a request and keep the connection */
}

static void h1_on_drain(yb_codec *c, uint64_t now)
{
    if (c->cur && c->write_pending) {
        c->write_pending = 0;
        if (!c->cur->res.sent)
            c->cur->res.sent = now;
    }
}

const yb_codec_ops yb_h1_client_ops = {
    .name = "http/1.1",
    .ring_writes = 1,
    .prepare = h1_prepare,
    .prepared_free = h1_prepared_free,
    .create = h1_create,
    .destroy = h1_destroy,
    .start = h1_start,
    .capacity = h1_capacity,
    .usable = h1_usable,
    .submit = h1_submit,
    .on_read = h1_on_read,
    .on_eof = h1_on_eof,
    .cancel = h1_cancel,
    .on_drain = h1_on_drain,
};
