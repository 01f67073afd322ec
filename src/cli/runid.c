/* The run id (see runid.h). */
/* SHA-256 through OpenSSL's low-level interface (deprecated in 3.0, so
 * declared before any header): the EVP one initializes the library (its
 * configuration, the default provider, the name tables) on first use,
 * about 1 ms of CPU that a run without TLS spends on nothing else. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "config.h"
#include "cli/runid.h"

#include <errno.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Options that do not define the work, or differ between the shards of
 * one run, or name files whose content (or secret) is not the work's. */
static int excluded(int id)
{
    static const int NOT_WORK[] = {
        YB_RO_SHARD, YB_RO_SHARDS, YB_RO_SHARD_ENV, YB_RO_START_AT, YB_RO_RUN_ID, 't',
        YB_RO_JSON, YB_RO_HTML, YB_RO_UNIT, YB_RO_HGRM, YB_RO_HLOG, YB_RO_LOG, YB_RO_LOG_FORMAT,
        YB_RO_SERIES, YB_RO_CSV, 'q', 'v', YB_RO_MAXERR, YB_RO_THRESHOLD, YB_RO_ABORT_ON_FAIL,
        YB_RO_METRICS_LISTEN, YB_RO_METRICS_LINGER, YB_RO_METRICS_SERIES, YB_RO_CACERT,
        YB_RO_CERT, YB_RO_KEY, YB_RO_KEYLOG, YB_RO_PWFILE, YB_RO_TOKFILE,
        YB_RO_TARGETS, YB_RO_PLAN_FILE, /* their content is hashed instead */
    };
    for (size_t i = 0; i < sizeof NOT_WORK / sizeof NOT_WORK[0]; i++)
        if (NOT_WORK[i] == id)
            return 1;
    return 0;
}

static int by_id(const void *a, const void *b)
{
    const yb_ro_seen *x = *(const yb_ro_seen *const *)a, *y = *(const yb_ro_seen *const *)b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x < y ? -1 : x > y; /* stable: repeated options keep their order */
}

/* Hashes the content of the regular file at path; anything else (a name
 * that does not exist, a directory, standard input, a FIFO a reader would
 * drain) by its name, so that reading it stays the corpus reader's, with
 * its own messages. */
static int hash_file(SHA256_CTX *md, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (strcmp(path, "-") == 0 || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
        return SHA256_Update(md, path, strlen(path) + 1) ? 0 : -1;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    unsigned char buf[65536];
    size_t n;
    int rc = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        if (!SHA256_Update(md, buf, n))
            rc = -1;
    if (ferror(f)) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        rc = -1;
    } else if (rc < 0) {
        snprintf(err, errlen, "%s: cannot hash", path);
    }
    fclose(f);
    return rc;
}

int yb_run_id(const yb_runopts *r, const char *const *files, size_t n, char *out,
              char *err, size_t errlen)
{
    const yb_ro_seen *sorted[YB_RO_MAX_SEEN];
    if (r->seen_overflow) {
        snprintf(err, errlen, "more than %d options: the run id cannot cover them", YB_RO_MAX_SEEN);
        return -1;
    }
    for (size_t i = 0; i < r->n_seen; i++)
        sorted[i] = &r->seen[i];
    qsort(sorted, r->n_seen, sizeof *sorted, by_id);
    SHA256_CTX ctx, *md = &ctx;
    int rc = SHA256_Init(md) ? 0 : -1;
    static const char TAG[] = "yangblast-run/1";
    if (!rc && !SHA256_Update(md, TAG, sizeof TAG))
        rc = -1;
    for (size_t i = 0; i < r->n_seen && !rc; i++) {
        const yb_ro_seen *s = sorted[i];
        if (excluded(s->id))
            continue;
        char head[16];
        int hl = snprintf(head, sizeof head, "%d=", s->id);
        const char *v = s->arg ? s->arg : "";
        if (!SHA256_Update(md, head, (size_t)hl) || !SHA256_Update(md, v, strlen(v) + 1))
            rc = -1;
        /* -H splits "Name: value" in argv's own storage at the colon: the
         * value follows the name's NUL */
        if (!rc && s->id == 'H' && s->arg) {
            const char *val = s->arg + strlen(s->arg) + 1;
            if (!SHA256_Update(md, val, strlen(val) + 1))
                rc = -1;
        }
    }
    if (rc < 0)
        snprintf(err, errlen, "out of memory");
    for (size_t i = 0; i < n && !rc; i++) {
        if (!files[i])
            continue;
        unsigned char mark = (unsigned char)i;
        if (!SHA256_Update(md, &mark, 1))
            rc = -1;
        else
            rc = hash_file(md, files[i], err, errlen);
    }
    unsigned char d[SHA256_DIGEST_LENGTH];
    if (!rc && !SHA256_Final(d, md)) {
        snprintf(err, errlen, "cannot hash");
        rc = -1;
    }
    if (rc)
        return -1;
    for (size_t i = 0; i < YB_RUN_ID_LEN / 2; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
    return 0;
}

uint64_t yb_run_id_seed(const char *run_id)
{
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256_CTX md;
    uint64_t s = 0;
    if (SHA256_Init(&md) && SHA256_Update(&md, run_id, strlen(run_id)) && SHA256_Final(d, &md))
        for (int i = 0; i < 8; i++)
            s = s << 8 | d[i];
    return s;
}
