#include "config.h"
#include "util/errors.h"
#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

static const char *const NAMES[YB_ERR__COUNT] = {
    "none", "refused", "connect_timeout", "tls", "reset", "closed",
    "timeout", "protocol", "too_large", "status", "unexpected", "backlog_overflow", "other",
};

const char *yb_err_name(yb_err_class c)
{
    return (unsigned)c < YB_ERR__COUNT ? NAMES[c] : "other";
}

static const char *const GRPC_NAMES[17] = {
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED",
};

const char *yb_grpc_name(int code)
{
    return code >= 0 && code < 17 ? GRPC_NAMES[code] : NULL;
}

yb_err_class yb_err_from_uv(int s)
{
    switch (s) {
    case 0: return YB_ERR_NONE;
    case UV_ECONNREFUSED: return YB_ERR_REFUSED;
    case UV_ETIMEDOUT: return YB_ERR_CONNECT_TIMEOUT;
    case UV_ECONNRESET:
    case UV_EPIPE:
    case UV_ECONNABORTED: return YB_ERR_RESET;
    case UV_EOF: return YB_ERR_CLOSED;
    case UV_EPROTO: return YB_ERR_PROTOCOL;
    default: return YB_ERR_OTHER;
    }
}

/* ---- reasons ----------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 when it is
 * not one (overlong, surrogate, beyond U+10FFFF, cut short) or when it is
 * a C1 control character. */
static size_t utf8_seq(const uint8_t *p, size_t n)
{
    uint8_t c = p[0];
    size_t len;
    uint32_t cp, min;
    if ((c & 0xe0) == 0xc0) {
        len = 2, cp = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        len = 3, cp = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
        len = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t k = 1; k < len; k++) {
        if ((p[k] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[k] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp < 0xa0)
        return 0;
    return len;
}

/* Appends src[0..n) to buf (holding `at` bytes of text), sanitized.
 * Returns the new length. */
static size_t append_clean(char *buf, size_t len, size_t at, const uint8_t *src, size_t n)
{
    size_t i = 0;
    while (i < n && src[i] && at + 1 < len) {
        uint8_t c = src[i];
        if (c >= 0x20 && c < 0x7f) {
            buf[at++] = (char)c;
            i++;
            continue;
        }
        size_t k = c >= 0x80 ? utf8_seq(src + i, n - i) : 0;
        if (k == 0) {
            /* whitespace controls read as a space; anything else as '?' */
            buf[at++] = c == '\t' || c == '\n' || c == '\r' ? ' ' : '?';
            i++;
            continue;
        }
        if (at + k >= len)
            break; /* never cut a character in two */
        memcpy(buf + at, src + i, k);
        at += k;
        i += k;
    }
    buf[at] = '\0';
    return at;
}

const char *yb_reason_fmt(char *buf, size_t len, const char *fmt, ...)
{
    char tmp[YB_REASON_MAX];
    va_list ap;

    if (!buf || !len)
        return buf;
    va_start(ap, fmt);
    if (vsnprintf(tmp, sizeof tmp, fmt, ap) < 0)
        tmp[0] = '\0';
    va_end(ap);
    append_clean(buf, len, 0, (const uint8_t *)tmp, strnlen(tmp, sizeof tmp));
    return buf;
}

size_t yb_reason_append(char *buf, size_t len, const uint8_t *src, size_t n)
{
    if (!buf || !len)
        return 0;
    size_t at = strnlen(buf, len - 1);
    return append_clean(buf, len, at, src, n);
}

size_t yb_reason_append_pct(char *buf, size_t len, const uint8_t *src, size_t n)
{
    /* Decoded a piece at a time, so a multi-byte character split over
     * escapes is checked whole. */
    uint8_t dec[YB_REASON_MAX];
    size_t m = 0, i = 0;
    if (!buf || !len)
        return 0;
    while (i < n && m < sizeof dec) {
        int hi, lo;
        if (src[i] == '%' && i + 2 < n &&
            (hi = yb_hexval(src[i + 1])) >= 0 && (lo = yb_hexval(src[i + 2])) >= 0) {
            dec[m++] = (uint8_t)(hi << 4 | lo);
            i += 3;
        } else {
            dec[m++] = src[i++];
        }
    }
    return yb_reason_append(buf, len, dec, m);
}

const char *yb_reason_duration(char *buf, size_t len, uint64_t ns)
{
    const uint64_t S = 1000000000ull;
    if (ns >= 60 * S && ns % S == 0) {
        uint64_t s = ns / S;
        if (s % 60)
            snprintf(buf, len, "%llum%llus", (unsigned long long)(s / 60),
                     (unsigned long long)(s % 60));
        else
            snprintf(buf, len, "%llum", (unsigned long long)(s / 60));
    } else if (ns >= S) {
        snprintf(buf, len, "%gs", (double)ns / 1e9);
    } else if (ns >= 1000000) {
        snprintf(buf, len, "%gms", (double)ns / 1e6);
    } else if (ns >= 1000) {
        snprintf(buf, len, "%gus", (double)ns / 1e3);
    } else {
        snprintf(buf, len, "%lluns", (unsigned long long)ns);
    }
    return buf;
}
