/* libFuzzer target: request templates (tmpl/tmpl.h) and the values a
 * chain step takes from the previous response (tmpl/pick.h).  The first
 * byte picks the input's kind: bit 0 clear = text (path, header value,
 * RESTCONF body), set = a gNMI request body (gRPC-framed; byte 1 picks Set,
 * Get, Subscribe or Capabilities).  A template that compiles is filled for
 * a few requests, its {{prev....}} values extracted from the input itself
 * taken as the previous response (body, head, or GetResponse), with
 * oracles: text without "{{" fills to itself; a gNMI body fills to gRPC
 * framing with as many messages, each of which protobuf-c decodes whenever
 * the original message decoded (every length prefix recomputed right); a
 * fill fails only for a value whose extraction failed, which says why.
 * Bit 1 set (text only): the text up to the first newline is one
 * placeholder's inner text (JSON pointer, header name, gNMI path) and the
 * rest the previous response's body and head, for the pointer parser and
 * the extractor on hostile JSON. */
#include "config.h"
#include "gnmi/gnmi_json.h"
#include "gnmi/gnmi_msg.h"
#include "tmpl/pick.h"
#include "tmpl/tmpl.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const RPCS[] = {"/gnmi.gNMI/Set", "/gnmi.gNMI/Get", "/gnmi.gNMI/Subscribe",
                                   "/gnmi.gNMI/Capabilities"};

static void check_body(const yb_request *r, const yb_tmpl_buf *out)
{
    const ProtobufCMessageDescriptor *d = yb_gnmi_request_type(r->path);
    size_t o1 = 0, o2 = 0, n1, n2;
    const uint8_t *m1, *m2;
    int a, b;
    while ((a = yb_grpc_next(r->body, r->body_len, &o1, &m1, &n1, r->body_len)) == 1) {
        b = yb_grpc_next(out->p, out->len, &o2, &m2, &n2, out->len);
        if (b != 1)
            abort(); /* a message lost in the fill */
        ProtobufCMessage *x = yb_gnmi_unpack(d, m1, n1);
        if (x) {
            ProtobufCMessage *y = yb_gnmi_unpack(d, m2, n2);
            if (!y)
                abort(); /* the filled message does not decode */
            protobuf_c_message_free_unpacked(y, NULL);
            protobuf_c_message_free_unpacked(x, NULL);
        }
    }
    if (a < 0 || o2 != out->len)
        abort();
}

/* Extracts pk's values from the response rs into v.  Returns 1 when
 * every value was there. */
static int extract(const yb_pick *pk, const yb_pick_resp *rs, yb_pick_vals *v)
{
    char why[300];
    why[0] = 0;
    if (!pk)
        return 1;
    int rc = yb_pick_extract(pk, rs, v, why, sizeof why);
    if (rc == -ENOENT && (!why[0] || !memchr(why, 0, sizeof why)))
        abort(); /* a failure says why */
    if (rc == 0)
        for (size_t i = 0; i < v->n; i++)
            for (size_t k = 0; k < v->got[i].n; k++)
                if (v->got[i].p[k] < 0x20 || v->got[i].p[k] == 0x7f)
                    abort(); /* a control character would reach the wire */
    return rc == 0;
}

/* Bit 1: one placeholder (the first line) against a response (the rest). */
static void one_pick(const uint8_t *d, size_t n)
{
    const uint8_t *nl = memchr(d, '\n', n);
    if (!nl || (size_t)(nl - d) > 4000)
        return;
    char path[4100];
    int pl = snprintf(path, sizeof path, "/{{%.*s}}", (int)(nl - d), (const char *)d);
    if (pl < 0 || (size_t)pl >= sizeof path || memchr(path, 0, (size_t)pl))
        return;
    yb_request r;
    memset(&r, 0, sizeof r);
    r.path = path;
    yb_pick *pk = NULL;
    char err[512];
    if (yb_pick_compile(&r, &pk, err, sizeof err) != 0 || !pk)
        return;
    const uint8_t *b = nl + 1;
    size_t bl = n - (size_t)(nl + 1 - d);
    yb_pick_vals v;
    memset(&v, 0, sizeof v);
    for (int grpc = 0; grpc < 2; grpc++) {
        yb_pick_resp rs = {.body = b, .body_len = bl, .body_whole = 1, .grpc = grpc,
                           .head = b, .head_len = bl};
        extract(pk, &rs, &v);
    }
    yb_pick_vals_free(&v);
    yb_pick_free(pk);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    if ((data[0] & 3) == 2) {
        one_pick(data + 2, size - 2);
        return 0;
    }
    int gnmi = data[0] & 1;
    yb_request r;
    memset(&r, 0, sizeof r);
    r.protocol = gnmi ? YB_PROTO_GNMI : YB_PROTO_RESTCONF;
    r.path = (char *)RPCS[data[1] % 4];
    r.body = (uint8_t *)data + 2;
    r.body_len = size - 2;
    yb_tmpl *t = yb_tmpl_new();
    if (!t)
        abort();
    char err[512];
    int rc = gnmi ? yb_tmpl_body(t, &r, err, sizeof err)
                  : yb_tmpl_text(t, r.body, r.body_len, err, sizeof err);
    yb_pick *pk = NULL;
    yb_pick_vals got;
    memset(&got, 0, sizeof got);
    int have = 1;
    if (rc == 0 && yb_pick_compile(&r, &pk, err, sizeof err) == 0) {
        /* the input itself as the previous response */
        yb_pick_resp rs = {.body = r.body, .body_len = r.body_len, .body_whole = 1,
                           .grpc = gnmi, .head = r.body, .head_len = r.body_len};
        have = extract(pk, &rs, &got);
    } else
        have = 0;
    if (rc == 0) {
        yb_tmpl_buf out = {0};
        for (uint64_t i = 0; i < 3; i++) {
            yb_tmpl_vars v = {.iter = i, .index = i * 7919, .worker = i, .session = i + 1,
                              .seed = data[0], .target = "sw1", .got = got.got,
                              .n_got = have ? got.n : 0};
            int frc = yb_tmpl_fill(t, &v, &out);
            if (frc == -ENOENT && !have)
                break; /* a {{prev....}} value that was not there */
            if (frc != 0)
                abort();
            if (!gnmi && !yb_tmpl_has(r.body, r.body_len) &&
                (out.len != r.body_len || (out.len && memcmp(out.p, r.body, out.len))))
                abort();
            if (gnmi && yb_tmpl_has(r.body, r.body_len))
                check_body(&r, &out);
        }
        free(out.p);
    } else if (!memchr(err, 0, sizeof err)) {
        abort();
    }
    yb_pick_vals_free(&got);
    yb_pick_free(pk);
    yb_tmpl_free(t);
    return 0;
}
