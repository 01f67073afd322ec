#include "config.h"
#include "synth/acl.h"
#include "gnmi/gnmi_msg.h"
#include "synth/gnmi_req.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESTCONF_SETS "/restconf/data/openconfig-acl:acl/acl-sets"
#define GNMI_SETS "openconfig-acl:acl/acl-sets"

void yb_synth_acl_defaults(yb_synth_acl_opts *o)
{
    memset(o, 0, sizeof *o);
    o->proto = YB_PROTO_RESTCONF;
    o->op = YB_SYNTH_CREATE;
    o->method = "PATCH";
    o->count = 1000;
    o->rules = YB_SYNTH_RULES_AUTO;
    o->seed = 1;
    o->name_prefix = "YB_ACL";
    o->authority = "localhost";
    o->scheme = "https";
    o->sub_mode = YB_SUB_ONCE;
    o->sample_ns = 1000000000ull;
    o->polls = 3;
}

const char *yb_synth_acl_check(const yb_synth_acl_opts *o)
{
    if (o->proto != YB_PROTO_RESTCONF && o->proto != YB_PROTO_GNMI)
        return "--proto must be restconf or gnmi";
    if (o->proto == YB_PROTO_RESTCONF &&
        (o->op == YB_SYNTH_SUBSCRIBE || o->op == YB_SYNTH_CAPABILITIES))
        return "--op subscribe and --op capabilities need --proto gnmi";
    if (o->proto == YB_PROTO_RESTCONF && strcmp(o->method, "PATCH") &&
        strcmp(o->method, "POST") && strcmp(o->method, "PUT"))
        return "--method must be PATCH, POST or PUT";
    if (o->rules > 100000 && o->rules != YB_SYNTH_RULES_AUTO)
        return "--rules must be at most 100000";
    for (const char *a = o->authority; *a; a++) /* the corpus writer would refuse it */
        if ((unsigned char)*a <= 0x20 || *a == 0x7f)
            return "--authority must not contain spaces or control characters";
    if (!*o->name_prefix || strpbrk(o->name_prefix, "/[]=,?#% \"\\"))
        return "--name-prefix must be non-empty and free of / [ ] = , ? # % space quote backslash";
    return NULL;
}

/* splitmix64: a tiny, well-known deterministic generator. */
static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static unsigned pick(uint64_t *s, unsigned n)
{
    return (unsigned)(mix(s) % n);
}

static void set_name(const yb_synth_acl_opts *o, uint64_t k, char *buf, size_t cap)
{
    /* --unique: the pass over the corpus joins the name when it is sent */
    snprintf(buf, cap, "%s_%06llu%s", o->name_prefix, (unsigned long long)(k + 1),
             o->unique ? "_{{iter}}" : "");
}

static int add(json_t *obj, const char *key, json_t *v)
{
    return v ? json_object_set_new(obj, key, v) : -1;
}

static json_t *prefix_json(uint64_t *s, unsigned first)
{
    static const unsigned lens[] = {32, 32, 32, 24, 16};
    unsigned len = lens[pick(s, 5)];
    uint32_t a = (first << 24) | (uint32_t)(mix(s) & 0xffffff);
    if (len < 32)
        a &= ~((1u << (32 - len)) - 1);
    char buf[24];
    snprintf(buf, sizeof buf, "%u.%u.%u.%u/%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255,
             len);
    return json_string(buf);
}

/* One acl-entry with sequence id seq.  Returns a new object or NULL. */
static json_t *rule_json(uint64_t *s, const char *name, unsigned seq)
{
    static const char *const protos[] = {"IP_TCP", "IP_UDP", "IP_ICMP"};
    static const char *const actions[] = {"ACCEPT", "DROP", "REJECT"};
    char buf[256];
    json_t *e = json_object(), *cfg = json_object(), *ip = json_object(), *ipc = json_object();
    json_t *act = json_object(), *actc = json_object();
    if (!e || !cfg || !ip || !ipc || !act || !actc)
        goto fail;
    add(e, "sequence-id", json_integer(seq));
    add(cfg, "sequence-id", json_integer(seq));
    snprintf(buf, sizeof buf, "Description for %s Rule Seq %u", name, seq);
    add(cfg, "description", json_string(buf));
    add(e, "config", cfg);
    cfg = NULL;
    unsigned proto = pick(s, 3);
    add(ipc, "source-address", prefix_json(s, 10 + pick(s, 40)));
    add(ipc, "destination-address", prefix_json(s, 100 + pick(s, 100)));
    add(ipc, "dscp", json_integer(pick(s, 64)));
    snprintf(buf, sizeof buf, "openconfig-packet-match-types:%s", protos[proto]);
    add(ipc, "protocol", json_string(buf));
    add(ip, "config", ipc);
    ipc = NULL;
    add(e, "ipv4", ip);
    ip = NULL;
    if (proto != 2) {
        json_t *tr = json_object(), *trc = json_object();
        if (!tr || !trc) {
            json_decref(tr);
            json_decref(trc);
            goto fail;
        }
        add(trc, "source-port", json_integer(1024 + pick(s, 64511)));
        add(trc, "destination-port", json_integer(1 + pick(s, 1023)));
        add(tr, "config", trc);
        add(e, "transport", tr);
    }
    snprintf(buf, sizeof buf, "openconfig-acl:%s", actions[pick(s, 3)]);
    add(actc, "forwarding-action", json_string(buf));
    add(act, "config", actc);
    actc = NULL;
    add(e, "actions", act);
    return e;
fail:
    json_decref(e);
    json_decref(cfg);
    json_decref(ip);
    json_decref(ipc);
    json_decref(act);
    json_decref(actc);
    return NULL;
}

/* The acl-set object for set k.  Returns a new object or NULL. */
static json_t *set_obj(const yb_synth_acl_opts *o, uint64_t k)
{
    char name[128], desc[192];
    set_name(o, k, name, sizeof name);
    uint64_t s = o->seed * 0x100000001b3ull ^ (k + 1) * 0x9e3779b97f4a7c15ull;
    json_t *set = json_object(), *cfg = json_object(), *entries = json_object(),
           *list = json_array();
    if (!set || !cfg || !entries || !list)
        goto fail;
    add(set, "name", json_string(name));
    add(set, "type", json_string("openconfig-acl:ACL_IPV4"));
    add(cfg, "name", json_string(name));
    add(cfg, "type", json_string("openconfig-acl:ACL_IPV4"));
    snprintf(desc, sizeof desc, "Description for %s", name);
    add(cfg, "description", json_string(desc));
    add(set, "config", cfg);
    cfg = NULL;
    unsigned rules = o->rules;
    if (rules == YB_SYNTH_RULES_AUTO)
        rules = o->proto == YB_PROTO_GNMI ? YB_SYNTH_DEFAULT_RULES_GNMI
                                          : YB_SYNTH_DEFAULT_RULES_RESTCONF;
    for (unsigned i = 1; i <= rules; i++) {
        json_t *r = rule_json(&s, name, i);
        if (!r || json_array_append_new(list, r))
            goto fail;
    }
    add(entries, "acl-entry", list);
    list = NULL;
    add(set, "acl-entries", entries);
    return set;
fail:
    json_decref(set);
    json_decref(cfg);
    json_decref(entries);
    json_decref(list);
    return NULL;
}

/* Pretty-printed (4-space indent, like SONiC's test payloads), keys in
 * insertion order. */
static char *dump(json_t *j)
{
    char *s = json_dumps(j, JSON_INDENT(4));
    json_decref(j);
    return s;
}

char *yb_synth_acl_set_json(const yb_synth_acl_opts *o, uint64_t k)
{
    json_t *set = set_obj(o, k);
    return set ? dump(set) : NULL;
}

/* Wraps set k as {"KEY": [set]} (or {"KEY": {"acl-set": [set]}} when inner
 * is non-NULL).  Returns a malloc'd string or NULL. */
static char *wrapped_json(const yb_synth_acl_opts *o, uint64_t k, const char *key,
                          const char *inner)
{
    json_t *set = set_obj(o, k), *arr = json_array(), *top = json_object();
    if (!set || !arr || !top || json_array_append_new(arr, set)) {
        json_decref(arr);
        json_decref(top);
        return NULL;
    }
    if (inner) {
        json_t *mid = json_object();
        if (!mid || json_object_set_new(mid, inner, arr)) {
            json_decref(mid);
            json_decref(top);
            return NULL;
        }
        arr = mid;
    }
    if (json_object_set_new(top, key, arr)) {
        json_decref(top);
        return NULL;
    }
    return dump(top);
}

static int restconf_request(const yb_synth_acl_opts *o, uint64_t k, yb_request *r)
{
    char name[128], path[512];
    set_name(o, k, name, sizeof name);
    snprintf(path, sizeof path, RESTCONF_SETS "/acl-set=%s,ACL_IPV4", name);
    const char *method;
    char *body = NULL;
    switch (o->op) {
    case YB_SYNTH_CREATE:
        method = o->method;
        if (!strcmp(method, "POST")) /* POST creates a child of acl-sets */
            body = wrapped_json(o, k, "openconfig-acl:acl-set", NULL);
        else if (!strcmp(method, "PUT")) /* PUT replaces the one set */
            body = wrapped_json(o, k, "openconfig-acl:acl-set", NULL);
        else /* PATCH merges into acl-sets */
            body = wrapped_json(o, k, "openconfig-acl:acl-sets", "acl-set");
        if (!strcmp(method, "PUT"))
            break;
        snprintf(path, sizeof path, RESTCONF_SETS);
        break;
    case YB_SYNTH_REPLACE:
        method = "PUT";
        body = wrapped_json(o, k, "openconfig-acl:acl-set", NULL);
        break;
    case YB_SYNTH_DELETE:
        method = "DELETE";
        break;
    case YB_SYNTH_GET:
        method = "GET";
        break;
    default:
        return -EINVAL;
    }
    if ((o->op == YB_SYNTH_CREATE || o->op == YB_SYNTH_REPLACE) && !body)
        return -ENOMEM;
    static const char CT[] = "application/yang-data+json";
    int rc = yb_request_set_str(&r->method, method);
    rc = rc ? rc : yb_request_set_str(&r->path, path);
    if (body) {
        rc = rc ? rc : yb_request_add_header(r, "Content-Type", CT, sizeof CT - 1);
        if (!rc)
            yb_request_take_body(r, (uint8_t *)body, strlen(body));
        else
            free(body);
    }
    rc = rc ? rc : yb_request_add_header(r, "Accept", CT, sizeof CT - 1);
    return rc;
}

/* Builds a heap Update {path, val.json_ietf_val = json}. */
static int make_update(const char *path, char *json, Gnmi__Update **out)
{
    Gnmi__Update *u = calloc(1, sizeof *u);
    Gnmi__TypedValue *v = calloc(1, sizeof *v);
    if (!u || !v) {
        free(u);
        free(v);
        return -ENOMEM;
    }
    gnmi__update__init(u);
    gnmi__typed_value__init(v);
    int rc = yb_gnmi_path_parse(path, &u->path);
    if (rc) {
        free(u);
        free(v);
        return rc;
    }
    v->value_case = GNMI__TYPED_VALUE__VALUE_JSON_IETF_VAL;
    v->json_ietf_val.data = (uint8_t *)json;
    v->json_ietf_val.len = strlen(json);
    u->val = v;
    *out = u;
    return 0;
}

static void free_update(Gnmi__Update *u)
{
    if (!u)
        return;
    yb_gnmi_path_free(u->path);
    if (u->val)
        free(u->val->json_ietf_val.data);
    free(u->val);
    free(u);
}

static int gnmi_set(const yb_synth_acl_opts *o, uint64_t k, uint8_t **buf, size_t *len)
{
    char name[128], path[512];
    set_name(o, k, name, sizeof name);
    snprintf(path, sizeof path, GNMI_SETS "/acl-set[name=%s][type=ACL_IPV4]", name);
    Gnmi__SetRequest req = GNMI__SET_REQUEST__INIT;
    Gnmi__Update *u = NULL;
    Gnmi__Path *del = NULL;
    int rc;
    if (o->op == YB_SYNTH_DELETE) {
        rc = yb_gnmi_path_parse(path, &del);
        req.n_delete_ = 1;
        req.delete_ = &del;
    } else if (o->op == YB_SYNTH_REPLACE) {
        char *json = wrapped_json(o, k, "openconfig-acl:acl-set", NULL);
        rc = json ? make_update(path, json, &u) : -ENOMEM;
        if (rc)
            free(json);
        req.n_replace = 1;
        req.replace = &u;
    } else {
        char *json = wrapped_json(o, k, "openconfig-acl:acl-set", NULL);
        rc = json ? make_update(GNMI_SETS, json, &u) : -ENOMEM;
        if (rc)
            free(json);
        req.n_update = 1;
        req.update = &u;
    }
    if (!rc)
        rc = yb_grpc_frame(&req.base, buf, len);
    free_update(u);
    yb_gnmi_path_free(del);
    return rc;
}

static int gnmi_get(const yb_synth_acl_opts *o, uint64_t k, uint8_t **buf, size_t *len)
{
    char name[128], path[512];
    set_name(o, k, name, sizeof name);
    snprintf(path, sizeof path, GNMI_SETS "/acl-set[name=%s][type=ACL_IPV4]", name);
    Gnmi__GetRequest req = GNMI__GET_REQUEST__INIT;
    Gnmi__Path *p = NULL;
    int rc = yb_gnmi_path_parse(path, &p);
    if (rc)
        return rc;
    req.n_path = 1;
    req.path = &p;
    req.encoding = GNMI__ENCODING__JSON_IETF;
    rc = yb_grpc_frame(&req.base, buf, len);
    yb_gnmi_path_free(p);
    return rc;
}

static int gnmi_subscribe(const yb_synth_acl_opts *o, uint8_t **buf, size_t *len)
{
    Gnmi__SubscribeRequest req = GNMI__SUBSCRIBE_REQUEST__INIT;
    Gnmi__SubscriptionList list = GNMI__SUBSCRIPTION_LIST__INIT;
    Gnmi__Subscription sub = GNMI__SUBSCRIPTION__INIT, *subp = &sub;
    int rc = yb_gnmi_path_parse(GNMI_SETS, &sub.path);
    if (rc)
        return rc;
    static const Gnmi__SubscriptionList__Mode modes[] = {
        GNMI__SUBSCRIPTION_LIST__MODE__ONCE, GNMI__SUBSCRIPTION_LIST__MODE__POLL,
        GNMI__SUBSCRIPTION_LIST__MODE__STREAM};
    list.mode = modes[o->sub_mode];
    list.encoding = GNMI__ENCODING__JSON_IETF;
    if (o->sub_mode == YB_SUB_STREAM) {
        sub.mode = GNMI__SUBSCRIPTION_MODE__SAMPLE;
        sub.sample_interval = o->sample_ns;
    }
    list.n_subscription = 1;
    list.subscription = &subp;
    req.request_case = GNMI__SUBSCRIBE_REQUEST__REQUEST_SUBSCRIBE;
    req.subscribe = &list;
    *buf = NULL;
    *len = 0;
    rc = yb_grpc_append(&req.base, buf, len);
    if (o->sub_mode == YB_SUB_POLL) {
        Gnmi__Poll poll = GNMI__POLL__INIT;
        Gnmi__SubscribeRequest preq = GNMI__SUBSCRIBE_REQUEST__INIT;
        preq.request_case = GNMI__SUBSCRIBE_REQUEST__REQUEST_POLL;
        preq.poll = &poll;
        for (unsigned i = 0; i < o->polls && !rc; i++)
            rc = yb_grpc_append(&preq.base, buf, len);
    }
    yb_gnmi_path_free(sub.path);
    if (rc) {
        free(*buf);
        *buf = NULL;
    }
    return rc;
}

static int gnmi_request(const yb_synth_acl_opts *o, uint64_t k, yb_request *r)
{
    uint8_t *body = NULL;
    size_t len = 0;
    const char *rpc;
    int rc;
    switch (o->op) {
    case YB_SYNTH_GET:
        rpc = "/gnmi.gNMI/Get";
        rc = gnmi_get(o, k, &body, &len);
        break;
    case YB_SYNTH_SUBSCRIBE:
        rpc = "/gnmi.gNMI/Subscribe";
        rc = gnmi_subscribe(o, &body, &len);
        break;
    case YB_SYNTH_CAPABILITIES: {
        Gnmi__CapabilityRequest req = GNMI__CAPABILITY_REQUEST__INIT;
        rpc = "/gnmi.gNMI/Capabilities";
        rc = yb_grpc_frame(&req.base, &body, &len);
        break;
    }
    default:
        rpc = "/gnmi.gNMI/Set";
        rc = gnmi_set(o, k, &body, &len);
        break;
    }
    if (rc)
        return rc;
    return yb_synth_grpc_request(r, rpc, body, len);
}

int yb_synth_acl_request(const yb_synth_acl_opts *o, uint64_t k, yb_request *r)
{
    r->protocol = o->proto;
    int rc = yb_request_set_str(&r->scheme, o->scheme);
    rc = rc ? rc : yb_request_set_str(&r->authority, o->authority);
    if (rc)
        return rc;
    r->conn_id = 0;
    r->conn_order = (uint32_t)k;
    r->timestamp_ns = 0;
    r->templated = o->unique;
    return o->proto == YB_PROTO_GNMI ? gnmi_request(o, k, r) : restconf_request(o, k, r);
}
