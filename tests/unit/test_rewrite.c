/* Unit tests for the rewrite rules (src/corpus/rewrite.c): every rule's
 * syntax and refusals, how each changes a record, and gNMI bodies
 * rewritten through their text form. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus/corpus.h"
#include "corpus/rewrite.h"
#include "gnmi/gnmi_json.h"

static void mkreq(yb_request *r, yb_proto proto, const char *path, const char *body)
{
    yb_request_init(r);
    r->protocol = proto;
    assert_int_equal(yb_request_set_str(&r->method, "PATCH"), 0);
    assert_int_equal(yb_request_set_str(&r->scheme, "https"), 0);
    assert_int_equal(yb_request_set_str(&r->authority, "sw1.lab:443"), 0);
    assert_int_equal(yb_request_set_str(&r->path, path), 0);
    assert_int_equal(yb_request_add_header(r, "Content-Type", "application/yang-data+json", 26), 0);
    assert_int_equal(yb_request_add_header(r, "X-Trace", "a", 1), 0);
    assert_int_equal(yb_request_add_header(r, "x-trace", "b", 1), 0);
    if (body)
        assert_int_equal(yb_request_set_body(r, body, strlen(body)), 0);
}

/* Adds one rule, which must parse. */
static void add(yb_rewrite *rw, yb_rw_kind k, const char *spec)
{
    char err[300] = "";
    int rc = yb_rewrite_add(rw, k, spec, err, sizeof err);
    if (rc)
        fail_msg("'%s' refused: %s", spec, err);
}

/* A rule that must be refused with a message containing want. */
static void refused(yb_rw_kind k, const char *spec, const char *want)
{
    yb_rewrite *rw = yb_rewrite_new();
    char err[300] = "";
    assert_int_equal(yb_rewrite_add(rw, k, spec, err, sizeof err), -1);
    if (!strstr(err, want))
        fail_msg("'%s': message '%s' lacks '%s'", spec, err, want);
    assert_int_equal(yb_rewrite_count(rw), 0);
    yb_rewrite_free(rw);
}

static void test_refusals(void **state)
{
    (void)state;
    refused(YB_RW_PATH, "", "FROM=TO");
    refused(YB_RW_PATH, "=/b", "FROM=TO");
    refused(YB_RW_PATH, "/a=b", "FROM=TO");
    refused(YB_RW_PATH, "a=/b", "FROM=TO");
    refused(YB_RW_PATH, "/a b=/c", "spaces");
    refused(YB_RW_PATH, "/a=/c\x01", "control");
    refused(YB_RW_AUTHORITY, "a", "A=B");
    refused(YB_RW_AUTHORITY, "=b", "A=B");
    refused(YB_RW_AUTHORITY, "a=", "A=B");
    refused(YB_RW_AUTHORITY, "a=b/c", "A=B");
    refused(YB_RW_AUTHORITY, "a=u@b", "A=B");
    refused(YB_RW_SET_HEADER, "X-Foo", "'Name: value'");
    refused(YB_RW_SET_HEADER, ": v", "'Name: value'");
    refused(YB_RW_SET_HEADER, "X Foo: v", "not a header name");
    refused(YB_RW_SET_HEADER, "X-Foo: a\r\nX-Evil: 1", "CR or LF");
    refused(YB_RW_SET_HEADER, "X-Foo: a\nb", "CR or LF");
    refused(YB_RW_SET_HEADER, "Host: sw2", "--map-authority");
    refused(YB_RW_SET_HEADER, "content-length: 3", "framing");
    refused(YB_RW_SET_HEADER, "Authorization: Basic eA==", "credentials");
    refused(YB_RW_SET_HEADER, "password: x", "credentials");
    refused(YB_RW_SET_HEADER, "User-Agent: x", "-H 'User-Agent");
    refused(YB_RW_DROP_HEADER, "", "header name");
    refused(YB_RW_DROP_HEADER, "a:b", "not a header name");
    refused(YB_RW_BODY, "", "s/REGEX/REPLACEMENT/");
    refused(YB_RW_BODY, "a/b/c/", "s/REGEX/REPLACEMENT/");
    refused(YB_RW_BODY, "s", "s/REGEX/REPLACEMENT/");
    refused(YB_RW_BODY, "sabac", "s/REGEX/REPLACEMENT/");
    refused(YB_RW_BODY, "s\\a\\b\\", "s/REGEX/REPLACEMENT/");
    refused(YB_RW_BODY, "s/a/b", "replacement is not closed");
    refused(YB_RW_BODY, "s/a", "expression is not closed");
    refused(YB_RW_BODY, "s//b/", "expression to replace is empty");
    refused(YB_RW_BODY, "s//b/F", "text to replace is empty");
    refused(YB_RW_BODY, "s/a/b/x", "flag 'x' unknown");
    refused(YB_RW_BODY, "s/a/b/gg", "flag 'g' given twice");
    refused(YB_RW_BODY, "s/(a/b/", "bad regular expression");
    refused(YB_RW_BODY, "s/a[/b/", "bad regular expression");
    refused(YB_RW_BODY, "s/(a)/\\2/", "group \\2");
    /* what would make regcomp's memory or regexec's time explode */
    refused(YB_RW_BODY, "s/a++++++++++++++++++++++++++++++++/b/", "stacked");
    refused(YB_RW_BODY, "s/u5+[a-z]*++/b/", "stacked");
    refused(YB_RW_BODY, "s/((a{200}){200})/b/", "expand beyond");
    refused(YB_RW_BODY, "s/(a)\\1/b/", "back-references");
    refused(YB_RW_BODY, "s/a/\\q/", "'\\q'");
    assert_int_equal(yb_rewrite_kind_parse("rewrite-body"), YB_RW_BODY);
    assert_int_equal(yb_rewrite_kind_parse("map-authority"), YB_RW_AUTHORITY);
    assert_int_equal(yb_rewrite_kind_parse("rewrite"), -1);
    /* the cap on rules */
    yb_rewrite *rw = yb_rewrite_new();
    char err[200];
    for (int i = 0; i < YB_REWRITE_MAX_RULES; i++)
        assert_int_equal(yb_rewrite_add(rw, YB_RW_DROP_HEADER, "x", err, sizeof err), 0);
    assert_int_equal(yb_rewrite_add(rw, YB_RW_DROP_HEADER, "x", err, sizeof err), -1);
    yb_rewrite_free(rw);
}

/* Applies rw to in; the result must be accepted. */
static void apply_ok(const yb_rewrite *rw, const yb_request *in, yb_request *out, int *mapped,
                     uint64_t *hits)
{
    char err[600] = "";
    yb_request_init(out);
    if (yb_rewrite_apply(rw, in, out, mapped, hits, err, sizeof err))
        fail_msg("apply failed: %s", err);
}

static void test_path_and_authority(void **state)
{
    (void)state;
    yb_rewrite *rw = yb_rewrite_new();
    /* '=' inside the paths stays in them: split at the first "=/" */
    add(rw, YB_RW_PATH, "/restconf/data/acl/acl-set==/rc/v2/acl-set=");
    add(rw, YB_RW_PATH, "/restconf/data=/restconf/v2/data");
    add(rw, YB_RW_PATH, "/restconf=/never"); /* a table: the first match wins */
    add(rw, YB_RW_AUTHORITY, "SW1.lab:443=sw2.lab:8443");
    add(rw, YB_RW_AUTHORITY, "sw1.lab:443=never");
    uint64_t hits[5] = {0};
    yb_request in, out;
    int mapped = -1;
    mkreq(&in, YB_PROTO_RESTCONF, "/restconf/data/openconfig-acl:acl/acl-sets/acl-set=A,ACL_IPV4",
          NULL);
    apply_ok(rw, &in, &out, &mapped, hits);
    assert_string_equal(out.path, "/restconf/v2/data/openconfig-acl:acl/acl-sets/acl-set=A,ACL_IPV4");
    assert_string_equal(out.authority, "sw2.lab:8443");
    assert_int_equal(mapped, 1);
    yb_request_cleanup(&out);
    assert_int_equal(yb_request_set_str(&in.path, "/restconf/data/acl/acl-set=B"), 0);
    assert_int_equal(yb_request_set_str(&in.authority, "other:443"), 0);
    apply_ok(rw, &in, &out, &mapped, hits);
    assert_string_equal(out.path, "/rc/v2/acl-set=B");
    assert_string_equal(out.authority, "other:443");
    assert_int_equal(mapped, 0);
    yb_request_cleanup(&out);
    assert_int_equal(hits[0], 1);
    assert_int_equal(hits[1], 1);
    assert_int_equal(hits[2], 0);
    assert_int_equal(hits[3], 1);
    assert_int_equal(hits[4], 0);
    char d[100];
    assert_string_equal(yb_rewrite_describe(rw, 1, d, sizeof d),
                        "--rewrite-path '/restconf/data=/restconf/v2/data'");
    yb_request_cleanup(&in);
    yb_rewrite_free(rw);
}

static void test_headers(void **state)
{
    (void)state;
    yb_rewrite *rw = yb_rewrite_new();
    add(rw, YB_RW_SET_HEADER, "x-TRACE:   one");  /* every X-Trace: one, in place of the first */
    add(rw, YB_RW_SET_HEADER, "X-New:");          /* absent: appended, empty value */
    add(rw, YB_RW_DROP_HEADER, "content-type");
    add(rw, YB_RW_DROP_HEADER, "X-Absent");
    uint64_t hits[4] = {0};
    yb_request in, out;
    mkreq(&in, YB_PROTO_RESTCONF, "/a", NULL);
    apply_ok(rw, &in, &out, NULL, hits);
    assert_int_equal(out.n_headers, 2);
    assert_string_equal(out.headers[0].name, "X-Trace");
    assert_int_equal(out.headers[0].value_len, 3);
    assert_memory_equal(out.headers[0].value, "one", 3);
    assert_string_equal(out.headers[1].name, "X-New");
    assert_int_equal(out.headers[1].value_len, 0);
    assert_int_equal(hits[0], 1);
    assert_int_equal(hits[1], 1);
    assert_int_equal(hits[2], 1);
    assert_int_equal(hits[3], 0);
    /* applied again, set-header changes nothing: no hit */
    yb_request again;
    apply_ok(rw, &out, &again, NULL, hits);
    assert_int_equal(hits[0], 1);
    assert_int_equal(hits[1], 1);
    assert_true(yb_request_equal(&again, &out));
    yb_request_cleanup(&again);
    yb_request_cleanup(&out);
    yb_request_cleanup(&in);
    yb_rewrite_free(rw);
}

/* The body of in after one body rule spec. */
static void body_is(const char *spec, const char *body, const char *want)
{
    yb_rewrite *rw = yb_rewrite_new();
    add(rw, YB_RW_BODY, spec);
    yb_request in, out;
    mkreq(&in, YB_PROTO_RESTCONF, "/a", body);
    apply_ok(rw, &in, &out, NULL, NULL);
    char got[256];
    snprintf(got, sizeof got, "%.*s", (int)out.body_len, out.body ? (char *)out.body : "");
    if (strcmp(got, want))
        fail_msg("%s on '%s': got '%s', want '%s'", spec, body, got, want);
    yb_request_cleanup(&out);
    yb_request_cleanup(&in);
    yb_rewrite_free(rw);
}

static void test_bodies(void **state)
{
    (void)state;
    body_is("s/acl/ACL/", "acl acl", "ACL acl");
    body_is("s/acl/ACL/g", "acl acl", "ACL ACL");
    body_is("s/ACL/x/gi", "acl Acl", "x x");
    body_is("s|YB_([0-9]+)|NEW_\\1_&|g", "YB_1,YB_22", "NEW_1_YB_1,NEW_22_YB_22");
    body_is("s/^a/b/g", "aaa", "baa");            /* ^ only at the start */
    body_is("s/x*/-/g", "abc", "-a-b-c-");        /* empty matches, as sed */
    body_is("s/x*/-/g", "xxa", "-a-");
    body_is("s/a.c/[&]/F", "abc a.c", "abc [&]"); /* F: fixed text, & literal */
    body_is("s/A.C/z/Fgi", "a.c A.C", "z z");
    body_is("s,\\,,;,g", "a,b,c", "a;b;c");      /* the delimiter escaped */
    body_is("s/a/\\n\\t\\\\/", "a", "\n\t\\");
    body_is("s/nomatch/x/", "abc", "abc");
    body_is("s/(ab){2,3}c+/[&]/", "abababcc", "[abababcc]"); /* bounded repetition is fine */
    body_is("s/[[:digit:]]+/N/g", "a1b22", "aNbN");
    body_is("s/.*/x/", "", "");                  /* an empty body stays empty */
    /* bodies with NUL bytes are matched whole */
    yb_rewrite *rw = yb_rewrite_new();
    add(rw, YB_RW_BODY, "s/b/B/g");
    yb_request in, out;
    mkreq(&in, YB_PROTO_RESTCONF, "/a", NULL);
    assert_int_equal(yb_request_set_body(&in, "a\0b\0b", 5), 0);
    apply_ok(rw, &in, &out, NULL, NULL);
    assert_int_equal(out.body_len, 5);
    assert_memory_equal(out.body, "a\0B\0B", 5);
    yb_request_cleanup(&out);
    yb_request_cleanup(&in);
    yb_rewrite_free(rw);
}

/* Rewrites whose result cannot be sent are refused, naming the rule. */
static void test_invalid_results(void **state)
{
    (void)state;
    yb_rewrite *rw = yb_rewrite_new();
    add(rw, YB_RW_PATH, "/a=/");
    add(rw, YB_RW_BODY, "s/x/&&&&&&&&&&&&&&&&/gF"); /* 16 bytes for each */
    yb_request in, out;
    char err[600];
    mkreq(&in, YB_PROTO_RESTCONF, "/a", NULL);
    yb_request_init(&out);
    assert_int_equal(yb_rewrite_apply(rw, &in, &out, NULL, NULL, err, sizeof err), 0);
    assert_string_equal(out.path, "/");
    yb_request_cleanup(&out);
    /* a body that would outgrow a corpus entry */
    size_t big = YB_CORPUS_MAX_ENTRY / 16 + 1;
    char *b = malloc(big);
    assert_non_null(b);
    memset(b, 'x', big);
    assert_int_equal(yb_request_set_body(&in, b, big), 0);
    free(b);
    yb_request_init(&out);
    assert_int_equal(yb_rewrite_apply(rw, &in, &out, NULL, NULL, err, sizeof err), -1);
    yb_request_cleanup(&out);
    assert_non_null(strstr(err, "would grow beyond"));
    yb_request_cleanup(&in);
    yb_rewrite_free(rw);
    /* a gRPC body of another service cannot be edited */
    rw = yb_rewrite_new();
    add(rw, YB_RW_BODY, "s/a/b/");
    mkreq(&in, YB_PROTO_HTTP2, "/other.Svc/Call", "\0\0\0\0\1a");
    assert_int_equal(yb_request_set_body(&in, "\0\0\0\0\1a", 6), 0);
    assert_int_equal(yb_request_add_header(&in, "content-type", "application/grpc", 16), 0);
    yb_request_init(&out);
    assert_int_equal(yb_rewrite_apply(rw, &in, &out, NULL, NULL, err, sizeof err), -1);
    yb_request_cleanup(&out);
    assert_non_null(strstr(err, "other than gNMI"));
    yb_request_cleanup(&in);
    yb_rewrite_free(rw);
}

static void gnmi_set(yb_request *r, const char *json)
{
    mkreq(r, YB_PROTO_GNMI, "/gnmi.gNMI/Set", NULL);
    json_error_t je;
    json_t *j = json_loads(json, 0, &je);
    assert_non_null(j);
    uint8_t *body;
    size_t len;
    char err[300];
    assert_int_equal(yb_gnmi_json_to_body("/gnmi.gNMI/Set", j, &body, &len, err, sizeof err), 0);
    json_decref(j);
    yb_request_take_body(r, body, len);
}

static void test_gnmi(void **state)
{
    (void)state;
    yb_request in, out, want;
    gnmi_set(&in, "[{\"SetRequest\":{\"update\":[{\"path\":\"/acl/acl-sets/acl-set[name=A]\","
                  "\"val\":{\"json_ietf_val\":{\"name\":\"A\"}}}]}}]");
    gnmi_set(&want, "[{\"SetRequest\":{\"update\":[{\"path\":\"/acl/acl-sets/acl-set[name=B7]\","
                    "\"val\":{\"json_ietf_val\":{\"name\":\"B7\"}}}]}}]");
    yb_rewrite *rw = yb_rewrite_new();
    add(rw, YB_RW_BODY, "s/name=A]/name=B7]/");  /* a path element */
    add(rw, YB_RW_BODY, "s/\"name\":\"A\"/\"name\":\"B7\"/F"); /* a JSON value */
    uint64_t hits[2] = {0};
    apply_ok(rw, &in, &out, NULL, hits);
    assert_int_equal(out.body_len, want.body_len);
    assert_memory_equal(out.body, want.body, want.body_len);
    assert_int_equal(hits[0], 1);
    assert_int_equal(hits[1], 1);
    yb_request_cleanup(&out);
    yb_rewrite_free(rw);
    /* text that is no longer JSON, or no longer a SetRequest */
    char err[600];
    rw = yb_rewrite_new();
    add(rw, YB_RW_BODY, "s/}}}]}}]/}/");
    yb_request_init(&out);
    assert_int_equal(yb_rewrite_apply(rw, &in, &out, NULL, NULL, err, sizeof err), -1);
    yb_request_cleanup(&out);
    assert_non_null(strstr(err, "is not JSON"));
    yb_rewrite_free(rw);
    rw = yb_rewrite_new();
    add(rw, YB_RW_BODY, "s/\"update\"/\"updte\"/");
    yb_request_init(&out);
    assert_int_equal(yb_rewrite_apply(rw, &in, &out, NULL, NULL, err, sizeof err), -1);
    yb_request_cleanup(&out);
    assert_non_null(strstr(err, "does not encode"));
    yb_rewrite_free(rw);
    /* a gNMI body that does not decode has no text form: refused when a
     * rule would change its bytes, left alone when none would */
    assert_int_equal(yb_request_set_body(&in, "\0\0\0\0\2\377\377", 7), 0);
    rw = yb_rewrite_new();
    add(rw, YB_RW_BODY, "s/nowhere/b/");
    apply_ok(rw, &in, &out, NULL, NULL);
    assert_int_equal(out.body_len, 7);
    yb_request_cleanup(&out);
    yb_rewrite_free(rw);
    rw = yb_rewrite_new();
    add(rw, YB_RW_BODY, "s/\377/b/F");
    yb_request_init(&out);
    assert_int_equal(yb_rewrite_apply(rw, &in, &out, NULL, NULL, err, sizeof err), -1);
    yb_request_cleanup(&out);
    assert_non_null(strstr(err, "has no text form"));
    yb_rewrite_free(rw);
    yb_request_cleanup(&in);
    yb_request_cleanup(&want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_path_and_authority),
        cmocka_unit_test(test_headers),
        cmocka_unit_test(test_bodies),
        cmocka_unit_test(test_invalid_results),
        cmocka_unit_test(test_gnmi),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
