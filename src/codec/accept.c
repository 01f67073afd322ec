/* Which replies count as success (see accept.h). */
#include "config.h"
#include "codec/accept.h"
#include "util/util.h"

#include <string.h>

int yb_accept_add(yb_accept *a, int grpc, const char *list)
{
    if (!list || !*list)
        return -1;
    for (const char *p = list;;) {
        size_t n = strcspn(p, ",");
        uint64_t v;
        if (yb_parse_u64_n(p, n, grpc ? 0 : 100, grpc ? 16 : 999, &v) < 0)
            return -1;
        if (grpc)
            a->grpc |= 1u << v;
        else
            a->http[v / 8] |= (uint8_t)(1u << (v % 8));
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

void yb_accept_add_codes(yb_accept *a, int grpc, const uint16_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (grpc && v[i] <= 16)
            a->grpc |= 1u << v[i];
        else if (!grpc && v[i] >= 100 && v[i] <= 999)
            a->http[v[i] / 8] |= (uint8_t)(1u << (v[i] % 8));
    }
}

static int http_listed(const yb_accept *a, int status)
{
    return a && status >= 100 && status <= 999 && (a->http[status / 8] >> (status % 8) & 1);
}

static int grpc_listed(const yb_accept *a, int code)
{
    return a && code >= 0 && code <= 16 && (a->grpc >> code & 1);
}

yb_err_class yb_accept_http(const yb_accept *a, const yb_accept *rec, uint32_t expected,
                            int status, char *reason, size_t len)
{
    int listed = http_listed(a, status) || http_listed(rec, status);
    if (a->original && expected) {
        if ((uint32_t)status == expected || listed)
            return YB_ERR_NONE;
        yb_reason_fmt(reason, len, "expected %u, got %d", (unsigned)expected, status);
        return YB_ERR_UNEXPECTED;
    }
    if (status < 400 || listed)
        return YB_ERR_NONE;
    yb_reason_fmt(reason, len, "http %d", status);
    return YB_ERR_STATUS;
}

yb_err_class yb_accept_grpc(const yb_accept *a, const yb_accept *rec, int32_t expected, int code)
{
    int listed = grpc_listed(a, code) || grpc_listed(rec, code);
    if (a->original && expected >= 0)
        return code == expected || listed ? YB_ERR_NONE : YB_ERR_UNEXPECTED;
    return code == 0 || listed ? YB_ERR_NONE : YB_ERR_STATUS;
}

size_t yb_accept_codes(const yb_accept *a, int grpc, int *out, size_t cap)
{
    size_t n = 0;
    for (int v = grpc ? 0 : 100; v <= (grpc ? 16 : 999); v++)
        if (grpc ? grpc_listed(a, v) : http_listed(a, v)) {
            if (n < cap)
                out[n] = v;
            n++;
        }
    return n;
}
