/* Output files that never destroy what they write over.  Every output
 * option (reports, corpora, logs) goes through here:
 *   - "-" is standard output, written in place;
 *   - a character device, FIFO or socket (/dev/null, a pipe, /dev/stdout,
 *     /dev/fd/N) is written in place, never replaced;
 *   - a regular file (or a new one) is written to a temporary file in the
 *     same directory and renamed into place on commit, so an interrupted or
 *     failed write leaves the old file (or none); a symbolic link is
 *     followed, and its final target is replaced: the link stays a link;
 *   - appending (a CSV log) opens the file itself, following links.
 * yb_outfile_check finds a bad path before a run starts. */
#ifndef YB_OUTFILE_H
#define YB_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct {
    FILE *f;        /* write here */
    char *final;    /* the path renamed onto at commit (NULL: in place) */
    char *tmp;      /* the temporary file (NULL: in place) */
    int keep_open;  /* standard output: flushed, never closed */
    char *name;     /* the path as given, for messages */
    int track;      /* tmp's slot in the signal clean-up's list, or -1 */
} yb_outfile;

/* Returns 1 when path is "-" (standard output), else 0. */
int yb_outfile_is_stdout(const char *path);

/* Checks that path can be written as an output (append: appended to):
 * "-" always; a device, FIFO or socket when it is writable; otherwise the
 * (link-resolved) file's directory exists and a file can be created in it.
 * Creates nothing that stays.  Returns 0, or -1 with a message naming the
 * path and the reason in err. */
int yb_outfile_check(const char *path, int append, char *err, size_t errlen);

/* Opens path for writing as described above (append: O_APPEND, no
 * temporary file; new files 0644, a replaced file keeps its mode).
 * Returns 0 with o filled, or -1 with err. */
int yb_outfile_open(yb_outfile *o, const char *path, int append, char *err, size_t errlen);

/* Flushes, fsyncs and renames the temporary file into place (or flushes
 * and closes an in-place file).  Returns 0, or -1 with err, in which case
 * nothing under the final name changed.  Frees o's resources either way. */
int yb_outfile_commit(yb_outfile *o, char *err, size_t errlen);

/* Discards what was written (removes the temporary file; an in-place
 * output keeps what already went out).  Frees o's resources. */
void yb_outfile_abort(yb_outfile *o);

/* Returns the (link-resolved, malloc'd) path that writing path replaces by
 * a rename, for a writer that makes its own temporary file beside it; or
 * NULL when path is written in place (err empty) or cannot be resolved
 * (message in err). */
char *yb_outfile_replaced_path(const char *path, char *err, size_t errlen);

/* Temporary files a fatal signal must not leave behind.  yb_outfile_open
 * tracks its own; a writer that makes one of its own (capture's, renamed
 * into place after a rewrite) tracks it with yb_outfile_track (the path
 * is copied; returns a handle, or -1 when the list is full or out of
 * memory: the file is then only not cleaned up) and forgets it with
 * yb_outfile_untrack once renamed or removed (-1 is a no-op). */
int yb_outfile_track(const char *path);
void yb_outfile_untrack(int handle);

/* Makes SIGINT, SIGTERM and SIGHUP remove every tracked temporary file,
 * then end the process by the same signal (its exit status says so).  A
 * signal ignored at start stays ignored (a background job's SIGINT); a
 * command that stops gracefully on SIGINT/SIGTERM installs its own
 * handler after this, and commits or aborts its outputs itself.  Call
 * once, before any output is opened. */
void yb_outfile_clean_on_signals(void);

#endif
