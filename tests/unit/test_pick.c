/* Values a chain step takes from the previous response (tmpl/pick.h): JSON
 * pointers (RFC 6901 escapes, array indices, members that are not there),
 * header fields (any case, first of several, trimmed), gNMI GetResponse
 * updates (prefix + path, JSON and scalar values), the values a step
 * refuses (empty, control characters, too long), the syntax checks, and a
 * template filled with the extracted values. */
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
#include "tmpl/pick.h"
#include "tmpl/tmpl.h"

static char why[512];

/* Extracts the one placeholder {{inner}} from rs: returns its value
 * (static), or NULL with why set. */
static const char *pick1(const char *inner, const yb_pick_resp *rs)
{
    static char val[YB_PICK_VALUE_MAX + 1];
    char path[600], err[300];
    snprintf(path, sizeof path, "/x{{%s}}", inner);
    yb_request r;
    memset(&r, 0, sizeof r);
    r.path = path;
    yb_pick *pk = NULL;
    assert_int_equal(yb_pick_compile(&r, &pk, err, sizeof err), 0);
    assert_non_null(pk);
    yb_pick_vals v;
    memset(&v, 0, sizeof v);
    why[0] = 0;
    int rc = yb_pick_extract(pk, rs, &v, why, sizeof why);
    const char *res = NULL;
    if (rc == 0) {
        assert_int_equal(v.n, 1);
        memcpy(val, v.got[0].p, v.got[0].n);
        val[v.got[0].n] = 0;
        res = val;
    } else {
        assert_int_equal(rc, -ENOENT);
        assert_true(why[0]);
    }
    yb_pick_vals_free(&v);
    yb_pick_free(pk);
    return res;
}

static yb_pick_resp json_body(const char *b)
{
    return (yb_pick_resp){.body = (const uint8_t *)b, .body_len = strlen(b), .body_whole = 1};
}

static void test_json(void **st)
{
    (void)st;
    yb_pick_resp rs = json_body("{\"session\":{\"token\":\"abc.def\",\"ttl\":60,\"ok\":true},"
                                "\"a/b\":{\"m~n\":\"esc\"},\"l\":[\"x\",{\"y\":null},[1,2]],"
                                "\"\":\"empty key\",\"e\":\"\",\"c\":\"a\\nb\"}");
    assert_string_equal(pick1("prev.json:/session/token", &rs), "abc.def");
    assert_string_equal(pick1("prev.json:/session/ttl", &rs), "60");
    assert_string_equal(pick1("prev.json:/session/ok", &rs), "true");
    assert_string_equal(pick1("prev.json:/session", &rs), "{\"token\":\"abc.def\",\"ttl\":60,\"ok\":true}");
    assert_string_equal(pick1("prev.json:/a~1b/m~0n", &rs), "esc");
    assert_string_equal(pick1("prev.json:/l/0", &rs), "x");
    assert_string_equal(pick1("prev.json:/l/2", &rs), "[1,2]");
    assert_string_equal(pick1("prev.json:/l/1/y", &rs), "null");
    assert_string_equal(pick1("prev.json:/", &rs), "empty key");
    /* what is not there, said without the values */
    assert_null(pick1("prev.json:/session/nope", &rs));
    assert_string_equal(why, "{{prev.json:/session/nope}}: no member 'nope' at '/session' in "
                             "the previous response's body");
    assert_null(pick1("prev.json:/l/3", &rs));
    assert_string_equal(why, "{{prev.json:/l/3}}: index 3 beyond the 3 items of the array at "
                             "'/l' in the previous response's body");
    assert_null(pick1("prev.json:/l/01", &rs));
    assert_non_null(strstr(why, "'01' is not an array index"));
    assert_null(pick1("prev.json:/l/-", &rs));
    assert_non_null(strstr(why, "'-' is not an array index"));
    assert_null(pick1("prev.json:/session/token/x", &rs));
    assert_string_equal(why, "{{prev.json:/session/token/x}}: '/session/token' is a string, not "
                             "an object or array, in the previous response's body");
    assert_null(strstr(why, "abc.def"));
    assert_null(pick1("prev.json:/e", &rs));
    assert_string_equal(why, "{{prev.json:/e}}: the value is empty (not sent)");
    assert_null(pick1("prev.json:/c", &rs));
    assert_string_equal(why, "{{prev.json:/c}}: the value holds a control character (not sent)");
    /* a body that is not JSON, one not kept whole, a gRPC message */
    yb_pick_resp bad = json_body("<html>");
    assert_null(pick1("prev.json:/a", &bad));
    assert_non_null(strstr(why, "the previous response's body (6 bytes) is not JSON"));
    bad.body_whole = 0;
    assert_null(pick1("prev.json:/a", &bad));
    assert_non_null(strstr(why, "was not kept whole"));
    rs.grpc = 1;
    assert_null(pick1("prev.json:/a", &rs));
    assert_non_null(strstr(why, "is a gRPC message, not a JSON body"));
}

static void test_long_value(void **st)
{
    (void)st;
    size_t n = YB_PICK_VALUE_MAX + 1;
    char *b = malloc(n + 20);
    assert_non_null(b);
    memcpy(b, "{\"t\":\"", 6);
    memset(b + 6, 'a', n);
    memcpy(b + 6 + n, "\"}", 3);
    yb_pick_resp rs = json_body(b);
    assert_null(pick1("prev.json:/t", &rs));
    assert_non_null(strstr(why, "the value is over 16384 bytes (16385)"));
    b[6 + n - 1] = '"';
    b[6 + n] = '}';
    b[6 + n + 1] = 0; /* 16384 bytes: fits */
    rs = json_body(b);
    const char *v = pick1("prev.json:/t", &rs);
    assert_non_null(v);
    assert_int_equal(strlen(v), YB_PICK_VALUE_MAX);
    free(b);
}

static void test_header(void **st)
{
    (void)st;
    const char *h = "content-type: application/json\nx-auth-token:   t0k3n \t\n"
                    "x-auth-token: second\nx-empty: \n";
    yb_pick_resp rs = {.head = (const uint8_t *)h, .head_len = strlen(h)};
    assert_string_equal(pick1("prev.header:X-Auth-Token", &rs), "t0k3n");
    assert_string_equal(pick1("prev.header:content-type", &rs), "application/json");
    assert_null(pick1("prev.header:X-Auth", &rs));
    assert_string_equal(why, "{{prev.header:X-Auth}}: no header 'x-auth' in the previous response");
    assert_null(pick1("prev.header:x-empty", &rs));
    assert_non_null(strstr(why, "the value is empty"));
    yb_pick_resp none = {0};
    assert_null(pick1("prev.header:a", &none));
}

/* A GetResponse with a prefix /a and updates b[k=1] (JSON), c (an int)
 * and d (a string). */
static void test_gnmi(void **st)
{
    (void)st;
    Gnmi__Path *prefix = NULL, *p1 = NULL, *p2 = NULL;
    assert_int_equal(yb_gnmi_path_parse("/a", &prefix), 0);
    assert_int_equal(yb_gnmi_path_parse("/b[k=1]", &p1), 0);
    assert_int_equal(yb_gnmi_path_parse("/c", &p2), 0);
    Gnmi__TypedValue v1 = GNMI__TYPED_VALUE__INIT, v2 = GNMI__TYPED_VALUE__INIT;
    const char *js = "{\"acl-set\":[{\"name\":\"N1\"}]}";
    v1.value_case = GNMI__TYPED_VALUE__VALUE_JSON_IETF_VAL;
    v1.json_ietf_val.data = (uint8_t *)js;
    v1.json_ietf_val.len = strlen(js);
    v2.value_case = GNMI__TYPED_VALUE__VALUE_INT_VAL;
    v2.int_val = -42;
    Gnmi__Update u1 = GNMI__UPDATE__INIT, u2 = GNMI__UPDATE__INIT;
    u1.path = p1;
    u1.val = &v1;
    u2.path = p2;
    u2.val = &v2;
    Gnmi__Path *p3 = NULL;
    assert_int_equal(yb_gnmi_path_parse("/d", &p3), 0);
    Gnmi__TypedValue v3 = GNMI__TYPED_VALUE__INIT;
    v3.value_case = GNMI__TYPED_VALUE__VALUE_STRING_VAL;
    v3.string_val = "up";
    Gnmi__Update u3 = GNMI__UPDATE__INIT;
    u3.path = p3;
    u3.val = &v3;
    Gnmi__Update *ups[] = {&u1, &u2, &u3};
    Gnmi__Notification nf = GNMI__NOTIFICATION__INIT;
    nf.prefix = prefix;
    nf.n_update = 3;
    nf.update = ups;
    Gnmi__Notification *nfs[] = {&nf};
    Gnmi__GetResponse gr = GNMI__GET_RESPONSE__INIT;
    gr.n_notification = 1;
    gr.notification = nfs;
    size_t n = protobuf_c_message_get_packed_size(&gr.base);
    uint8_t *buf = malloc(n);
    assert_non_null(buf);
    protobuf_c_message_pack(&gr.base, buf);
    yb_pick_resp rs = {.body = buf, .body_len = n, .body_whole = 1, .grpc = 1};
    assert_string_equal(pick1("prev.gnmi:/a/b[k=1]#/acl-set/0/name", &rs), "N1");
    assert_string_equal(pick1("prev.gnmi:/a/b[k=1]", &rs), "{\"acl-set\":[{\"name\":\"N1\"}]}");
    assert_string_equal(pick1("prev.gnmi:/a/c", &rs), "-42");
    assert_string_equal(pick1("prev.gnmi:/a/d", &rs), "up");
    assert_null(pick1("prev.gnmi:/a/c#/x", &rs));
    assert_non_null(strstr(why, "a scalar"));
    assert_null(pick1("prev.gnmi:/b[k=1]", &rs));
    assert_string_equal(why, "{{prev.gnmi:/b[k=1]}}: no update at /b[k=1] in the previous "
                             "GetResponse (3 updates)");
    assert_null(pick1("prev.gnmi:/a/b[k=1]#/acl-set/1", &rs));
    assert_non_null(strstr(why, "in the update's JSON value"));
    yb_pick_resp plain = json_body("{}");
    assert_null(pick1("prev.gnmi:/a/c", &plain));
    assert_non_null(strstr(why, "is not a gNMI response"));
    free(buf);
    yb_gnmi_path_free(prefix);
    yb_gnmi_path_free(p1);
    yb_gnmi_path_free(p2);
    yb_gnmi_path_free(p3);
}

static void test_check(void **st)
{
    (void)st;
    static const char *const good[] = {"prev.json:", "prev.json:/a/~0~1", "prev.header:x-y_z",
                                       "prev.gnmi:/a/b[k=#]#/x", "prev.gnmi:/"};
    static const char *const bad[] = {"prev.json:a",     "prev.json:/~",      "prev.json:/~2",
                                      "prev.header:",    "prev.header:a b",   "prev.gnmi:",
                                      "prev.gnmi:a[b",   "prev.gnmi:/a#b",    "prev.body:/a",
                                      "prev.gnmi:#/a"};
    const char *w;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        assert_int_equal(yb_pick_check(good[i], strlen(good[i]), &w), 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        w = NULL;
        assert_int_equal(yb_pick_check(bad[i], strlen(bad[i]), &w), -1);
        assert_non_null(w);
    }
}

/* A record's picks: distinct ones once, from every field; a template
 * filled with their values. */
static void test_record(void **st)
{
    (void)st;
    yb_header h[] = {{"Authorization", (uint8_t *)"Bearer {{prev.json:/t}}", 23}};
    const char *body = "{\"a\":\"{{prev.json:/t}}\",\"b\":\"{{prev.header:x}}\"}";
    yb_request r;
    memset(&r, 0, sizeof r);
    r.path = "/p/{{prev.json:/n}}";
    r.headers = h;
    r.n_headers = 1;
    r.body = (uint8_t *)body;
    r.body_len = strlen(body);
    assert_true(yb_pick_wanted(&r));
    yb_pick *pk = NULL;
    char err[300];
    assert_int_equal(yb_pick_compile(&r, &pk, err, sizeof err), 0);
    const char *hd = "x: hv\n";
    yb_pick_resp rs = json_body("{\"t\":\"tok\",\"n\":7}");
    rs.head = (const uint8_t *)hd;
    rs.head_len = strlen(hd);
    yb_pick_vals v;
    memset(&v, 0, sizeof v);
    assert_int_equal(yb_pick_extract(pk, &rs, &v, why, sizeof why), 0);
    assert_int_equal(v.n, 3); /* /n, /t (twice written), x */
    yb_tmpl *t = yb_tmpl_new();
    assert_non_null(t);
    assert_int_equal(yb_tmpl_text(t, body, strlen(body), err, sizeof err), 0);
    yb_tmpl_buf out = {0};
    yb_tmpl_vars tv = {.got = v.got, .n_got = v.n};
    assert_int_equal(yb_tmpl_fill(t, &tv, &out), 0);
    assert_int_equal(out.len, strlen("{\"a\":\"tok\",\"b\":\"hv\"}"));
    assert_memory_equal(out.p, "{\"a\":\"tok\",\"b\":\"hv\"}", out.len);
    tv.n_got = 0; /* a value not given is an error, never an empty fill */
    assert_int_equal(yb_tmpl_fill(t, &tv, &out), -ENOENT);
    free(out.p);
    yb_tmpl_free(t);
    yb_pick_vals_free(&v);
    yb_pick_free(pk);
    /* a record without any */
    r.path = "/p";
    r.n_headers = 0;
    r.body_len = 0;
    assert_false(yb_pick_wanted(&r));
    assert_int_equal(yb_pick_compile(&r, &pk, err, sizeof err), 0);
    assert_null(pk);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json),   cmocka_unit_test(test_long_value),
        cmocka_unit_test(test_header), cmocka_unit_test(test_gnmi),
        cmocka_unit_test(test_check),  cmocka_unit_test(test_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
