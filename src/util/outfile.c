/* Output files that never destroy what they write over (see outfile.h). */
#include "config.h"
#include "util/outfile.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LINKS 40 /* as the kernel's own limit on a path's links */

/* ---- temporary files a fatal signal removes ---- */

#define MAX_TRACKED 64
/* malloc'd paths; a signal handler reads them (lock-free atomics and
 * unlink are async-signal-safe), any thread may add or take one */
static _Atomic(char *) tracked[MAX_TRACKED];

int yb_outfile_track(const char *path)
{
    char *p = strdup(path);
    if (!p)
        return -1;
    for (int i = 0; i < MAX_TRACKED; i++) {
        char *expect = NULL;
        if (atomic_compare_exchange_strong(&tracked[i], &expect, p))
            return i;
    }
    free(p);
    return -1;
}

void yb_outfile_untrack(int handle)
{
    if (handle < 0 || handle >= MAX_TRACKED)
        return;
    free(atomic_exchange(&tracked[handle], NULL));
}

static void clean_and_die(int sig)
{
    for (int i = 0; i < MAX_TRACKED; i++) {
        char *p = atomic_load(&tracked[i]);
        if (p)
            unlink(p);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

void yb_outfile_clean_on_signals(void)
{
    static const int SIGS[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof SIGS / sizeof SIGS[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(SIGS[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = clean_and_die;
        sigaction(SIGS[i], &sa, NULL);
    }
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int yb_outfile_is_stdout(const char *path)
{
    return path && !strcmp(path, "-");
}

/* Names of descriptors that are already open: always written in place
 * (replacing what they point to would cut off whoever opened them). */
static int open_descriptor_name(const char *path, int *fd)
{
    const char *n = NULL;
    if (!strcmp(path, "/dev/stdout")) {
        *fd = STDOUT_FILENO;
        return 1;
    }
    if (!strcmp(path, "/dev/stderr")) {
        *fd = STDERR_FILENO;
        return 1;
    }
    if (!strncmp(path, "/dev/fd/", 8))
        n = path + 8;
    else if (!strncmp(path, "/proc/self/fd/", 14))
        n = path + 14;
    uint64_t v;
    if (!n || yb_parse_u64(n, 0, INT32_MAX, &v) < 0)
        return 0;
    *fd = (int)v;
    return 1;
}

/* Follows symbolic links from path to the file a rename must replace.
 * Returns a malloc'd path, or NULL with err. */
static char *resolve(const char *path, char *err, size_t errlen)
{
    char *cur = strdup(path);
    if (!cur) {
        fail(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    for (int hops = 0;; hops++) {
        struct stat st;
        if (lstat(cur, &st) < 0 || !S_ISLNK(st.st_mode))
            return cur; /* not there yet, or the final file */
        if (hops == MAX_LINKS) {
            fail(err, errlen, "%s: too many levels of symbolic links", path);
            break;
        }
        char target[4096];
        ssize_t n = readlink(cur, target, sizeof target - 1);
        if (n < 0 || (size_t)n >= sizeof target - 1) {
            fail(err, errlen, "%s: cannot read the link: %s", path,
                 n < 0 ? strerror(errno) : "too long");
            break;
        }
        target[n] = 0;
        const char *slash = strrchr(cur, '/');
        size_t dirlen = target[0] == '/' || !slash ? 0 : (size_t)(slash - cur) + 1;
        char *next = malloc(dirlen + (size_t)n + 1);
        if (!next) {
            fail(err, errlen, "%s: out of memory", path);
            break;
        }
        memcpy(next, cur, dirlen);
        memcpy(next + dirlen, target, (size_t)n + 1);
        free(cur);
        cur = next;
    }
    free(cur);
    return NULL;
}

/* Splits path's directory into dir (cap bytes): "." when there is none. */
static int dir_of(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (slash && n == 0)
        n = 1; /* "/file" */
    if (!slash)
        return snprintf(dir, cap, ".") < (int)cap ? 0 : -1;
    if (n >= cap)
        return -1;
    memcpy(dir, path, n);
    dir[n] = 0;
    return 0;
}

/* Opens the temporary file beside final: ".BASE.XXXXXX" in its directory,
 * so the rename stays on one file system and is atomic.  Returns the fd
 * (and sets *tmp, malloc'd) or -1 with err. */
static int make_temp(const char *final, const char *name, char **tmp, char *err, size_t errlen)
{
    const char *slash = strrchr(final, '/');
    size_t dirlen = slash ? (size_t)(slash - final) + 1 : 0;
    const char *base = final + dirlen;
    if (!*base)
        return fail(err, errlen, "%s: not a file name", name);
    size_t n = dirlen + strlen(base) + sizeof "..XXXXXX";
    char *t = malloc(n);
    if (!t)
        return fail(err, errlen, "%s: out of memory", name);
    snprintf(t, n, "%.*s.%s.XXXXXX", (int)dirlen, final, base);
    int fd = mkstemp(t);
    if (fd < 0) {
        char dir[4096];
        if (dir_of(final, dir, sizeof dir) < 0)
            snprintf(dir, sizeof dir, "its directory");
        fail(err, errlen, "%s: cannot create a file in %s: %s", name, dir, strerror(errno));
        free(t);
        return -1;
    }
    *tmp = t;
    return fd;
}

int yb_outfile_check(const char *path, int append, char *err, size_t errlen)
{
    if (!path || !*path)
        return fail(err, errlen, "an output path is empty");
    if (yb_outfile_is_stdout(path))
        return 0;
    int dfd;
    struct stat st;
    if (open_descriptor_name(path, &dfd))
        return fcntl(dfd, F_GETFL) < 0 ? fail(err, errlen, "%s: not open", path) : 0;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return fail(err, errlen, "%s: is a directory", path);
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return access(path, W_OK) < 0
                   ? fail(err, errlen, "%s: cannot write: %s", path, strerror(errno))
                   : 0;
    char *final = resolve(path, err, errlen);
    if (!final)
        return -1;
    int rc = 0;
    if (append && stat(final, &st) == 0) {
        if (access(final, W_OK) < 0)
            rc = fail(err, errlen, "%s: cannot append: %s", path, strerror(errno));
    } else {
        /* the one sure test that the file can be created: create one */
        char *tmp = NULL;
        int fd = make_temp(final, path, &tmp, err, errlen);
        if (fd < 0) {
            rc = -1;
        } else {
            close(fd);
            unlink(tmp);
            free(tmp);
        }
    }
    free(final);
    return rc;
}

static void release(yb_outfile *o)
{
    yb_outfile_untrack(o->track);
    free(o->final);
    free(o->tmp);
    free(o->name);
    memset(o, 0, sizeof *o);
    o->track = -1;
}

int yb_outfile_open(yb_outfile *o, const char *path, int append, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->track = -1;
    if (!path || !*path)
        return fail(err, errlen, "an output path is empty");
    if (!(o->name = strdup(path)))
        return fail(err, errlen, "%s: out of memory", path);
    int fd = -1, dfd;
    struct stat st;
    if (yb_outfile_is_stdout(path)) {
        o->f = stdout;
        o->keep_open = 1;
        return 0;
    }
    if (open_descriptor_name(path, &dfd)) {
        fd = dup(dfd);
        if (fd < 0) {
            fail(err, errlen, "%s: %s", path, strerror(errno));
            goto bad;
        }
    } else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        fail(err, errlen, "%s: is a directory", path);
        goto bad;
    } else if (append || (stat(path, &st) == 0 && !S_ISREG(st.st_mode))) {
        /* a device, FIFO or socket is written in place; so is a log that
         * grows by appending (each write whole) */
        fd = open(path, O_WRONLY | O_CLOEXEC | (append ? O_APPEND | O_CREAT : 0), 0644);
        if (fd < 0) {
            fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
            goto bad;
        }
    } else {
        if (!(o->final = resolve(path, err, errlen)))
            goto bad;
        mode_t mode = 0644; /* mkstemp makes 0600; reports are meant to be shared */
        if (stat(o->final, &st) == 0)
            mode = st.st_mode & 07777;
        fd = make_temp(o->final, path, &o->tmp, err, errlen);
        if (fd < 0)
            goto bad;
        o->track = yb_outfile_track(o->tmp);
        if (fchmod(fd, mode) < 0) {
            fail(err, errlen, "%s: %s", o->tmp, strerror(errno));
            goto bad;
        }
    }
    if (!(o->f = fdopen(fd, append ? "a" : "w"))) {
        fail(err, errlen, "%s: %s", path, strerror(errno));
        goto bad;
    }
    return 0;
bad:
    if (fd >= 0)
        close(fd);
    if (o->tmp)
        unlink(o->tmp);
    release(o);
    return -1;
}

int yb_outfile_commit(yb_outfile *o, char *err, size_t errlen)
{
    int rc = 0;
    if (!o->f)
        return fail(err, errlen, "%s: not open", o->name ? o->name : "output");
    if (fflush(o->f) != 0 || ferror(o->f))
        rc = fail(err, errlen, "%s: write failed: %s", o->name, strerror(errno));
    if (o->keep_open) {
        release(o);
        return rc;
    }
    /* fsync only what is renamed: a device or pipe may refuse it */
    if (!rc && o->tmp && fsync(fileno(o->f)) < 0)
        rc = fail(err, errlen, "%s: write failed: %s", o->name, strerror(errno));
    if (fclose(o->f) != 0 && !rc)
        rc = fail(err, errlen, "%s: close failed: %s", o->name, strerror(errno));
    o->f = NULL;
    if (o->tmp) {
        if (!rc && rename(o->tmp, o->final) < 0)
            rc = fail(err, errlen, "%s: cannot rename into place: %s", o->name, strerror(errno));
        if (rc)
            unlink(o->tmp);
    }
    release(o);
    return rc;
}

void yb_outfile_abort(yb_outfile *o)
{
    if (o->f && !o->keep_open)
        fclose(o->f);
    else if (o->f)
        fflush(o->f);
    if (o->tmp)
        unlink(o->tmp);
    release(o);
}

char *yb_outfile_replaced_path(const char *path, char *err, size_t errlen)
{
    int dfd;
    struct stat st;
    if (err && errlen)
        err[0] = 0;
    if (yb_outfile_is_stdout(path) || open_descriptor_name(path, &dfd) ||
        (stat(path, &st) == 0 && !S_ISREG(st.st_mode)))
        return NULL;
    return resolve(path, err, errlen);
}
