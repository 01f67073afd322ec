#include "config.h"
#include "synth/acl.h"
#include "corpus/corpus.h"
#include "gnmi/gnmi_msg.h"
#include "synth/gnmi_req.h"
#include "util/util.h"

#include <errno.h>
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
    /* names are JSON strings and fit set_name's buffer with the widest
     * number and _{{iter}} */
    if (strlen(o->name_prefix) > 96 ||
        !yb_utf8_valid((const uint8_t *)o->name_prefix, strlen(o->name_prefix)))
        return "--name-prefix must be valid UTF-8 of at most 96 bytes";
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

/* PREFIX_NNNNNN (at least six digits) into buf (128 bytes: the prefix
 * has at most 96, checked with the options); written here, not by
 * snprintf, which cost as much as a rule's JSON. */
static void set_name(const yb_synth_acl_opts *o, uint64_t k, char *buf, size_t cap)
{
    static const char ITER[] = "_{{iter}}";
    char num[24];
    size_t nd = 0;
    for (uint64_t v = k + 1; v || nd < 6; v /= 10)
        num[nd++] = (char)('0' + v % 10);
    size_t pl = strlen(o->name_prefix);
    if (pl + 1 + nd + sizeof ITER > cap) { /* (cannot happen: checked) */
        buf[0] = 0;
        return;
    }
    memcpy(buf, o->name_prefix, pl);
    buf[pl++] = '_';
    while (nd)
        buf[pl++] = num[--nd];
    /* --unique: the pass over the corpus joins the name when it is sent */
    if (o->unique) {
        memcpy(buf + pl, ITER, sizeof ITER);
    } else {
        buf[pl] = 0;
    }
}

/* ---- the request JSON, written straight into one buffer ----
 * The bytes are exactly what jansson's json_dumps(JSON_INDENT(4)) printed
 * for the same objects (keys in insertion order), which this file used
 * before: building a tree of objects per rule cost most of synth's time. */

typedef struct {
    char *p;
    size_t len, cap;
    unsigned depth; /* open containers */
    size_t start;   /* first allocation; 0: 16 KB, a set's size */
    int first;      /* nothing written yet in the innermost container */
    int oom;
    /* split: p is the text's skeleton (each run of digits one '0') and d
     * its runs of digits, each followed by ',' (the corpus' format 2):
     * the numbers go to d as they are written, and the few literals
     * holding digits are split by put_s.  No run of this JSON touches
     * another piece's (numbers and names sit between quotes, spaces,
     * dots and slashes), so each piece splits alone. */
    int split;
    char *d;
    size_t dlen, dcap, runs;
    int digits_only; /* split: the skeleton is not written (see rule_cached) */
} jbuf;

/* Makes room for n more bytes and the final NUL; returns 0 or -1. */
static int grow(jbuf *b, size_t n)
{
    if (b->oom)
        return -1;
    size_t cap = b->cap ? b->cap : b->start ? b->start : 16384;
    while (b->len + n + 1 > cap)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

/* Inline, so that the copy of a literal of known length is a few moves:
 * a set is about 700 small pieces, and a call per piece cost most of
 * synth's time outside zstd. */
static inline void put(jbuf *b, const char *s, size_t n)
{
    if (b->digits_only)
        return;
    if (__builtin_expect(b->len + n + 1 > b->cap, 0) && grow(b, n) < 0)
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

/* Makes room for n more digits. */
static int dgrow(jbuf *b, size_t n)
{
    if (b->oom)
        return -1;
    size_t cap = b->dcap ? b->dcap : 2048;
    while (b->dlen + n > cap)
        cap *= 2;
    char *d = realloc(b->d, cap);
    if (!d) {
        b->oom = 1;
        return -1;
    }
    b->d = d;
    b->dcap = cap;
    return 0;
}

/* A run of digits: itself in the text, or in split mode a '0' and the
 * run and its ',' apart. */
static inline void put_run(jbuf *b, const char *s, size_t n)
{
    if (!b->split) {
        put(b, s, n);
        return;
    }
    put(b, "0", 1);
    if (__builtin_expect(b->dlen + n + 1 > b->dcap, 0) && dgrow(b, n + 1) < 0)
        return;
    memcpy(b->d + b->dlen, s, n);
    b->d[b->dlen + n] = ',';
    b->dlen += n + 1;
    b->runs++;
}

/* Text that may hold digits: split in split mode (a byte at a time: for
 * the few such pieces). */
static void put_s(jbuf *b, const char *s, size_t n)
{
    if (!b->split) {
        put(b, s, n);
        return;
    }
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && (s[j] < '0' || s[j] > '9'))
            j++;
        put(b, s + i, j - i);
        for (i = j; j < n && s[j] >= '0' && s[j] <= '9'; j++)
            ;
        if (j > i)
            put_run(b, s + i, j - i);
        i = j;
    }
}

/* A string literal, its length known at compile time. */
#define PUTL(b, lit) put((b), (lit), sizeof(lit) - 1)

/* v in decimal, two digits at a time (a set has about 200 numbers) */
static const char D2[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/* The decimal length of v: compares, no divisions, for the numbers of a
 * set (all below 100,000). */
static inline size_t dec_len(uint64_t v)
{
    size_t n = 1 + (v >= 10) + (v >= 100) + (v >= 1000) + (v >= 10000);
    if (__builtin_expect(v >= 100000, 0))
        for (uint64_t t = v / 100000; t; t /= 10)
            n++;
    return n;
}

/* Writes v's n digits (n = dec_len(v)) at p. */
static inline void dec_put(char *p, uint64_t v, size_t n)
{
    size_t i = n;
    for (; v >= 100; v /= 100) {
        i -= 2;
        memcpy(p + i, D2 + 2 * (v % 100), 2);
    }
    if (v >= 10)
        memcpy(p, D2 + 2 * v, 2);
    else
        p[0] = (char)('0' + v);
}

/* v's digits and its ',' at p (split mode's digits); returns the end. */
static inline char *dig_u(char *p, uint64_t v)
{
    size_t n = dec_len(v);
    dec_put(p, v, n);
    p[n] = ',';
    return p + n + 1;
}

static void put_u(jbuf *b, uint64_t v)
{
    size_t n = dec_len(v);
    /* written in place, from its last digit: a set has about 200 numbers */
    char *p;
    if (b->split) {
        put(b, "0", 1);
        if (__builtin_expect(b->dlen + n + 1 > b->dcap, 0) && dgrow(b, n + 1) < 0)
            return;
        p = b->d + b->dlen;
        p[n] = ',';
        b->dlen += n + 1;
        b->runs++;
    } else {
        if (__builtin_expect(b->len + n + 1 > b->cap, 0) && grow(b, n) < 0)
            return;
        p = b->p + b->len;
        b->len += n;
    }
    dec_put(p, v, n);
}

/* A JSON string as jansson writes it: '"', '\\' and control characters
 * escaped (\b \f \n \r \t, else \u00XX), everything else as it is (the
 * text is valid UTF-8: checked with the options). */
static void put_text(jbuf *b, const char *s)
{
    static const char HEX[] = "0123456789ABCDEF";
    for (;;) {
        size_t n = 0;
        while ((unsigned char)s[n] >= 0x20 && s[n] != '"' && s[n] != '\\')
            n++;
        put(b, s, n);
        s += n;
        if (!*s)
            break;
        unsigned char c = (unsigned char)*s++;
        const char *esc = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\b' ? "\\b"
                        : c == '\f' ? "\\f" : c == '\n' ? "\\n" : c == '\r' ? "\\r"
                        : c == '\t' ? "\\t" : NULL;
        if (esc) {
            put(b, esc, 2);
        } else {
            char u[6] = {'\\', 'u', '0', '0', HEX[c >> 4], HEX[c & 15]};
            put(b, u, sizeof u);
        }
    }
}

/* ",\n" and the indentation of b->depth, without the comma when skip is
 * 1: one copy (the writer's containers nest at most 16 deep, a set's
 * JSON about 10). */
static void put_nl(jbuf *b, int skip)
{
    static const char SP[] = ",\n                                                                ";
    size_t n = 4u * b->depth;
    if (b->digits_only)
        return;
    if (__builtin_expect(n <= sizeof SP - 3 && b->len + sizeof SP < b->cap, 1)) {
        /* a copy of constant length, inline; the bytes past the
         * indentation are overwritten by what follows */
        memcpy(b->p + b->len, SP + skip, sizeof SP - 2);
        b->len += 2 - (size_t)skip + n;
        return;
    }
    if (n <= sizeof SP - 3) {
        put(b, SP + skip, 2 - (size_t)skip + n);
        return;
    }
    put(b, SP + skip, 2 - (size_t)skip);
    for (; n > sizeof SP - 3; n -= sizeof SP - 3)
        put(b, SP + 2, sizeof SP - 3);
    put(b, SP + 2, n);
}

/* Starts the next member of the innermost container. */
static inline void sep(jbuf *b)
{
    put_nl(b, b->first);
    b->first = 0;
}

/* "key": (a member of the innermost object).  The key is not escaped: the
 * keys are this file's literals.  The macros below take a literal, whose
 * quoted form is then one copy of known length. */
static void key_s(jbuf *b, const char *k)
{
    sep(b);
    PUTL(b, "\"");
    put_s(b, k, strlen(k));
    PUTL(b, "\": ");
}
#define key(b, k) (sep(b), PUTL((b), "\"" k "\": "))

static inline void open_(jbuf *b, char c)
{
    put(b, &c, 1);
    b->depth++;
    b->first = 1;
}

static inline void close_(jbuf *b, char c)
{
    b->depth--;
    if (!b->first) /* an empty container stays {} or [] */
        put_nl(b, 1);
    put(b, &c, 1);
    b->first = 0;
}

/* A set's name already escaped: as text (name->split 0), or split (its
 * skeleton and digits, made once for the set). */
static void put_name(jbuf *b, const jbuf *name)
{
    if (!name->split) {
        put_s(b, name->p, name->len);
        return;
    }
    put(b, name->p, name->len);
    if (!name->dlen)
        return;
    if (__builtin_expect(b->dlen + name->dlen > b->dcap, 0) && dgrow(b, name->dlen) < 0)
        return;
    memcpy(b->d + b->dlen, name->d, name->dlen);
    b->dlen += name->dlen;
    b->runs += name->runs;
}

/* "name" */
static void put_quoted(jbuf *b, const jbuf *name)
{
    PUTL(b, "\"");
    put_name(b, name);
    PUTL(b, "\"");
}

/* "k": "lit" for a literal that needs no escaping (and may hold digits) */
#define kv_lit_s(b, k, lit) (key(b, k), put_s((b), "\"" lit "\"", sizeof(lit) + 1))
/* a quoted literal that needs no escaping, and its length */
typedef struct {
    const char *q;
    size_t n;
} qlit;
#define QLIT(lit) {"\"" lit "\"", sizeof(lit) + 1}
#define kv_u(b, k, v) (key(b, k), put_u((b), (v)))
#define kv_open(b, k, c) (key(b, k), open_((b), (c)))
/* "k": "A.B.C.D/LEN" */
#define kv_prefix(b, k, a, len) (key(b, k), put_prefix((b), (a), (len)))

/* A random prefix whose first octet is `first`: its address and length. */
static uint32_t draw_prefix(uint64_t *s, unsigned first, unsigned *len)
{
    static const unsigned lens[] = {32, 32, 32, 24, 16};
    *len = lens[pick(s, 5)];
    uint32_t a = (first << 24) | (uint32_t)(mix(s) & 0xffffff);
    if (*len < 32)
        a &= ~((1u << (32 - *len)) - 1);
    return a;
}

static void put_prefix(jbuf *b, uint32_t a, unsigned len)
{
    PUTL(b, "\"");
    for (int sh = 24; sh >= 0; sh -= 8) {
        put_u(b, (a >> sh) & 255);
        put(b, sh ? "." : "/", 1);
    }
    put_u(b, len);
    PUTL(b, "\"");
}

/* A rule's random values, drawn in this order from its set's state. */
typedef struct {
    unsigned proto;  /* 0 TCP, 1 UDP, 2 ICMP (no ports) */
    uint32_t src, dst;
    unsigned src_len, dst_len, dscp, sport, dport, action;
} rule_vals;

static void draw_rule(uint64_t *s, rule_vals *v)
{
    v->proto = pick(s, 3);
    unsigned first = 10 + pick(s, 40);
    v->src = draw_prefix(s, first, &v->src_len);
    first = 100 + pick(s, 100);
    v->dst = draw_prefix(s, first, &v->dst_len);
    v->dscp = pick(s, 64);
    if (v->proto != 2) {
        v->sport = 1024 + pick(s, 64511);
        v->dport = 1 + pick(s, 1023);
    }
    v->action = pick(s, 3);
}

/* The rules' shapes: a rule's protocol and action. */
#define RULE_SHAPES 9u
static unsigned rule_shape(const rule_vals *v)
{
    return v->proto * 3 + v->action;
}

/* One acl-entry with sequence id seq and values v. */
static void rule_json(jbuf *b, const rule_vals *v, const jbuf *name, unsigned seq)
{
    static const qlit protos[] = {QLIT("openconfig-packet-match-types:IP_TCP"),
                                  QLIT("openconfig-packet-match-types:IP_UDP"),
                                  QLIT("openconfig-packet-match-types:IP_ICMP")};
    static const qlit actions[] = {QLIT("openconfig-acl:ACCEPT"), QLIT("openconfig-acl:DROP"),
                                   QLIT("openconfig-acl:REJECT")};
    sep(b);
    open_(b, '{');
    kv_u(b, "sequence-id", seq);
    kv_open(b, "config", '{');
    kv_u(b, "sequence-id", seq);
    key(b, "description");
    PUTL(b, "\"Description for ");
    put_name(b, name);
    PUTL(b, " Rule Seq ");
    put_u(b, seq);
    PUTL(b, "\"");
    close_(b, '}');
    sep(b); /* (a key with a digit) */
    PUTL(b, "\"ipv");
    put_run(b, "4", 1);
    PUTL(b, "\": ");
    open_(b, '{');
    kv_open(b, "config", '{');
    kv_prefix(b, "source-address", v->src, v->src_len);
    kv_prefix(b, "destination-address", v->dst, v->dst_len);
    kv_u(b, "dscp", v->dscp);
    key(b, "protocol");
    put(b, protos[v->proto].q, protos[v->proto].n);
    close_(b, '}');
    close_(b, '}');
    if (v->proto != 2) {
        kv_open(b, "transport", '{');
        kv_open(b, "config", '{');
        kv_u(b, "source-port", v->sport);
        kv_u(b, "destination-port", v->dport);
        close_(b, '}');
        close_(b, '}');
    }
    kv_open(b, "actions", '{');
    kv_open(b, "config", '{');
    const qlit *act = &actions[v->action];
    key(b, "forwarding-action");
    put(b, act->q, act->n);
    close_(b, '}');
    close_(b, '}');
    close_(b, '}');
}

/* rule_json's runs of digits alone, in its order (split mode): the
 * digits of a rule whose skeleton is copied (rule_cached).  Walking the
 * JSON with its skeleton left out cost twice this.  test_split_bodies
 * checks the two agree. */
static void rule_digits(jbuf *b, const rule_vals *v, const jbuf *name, unsigned seq)
{
    /* room for them all at once, then written through a local pointer
     * (the compiler keeps no jbuf field in a register across stores
     * through a char pointer: a call per number cost 3x this) */
    size_t room = name->dlen + 16 * 21 + 2;
    if (__builtin_expect(b->dlen + room > b->dcap, 0) && dgrow(b, room) < 0)
        return;
    char *d = b->d + b->dlen;
    d = dig_u(d, seq); /* sequence-id */
    d = dig_u(d, seq); /* config's sequence-id */
    memcpy(d, name->d, name->dlen); /* description */
    d += name->dlen;
    d = dig_u(d, seq);
    *d++ = '4'; /* ipv4 */
    *d++ = ',';
    for (int sh = 24; sh >= 0; sh -= 8)
        d = dig_u(d, (v->src >> sh) & 255);
    d = dig_u(d, v->src_len);
    for (int sh = 24; sh >= 0; sh -= 8)
        d = dig_u(d, (v->dst >> sh) & 255);
    d = dig_u(d, v->dst_len);
    d = dig_u(d, v->dscp);
    size_t runs = 15 + name->runs;
    if (v->proto != 2) {
        d = dig_u(d, v->sport);
        d = dig_u(d, v->dport);
        runs += 2;
    }
    b->dlen = (size_t)(d - b->d);
    b->runs += runs;
}

/* The skeletons of a set's rules, by shape and by whether the rule is
 * the first of its list (no ',' before it): in split mode every number
 * of a rule is a '0' of its skeleton, so a rule's skeleton depends only
 * on its shape, its depth and its set's name's skeleton.  A rule is then
 * its digits, made by rule_json with the skeleton left out, and a copy
 * of the skeleton, made once: the JSON's 700 pieces a set cost most of
 * synth's time.  Kept in yb_synth_split from set to set; a set whose
 * name or depth differ empties it. */
struct yb_synth_rules {
    char *name;                 /* the name's skeleton they were made with */
    size_t name_len;
    unsigned depth;
    char *skel[RULE_SHAPES][2]; /* [shape][first] */
    size_t len[RULE_SHAPES][2];
    jbuf ename, sname;          /* set_obj's buffers, kept from set to set */
};

static void rules_clear(yb_synth_rules *c)
{
    free(c->name);
    c->name = NULL;
    for (unsigned i = 0; i < RULE_SHAPES; i++)
        for (unsigned f = 0; f < 2; f++) {
            free(c->skel[i][f]);
            c->skel[i][f] = NULL;
        }
}

/* The name's skeleton and digits as a split jbuf (out's buffers reused). */
static int name_skel(const jbuf *name, jbuf *out)
{
    *out = (jbuf){.p = out->p, .cap = out->cap, .d = out->d, .dcap = out->dcap, .split = 1,
                  .start = 256};
    put_s(out, name->p, name->len);
    return out->oom ? -1 : 0;
}

/* rule_json in split mode, its skeleton copied from c (made the first
 * time a shape comes). */
static void rule_cached(jbuf *b, yb_synth_rules *c, uint64_t *s, const jbuf *name, unsigned seq)
{
    rule_vals v;
    draw_rule(s, &v);
    int first = b->first;
    b->digits_only = 1;
    rule_digits(b, &v, name, seq);
    b->digits_only = 0;
    b->first = 0; /* (as rule_json leaves it) */
    unsigned shape = rule_shape(&v);
    if (!c->skel[shape][first]) {
        jbuf t = {.split = 1, .depth = b->depth, .first = first, .start = 4096};
        rule_json(&t, &v, name, seq);
        free(t.d);
        if (t.oom) {
            free(t.p);
            b->oom = 1;
            return;
        }
        c->skel[shape][first] = t.p;
        c->len[shape][first] = t.len;
    }
    put(b, c->skel[shape][first], c->len[shape][first]);
}

/* Makes c fit a set whose name's skeleton is name->p at b's depth.
 * Returns 0 or -1. */
static int rules_for(yb_synth_rules *c, const jbuf *b, const jbuf *name)
{
    if (c->name && c->depth == b->depth && c->name_len == name->len &&
        !memcmp(c->name, name->p, name->len))
        return 0;
    rules_clear(c);
    if (!(c->name = malloc(name->len + 1)))
        return -1;
    memcpy(c->name, name->p, name->len);
    c->name_len = name->len;
    c->depth = b->depth;
    return 0;
}

/* The acl-set object for set k, as the next member of the container
 * open in b (or at the top when none is). */
static void set_obj(jbuf *b, const yb_synth_acl_opts *o, uint64_t k, yb_synth_rules *c)
{
    char name[128];
    set_name(o, k, name, sizeof name);
    uint64_t s = o->seed * 0x100000001b3ull ^ (k + 1) * 0x9e3779b97f4a7c15ull;
    /* the name as escaped in JSON, once for the set; split: its skeleton
     * and digits (in c's buffers when there is a c) */
    jbuf en_here = {0}, sn_here = {0};
    jbuf *en = c ? &c->ename : &en_here, *sn = c ? &c->sname : &sn_here;
    *en = (jbuf){.p = en->p, .cap = en->cap, .start = 256};
    put_text(en, name);
    const jbuf *nm = en;
    if (!en->oom && b->split && name_skel(en, sn) == 0)
        nm = sn;
    if (en->oom || (b->split && nm == en) || (c && rules_for(c, b, sn) < 0))
        b->oom = 1;
    if (b->oom)
        goto out;
    if (b->depth)
        sep(b);
    open_(b, '{');
    key(b, "name");
    put_quoted(b, nm);
    kv_lit_s(b, "type", "openconfig-acl:ACL_IPV4");
    kv_open(b, "config", '{');
    key(b, "name");
    put_quoted(b, nm);
    kv_lit_s(b, "type", "openconfig-acl:ACL_IPV4");
    key(b, "description");
    PUTL(b, "\"Description for ");
    put_name(b, nm);
    PUTL(b, "\"");
    close_(b, '}');
    kv_open(b, "acl-entries", '{');
    kv_open(b, "acl-entry", '[');
    unsigned rules = o->rules;
    if (rules == YB_SYNTH_RULES_AUTO)
        rules = o->proto == YB_PROTO_GNMI ? YB_SYNTH_DEFAULT_RULES_GNMI
                                          : YB_SYNTH_DEFAULT_RULES_RESTCONF;
    for (unsigned i = 1; i <= rules && !b->oom; i++) {
        if (c) {
            rule_cached(b, c, &s, nm, i);
        } else {
            rule_vals v;
            draw_rule(&s, &v);
            rule_json(b, &v, nm, i);
        }
    }
    close_(b, ']');
    close_(b, '}');
    close_(b, '}');
out:
    free(en_here.p);
    free(sn_here.p);
    free(sn_here.d);
}

/* Returns b's text (the caller frees it), or NULL when it ran out of
 * memory. */
static char *jb_done(jbuf *b)
{
    if (b->oom || !b->p) {
        free(b->p);
        return NULL;
    }
    b->p[b->len] = 0; /* (grow keeps room for it) */
    return b->p;
}

char *yb_synth_acl_set_json(const yb_synth_acl_opts *o, uint64_t k)
{
    jbuf b = {0};
    set_obj(&b, o, k, NULL);
    return jb_done(&b);
}

/* Wraps set k as {"KEY": [set]} (or {"KEY": {"acl-set": [set]}} when inner
 * is non-NULL).  Returns a malloc'd string or NULL. */
static void wrap(jbuf *b, const yb_synth_acl_opts *o, uint64_t k, const char *key_,
                 const char *inner, yb_synth_rules *c)
{
    open_(b, '{');
    if (inner) {
        key_s(b, key_);
        open_(b, '{');
        key_s(b, inner);
        open_(b, '[');
    } else {
        key_s(b, key_);
        open_(b, '[');
    }
    set_obj(b, o, k, c);
    close_(b, ']');
    if (inner)
        close_(b, '}');
    close_(b, '}');
}

static char *wrapped_json(const yb_synth_acl_opts *o, uint64_t k, const char *key_,
                          const char *inner)
{
    jbuf b = {0};
    wrap(&b, o, k, key_, inner, NULL);
    return jb_done(&b);
}

/* The same JSON split into sp's buffers (kept for the next call).
 * Returns the JSON's length, or 0 when out of memory. */
static size_t wrapped_split(const yb_synth_acl_opts *o, uint64_t k, const char *key_,
                            const char *inner, yb_synth_split *sp)
{
    if (!sp->rules && !(sp->rules = calloc(1, sizeof *sp->rules)))
        return 0;
    jbuf b = {.p = sp->skel, .cap = sp->skel_cap, .split = 1, .d = sp->dig, .dcap = sp->dig_cap};
    wrap(&b, o, k, key_, inner, sp->rules);
    sp->skel = b.p;
    sp->skel_cap = b.cap;
    sp->dig = b.d;
    sp->dig_cap = b.dcap;
    sp->sn = b.len;
    sp->dn = b.dlen;
    return b.oom ? 0 : b.len + b.dlen - 2 * b.runs;
}

void yb_synth_split_free(yb_synth_split *sp)
{
    free(sp->skel);
    free(sp->dig);
    if (sp->rules) {
        rules_clear(sp->rules);
        free(sp->rules->ename.p);
        free(sp->rules->sname.p);
        free(sp->rules->sname.d);
    }
    free(sp->rules);
    memset(sp, 0, sizeof *sp);
}

/* RESTCONF request k; its body split into sp when sp is not NULL.
 * Returns 1 when the body is in sp, 0 when in r (or there is none), or
 * a negative errno. */
static int restconf_request(const yb_synth_acl_opts *o, uint64_t k, yb_request *r,
                            yb_synth_split *sp)
{
    char name[128], path[512];
    set_name(o, k, name, sizeof name);
    const char *method, *key_ = NULL, *inner = NULL;
    int one_set = 1; /* the path names the set (else it is the sets') */
    switch (o->op) {
    case YB_SYNTH_CREATE:
        method = o->method;
        /* POST creates a child of acl-sets, PUT replaces the one set,
         * PATCH merges into acl-sets */
        key_ = strcmp(method, "PATCH") ? "openconfig-acl:acl-set" : "openconfig-acl:acl-sets";
        inner = strcmp(method, "PATCH") ? NULL : "acl-set";
        one_set = !strcmp(method, "PUT");
        break;
    case YB_SYNTH_REPLACE:
        method = "PUT";
        key_ = "openconfig-acl:acl-set";
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
    if (one_set)
        snprintf(path, sizeof path, RESTCONF_SETS "/acl-set=%s,ACL_IPV4", name);
    else
        memcpy(path, RESTCONF_SETS, sizeof RESTCONF_SETS);
    char *body = NULL;
    size_t split_len = 0;
    if (key_ && sp) {
        if (!(split_len = wrapped_split(o, k, key_, inner, sp)))
            return -ENOMEM;
    } else if (key_ && !(body = wrapped_json(o, k, key_, inner))) {
        return -ENOMEM;
    }
    static const char CT[] = "application/yang-data+json";
    int rc = yb_request_set_str(&r->method, method);
    rc = rc ? rc : yb_request_set_str(&r->path, path);
    if (key_)
        rc = rc ? rc : yb_request_add_header(r, "Content-Type", CT, sizeof CT - 1);
    if (body && !rc)
        yb_request_take_body(r, (uint8_t *)body, strlen(body));
    else
        free(body);
    r->body_len = split_len ? split_len : r->body_len;
    rc = rc ? rc : yb_request_add_header(r, "Accept", CT, sizeof CT - 1);
    return rc ? rc : split_len != 0;
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

/* Grows *p (of *cap bytes) to at least n bytes.  Returns 0 or -ENOMEM. */
static int grow_to(char **p, size_t *cap, size_t n)
{
    if (n <= *cap)
        return 0;
    char *q = realloc(*p, n);
    if (!q)
        return -ENOMEM;
    *p = q;
    *cap = n;
    return 0;
}

/* Puts head[0..hl) in front of the body split in sp, split as the corpus
 * writer splits a whole body (yb_corpus_split; a run of digits that goes
 * on into the body's first run is one run).  Returns 0 or -ENOMEM. */
static int split_prepend(yb_synth_split *sp, const uint8_t *head, size_t hl)
{
    uint8_t *hs = malloc(3 * hl + 1);
    if (!hs)
        return -ENOMEM;
    uint8_t *hd = hs + hl;
    size_t sn, dn;
    yb_corpus_split(head, hl, hs, &sn, hd, &dn);
    /* the head's last run goes on into the body's first: one run */
    int joins = hl && head[hl - 1] >= '0' && head[hl - 1] <= '9' && sp->sn && sp->skel[0] == '0';
    dn -= (size_t)joins; /* (its ',') */
    int rc = 0;
    if (grow_to(&sp->skel, &sp->skel_cap, sn + sp->sn - (size_t)joins) ||
        grow_to(&sp->dig, &sp->dig_cap, dn + sp->dn))
        rc = -ENOMEM;
    if (!rc) {
        memmove(sp->skel + sn, sp->skel + joins, sp->sn - (size_t)joins);
        memcpy(sp->skel, hs, sn);
        memmove(sp->dig + dn, sp->dig, sp->dn);
        memcpy(sp->dig, hd, dn);
        sp->sn += sn - (size_t)joins;
        sp->dn += dn;
    }
    free(hs);
    return rc;
}

/* gNMI Set k of create or replace, made split into sp: the JSON as
 * RESTCONF's is made (wrapped_split), the bytes before it (the gRPC
 * frame's and the SetRequest's, which depend on its length) split in
 * front of it, so the body is never made whole nor split again by the
 * writer.  The same bytes as gnmi_set's.  Returns 0 with *len the
 * body's length, or a negative errno. */
static int gnmi_set_split(const yb_synth_acl_opts *o, uint64_t k, yb_synth_split *sp,
                          size_t *len)
{
    char name[128], path[512];
    int replace = o->op == YB_SYNTH_REPLACE;
    if (replace) {
        set_name(o, k, name, sizeof name);
        snprintf(path, sizeof path, GNMI_SETS "/acl-set[name=%s][type=ACL_IPV4]", name);
    }
    size_t jl = wrapped_split(o, k, "openconfig-acl:acl-set", NULL, sp);
    if (!jl)
        return -ENOMEM;
    Gnmi__Path *p = NULL;
    int rc = yb_gnmi_path_parse(replace ? path : GNMI_SETS, &p);
    if (rc)
        return rc;
    uint8_t *head;
    size_t hl;
    rc = yb_gnmi_set_json_head(replace, p, jl, &head, &hl);
    yb_gnmi_path_free(p);
    if (rc)
        return rc;
    rc = split_prepend(sp, head, hl);
    free(head);
    *len = hl + jl;
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

/* gNMI request k; a Set's JSON (create, replace) split into sp when sp
 * is not NULL.  Returns 1 when the body is in sp, 0 when in r, or a
 * negative errno. */
static int gnmi_request(const yb_synth_acl_opts *o, uint64_t k, yb_request *r,
                        yb_synth_split *sp)
{
    if (sp && (o->op == YB_SYNTH_CREATE || o->op == YB_SYNTH_REPLACE)) {
        size_t len = 0;
        int rc = gnmi_set_split(o, k, sp, &len);
        rc = rc ? rc : yb_synth_grpc_request(r, "/gnmi.gNMI/Set", NULL, 0);
        r->body_len = len;
        return rc ? rc : 1;
    }
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

/* Request k, its JSON body split into sp when sp is not NULL and the
 * request has one.  Returns 1 when the body is in sp, 0, or a negative
 * errno. */
static int acl_request(const yb_synth_acl_opts *o, uint64_t k, yb_request *r,
                       yb_synth_split *sp)
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
    return o->proto == YB_PROTO_GNMI ? gnmi_request(o, k, r, sp) : restconf_request(o, k, r, sp);
}

int yb_synth_acl_request(const yb_synth_acl_opts *o, uint64_t k, yb_request *r)
{
    return acl_request(o, k, r, NULL);
}

int yb_synth_acl_request_split(const yb_synth_acl_opts *o, uint64_t k, yb_request *r,
                               yb_synth_split *sp)
{
    return acl_request(o, k, r, sp);
}
