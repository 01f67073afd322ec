/* Request templates (tmpl/tmpl.h): every placeholder's value, the same
 * text one value, errors named, length regions (decimal, varint across
 * its byte boundaries, gRPC prefix), and a gNMI SetRequest re-encoded per
 * request that protobuf-c decodes with the values filled in. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnmi/gnmi_msg.h"
#include "tmpl/tmpl.h"

static yb_tmpl_buf out;

/* Compiles s, fills it with v and returns the text (static). */
static const char *fill(const char *s, const yb_tmpl_vars *v)
{
    static char res[4096];
    char err[256];
    yb_tmpl *t = yb_tmpl_new();
    assert_non_null(t);
    assert_int_equal(yb_tmpl_text(t, s, strlen(s), err, sizeof err), 0);
    assert_int_equal(yb_tmpl_fill(t, v, &out), 0);
    assert_true(out.len < sizeof res);
    memcpy(res, out.p, out.len);
    res[out.len] = 0;
    yb_tmpl_free(t);
    return res;
}

/* Compiles s, which must fail; returns the message (static). */
static const char *fails(const char *s)
{
    static char err[512];
    yb_tmpl *t = yb_tmpl_new();
    assert_non_null(t);
    assert_int_equal(yb_tmpl_text(t, s, strlen(s), err, sizeof err), -EINVAL);
    yb_tmpl_free(t);
    return err;
}

static void test_values(void **st)
{
    (void)st;
    yb_tmpl_vars v = {.iter = 3, .index = 7, .worker = 1, .session = 4, .seed = 1, .target = "sw1"};
    assert_string_equal(fill("a{{iter}}b{{index}}c{{worker}}d{{session}}e{{target}}", &v),
                        "a3b7c1d4esw1");
    assert_string_equal(fill("plain {no} }} {", &v), "plain {no} }} {");
    assert_string_equal(fill("{{open}}iter}}", &v), "{{iter}}");
    assert_string_equal(fill("{{counter}}", &v), "7");
    assert_string_equal(fill("{{counter:start=100,step=10,mod=3}}", &v), "110"); /* 7 % 3 = 1 */
    assert_string_equal(fill("{{counter:step=-2,start=1}}", &v), "-13");
    assert_string_equal(fill("{{random:5..5}}", &v), "5");
    assert_string_equal(fill("{{choice:only}}", &v), "only");
    assert_string_equal(fill("[{{choice:}}]", &v), "[]");
    /* the same text: one value; a label: another draw */
    char a[64];
    snprintf(a, sizeof a, "%s", fill("{{uuid}}", &v));
    assert_int_equal(strlen(a), 36);
    assert_int_equal(a[14], '4');
    assert_true(strchr("89ab", a[19]) != NULL);
    char both[128];
    snprintf(both, sizeof both, "%s %s", a, a);
    assert_string_equal(fill("{{uuid}} {{uuid}}", &v), both);
    assert_string_not_equal(fill("{{uuid.other}}", &v), a);
    /* a seed is a whole run's values; another request, other values */
    yb_tmpl_vars w = v;
    w.index = 8;
    assert_string_not_equal(fill("{{uuid}}", &w), a);
    w = v;
    w.seed = 2;
    assert_string_not_equal(fill("{{uuid}}", &w), a);
    assert_string_equal(fill("{{uuid}}", &v), a);
}

static void test_random_range(void **st)
{
    (void)st;
    int seen[7] = {0}, lo = 0, hi = 0, ch[3] = {0};
    for (uint64_t i = 0; i < 2000; i++) {
        yb_tmpl_vars v = {.index = i, .seed = 99};
        int x = (int)strtol(fill("{{random:-3..3}}", &v), NULL, 10);
        assert_true(x >= -3 && x <= 3);
        seen[x + 3]++;
        const char *c = fill("{{choice:a|b|c}}", &v);
        assert_int_equal(strlen(c), 1);
        ch[c[0] - 'a']++;
        const char *big = fill("{{random:-9223372036854775808..9223372036854775807}}", &v);
        lo += big[0] == '-';
        hi += big[0] != '-';
    }
    for (int k = 0; k < 7; k++)
        assert_true(seen[k] > 200); /* 2000 / 7 = 285 expected */
    for (int k = 0; k < 3; k++)
        assert_true(ch[k] > 550);
    assert_true(lo > 800 && hi > 800);
}

static void test_errors(void **st)
{
    (void)st;
    assert_non_null(strstr(fails("x{{nope}}"), "placeholder '{{nope}}': unknown placeholder"));
    assert_non_null(strstr(fails("x{{iter"), "unterminated placeholder '{{iter'"));
    assert_non_null(strstr(fails("{{iter}"), "unterminated"));
    assert_non_null(strstr(fails("{{random:9..1}}"), "bad range"));
    assert_non_null(strstr(fails("{{random}}"), "bad range"));
    assert_non_null(strstr(fails("{{random:1-5}}"), "bad range"));
    assert_non_null(strstr(fails("{{random:1..99999999999999999999}}"), "bad range"));
    assert_non_null(strstr(fails("{{iter:3}}"), "takes no arguments"));
    assert_non_null(strstr(fails("{{choice}}"), "choice takes its items"));
    assert_non_null(strstr(fails("{{counter:mod=0}}"), "counter mod"));
    assert_non_null(strstr(fails("{{counter:start=x}}"), "counter start"));
    assert_non_null(strstr(fails("{{counter:speed=1}}"), "counter takes"));
    assert_non_null(strstr(fails("{{uuid.}}"), "label"));
    assert_non_null(strstr(fails("{{uuid.a b}}"), "label"));
    char many[64 * 16] = "";
    for (int i = 0; i < 33; i++) {
        char one[24];
        snprintf(one, sizeof one, "{{uuid.u%d}}", i);
        strcat(many, one);
    }
    assert_non_null(strstr(fails(many), "more than 32"));
    /* a hostile message is quoted printable and short */
    const char *m = fails("{{\x01\x02 nope nope nope nope nope nope nope nope nope nope nope nope nope}}");
    assert_non_null(strstr(m, "'{{?? nope"));
    assert_non_null(strstr(m, "...'"));
}

/* Lengths: a decimal Content-Length before its body, varints that grow a
 * byte as values lengthen, nested. */
static void test_regions(void **st)
{
    (void)st;
    char err[256];
    yb_tmpl *t = yb_tmpl_new();
    assert_non_null(t);
    int id = yb_tmpl_length(t, YB_TMPL_LEN_DEC);
    assert_true(id >= 0);
    assert_int_equal(yb_tmpl_lit(t, "|", 1), 0);
    assert_int_equal(yb_tmpl_fill(t, &(yb_tmpl_vars){0}, &out), -EINVAL); /* not begun */
    assert_int_equal(yb_tmpl_begin(t, id), 0);
    assert_int_equal(yb_tmpl_begin(t, id), -EINVAL);
    assert_int_equal(yb_tmpl_text(t, "{{choice:ab|abcdefghijkl}}", 26, err, sizeof err), 0);
    assert_int_equal(yb_tmpl_fill(t, &(yb_tmpl_vars){0}, &out), -EINVAL); /* still open */
    assert_int_equal(yb_tmpl_close(t), 0);
    assert_int_equal(yb_tmpl_close(t), -EINVAL);
    int two = 0, twelve = 0;
    for (uint64_t i = 0; i < 64; i++) {
        assert_int_equal(yb_tmpl_fill(t, &(yb_tmpl_vars){.index = i}, &out), 0);
        if (out.len == 4 && !memcmp(out.p, "2|ab", 4))
            two++;
        else if (out.len == 15 && !memcmp(out.p, "12|abcdefghijkl", 15))
            twelve++;
        else
            fail_msg("unexpected fill %.*s", (int)out.len, out.p);
    }
    assert_true(two && twelve);
    yb_tmpl_free(t);

    /* nested varints: the inner string is 120 + 0 or 20 bytes, so the
     * inner length takes 1 or 2 bytes and the outer follows */
    t = yb_tmpl_new();
    char text[200];
    memset(text, 'x', 120);
    memcpy(text + 120, "{{choice:|aaaaaaaaaaaaaaaaaaaa}}", 32);
    assert_int_equal(yb_tmpl_open(t, YB_TMPL_LEN_VARINT), 0);
    assert_int_equal(yb_tmpl_lit(t, "T", 1), 0);
    assert_int_equal(yb_tmpl_open(t, YB_TMPL_LEN_VARINT), 0);
    assert_int_equal(yb_tmpl_text(t, text, 152, err, sizeof err), 0);
    assert_int_equal(yb_tmpl_close(t), 0);
    assert_int_equal(yb_tmpl_close(t), 0);
    assert_int_equal(yb_tmpl_gaps(t), 1);
    int shortv = 0, longv = 0;
    for (uint64_t i = 0; i < 64; i++) {
        assert_int_equal(yb_tmpl_fill(t, &(yb_tmpl_vars){.index = i}, &out), 0);
        if (out.len == 1 + 1 + 1 + 120) { /* 122 < 128: one byte each */
            assert_int_equal(out.p[0], 122);
            assert_int_equal(out.p[2], 120);
            shortv++;
        } else {
            assert_int_equal(out.len, 2 + 1 + 2 + 140); /* 140, 143: two bytes each */
            assert_int_equal(out.p[0], (143 & 127) | 128);
            assert_int_equal(out.p[1], 1);
            assert_int_equal(out.p[3], (140 & 127) | 128);
            assert_int_equal(out.p[4], 1);
            longv++;
        }
    }
    assert_true(shortv && longv);
    yb_tmpl_free(t);
}

/* A SetRequest with placeholders in a path key and in json_ietf_val:
 * filled per request, decoded by protobuf-c. */
static void test_gnmi_set(void **st)
{
    (void)st;
    Gnmi__Path *path;
    assert_int_equal(yb_gnmi_path_parse("/acl/acl-set[name=A{{iter}}]/config", &path), 0);
    char json[500];
    snprintf(json, sizeof json, "{\"name\":\"A{{iter}}\",\"pad\":\"%0200d\",\"c\":\"{{choice:|%0140d}}\"}",
             0, 0);
    Gnmi__TypedValue tv = GNMI__TYPED_VALUE__INIT;
    tv.value_case = GNMI__TYPED_VALUE__VALUE_JSON_IETF_VAL;
    tv.json_ietf_val.data = (uint8_t *)json;
    tv.json_ietf_val.len = strlen(json);
    Gnmi__Update u = GNMI__UPDATE__INIT;
    u.path = path;
    u.val = &tv;
    Gnmi__Update *us[] = {&u};
    Gnmi__SetRequest req = GNMI__SET_REQUEST__INIT;
    req.n_update = 1;
    req.update = us;
    uint8_t *body = NULL;
    size_t blen = 0;
    assert_int_equal(yb_grpc_append(&req.base, &body, &blen), 0);
    assert_int_equal(yb_grpc_append(&req.base, &body, &blen), 0); /* two messages */
    yb_gnmi_path_free(path);

    yb_request r;
    yb_request_init(&r);
    r.protocol = YB_PROTO_GNMI;
    assert_int_equal(yb_request_set_str(&r.path, "/gnmi.gNMI/Set"), 0);
    yb_request_take_body(&r, body, blen);
    char err[512];
    assert_int_equal(yb_tmpl_check(&r, err, sizeof err), 0);
    yb_tmpl *t = yb_tmpl_new();
    assert_int_equal(yb_tmpl_body(t, &r, err, sizeof err), 0);
    int lens[2] = {0, 0};
    for (uint64_t it = 0; it < 12; it++) {
        assert_int_equal(yb_tmpl_fill(t, &(yb_tmpl_vars){.iter = it, .index = it, .seed = 5}, &out), 0);
        size_t off = 0, n;
        const uint8_t *m;
        for (int k = 0; k < 2; k++) {
            assert_int_equal(yb_grpc_next(out.p, out.len, &off, &m, &n, out.len), 1);
            Gnmi__SetRequest *d = (Gnmi__SetRequest *)yb_gnmi_unpack(&gnmi__set_request__descriptor, m, n);
            assert_non_null(d);
            assert_int_equal(d->n_update, 1);
            char want[32], *ptxt = yb_gnmi_path_to_text(d->update[0]->path, 1);
            snprintf(want, sizeof want, "/acl/acl-set[name=A%llu]/config", (unsigned long long)it);
            assert_string_equal(ptxt, want);
            free(ptxt);
            const ProtobufCBinaryData *j = &d->update[0]->val->json_ietf_val;
            snprintf(want, sizeof want, "{\"name\":\"A%llu\"", (unsigned long long)it);
            assert_memory_equal(j->data, want, strlen(want));
            lens[j->len > 300]++;
            gnmi__set_request__free_unpacked(d, NULL);
        }
        assert_int_equal(off, out.len);
    }
    assert_true(lens[0] && lens[1]);
    yb_tmpl_free(t);

    /* a bad placeholder is named with its message and field */
    memcpy(memmem(r.body, r.body_len, "{{iter}}\"", 9), "{{iten}}", 8);
    assert_int_equal(yb_tmpl_check(&r, err, sizeof err), -1);
    assert_non_null(strstr(err, "body: gRPC message 0 (gnmi.SetRequest): update.val.json_ietf_val: "
                                "placeholder '{{iten}}': unknown"));
    /* placeholders in a body of another RPC: refused */
    assert_int_equal(yb_request_set_str(&r.path, "/other.Svc/Call"), 0);
    assert_int_equal(yb_tmpl_check(&r, err, sizeof err), -1);
    assert_non_null(strstr(err, "need a gNMI Set, Get, Subscribe or Capabilities"));
    yb_request_cleanup(&r);
}

static void test_check_record(void **st)
{
    (void)st;
    yb_request r;
    yb_request_init(&r);
    r.protocol = YB_PROTO_RESTCONF;
    assert_int_equal(yb_request_set_str(&r.path, "/a/{{iter}}"), 0);
    assert_int_equal(yb_request_add_header(&r, "X-A", "{{random:1..2}}", 15), 0);
    assert_int_equal(yb_request_set_body(&r, "{\"n\":\"{{uuid}}\"}", 16), 0);
    char err[512];
    assert_int_equal(yb_tmpl_check(&r, err, sizeof err), 0);
    assert_int_equal(yb_request_add_header(&r, "X-B", "{{random:2..1}}", 15), 0);
    assert_int_equal(yb_tmpl_check(&r, err, sizeof err), -1);
    assert_string_equal(err, "header 'X-B': placeholder '{{random:2..1}}': bad range: random "
                             "takes LO..HI (integers, LO <= HI)");
    yb_request_cleanup(&r);
}

/* A field with no bytes (pointer NULL) compiles to nothing and fills empty. */
static void test_empty(void **st)
{
    (void)st;
    char err[256];
    yb_tmpl *t = yb_tmpl_new();
    assert_non_null(t);
    assert_int_equal(yb_tmpl_text(t, NULL, 0, err, sizeof err), 0);
    assert_int_equal(yb_tmpl_fill(t, &(yb_tmpl_vars){0}, &out), 0);
    assert_int_equal(out.len, 0);
    yb_tmpl_free(t);
    yb_request r;
    yb_request_init(&r);
    r.protocol = YB_PROTO_RESTCONF; /* a record with no body at all */
    assert_int_equal(yb_request_set_str(&r.path, "/a/{{iter}}"), 0);
    assert_null(r.body);
    t = yb_tmpl_new();
    assert_int_equal(yb_tmpl_body(t, &r, err, sizeof err), 0);
    assert_int_equal(yb_tmpl_gaps(t), 0);
    yb_tmpl_free(t);
    yb_request_cleanup(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),   cmocka_unit_test(test_random_range),
        cmocka_unit_test(test_errors),   cmocka_unit_test(test_regions),
        cmocka_unit_test(test_gnmi_set), cmocka_unit_test(test_check_record),
        cmocka_unit_test(test_empty),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(out.p);
    return rc;
}
