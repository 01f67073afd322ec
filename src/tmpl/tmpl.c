/* Request templates (see tmpl.h): the placeholder compiler and the
 * per-request filler. */
#include "config.h"
#include "tmpl/tmpl.h"
#include "tmpl/pick.h"
#include "util/util.h"
#include "util/varint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { P_LIT, P_VAL, P_LEN, P_OPEN, P_CLOSE } pkind;

/* One part: LIT a = offset, b = length in lit; VAL a = placeholder;
 * LEN / OPEN / CLOSE a = region. */
typedef struct {
    uint8_t kind;
    uint32_t a, b;
} part;

typedef enum {
    PH_ITER, PH_WORKER, PH_SESSION, PH_INDEX, PH_COUNTER, PH_RANDOM, PH_CHOICE, PH_UUID, PH_TARGET,
    PH_PREV, /* a value of the previous step's response, found by key in the vars */
} phkind;

typedef struct {
    phkind k;
    int64_t a, b;     /* counter: start, step; random: lo, hi */
    uint64_t mod;     /* counter: values before it wraps (0 = never) */
    uint64_t key;     /* hash of the placeholder's text: its random stream */
    uint32_t item0, n_items; /* choice: its items in t->items */
} ph;

typedef struct {
    uint32_t off, len; /* in lit */
} item;

struct yb_tmpl {
    part *parts;
    size_t n_parts, cap_parts;
    uint8_t *lit;
    size_t n_lit, cap_lit;
    ph ph[YB_TMPL_MAX_PH];
    size_t n_ph;
    item *items;
    size_t n_items, cap_items;
    uint8_t enc[YB_TMPL_MAX_REGIONS];
    uint8_t begun[YB_TMPL_MAX_REGIONS];
    size_t n_reg;
    uint32_t stack[YB_TMPL_MAX_REGIONS];
    size_t depth;
    size_t gaps;
};

yb_tmpl *yb_tmpl_new(void)
{
    return calloc(1, sizeof(yb_tmpl));
}

void yb_tmpl_free(yb_tmpl *t)
{
    if (!t)
        return;
    free(t->parts);
    free(t->lit);
    free(t->items);
    free(t);
}

size_t yb_tmpl_gaps(const yb_tmpl *t)
{
    return t->gaps;
}

int yb_tmpl_uses_target(const yb_tmpl *t)
{
    for (size_t i = 0; i < t->n_ph; i++)
        if (t->ph[i].k == PH_TARGET)
            return 1;
    return 0;
}

size_t yb_tmpl_size(const yb_tmpl *t)
{
    return t->n_lit + t->n_parts * sizeof(part) + sizeof *t;
}

int yb_tmpl_has(const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i + 1 < n; i++)
        if (b[i] == '{' && b[i + 1] == '{')
            return 1;
    return 0;
}

/* Grows *buf (elements of size sz) to hold need; returns 0 or -ENOMEM. */
static int grow(void **buf, size_t *cap, size_t need, size_t sz)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 16;
    while (nc < need) {
        if (nc > SIZE_MAX / 2 / sz)
            return -ENOMEM;
        nc *= 2;
    }
    void *p = realloc(*buf, nc * sz);
    if (!p)
        return -ENOMEM;
    *buf = p;
    *cap = nc;
    return 0;
}

static int add_part(yb_tmpl *t, pkind k, uint32_t a, uint32_t b)
{
    if (grow((void **)&t->parts, &t->cap_parts, t->n_parts + 1, sizeof(part)))
        return -ENOMEM;
    t->parts[t->n_parts++] = (part){.kind = (uint8_t)k, .a = a, .b = b};
    return 0;
}

/* Copies n bytes into the literal arena; *off gets where.  The arena is
 * capped at 4 GiB (offsets are 32-bit; corpus entries are far smaller). */
static int lit_store(yb_tmpl *t, const void *p, size_t n, uint32_t *off)
{
    if (n > UINT32_MAX - t->n_lit)
        return -ENOMEM;
    if (grow((void **)&t->lit, &t->cap_lit, t->n_lit + n, 1))
        return -ENOMEM;
    if (n)
        memcpy(t->lit + t->n_lit, p, n);
    *off = (uint32_t)t->n_lit;
    t->n_lit += n;
    return 0;
}

int yb_tmpl_lit(yb_tmpl *t, const void *p, size_t n)
{
    if (!n)
        return 0;
    uint32_t off;
    if (lit_store(t, p, n, &off))
        return -ENOMEM;
    part *last = t->n_parts ? &t->parts[t->n_parts - 1] : NULL;
    if (last && last->kind == P_LIT && last->a + last->b == off) {
        last->b += (uint32_t)n; /* one part for adjacent literals */
        return 0;
    }
    return add_part(t, P_LIT, off, (uint32_t)n);
}

int yb_tmpl_length(yb_tmpl *t, yb_tmpl_len enc)
{
    if (t->n_reg == YB_TMPL_MAX_REGIONS)
        return -E2BIG;
    uint32_t r = (uint32_t)t->n_reg;
    if (add_part(t, P_LEN, r, 0))
        return -ENOMEM;
    t->enc[t->n_reg] = (uint8_t)enc;
    t->begun[t->n_reg++] = 0;
    return (int)r;
}

int yb_tmpl_begin(yb_tmpl *t, int id)
{
    if (id < 0 || (size_t)id >= t->n_reg || t->begun[id])
        return -EINVAL;
    if (add_part(t, P_OPEN, (uint32_t)id, 0))
        return -ENOMEM;
    t->begun[id] = 1;
    t->stack[t->depth++] = (uint32_t)id; /* depth <= regions begun */
    return 0;
}

int yb_tmpl_open(yb_tmpl *t, yb_tmpl_len enc)
{
    int id = yb_tmpl_length(t, enc);
    return id < 0 ? id : yb_tmpl_begin(t, id);
}

int yb_tmpl_close(yb_tmpl *t)
{
    if (!t->depth)
        return -EINVAL;
    return add_part(t, P_CLOSE, t->stack[--t->depth], 0);
}

/* ---- placeholders ------------------------------------------------------- */


/* Formats the placeholder text for a message (at most 60 bytes of it). */
static void quote(char *buf, size_t cap, const uint8_t *p, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n && i < 60 && k + 5 < cap; i++)
        buf[k++] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
    if (n > 60 && k + 4 < cap) {
        memcpy(buf + k, "...", 3);
        k += 3;
    }
    buf[k] = 0;
}

/* Parses a signed decimal int64 in s[0..n). */
static int parse_i64(const char *s, size_t n, int64_t *out)
{
    int neg = n > 0 && s[0] == '-';
    uint64_t v;
    if (yb_parse_u64_n(s + neg, n - (size_t)neg, 0, neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX,
                       &v) < 0)
        return -1;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

static const struct {
    const char *name;
    phkind k;
    int args; /* 0 none, 1 optional, 2 required */
} NAMES[] = {
    {"iter", PH_ITER, 0},       {"worker", PH_WORKER, 0}, {"session", PH_SESSION, 0},
    {"index", PH_INDEX, 0},     {"counter", PH_COUNTER, 1}, {"random", PH_RANDOM, 2},
    {"choice", PH_CHOICE, 2},   {"uuid", PH_UUID, 0},     {"target", PH_TARGET, 0},
};

#define KNOWN "iter, worker, session, index, counter, random:LO..HI, choice:A|B, uuid, target, " \
              "open, prev.json:POINTER, prev.header:NAME, prev.gnmi:PATH"

/* counter arguments: start=S,step=T,mod=M in any order, each optional. */
static int counter_args(ph *h, const char *a, size_t n, const char **why)
{
    h->a = 0;
    h->b = 1;
    h->mod = 0;
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && a[j] != ',')
            j++;
        const char *eq = memchr(a + i, '=', j - i);
        if (!eq) {
            *why = "counter takes start=N,step=N,mod=N";
            return -1;
        }
        size_t kl = (size_t)(eq - (a + i)), vl = j - i - kl - 1;
        const char *v = eq + 1;
        if (kl == 5 && !memcmp(a + i, "start", 5)) {
            if (parse_i64(v, vl, &h->a)) {
                *why = "counter start is not an integer";
                return -1;
            }
        } else if (kl == 4 && !memcmp(a + i, "step", 4)) {
            if (parse_i64(v, vl, &h->b)) {
                *why = "counter step is not an integer";
                return -1;
            }
        } else if (kl == 3 && !memcmp(a + i, "mod", 3)) {
            if (yb_parse_u64_n(v, vl, 1, UINT64_MAX, &h->mod) < 0) {
                *why = "counter mod must be an integer of at least 1";
                return -1;
            }
        } else {
            *why = "counter takes start=N,step=N,mod=N";
            return -1;
        }
        i = j + 1;
    }
    return 0;
}

/* random arguments: LO..HI, signed, LO <= HI. */
static int random_args(ph *h, const char *a, size_t n, const char **why)
{
    const char *dots = NULL;
    for (size_t i = 0; i + 1 < n; i++)
        if (a[i] == '.' && a[i + 1] == '.') {
            dots = a + i;
            break;
        }
    *why = "bad range: random takes LO..HI (integers, LO <= HI)";
    if (!dots || parse_i64(a, (size_t)(dots - a), &h->a) ||
        parse_i64(dots + 2, n - (size_t)(dots - a) - 2, &h->b) || h->a > h->b)
        return -1;
    return 0;
}

static int choice_args(yb_tmpl *t, ph *h, const char *a, size_t n, const char **why)
{
    h->item0 = (uint32_t)t->n_items;
    size_t i = 0;
    for (;;) {
        size_t j = i;
        while (j < n && a[j] != '|')
            j++;
        if (h->n_items == YB_TMPL_MAX_ITEMS) {
            *why = "choice has more than 256 items";
            return -1;
        }
        uint32_t off;
        if (grow((void **)&t->items, &t->cap_items, t->n_items + 1, sizeof(item)) ||
            lit_store(t, a + i, j - i, &off)) {
            *why = "out of memory";
            return -1;
        }
        t->items[t->n_items++] = (item){off, (uint32_t)(j - i)};
        h->n_items++;
        if (j == n)
            return 0;
        i = j + 1;
    }
}

/* Compiles the placeholder whose inner text (between the braces) is
 * in[0..n).  Returns its index, or -1 with *why. */
static int compile_ph(yb_tmpl *t, const char *in, size_t n, const char **why)
{
    size_t nl = 0;
    while (nl < n && in[nl] != ':' && in[nl] != '.')
        nl++;
    size_t lab = nl;
    if (lab < n && in[lab] == '.') { /* .LABEL: an independent draw */
        lab++;
        size_t l0 = lab;
        while (lab < n && in[lab] != ':' &&
               ((in[lab] >= 'a' && in[lab] <= 'z') || (in[lab] >= 'A' && in[lab] <= 'Z') ||
                (in[lab] >= '0' && in[lab] <= '9') || in[lab] == '_' || in[lab] == '-'))
            lab++;
        if (lab == l0 || (lab < n && in[lab] != ':')) {
            *why = "a label after '.' is letters, digits, '_' or '-'";
            return -1;
        }
    }
    int has_args = lab < n; /* in[lab] == ':' */
    const char *args = has_args ? in + lab + 1 : "";
    size_t alen = has_args ? n - lab - 1 : 0;
    uint64_t key = yb_tmpl_key(in, n);
    for (size_t i = 0; i < t->n_ph; i++)
        if (t->ph[i].key == key)
            return (int)i; /* the same text: the same value */
    if (n >= 5 && !memcmp(in, "prev.", 5)) { /* its value is extracted (tmpl/pick.h) */
        if (yb_pick_check(in, n, why) < 0)
            return -1;
        if (t->n_ph == YB_TMPL_MAX_PH) {
            *why = "more than 32 distinct placeholders in one field";
            return -1;
        }
        t->ph[t->n_ph] = (ph){.k = PH_PREV, .key = key};
        return (int)t->n_ph++;
    }
    size_t k;
    for (k = 0; k < sizeof NAMES / sizeof NAMES[0]; k++)
        if (strlen(NAMES[k].name) == nl && !memcmp(NAMES[k].name, in, nl))
            break;
    if (k == sizeof NAMES / sizeof NAMES[0]) {
        *why = "unknown placeholder (known: " KNOWN ")";
        return -1;
    }
    if (NAMES[k].args == 0 && has_args) {
        *why = "this placeholder takes no arguments";
        return -1;
    }
    if (NAMES[k].args == 2 && !has_args) {
        *why = NAMES[k].k == PH_RANDOM ? "bad range: random takes LO..HI (integers, LO <= HI)"
                                       : "choice takes its items: choice:A|B|C";
        return -1;
    }
    if (t->n_ph == YB_TMPL_MAX_PH) {
        *why = "more than 32 distinct placeholders in one field";
        return -1;
    }
    ph h = {.k = NAMES[k].k, .key = key};
    if ((h.k == PH_COUNTER && counter_args(&h, args, alen, why)) ||
        (h.k == PH_RANDOM && random_args(&h, args, alen, why)) ||
        (h.k == PH_CHOICE && choice_args(t, &h, args, alen, why)))
        return -1;
    t->ph[t->n_ph] = h;
    return (int)t->n_ph++;
}

int yb_tmpl_text(yb_tmpl *t, const void *p, size_t n, char *err, size_t errlen)
{
    const uint8_t *b = p;
    size_t i = 0, lit0 = 0;
    if (!n) /* an empty field (p may be NULL): nothing to compile */
        return 0;
    while (i + 1 < n) {
        if (b[i] != '{' || b[i + 1] != '{') {
            i++;
            continue;
        }
        if (yb_tmpl_lit(t, b + lit0, i - lit0))
            return -ENOMEM;
        size_t s = i + 2, e = s;
        while (e + 1 < n && !(b[e] == '}' && b[e + 1] == '}') && e - s <= YB_TMPL_MAX_INNER)
            e++;
        char q[80];
        if (e + 1 >= n || e - s > YB_TMPL_MAX_INNER) {
            quote(q, sizeof q, b + i, n - i);
            snprintf(err, errlen, "unterminated placeholder '%s' (no closing }} within %u bytes)",
                     q, YB_TMPL_MAX_INNER);
            return -EINVAL;
        }
        if (e - s == 4 && !memcmp(b + s, "open", 4)) {
            if (yb_tmpl_lit(t, "{{", 2)) /* a literal {{ in a template */
                return -ENOMEM;
        } else {
            const char *why = NULL;
            int k = compile_ph(t, (const char *)b + s, e - s, &why);
            if (k < 0) {
                quote(q, sizeof q, b + i, e + 2 - i);
                snprintf(err, errlen, "placeholder '%s': %s", q, why);
                return -EINVAL;
            }
            if (add_part(t, P_VAL, (uint32_t)k, 0))
                return -ENOMEM;
            t->gaps++;
        }
        i = lit0 = e + 2;
    }
    return yb_tmpl_lit(t, b + lit0, n - lit0) ? -ENOMEM : 0;
}

/* ---- filling ----------------------------------------------------------- */

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Decimal of v (signed when neg) into b (at least 21 bytes); returns its length. */
static size_t fmt_u64(char *b, uint64_t v, int neg)
{
    char tmp[24];
    size_t k = 0;
    uint64_t m = neg ? 0 - v : v;
    do {
        tmp[k++] = (char)('0' + m % 10);
        m /= 10;
    } while (m);
    size_t n = 0;
    if (neg)
        b[n++] = '-';
    while (k)
        b[n++] = tmp[--k];
    return n;
}

static size_t fmt_i64(char *b, int64_t v)
{
    return fmt_u64(b, (uint64_t)v, v < 0);
}

static size_t fmt_uuid(char *b, uint64_t hi, uint64_t lo)
{
    static const char hex[] = "0123456789abcdef";
    uint8_t u[16];
    for (int i = 0; i < 8; i++) {
        u[i] = (uint8_t)(hi >> (56 - 8 * i));
        u[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
    }
    u[6] = (uint8_t)((u[6] & 0x0f) | 0x40); /* version 4 (random) */
    u[8] = (uint8_t)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    size_t n = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            b[n++] = '-';
        b[n++] = hex[u[i] >> 4];
        b[n++] = hex[u[i] & 15];
    }
    return n;
}

typedef struct {
    const uint8_t *p;
    size_t n;
    char b[40];
} val;

/* Returns 0, or -1 when a {{prev....}} value is missing from v. */
static int eval(const yb_tmpl *t, const ph *h, const yb_tmpl_vars *v, val *o)
{
    if (h->k == PH_PREV) {
        for (size_t i = 0; i < v->n_got; i++)
            if (v->got[i].key == h->key) {
                o->p = v->got[i].n ? v->got[i].p : (const uint8_t *)"";
                o->n = v->got[i].n;
                return 0;
            }
        return -1;
    }
    /* one reproducible stream per (seed, request, placeholder text) */
    uint64_t r = mix(v->seed ^ mix(v->index ^ mix(h->key)));
    o->p = (const uint8_t *)o->b;
    switch (h->k) {
    case PH_ITER: o->n = fmt_u64(o->b, v->iter, 0); break;
    case PH_WORKER: o->n = fmt_u64(o->b, v->worker, 0); break;
    case PH_SESSION: o->n = fmt_u64(o->b, v->session, 0); break;
    case PH_INDEX: o->n = fmt_u64(o->b, v->index, 0); break;
    case PH_COUNTER: {
        uint64_t steps = h->mod ? v->index % h->mod : v->index;
        o->n = fmt_i64(o->b, (int64_t)((uint64_t)h->a + (uint64_t)h->b * steps));
        break;
    }
    case PH_RANDOM: {
        uint64_t span = (uint64_t)h->b - (uint64_t)h->a + 1; /* 0 = the whole 2^64 */
        o->n = fmt_i64(o->b, (int64_t)((uint64_t)h->a + (span ? r % span : r)));
        break;
    }
    case PH_CHOICE: {
        const item *it = &t->items[h->item0 + r % h->n_items];
        o->p = it->len ? t->lit + it->off : (const uint8_t *)""; /* an empty item: maybe no arena */
        o->n = it->len;
        break;
    }
    case PH_UUID: o->n = fmt_uuid(o->b, r, mix(r)); break;
    case PH_TARGET:
        o->p = (const uint8_t *)(v->target ? v->target : "");
        o->n = strlen((const char *)o->p);
        break;
    case PH_PREV: break; /* above */
    }
    return 0;
}

static size_t len_size(uint8_t enc, uint64_t n)
{
    if (enc == YB_TMPL_LEN_BE32)
        return 4;
    if (enc == YB_TMPL_LEN_VARINT)
        return yb_varint_len(n);
    size_t k = 1;
    for (; n >= 10; n /= 10)
        k++;
    return k;
}

static size_t len_put(uint8_t *o, uint8_t enc, uint64_t n)
{
    if (enc == YB_TMPL_LEN_BE32) {
        o[0] = (uint8_t)(n >> 24);
        o[1] = (uint8_t)(n >> 16);
        o[2] = (uint8_t)(n >> 8);
        o[3] = (uint8_t)n;
        return 4;
    }
    if (enc == YB_TMPL_LEN_DEC)
        return fmt_u64((char *)o, n, 0);
    return yb_varint_put(o, n);
}

int yb_tmpl_fill(const yb_tmpl *t, const yb_tmpl_vars *v, yb_tmpl_buf *out)
{
    if (t->depth)
        return -EINVAL;
    for (size_t r = 0; r < t->n_reg; r++)
        if (!t->begun[r])
            return -EINVAL; /* a length of nothing */
    val vals[YB_TMPL_MAX_PH];
    for (size_t i = 0; i < t->n_ph; i++)
        if (eval(t, &t->ph[i], v, &vals[i]) < 0)
            return -ENOENT;
    /* pass 1: sizes; a region's length prefix joins its parent's size
     * when the region closes */
    uint64_t rsz[YB_TMPL_MAX_REGIONS], start[YB_TMPL_MAX_REGIONS], total = 0;
    for (size_t i = 0; i < t->n_parts; i++) {
        const part *pt = &t->parts[i];
        switch (pt->kind) {
        case P_LIT: total += pt->b; break;
        case P_VAL: total += vals[pt->a].n; break;
        case P_OPEN: start[pt->a] = total; break;
        case P_CLOSE:
            rsz[pt->a] = total - start[pt->a];
            if (t->enc[pt->a] == YB_TMPL_LEN_BE32 && rsz[pt->a] > UINT32_MAX)
                return -EINVAL;
            total += len_size(t->enc[pt->a], rsz[pt->a]);
            break;
        default: break;
        }
    }
    if (total > SIZE_MAX - 1 ||
        grow((void **)&out->p, &out->cap, (size_t)total ? (size_t)total : 1, 1))
        return -ENOMEM;
    /* pass 2: bytes */
    uint8_t *o = out->p;
    for (size_t i = 0; i < t->n_parts; i++) {
        const part *pt = &t->parts[i];
        switch (pt->kind) {
        case P_LIT: memcpy(o, t->lit + pt->a, pt->b); o += pt->b; break;
        case P_VAL:
            if (vals[pt->a].n)
                memcpy(o, vals[pt->a].p, vals[pt->a].n);
            o += vals[pt->a].n;
            break;
        case P_LEN: o += len_put(o, t->enc[pt->a], rsz[pt->a]); break;
        default: break;
        }
    }
    out->len = (size_t)(o - out->p);
    return out->len == total ? 0 : -EINVAL;
}
