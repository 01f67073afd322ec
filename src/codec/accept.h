/* Which replies count as success: the one place that tells an ok reply
 * from a status error or a mismatch with the recorded status.  The policy
 * is per run (--accept, --accept-grpc, --expect original) and travels in
 * the codec settings; the record's own expected status comes with each
 * prepared request. */
#ifndef YB_ACCEPT_H
#define YB_ACCEPT_H

#include <stddef.h>
#include <stdint.h>
#include "util/errors.h"

/* All zero is the default: HTTP statuses below 400 and gRPC OK succeed,
 * recorded statuses are not consulted. */
typedef struct {
    uint8_t http[125]; /* bit s: HTTP status s (100..999) succeeds too */
    uint32_t grpc;     /* bit g: gRPC code g (0..16) succeeds too */
    int original;      /* --expect original: a record's recorded status is
                        * the one expected (an accepted one also passes) */
} yb_accept;

/* Adds the comma-separated list of codes at list to a's HTTP statuses
 * (grpc = 0: each 100..999) or gRPC codes (grpc = 1: each 0..16).
 * Returns 0, or -1 when an entry is not such a code (a may then hold the
 * entries before it). */
int yb_accept_add(yb_accept *a, int grpc, const char *list);

/* Adds n codes v[] (HTTP statuses 100..999 with grpc = 0, gRPC codes
 * 0..16 with grpc = 1; others are skipped) to a: a record's own list. */
void yb_accept_add_codes(yb_accept *a, int grpc, const uint16_t *v, size_t n);

/* Judges an HTTP reply of status to a request whose recorded status is
 * expected (0 = none), under the run's policy a and the record's own
 * accepted statuses rec (NULL = none; its `original` is not consulted).
 * Returns YB_ERR_NONE; YB_ERR_STATUS with reason "http 409"; or
 * YB_ERR_UNEXPECTED with reason "expected 201, got 409" (reason: len
 * bytes, written only for an error). */
yb_err_class yb_accept_http(const yb_accept *a, const yb_accept *rec, uint32_t expected,
                            int status, char *reason, size_t len);

/* Judges a gRPC call that ended with code, whose recorded code is
 * expected (-1 = none), as above.  Returns YB_ERR_NONE, YB_ERR_STATUS or
 * YB_ERR_UNEXPECTED (the codec writes the reason: it has the message). */
yb_err_class yb_accept_grpc(const yb_accept *a, const yb_accept *rec, int32_t expected, int code);

/* Every code a policy can list (900 HTTP statuses, 17 gRPC codes). */
#define YB_ACCEPT_MAX_CODES 900

/* Writes the accepted HTTP statuses (grpc = 0) or gRPC codes (grpc = 1)
 * of a in ascending order into out[cap].  Returns how many there are
 * (at most cap written). */
size_t yb_accept_codes(const yb_accept *a, int grpc, int *out, size_t cap);

#endif
