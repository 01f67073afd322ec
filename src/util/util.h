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
/* Parses a duration: a number with unit ns|us|ms|s|m|h (bare number =
 * seconds), e.g. "500ms", "1.5s", "10".  Returns 0 and sets *ns, or -1. */
int yb_parse_duration(const char *s, uint64_t *ns);

/* The same for the len bytes at s (not NUL-terminated, e.g. a piece of a
 * larger spec).  Returns 0 and sets *out, or -1. */
int yb_parse_duration_n(const char *s, size_t len, uint64_t *ns);
int yb_parse_double_n(const char *s, size_t len, double *out);

/* Returns the value of hex digit c (0..15), or -1. */
int yb_hexval(int c);

/* Returns malloc'd NUL-terminated base64 of buf (caller frees) or NULL. */
char *yb_base64_encode(const void *buf, size_t len);
/* Decodes base64 text (no whitespace); returns 0 and a malloc'd buffer in
 * out and outlen (caller frees; NULL when empty), or -1 on bad input. */
int yb_base64_decode(const char *s, size_t slen, uint8_t **out, size_t *outlen);

/* Returns 1 when buf is valid UTF-8 without NUL bytes, else 0. */
int yb_utf8_valid(const uint8_t *buf, size_t len);

#endif
