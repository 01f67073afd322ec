/* libFuzzer target: rewrite rules (corpus/rewrite.h), parsed and applied.
 *
 * The input is lines, up to a line "--": each is one rule, its first byte
 * the kind (p --rewrite-path, s --set-header, d --drop-header,
 * b --rewrite-body, a --map-authority; any other byte: kind = byte mod 5)
 * and the rest its text.  What follows "--" is a body.  The rules are
 * added as run adds them (a refused one must say why and leave the set as
 * it was) and applied to a RESTCONF record with that body, and to a gNMI
 * SetRequest whose json_ietf_val holds it when it is JSON.  Oracles: a
 * refusal says why; an applied result is a record the corpus accepts; the
 * hit counts stay within one per rule and record. */
#include "config.h"
#include "corpus/corpus.h"
#include "corpus/rewrite.h"
#include "gnmi/gnmi_json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what)
{
    fprintf(stderr, "rewrite oracle: %s\n", what);
    abort();
}

static void apply(const yb_rewrite *rw, const yb_request *in)
{
    yb_request out;
    uint64_t hits[YB_REWRITE_MAX_RULES] = {0};
    char err[1000] = "";
    int mapped = -1;
    yb_request_init(&out);
    int rc = yb_rewrite_apply(rw, in, &out, &mapped, hits, err, sizeof err);
    if (rc < 0 && !err[0])
        fail("a refused record without a reason");
    if (rc == 0) {
        if (yb_request_problem(&out))
            fail(yb_request_problem(&out));
        if (mapped != 0 && mapped != 1)
            fail("authority_mapped not set");
    }
    for (size_t i = 0; i < yb_rewrite_count(rw); i++)
        if (hits[i] > 1)
            fail("a rule counted twice on one record");
    yb_request_cleanup(&out);
}

static void base(yb_request *r, yb_proto proto, const char *path)
{
    yb_request_init(r);
    r->protocol = proto;
    if (yb_request_set_str(&r->method, proto == YB_PROTO_GNMI ? "POST" : "PATCH") ||
        yb_request_set_str(&r->scheme, "https") || yb_request_set_str(&r->authority, "box:443") ||
        yb_request_set_str(&r->path, path) ||
        yb_request_add_header(r, "Accept", "*/*", 3) ||
        yb_request_add_header(r, "X-Trace", "0", 1))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size + 1);
    if (!in)
        return 0;
    memcpy(in, data, size);
    in[size] = 0;
    yb_rewrite *rw = yb_rewrite_new();
    if (!rw)
        abort();
    /* 64 KiB: the limit's refusal is still reached (a rule that grows the
     * body at each byte), without the sanitizers' quadratic regexec on
     * bodies of megabytes (yb_rewrite_set_body_limit) */
    yb_rewrite_set_body_limit(rw, 64 * 1024);
    char *p = in, *body = NULL;
    size_t body_len = 0;
    while (p < in + size) {
        char *nl = memchr(p, '\n', (size_t)(in + size - p));
        char *end = nl ? nl : in + size;
        if (end - p == 2 && p[0] == '-' && p[1] == '-') {
            body = end < in + size ? end + 1 : end;
            body_len = (size_t)(in + size - body);
            break;
        }
        *end = 0;
        if (end > p && !memchr(p, 0, (size_t)(end - p))) {
            static const char KINDS[] = "psdba";
            const char *k = strchr(KINDS, p[0]);
            yb_rw_kind kind = k && p[0] ? (yb_rw_kind)(k - KINDS) : (yb_rw_kind)((uint8_t)p[0] % 5);
            size_t before = yb_rewrite_count(rw);
            char err[500] = "";
            if (yb_rewrite_add(rw, kind, p + 1, err, sizeof err) < 0) {
                if (!err[0])
                    fail("a refused rule without a reason");
                if (yb_rewrite_count(rw) != before)
                    fail("a refused rule was kept");
            } else if (yb_rewrite_count(rw) != before + 1) {
                fail("an accepted rule was not kept");
            }
        }
        p = end + 1;
    }
    yb_request r;
    base(&r, YB_PROTO_RESTCONF, "/restconf/data/openconfig-acl:acl/acl-sets/acl-set=A1,ACL_IPV4");
    if (body && yb_request_set_body(&r, body, body_len))
        abort();
    apply(rw, &r);
    yb_request_cleanup(&r);

    /* the gNMI form: a SetRequest whose value is the body, when it is JSON */
    json_error_t je;
    json_t *v = body ? json_loadb(body, body_len, JSON_DECODE_ANY, &je) : NULL;
    if (v) {
        json_t *msgs = json_pack("[{s:{s:[{s:s,s:{s:o}}]}}]", "SetRequest", "update", "path",
                                 "/acl/acl-sets/acl-set[name=A1]", "val", "json_ietf_val", v);
        uint8_t *gb;
        size_t gl;
        char err[300];
        if (msgs && yb_gnmi_json_to_body("/gnmi.gNMI/Set", msgs, &gb, &gl, err, sizeof err) == 0) {
            base(&r, YB_PROTO_GNMI, "/gnmi.gNMI/Set");
            yb_request_take_body(&r, gb, gl);
            apply(rw, &r);
            yb_request_cleanup(&r);
        }
        json_decref(msgs);
    }
    yb_rewrite_free(rw);
    free(in);
    return 0;
}
