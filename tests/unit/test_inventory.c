/* The inventory parser: both shapes, defaults merged, and every refusal
 * with its exact message (file, line, key). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/inventory.h"

static char err[1024];

static int parse(const char *text, yb_inventory *inv)
{
    err[0] = 0;
    return yb_inventory_parse("inv.yaml", (const uint8_t *)text, strlen(text), inv, err,
                              sizeof err);
}

/* Asserts text is refused with exactly msg. */
static void refused(const char *text, const char *msg)
{
    yb_inventory inv;
    int rc = parse(text, &inv);
    if (rc == 0 || strcmp(err, msg))
        fail_msg("expected refusal\n  %s\ngot rc %d\n  %s", msg, rc, err);
    assert_int_equal(inv.n, 0);
    assert_null(inv.target);
}

static void test_native(void **st)
{
    (void)st;
    setenv("YB_INV_PW", "s3cret", 1);
    yb_inventory inv;
    const char *ok = "defaults:\n"
                     "  user: admin\n"
                     "  password-env: YB_INV_PW\n"
                     "  tls: {ca: ca.pem, server-name: sw.lab}\n"
                     "  concurrency: 4\n"
                     "  labels: {site: lab, rack: r0}\n"
                     "targets:\n"
                     "  - name: sw1\n"
                     "    restconf: https://127.0.0.1:18443\n"
                     "    gnmi: grpcs://127.0.0.1:18080\n"
                     "    aliases: [sw1.lab, \"10.0.0.1:443\"]\n"
                     "    labels: {rack: r1}\n"
                     "  - name: sw2\n"
                     "    gnmi: grpc://127.0.0.1:18081\n"
                     "    user: ops\n"
                     "    rate: 2k\n"
                     "    concurrency: 8\n";
    /* a null CA is not a string: refused, not taken as "none" */
    char bad[1024];
    snprintf(bad, sizeof bad, "%s    tls: {insecure: true, ca: ~}\n", ok);
    assert_int_equal(parse(bad, &inv), -1);
    assert_string_equal(err, "inv.yaml:18: key 'ca' in target 'sw2': expected a string");
    assert_int_equal(yb_inventory_parse("/etc/yb/inv.yaml", (const uint8_t *)ok, strlen(ok),
                                        &inv, err, sizeof err), 0);
    assert_int_equal(inv.n, 2);
    assert_int_equal(inv.gnmic, 0);
    const yb_inv_target *a = &inv.target[0], *b = &inv.target[1];
    assert_string_equal(a->name, "sw1");
    assert_int_equal(a->line, 8);
    assert_string_equal(a->restconf, "https://127.0.0.1:18443");
    assert_string_equal(a->gnmi, "grpcs://127.0.0.1:18080");
    assert_int_equal(a->n_aliases, 2);
    assert_string_equal(a->aliases[1], "10.0.0.1:443");
    assert_string_equal(a->user, "admin");
    assert_int_equal(a->secret, YB_SECRET_PASSWORD);
    assert_string_equal(a->secret_env, "YB_INV_PW");
    assert_null(a->secret_file);
    assert_string_equal(a->tls_ca, "/etc/yb/ca.pem"); /* relative to the file */
    assert_string_equal(a->tls_server_name, "sw.lab");
    assert_int_equal(a->tls_insecure, 0);
    assert_int_equal(a->concurrency, 4);
    assert_null(a->rate);
    assert_int_equal(a->n_labels, 2); /* own rack wins, site from defaults */
    assert_string_equal(a->label_key[0], "rack");
    assert_string_equal(a->label_value[0], "r1");
    assert_string_equal(a->label_key[1], "site");
    assert_string_equal(b->user, "ops");
    assert_null(b->restconf);
    assert_int_equal(b->concurrency, 8);
    assert_non_null(b->rate);
    assert_true(b->rate->rate == 2000.0);
    assert_ptr_equal(yb_inventory_find(&inv, "sw1.lab"), a);
    assert_ptr_equal(yb_inventory_find(&inv, "sw2"), b);
    assert_null(yb_inventory_find(&inv, "sw3"));
    yb_inventory_free(&inv);
    assert_int_equal(inv.n, 0);
}

/* A step rate in defaults: every target without its own shares the
 * defaults' steps (schedule.h: one reference each), a target's own rate
 * has its own; freeing the inventory gives every reference back (a leak
 * or a double free under the sanitizer build otherwise), also when the
 * file is refused after the steps were shared. */
static void test_step_rate_shared(void **st)
{
    (void)st;
    yb_inventory inv;
    const char *ok = "defaults:\n"
                     "  rate: step:10@1s,20@2s\n"
                     "targets:\n"
                     "  - name: sw1\n"
                     "    gnmi: grpc://127.0.0.1:18081\n"
                     "  - name: sw2\n"
                     "    gnmi: grpc://127.0.0.1:18082\n"
                     "  - name: sw3\n"
                     "    gnmi: grpc://127.0.0.1:18083\n"
                     "    rate: step:5@4s\n";
    assert_int_equal(parse(ok, &inv), 0);
    assert_int_equal(inv.n, 3);
    const yb_schedule *a = inv.target[0].rate, *b = inv.target[1].rate,
                      *c = inv.target[2].rate;
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->kind, YB_SCHED_STEP);
    assert_ptr_equal(a->steps, b->steps);
    assert_int_equal(yb_sched_n_steps(b), 2);
    assert_int_equal(yb_sched_length(b), UINT64_C(3000000000));
    assert_ptr_not_equal(c->steps, a->steps);
    assert_int_equal(yb_sched_n_steps(c), 1);
    yb_inventory_free(&inv);
    char bad[1024];
    snprintf(bad, sizeof bad, "%s  - name: sw1\n    gnmi: grpc://127.0.0.1:18084\n", ok);
    assert_int_equal(parse(bad, &inv), -1);
    assert_non_null(strstr(err, "duplicate"));
}

static void test_gnmic(void **st)
{
    (void)st;
    setenv("YB_INV_PW", "s3cret", 1);
    yb_inventory inv;
    const char *y = "username: admin\n"
                    "password-env: YB_INV_PW\n"
                    "skip-verify: true\n"
                    "targets:\n"
                    "  10.0.0.1:57400:\n"
                    "  10.0.0.2:\n"
                    "    insecure: true\n"
                    "    skip-verify: false\n"
                    "  leaf3:\n"
                    "    address: 10.0.0.3:6030\n"
                    "    tls-ca: /ca.pem\n"
                    "    skip-verify: false\n";
    assert_int_equal(parse(y, &inv), 0);
    assert_int_equal(inv.gnmic, 1);
    assert_int_equal(inv.n, 3);
    assert_string_equal(inv.target[0].name, "10.0.0.1:57400");
    assert_string_equal(inv.target[0].gnmi, "grpcs://10.0.0.1:57400");
    assert_int_equal(inv.target[0].tls_insecure, 1);
    assert_string_equal(inv.target[0].user, "admin");
    assert_int_equal(inv.target[0].secret, YB_SECRET_PASSWORD);
    assert_string_equal(inv.target[1].gnmi, "grpc://10.0.0.2:57400");
    assert_string_equal(inv.target[2].name, "leaf3");
    assert_string_equal(inv.target[2].gnmi, "grpcs://10.0.0.3:6030");
    assert_string_equal(inv.target[2].tls_ca, "/ca.pem");
    assert_int_equal(inv.target[2].tls_insecure, 0);
    yb_inventory_free(&inv);
}

static void test_refusals(void **st)
{
    (void)st;
    setenv("YB_INV_PW", "s3cret", 1);
    unsetenv("YB_INV_NOPE");
    refused("targets:\n  - name: sw1\n    restconf: https://a\n    colour: red\n",
            "inv.yaml:4: unknown key 'colour' in target 'sw1'");
    refused("defaults:\n  gnmi: grpc://a\ntargets:\n  - name: sw1\n    restconf: https://a\n",
            "inv.yaml:2: unknown key 'gnmi' in defaults");
    refused("targets:\n  - name: sw1\n    restconf: https://a\n    tls: {pin: x}\n",
            "inv.yaml:4: unknown key 'tls.pin' in target 'sw1' (known: ca, cert, key, "
            "server-name, insecure)");
    refused("target:\n  - name: sw1\n",
            "inv.yaml:1: expected a mapping with key 'targets' (a list of targets, or gnmic's "
            "mapping of addresses)");
    refused("version: 2\ntargets:\n  - name: sw1\n    restconf: https://a\n",
            "inv.yaml:1: unknown key 'version' at the top level (known: defaults, targets)");
    refused("targets:\n  - name: sw1\n    user: u\n    password: hunter2\n    restconf: https://a\n",
            "inv.yaml:4: key 'password' in target 'sw1': a literal password is refused (it "
            "would sit in the file in clear); give password-env: VARIABLE or password-file: "
            "PATH");
    refused("targets:\n  10.0.0.1:57400:\n    token: abc\n",
            "inv.yaml:3: key 'token' in target '10.0.0.1:57400': a literal token is refused (it "
            "would sit in the file in clear); give token-env: VARIABLE or token-file: PATH");
    refused("password: x\ntargets:\n  a:\n",
            "inv.yaml:1: key 'password' in the top level: a literal password is refused (it "
            "would sit in the file in clear); give password-env: VARIABLE or password-file: "
            "PATH");
    refused("targets:\n  - name: sw1\n    user: u\n    password-env: YB_INV_NOPE\n"
            "    restconf: https://a\n",
            "inv.yaml:4: key 'password-env' in target 'sw1': environment variable 'YB_INV_NOPE' "
            "is not set");
    refused("targets:\n  - name: sw1\n    user: u\n    password-file: /nonexistent/pw\n"
            "    restconf: https://a\n",
            "inv.yaml:4: key 'password-file' in target 'sw1': cannot read '/nonexistent/pw': No "
            "such file or directory");
    refused("targets:\n  - name: sw1\n    token-file: /\n    restconf: https://a\n",
            "inv.yaml:3: key 'token-file' in target 'sw1': cannot read '/': not a regular file");
    refused("targets:\n  - name: sw1\n    password-env: YB_INV_PW\n    restconf: https://a\n",
            "inv.yaml:3: key 'password-env' in target 'sw1': a password needs a user (user: "
            "NAME)");
    refused("targets:\n  - name: sw1\n    user: u\n    password-env: YB_INV_PW\n"
            "    token-env: YB_INV_PW\n    restconf: https://a\n",
            "inv.yaml:5: key 'token-env' in target 'sw1': a second secret (line 4); give one of "
            "password-env, password-file, token-env, token-file");
    refused("targets:\n  - name: sw1\n    restconf: https://a\n  - name: sw1\n    gnmi: grpc://b\n",
            "inv.yaml:4: key 'name': duplicate target name 'sw1' (first at line 2)");
    refused("targets:\n  - name: sw1\n    aliases: [x]\n    restconf: https://a\n"
            "  - name: sw2\n    aliases: [x]\n    gnmi: grpc://b\n",
            "inv.yaml:5: key 'aliases' in target 'sw2': 'x' is an alias of target 'sw1' too");
    refused("targets:\n  - name: sw1\n    restconf: ftp://a\n",
            "inv.yaml:3: key 'restconf' in target 'sw1': bad URL 'ftp://a': scheme must be "
            "http, https, grpc or grpcs");
    refused("targets:\n  - name: sw1\n    restconf: grpc://a\n",
            "inv.yaml:3: key 'restconf' in target 'sw1': bad URL 'grpc://a': expected http:// "
            "or https://");
    refused("targets:\n  - name: sw1\n    gnmi: grpcs://a:99999\n",
            "inv.yaml:3: key 'gnmi' in target 'sw1': bad URL 'grpcs://a:99999': bad port");
    refused("targets:\n  - name: sw1\n    restconf: https://u:pw@a\n",
            "inv.yaml:3: key 'restconf' in target 'sw1': bad URL: user-info in the URL is not "
            "accepted (a secret in clear); give user: NAME and password-env or password-file");
    refused("targets:\n  - name: sw1\n    user: u\n",
            "inv.yaml:2: target 'sw1' has no URL: give restconf: URL and/or gnmi: URL");
    refused("targets:\n  - restconf: https://a\n", "inv.yaml:2: target #1 has no key 'name'");
    refused("targets:\n  - name: sw 1\n    restconf: https://a\n",
            "inv.yaml:2: key 'name' in target #1: 'sw 1': expected 1 to 64 of A-Z a-z 0-9 . _ -");
    refused("targets:\n  - name: sw1\n    restconf: https://a\n    concurrency: 0\n",
            "inv.yaml:4: key 'concurrency' in target 'sw1': '0': expected an integer in 1..100000");
    refused("defaults:\n  concurrency: 4x\ntargets:\n  - name: sw1\n    restconf: https://a\n",
            "inv.yaml:2: key 'concurrency' in defaults: '4x': expected an integer in 1..100000");
    refused("targets:\n  - name: sw1\n    restconf: https://a\n    rate: fast\n",
            "inv.yaml:4: key 'rate' in target 'sw1': 'fast': expected requests/s (a rate per "
            "second (a number, optionally with k: x1000, e.g. 500, 2k, 1.5k)), "
            "ramp:FROM..TO/DURATION or step:R1@D1,R2@D2,...");
    refused("targets:\n  - name: sw1\n    restconf: https://a\n    restconf: https://b\n",
            "inv.yaml:4: key 'restconf' in target 'sw1': given twice (first at line 3)");
    refused("targets:\n  - name: sw1\n    restconf: https://a\n    tls: {insecure: maybe}\n",
            "inv.yaml:4: key 'insecure' in target 'sw1': expected true or false");
    refused("targets:\n  - name: sw1\n    restconf: https://a\n    tls: {cert: c.pem}\n",
            "inv.yaml:2: target 'sw1': a client certificate and its key go together");
    refused("targets: []\n",
            "inv.yaml:1: key 'targets': expected a non-empty list (or gnmic's mapping)");
    refused("targets:\n  - name: sw1\n    restconf: [https://a\n",
            "inv.yaml:4: YAML syntax error: did not find expected ',' or ']' while parsing a flow "
            "sequence");
    refused("targets:\n  a:\n    insecure: true\n    tls-ca: ca.pem\n",
            "inv.yaml:2: target 'a': insecure (no TLS) excludes skip-verify and the tls-* keys");
    refused("targets:\n  a:\n---\ntargets:\n  b:\n",
            "inv.yaml:3: a second YAML document: an inventory is one document");
}

static void test_hostile(void **st)
{
    (void)st;
    /* a billion-laughs bomb stops at its first alias */
    refused("a: &a [x, x, x, x, x, x, x, x, x]\n"
            "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "targets:\n  s:\n",
            "inv.yaml:2: YAML aliases (*a) are not accepted in an inventory");
    /* deep nesting */
    char deep[256] = "targets: ";
    for (int i = 0; i < 40; i++)
        strcat(deep, "[");
    refused(deep, "inv.yaml:1: nested deeper than 16 levels");
    /* a huge scalar */
    size_t n = YB_INV_MAX_SCALAR + 100;
    char *big = malloc(n + 64);
    assert_non_null(big);
    memcpy(big, "targets:\n  - name: ", 19);
    memset(big + 19, 'a', n);
    strcpy(big + 19 + n, "\n");
    refused(big, "inv.yaml:2: a value longer than 4096 bytes or with a NUL byte");
    free(big);
    /* a file over the cap, refused before parsing */
    yb_inventory inv;
    static const uint8_t zero[1];
    assert_int_equal(yb_inventory_parse("inv.yaml", zero, YB_INV_MAX_BYTES + 1u, &inv, err,
                                        sizeof err), -1);
    assert_string_equal(err, "inv.yaml:1: larger than 4194304 bytes");
    /* too many nodes */
    size_t cap = (size_t)YB_INV_MAX_NODES * 3 + 64, len = 0;
    char *many = malloc(cap);
    assert_non_null(many);
    len += (size_t)snprintf(many, cap, "targets: [");
    for (unsigned i = 0; i <= YB_INV_MAX_NODES; i++) {
        many[len++] = '1';
        many[len++] = ',';
    }
    many[len++] = ']';
    many[len] = 0;
    refused(many, "inv.yaml:1: more than 200000 YAML nodes");
    free(many);
    /* load: a missing file and a directory */
    assert_int_equal(yb_inventory_load("/nonexistent/inv.yaml", &inv, err, sizeof err), -1);
    assert_string_equal(err, "/nonexistent/inv.yaml: cannot read: No such file or directory");
    assert_int_equal(yb_inventory_load("/", &inv, err, sizeof err), -1);
    assert_string_equal(err, "/: cannot read: not a regular file");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_native),
        cmocka_unit_test(test_step_rate_shared),
        cmocka_unit_test(test_gnmic),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_hostile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
