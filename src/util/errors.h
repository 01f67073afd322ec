/* Per-request error classes: the shared vocabulary between the transport
 * and codecs (which detect errors), the engine (which attributes them to a
 * request) and the recorder/report (which count them). */
#ifndef YB_ERRORS_H
#define YB_ERRORS_H

#include <stddef.h>
#include <stdint.h>

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
    YB_ERR_STATUS,          /* response arrived but carries an error status (not < 400 / gRPC != OK, nor accepted) */
    YB_ERR_UNEXPECTED,      /* --expect original: the status differs from the recorded one */
    YB_ERR_OVERFLOW,        /* open loop: fell due while the backlog was full (never sent) */
    YB_ERR_OTHER,           /* anything else (DNS, ENOMEM, ...) */
    YB_ERR__COUNT
} yb_err_class;

/* Returns a static snake_case name ("refused", "connect_timeout", ...). */
const char *yb_err_name(yb_err_class c);
/* Maps a negative libuv error code to a class. */
yb_err_class yb_err_from_uv(int uv_status);
/* Returns gRPC status code's static name ("INVALID_ARGUMENT"), or NULL
 * outside 0..16. */
const char *yb_grpc_name(int code);

/* ---- reasons -------------------------------------------------------------
 * Besides its class, a failed request carries a reason: one line of text
 * saying what went wrong and where ("tls: certificate verify failed:
 * self-signed certificate (127.0.0.1:8443)", "http 409", "grpc 3
 * INVALID_ARGUMENT: <grpc-message>", "timeout after 30s (waiting for first
 * byte)").  Reasons live in fixed buffers of YB_REASON_MAX bytes (on the
 * exchange, the session), so attributing one never allocates.  Every
 * reason written through these helpers is printable: control characters
 * and invalid UTF-8 become '?', and it is cut (at a character boundary)
 * to fit. */
#define YB_REASON_MAX 160

/* Formats a reason into buf[len] (printf-style, then sanitized as above).
 * Returns buf. */
const char *yb_reason_fmt(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends the n bytes at src (untrusted: a grpc-message, a body) to the
 * NUL-terminated text in buf[len], sanitized; stops at the first NUL or
 * when buf is full.  Returns the length of buf's text. */
size_t yb_reason_append(char *buf, size_t len, const uint8_t *src, size_t n);
/* Appends the percent-decoded n bytes at src (gRPC's grpc-message
 * encoding: %XX escapes; a malformed escape is kept as it is), sanitized.
 * Returns the length of buf's text. */
size_t yb_reason_append_pct(char *buf, size_t len, const uint8_t *src, size_t n);
/* Writes a duration compactly: "30s", "250ms", "1.5s", "2m30s", "12us".
 * Returns buf. */
const char *yb_reason_duration(char *buf, size_t len, uint64_t ns);

#endif
