/* bench/floor_common.c -- see floor_common.h. */
#include "config.h"
#include "floor_common.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int floor_parse_common(const char *prog, const char *port, const char *conns,
                       const char *limit, uint64_t max_conns, uint16_t *port_out,
                       uint64_t *conns_out, floor_limit *lim)
{
    uint64_t v;
    if (yb_parse_u64(port, 1, 65535, &v) < 0) {
        fprintf(stderr, "%s: port '%s': an integer 1..65535\n", prog, port);
        return -1;
    }
    *port_out = (uint16_t)v;
    if (yb_parse_u64(conns, 1, max_conns, conns_out) < 0) {
        fprintf(stderr, "%s: connections '%s': an integer 1..%llu\n", prog, conns,
                (unsigned long long)max_conns);
        return -1;
    }
    lim->count = lim->ns = 0;
    size_t n = strlen(limit);
    if (n && limit[n - 1] >= '0' && limit[n - 1] <= '9') {
        if (yb_parse_u64(limit, 1, UINT64_MAX / 2, &lim->count) < 0) {
            fprintf(stderr, "%s: request count '%s': an integer >= 1\n", prog, limit);
            return -1;
        }
    } else if (yb_parse_duration(limit, &lim->ns) < 0 || !lim->ns) {
        fprintf(stderr, "%s: '%s': a request count (integer) or %s\n", prog, limit,
                YB_FORMS_DURATION);
        return -1;
    }
    return 0;
}

uint8_t *floor_read_file(const char *prog, const char *path, size_t max, size_t *len)
{
    uint8_t *buf = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
        goto fail;
    }
    if (!S_ISREG(st.st_mode) || st.st_size < 1 || (uint64_t)st.st_size > max) {
        fprintf(stderr, "%s: %s: a regular file of 1..%zu bytes, not %lld\n", prog, path, max,
                (long long)st.st_size);
        goto fail;
    }
    *len = (size_t)st.st_size;
    if (!(buf = malloc(*len))) {
        fprintf(stderr, "%s: %s: out of memory\n", prog, path);
        goto fail;
    }
    for (size_t got = 0; got < *len;) {
        ssize_t r = read(fd, buf + got, *len - got);
        if (r <= 0) {
            fprintf(stderr, "%s: %s: %s\n", prog, path, r ? strerror(errno) : "shrank while read");
            goto fail;
        }
        got += (size_t)r;
    }
    close(fd);
    return buf;
fail:
    free(buf);
    if (fd >= 0)
        close(fd);
    return NULL;
}

int floor_connect(const char *prog, const char *host, uint16_t port, int epfd,
                  uint32_t events, void *ptr)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    char ps[8];
    snprintf(ps, sizeof ps, "%u", (unsigned)port);
    int rc = getaddrinfo(host, ps, &hints, &ai);
    if (rc) {
        fprintf(stderr, "%s: host '%s': a numeric IPv4 or IPv6 address (%s)\n", prog, host,
                gai_strerror(rc));
        return -1;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    struct epoll_event ev = {.events = events, .data.ptr = ptr};
    if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0 ||
        fcntl(fd, F_SETFL, O_NONBLOCK) < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        fprintf(stderr, "%s: connect to %s port %u: %s\n", prog, host, (unsigned)port,
                strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    return fd;
}

int floor_wait(int epfd, struct epoll_event *evs, int max, uint64_t poll_ns)
{
    int n;
    if (poll_ns) {
        uint64_t end = floor_now() + poll_ns;
        do {
            if ((n = epoll_wait(epfd, evs, max, 0)) != 0)
                return n < 0 && errno == EINTR ? 0 : n;
        } while (floor_now() < end);
    }
    n = epoll_wait(epfd, evs, max, 1000);
    return n < 0 && errno == EINTR ? 0 : n;
}

int floor_parse_poll(const char *prog, const char *s, uint64_t *ns)
{
    if (yb_parse_duration(s, ns) < 0 || *ns > 1000000000u) {
        fprintf(stderr, "%s: -p '%s': %s, at most 1s\n", prog, s, YB_FORMS_DURATION);
        return -1;
    }
    return 0;
}

uint64_t floor_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int floor_watch_check(const char *prog, floor_watch *w, uint64_t done, uint64_t inflight,
                      uint64_t now)
{
    if (done != w->done || !w->at) {
        w->done = done;
        w->at = now;
        return 0;
    }
    if (now - w->at <= 10000000000u)
        return 0;
    fprintf(stderr, "%s: no answer for 10 s (%llu in flight)\n", prog,
            (unsigned long long)inflight);
    return -1;
}

static double tv_s(const struct timeval *a, const struct timeval *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_usec - a->tv_usec) / 1e6;
}

void floor_report(const char *prog, uint64_t requests, uint64_t conns, uint64_t t0,
                  uint64_t t1, const struct rusage *r0, const struct rusage *r1,
                  const char *extra)
{
    double us = tv_s(&r0->ru_utime, &r1->ru_utime), sy = tv_s(&r0->ru_stime, &r1->ru_stime);
    printf("%s: requests %llu conns %llu seconds %.3f user_s %.4f sys_s %.4f us_per_request %.3f%s%s\n",
           prog, (unsigned long long)requests, (unsigned long long)conns, (double)(t1 - t0) / 1e9,
           us, sy, requests ? (us + sy) * 1e6 / (double)requests : 0.0, *extra ? " " : "", extra);
}
