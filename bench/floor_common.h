/* bench/floor_common.h -- what the floor clients (bench/floor_h1,
 * bench/floor_h2) share: their command line's numbers, a connected
 * non-blocking socket, a monotonic clock, the file holding the bytes they
 * send, and the final report of their own CPU per request.
 *
 * The floor clients are not part of yangblast: they move the bytes a
 * benchmark's peer moves with as few system calls and as little user-space
 * work as they can while still checking each answer, so that bench/floor.sh
 * shows what a request costs the client's kernel alone on this machine. */
#ifndef YB_BENCH_FLOOR_COMMON_H
#define YB_BENCH_FLOOR_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

/* What the run stops at: a number of requests (count > 0), or a duration
 * (ns > 0) after which no new request starts and the ones in flight finish. */
typedef struct {
    uint64_t count;
    uint64_t ns;
} floor_limit;

/* Parses the command line's host, port, connection count and
 * "COUNT|DURATION" (a bare integer is a request count; a number with a
 * unit, e.g. 5s or 500ms, a duration).  Prints what is wrong (prefixed
 * with prog) and returns -1, or 0. */
int floor_parse_common(const char *prog, const char *port, const char *conns,
                       const char *limit, uint64_t max_conns, uint16_t *port_out,
                       uint64_t *conns_out, floor_limit *lim);

/* Reads the whole file path (at most max bytes, at least 1) into a malloc'd
 * buffer the caller frees.  Returns it with *len set, or NULL after saying
 * why on stderr. */
uint8_t *floor_read_file(const char *prog, const char *path, size_t max, size_t *len);

/* Connects to host:port (numeric IPv4 or IPv6 address; blocking connect),
 * sets TCP_NODELAY and O_NONBLOCK and adds the socket to epfd for events
 * with ptr.  Returns the socket, or -1 after saying why on stderr (the
 * socket closed). */
int floor_connect(const char *prog, const char *host, uint16_t port, int epfd,
                  uint32_t events, void *ptr);

struct epoll_event;
/* epoll_wait on epfd for up to max events: first polls (no wait) for up to
 * poll_ns, then sleeps up to 1 s.  Polling before sleeping spares the
 * wake-up (a context switch each) when the next answer is that close,
 * as yangblast's worker does.  Returns the events' count (0 also on EINTR),
 * or -1 with errno set. */
int floor_wait(int epfd, struct epoll_event *evs, int max, uint64_t poll_ns);

/* Parses -p's poll window (a duration up to 1 s).  Returns 0, or -1 after
 * saying why. */
int floor_parse_poll(const char *prog, const char *s, uint64_t *ns);

/* CLOCK_MONOTONIC in ns. */
uint64_t floor_now(void);

/* A run's progress: answers seen and when the count last moved. */
typedef struct {
    uint64_t done, at;
} floor_watch;
/* After a pass of the event loop at now with done answers and inflight
 * requests: returns 0, or -1 after saying so on stderr when no answer came
 * for 10 s (a server that stopped answering ends the run). */
int floor_watch_check(const char *prog, floor_watch *w, uint64_t done, uint64_t inflight,
                      uint64_t now);

/* Prints prog's one-line summary: requests, seconds, user and system CPU
 * seconds between the two rusages and the CPU us per request, then extra
 * (already formatted, may be ""). */
void floor_report(const char *prog, uint64_t requests, uint64_t conns, uint64_t t0,
                  uint64_t t1, const struct rusage *r0, const struct rusage *r1,
                  const char *extra);

#endif
