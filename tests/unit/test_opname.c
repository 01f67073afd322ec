/* Operation names (engine/opname.h): RESTCONF path templates, hostile
 * paths included, gNMI RPCs and the kind of a Set; and the ops table's
 * cap and merge (stats/ops.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "engine/opname.h"
#include "stats/ops.h"

static const char *tmpl(const char *path)
{
    static char out[YB_OP_NAME_MAX];
    size_t n = yb_op_path_template(path, out, sizeof out);
    assert_int_equal(n, strlen(out));
    return out;
}

static void test_templates(void **st)
{
    (void)st;
    assert_string_equal(tmpl("/restconf/data/openconfig-acl:acl/acl-sets/acl-set=A1,ACL_IPV4"),
                        "/restconf/data/openconfig-acl:acl/acl-sets/acl-set={1},{2}");
    assert_string_equal(tmpl("/restconf/data/a:b/c=x/d=y,z/e"), "/restconf/data/a:b/c={1}/d={1},{2}/e");
    /* a comma inside a key is percent-encoded: one key */
    assert_string_equal(tmpl("/restconf/data/x:l=a%2Cb/leaf"), "/restconf/data/x:l={1}/leaf");
    assert_string_equal(tmpl("/restconf/data/x:l=/leaf"), "/restconf/data/x:l={1}/leaf");
    assert_string_equal(tmpl("/restconf/data/x:l=a,,b"), "/restconf/data/x:l={1},{2},{3}");
    /* query and fragment are not part of the operation */
    assert_string_equal(tmpl("/restconf/data/x:c?depth=2&fields=a"), "/restconf/data/x:c");
    assert_string_equal(tmpl("/restconf/data/x:c#frag"), "/restconf/data/x:c");
    /* empty segments are kept; empty path stays empty */
    assert_string_equal(tmpl("//restconf///data/"), "//restconf///data/");
    assert_string_equal(tmpl(""), "");
    assert_string_equal(tmpl("/"), "/");
    /* percent-escapes outside keys are kept as they are; control bytes become '?' */
    assert_string_equal(tmpl("/restconf/data/x%3Ay"), "/restconf/data/x%3Ay");
    assert_string_equal(tmpl("/a\x01" "b/\xff"), "/a?b/?");
    /* a template placeholder is one key, its '/' and ',' its own */
    assert_string_equal(tmpl("/restconf/data/a:l={{prev.json:/a/0/name}},T/leaf"),
                        "/restconf/data/a:l={1},{2}/leaf");
    assert_string_equal(tmpl("/restconf/data/a:l=N{{counter:start=1,step=2}}/x{{prev.json:/b}}"),
                        "/restconf/data/a:l={1}/x{{prev.json:/b}}");
}

static void test_long_paths(void **st)
{
    (void)st;
    size_t n = 100000;
    char *p = malloc(n + 1);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = i % 10 == 0 ? '/' : 'a';
    p[n] = '\0';
    const char *t = tmpl(p);
    assert_int_equal(strlen(t), YB_OP_NAME_MAX - 1);
    assert_string_equal(t + YB_OP_NAME_MAX - 4, "...");
    /* one list entry with 50000 keys: still bounded */
    memcpy(p, "/l=", 3);
    for (size_t i = 3; i < n; i++)
        p[i] = ',';
    t = tmpl(p);
    assert_int_equal(strlen(t), YB_OP_NAME_MAX - 1);
    assert_memory_equal(t, "/l={1},{2},{3}", 14);
    /* a tiny buffer */
    char small[4];
    assert_int_equal(yb_op_path_template("/abcdef", small, sizeof small), 3);
    assert_string_equal(small, "...");
    free(p);
}

/* A gRPC-framed body of message m[0..len). */
static size_t frame(uint8_t *out, const uint8_t *m, size_t len)
{
    out[0] = 0;
    out[1] = out[2] = 0;
    out[3] = (uint8_t)(len >> 8);
    out[4] = (uint8_t)len;
    memcpy(out + 5, m, len);
    return len + 5;
}

static const char *gnmi_name(const char *rpc, const uint8_t *m, size_t len)
{
    static char out[YB_OP_NAME_MAX];
    static uint8_t body[256];
    char path[64];
    snprintf(path, sizeof path, "/gnmi.gNMI/%s", rpc);
    yb_request r;
    memset(&r, 0, sizeof r);
    r.protocol = YB_PROTO_GNMI;
    r.method = (char *)"POST";
    r.path = path;
    r.body = body;
    r.body_len = m ? frame(body, m, len) : 0;
    yb_op_name(&r, out, sizeof out);
    return out;
}

static void test_gnmi(void **st)
{
    (void)st;
    /* field 1 prefix (len 0), 4 update (len 0) */
    static const uint8_t upd[] = {0x0a, 0x00, 0x22, 0x00, 0x22, 0x00};
    static const uint8_t del[] = {0x12, 0x00};
    static const uint8_t rep[] = {0x1a, 0x00, 0x2a, 0x00}; /* replace + an extension */
    static const uint8_t uni[] = {0x32, 0x00};
    static const uint8_t mixed[] = {0x22, 0x00, 0x12, 0x00};
    static const uint8_t trunc[] = {0x22, 0x05, 0x00};
    assert_string_equal(gnmi_name("Set", upd, sizeof upd), "Set.update");
    assert_string_equal(gnmi_name("Set", del, sizeof del), "Set.delete");
    assert_string_equal(gnmi_name("Set", rep, sizeof rep), "Set.replace");
    assert_string_equal(gnmi_name("Set", uni, sizeof uni), "Set.union_replace");
    assert_string_equal(gnmi_name("Set", mixed, sizeof mixed), "Set");
    assert_string_equal(gnmi_name("Set", trunc, sizeof trunc), "Set");
    assert_string_equal(gnmi_name("Set", NULL, 0), "Set");
    assert_string_equal(gnmi_name("Get", NULL, 0), "Get");
    assert_string_equal(gnmi_name("Subscribe", NULL, 0), "Subscribe");
    assert_string_equal(gnmi_name("Capabilities", NULL, 0), "Capabilities");
    assert_string_equal(gnmi_name("Other", NULL, 0), "POST /gnmi.gNMI/Other");
}

static void test_ops_cap_merge(void **st)
{
    (void)st;
    yb_ops a, b, m;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&m, 0, sizeof m);
    a.cap = b.cap = 2;
    assert_int_equal(yb_ops_index(&a, "x"), 0);
    assert_int_equal(yb_ops_index(&a, "y"), 1);
    assert_int_equal(yb_ops_index(&a, "z"), 2); /* other */
    assert_int_equal(yb_ops_index(&a, "x"), 0);
    yb_ops_record(&a, 0, 1, 10, 5);
    yb_ops_record(&a, 2, 0, 1, -1);
    yb_ops_record(&a, YB_OP_NONE, 1, 1, 1);
    assert_int_equal(yb_ops_index(&b, "w"), 0);
    assert_int_equal(yb_ops_index(&b, "x"), 1);
    yb_ops_record(&b, 0, 1, 1, 7);
    yb_ops_record(&b, 1, 1, 1, 9);
    assert_int_equal(yb_ops_merge(&m, &a), 0);
    assert_int_equal(yb_ops_merge(&m, &b), 0);
    assert_int_equal(yb_ops_cap(&m), 2);
    assert_int_equal(m.n, 2);
    assert_string_equal(m.op[0].name, "x");
    assert_int_equal(m.op[0].count, 2);
    assert_int_equal(m.op[0].ok, 2);
    assert_int_equal(m.op[0].bytes, 11);
    assert_int_equal(yb_hdr_count(m.op[0].e2e), 2);
    assert_int_equal(m.other.count, 2); /* z (error) from a, w from b */
    assert_int_equal(m.other.errors, 1);
    yb_ops_free(&a);
    yb_ops_free(&b);
    yb_ops_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_templates),
        cmocka_unit_test(test_long_paths),
        cmocka_unit_test(test_gnmi),
        cmocka_unit_test(test_ops_cap_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
