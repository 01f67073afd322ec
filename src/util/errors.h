/* Per-request error classes: the shared vocabulary between the transport
 * and codecs (which detect errors), the engine (which attributes them to a
 * request) and the recorder/report (which count them). */
#ifndef YB_ERRORS_H
#define YB_ERRORS_H

typedef enum {
    YB_ERR_NONE = 0,
    YB_ERR_REFUSED,         /* connection refused */
    YB_ERR_CONNECT_TIMEOUT, /* TCP connect (or TLS handshake) did not finish in time */
    YB_ERR_TLS,             /* handshake failure, certificate verification, bad record */
    YB_ERR_RESET,           /* connection reset / broken pipe */
    YB_ERR_CLOSED,          /* peer closed before the response was complete */
    YB_ERR_TIMEOUT,         /* request timed out (--timeout) */
    YB_ERR_PROTOCOL,        /* malformed response, HTTP/2 or gRPC framing error */
    YB_ERR_TOO_LARGE,       /* response over --max-body, or over the worker's memory budget */
    YB_ERR_STATUS,          /* response arrived but carries an error status (not 2xx / gRPC != OK) */
    YB_ERR_OVERFLOW,        /* open loop: fell due while the backlog was full (never sent) */
    YB_ERR_OTHER,           /* anything else (DNS, ENOMEM, ...) */
    YB_ERR__COUNT
} yb_err_class;

/* Returns a static snake_case name ("refused", "connect_timeout", ...). */
const char *yb_err_name(yb_err_class c);
/* Maps a negative libuv error code to a class. */
yb_err_class yb_err_from_uv(int uv_status);

#endif
