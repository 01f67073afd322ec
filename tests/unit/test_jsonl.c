/* Unit tests for the JSON-lines view of corpus records
 * (src/corpus/jsonl.c): round trips and error messages. */
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
#include "corpus/jsonl.h"
#include "gnmi/gnmi_msg.h"

static void set_strs(yb_request *r, const char *method, const char *scheme, const char *auth,
                     const char *path)
{
    assert_int_equal(yb_request_set_str(&r->method, method), 0);
    assert_int_equal(yb_request_set_str(&r->scheme, scheme), 0);
    assert_int_equal(yb_request_set_str(&r->authority, auth), 0);
    assert_int_equal(yb_request_set_str(&r->path, path), 0);
}

/* r -> JSON object -> text -> JSON object -> request; must equal r.
 * Returns the JSON object (caller decrefs) for extra checks. */
static json_t *roundtrip(const yb_request *r)
{
    json_t *j = yb_jsonl_from_request(r);
    assert_non_null(j);
    char *text = json_dumps(j, JSON_COMPACT);
    assert_non_null(text);
    assert_null(strchr(text, '\n')); /* one line */
    json_error_t je;
    json_t *back = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!back)
        fail_msg("cannot parse own output: %s", je.text);
    yb_request q;
    yb_request_init(&q);
    char err[256] = "";
    if (yb_jsonl_to_request(back, &q, err, sizeof err) != 0)
        fail_msg("to_request: %s", err);
    assert_true(yb_request_equal(&q, r));
    yb_request_cleanup(&q);
    json_decref(back);
    return j;
}

static void test_text_roundtrip(void **state)
{
    (void)state;
    yb_request r;
    yb_request_init(&r);
    r.protocol = YB_PROTO_RESTCONF;
    set_strs(&r, "PATCH", "https", "sw1:443", "/restconf/data/openconfig-acl:acl/acl-sets");
    assert_int_equal(yb_request_add_header(&r, "Content-Type", "application/yang-data+json", 26),
                     0);
    assert_int_equal(yb_request_add_header(&r, "X-Unicode", "caf\xc3\xa9 \xe2\x9c\x93", 9), 0);
    assert_int_equal(yb_request_add_header(&r, "X-Empty", "", 0), 0);
    const char *body = "{\n    \"a\": \"\xc3\xa9\\\"q\\\"\", \"tab\": \"\t\"\n}";
    assert_int_equal(yb_request_set_body(&r, body, strlen(body)), 0);
    r.timestamp_ns = 123456789012345ull;
    r.conn_id = 7;
    r.conn_order = 3;
    r.expected_status = 204;
    json_t *j = roundtrip(&r);
    /* Text forms, not base64. */
    assert_true(json_is_string(json_object_get(j, "body")));
    assert_null(json_object_get(j, "body_base64"));
    assert_string_equal(json_string_value(json_object_get(j, "body")), body);
    json_t *h1 = json_array_get(json_object_get(j, "headers"), 1);
    assert_string_equal(json_string_value(json_object_get(h1, "name")), "X-Unicode");
    assert_string_equal(json_string_value(json_object_get(h1, "value")), "caf\xc3\xa9 \xe2\x9c\x93");
    assert_null(json_object_get(h1, "value_base64"));
    assert_string_equal(json_string_value(json_object_get(j, "protocol")), "restconf");
    assert_int_equal(json_integer_value(json_object_get(j, "expected_status")), 204);
    /* Unknown gRPC status: key absent. */
    assert_null(json_object_get(j, "expected_grpc_status"));
    json_decref(j);
    yb_request_cleanup(&r);
}

static void test_binary_roundtrip(void **state)
{
    (void)state;
    yb_request r;
    yb_request_init(&r);
    r.protocol = YB_PROTO_GNMI;
    set_strs(&r, "POST", "http", "[::1]:8080", "/gnmi.gNMI/Set");
    static const uint8_t v[] = {0xff, 0xfe, 'a', 0x80};
    assert_int_equal(yb_request_add_header(&r, "x-bin", v, sizeof v), 0);
    assert_int_equal(yb_request_add_header(&r, "te", "trailers", 8), 0);
    static const uint8_t b[] = {0, 0, 0, 0, 3, 0x0a, 0x01, 0x00};
    assert_int_equal(yb_request_set_body(&r, b, sizeof b), 0);
    r.expected_status = 200;
    r.expected_grpc = 0;
    json_t *j = roundtrip(&r);
    assert_null(json_object_get(j, "body"));
    assert_string_equal(json_string_value(json_object_get(j, "body_base64")), "AAAAAAMKAQA=");
    json_t *h0 = json_array_get(json_object_get(j, "headers"), 0);
    assert_null(json_object_get(h0, "value"));
    assert_string_equal(json_string_value(json_object_get(h0, "value_base64")), "//5hgA==");
    json_t *h1 = json_array_get(json_object_get(j, "headers"), 1);
    assert_string_equal(json_string_value(json_object_get(h1, "value")), "trailers");
    /* gRPC status 0 (OK) is kept, distinct from unknown. */
    assert_int_equal(json_integer_value(json_object_get(j, "expected_grpc_status")), 0);
    json_decref(j);

    /* the record's own accepted statuses, in order */
    r.accept_status[0] = 409;
    r.accept_status[1] = 404;
    r.n_accept_status = 2;
    r.accept_grpc[0] = 6;
    r.n_accept_grpc = 1;
    j = roundtrip(&r);
    json_t *acc = json_object_get(j, "accept_status");
    assert_int_equal(json_array_size(acc), 2);
    assert_int_equal(json_integer_value(json_array_get(acc, 0)), 409);
    assert_int_equal(json_integer_value(json_array_get(acc, 1)), 404);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(j, "accept_grpc_status"), 0)),
                     6);
    json_decref(j);
    r.accept_status[1] = 1000; /* out of range: no corpus takes it */
    assert_non_null(yb_request_problem(&r));
    r.n_accept_status = 0;
    r.n_accept_grpc = 17;
    assert_non_null(yb_request_problem(&r));
    r.n_accept_grpc = 0;

    /* A body that is UTF-8 except for one NUL also goes to base64. */
    assert_int_equal(yb_request_set_body(&r, "ab\0cd", 5), 0);
    r.expected_grpc = 16;
    j = roundtrip(&r);
    assert_string_equal(json_string_value(json_object_get(j, "body_base64")), "YWIAY2Q=");
    json_decref(j);

    /* Truncated UTF-8 sequence. */
    assert_int_equal(yb_request_set_body(&r, "caf\xc3", 4), 0);
    j = roundtrip(&r);
    assert_non_null(json_object_get(j, "body_base64"));
    json_decref(j);
    yb_request_cleanup(&r);
}

static void test_empty_and_minimal(void **state)
{
    (void)state;
    yb_request r;
    yb_request_init(&r);
    r.protocol = YB_PROTO_HTTP1;
    set_strs(&r, "GET", "", "", "/");
    json_t *j = roundtrip(&r);
    assert_string_equal(json_string_value(json_object_get(j, "body")), "");
    assert_int_equal(json_array_size(json_object_get(j, "headers")), 0);
    json_decref(j);
    yb_request_cleanup(&r);

    /* Only the required keys: defaults for the rest. */
    json_error_t je;
    json_t *o = json_loads("{\"protocol\":\"http2\",\"method\":\"POST\",\"path\":\"/a.B/C\"}", 0, &je);
    assert_non_null(o);
    yb_request q;
    yb_request_init(&q);
    char err[256];
    assert_int_equal(yb_jsonl_to_request(o, &q, err, sizeof err), 0);
    assert_int_equal(q.protocol, YB_PROTO_HTTP2);
    assert_string_equal(q.scheme, "");
    assert_int_equal(q.n_headers, 0);
    assert_int_equal(q.body_len, 0);
    assert_int_equal(q.expected_status, 0);
    assert_int_equal(q.expected_grpc, -1);
    yb_request_cleanup(&q);
    json_decref(o);

    /* A base64 value that decodes to nothing. */
    o = json_loads("{\"protocol\":\"gnmi\",\"method\":\"POST\",\"path\":\"/x\",\"body_base64\":\"\","
                   "\"headers\":[{\"name\":\"a\",\"value_base64\":\"\"}]}",
                   0, &je);
    assert_non_null(o);
    yb_request_init(&q);
    assert_int_equal(yb_jsonl_to_request(o, &q, err, sizeof err), 0);
    assert_int_equal(q.body_len, 0);
    assert_int_equal(q.n_headers, 1);
    assert_int_equal(q.headers[0].value_len, 0);
    yb_request_cleanup(&q);
    json_decref(o);
}

static void test_header_roundtrip(void **state)
{
    (void)state;
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    assert_int_equal(yb_request_set_str(&h.producer, "yangblast 0.1.0 capture"), 0);
    assert_int_equal(yb_request_set_str(&h.source, "capture -r sw1.pcapng \xc3\xa9"), 0);
    assert_int_equal(yb_corpus_header_add_redaction(&h, "authorization"), 0);
    assert_int_equal(yb_corpus_header_add_redaction(&h, "password"), 0);
    h.created_unix_ns = 1767225600000000001ull;
    json_t *j = yb_jsonl_from_header(&h);
    assert_non_null(j);
    json_t *inner = json_object_get(j, YB_JSONL_HEADER_KEY);
    assert_true(json_is_object(inner));
    assert_int_equal(json_integer_value(json_object_get(inner, "format_version")),
                     YB_CORPUS_FORMAT_VERSION);
    char *text = json_dumps(j, JSON_COMPACT);
    assert_non_null(text);
    assert_true(strncmp(text, "{\"yangblast_corpus\":{", 21) == 0);
    json_t *back = json_loads(text, 0, NULL);
    free(text);
    assert_non_null(back);
    yb_corpus_header g;
    yb_corpus_header_init(&g);
    char err[256];
    if (yb_jsonl_to_header(back, &g, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_true(g.created_unix_ns == h.created_unix_ns);
    assert_string_equal(g.producer, h.producer);
    assert_string_equal(g.source, h.source);
    assert_int_equal(g.n_redactions, 2);
    assert_string_equal(g.redactions[0], "authorization");
    assert_string_equal(g.redactions[1], "password");
    yb_corpus_header_cleanup(&g);
    json_decref(back);
    json_decref(j);
    yb_corpus_header_cleanup(&h);

    /* Header line errors. */
    static const struct {
        const char *json, *needle;
    } bad[] = {
        {"{\"yangblast_corpus\": 5}", "yangblast_corpus"},
        {"{\"yangblast_corpus\": {\"created_unix_ns\": -1}}", "created_unix_ns"},
        {"{\"yangblast_corpus\": {\"producer\": 3}}", "producer"},
        {"{\"yangblast_corpus\": {\"source\": null}}", "source"},
        {"{\"yangblast_corpus\": {\"redactions\": \"authorization\"}}", "redactions"},
        {"{\"yangblast_corpus\": {\"redactions\": [1]}}", "redactions"},
        /* Unknown keys are refused as in records (a header line edited by
         * a jq filter meant for records must not pass silently). */
        {"{\"yangblast_corpus\": {\"sourse\": \"x\"}}", "sourse"},
        {"{\"yangblast_corpus\": {}, \"grpc\": []}", "grpc"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *o = json_loads(bad[i].json, 0, NULL);
        assert_non_null(o);
        yb_corpus_header_init(&g);
        err[0] = 0;
        if (yb_jsonl_to_header(o, &g, err, sizeof err) != -1)
            fail_msg("accepted: %s", bad[i].json);
        if (!strstr(err, bad[i].needle))
            fail_msg("%s: message \"%s\" does not name \"%s\"", bad[i].json, err, bad[i].needle);
        yb_corpus_header_cleanup(&g);
        json_decref(o);
    }
}

/* Each bad record must be refused with a message naming the key. */
static void test_bad_input_names_key(void **state)
{
    (void)state;
#define BASE "\"protocol\":\"restconf\",\"method\":\"GET\",\"path\":\"/x\""
    static const struct {
        const char *json, *needle;
    } bad[] = {
        {"{" BASE ",\"bogus\":1}", "\"bogus\""},
        {"{" BASE ",\"Body\":\"x\"}", "\"Body\""},
        {"{\"method\":\"GET\",\"path\":\"/x\"}", "\"protocol\""},
        {"{\"protocol\":\"restconf\",\"path\":\"/x\"}", "\"method\""},
        {"{\"protocol\":\"restconf\",\"method\":\"GET\"}", "\"path\""},
        {"{\"protocol\":\"spdy\",\"method\":\"GET\",\"path\":\"/x\"}", "\"protocol\""},
        {"{\"protocol\":\"unspecified\",\"method\":\"GET\",\"path\":\"/x\"}", "\"protocol\""},
        {"{\"protocol\":2,\"method\":\"GET\",\"path\":\"/x\"}", "\"protocol\""},
        {"{\"protocol\":\"restconf\",\"method\":7,\"path\":\"/x\"}", "\"method\""},
        {"{\"protocol\":\"restconf\",\"method\":\"GET\",\"path\":[\"/x\"]}", "\"path\""},
        {"{" BASE ",\"scheme\":true}", "\"scheme\""},
        {"{" BASE ",\"authority\":null}", "\"authority\""},
        {"{\"protocol\":\"restconf\",\"method\":\"G\\u0000T\",\"path\":\"/x\"}", "\"method\""},
        {"{" BASE ",\"body\":12}", "\"body\""},
        {"{" BASE ",\"body_base64\":\"not base64!\"}", "\"body_base64\""},
        {"{" BASE ",\"body_base64\":\"QUJD=\"}", "\"body_base64\""},
        {"{" BASE ",\"body_base64\":42}", "\"body_base64\""},
        {"{" BASE ",\"body\":\"x\",\"body_base64\":\"eA==\"}", "\"body_base64\""},
        {"{" BASE ",\"headers\":{}}", "\"headers\""},
        {"{" BASE ",\"headers\":[5]}", "headers[0]"},
        {"{" BASE ",\"headers\":[{\"value\":\"v\"}]}", "headers[0]"},
        {"{" BASE ",\"headers\":[{\"name\":\"a\",\"value\":\"v\"},{\"name\":\"b\",\"value\":1}]}",
         "headers[1]"},
        {"{" BASE ",\"headers\":[{\"name\":\"a\",\"value_base64\":\"%%%\"}]}", "value_base64"},
        {"{" BASE ",\"timestamp_ns\":-1}", "\"timestamp_ns\""},
        {"{" BASE ",\"timestamp_ns\":1.5}", "\"timestamp_ns\""},
        {"{" BASE ",\"timestamp_ns\":\"1\"}", "\"timestamp_ns\""},
        {"{" BASE ",\"conn_id\":-5}", "\"conn_id\""},
        {"{" BASE ",\"conn_order\":4294967296}", "\"conn_order\""},
        {"{" BASE ",\"expected_status\":1000}", "\"expected_status\""},
        {"{" BASE ",\"expected_status\":-1}", "\"expected_status\""},
        {"{" BASE ",\"expected_grpc_status\":17}", "\"expected_grpc_status\""},
        {"{" BASE ",\"expected_grpc_status\":-1}", "\"expected_grpc_status\""},
        {"[1,2]", "object"},
    };
#undef BASE
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_error_t je;
        json_t *o = json_loads(bad[i].json, JSON_ALLOW_NUL, &je);
        if (!o)
            fail_msg("test JSON %zu does not parse: %s", i, je.text);
        yb_request q;
        yb_request_init(&q);
        char err[256] = "";
        int rc = yb_jsonl_to_request(o, &q, err, sizeof err);
        if (rc != -1)
            fail_msg("accepted: %s", bad[i].json);
        if (!strstr(err, bad[i].needle))
            fail_msg("%s: message \"%s\" does not name %s", bad[i].json, err, bad[i].needle);
        yb_request_cleanup(&q);
        json_decref(o);
    }

    /* Edge values that are in range are accepted. */
    json_t *o = json_loads("{\"protocol\":\"gnmi\",\"method\":\"POST\",\"path\":\"/x\","
                           "\"conn_order\":4294967295,\"expected_status\":999,"
                           "\"expected_grpc_status\":16,\"timestamp_ns\":9223372036854775807}",
                           0, NULL);
    assert_non_null(o);
    yb_request q;
    yb_request_init(&q);
    char err[256];
    assert_int_equal(yb_jsonl_to_request(o, &q, err, sizeof err), 0);
    assert_int_equal(q.conn_order, UINT32_MAX);
    assert_int_equal(q.expected_status, 999);
    assert_int_equal(q.expected_grpc, 16);
    assert_true(q.timestamp_ns == (uint64_t)INT64_MAX);
    yb_request_cleanup(&q);
    json_decref(o);
}

/* Records synthesized elsewhere in the tree look like this; a sample of
 * mixed records must survive cat -> import unchanged. */
static void test_many_roundtrips(void **state)
{
    (void)state;
    uint64_t s = 1;
    for (int n = 0; n < 300; n++) {
        yb_request r;
        yb_request_init(&r);
        r.protocol = (yb_proto)(1 + n % 4);
        set_strs(&r, n % 3 ? "POST" : "GET", n % 2 ? "https" : "http", "h", "/p");
        size_t len = (size_t)(n * 7 % 61);
        uint8_t body[64];
        for (size_t i = 0; i < len; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            body[i] = (uint8_t)(n % 2 ? (s >> 56) : 'a' + (s >> 59));
        }
        assert_int_equal(yb_request_set_body(&r, body, len), 0);
        assert_int_equal(yb_request_add_header(&r, "x", body, len > 8 ? 8 : len), 0);
        r.expected_grpc = n % 18 - 1;
        r.expected_status = (uint32_t)(n % 2 ? 0 : 200 + n);
        r.timestamp_ns = (uint64_t)n * 1000003u;
        r.conn_id = (uint64_t)n / 10;
        r.conn_order = (uint32_t)n % 10;
        /* Header values may not hold CR, LF or NUL, but JSON does not care. */
        json_decref(roundtrip(&r));
        yb_request_cleanup(&r);
    }
}

/* A gNMI Set record whose body is req framed (plus extra raw bytes). */
static void gnmi_record(yb_request *r, const ProtobufCMessage *req, const uint8_t *extra,
                        size_t extra_len)
{
    yb_request_init(r);
    r->protocol = YB_PROTO_GNMI;
    set_strs(r, "POST", "http", "sw1:8080", "/gnmi.gNMI/Set");
    uint8_t *b;
    size_t n;
    assert_int_equal(yb_grpc_frame(req, &b, &n), 0);
    uint8_t *all = malloc(n + extra_len + 1);
    assert_non_null(all);
    memcpy(all, b, n);
    if (extra_len)
        memcpy(all + n, extra, extra_len);
    free(b);
    yb_request_take_body(r, all, n + extra_len);
}

/* Prints j as corpus cat does and parses it as import does. */
static void reparse(json_t *j, yb_request *q)
{
    char *text = json_dumps(j, JSON_COMPACT);
    assert_non_null(text);
    yb_corpus_header h;
    yb_corpus_header_init(&h);
    yb_request_init(q);
    char err[400] = "";
    if (yb_jsonl_parse_line(text, strlen(text), 0, q, &h, err, sizeof err) != YB_JSONL_RECORD)
        fail_msg("import refused its own decoded form: %s\n%s", err, text);
    yb_corpus_header_cleanup(&h);
    free(text);
}

static void test_gnmi_decoded(void **state)
{
    (void)state;
    Gnmi__SetRequest req = GNMI__SET_REQUEST__INIT;
    Gnmi__Path *prefix, *p0, *p1;
    assert_int_equal(yb_gnmi_path_parse("oc:/system", &prefix), 0);
    assert_int_equal(yb_gnmi_path_parse("/a[k=x\\]y]", &p0), 0);
    assert_int_equal(yb_gnmi_path_parse("/b", &p1), 0);
    Gnmi__TypedValue v0 = GNMI__TYPED_VALUE__INIT, v1 = GNMI__TYPED_VALUE__INIT;
    v0.value_case = GNMI__TYPED_VALUE__VALUE_INT_VAL;
    v0.int_val = -5;
    static char spaced[] = "{\"a\": [1, 2], \"b\": \"x y\"}";
    v1.value_case = GNMI__TYPED_VALUE__VALUE_JSON_IETF_VAL;
    v1.json_ietf_val.data = (uint8_t *)spaced;
    v1.json_ietf_val.len = strlen(spaced);
    Gnmi__Update u0 = GNMI__UPDATE__INIT, u1 = GNMI__UPDATE__INIT, *ups[] = {&u0, &u1};
    u0.path = p0;
    u0.val = &v0;
    u1.path = p1;
    u1.val = &v1;
    req.prefix = prefix;
    req.n_update = 2;
    req.update = ups;
    yb_request r;
    gnmi_record(&r, &req.base, NULL, 0);
    yb_gnmi_path_free(prefix);
    yb_gnmi_path_free(p0);
    yb_gnmi_path_free(p1);

    json_t *j = yb_jsonl_from_request_decoded(&r);
    assert_non_null(j);
    assert_null(json_object_get(j, "body"));
    assert_null(json_object_get(j, "body_base64"));
    json_t *set = json_object_get(json_array_get(json_object_get(j, "grpc"), 0), "SetRequest");
    assert_non_null(set);
    assert_string_equal(json_string_value(json_object_get(set, "prefix")), "oc:/system");
    json_t *upd = json_object_get(set, "update");
    json_t *a = json_array_get(upd, 0), *b = json_array_get(upd, 1);
    assert_string_equal(json_string_value(json_object_get(a, "path")), "/a[k=x\\]y]");
    /* int64 as a string (proto3 JSON), the JSON value inline with its layout. */
    assert_string_equal(json_string_value(json_object_get(json_object_get(a, "val"), "int_val")),
                        "-5");
    json_t *bv = json_object_get(b, "val");
    assert_string_equal(json_string_value(json_object_get(bv, "json_format")), "spaced");
    json_t *inl = json_object_get(bv, "json_ietf_val");
    assert_int_equal(json_integer_value(json_array_get(json_object_get(inl, "a"), 1)), 2);
    assert_string_equal(json_string_value(json_object_get(inl, "b")), "x y");
    yb_request q;
    reparse(j, &q);
    assert_true(yb_request_equal(&q, &r));
    yb_request_cleanup(&q);

    /* An edit of the inline value is encoded in the same layout. */
    json_object_set_new(inl, "b", json_string("edited"));
    reparse(j, &q);
    assert_int_equal(q.body_len, r.body_len + 3); /* "x y" -> "edited" */
    assert_non_null(memmem(q.body, q.body_len, "{\"a\": [1, 2], \"b\": \"edited\"}", 27));
    yb_request_cleanup(&q);
    json_decref(j);
    yb_request_cleanup(&r);

    /* A second message with the compressed flag: kept as bytes, with the
     * reason, and still imported to the same record. */
    static const uint8_t compressed[] = {1, 0, 0, 0, 0};
    Gnmi__SetRequest empty = GNMI__SET_REQUEST__INIT;
    gnmi_record(&r, &empty.base, compressed, sizeof compressed);
    j = yb_jsonl_from_request_decoded(&r);
    assert_true(json_is_null(json_object_get(j, "grpc")));
    assert_non_null(json_object_get(j, "body_base64"));
    assert_string_equal(json_string_value(json_object_get(j, "grpc_raw_reason")),
                        "message 1 has the gRPC compressed flag (0x01)");
    reparse(j, &q);
    assert_true(yb_request_equal(&q, &r));
    yb_request_cleanup(&q);
    json_decref(j);
    yb_request_cleanup(&r);

    /* RESTCONF records are printed as without --decode. */
    yb_request_init(&r);
    set_strs(&r, "GET", "https", "sw1", "/restconf/data/x");
    j = yb_jsonl_from_request_decoded(&r);
    assert_null(json_object_get(j, "grpc"));
    assert_non_null(json_object_get(j, "body"));
    json_decref(j);
    yb_request_cleanup(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_roundtrip),
        cmocka_unit_test(test_binary_roundtrip),
        cmocka_unit_test(test_empty_and_minimal),
        cmocka_unit_test(test_header_roundtrip),
        cmocka_unit_test(test_bad_input_names_key),
        cmocka_unit_test(test_many_roundtrips),
        cmocka_unit_test(test_gnmi_decoded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
