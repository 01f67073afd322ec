/* libFuzzer target: request templates (tmpl/tmpl.h).  The first byte
 * picks the input's kind: even = text (path, header value, RESTCONF body),
 * odd = a gNMI request body (gRPC-framed; byte 1 picks Set, Get, Subscribe
 * or Capabilities).  A template that compiles is filled for a few
 * requests, with oracles: text without "{{" fills to itself; a gNMI body
 * fills to gRPC framing with as many messages, each of which protobuf-c
 * decodes whenever the original message decoded (every length prefix
 * recomputed right). */
#include "config.h"
#include "gnmi/gnmi_json.h"
#include "gnmi/gnmi_msg.h"
#include "tmpl/tmpl.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
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
    if (rc == 0) {
        yb_tmpl_buf out = {0};
        for (uint64_t i = 0; i < 3; i++) {
            yb_tmpl_vars v = {.iter = i, .index = i * 7919, .worker = i, .session = i + 1,
                              .seed = data[0], .target = "sw1"};
            if (yb_tmpl_fill(t, &v, &out) != 0)
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
    yb_tmpl_free(t);
    return 0;
}
