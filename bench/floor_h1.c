/* bench/floor_h1 [-e] [-p POLL] HOST PORT CONNS COUNT|DURATION REQUEST_FILE: the
 * floor of an HTTP/1.1 keep-alive client's CPU per request.
 *
 * One thread, CONNS connections (TCP_NODELAY, as wrk), one request in flight
 * on each: the bytes of REQUEST_FILE (a whole request, head and body, sent
 * as they are) go out with one write(2), the answer comes back with one
 * read(2) per readiness event (epoll, level-triggered; -e: edge-triggered,
 * reading until a short read), and the next request leaves at once.  With
 * -p (a duration, e.g. 10us) it polls for events that long before it sleeps
 * in epoll_wait, as yangblast's worker does.  It
 * stops after COUNT answers, or starts no new request after DURATION (e.g.
 * 5s) and lets the ones in flight finish, so that the server saw exactly as
 * many requests as it prints.
 *
 * Each answer is checked, with as little work as that takes: its head
 * (at most 16 KB) must hold a status line "HTTP/1.1 NNN" and a
 * Content-Length (no chunked or close-delimited bodies), and its status
 * and whole length must be the first answer's; a byte beyond the answer,
 * a closed connection or 10 s without progress end the run with an error
 * (exit 1).  Prints one line: requests, seconds, its own user and system
 * CPU (getrusage, from the first request to the last answer) and CPU us
 * per request, then the answers' status and length.
 * Built on demand: make bench/floor_h1. */
#include "config.h"
#include "floor_common.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#define PROG "floor_h1"
#define HEAD_MAX 16384            /* an answer's head */
#define RBUF (HEAD_MAX + 65536)   /* one read's room: a head and some body */
#define MAX_CONNS 10000
#define MAX_REQUEST (64u << 20)
#define MAX_BODY (1ull << 40)

typedef struct {
    int fd;
    int busy;          /* a request is in flight */
    int want_out;      /* EPOLLOUT asked for: the request's write was short */
    size_t sent;       /* bytes of the request written */
    size_t have;       /* head bytes in buf (head phase) */
    int in_body;
    uint64_t body_left;
    uint64_t resp_len; /* this answer's length so far */
    unsigned status;
    uint8_t buf[RBUF];
} conn;

static const uint8_t *req;
static size_t req_len;
static int epfd, edge;
static uint64_t issued, done, limit_count;
static int stopping;
/* The first answer's status and length, which every answer must repeat. */
static unsigned ref_status;
static uint64_t ref_len;

static int fail(conn *c, const char *what)
{
    fprintf(stderr, PROG ": connection %d, request %llu: %s\n", c->fd,
            (unsigned long long)done + 1, what);
    return -1;
}

static int set_events(conn *c, int out)
{
    struct epoll_event ev = {.events = EPOLLIN | (out ? EPOLLOUT : 0) | (edge ? EPOLLET : 0),
                             .data.ptr = c};
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0)
        return fail(c, strerror(errno));
    c->want_out = out;
    return 0;
}

/* Writes what is left of the request.  Returns 0 (also when the socket is
 * full: EPOLLOUT is then asked for), or -1. */
static int send_rest(conn *c)
{
    ssize_t w = write(c->fd, req + c->sent, req_len - c->sent);
    if (w < 0) {
        if (errno != EAGAIN)
            return fail(c, strerror(errno));
        w = 0;
    }
    c->sent += (size_t)w;
    int out = c->sent < req_len;
    return out != c->want_out ? set_events(c, out) : 0;
}

/* Starts the next request on c if the run wants one.  Returns 0 or -1. */
static int start(conn *c)
{
    if (stopping || (limit_count && issued >= limit_count)) {
        c->busy = 0;
        return 0;
    }
    issued++;
    c->busy = 1;
    c->sent = c->have = 0;
    c->in_body = 0;
    c->resp_len = 0;
    return send_rest(c);
}

/* The value of a "Content-Length:" header line [p, e) if it is one (case
 * insensitive name).  Returns 1 and sets *v, 0 when the line is another
 * header, -1 when the value is not a number. */
static int content_length(const uint8_t *p, const uint8_t *e, uint64_t *v)
{
    static const char NAME[] = "content-length:";
    size_t n = sizeof NAME - 1;
    if ((size_t)(e - p) < n || strncasecmp((const char *)p, NAME, n))
        return 0;
    p += n;
    while (p < e && (*p == ' ' || *p == '\t'))
        p++;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    return yb_parse_u64_n((const char *)p, (size_t)(e - p), 0, MAX_BODY, v) < 0 ? -1 : 1;
}

/* Parses the head buf[0, hlen) (hlen includes the blank line): the status,
 * and the body's length from Content-Length.  Returns 0 or -1. */
static int parse_head(conn *c, size_t hlen, uint64_t *body)
{
    const uint8_t *p = c->buf, *end = c->buf + hlen - 2; /* the last CRLF ends a line */
    if (hlen < 14 || memcmp(p, "HTTP/1.1 ", 9) || p[9] < '1' || p[9] > '5' || p[10] < '0' ||
        p[10] > '9' || p[11] < '0' || p[11] > '9' || (p[12] != ' ' && p[12] != '\r'))
        return fail(c, "the answer does not start with a status line 'HTTP/1.1 NNN'");
    c->status = (unsigned)(p[9] - '0') * 100 + (unsigned)(p[10] - '0') * 10 + (unsigned)(p[11] - '0');
    if (c->status < 200)
        return fail(c, "an interim (1xx) answer: not handled here");
    int have_cl = 0;
    for (;;) {
        const uint8_t *eol = memchr(p, '\r', (size_t)(end - p));
        if (!eol || eol[1] != '\n')
            return fail(c, "a header line not ended by CRLF");
        p = eol + 2;
        if (p >= end)
            break;
        eol = memchr(p, '\r', (size_t)(end - p));
        const uint8_t *le = eol ? eol : end;
        if ((size_t)(le - p) >= 18 && !strncasecmp((const char *)p, "transfer-encoding:", 18))
            return fail(c, "a Transfer-Encoding answer: only Content-Length bodies are read");
        uint64_t v;
        int r = content_length(p, le, &v);
        if (r < 0)
            return fail(c, "a Content-Length that is not a number up to 2^40");
        if (r > 0) {
            if (have_cl && v != *body)
                return fail(c, "two different Content-Lengths");
            have_cl = 1;
            *body = v;
        }
    }
    if (!have_cl) {
        if (c->status != 204 && c->status != 304)
            return fail(c, "an answer without Content-Length: only Content-Length bodies are read");
        *body = 0;
    }
    return 0;
}

/* One answer is complete: check it against the first, start the next. */
static int answered(conn *c)
{
    if (c->sent < req_len)
        return fail(c, "an answer before the whole request was written");
    if (!ref_len) {
        ref_status = c->status;
        ref_len = c->resp_len;
    } else if (c->status != ref_status || c->resp_len != ref_len) {
        char m[160];
        snprintf(m, sizeof m, "answer %u of %llu bytes where the first was %u of %llu bytes",
                 c->status, (unsigned long long)c->resp_len, ref_status,
                 (unsigned long long)ref_len);
        return fail(c, m);
    }
    done++;
    return start(c);
}

/* Takes the n bytes just read (at buf + have in the head phase, at buf in
 * the body phase).  Returns 0 or -1. */
static int took(conn *c, size_t n)
{
    if (!c->busy)
        return fail(c, "bytes from the server while no request is in flight");
    c->resp_len += n;
    if (c->in_body) {
        if (n > c->body_left)
            return fail(c, "more bytes than the answer's Content-Length");
        c->body_left -= n;
        return c->body_left ? 0 : answered(c);
    }
    size_t from = c->have >= 3 ? c->have - 3 : 0;
    c->have += n;
    const uint8_t *e = memmem(c->buf + from, c->have - from, "\r\n\r\n", 4);
    if (!e) {
        if (c->have >= HEAD_MAX)
            return fail(c, "an answer's head over 16 KB");
        return 0;
    }
    size_t hlen = (size_t)(e + 4 - c->buf), extra = c->have - hlen;
    if (hlen > HEAD_MAX)
        return fail(c, "an answer's head over 16 KB");
    uint64_t body = 0;
    if (parse_head(c, hlen, &body) < 0)
        return -1;
    if (extra > body)
        return fail(c, "more bytes than the answer's Content-Length");
    c->in_body = 1;
    c->body_left = body - extra;
    return c->body_left ? 0 : answered(c);
}

/* Reads what c has: once (level-triggered), or until a short read (edge).
 * Returns 0 or -1. */
static int readable(conn *c)
{
    for (;;) {
        uint8_t *at = c->in_body ? c->buf : c->buf + c->have;
        size_t room = c->in_body ? sizeof c->buf : HEAD_MAX - c->have;
        ssize_t r = read(c->fd, at, room);
        if (r < 0)
            return errno == EAGAIN ? 0 : fail(c, strerror(errno));
        if (r == 0)
            return fail(c, "the server closed the connection");
        if (took(c, (size_t)r) < 0)
            return -1;
        if (!edge || (size_t)r < room)
            return 0;
    }
}

int main(int argc, char **argv)
{
    uint64_t poll_ns = 0;
    for (int o; (o = getopt(argc, argv, "ep:")) != -1;) {
        if (o == 'e')
            edge = 1;
        else if (o != 'p' || floor_parse_poll(PROG, optarg, &poll_ns) < 0)
            return 2;
    }
    int argi = optind;
    if (argc - argi != 5) {
        fprintf(stderr,
                "usage: " PROG " [-e] [-p POLL] HOST PORT CONNS COUNT|DURATION REQUEST_FILE\n");
        return 2;
    }
    uint16_t port;
    uint64_t nconns;
    floor_limit lim;
    if (floor_parse_common(PROG, argv[argi + 1], argv[argi + 2], argv[argi + 3], MAX_CONNS,
                           &port, &nconns, &lim) < 0)
        return 2;
    limit_count = lim.count;
    int status = 1;
    conn *cs = NULL;
    uint8_t *file = floor_read_file(PROG, argv[argi + 4], MAX_REQUEST, &req_len);
    if (!file)
        return 2;
    req = file;
    if ((epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 || !(cs = calloc(nconns, sizeof *cs))) {
        perror(PROG);
        goto out;
    }
    for (uint64_t i = 0; i < nconns; i++)
        cs[i].fd = -1;
    for (uint64_t i = 0; i < nconns; i++)
        if ((cs[i].fd = floor_connect(PROG, argv[argi], port, epfd,
                                      EPOLLIN | (edge ? EPOLLET : 0), &cs[i])) < 0)
            goto out;
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    uint64_t t0 = floor_now(), deadline = lim.ns ? t0 + lim.ns : 0;
    floor_watch watch = {0};
    for (uint64_t i = 0; i < nconns; i++)
        if (start(&cs[i]) < 0)
            goto out;
    uint64_t inflight = issued;
    struct epoll_event evs[256];
    while (inflight) {
        int n = floor_wait(epfd, evs, 256, poll_ns);
        if (n < 0) {
            perror(PROG ": epoll_wait");
            goto out;
        }
        for (int i = 0; i < n; i++) {
            conn *c = evs[i].data.ptr;
            if ((evs[i].events & EPOLLOUT) && c->busy && c->sent < req_len && send_rest(c) < 0)
                goto out;
            if ((evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) && readable(c) < 0)
                goto out;
        }
        uint64_t now = floor_now();
        if (floor_watch_check(PROG, &watch, done, issued - done, now) < 0)
            goto out;
        if (deadline && now >= deadline)
            stopping = 1;
        inflight = issued - done;
    }
    uint64_t t1 = floor_now();
    getrusage(RUSAGE_SELF, &r1);
    char extra[128];
    snprintf(extra, sizeof extra, "status %u response_bytes %llu mode %s poll_ns %llu",
             ref_status, (unsigned long long)ref_len, edge ? "edge" : "level",
             (unsigned long long)poll_ns);
    floor_report(PROG, done, nconns, t0, t1, &r0, &r1, extra);
    status = 0;
out:
    if (cs)
        for (uint64_t i = 0; i < nconns; i++)
            if (cs[i].fd >= 0)
                close(cs[i].fd);
    free(cs);
    free(file);
    if (epfd >= 0)
        close(epfd);
    return status;
}
