/* What the template compiler (tmpl/tmpl.h) and the chain-step value picker
 * (tmpl/pick.h) share, so that neither needs the other's code: the cap on a
 * placeholder's inner text, the key a placeholder is known by, and a value
 * taken from the previous step's response. */
#ifndef YB_TMPL_KEY_H
#define YB_TMPL_KEY_H

#include <stddef.h>
#include <stdint.h>

/* Bytes inside one placeholder's braces. */
#define YB_TMPL_MAX_INNER 4096

/* A value taken from the previous step's response ({{prev....}},
 * tmpl/pick.h): key is the placeholder's (yb_tmpl_key of its text). */
typedef struct {
    uint64_t key;
    const uint8_t *p;
    size_t n;
} yb_tmpl_got;

/* Returns the key of a placeholder's inner text in[0..n) (FNV-1a, 64 bits):
 * what yb_tmpl_got.key matches. */
static inline uint64_t yb_tmpl_key(const void *in, size_t n)
{
    const uint8_t *p = in;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

#endif
