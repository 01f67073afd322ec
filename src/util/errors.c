#include "config.h"
#include "util/errors.h"

#include <uv.h>

static const char *const NAMES[YB_ERR__COUNT] = {
    "none", "refused", "connect_timeout", "tls", "reset", "closed",
    "timeout", "protocol", "too_large", "status", "backlog_overflow", "other",
};

const char *yb_err_name(yb_err_class c)
{
    return (unsigned)c < YB_ERR__COUNT ? NAMES[c] : "other";
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
