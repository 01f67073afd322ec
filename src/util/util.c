#include "config.h"
#include "util/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include <sys/resource.h>

int yb_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    /* digits only: strtoull would skip any leading white space (a tab, a
     * form feed) and take a sign */
    if (!s || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Scans an unsigned decimal number (digits, optionally "." and digits; no
 * sign, exponent, hex or spaces) at s.  Returns its length (0 when there
 * is none) and sets *v. */
static size_t scan_decimal(const char *s, double *v)
{
    size_t n = 0, digits = 0;
    while (s[n] >= '0' && s[n] <= '9')
        n++, digits++;
    if (s[n] == '.') {
        n++;
        while (s[n] >= '0' && s[n] <= '9')
            n++, digits++;
    }
    if (!digits || n > 40)
        return 0;
    char buf[48];
    memcpy(buf, s, n);
    buf[n] = 0;
    *v = strtod(buf, NULL);
    return isfinite(*v) ? n : 0;
}

int yb_parse_double(const char *s, double *out)
{
    double v;
    size_t n = s ? scan_decimal(s, &v) : 0;
    if (!n || s[n])
        return -1;
    *out = v;
    return 0;
}

int yb_parse_duration(const char *s, uint64_t *ns)
{
    static const struct { const char *unit; double mult; } UNITS[] = {
        /* longest first: "ms" before "m" */
        {"ms", 1e6}, {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"ns", 1}, {"h", 3600e9}, {"m", 60e9},
        {"s", 1e9},
    };
    if (!s || !*s)
        return -1;
    double total = 0, v;
    size_t n = scan_decimal(s, &v);
    if (n && !s[n]) { /* a bare number: seconds */
        total = v * 1e9;
    } else {
        while (*s) {
            if (!(n = scan_decimal(s, &v)))
                return -1;
            s += n;
            size_t u = 0;
            while (u < sizeof UNITS / sizeof UNITS[0] && strncmp(s, UNITS[u].unit,
                                                                  strlen(UNITS[u].unit)))
                u++;
            if (u == sizeof UNITS / sizeof UNITS[0])
                return -1;
            s += strlen(UNITS[u].unit);
            total += v * UNITS[u].mult;
        }
    }
    if (total > 1e18)
        return -1;
    *ns = (uint64_t)llround(total);
    return 0;
}

int yb_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    char num[32];
    size_t n = s ? strlen(s) : 0;
    uint64_t mult = 1, v;
    if (n == 0 || n >= sizeof num)
        return -1;
    memcpy(num, s, n + 1);
    switch (num[n - 1]) {
    case 'k': case 'K': mult = 1ull << 10; break;
    case 'm': case 'M': mult = 1ull << 20; break;
    case 'g': case 'G': mult = 1ull << 30; break;
    default: break;
    }
    if (mult > 1)
        num[n - 1] = 0;
    if (yb_parse_u64(num, 0, UINT64_MAX / mult, &v) < 0 || v * mult < min || v * mult > max)
        return -1;
    *out = v * mult;
    return 0;
}

int yb_parse_rate(const char *s, double *out)
{
    double v;
    size_t n = s ? scan_decimal(s, &v) : 0;
    if (!n)
        return -1;
    if (s[n] == 'k' || s[n] == 'K') {
        v *= 1000;
        n++;
    }
    if (s[n] || v > 1e8)
        return -1;
    *out = v;
    return 0;
}

/* Copies s[0..len) to a terminated buffer for the parsers above. */
static int terminated(const char *s, size_t len, char *buf, size_t cap)
{
    if (len == 0 || len >= cap)
        return -1;
    memcpy(buf, s, len);
    buf[len] = 0;
    return 0;
}

int yb_parse_duration_n(const char *s, size_t len, uint64_t *ns)
{
    char buf[64];
    return terminated(s, len, buf, sizeof buf) < 0 ? -1 : yb_parse_duration(buf, ns);
}

int yb_parse_u64_n(const char *s, size_t len, uint64_t min, uint64_t max, uint64_t *out)
{
    char buf[64];
    return terminated(s, len, buf, sizeof buf) < 0 ? -1 : yb_parse_u64(buf, min, max, out);
}

int yb_parse_double_n(const char *s, size_t len, double *out)
{
    char buf[64];
    return terminated(s, len, buf, sizeof buf) < 0 ? -1 : yb_parse_double(buf, out);
}

int yb_parse_rate_n(const char *s, size_t len, double *out)
{
    char buf[64];
    return terminated(s, len, buf, sizeof buf) < 0 ? -1 : yb_parse_rate(buf, out);
}

int yb_hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

char *yb_base64_encode(const void *buf, size_t len)
{
    if (len > (size_t)INT32_MAX / 2)
        return NULL;
    char *out = malloc(4 * ((len + 2) / 3) + 1);
    if (!out)
        return NULL;
    EVP_EncodeBlock((unsigned char *)out, buf, (int)len);
    return out;
}

int yb_base64_decode(const char *s, size_t slen, uint8_t **out, size_t *outlen)
{
    *out = NULL;
    *outlen = 0;
    if (slen % 4 || slen > (size_t)INT32_MAX)
        return -1;
    if (slen == 0)
        return 0;
    for (size_t i = 0; i < slen; i++) {
        char c = s[i];
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '+' || c == '/' || (c == '=' && i >= slen - 2);
        if (!ok)
            return -1;
    }
    if (s[slen - 2] == '=' && s[slen - 1] != '=')
        return -1;
    uint8_t *b = malloc(slen / 4 * 3 + 1);
    if (!b)
        return -1;
    int n = EVP_DecodeBlock(b, (const unsigned char *)s, (int)slen);
    if (n < 0) {
        free(b);
        return -1;
    }
    size_t pad = (s[slen - 1] == '=') + (s[slen - 2] == '=');
    *out = b;
    *outlen = (size_t)n - pad;
    return 0;
}

int yb_utf8_valid(const uint8_t *p, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint8_t c = p[i];
        if (c == 0)
            return 0;
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint32_t cp;
        if ((c & 0xe0) == 0xc0) {
            n = 1;
            cp = c & 0x1f;
        } else if ((c & 0xf0) == 0xe0) {
            n = 2;
            cp = c & 0x0f;
        } else if ((c & 0xf8) == 0xf0) {
            n = 3;
            cp = c & 0x07;
        } else {
            return 0;
        }
        for (size_t k = 1; k <= n; k++) {
            if (i + k >= len || (p[i + k] & 0xc0) != 0x80)
                return 0;
            cp = (cp << 6) | (p[i + k] & 0x3f);
        }
        if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        i += n + 1;
    }
    return 1;
}

int yb_parse_listen(const char *s, struct sockaddr_storage *ss)
{
    char host[64];
    const char *port;
    if (s[0] == '[') {
        const char *e = strchr(s, ']');
        if (!e || e[1] != ':' || (size_t)(e - s - 1) >= sizeof host)
            return -1;
        memcpy(host, s + 1, (size_t)(e - s - 1));
        host[e - s - 1] = 0;
        port = e + 2;
    } else {
        const char *c = strrchr(s, ':');
        if (!c || (size_t)(c - s) >= sizeof host || memchr(s, ':', (size_t)(c - s)))
            return -1;
        memcpy(host, s, (size_t)(c - s));
        host[c - s] = 0;
        if (!host[0])
            memcpy(host, "127.0.0.1", 10);
        port = c + 1;
    }
    uint64_t p;
    if (yb_parse_u64(port, 0, 65535, &p) < 0)
        return -1;
    memset(ss, 0, sizeof *ss);
    if (strchr(host, ':')) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)p);
        return inet_pton(AF_INET6, host, &a->sin6_addr) == 1 ? 0 : -1;
    }
    struct sockaddr_in *a = (struct sockaddr_in *)ss;
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)p);
    return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : -1;
}

int yb_cpu_ticks(uint64_t *total, uint64_t *steal)
{
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n < 8)
        return -1;
    *total = 0;
    for (int i = 0; i < 8; i++)
        *total += v[i];
    *steal = v[7];
    return 0;
}

static uint64_t rlim_u64(rlim_t v)
{
    return v == RLIM_INFINITY ? UINT64_MAX : (uint64_t)v;
}

uint64_t yb_nofile_raise(uint64_t want, uint64_t *hard)
{
    struct rlimit rl;
    *hard = 0;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return 0;
    *hard = rlim_u64(rl.rlim_max);
    if (rlim_u64(rl.rlim_cur) >= want)
        return rlim_u64(rl.rlim_cur);
    struct rlimit raised = rl;
    raised.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
        rl.rlim_cur = rl.rlim_max;
    return rlim_u64(rl.rlim_cur);
}
