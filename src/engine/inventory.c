/* The inventory parser (see inventory.h and yangblast-inventory(5)).
 *
 * Two passes: libyaml's event stream is built into a small tree of nodes
 * (util/yamltree.h; every cap enforced while building: aliases refused,
 * depth, node count, scalar length), then the tree is walked against the schema of one of the
 * two shapes.  The tree keeps the line of every node, so each message can
 * name file, line and key. */
#include "config.h"
#include "engine/inventory.h"
#include "engine/target.h"
#include "util/util.h"
#include "util/yamltree.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LIST 64 /* aliases and labels per target */

/* ---- the tree (util/yamltree.h) ------------------------------------------ */

typedef yb_ynode node;
#define N_SCALAR YB_YN_SCALAR
#define N_MAP YB_YN_MAP
#define N_SEQ YB_YN_SEQ
#define is_null yb_ynode_is_null
#define get yb_ynode_get

static const yb_ytree_limits LIMITS = {"an inventory", YB_INV_MAX_BYTES, YB_INV_MAX_DEPTH,
                                       YB_INV_MAX_NODES, YB_INV_MAX_SCALAR};

typedef struct {
    const char *file;
    const char *dir;      /* directory of file, for relative paths ("" = none) */
    size_t dirlen;
    char *err;
    size_t errlen;
} ctx;

static int ferr(ctx *c, unsigned line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int ferr(ctx *c, unsigned line, const char *fmt, ...)
{
    int k = snprintf(c->err, c->errlen, "%s:%u: ", c->file, line);
    if (k >= 0 && (size_t)k < c->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err + k, c->errlen - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ---- scalars -------------------------------------------------------------- */

/* What a message calls the place being read: "in target 'sw1'". */
typedef struct {
    const char *what; /* "target", "defaults", "the top level", "tls" */
    const char *name; /* the target's name, or NULL */
} place;

static const char *where(const place *pl, char *buf, size_t len)
{
    if (pl->name)
        snprintf(buf, len, "in %s '%s'", pl->what, pl->name);
    else
        snprintf(buf, len, "in %s", pl->what);
    return buf;
}

#define WHERE(pl) where(pl, wbuf, sizeof wbuf)

static int want_string(ctx *c, const place *pl, const node *k, const node *v)
{
    char wbuf[128];
    if (v->type != N_SCALAR || is_null(v))
        return ferr(c, v->line, "key '%s' %s: expected a string", k->s, WHERE(pl));
    return 0;
}

static int set_string(ctx *c, const place *pl, const node *k, const node *v, char **out)
{
    if (want_string(c, pl, k, v) < 0)
        return -1;
    free(*out);
    *out = strdup(v->s);
    return *out ? 0 : ferr(c, v->line, "out of memory");
}

/* A TLS server name (SNI and the name verified): a host name, as
 * `run --servername` takes it. */
static int set_server_name(ctx *c, const place *pl, const node *k, const node *v, char **out)
{
    char wbuf[128];
    if (want_string(c, pl, k, v) < 0)
        return -1;
    if (!v->s[0] || strlen(v->s) > YB_TARGET_MAX_NAME || strpbrk(v->s, " /:@[]"))
        return ferr(c, v->line, "key '%s' %s: expected a host name (at most 255 bytes, no "
                    "spaces, '/', ':', '@' or brackets)", k->s, WHERE(pl));
    return set_string(c, pl, k, v, out);
}

/* A path as written, relative to the inventory's directory. */
static int set_path(ctx *c, const place *pl, const node *k, const node *v, char **out)
{
    if (want_string(c, pl, k, v) < 0)
        return -1;
    free(*out);
    if (v->s[0] == '/' || !c->dirlen) {
        *out = strdup(v->s);
    } else {
        size_t l = c->dirlen + 1 + strlen(v->s) + 1;
        *out = malloc(l);
        if (*out)
            snprintf(*out, l, "%.*s/%s", (int)c->dirlen, c->dir, v->s);
    }
    return *out ? 0 : ferr(c, v->line, "out of memory");
}

static int set_bool(ctx *c, const place *pl, const node *k, const node *v, int *out)
{
    char wbuf[128];
    static const char *const T[] = {"true", "yes", "on"}, *const F[] = {"false", "no", "off"};
    if (v->type == N_SCALAR && v->plain)
        for (size_t i = 0; i < 3; i++) {
            if (!strcasecmp(v->s, T[i]))
                return *out = 1, 0;
            if (!strcasecmp(v->s, F[i]))
                return *out = 0, 0;
        }
    return ferr(c, v->line, "key '%s' %s: expected true or false", k->s, WHERE(pl));
}

/* ---- one target ------------------------------------------------------------ */

/* A target being read: the public fields plus what is merged or derived
 * afterwards. */
typedef struct {
    yb_inv_target t;
    int insecure;          /* -1 unset; tls.insecure / gnmic skip-verify */
    int h2c;               /* -1 unset; gnmic insecure: no TLS */
    char *address;         /* gnmic: host[:port] */
    unsigned secret_line;
} entry;

static void entry_init(entry *e)
{
    memset(e, 0, sizeof *e);
    e->insecure = -1;
    e->h2c = -1;
}

static void target_free(yb_inv_target *t)
{
    free(t->name);
    free(t->restconf);
    free(t->gnmi);
    for (size_t i = 0; i < t->n_aliases; i++)
        free(t->aliases[i]);
    free(t->aliases);
    for (size_t i = 0; i < t->n_labels; i++) {
        free(t->label_key[i]);
        free(t->label_value[i]);
    }
    free(t->label_key);
    free(t->label_value);
    free(t->user);
    free(t->secret_env);
    free(t->secret_file);
    free(t->tls_ca);
    free(t->tls_cert);
    free(t->tls_key);
    free(t->tls_server_name);
    if (t->rate)
        yb_sched_release(t->rate);
    free(t->rate);
    memset(t, 0, sizeof *t);
}

static void entry_free(entry *e)
{
    target_free(&e->t);
    free(e->address);
}

/* password-env / password-file / token-env / token-file: the one secret,
 * checked to be there now so that a run never starts without it. */
static int set_secret(ctx *c, const place *pl, const node *k, const node *v, entry *e)
{
    char wbuf[128];
    int token = !strncmp(k->s, "token", 5), file = strstr(k->s, "-file") != NULL;
    if (e->t.secret)
        return ferr(c, k->line, "key '%s' %s: a second secret (line %u); give one of "
                    "password-env, password-file, token-env, token-file",
                    k->s, WHERE(pl), e->secret_line);
    if (file) {
        if (set_path(c, pl, k, v, &e->t.secret_file) < 0)
            return -1;
        struct stat st;
        int fd = open(e->t.secret_file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        int bad = fd < 0 ? errno : fstat(fd, &st) < 0 ? errno : !S_ISREG(st.st_mode) ? EINVAL : 0;
        if (fd >= 0)
            close(fd);
        if (bad)
            return ferr(c, v->line, "key '%s' %s: cannot read '%s': %s", k->s, WHERE(pl),
                        e->t.secret_file, bad == EINVAL ? "not a regular file" : strerror(bad));
    } else {
        if (set_string(c, pl, k, v, &e->t.secret_env) < 0)
            return -1;
        const char *val = getenv(v->s);
        if (!val || !*val)
            return ferr(c, v->line, "key '%s' %s: environment variable '%s' is not set", k->s,
                        WHERE(pl), v->s);
    }
    e->t.secret = token ? YB_SECRET_TOKEN : YB_SECRET_PASSWORD;
    e->secret_line = k->line;
    return 0;
}

static int refuse_literal(ctx *c, const place *pl, const node *k)
{
    char wbuf[128];
    /* the value is never repeated: it is the secret */
    return ferr(c, k->line, "key '%s' %s: a literal %s is refused (it would sit in the file "
                "in clear); give %s-env: VARIABLE or %s-file: PATH", k->s, WHERE(pl), k->s, k->s,
                k->s);
}

static int set_concurrency(ctx *c, const place *pl, const node *k, const node *v, entry *e)
{
    char wbuf[128];
    uint64_t n;
    if (v->type != N_SCALAR || yb_parse_u64(v->s, 1, 100000, &n) < 0)
        return ferr(c, v->line, "key '%s' %s: '%s': expected an integer in 1..100000", k->s,
                    WHERE(pl), v->type == N_SCALAR ? v->s : "");
    e->t.concurrency = (unsigned)n;
    return 0;
}

static int set_rate(ctx *c, const place *pl, const node *k, const node *v, entry *e)
{
    char wbuf[128], msg[256];
    if (want_string(c, pl, k, v) < 0)
        return -1;
    if (!e->t.rate && !(e->t.rate = calloc(1, sizeof *e->t.rate)))
        return ferr(c, v->line, "out of memory");
    yb_sched_release(e->t.rate); /* a second rate replaces the first */
    if (yb_sched_parse(v->s, e->t.rate, msg, sizeof msg) < 0) /* it speaks of --rate */
        return ferr(c, v->line, "key '%s' %s: %s", k->s, WHERE(pl),
                    strncmp(msg, "--rate ", 7) ? msg : msg + 7);
    return 0;
}

static int set_aliases(ctx *c, const place *pl, const node *k, const node *v, entry *e)
{
    char wbuf[128];
    if (v->type != N_SEQ || v->n > MAX_LIST)
        return ferr(c, v->line, "key '%s' %s: expected a list of at most %d names", k->s,
                    WHERE(pl), MAX_LIST);
    e->t.aliases = calloc(v->n ? v->n : 1, sizeof *e->t.aliases);
    if (!e->t.aliases)
        return ferr(c, v->line, "out of memory");
    for (size_t i = 0; i < v->n; i++) {
        if (set_string(c, pl, k, v->kid[i], &e->t.aliases[i]) < 0)
            return -1;
        e->t.n_aliases++;
    }
    return 0;
}

static int set_labels(ctx *c, const place *pl, const node *k, const node *v, entry *e)
{
    char wbuf[128];
    if (v->type != N_MAP || v->n / 2 > MAX_LIST)
        return ferr(c, v->line, "key '%s' %s: expected a mapping of at most %d labels", k->s,
                    WHERE(pl), MAX_LIST);
    size_t n = v->n / 2;
    e->t.label_key = calloc(n ? n : 1, sizeof (char *));
    e->t.label_value = calloc(n ? n : 1, sizeof (char *));
    if (!e->t.label_key || !e->t.label_value)
        return ferr(c, v->line, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (set_string(c, pl, k, v->kid[2 * i], &e->t.label_key[i]) < 0)
            return -1;
        e->t.n_labels++; /* owned from here, whatever its value */
        if (set_string(c, pl, v->kid[2 * i], v->kid[2 * i + 1], &e->t.label_value[i]) < 0)
            return -1;
    }
    return 0;
}

/* Refuses a key seen twice in one mapping (YAML leaves it undefined). */
static int dup_key(ctx *c, const place *pl, const node *m, size_t i)
{
    char wbuf[128];
    for (size_t j = 0; j < i; j += 2)
        if (m->kid[j]->type == N_SCALAR && !strcmp(m->kid[j]->s, m->kid[i]->s))
            return ferr(c, m->kid[i]->line, "key '%s' %s: given twice (first at line %u)",
                        m->kid[i]->s, WHERE(pl), m->kid[j]->line);
    return 0;
}

/* Every key of a mapping must be a plain string. */
static int key_ok(ctx *c, const place *pl, const node *m, size_t i)
{
    char wbuf[128];
    const node *k = m->kid[i];
    if (k->type != N_SCALAR || is_null(k))
        return ferr(c, k->line, "%s: a key must be a name", WHERE(pl));
    return dup_key(c, pl, m, i);
}

static int set_tls(ctx *c, const place *pl, const node *k, const node *v, entry *e)
{
    char wbuf[128];
    if (v->type != N_MAP)
        return ferr(c, v->line, "key '%s' %s: expected a mapping (ca, cert, key, server-name, "
                    "insecure)", k->s, WHERE(pl));
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        if (key_ok(c, pl, v, i) < 0)
            return -1;
        const node *tk = v->kid[i], *tv = v->kid[i + 1];
        int rc;
        if (!strcmp(tk->s, "ca"))
            rc = set_path(c, pl, tk, tv, &e->t.tls_ca);
        else if (!strcmp(tk->s, "cert"))
            rc = set_path(c, pl, tk, tv, &e->t.tls_cert);
        else if (!strcmp(tk->s, "key"))
            rc = set_path(c, pl, tk, tv, &e->t.tls_key);
        else if (!strcmp(tk->s, "server-name"))
            rc = set_server_name(c, pl, tk, tv, &e->t.tls_server_name);
        else if (!strcmp(tk->s, "insecure"))
            rc = set_bool(c, pl, tk, tv, &e->insecure);
        else
            rc = ferr(c, tk->line, "unknown key 'tls.%s' %s (known: ca, cert, key, server-name, "
                      "insecure)", tk->s, WHERE(pl));
        if (rc < 0)
            return -1;
    }
    return 0;
}

enum { K_TARGET = 1, K_DEFAULTS = 2, K_GNMIC = 4, K_GNMIC_TOP = 8 };

/* Applies key k: v of a target (or of the defaults) to e.  `shape` says
 * which keys are known there. */
static int apply(ctx *c, const place *pl, unsigned shape, const node *k, const node *v, entry *e)
{
    char wbuf[128];
    const char *s = k->s;
    int is_native = (shape & (K_TARGET | K_DEFAULTS)) != 0;
    if (!strcmp(s, "password") || !strcmp(s, "token"))
        return refuse_literal(c, pl, k);
    if (!strcmp(s, "password-env") || !strcmp(s, "password-file") || !strcmp(s, "token-env") ||
        !strcmp(s, "token-file"))
        return set_secret(c, pl, k, v, e);
    if (is_native) {
        if (!strcmp(s, "user"))
            return set_string(c, pl, k, v, &e->t.user);
        if (!strcmp(s, "tls"))
            return set_tls(c, pl, k, v, e);
        if (!strcmp(s, "concurrency"))
            return set_concurrency(c, pl, k, v, e);
        if (!strcmp(s, "rate"))
            return set_rate(c, pl, k, v, e);
        if (!strcmp(s, "labels"))
            return set_labels(c, pl, k, v, e);
        if (shape & K_TARGET) {
            if (!strcmp(s, "name"))
                return 0; /* read first, by the caller */
            if (!strcmp(s, "restconf"))
                return set_string(c, pl, k, v, &e->t.restconf);
            if (!strcmp(s, "gnmi"))
                return set_string(c, pl, k, v, &e->t.gnmi);
            if (!strcmp(s, "aliases"))
                return set_aliases(c, pl, k, v, e);
        }
        return ferr(c, k->line, "unknown key '%s' %s", s, WHERE(pl));
    }
    if (!strcmp(s, "username"))
        return set_string(c, pl, k, v, &e->t.user);
    if (!strcmp(s, "insecure"))
        return set_bool(c, pl, k, v, &e->h2c);
    if (!strcmp(s, "skip-verify"))
        return set_bool(c, pl, k, v, &e->insecure);
    if (!strcmp(s, "tls-ca"))
        return set_path(c, pl, k, v, &e->t.tls_ca);
    if (!strcmp(s, "tls-cert"))
        return set_path(c, pl, k, v, &e->t.tls_cert);
    if (!strcmp(s, "tls-key"))
        return set_path(c, pl, k, v, &e->t.tls_key);
    if (!strcmp(s, "tls-server-name"))
        return set_server_name(c, pl, k, v, &e->t.tls_server_name);
    if (shape & K_GNMIC) {
        if (!strcmp(s, "name"))
            return 0; /* read first, by the caller */
        if (!strcmp(s, "address"))
            return set_string(c, pl, k, v, &e->address);
    }
    return ferr(c, k->line, "unknown key '%s' %s", s, WHERE(pl));
}

/* Applies every key of mapping m (NULL or null = none) to e. */
static int apply_map(ctx *c, const place *pl, unsigned shape, const node *m, entry *e)
{
    char wbuf[128];
    if (!m || is_null(m))
        return 0;
    if (m->type != N_MAP)
        return ferr(c, m->line, "%s: expected a mapping of keys", WHERE(pl));
    for (size_t i = 0; i + 1 < m->n; i += 2)
        if (key_ok(c, pl, m, i) < 0 || apply(c, pl, shape, m->kid[i], m->kid[i + 1], e) < 0)
            return -1;
    return 0;
}

static char *dup_or_null(const char *s, int *oom)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *oom = 1;
    return d;
}

/* Fills what e left unset from the defaults d (a target's own keys win;
 * the secret is one field: any of the four in the target replaces the
 * defaults'; labels are merged, the target's value winning). */
static int merge(ctx *c, entry *e, const entry *d)
{
    int oom = 0;
    yb_inv_target *t = &e->t;
    const yb_inv_target *f = &d->t;
#define TAKE(x) if (!t->x) t->x = dup_or_null(f->x, &oom)
    TAKE(user);
    TAKE(tls_ca);
    TAKE(tls_cert);
    TAKE(tls_key);
    TAKE(tls_server_name);
    if (!t->secret && f->secret) {
        t->secret = f->secret;
        TAKE(secret_env);
        TAKE(secret_file);
        e->secret_line = d->secret_line;
    }
#undef TAKE
    if (e->insecure < 0)
        e->insecure = d->insecure;
    if (e->h2c < 0)
        e->h2c = d->h2c;
    if (!t->concurrency)
        t->concurrency = f->concurrency;
    if (!t->rate && f->rate) {
        if (!(t->rate = malloc(sizeof *t->rate)))
            return ferr(c, t->line, "out of memory");
        yb_sched_copy(t->rate, f->rate); /* the defaults' steps, shared */
    }
    if (f->n_labels) {
        size_t n = t->n_labels + f->n_labels;
        char **k = realloc(t->label_key, n * sizeof *k);
        if (k)
            t->label_key = k;
        char **v = realloc(t->label_value, n * sizeof *v);
        if (v)
            t->label_value = v;
        if (!k || !v)
            return ferr(c, t->line, "out of memory");
        size_t own = t->n_labels;
        for (size_t i = 0; i < f->n_labels; i++) {
            size_t j = 0;
            while (j < own && strcmp(t->label_key[j], f->label_key[i]))
                j++;
            if (j < own)
                continue;
            t->label_key[t->n_labels] = dup_or_null(f->label_key[i], &oom);
            t->label_value[t->n_labels++] = dup_or_null(f->label_value[i], &oom);
        }
    }
    t->tls_insecure = e->insecure > 0;
    return oom ? ferr(c, t->line, "out of memory") : 0;
}

static int valid_name(const char *s, int gnmic)
{
    size_t n = strlen(s);
    if (!n || n > (gnmic ? 300 : YB_INV_MAX_NAME))
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '_' || *s == '-' ||
              (gnmic && (*s == ':' || *s == '[' || *s == ']'))))
            return 0;
    return 1;
}

/* Checks url (the value of key at line) for a scheme in want[]. */
static int check_url(ctx *c, const yb_inv_target *t, const char *key, unsigned line,
                     const char *url, const char *const *want)
{
    yb_target tg;
    char msg[512];
    if (yb_target_parse_url(url, &tg, msg, sizeof msg) < 0) {
        /* the parser speaks of --target: say what the inventory calls it */
        const char *m = msg;
        if (strstr(m, "user-info")) /* the URL is not repeated: it holds a password */
            return ferr(c, line, "key '%s' in target '%s': bad URL: user-info in the URL is not "
                        "accepted (a secret in clear); give user: NAME and password-env or "
                        "password-file", key, t->name);
        if (!strncmp(m, "--target ", 9))
            m += 9;
        return ferr(c, line, "key '%s' in target '%s': bad URL %s", key, t->name, m);
    }
    if (strcmp(tg.scheme, want[0]) && strcmp(tg.scheme, want[1]))
        return ferr(c, line, "key '%s' in target '%s': bad URL '%s': expected %s:// or %s://",
                    key, t->name, url, want[0], want[1]);
    return 0;
}

/* The line of key `key` in mapping m, or the mapping's own line. */
static unsigned key_line(const node *m, const char *key)
{
    if (m && m->type == N_MAP)
        for (size_t i = 0; i + 1 < m->n; i += 2)
            if (m->kid[i]->type == N_SCALAR && !strcmp(m->kid[i]->s, key))
                return m->kid[i + 1]->line;
    return m ? m->line : 1;
}

/* What every target must satisfy once merged. */
static int finish(ctx *c, entry *e, const node *m)
{
    static const char *const RC[] = {"http", "https"}, *const GN[] = {"grpc", "grpcs"};
    yb_inv_target *t = &e->t;
    if (!t->restconf && !t->gnmi)
        return ferr(c, t->line, "target '%s' has no URL: give restconf: URL and/or gnmi: URL",
                    t->name);
    if (t->restconf && check_url(c, t, "restconf", key_line(m, "restconf"), t->restconf, RC) < 0)
        return -1;
    if (t->gnmi && check_url(c, t, "gnmi", key_line(m, "gnmi"), t->gnmi, GN) < 0)
        return -1;
    if (t->secret == YB_SECRET_PASSWORD && !t->user)
        return ferr(c, e->secret_line, "key '%s' in target '%s': a password needs a user "
                    "(user: NAME)", t->secret_env ? "password-env" : "password-file", t->name);
    if (t->secret == YB_SECRET_TOKEN && t->user)
        return ferr(c, e->secret_line, "key '%s' in target '%s': a token and a user exclude "
                    "each other (one credential)", t->secret_env ? "token-env" : "token-file",
                    t->name);
    if ((t->tls_cert != NULL) != (t->tls_key != NULL))
        return ferr(c, t->line, "target '%s': a client certificate and its key go together",
                    t->name);
    if (t->tls_insecure && t->tls_ca)
        return ferr(c, t->line, "target '%s': a CA does not apply with insecure (nothing is "
                    "verified)", t->name);
    return 0;
}

/* ---- the two shapes --------------------------------------------------------- */

/* Adds e (moved) to inv after the duplicate checks over names and aliases. */
static int add_target(ctx *c, yb_inventory *inv, entry *e)
{
    yb_inv_target *t = &e->t;
    for (size_t i = 0; i < inv->n; i++) {
        const yb_inv_target *o = &inv->target[i];
        if (!strcmp(o->name, t->name))
            return ferr(c, t->line, "key 'name': duplicate target name '%s' (first at line %u)",
                        t->name, o->line);
        for (size_t a = 0; a < t->n_aliases; a++) {
            if (!strcmp(o->name, t->aliases[a]))
                return ferr(c, t->line, "key 'aliases' in target '%s': '%s' is the name of "
                            "the target at line %u", t->name, t->aliases[a], o->line);
            for (size_t b = 0; b < o->n_aliases; b++)
                if (!strcmp(o->aliases[b], t->aliases[a]))
                    return ferr(c, t->line, "key 'aliases' in target '%s': '%s' is an alias "
                                "of target '%s' too", t->name, t->aliases[a], o->name);
        }
        for (size_t b = 0; b < o->n_aliases; b++)
            if (!strcmp(o->aliases[b], t->name))
                return ferr(c, t->line, "key 'name': '%s' is an alias of target '%s'", t->name,
                            o->name);
    }
    inv->target[inv->n++] = *t;
    free(e->address);
    memset(e, 0, sizeof *e);
    return 0;
}

static int native(ctx *c, const node *root, yb_inventory *inv)
{
    char wbuf[128];
    place top = {"the top level", NULL}, dp = {"defaults", NULL};
    entry d, e;
    entry_init(&d);
    entry_init(&e);
    int rc = -1;
    for (size_t i = 0; i + 1 < root->n; i += 2) {
        if (key_ok(c, &top, root, i) < 0)
            goto out;
        const char *s = root->kid[i]->s;
        if (strcmp(s, "defaults") && strcmp(s, "targets")) {
            ferr(c, root->kid[i]->line, "unknown key '%s' at the top level (known: defaults, "
                 "targets)", s);
            goto out;
        }
    }
    if (apply_map(c, &dp, K_DEFAULTS, get(root, "defaults"), &d) < 0)
        goto out;
    const node *ts = get(root, "targets");
    if (ts->n > YB_INV_MAX_TARGETS) {
        ferr(c, ts->line, "key 'targets': more than %u targets", YB_INV_MAX_TARGETS);
        goto out;
    }
    for (size_t i = 0; i < ts->n; i++) {
        const node *m = ts->kid[i];
        char label[32];
        snprintf(label, sizeof label, "#%zu", i + 1);
        place pl = {"target", label};
        entry_init(&e);
        e.t.line = m->line;
        if (m->type != N_MAP) {
            ferr(c, m->line, "%s: expected a mapping (name, restconf, gnmi, ...)", WHERE(&pl));
            goto out;
        }
        const node *nm = get(m, "name");
        if (!nm) {
            ferr(c, m->line, "target %s has no key 'name'", label);
            goto out;
        }
        if (nm->type != N_SCALAR || !valid_name(nm->s, 0)) {
            ferr(c, nm->line, "key 'name' in target %s: '%s': expected 1 to %d of "
                 "A-Z a-z 0-9 . _ -", label, nm->type == N_SCALAR ? nm->s : "", YB_INV_MAX_NAME);
            goto out;
        }
        if (!(e.t.name = strdup(nm->s))) {
            ferr(c, m->line, "out of memory");
            goto out;
        }
        pl.name = e.t.name;
        if (apply_map(c, &pl, K_TARGET, m, &e) < 0 || merge(c, &e, &d) < 0 ||
            finish(c, &e, m) < 0 || add_target(c, inv, &e) < 0)
            goto out;
    }
    rc = 0;
out:
    entry_free(&e);
    entry_free(&d);
    return rc;
}

/* gnmic's default gNMI port, for an address written without one. */
#define GNMIC_PORT 57400

static int gnmic(ctx *c, const node *root, yb_inventory *inv)
{
    place top = {"the top level", NULL};
    entry d, e;
    entry_init(&d);
    entry_init(&e);
    int rc = -1;
    for (size_t i = 0; i + 1 < root->n; i += 2) {
        if (key_ok(c, &top, root, i) < 0)
            goto out;
        if (strcmp(root->kid[i]->s, "targets") &&
            apply(c, &top, K_GNMIC_TOP, root->kid[i], root->kid[i + 1], &d) < 0)
            goto out;
    }
    const node *ts = get(root, "targets");
    if (ts->n / 2 > YB_INV_MAX_TARGETS) {
        ferr(c, ts->line, "key 'targets': more than %u targets", YB_INV_MAX_TARGETS);
        goto out;
    }
    for (size_t i = 0; i + 1 < ts->n; i += 2) {
        const node *k = ts->kid[i], *m = ts->kid[i + 1];
        entry_init(&e);
        e.t.line = k->line;
        if (k->type != N_SCALAR || is_null(k)) {
            ferr(c, k->line, "key 'targets': each key is a target's address (host:port)");
            goto out;
        }
        const node *nm = m->type == N_MAP ? get(m, "name") : NULL;
        const char *name = nm && nm->type == N_SCALAR ? nm->s : k->s;
        if (!valid_name(name, 1)) {
            ferr(c, nm ? nm->line : k->line, "key '%s' in targets: '%s' is not a usable "
                 "target name (A-Z a-z 0-9 . _ - : [ ], at most 300)", nm ? "name" : k->s, name);
            goto out;
        }
        if (!(e.t.name = strdup(name))) {
            ferr(c, k->line, "out of memory");
            goto out;
        }
        place pl = {"target", e.t.name};
        if (apply_map(c, &pl, K_GNMIC, m, &e) < 0 || merge(c, &e, &d) < 0)
            goto out;
        const char *addr = e.address ? e.address : k->s;
        /* host:port, [v6]:port, or a host alone (gnmic's port then) */
        const char *rb = strrchr(addr, ']');
        const char *colon = strrchr(rb ? rb : addr, ':');
        int bare_v6 = !rb && colon && strchr(addr, ':') != colon;
        char url[400];
        int n = snprintf(url, sizeof url, "%s://%s%s%s", e.h2c > 0 ? "grpc" : "grpcs",
                         bare_v6 ? "[" : "", addr, bare_v6 ? "]" : "");
        if (n > 0 && (size_t)n < sizeof url && (!colon || bare_v6))
            n += snprintf(url + n, sizeof url - (size_t)n, ":%d", GNMIC_PORT);
        if (n < 0 || (size_t)n >= sizeof url) {
            ferr(c, k->line, "key '%s' in targets: address too long", k->s);
            goto out;
        }
        if (!(e.t.gnmi = strdup(url))) {
            ferr(c, k->line, "out of memory");
            goto out;
        }
        if (e.h2c > 0 && (e.insecure > 0 || e.t.tls_ca || e.t.tls_cert)) {
            ferr(c, k->line, "target '%s': insecure (no TLS) excludes skip-verify and the tls-* "
                 "keys", e.t.name);
            goto out;
        }
        if (finish(c, &e, m->type == N_MAP ? m : k) < 0 || add_target(c, inv, &e) < 0)
            goto out;
    }
    inv->gnmic = 1;
    rc = 0;
out:
    entry_free(&e);
    entry_free(&d);
    return rc;
}

int yb_inventory_parse(const char *name, const uint8_t *buf, size_t len, yb_inventory *inv,
                       char *err, size_t errlen)
{
    const char *slash = strrchr(name, '/');
    ctx c = {name, name, slash ? (size_t)(slash - name) : 0, err, errlen};
    if (slash == name)
        c.dirlen = 1; /* "/inv.yaml": relative to "/" */
    node *root = NULL;
    int rc = -1;
    memset(inv, 0, sizeof *inv);
    if (yb_ytree_parse(name, buf, len, &LIMITS, &root, err, errlen) < 0)
        return -1;
    const node *ts = root && root->type == N_MAP ? get(root, "targets") : NULL;
    if (!ts) {
        ferr(&c, root ? root->line : 1, "expected a mapping with key 'targets' (a list of "
             "targets, or gnmic's mapping of addresses)");
        goto out;
    }
    if ((ts->type != N_SEQ && ts->type != N_MAP) || !ts->n) {
        ferr(&c, ts->line, "key 'targets': expected a non-empty list (or gnmic's mapping)");
        goto out;
    }
    inv->target = calloc(ts->type == N_SEQ ? ts->n : ts->n / 2, sizeof *inv->target);
    if (!inv->target) {
        ferr(&c, ts->line, "out of memory");
        goto out;
    }
    rc = ts->type == N_SEQ ? native(&c, root, inv) : gnmic(&c, root, inv);
out:
    yb_ynode_free(root);
    if (rc < 0)
        yb_inventory_free(inv);
    return rc;
}

int yb_inventory_load(const char *path, yb_inventory *inv, char *err, size_t errlen)
{
    uint8_t *buf;
    size_t len;
    memset(inv, 0, sizeof *inv);
    if (yb_ytree_read_file(path, YB_INV_MAX_BYTES, &buf, &len, err, errlen) < 0)
        return -1;
    int rc = yb_inventory_parse(path, buf, len, inv, err, errlen);
    free(buf);
    return rc;
}

const yb_inv_target *yb_inventory_find(const yb_inventory *inv, const char *name)
{
    for (size_t i = 0; i < inv->n; i++) {
        const yb_inv_target *t = &inv->target[i];
        if (!strcmp(t->name, name))
            return t;
        for (size_t a = 0; a < t->n_aliases; a++)
            if (!strcmp(t->aliases[a], name))
                return t;
    }
    return NULL;
}

void yb_inventory_free(yb_inventory *inv)
{
    if (!inv)
        return;
    for (size_t i = 0; i < inv->n; i++)
        target_free(&inv->target[i]);
    free(inv->target);
    memset(inv, 0, sizeof *inv);
}
