/* Protobuf's base-128 varint (unsigned), written: the one writer for the
 * corpus format's entries, templates' length fields and gNMI message
 * heads made by hand. */
#ifndef YB_UTIL_VARINT_H
#define YB_UTIL_VARINT_H

#include <stddef.h>
#include <stdint.h>

/* Returns how many bytes v takes as a varint (1..10). */
static inline size_t yb_varint_len(uint64_t v)
{
    size_t n = 1;
    for (; v >= 0x80; v >>= 7)
        n++;
    return n;
}

/* Writes v as a varint at p (room for yb_varint_len(v) bytes).  Returns
 * the bytes written. */
static inline size_t yb_varint_put(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        p[n++] = (uint8_t)(v | 0x80);
    p[n++] = (uint8_t)v;
    return n;
}

#endif
