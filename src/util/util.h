/* Small bounded helpers shared by every module: number and duration
 * parsing (no atoi), base64 through OpenSSL, UTF-8 checks. */
#ifndef YB_UTIL_H
#define YB_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Parses a decimal unsigned integer in [min, max] (the whole string).
 * Returns 0 and sets *out, or -1. */
int yb_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* Parses a non-negative decimal number (the whole string, e.g. "2.5").
 * Returns 0 and sets *out, or -1. */
int yb_parse_double(const char *s, double *out);
/* This is the one parser of numbers in option values and specs; the
 * YB_FORMS_* strings say what each accepts, for error messages. */
#define YB_FORMS_DURATION                                                           \
    "a duration (a number with a unit h, m, s, ms, us or ns, e.g. 250ms, 2h, or " \
    "several, e.g. 1m30s; a bare number is seconds)"
#define YB_FORMS_SIZE "a size in bytes (an integer, optionally with k, M or G: powers of 1024)"
#define YB_FORMS_RATE "a rate per second (a number, optionally with k: x1000, e.g. 500, 2k, 1.5k)"

/* Parses a duration: a number with unit ns|us|ms|s|m|h, or several of
 * them added up ("1m30s", "1h2m"); a bare number is seconds.  Numbers are
 * decimal, optionally with a fraction ("1.5s"); no sign or exponent.
 * Returns 0 and sets *ns, or -1. */
int yb_parse_duration(const char *s, uint64_t *ns);
/* Parses a size: a decimal integer with an optional k|K, m|M, g|G suffix
 * (powers of 1024), within [min, max] bytes.  Returns 0 and sets *out, or
 * -1. */
int yb_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* Parses a rate (per second): a non-negative decimal number with an
 * optional k|K suffix (x1000), at most 1e8.  Returns 0 and sets *out, or -1. */
int yb_parse_rate(const char *s, double *out);

/* The same for the len bytes at s (not NUL-terminated, e.g. a piece of a
 * larger spec).  Returns 0 and sets *out, or -1. */
int yb_parse_duration_n(const char *s, size_t len, uint64_t *ns);
int yb_parse_u64_n(const char *s, size_t len, uint64_t min, uint64_t max, uint64_t *out);
int yb_parse_double_n(const char *s, size_t len, double *out);
int yb_parse_rate_n(const char *s, size_t len, double *out);

struct sockaddr_storage;
/* Parses a listen address "ADDR:PORT", ":PORT" (loopback, 127.0.0.1) or
 * "[v6]:PORT" (numeric addresses; port 0..65535, 0 = any free port) into
 * *ss.  Returns 0, or -1 when s is none of these. */
int yb_parse_listen(const char *s, struct sockaddr_storage *ss);

/* Reads the machine's CPU ticks so far and the hypervisor's steal among
 * them (the first line of /proc/stat).  Returns 0, or -1 when unknown. */
int yb_cpu_ticks(uint64_t *total, uint64_t *steal);

/* Returns the value of hex digit c (0..15), or -1. */
int yb_hexval(int c);

/* Returns malloc'd NUL-terminated base64 of buf (caller frees) or NULL. */
char *yb_base64_encode(const void *buf, size_t len);
/* Decodes base64 text (no whitespace); returns 0 and a malloc'd buffer in
 * out and outlen (caller frees; NULL when empty), or -1 on bad input. */
int yb_base64_decode(const char *s, size_t slen, uint8_t **out, size_t *outlen);

/* Returns 1 when buf is valid UTF-8 without NUL bytes, else 0. */
int yb_utf8_valid(const uint8_t *buf, size_t len);

/* Open files for a process that needs `want` descriptors: raises the soft
 * RLIMIT_NOFILE to the hard limit when it is below want.  Returns the
 * soft limit in force afterwards (UINT64_MAX when unlimited) and the hard
 * limit in *hard (UINT64_MAX when unlimited); 0 when unknown. */
uint64_t yb_nofile_raise(uint64_t want, uint64_t *hard);

#endif
