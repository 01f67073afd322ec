/* Rewrite rules for corpus records at replay (see rewrite.h). */
#include "config.h"
#include "corpus/rewrite.h"
#include "gnmi/gnmi_json.h"

#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A replacement is a list of pieces: literal bytes or a group reference
 * (0 = the whole match, 1..9 = a parenthesised group). */
typedef struct {
    int group;  /* -1: literal lit[off..off+len) */
    size_t off, len;
} piece;

typedef struct {
    yb_rw_kind kind;
    char *spec;       /* as given, for messages */
    char *from, *to;  /* PATH / AUTHORITY: FROM and TO; headers: name and value */
    size_t from_len, to_len;
    /* YB_RW_BODY */
    int fixed, global, icase, have_re;
    regex_t re;
    char *text;       /* fixed: the text sought */
    size_t text_len;
    char *lit;        /* the replacement's literal bytes */
    piece *pieces;
    size_t n_pieces;
} rule;

struct yb_rewrite {
    rule *r;
    size_t n;
    size_t body_limit; /* the most bytes a rewritten body may have */
};

static const char *const KIND_NAMES[YB_RW_KINDS] = {"rewrite-path", "set-header", "drop-header",
                                                   "rewrite-body", "map-authority"};

/* Header names a rule may not set: yangblast writes them itself (Host is
 * the target's or --map-authority's, lengths and framing are the codec's),
 * HTTP/2 forbids them, or they hold credentials, which never come from
 * the command line. */
static const char *const OWN_HEADERS[] = {
    "host",          "content-length",      "transfer-encoding", "connection",
    "keep-alive",    "proxy-connection",    "upgrade",           "te",
    "user-agent",    "authorization",       "proxy-authorization", "cookie",
    "x-api-key",     "x-auth-token",        "username",          "password",
};

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

const char *yb_rewrite_kind_name(yb_rw_kind k)
{
    return (unsigned)k < YB_RW_KINDS ? KIND_NAMES[k] : "?";
}

int yb_rewrite_kind_parse(const char *name)
{
    for (int k = 0; k < YB_RW_KINDS; k++)
        if (!strcmp(name, KIND_NAMES[k]))
            return k;
    return -1;
}

yb_rewrite *yb_rewrite_new(void)
{
    yb_rewrite *rw = calloc(1, sizeof(yb_rewrite));
    if (rw)
        rw->body_limit = YB_REWRITE_BODY_LIMIT;
    return rw;
}

void yb_rewrite_set_body_limit(yb_rewrite *rw, size_t limit)
{
    rw->body_limit = limit < YB_REWRITE_BODY_LIMIT ? limit : YB_REWRITE_BODY_LIMIT;
}

static void rule_free(rule *u)
{
    free(u->spec);
    free(u->from);
    free(u->to);
    if (u->have_re)
        regfree(&u->re);
    free(u->text);
    free(u->lit);
    free(u->pieces);
}

void yb_rewrite_free(yb_rewrite *rw)
{
    if (!rw)
        return;
    for (size_t i = 0; i < rw->n; i++)
        rule_free(&rw->r[i]);
    free(rw->r);
    free(rw);
}

size_t yb_rewrite_count(const yb_rewrite *rw)
{
    return rw ? rw->n : 0;
}

int yb_rewrite_has(const yb_rewrite *rw, yb_rw_kind k)
{
    for (size_t i = 0; rw && i < rw->n; i++)
        if (rw->r[i].kind == k)
            return 1;
    return 0;
}

const char *yb_rewrite_describe(const yb_rewrite *rw, size_t i, char *buf, size_t len)
{
    snprintf(buf, len, "--%s '%s'", yb_rewrite_kind_name(rw->r[i].kind), rw->r[i].spec);
    return buf;
}

/* ---- parsing ---------------------------------------------------------- */

/* 1 when s[0..n) is non-empty and has no spaces or control characters. */
static int visible(const char *s, size_t n)
{
    if (!n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] == 0x7f)
            return 0;
    return 1;
}

static int set_pair(rule *u, const char *a, size_t al, const char *b, size_t bl)
{
    u->from = strndup(a, al);
    u->to = strndup(b, bl);
    u->from_len = al;
    u->to_len = bl;
    return u->from && u->to ? 0 : -1;
}

/* FROM=TO, both paths: split at the first '=' followed by '/', so that
 * '=' inside a path (RESTCONF keys: acl-set=NAME,ACL_IPV4) stays in it. */
static int parse_path(rule *u, const char *spec, char *err, size_t errlen)
{
    const char *eq = spec[0] == '/' ? strstr(spec, "=/") : NULL;
    if (!eq) {
        seterr(err, errlen, "expected FROM=TO, two paths starting with '/' (e.g. "
               "/restconf/data=/restconf/v2/data)");
        return -1;
    }
    size_t fl = (size_t)(eq - spec), tl = strlen(eq + 1);
    if (!visible(spec, fl) || !visible(eq + 1, tl)) {
        seterr(err, errlen, "a path may not hold spaces or control characters");
        return -1;
    }
    return set_pair(u, spec, fl, eq + 1, tl) < 0 ? (seterr(err, errlen, "out of memory"), -1) : 0;
}

static int parse_authority(rule *u, const char *spec, char *err, size_t errlen)
{
    const char *eq = strchr(spec, '=');
    size_t fl = eq ? (size_t)(eq - spec) : 0, tl = eq ? strlen(eq + 1) : 0;
    if (!eq || !visible(spec, fl) || !visible(eq + 1, tl) || strpbrk(eq + 1, "=/@,?#") ||
        memchr(spec, '/', fl) || memchr(spec, '@', fl)) {
        seterr(err, errlen, "expected A=B, two authorities host[:port] (e.g. "
               "10.0.0.1:8443=sw2.lab:443)");
        return -1;
    }
    return set_pair(u, spec, fl, eq + 1, tl) < 0 ? (seterr(err, errlen, "out of memory"), -1) : 0;
}

static int header_name_ok(const char *name, int set, char *err, size_t errlen)
{
    if (!yb_http_token_ok(name)) {
        seterr(err, errlen, "'%s' is not a header name (an HTTP token)", name);
        return -1;
    }
    if (!set)
        return 0;
    for (size_t i = 0; i < sizeof OWN_HEADERS / sizeof OWN_HEADERS[0]; i++)
        if (!strcasecmp(name, OWN_HEADERS[i])) {
            seterr(err, errlen, "%s cannot be set by a rewrite (%s)", name,
                   i == 0   ? "the target's authority is sent; --map-authority or -H 'Host: "
                              "NAME' set another"
                   : i == 8 ? "yangblast sends its own; -H 'User-Agent: ...' replaces it"
                   : i > 8  ? "credentials never come from the command line or a "
                              "plan file: --user, --token-file, an inventory's secret"
                            : "the codec writes the framing headers");
            return -1;
        }
    return 0;
}

static int parse_header(rule *u, const char *spec, int set, char *err, size_t errlen)
{
    const char *colon = set ? strchr(spec, ':') : spec + strlen(spec);
    if (!colon || colon == spec) {
        seterr(err, errlen, set ? "expected 'Name: value'" : "expected a header name");
        return -1;
    }
    const char *val = set ? colon + 1 : colon;
    while (set && (*val == ' ' || *val == '\t'))
        val++;
    if (set_pair(u, spec, (size_t)(colon - spec), val, strlen(val)) < 0) {
        seterr(err, errlen, "out of memory");
        return -1;
    }
    if (header_name_ok(u->from, set, err, errlen) < 0)
        return -1;
    if (strpbrk(u->to, "\r\n")) { /* (NUL cannot come from a C string) */
        seterr(err, errlen, "a header value may not hold CR or LF");
        return -1;
    }
    return 0;
}

/* The most nodes a regular expression may expand to.  glibc's regcomp
 * copies a subexpression for each repetition it must unroll (a+ is aa*,
 * a{3,5} five copies), so stacked or nested repetitions (a++++, (a{99}){99})
 * grow its memory geometrically: such an expression is refused before
 * regcomp sees it. */
#define RE_MAX_NODES 20000

/* Returns 1 when the ERE re would expand beyond RE_MAX_NODES nodes (an
 * estimate from above), stacks repetitions (a++, a*+: undefined in
 * POSIX), or holds a back-reference (\1..\9, a glibc extension whose
 * matching can take exponential time); else 0. */
static int re_too_big(const char *re)
{
    double stack[32], sum = 0, last = 0; /* nodes so far in this group; the last atom's */
    size_t depth = 0;
    int after_rep = 0; /* the last token was a repetition */
    for (const char *p = re; *p; p++) {
        int rep = *p == '*' || *p == '+' || *p == '?' || *p == '{';
        if (rep && after_rep)
            return 1; /* a++, a*+: undefined in POSIX, geometric in glibc */
        after_rep = rep;
        if (*p == '(') {
            if (depth == sizeof stack / sizeof stack[0])
                return 1;
            stack[depth++] = sum;
            sum = last = 0;
        } else if (*p == ')' && depth) {
            last = sum;
            sum = stack[--depth] + last;
        } else if (*p == '+' || *p == '{') { /* unrolled: k copies of the last atom */
            double k = 2;
            if (*p == '{') {
                char *e;
                unsigned long m = strtoul(p + 1, &e, 10), n = m;
                if (*e == ',' && e[1] != '}')
                    n = strtoul(e + 1, &e, 10);
                k = (double)(m > n ? m : n) + 1;
                const char *close = strchr(p, '}');
                p = close ? close : p; /* (regcomp checks the bound's syntax) */
            }
            sum += last * (k - 1);
            last *= k;
        } else if (*p == '*' || *p == '?' || *p == '|') {
            continue;
        } else { /* one atom: a character, an escape, a bracket expression */
            if (*p == '\\' && p[1]) {
                if (p[1] >= '1' && p[1] <= '9')
                    return 1;
                p++;
            } else if (*p == '[') {
                p++;
                p += *p == '^';
                p += *p == ']';
                while (*p && *p != ']') {
                    if (p[0] == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
                        const char *e = strchr(p + 2, p[1]);
                        p = e && e[1] == ']' ? e + 1 : p;
                    }
                    p++;
                }
                if (!*p)
                    return 0; /* unterminated: regcomp says so */
            }
            sum += 1;
            last = 1;
        }
        if (sum > RE_MAX_NODES || last > RE_MAX_NODES)
            return 1;
    }
    return 0;
}

static int add_piece(rule *u, int group, size_t off, size_t len)
{
    if (group < 0 && !len)
        return 0;
    piece *p = realloc(u->pieces, (u->n_pieces + 1) * sizeof *p);
    if (!p)
        return -1;
    u->pieces = p;
    p[u->n_pieces++] = (piece){group, off, len};
    return 0;
}

/* Reads s/RE/REPL/FLAGS with delimiter d = spec[1]: the sought part into
 * u->text (\d stands for d; other escapes are kept for regcomp, or, with
 * F, \\ is one backslash), the replacement into pieces (& and \0..\9 are
 * groups without F; \n, \t, \\, \& and \d are those characters). */
static int parse_body(rule *u, const char *spec, char *err, size_t errlen)
{
    static const char *const FORM = "expected s/REGEX/REPLACEMENT/[gi] or "
                                    "s/TEXT/REPLACEMENT/F[gi] (any delimiter after s)";
    char d = spec[0] == 's' ? spec[1] : 0;
    if (!d || d == '\\' || d == '\n' || (d >= '0' && d <= '9') || (d >= 'a' && d <= 'z') ||
        (d >= 'A' && d <= 'Z')) {
        seterr(err, errlen, "%s", FORM);
        return -1;
    }
    const char *p = spec + 2;
    const char *re = p;
    while (*p && *p != d)
        p += p[0] == '\\' && p[1] ? 2 : 1;
    if (!*p) {
        seterr(err, errlen, "%s: the expression is not closed by '%c'", FORM, d);
        return -1;
    }
    const char *re_end = p++;
    const char *rp = p;
    while (*p && *p != d)
        p += p[0] == '\\' && p[1] ? 2 : 1;
    if (!*p) {
        seterr(err, errlen, "%s: the replacement is not closed by '%c'", FORM, d);
        return -1;
    }
    const char *rp_end = p++;
    for (; *p; p++) {
        int *f = *p == 'g' ? &u->global : *p == 'i' ? &u->icase : *p == 'F' ? &u->fixed : NULL;
        if (!f || *f) {
            seterr(err, errlen, "flag '%c' %s (flags: g every match, i ignore case, F fixed "
                   "text)", *p, f ? "given twice" : "unknown");
            return -1;
        }
        *f = 1;
    }
    if (re == re_end) {
        seterr(err, errlen, "the %s to replace is empty", u->fixed ? "text" : "expression");
        return -1;
    }
    /* the sought part, \d unescaped (and \\ with F) */
    u->text = malloc((size_t)(re_end - re) + 1);
    u->lit = malloc((size_t)(rp_end - rp) + 1);
    if (!u->text || !u->lit) {
        seterr(err, errlen, "out of memory");
        return -1;
    }
    size_t n = 0;
    for (const char *q = re; q < re_end; q++) {
        if (q[0] == '\\' && q + 1 < re_end && (q[1] == d || (u->fixed && q[1] == '\\')))
            q++;
        else if (q[0] == '\\' && u->fixed && q + 1 < re_end && (q[1] == 'n' || q[1] == 't')) {
            u->text[n++] = q[1] == 'n' ? '\n' : '\t';
            q++;
            continue;
        }
        u->text[n++] = *q;
    }
    u->text[n] = 0;
    u->text_len = n;
    size_t ln = 0, start = 0;
    for (const char *q = rp; q < rp_end; q++) {
        int group = -1;
        char c = *q;
        if (c == '&' && !u->fixed)
            group = 0;
        else if (c == '\\' && q + 1 < rp_end) {
            c = *++q;
            if (c >= '0' && c <= '9' && !u->fixed)
                group = c - '0';
            else if (c == 'n')
                c = '\n';
            else if (c == 't')
                c = '\t';
            else if (c != '\\' && c != '&' && c != d) {
                seterr(err, errlen, "'\\%c' in the replacement: use \\\\ for a backslash", c);
                return -1;
            }
        }
        if (group < 0) {
            u->lit[ln++] = c;
            continue;
        }
        if (add_piece(u, -1, start, ln - start) < 0 || add_piece(u, group, 0, 0) < 0) {
            seterr(err, errlen, "out of memory");
            return -1;
        }
        start = ln;
    }
    if (add_piece(u, -1, start, ln - start) < 0) {
        seterr(err, errlen, "out of memory");
        return -1;
    }
    if (u->fixed)
        return 0;
    if (re_too_big(u->text)) {
        seterr(err, errlen, "regular expression '%s' refused: back-references (\\1 in the "
               "expression), stacked repetitions (a++, a*+) and repetitions that expand beyond "
               "%d nodes ((a{99}){99}) are not taken", u->text, RE_MAX_NODES);
        return -1;
    }
    int rc = regcomp(&u->re, u->text, REG_EXTENDED | (u->icase ? REG_ICASE : 0));
    if (rc) {
        char msg[160];
        regerror(rc, &u->re, msg, sizeof msg);
        seterr(err, errlen, "bad regular expression '%s': %s", u->text, msg);
        return -1;
    }
    u->have_re = 1;
    for (size_t i = 0; i < u->n_pieces; i++)
        if (u->pieces[i].group > (int)u->re.re_nsub) {
            seterr(err, errlen, "the replacement names group \\%d, the expression has %zu",
                   u->pieces[i].group, u->re.re_nsub);
            return -1;
        }
    return 0;
}

int yb_rewrite_add(yb_rewrite *rw, yb_rw_kind k, const char *spec, char *err, size_t errlen)
{
    if ((unsigned)k >= YB_RW_KINDS || !spec) {
        seterr(err, errlen, "unknown rewrite");
        return -1;
    }
    if (rw->n == YB_REWRITE_MAX_RULES) {
        seterr(err, errlen, "more than %d rewrite rules", YB_REWRITE_MAX_RULES);
        return -1;
    }
    rule *r = realloc(rw->r, (rw->n + 1) * sizeof *r);
    if (!r) {
        seterr(err, errlen, "out of memory");
        return -1;
    }
    rw->r = r;
    rule *u = &r[rw->n];
    memset(u, 0, sizeof *u);
    u->kind = k;
    int rc = -1;
    if (!(u->spec = strdup(spec)))
        seterr(err, errlen, "out of memory");
    else if (k == YB_RW_PATH)
        rc = parse_path(u, spec, err, errlen);
    else if (k == YB_RW_AUTHORITY)
        rc = parse_authority(u, spec, err, errlen);
    else if (k == YB_RW_SET_HEADER || k == YB_RW_DROP_HEADER)
        rc = parse_header(u, spec, k == YB_RW_SET_HEADER, err, errlen);
    else
        rc = parse_body(u, spec, err, errlen);
    if (rc < 0) {
        rule_free(u);
        return -1;
    }
    rw->n++;
    return 0;
}

/* ---- applying ------------------------------------------------------- */

typedef struct {
    uint8_t *p;
    size_t len, cap, limit;
    int over; /* beyond limit, or out of memory (errno-style in over) */
} buf;

static void put(buf *b, const void *s, size_t n)
{
    if (b->over || !n)
        return;
    if (n > b->limit - b->len) {
        b->over = -EFBIG;
        return;
    }
    if (b->len + n > b->cap) {
        size_t nc = b->cap ? b->cap : 256;
        while (nc < b->len + n)
            nc *= 2;
        uint8_t *q = realloc(b->p, nc + 1);
        if (!q) {
            b->over = -ENOMEM;
            return;
        }
        b->p = q;
        b->cap = nc;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void put_replacement(buf *b, const rule *u, const uint8_t *s, const regmatch_t *m)
{
    for (size_t i = 0; i < u->n_pieces; i++) {
        const piece *x = &u->pieces[i];
        if (x->group < 0)
            put(b, u->lit + x->off, x->len);
        else if (m[x->group].rm_so >= 0)
            put(b, s + m[x->group].rm_so, (size_t)(m[x->group].rm_eo - m[x->group].rm_so));
    }
}

/* Finds the fixed text of u in s[from..n): returns its offset or -1. */
static long find_text(const rule *u, const uint8_t *s, size_t from, size_t n)
{
    if (u->text_len > n - from)
        return -1;
    if (!u->icase) {
        /* memchr + memcmp rather than memmem: sanitizers check memmem's
         * whole haystack on every call, which makes g on a large body
         * quadratic under them */
        for (size_t i = from; i + u->text_len <= n;) {
            const uint8_t *c = memchr(s + i, (unsigned char)u->text[0], n - u->text_len + 1 - i);
            if (!c)
                return -1;
            i = (size_t)(c - s);
            if (!memcmp(c, u->text, u->text_len))
                return (long)i;
            i++;
        }
        return -1;
    }
    for (size_t i = from; i + u->text_len <= n; i++)
        if (!strncasecmp((const char *)s + i, u->text, u->text_len) &&
            !memchr(s + i, 0, u->text_len)) /* (strncasecmp stops at NUL) */
            return (long)i;
    return -1;
}

/* Substitutes rule u in s[0..n) into *b (as sed does: the first match, or
 * every match with g; an empty match right after a match is skipped).
 * Returns 1 when something was replaced, 0 when not; b->over on failure. */
static int subst(const rule *u, const uint8_t *s, size_t n, buf *b)
{
    size_t pos = 0, last_end = (size_t)-1;
    int changed = 0;
    static const uint8_t none[1] = {0};
    if (!s)
        s = none;
    while (pos <= n) {
        regmatch_t m[10];
        size_t so, eo;
        if (u->fixed) {
            long at = find_text(u, s, pos, n);
            if (at < 0)
                break;
            so = (size_t)at;
            eo = so + u->text_len;
            m[0].rm_so = (regoff_t)so;
            m[0].rm_eo = (regoff_t)eo;
        } else {
            m[0].rm_so = (regoff_t)pos;
            m[0].rm_eo = (regoff_t)n;
            if (regexec(&u->re, (const char *)s, 10, m, REG_STARTEND | (pos ? REG_NOTBOL : 0)))
                break;
            so = (size_t)m[0].rm_so;
            eo = (size_t)m[0].rm_eo;
        }
        if (so == eo && so == last_end) { /* empty match where the last one ended */
            if (so >= n)
                break;
            put(b, s + pos, so + 1 - pos);
            pos = so + 1;
            continue;
        }
        put(b, s + pos, so - pos);
        put_replacement(b, u, s, m);
        changed = 1;
        last_end = eo;
        if (so == eo) { /* empty match: keep the next byte and go on after it */
            if (so < n)
                put(b, s + so, 1);
            pos = so + 1;
        } else {
            pos = eo;
        }
        if (!u->global || b->over)
            break;
    }
    if (pos < n)
        put(b, s + pos, n - pos);
    return changed;
}

static void drop_header_at(yb_request *r, size_t i)
{
    free(r->headers[i].name);
    free(r->headers[i].value);
    memmove(&r->headers[i], &r->headers[i + 1], (r->n_headers - i - 1) * sizeof *r->headers);
    r->n_headers--;
}

/* Applies a set or drop rule; returns 1 when r changed, 0, or -ENOMEM. */
static int apply_header(const rule *u, yb_request *r)
{
    int set = u->kind == YB_RW_SET_HEADER, changed = 0;
    size_t kept = (size_t)-1;
    for (size_t i = 0; i < r->n_headers;) {
        yb_header *h = &r->headers[i];
        if (strcasecmp(h->name, u->from)) {
            i++;
            continue;
        }
        if (set && kept == (size_t)-1) { /* the first one takes the value, in place */
            kept = i++;
            if (h->value_len == u->to_len && !memcmp(h->value, u->to, u->to_len))
                continue;
            uint8_t *v = (uint8_t *)strndup(u->to, u->to_len);
            if (!v)
                return -ENOMEM;
            free(h->value);
            h->value = v;
            h->value_len = u->to_len;
            changed = 1;
            continue;
        }
        drop_header_at(r, i);
        changed = 1;
    }
    if (set && kept == (size_t)-1) {
        if (yb_request_add_header(r, u->from, u->to, u->to_len))
            return -ENOMEM;
        changed = 1;
    }
    return changed;
}

/* Runs every body rule over s[0..n), in order.  Returns how many rules
 * changed it (each hit counted, *last = the last one) with the result in
 * *out (malloc'd, *outn bytes; NULL when none did), or -1 with err. */
static int apply_bodies(const yb_rewrite *rw, const uint8_t *s, size_t n, size_t limit,
                        uint8_t **out, size_t *outn, uint64_t *hits, size_t *last, char *err,
                        size_t errlen)
{
    /* The subject is always NUL-terminated (regexec is given its length
     * with REG_STARTEND, but sanitizers' interceptors read up to a NUL). */
    uint8_t *subject = malloc(n + 1), *cur = NULL;
    if (!subject) {
        seterr(err, errlen, "out of memory");
        return -1;
    }
    memcpy(subject, s, n);
    subject[n] = 0;
    s = subject;
    size_t cur_n = n;
    int any = 0;
    for (size_t i = 0; i < rw->n; i++) {
        const rule *u = &rw->r[i];
        if (u->kind != YB_RW_BODY)
            continue;
        buf b = {NULL, 0, 0, limit, 0};
        int ch = subst(u, cur ? cur : s, cur_n, &b);
        if (b.over) {
            free(b.p);
            free(cur);
            free(subject);
            if (b.over == -EFBIG)
                seterr(err, errlen, "--rewrite-body '%s': the body would grow beyond %zu bytes",
                       u->spec, limit);
            else
                seterr(err, errlen, "out of memory");
            return -1;
        }
        if (!ch) {
            free(b.p);
            continue;
        }
        free(cur);
        cur = b.p ? b.p : malloc(1); /* (put keeps a byte spare for the NUL) */
        if (!cur) {
            free(subject);
            seterr(err, errlen, "out of memory");
            return -1;
        }
        cur_n = b.len;
        cur[cur_n] = 0;
        any++;
        *last = i;
        if (hits)
            hits[i]++;
    }
    free(subject);
    *out = cur;
    *outn = cur_n;
    return any;
}

/* 1 when a record's body is gRPC framing of a service other than gNMI
 * (no text form to edit: its bytes are length-prefixed protobuf). */
static int other_grpc(const yb_request *r)
{
    if (r->protocol == YB_PROTO_GNMI)
        return 0;
    for (size_t i = 0; i < r->n_headers; i++)
        if (!strcasecmp(r->headers[i].name, "content-type") && r->headers[i].value_len >= 16 &&
            !strncmp((const char *)r->headers[i].value, "application/grpc", 16))
            return 1;
    return 0;
}

/* The body rules on r's body: raw bytes, or a gNMI body's text form
 * encoded back.  Returns 0 or -1 with err. */
static int rewrite_body(const yb_rewrite *rw, yb_request *r, uint64_t *hits, size_t *last,
                        char *err, size_t errlen)
{
    const size_t limit = rw->body_limit;
    char why[300];
    uint8_t *nb;
    size_t nn;
    if (!r->body_len)
        return 0; /* nothing to substitute in: a rule never adds a body */
    if (r->protocol != YB_PROTO_GNMI) {
        uint64_t before[YB_REWRITE_MAX_RULES];
        if (hits)
            memcpy(before, hits, rw->n * sizeof *hits);
        int n = apply_bodies(rw, r->body, r->body_len, limit, &nb, &nn, hits, last, err, errlen);
        if (n < 0)
            return -1;
        if (n && other_grpc(r)) {
            free(nb);
            seterr(err, errlen, "--rewrite-body '%s': the body is gRPC of a service other than "
                   "gNMI (%s): it has no text form to rewrite", rw->r[*last].spec, r->path);
            if (hits)
                memcpy(hits, before, rw->n * sizeof *hits);
            return -1;
        }
        if (n)
            yb_request_take_body(r, nb, nn);
        return 0;
    }
    json_t *msgs = yb_gnmi_body_to_json(r->path, r->body, r->body_len, why, sizeof why);
    if (!msgs) {
        /* No text form: refused only when a rule would change its bytes
         * (a rule meant for other records leaves such a body alone). */
        uint64_t before[YB_REWRITE_MAX_RULES];
        if (hits)
            memcpy(before, hits, rw->n * sizeof *hits);
        int n = apply_bodies(rw, r->body, r->body_len, limit, &nb, &nn, hits, last, err, errlen);
        if (n <= 0)
            return n;
        free(nb);
        if (hits)
            memcpy(hits, before, rw->n * sizeof *hits);
        seterr(err, errlen, "--rewrite-body '%s': the gNMI body has no text form (%s)",
               rw->r[*last].spec, why);
        return -1;
    }
    char *text = json_dumps(msgs, JSON_COMPACT);
    json_decref(msgs);
    if (!text) {
        seterr(err, errlen, "out of memory");
        return -1;
    }
    int n = apply_bodies(rw, (const uint8_t *)text, strlen(text), limit, &nb, &nn, hits, last,
                         err, errlen);
    free(text);
    if (n <= 0)
        return n;
    json_error_t je;
    json_t *edited = json_loadb((const char *)nb, nn, 0, &je);
    free(nb);
    if (!edited) {
        seterr(err, errlen, "--rewrite-body '%s': the rewritten gNMI text is not JSON (%s at "
               "character %d)", rw->r[*last].spec, je.text, je.position);
        return -1;
    }
    uint8_t *body;
    size_t len;
    int rc = yb_gnmi_json_to_body(r->path, edited, &body, &len, why, sizeof why);
    json_decref(edited);
    if (rc < 0) {
        seterr(err, errlen, "--rewrite-body '%s': the rewritten gNMI text does not encode: %s",
               rw->r[*last].spec, why);
        return -1;
    }
    yb_request_take_body(r, body, len);
    return 0;
}

int yb_rewrite_apply(const yb_rewrite *rw, const yb_request *in, yb_request *out,
                     int *authority_mapped, uint64_t *hits, char *err, size_t errlen)
{
    /* which rule last changed each field, for the message when the
     * result is refused */
    size_t by_path = SIZE_MAX, by_auth = SIZE_MAX, by_hdr = SIZE_MAX, by_body = SIZE_MAX;
    int done_path = 0, done_auth = 0;
    if (authority_mapped)
        *authority_mapped = 0;
    if (yb_request_copy(out, in) < 0)
        goto oom;
    for (size_t i = 0; i < rw->n; i++) {
        const rule *u = &rw->r[i];
        int ch = 0;
        switch (u->kind) {
        case YB_RW_PATH: {
            if (done_path || strncmp(out->path, u->from, u->from_len))
                break;
            done_path = 1;
            size_t rest = strlen(out->path) - u->from_len;
            char *np = malloc(u->to_len + rest + 1);
            if (!np)
                goto oom;
            memcpy(np, u->to, u->to_len);
            memcpy(np + u->to_len, out->path + u->from_len, rest + 1);
            ch = strcmp(np, out->path) != 0;
            if (yb_request_set_str(&out->path, np) < 0) {
                free(np);
                goto oom;
            }
            free(np);
            by_path = i;
            break;
        }
        case YB_RW_AUTHORITY:
            if (done_auth || strcasecmp(out->authority, u->from))
                break;
            done_auth = ch = 1;
            if (yb_request_set_str(&out->authority, u->to) < 0)
                goto oom;
            if (authority_mapped)
                *authority_mapped = 1;
            by_auth = i;
            break;
        case YB_RW_SET_HEADER:
        case YB_RW_DROP_HEADER:
            if ((ch = apply_header(u, out)) < 0)
                goto oom;
            if (ch)
                by_hdr = i;
            break;
        default:
            break; /* bodies below, all at once */
        }
        if (ch && hits)
            hits[i]++;
    }
    if (yb_rewrite_has(rw, YB_RW_BODY) &&
        rewrite_body(rw, out, hits, &by_body, err, errlen) < 0)
        return -1;
    const char *key;
    size_t hi;
    const char *problem = yb_request_problem_key(out, &key, &hi);
    if (problem) {
        size_t by = !strcmp(key, "path") ? by_path : !strcmp(key, "authority") ? by_auth
                    : !strcmp(key, "headers") ? by_hdr : !strcmp(key, "body") ? by_body
                                                                              : SIZE_MAX;
        char d[300] = "the rewrites";
        if (by != SIZE_MAX)
            yb_rewrite_describe(rw, by, d, sizeof d);
        seterr(err, errlen, "%s: the rewritten record is not a valid request: %s", d, problem);
        return -1;
    }
    return 0;
oom:
    seterr(err, errlen, "out of memory");
    return -1;
}

int yb_rewrite_check_corpus(const yb_rewrite *rw, const char *path, uint64_t *hits, char *err,
                            size_t errlen)
{
    yb_corpus_reader *rd = yb_corpus_reader_open(path, err, errlen);
    if (!rd)
        return -1;
    const yb_request *r;
    int rc;
    char why[600];
    while ((rc = yb_corpus_reader_next(rd, &r, err, errlen)) == 1) {
        yb_request out;
        yb_request_init(&out);
        int bad = yb_rewrite_apply(rw, r, &out, NULL, hits, why, sizeof why);
        yb_request_cleanup(&out);
        if (bad < 0) {
            seterr(err, errlen, "%s: record %llu: %s", path,
                   (unsigned long long)(yb_corpus_reader_index(rd) - 1), why);
            rc = -1;
            break;
        }
    }
    yb_corpus_reader_close(rd);
    return rc < 0 ? -1 : 0;
}
