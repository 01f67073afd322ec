/* Templates of a record's body and the load-time check of a record (see
 * tmpl.h).  A gNMI body is compiled at the protobuf wire level: the bytes
 * of fields without placeholders stay as they are, and each string or
 * bytes field holding one, with every message around it, gets its length
 * prefix recomputed per request — the request is re-encoded without
 * protobuf-c on the request path. */
#include "config.h"
#include "tmpl/tmpl.h"
#include "gnmi/gnmi_json.h"
#include "gnmi/gnmi_msg.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* How deep the walk follows sub-messages holding placeholders. */
#define MAX_NEST 32

/* Compiles the message of type d in b[0..n) into t; where is the dotted
 * field path so far (for messages).  Returns 0, -ENOMEM or -EINVAL. */
static int compile_msg(yb_tmpl *t, const ProtobufCMessageDescriptor *d, const uint8_t *b,
                       size_t n, char *where, size_t wlen, int depth, char *err, size_t errlen)
{
    if (depth > MAX_NEST) {
        snprintf(err, errlen, "%s: nested deeper than %d messages", where, MAX_NEST);
        return -EINVAL;
    }
    size_t off = 0, lit0 = 0;
    while (off < n) {
        uint64_t tag, v;
        if (yb_wire_varint(b, n, &off, &tag) < 0)
            goto bad;
        size_t head_end = off;
        switch (tag & 7) {
        case 0:
            if (yb_wire_varint(b, n, &off, &v) < 0)
                goto bad;
            continue;
        case 1:
            if (n - off < 8)
                goto bad;
            off += 8;
            continue;
        case 5:
            if (n - off < 4)
                goto bad;
            off += 4;
            continue;
        case 2:
            break;
        default:
            goto bad;
        }
        if (yb_wire_varint(b, n, &off, &v) < 0 || v > n - off)
            goto bad;
        const uint8_t *pl = b + off;
        size_t plen = (size_t)v;
        off += plen;
        const ProtobufCFieldDescriptor *f =
            tag >> 3 <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(d, (unsigned)(tag >> 3))
                                   : NULL;
        if (!f || !yb_tmpl_has(pl, plen))
            continue;
        int msg = f->type == PROTOBUF_C_TYPE_MESSAGE;
        if (!msg && f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_BYTES)
            continue; /* packed numbers: "{{" there is not text */
        size_t wl = strlen(where);
        snprintf(where + wl, wlen - wl, "%s%s", wl ? "." : "", f->name);
        int rc = yb_tmpl_lit(t, b + lit0, head_end - lit0);
        if (!rc)
            rc = yb_tmpl_open(t, YB_TMPL_LEN_VARINT);
        if (rc == -E2BIG) {
            snprintf(err, errlen, "%s: more than %d nested fields hold placeholders", where,
                     YB_TMPL_MAX_REGIONS);
            return -EINVAL;
        }
        if (!rc && msg)
            rc = compile_msg(t, f->descriptor, pl, plen, where, wlen, depth + 1, err, errlen);
        else if (!rc) {
            char e[300];
            rc = yb_tmpl_text(t, pl, plen, e, sizeof e);
            if (rc == -EINVAL)
                snprintf(err, errlen, "%s: %s", where, e);
        }
        if (!rc)
            rc = yb_tmpl_close(t);
        if (rc)
            return rc;
        where[wl] = 0;
        lit0 = off;
    }
    return n ? yb_tmpl_lit(t, b + lit0, n - lit0) : 0; /* b may be NULL when n is 0 */
bad:
    snprintf(err, errlen, "%s%snot a valid %s message", where, *where ? ": " : "", d->name);
    return -EINVAL;
}

static int is_grpc(const yb_request *r)
{
    if (r->protocol == YB_PROTO_GNMI)
        return 1;
    for (size_t i = 0; i < r->n_headers; i++)
        if (!strcasecmp(r->headers[i].name, "content-type") && r->headers[i].value_len >= 16 &&
            !memcmp(r->headers[i].value, "application/grpc", 16))
            return 1;
    return 0;
}

int yb_tmpl_body(yb_tmpl *t, const yb_request *r, char *err, size_t errlen)
{
    if (!is_grpc(r) || !yb_tmpl_has(r->body, r->body_len))
        return yb_tmpl_text(t, r->body, r->body_len, err, errlen);
    const ProtobufCMessageDescriptor *d = yb_gnmi_request_type(r->path);
    if (!d) {
        snprintf(err, errlen, "placeholders in a gRPC body need a gNMI Set, Get, Subscribe or "
                              "Capabilities request (path %.80s)", r->path);
        return -EINVAL;
    }
    size_t off = 0, n, k = 0;
    const uint8_t *m;
    int rc;
    while ((rc = yb_grpc_next(r->body, r->body_len, &off, &m, &n, r->body_len)) == 1) {
        char where[256] = "";
        char e[400];
        if (yb_tmpl_lit(t, "\0", 1) || yb_tmpl_open(t, YB_TMPL_LEN_BE32))
            return -ENOMEM;
        rc = compile_msg(t, d, m, n, where, sizeof where, 0, e, sizeof e);
        if (rc == -EINVAL)
            snprintf(err, errlen, "gRPC message %zu (%s): %s", k, d->name, e);
        if (rc || (rc = yb_tmpl_close(t)))
            return rc;
        k++;
    }
    if (rc < 0) {
        snprintf(err, errlen, "the gRPC framing of the body is malformed (or compressed)");
        return -EINVAL;
    }
    return 0;
}

/* Compiles one field into a scratch template.  Returns 0 or -1 with err. */
static int check_text(const char *field, const void *p, size_t n, char *err, size_t errlen)
{
    yb_tmpl *t = yb_tmpl_new();
    char e[400];
    int rc = t ? yb_tmpl_text(t, p, n, e, sizeof e) : -ENOMEM;
    yb_tmpl_free(t);
    if (rc == -ENOMEM)
        snprintf(err, errlen, "%s: out of memory", field);
    else if (rc)
        snprintf(err, errlen, "%s: %s", field, e);
    return rc ? -1 : 0;
}

int yb_tmpl_check(const yb_request *r, char *err, size_t errlen)
{
    if (check_text("path", r->path, strlen(r->path), err, errlen) < 0)
        return -1;
    for (size_t i = 0; i < r->n_headers; i++) {
        char field[96];
        snprintf(field, sizeof field, "header '%.64s'", r->headers[i].name);
        if (check_text(field, r->headers[i].value, r->headers[i].value_len, err, errlen) < 0)
            return -1;
    }
    yb_tmpl *t = yb_tmpl_new();
    char e[500];
    int rc = t ? yb_tmpl_body(t, r, e, sizeof e) : -ENOMEM;
    yb_tmpl_free(t);
    if (rc == -ENOMEM)
        snprintf(err, errlen, "body: out of memory");
    else if (rc)
        snprintf(err, errlen, "body: %s", e);
    return rc ? -1 : 0;
}
