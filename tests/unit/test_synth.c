/* Unit tests for the openconfig-acl synthesizer (src/synth/acl.c) and the
 * gNMI helpers it uses (src/gnmi/gnmi_msg.c). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus/corpus.h"
#include "gnmi/gnmi_msg.h"
#include "synth/acl.h"

#define RC_SETS "/restconf/data/openconfig-acl:acl/acl-sets"

static void gen(const yb_synth_acl_opts *o, uint64_t k, yb_request *r)
{
    yb_request_init(r);
    int rc = yb_synth_acl_request(o, k, r);
    if (rc)
        fail_msg("yb_synth_acl_request(%llu): %d", (unsigned long long)k, rc);
}

static json_t *parse_body(const yb_request *r)
{
    json_error_t je;
    json_t *j = json_loadb((const char *)r->body, r->body_len, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        fail_msg("body does not parse: %s (line %d)", je.text, je.line);
    return j;
}

static const char *hdr(const yb_request *r, const char *name)
{
    for (size_t i = 0; i < r->n_headers; i++)
        if (!strcasecmp(r->headers[i].name, name))
            return (const char *)r->headers[i].value;
    return NULL;
}

static void expected_name(uint64_t k, char *buf, size_t cap)
{
    snprintf(buf, cap, "YB_ACL_%06llu", (unsigned long long)(k + 1));
}

static int is_prefix(const char *s)
{
    unsigned a, b, c, d, len;
    char tail;
    return sscanf(s, "%u.%u.%u.%u/%u%c", &a, &b, &c, &d, &len, &tail) == 5 && a < 256 &&
           b < 256 && c < 256 && d < 256 && len <= 32;
}

/* Checks one openconfig-acl acl-set object. */
static void check_set(json_t *set, const char *name, unsigned rules)
{
    assert_true(json_is_object(set));
    assert_string_equal(json_string_value(json_object_get(set, "name")), name);
    assert_string_equal(json_string_value(json_object_get(set, "type")), "openconfig-acl:ACL_IPV4");
    json_t *cfg = json_object_get(set, "config");
    assert_true(json_is_object(cfg));
    assert_string_equal(json_string_value(json_object_get(cfg, "name")), name);
    assert_string_equal(json_string_value(json_object_get(cfg, "type")), "openconfig-acl:ACL_IPV4");
    json_t *list = json_object_get(json_object_get(set, "acl-entries"), "acl-entry");
    assert_true(json_is_array(list));
    assert_int_equal(json_array_size(list), rules);
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        json_int_t seq = json_integer_value(json_object_get(e, "sequence-id"));
        assert_int_equal(seq, (json_int_t)i + 1);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "config"),
                                                            "sequence-id")),
                         seq);
        json_t *ipc = json_object_get(json_object_get(e, "ipv4"), "config");
        assert_true(json_is_object(ipc));
        const char *src = json_string_value(json_object_get(ipc, "source-address"));
        const char *dst = json_string_value(json_object_get(ipc, "destination-address"));
        assert_non_null(src);
        assert_non_null(dst);
        if (!is_prefix(src) || !is_prefix(dst))
            fail_msg("bad prefixes %s %s", src, dst);
        const char *act = json_string_value(json_object_get(
            json_object_get(json_object_get(e, "actions"), "config"), "forwarding-action"));
        assert_non_null(act);
        assert_true(!strcmp(act, "openconfig-acl:ACCEPT") || !strcmp(act, "openconfig-acl:DROP") ||
                    !strcmp(act, "openconfig-acl:REJECT"));
    }
}

/* ------------------------------------------------------------------ */
/* RESTCONF                                                            */

static void test_defaults_and_check(void **state)
{
    (void)state;
    yb_synth_acl_opts o;
    yb_synth_acl_defaults(&o);
    assert_int_equal(o.proto, YB_PROTO_RESTCONF);
    assert_int_equal(o.op, YB_SYNTH_CREATE);
    assert_string_equal(o.method, "PATCH");
    assert_int_equal(o.count, 1000);
    assert_int_equal(o.seed, 1);
    assert_null(yb_synth_acl_check(&o));

    yb_synth_acl_opts b = o;
    b.proto = YB_PROTO_HTTP1;
    assert_non_null(yb_synth_acl_check(&b));
    b = o;
    b.op = YB_SYNTH_SUBSCRIBE;
    assert_non_null(yb_synth_acl_check(&b));
    b.proto = YB_PROTO_GNMI;
    assert_null(yb_synth_acl_check(&b));
    b = o;
    b.method = "DELETE";
    assert_non_null(yb_synth_acl_check(&b));
    b = o;
    b.rules = 100001;
    assert_non_null(yb_synth_acl_check(&b));
    b = o;
    b.name_prefix = "A/B";
    assert_non_null(yb_synth_acl_check(&b));
    b.name_prefix = "";
    assert_non_null(yb_synth_acl_check(&b));
    b = o;
    b.authority = "a b";
    assert_non_null(yb_synth_acl_check(&b));
    /* set names are JSON strings: UTF-8 only, and short enough for the
     * widest number and _{{iter}} */
    b = o;
    b.name_prefix = "A\xff";
    assert_non_null(yb_synth_acl_check(&b));
    char longp[98];
    memset(longp, 'x', sizeof longp - 1);
    longp[97] = 0;
    b.name_prefix = longp;
    assert_non_null(yb_synth_acl_check(&b));
    longp[96] = 0;
    assert_null(yb_synth_acl_check(&b));
}

static void test_restconf_shape(void **state)
{
    (void)state;
    yb_synth_acl_opts o;
    yb_synth_acl_defaults(&o);
    for (unsigned rules = 0; rules <= 5; rules += 5) {
        o.rules = rules;
        for (uint64_t k = 0; k < 20; k++) {
            yb_request r;
            gen(&o, k, &r);
            char name[64];
            expected_name(k, name, sizeof name);
            assert_int_equal(r.protocol, YB_PROTO_RESTCONF);
            assert_string_equal(r.method, "PATCH");
            assert_string_equal(r.path, RC_SETS);
            assert_string_equal(r.scheme, "https");
            assert_string_equal(r.authority, "localhost");
            assert_string_equal(hdr(&r, "content-type"), "application/yang-data+json");
            assert_string_equal(hdr(&r, "accept"), "application/yang-data+json");
            assert_int_equal(r.conn_order, k);
            json_t *j = parse_body(&r);
            json_t *sets = json_object_get(json_object_get(j, "openconfig-acl:acl-sets"), "acl-set");
            assert_true(json_is_array(sets));
            assert_int_equal(json_array_size(sets), 1);
            check_set(json_array_get(sets, 0), name, rules);
            json_decref(j);
            yb_request_cleanup(&r);
        }
    }
    /* Default rule count. */
    o.rules = YB_SYNTH_RULES_AUTO;
    yb_request r;
    gen(&o, 0, &r);
    json_t *j = parse_body(&r);
    check_set(json_array_get(
                  json_object_get(json_object_get(j, "openconfig-acl:acl-sets"), "acl-set"), 0),
              "YB_ACL_000001", YB_SYNTH_DEFAULT_RULES_RESTCONF);
    json_decref(j);
    yb_request_cleanup(&r);
}

static void test_restconf_methods_and_ops(void **state)
{
    (void)state;
    static const struct {
        yb_synth_op op;
        const char *method_opt, *method;
        int keyed_path, body; /* path ends in acl-set=NAME,ACL_IPV4; has a body */
    } cases[] = {
        {YB_SYNTH_CREATE, "PATCH", "PATCH", 0, 1},  {YB_SYNTH_CREATE, "POST", "POST", 0, 1},
        {YB_SYNTH_CREATE, "PUT", "PUT", 1, 1},      {YB_SYNTH_REPLACE, "PATCH", "PUT", 1, 1},
        {YB_SYNTH_DELETE, "PATCH", "DELETE", 1, 0}, {YB_SYNTH_GET, "PATCH", "GET", 1, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        yb_synth_acl_opts o;
        yb_synth_acl_defaults(&o);
        o.op = cases[c].op;
        o.method = cases[c].method_opt;
        o.rules = 3;
        o.authority = "sw1:8443";
        o.scheme = "http";
        assert_null(yb_synth_acl_check(&o));
        yb_request r;
        gen(&o, 41, &r);
        assert_string_equal(r.method, cases[c].method);
        assert_string_equal(r.authority, "sw1:8443");
        assert_string_equal(r.scheme, "http");
        if (cases[c].keyed_path)
            assert_string_equal(r.path, RC_SETS "/acl-set=YB_ACL_000042,ACL_IPV4");
        else
            assert_string_equal(r.path, RC_SETS);
        if (!cases[c].body) {
            assert_int_equal(r.body_len, 0);
            assert_null(hdr(&r, "content-type"));
        } else {
            assert_non_null(hdr(&r, "content-type"));
            json_t *j = parse_body(&r);
            json_t *sets = !strcmp(cases[c].method, "PATCH")
                               ? json_object_get(json_object_get(j, "openconfig-acl:acl-sets"),
                                                 "acl-set")
                               : json_object_get(j, "openconfig-acl:acl-set");
            assert_true(json_is_array(sets));
            assert_int_equal(json_array_size(sets), 1);
            check_set(json_array_get(sets, 0), "YB_ACL_000042", 3);
            json_decref(j);
        }
        assert_string_equal(hdr(&r, "accept"), "application/yang-data+json");
        yb_request_cleanup(&r);
    }
    /* Subscribe and capabilities are gNMI-only. */
    yb_synth_acl_opts o;
    yb_synth_acl_defaults(&o);
    o.op = YB_SYNTH_CAPABILITIES;
    assert_non_null(yb_synth_acl_check(&o));
}

static void test_determinism(void **state)
{
    (void)state;
    yb_synth_acl_opts a, b;
    for (int proto = 0; proto < 2; proto++) {
        yb_synth_acl_defaults(&a);
        a.proto = proto ? YB_PROTO_GNMI : YB_PROTO_RESTCONF;
        a.seed = 7;
        b = a;
        b.seed = 8;
        for (uint64_t k = 0; k < 30; k++) {
            yb_request r1, r2, r3;
            gen(&a, k, &r1);
            gen(&a, k, &r2);
            gen(&b, k, &r3);
            assert_true(yb_request_equal(&r1, &r2));
            /* A different seed changes the rules but not the names. */
            assert_string_equal(r1.path, r3.path);
            assert_false(r1.body_len == r3.body_len &&
                         memcmp(r1.body, r3.body, r1.body_len) == 0);
            char name[64];
            expected_name(k, name, sizeof name);
            assert_non_null(memmem(r1.body, r1.body_len, name, strlen(name)));
            assert_non_null(memmem(r3.body, r3.body_len, name, strlen(name)));
            yb_request_cleanup(&r1);
            yb_request_cleanup(&r2);
            yb_request_cleanup(&r3);
        }
    }
    /* Request k does not depend on which requests were built before it. */
    yb_synth_acl_defaults(&a);
    yb_request r1, r2;
    gen(&a, 500, &r1);
    for (uint64_t k = 0; k < 3; k++) {
        gen(&a, k, &r2);
        yb_request_cleanup(&r2);
    }
    gen(&a, 500, &r2);
    assert_true(yb_request_equal(&r1, &r2));
    yb_request_cleanup(&r1);
    yb_request_cleanup(&r2);

    /* yb_synth_acl_set_json is the same set. */
    char *s1 = yb_synth_acl_set_json(&a, 3), *s2 = yb_synth_acl_set_json(&a, 3);
    assert_non_null(s1);
    assert_string_equal(s1, s2);
    json_t *j = json_loads(s1, 0, NULL);
    assert_non_null(j);
    check_set(j, "YB_ACL_000004", YB_SYNTH_DEFAULT_RULES_RESTCONF);
    json_decref(j);
    free(s1);
    free(s2);
}

/* The bodies are written without a JSON library: every body is byte for
 * byte what jansson prints for the same document with JSON_INDENT(4) (the
 * bundled corpora were made that way), escapes in names included. */
static void test_json_bytes(void **state)
{
    (void)state;
    static const struct {
        const char *prefix;
        unsigned rules;
        yb_synth_op op;
        const char *method;
    } cases[] = {
        {"YB_ACL", YB_SYNTH_RULES_AUTO, YB_SYNTH_CREATE, "PATCH"},
        {"P\x01q\x1f\t\x7f\xc3\xa9\xe2\x82\xac<'&>", 3, YB_SYNTH_CREATE, "POST"},
        {"Z", 0, YB_SYNTH_CREATE, "PUT"},
        {"Z", 1, YB_SYNTH_REPLACE, "PATCH"},
        {"B\bF\fN\nR\r", 2, YB_SYNTH_CREATE, "PATCH"},
        {"W", 40, YB_SYNTH_CREATE, "PATCH"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int unique = 0; unique < 2; unique++)
            for (uint64_t k = 0; k < 3; k++) {
                yb_synth_acl_opts o;
                yb_synth_acl_defaults(&o);
                o.name_prefix = cases[c].prefix;
                o.rules = cases[c].rules;
                o.op = cases[c].op;
                o.method = cases[c].method;
                o.unique = unique;
                o.seed = 77 + k;
                assert_null(yb_synth_acl_check(&o));
                yb_request r;
                gen(&o, k * 1000, &r);
                json_t *j = parse_body(&r);
                char *want = json_dumps(j, JSON_INDENT(4));
                assert_non_null(want);
                if (strlen(want) != r.body_len || memcmp(want, r.body, r.body_len))
                    fail_msg("case %zu unique %d k %llu: body differs from jansson's\n%s\n---\n%.*s",
                             c, unique, (unsigned long long)k, want, (int)r.body_len,
                             (const char *)r.body);
                free(want);
                json_decref(j);
                yb_request_cleanup(&r);
                char *set = yb_synth_acl_set_json(&o, k);
                assert_non_null(set);
                j = json_loads(set, 0, NULL);
                assert_non_null(j);
                want = json_dumps(j, JSON_INDENT(4));
                assert_string_equal(want, set);
                free(want);
                free(set);
                json_decref(j);
            }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_unique_names_and_sizes(void **state)
{
    (void)state;
    enum { N = 1000 };
    yb_synth_acl_opts o;
    yb_synth_acl_defaults(&o);
    o.name_prefix = "T";
    char **names = calloc(N, sizeof *names);
    assert_non_null(names);
    uint64_t total = 0;
    for (uint64_t k = 0; k < N; k++) {
        yb_request r;
        gen(&o, k, &r);
        total += r.body_len;
        json_t *j = parse_body(&r);
        json_t *set = json_array_get(
            json_object_get(json_object_get(j, "openconfig-acl:acl-sets"), "acl-set"), 0);
        const char *n = json_string_value(json_object_get(set, "name"));
        assert_non_null(n);
        assert_int_equal(strncmp(n, "T_", 2), 0);
        names[k] = strdup(n);
        assert_non_null(names[k]);
        json_decref(j);
        yb_request_cleanup(&r);
    }
    qsort(names, N, sizeof *names, cmp_str);
    for (size_t i = 1; i < N; i++)
        if (!strcmp(names[i - 1], names[i]))
            fail_msg("duplicate ACL name %s", names[i]);
    for (size_t i = 0; i < N; i++)
        free(names[i]);
    free(names);
    /* The SONiC study's payload: about 14.5 KB per request, 14.5 MB per
     * thousand. */
    double mean = (double)total / N;
    if (mean < 14000.0 || mean > 15000.0)
        fail_msg("mean RESTCONF body %.1f bytes, want 14000..15000", mean);
    if (total < 14000000u || total > 15000000u)
        fail_msg("1000 RESTCONF requests = %llu bytes, want ~14.5 MB",
                 (unsigned long long)total);

    /* The gNMI default carries about as much data. */
    o.proto = YB_PROTO_GNMI;
    total = 0;
    for (uint64_t k = 0; k < 200; k++) {
        yb_request r;
        gen(&o, k, &r);
        total += r.body_len;
        yb_request_cleanup(&r);
    }
    mean = (double)total / 200;
    if (mean < 13500.0 || mean > 15500.0)
        fail_msg("mean gNMI body %.1f bytes, want about 14.5 KB", mean);
}

/* ------------------------------------------------------------------ */
/* gNMI                                                                */

/* Returns the only gRPC message in r's body (a view into it). */
static void one_message(const yb_request *r, const uint8_t **msg, size_t *len)
{
    size_t off = 0;
    assert_int_equal(yb_grpc_next(r->body, r->body_len, &off, msg, len, 1u << 24), 1);
    assert_int_equal(off, r->body_len);
    const uint8_t *m2;
    size_t l2;
    assert_int_equal(yb_grpc_next(r->body, r->body_len, &off, &m2, &l2, 1u << 24), 0);
}

static void check_gnmi_headers(const yb_request *r, const char *rpc)
{
    assert_int_equal(r->protocol, YB_PROTO_GNMI);
    assert_string_equal(r->method, "POST");
    assert_string_equal(r->path, rpc);
    assert_string_equal(hdr(r, "content-type"), "application/grpc");
    assert_string_equal(hdr(r, "te"), "trailers");
}

static void check_path(const Gnmi__Path *p, const char *text)
{
    char buf[512];
    yb_gnmi_path_format(p, buf, sizeof buf);
    assert_string_equal(buf, text);
}

static const char *key_value(const Gnmi__PathElem *e, const char *key)
{
    for (size_t i = 0; i < e->n_key; i++)
        if (!strcmp(e->key[i]->key, key))
            return e->key[i]->value;
    return NULL;
}

static void check_json_val(const Gnmi__TypedValue *v, const char *name, unsigned rules)
{
    assert_non_null(v);
    assert_int_equal(v->value_case, GNMI__TYPED_VALUE__VALUE_JSON_IETF_VAL);
    json_error_t je;
    json_t *j = json_loadb((const char *)v->json_ietf_val.data, v->json_ietf_val.len, 0, &je);
    if (!j)
        fail_msg("json_ietf_val: %s", je.text);
    json_t *sets = json_object_get(j, "openconfig-acl:acl-set");
    assert_true(json_is_array(sets));
    assert_int_equal(json_array_size(sets), 1);
    check_set(json_array_get(sets, 0), name, rules);
    json_decref(j);
}

/* The corpus' format-2 split of b[0..n), as yangblast-corpus(5) says:
 * each run of digits one '0' in *skel, itself and ',' in *dig. */
static void split_ref(const uint8_t *b, size_t n, char *skel, size_t *sn, char *dig, size_t *dn)
{
    size_t s = 0, d = 0;
    for (size_t i = 0; i < n;) {
        if (b[i] < '0' || b[i] > '9') {
            skel[s++] = (char)b[i++];
            continue;
        }
        skel[s++] = '0';
        while (i < n && b[i] >= '0' && b[i] <= '9')
            dig[d++] = (char)b[i++];
        dig[d++] = ',';
    }
    *sn = s;
    *dn = d;
}

/* Checks that yb_synth_acl_request_split(o, k) writes split exactly the
 * split of the body yb_synth_acl_request writes, and the rest of the
 * record the same (case c names it).  Returns the whole body's last
 * byte before its JSON, or -1 when the body starts with it. */
static int split_matches(const yb_synth_acl_opts *o, uint64_t k, yb_synth_split *sp, size_t c)
{
    yb_request whole, r;
    gen(o, k, &whole);
    yb_request_init(&r);
    assert_int_equal(yb_synth_acl_request_split(o, k, &r, sp), 1);
    assert_null(r.body);
    assert_int_equal(r.body_len, whole.body_len);
    char *skel = malloc(whole.body_len + 1), *dig = malloc(2 * whole.body_len + 1);
    assert_non_null(skel);
    assert_non_null(dig);
    size_t sn, dn;
    split_ref(whole.body, whole.body_len, skel, &sn, dig, &dn);
    if (sp->sn != sn || memcmp(sp->skel, skel, sn))
        fail_msg("case %zu record %llu: skeleton differs", c, (unsigned long long)k);
    if (sp->dn != dn || memcmp(sp->dig, dig, dn))
        fail_msg("case %zu record %llu: digits differ", c, (unsigned long long)k);
    free(skel);
    free(dig);
    static const char OPEN[] = "{\n    \"openconfig-acl:";
    const uint8_t *j = memmem(whole.body, whole.body_len, OPEN, sizeof OPEN - 1);
    assert_non_null(j);
    int before = j == whole.body ? -1 : j[-1];
    /* the rest of the record as yb_synth_acl_request makes it */
    uint8_t *body = whole.body;
    size_t len = whole.body_len;
    whole.body = NULL;
    whole.body_len = r.body_len = 0;
    assert_true(yb_request_equal(&whole, &r));
    whole.body = body;
    whole.body_len = len;
    yb_request_cleanup(&whole);
    yb_request_cleanup(&r);
    return before;
}

/* yb_synth_acl_request_split: the body it writes split is exactly the
 * split of the body yb_synth_acl_request writes (every method and op,
 * both protocols, --unique, rule counts, names with digits and with
 * escapes that make digits), and the rest of the record is the same;
 * requests without a body come whole. */
static void test_split_bodies(void **state)
{
    (void)state;
    static const struct {
        yb_proto proto;
        yb_synth_op op;
        const char *method, *prefix;
        unsigned rules;
        int unique;
    } C[] = {
        {YB_PROTO_RESTCONF, YB_SYNTH_CREATE, "PATCH", "YB_ACL", YB_SYNTH_RULES_AUTO, 0},
        {YB_PROTO_RESTCONF, YB_SYNTH_CREATE, "POST", "A1", 3, 1},
        {YB_PROTO_RESTCONF, YB_SYNTH_CREATE, "PUT", "9\x01" "7x", 1, 0},
        {YB_PROTO_RESTCONF, YB_SYNTH_REPLACE, "PATCH", "12", 0, 0},
        {YB_PROTO_RESTCONF, YB_SYNTH_REPLACE, "PATCH", "\x1f" "0", 2, 1},
        {YB_PROTO_GNMI, YB_SYNTH_CREATE, "PATCH", "YB_ACL", YB_SYNTH_RULES_AUTO, 0},
        {YB_PROTO_GNMI, YB_SYNTH_CREATE, "PATCH", "A1", 3, 1},
        {YB_PROTO_GNMI, YB_SYNTH_REPLACE, "PATCH", "12", 0, 0},
        {YB_PROTO_GNMI, YB_SYNTH_REPLACE, "PATCH", "9\x01" "7x", 1000, 1},
    };
    yb_synth_split sp = {0};
    for (size_t c = 0; c < sizeof C / sizeof C[0]; c++) {
        yb_synth_acl_opts o;
        yb_synth_acl_defaults(&o);
        o.proto = C[c].proto;
        o.op = C[c].op;
        if (o.proto == YB_PROTO_RESTCONF)
            o.method = C[c].method;
        o.name_prefix = C[c].prefix;
        o.rules = C[c].rules;
        o.unique = C[c].unique;
        assert_null(yb_synth_acl_check(&o));
        for (uint64_t k = 0; k < 40; k += 13)
            split_matches(&o, k, &sp, c);
    }
    /* gNMI: the bytes before the JSON (the gRPC prefix, the SetRequest's
     * tags and lengths, the path) are split too; over rule counts some
     * end with a digit (the JSON's length, 6144..7423 bytes, ends its
     * varint in '0'..'9'), a run the JSON's '{' ends */
    unsigned digit_end = 0;
    for (unsigned rules = 0; rules <= 60; rules++) {
        yb_synth_acl_opts o;
        yb_synth_acl_defaults(&o);
        o.proto = YB_PROTO_GNMI;
        o.rules = rules;
        int b = split_matches(&o, rules, &sp, 100 + rules);
        assert_true(b >= 0);
        digit_end += b >= '0' && b <= '9';
    }
    assert_true(digit_end > 0);
    /* no body, or gNMI: the record whole */
    yb_synth_acl_opts o;
    yb_synth_acl_defaults(&o);
    o.op = YB_SYNTH_GET;
    yb_request r, whole;
    yb_request_init(&r);
    assert_int_equal(yb_synth_acl_request_split(&o, 3, &r, &sp), 0);
    gen(&o, 3, &whole);
    assert_true(yb_request_equal(&whole, &r));
    yb_request_cleanup(&r);
    yb_request_cleanup(&whole);
    o.proto = YB_PROTO_GNMI;
    o.op = YB_SYNTH_DELETE;
    yb_request_init(&r);
    assert_int_equal(yb_synth_acl_request_split(&o, 3, &r, &sp), 0);
    gen(&o, 3, &whole);
    assert_true(yb_request_equal(&whole, &r));
    assert_true(r.body_len > 20);
    yb_request_cleanup(&r);
    yb_request_cleanup(&whole);
    yb_synth_split_free(&sp);
}

static void test_gnmi_set(void **state)
{
    (void)state;
    yb_synth_acl_opts o;
    yb_synth_acl_defaults(&o);
    o.proto = YB_PROTO_GNMI;
    for (int op = 0; op < 3; op++) {
        o.op = op == 0 ? YB_SYNTH_CREATE : op == 1 ? YB_SYNTH_REPLACE : YB_SYNTH_DELETE;
        for (uint64_t k = 0; k < 5; k++) {
            yb_request r;
            gen(&o, k, &r);
            check_gnmi_headers(&r, "/gnmi.gNMI/Set");
            const uint8_t *m;
            size_t len;
            one_message(&r, &m, &len);
            Gnmi__SetRequest *s = gnmi__set_request__unpack(NULL, len, m);
            assert_non_null(s);
            char name[64], keyed[256];
            expected_name(k, name, sizeof name);
            snprintf(keyed, sizeof keyed,
                     "/openconfig-acl:acl/acl-sets/acl-set[name=%s][type=ACL_IPV4]", name);
            assert_null(s->prefix);
            assert_int_equal(s->n_union_replace, 0);
            if (o.op == YB_SYNTH_CREATE) {
                assert_int_equal(s->n_update, 1);
                assert_int_equal(s->n_replace, 0);
                assert_int_equal(s->n_delete_, 0);
                check_path(s->update[0]->path, "/openconfig-acl:acl/acl-sets");
                assert_int_equal(s->update[0]->path->n_elem, 2);
                assert_string_equal(s->update[0]->path->elem[0]->name, "openconfig-acl:acl");
                assert_string_equal(s->update[0]->path->elem[1]->name, "acl-sets");
                check_json_val(s->update[0]->val, name, YB_SYNTH_DEFAULT_RULES_GNMI);
            } else if (o.op == YB_SYNTH_REPLACE) {
                assert_int_equal(s->n_update, 0);
                assert_int_equal(s->n_replace, 1);
                assert_int_equal(s->n_delete_, 0);
                check_path(s->replace[0]->path, keyed);
                check_json_val(s->replace[0]->val, name, YB_SYNTH_DEFAULT_RULES_GNMI);
            } else {
                assert_int_equal(s->n_update, 0);
                assert_int_equal(s->n_replace, 0);
                assert_int_equal(s->n_delete_, 1);
                check_path(s->delete_[0], keyed);
                assert_int_equal(s->delete_[0]->n_elem, 3);
                assert_string_equal(key_value(s->delete_[0]->elem[2], "name"), name);
                assert_string_equal(key_value(s->delete_[0]->elem[2], "type"), "ACL_IPV4");
            }
            gnmi__set_request__free_unpacked(s, NULL);
            yb_request_cleanup(&r);
        }
    }
}

static void test_gnmi_get_and_capabilities(void **state)
{
    (void)state;
    yb_synth_acl_opts o;
    yb_synth_acl_defaults(&o);
    o.proto = YB_PROTO_GNMI;
    o.op = YB_SYNTH_GET;
    yb_request r;
    gen(&o, 9, &r);
    check_gnmi_headers(&r, "/gnmi.gNMI/Get");
    const uint8_t *m;
    size_t len;
    one_message(&r, &m, &len);
    Gnmi__GetRequest *g = gnmi__get_request__unpack(NULL, len, m);
    assert_non_null(g);
    assert_int_equal(g->n_path, 1);
    check_path(g->path[0], "/openconfig-acl:acl/acl-sets/acl-set[name=YB_ACL_000010][type=ACL_IPV4]");
    assert_int_equal(g->encoding, GNMI__ENCODING__JSON_IETF);
    gnmi__get_request__free_unpacked(g, NULL);
    yb_request_cleanup(&r);

    o.op = YB_SYNTH_CAPABILITIES;
    assert_null(yb_synth_acl_check(&o));
    gen(&o, 0, &r);
    check_gnmi_headers(&r, "/gnmi.gNMI/Capabilities");
    one_message(&r, &m, &len);
    assert_int_equal(len, 0); /* an empty CapabilityRequest */
    Gnmi__CapabilityRequest *c = gnmi__capability_request__unpack(NULL, len, m);
    assert_non_null(c);
    assert_int_equal(c->n_extension, 0);
    gnmi__capability_request__free_unpacked(c, NULL);
    assert_int_equal(r.body_len, YB_GRPC_PREFIX);
    yb_request_cleanup(&r);
}

/* Decodes every SubscribeRequest in r's body into subs (up to max);
 * returns the count. */
static size_t subscribe_messages(const yb_request *r, Gnmi__SubscribeRequest **subs, size_t max)
{
    size_t off = 0, n = 0;
    const uint8_t *m;
    size_t len;
    int rc;
    while ((rc = yb_grpc_next(r->body, r->body_len, &off, &m, &len, 1u << 20)) == 1) {
        assert_true(n < max);
        subs[n] = gnmi__subscribe_request__unpack(NULL, len, m);
        assert_non_null(subs[n]);
        n++;
    }
    assert_int_equal(rc, 0);
    return n;
}

static void test_gnmi_subscribe(void **state)
{
    (void)state;
    yb_synth_acl_opts o;
    yb_synth_acl_defaults(&o);
    o.proto = YB_PROTO_GNMI;
    o.op = YB_SYNTH_SUBSCRIBE;
    static const struct {
        yb_sub_mode mode;
        Gnmi__SubscriptionList__Mode want;
        unsigned polls;
    } cases[] = {
        {YB_SUB_ONCE, GNMI__SUBSCRIPTION_LIST__MODE__ONCE, 3},
        {YB_SUB_POLL, GNMI__SUBSCRIPTION_LIST__MODE__POLL, 4},
        {YB_SUB_POLL, GNMI__SUBSCRIPTION_LIST__MODE__POLL, 0},
        {YB_SUB_STREAM, GNMI__SUBSCRIPTION_LIST__MODE__STREAM, 3},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        o.sub_mode = cases[c].mode;
        o.polls = cases[c].polls;
        o.sample_ns = 250000000ull;
        assert_null(yb_synth_acl_check(&o));
        yb_request r;
        gen(&o, 0, &r);
        check_gnmi_headers(&r, "/gnmi.gNMI/Subscribe");
        Gnmi__SubscribeRequest *subs[16];
        size_t n = subscribe_messages(&r, subs, 16);
        size_t want_n = 1 + (cases[c].mode == YB_SUB_POLL ? cases[c].polls : 0);
        assert_int_equal(n, want_n);
        assert_int_equal(subs[0]->request_case, GNMI__SUBSCRIBE_REQUEST__REQUEST_SUBSCRIBE);
        Gnmi__SubscriptionList *l = subs[0]->subscribe;
        assert_int_equal(l->mode, cases[c].want);
        assert_int_equal(l->encoding, GNMI__ENCODING__JSON_IETF);
        assert_int_equal(l->n_subscription, 1);
        check_path(l->subscription[0]->path, "/openconfig-acl:acl/acl-sets");
        if (cases[c].mode == YB_SUB_STREAM) {
            assert_int_equal(l->subscription[0]->mode, GNMI__SUBSCRIPTION_MODE__SAMPLE);
            assert_true(l->subscription[0]->sample_interval == 250000000ull);
        }
        for (size_t i = 1; i < n; i++) {
            assert_int_equal(subs[i]->request_case, GNMI__SUBSCRIBE_REQUEST__REQUEST_POLL);
            assert_non_null(subs[i]->poll);
        }
        for (size_t i = 0; i < n; i++)
            gnmi__subscribe_request__free_unpacked(subs[i], NULL);
        yb_request_cleanup(&r);
    }
}

static void test_gnmi_rules_option(void **state)
{
    (void)state;
    yb_synth_acl_opts o;
    yb_synth_acl_defaults(&o);
    o.proto = YB_PROTO_GNMI;
    o.rules = 2;
    yb_request r;
    gen(&o, 0, &r);
    const uint8_t *m;
    size_t len;
    one_message(&r, &m, &len);
    Gnmi__SetRequest *s = gnmi__set_request__unpack(NULL, len, m);
    assert_non_null(s);
    check_json_val(s->update[0]->val, "YB_ACL_000001", 2);
    gnmi__set_request__free_unpacked(s, NULL);
    yb_request_cleanup(&r);
}

/* ------------------------------------------------------------------ */
/* gNMI helpers                                                        */

static void test_path_parse(void **state)
{
    (void)state;
    Gnmi__Path *p = NULL;
    assert_int_equal(yb_gnmi_path_parse("/interfaces/interface[name=Ethernet0/1]/state", &p), 0);
    assert_int_equal(p->n_elem, 3);
    assert_string_equal(p->elem[1]->name, "interface");
    assert_int_equal(p->elem[1]->n_key, 1);
    assert_string_equal(key_value(p->elem[1], "name"), "Ethernet0/1");
    assert_string_equal(p->elem[2]->name, "state");
    check_path(p, "/interfaces/interface[name=Ethernet0/1]/state");
    yb_gnmi_path_free(p);

    /* No leading '/', two keys, '/' and '=' inside values. */
    assert_int_equal(yb_gnmi_path_parse("a/b[k=x/y/z][k2=v=w]", &p), 0);
    assert_int_equal(p->n_elem, 2);
    assert_int_equal(p->elem[1]->n_key, 2);
    assert_string_equal(key_value(p->elem[1], "k"), "x/y/z");
    assert_string_equal(key_value(p->elem[1], "k2"), "v=w");
    check_path(p, "/a/b[k=x/y/z][k2=v=w]");
    yb_gnmi_path_free(p);

    /* Empty value, trailing '/'. */
    assert_int_equal(yb_gnmi_path_parse("/a[k=]/", &p), 0);
    assert_int_equal(p->n_elem, 1);
    assert_string_equal(key_value(p->elem[0], "k"), "");
    yb_gnmi_path_free(p);

    /* The root. */
    assert_int_equal(yb_gnmi_path_parse("/", &p), 0);
    assert_int_equal(p->n_elem, 0);
    check_path(p, "/");
    yb_gnmi_path_free(p);
    assert_int_equal(yb_gnmi_path_parse("", &p), 0);
    assert_int_equal(p->n_elem, 0);
    yb_gnmi_path_free(p);

    static const char *const bad[] = {
        "a//b", "//", "a[", "a[k]", "a[=v]", "a[k=v", "a[k=v]x", "[k=v]", "/a/[k=v]", "a[k=v]]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        p = NULL;
        int rc = yb_gnmi_path_parse(bad[i], &p);
        if (rc != -EINVAL)
            fail_msg("\"%s\": rc %d, want -EINVAL", bad[i], rc);
    }

    /* Truncated formatting reports the full length and stays terminated. */
    assert_int_equal(yb_gnmi_path_parse("/aaaa/bbbb", &p), 0);
    char small[6];
    assert_int_equal(yb_gnmi_path_format(p, small, sizeof small), 10);
    assert_string_equal(small, "/aaaa");
    yb_gnmi_path_free(p);
}

/* The escapes of the gNMI path-strings specification and gnmic's origin. */
static void test_path_escapes_and_origin(void **state)
{
    (void)state;
    Gnmi__Path *p = NULL;
    /* ']' and '\' escaped in a value, '/' and '[' in a name, '=' in a key
     * name; '/' and '=' need no escape inside a value. */
    static const char text[] = "/a[k=x\\]y\\\\z/=w]/b\\/c\\[d[k\\=1=v]";
    assert_int_equal(yb_gnmi_path_parse(text, &p), 0);
    assert_int_equal(p->n_elem, 2);
    assert_string_equal(p->elem[0]->name, "a");
    assert_string_equal(key_value(p->elem[0], "k"), "x]y\\z/=w");
    assert_string_equal(p->elem[1]->name, "b/c[d");
    assert_string_equal(p->elem[1]->key[0]->key, "k=1");
    assert_string_equal(p->elem[1]->key[0]->value, "v");
    assert_int_equal(yb_gnmi_path_text_exact(p), 1);
    check_path(p, text);
    yb_gnmi_path_free(p);

    /* Keys keep their order (no sorting: the wire order is kept). */
    assert_int_equal(yb_gnmi_path_parse("/s[type=T][name=N]", &p), 0);
    check_path(p, "/s[type=T][name=N]");
    yb_gnmi_path_free(p);

    /* origin:/path, origin only, and module prefixes that are no origin. */
    assert_int_equal(yb_gnmi_path_parse("openconfig:/a/b", &p), 0);
    assert_string_equal(p->origin, "openconfig");
    assert_int_equal(p->n_elem, 2);
    check_path(p, "openconfig:/a/b");
    yb_gnmi_path_free(p);
    assert_int_equal(yb_gnmi_path_parse("rfc7951:", &p), 0);
    assert_string_equal(p->origin, "rfc7951");
    assert_int_equal(p->n_elem, 0);
    check_path(p, "rfc7951:/");
    yb_gnmi_path_free(p);
    assert_int_equal(yb_gnmi_path_parse("openconfig-acl:acl/acl-sets", &p), 0);
    assert_string_equal(p->origin, "");
    assert_string_equal(p->elem[0]->name, "openconfig-acl:acl");
    yb_gnmi_path_free(p);
    assert_int_equal(yb_gnmi_path_parse("/x:/y", &p), 0);
    assert_string_equal(p->origin, "");
    assert_string_equal(p->elem[0]->name, "x:");
    yb_gnmi_path_free(p);

    /* What the string cannot say is not called exact. */
    assert_int_equal(yb_gnmi_path_parse("/a", &p), 0);
    p->origin = strdup("a:b"); /* was protobuf-c's static "" */
    assert_int_equal(yb_gnmi_path_text_exact(p), 0);
    yb_gnmi_path_free(p);

    static const char *const bad[] = {"a\\", "/a[k\\]=v", "/a[k=v\\]", "/a[\\=v]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        p = NULL;
        int rc = yb_gnmi_path_parse(bad[i], &p);
        if (rc != -EINVAL)
            fail_msg("\"%s\": rc %d, want -EINVAL", bad[i], rc);
    }
}

static void test_grpc_framing(void **state)
{
    (void)state;
    Gnmi__GetRequest g = GNMI__GET_REQUEST__INIT;
    g.encoding = GNMI__ENCODING__JSON_IETF;
    uint8_t *b;
    size_t n;
    assert_int_equal(yb_grpc_frame(&g.base, &b, &n), 0);
    assert_int_equal(n, YB_GRPC_PREFIX + 2);
    assert_int_equal(b[0], 0);
    assert_int_equal(b[4], 2);
    size_t off = 0;
    const uint8_t *m;
    size_t len;
    assert_int_equal(yb_grpc_next(b, n, &off, &m, &len, 100), 1);
    assert_int_equal(len, 2);
    assert_int_equal(yb_grpc_next(b, n, &off, &m, &len, 100), 0);
    /* Truncated prefix, truncated message, compressed flag, over max. */
    off = 0;
    assert_int_equal(yb_grpc_next(b, 3, &off, &m, &len, 100), -1);
    off = 0;
    assert_int_equal(yb_grpc_next(b, n - 1, &off, &m, &len, 100), -1);
    off = 0;
    assert_int_equal(yb_grpc_next(b, n, &off, &m, &len, 1), -1);
    b[0] = 1;
    off = 0;
    assert_int_equal(yb_grpc_next(b, n, &off, &m, &len, 100), -1);
    free(b);
}

/* yb_gnmi_set_json_head: its bytes and then the JSON's are yb_grpc_frame
 * of the SetRequest holding them, for update and replace, paths with and
 * without keys, and JSON lengths on each side of a varint's step. */
static void test_set_json_head(void **state)
{
    (void)state;
    static const size_t LEN[] = {0, 1, 127, 128, 6144, 16383, 16384, 2097151, 2097152};
    static const char *const PATH[] = {"openconfig-acl:acl/acl-sets",
                                       "openconfig-acl:acl/acl-sets/acl-set[name=A_07][type=ACL_IPV4]"};
    uint8_t *json = malloc(2097152);
    assert_non_null(json);
    for (size_t i = 0; i < 2097152; i++)
        json[i] = (uint8_t)("{0123456789\"abc}"[i % 16]);
    for (int replace = 0; replace <= 1; replace++)
        for (size_t pi = 0; pi < 2; pi++)
            for (size_t li = 0; li < sizeof LEN / sizeof LEN[0]; li++) {
                Gnmi__Path *p = NULL;
                assert_int_equal(yb_gnmi_path_parse(PATH[pi], &p), 0);
                Gnmi__TypedValue v = GNMI__TYPED_VALUE__INIT;
                v.value_case = GNMI__TYPED_VALUE__VALUE_JSON_IETF_VAL;
                v.json_ietf_val.data = json;
                v.json_ietf_val.len = LEN[li];
                Gnmi__Update u = GNMI__UPDATE__INIT, *up = &u;
                u.path = p;
                u.val = &v;
                Gnmi__SetRequest req = GNMI__SET_REQUEST__INIT;
                if (replace) {
                    req.n_replace = 1;
                    req.replace = &up;
                } else {
                    req.n_update = 1;
                    req.update = &up;
                }
                uint8_t *whole, *head;
                size_t wn, hn;
                assert_int_equal(yb_grpc_frame(&req.base, &whole, &wn), 0);
                assert_int_equal(yb_gnmi_set_json_head(replace, p, LEN[li], &head, &hn), 0);
                if (hn + LEN[li] != wn || memcmp(whole, head, hn) ||
                    memcmp(whole + hn, json, LEN[li]))
                    fail_msg("replace %d path %zu length %zu: head of %zu bytes, frame of %zu",
                             replace, pi, LEN[li], hn, wn);
                free(whole);
                free(head);
                yb_gnmi_path_free(p);
            }
    free(json);
}

/* yb_gnmi_wire_count: a client's check of a SetResponse counts its results
 * on the wire; malformed bytes (anywhere, nested ones too) are refused as
 * unpack would refuse them. */
static void test_gnmi_wire_count(void **state)
{
    (void)state;
    Gnmi__UpdateResult ur[3];
    Gnmi__UpdateResult *urp[3];
    for (int i = 0; i < 3; i++) {
        gnmi__update_result__init(&ur[i]);
        ur[i].op = GNMI__UPDATE_RESULT__OPERATION__UPDATE;
        urp[i] = &ur[i];
    }
    Gnmi__SetResponse r = GNMI__SET_RESPONSE__INIT;
    r.response = urp;
    r.n_response = 3;
    r.timestamp = 1234567;
    uint8_t buf[256];
    size_t len = gnmi__set_response__pack(&r, buf), n = 99;
    const ProtobufCMessageDescriptor *d = &gnmi__set_response__descriptor;
    assert_int_equal(yb_gnmi_wire_count(d, buf, len, "response", &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(yb_gnmi_wire_count(d, buf, 0, "response", &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(yb_gnmi_wire_count(d, buf, len - 1, "response", &n), -1); /* truncated */
    assert_int_equal(yb_gnmi_wire_count(d, buf, len, "no_such_field", &n), -1);
    static const uint8_t as_varint[] = {0x10, 0x01};         /* field 2 as a varint */
    assert_int_equal(yb_gnmi_wire_count(d, as_varint, sizeof as_varint, "response", &n), -1);
    static const uint8_t bad_nested[] = {0x12, 0x02, 0x0f, 0x00}; /* wire type 7 inside */
    assert_int_equal(yb_gnmi_wire_count(d, bad_nested, sizeof bad_nested, "response", &n), -1);
    static const uint8_t two_empty[] = {0x12, 0x00, 0x12, 0x00, 0x20, 0x05};
    assert_int_equal(yb_gnmi_wire_count(d, two_empty, sizeof two_empty, "response", &n), 0);
    assert_int_equal(n, 2);
    /* by the field's number (2): the same answers; no such field: -1 */
    assert_int_equal(yb_gnmi_wire_count_id(d, buf, len, 2, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(yb_gnmi_wire_count_id(d, buf, len - 1, 2, &n), -1);
    assert_int_equal(yb_gnmi_wire_count_id(d, as_varint, sizeof as_varint, 2, &n), -1);
    assert_int_equal(yb_gnmi_wire_count_id(d, bad_nested, sizeof bad_nested, 2, &n), -1);
    assert_int_equal(yb_gnmi_wire_count_id(d, two_empty, sizeof two_empty, 2, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(yb_gnmi_wire_count_id(d, buf, len, 0, &n), -1);
    assert_int_equal(yb_gnmi_wire_count_id(d, buf, len, 99, &n), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_check),
        cmocka_unit_test(test_restconf_shape),
        cmocka_unit_test(test_restconf_methods_and_ops),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_json_bytes),
        cmocka_unit_test(test_unique_names_and_sizes),
        cmocka_unit_test(test_split_bodies),
        cmocka_unit_test(test_set_json_head),
        cmocka_unit_test(test_gnmi_set),
        cmocka_unit_test(test_gnmi_wire_count),
        cmocka_unit_test(test_gnmi_get_and_capabilities),
        cmocka_unit_test(test_gnmi_subscribe),
        cmocka_unit_test(test_gnmi_rules_option),
        cmocka_unit_test(test_path_parse),
        cmocka_unit_test(test_path_escapes_and_origin),
        cmocka_unit_test(test_grpc_framing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
