/* libFuzzer target: the HTTP/2 client's response path (h2_client.c): gRPC
 * framing, gNMI Set/Get/Capabilities responses, Subscribe decoding, driven
 * through the codec interface by a stub session (no sockets).
 *
 * Structure-aware: the input is a program of operations, each an opcode
 * byte and its operands, that builds valid HTTP/2 frames (headers through
 * an HPACK deflater kept in step with the client's inflater) or raw bytes
 * as the server's side, and drives the client (submit, cancel, finish,
 * flush, EOF).  So the fuzzer gets past the preface and SETTINGS and
 * spends its time on responses.  Oracles: stub_host.h. */
#include "config.h"
#include "gnmi/gnmi_msg.h"
#include "stub_host.h"

#include <nghttp2/nghttp2.h>
#include <stdint.h>

enum { K_SET, K_GET, K_CAP, K_SUB_ONCE, K_SUB_POLL, K_SUB_STREAM, K_PLAIN, K__N };
static yb_prepared prep[K__N];
static yb_codec_cfg cfg = {.authority = "127.0.0.1:9339", .scheme = "http",
                           .user = "admin", .password = "pw", .timeout_ns = 5000000000ull,
                           .max_body = 1 << 16, .streams = 8, .user_agent = "fuzz"};

/* One record: path, gRPC body made of the given messages. */
static void make(int k, yb_proto proto, const char *path, const ProtobufCMessage *const *m,
                 size_t nm)
{
    yb_request r;
    yb_request_init(&r);
    r.protocol = proto;
    if (yb_request_set_str(&r.method, "POST") || yb_request_set_str(&r.path, path))
        abort();
    uint8_t *body = NULL;
    size_t len = 0;
    for (size_t i = 0; i < nm; i++) {
        uint8_t *f;
        size_t fl;
        if (yb_grpc_frame(m[i], &f, &fl))
            abort();
        if (!(body = realloc(body, len + fl)))
            abort();
        memcpy(body + len, f, fl);
        len += fl;
        free(f);
    }
    yb_request_take_body(&r, body, len);
    if (yb_h2_client_ops.prepare(&cfg, &r, &prep[k]))
        abort();
    yb_request_cleanup(&r);
}

static void init(void)
{
    Gnmi__Path *p;
    if (yb_gnmi_path_parse("/acl/acl-sets/acl-set[name=A][type=ACL_IPV4]/config", &p))
        abort();
    Gnmi__TypedValue tv = GNMI__TYPED_VALUE__INIT;
    tv.value_case = GNMI__TYPED_VALUE__VALUE_JSON_IETF_VAL;
    tv.json_ietf_val.data = (uint8_t *)"{}";
    tv.json_ietf_val.len = 2;
    Gnmi__Update up = GNMI__UPDATE__INIT, *ups[1] = {&up};
    up.path = p;
    up.val = &tv;
    Gnmi__SetRequest set = GNMI__SET_REQUEST__INIT;
    set.n_update = 1;
    set.update = ups;
    Gnmi__GetRequest get = GNMI__GET_REQUEST__INIT;
    Gnmi__Path *gp[1] = {p};
    get.n_path = 1;
    get.path = gp;
    Gnmi__CapabilityRequest cap = GNMI__CAPABILITY_REQUEST__INIT;
    const ProtobufCMessage *m1[1] = {&set.base};
    make(K_SET, YB_PROTO_GNMI, "/gnmi.gNMI/Set", m1, 1);
    m1[0] = &get.base;
    make(K_GET, YB_PROTO_GNMI, "/gnmi.gNMI/Get", m1, 1);
    m1[0] = &cap.base;
    make(K_CAP, YB_PROTO_GNMI, "/gnmi.gNMI/Capabilities", m1, 1);
    Gnmi__Subscription sub = GNMI__SUBSCRIPTION__INIT, *subs[1] = {&sub};
    sub.path = p;
    Gnmi__SubscriptionList sl = GNMI__SUBSCRIPTION_LIST__INIT;
    sl.n_subscription = 1;
    sl.subscription = subs;
    Gnmi__SubscribeRequest sr = GNMI__SUBSCRIBE_REQUEST__INIT, poll = GNMI__SUBSCRIBE_REQUEST__INIT;
    sr.request_case = GNMI__SUBSCRIBE_REQUEST__REQUEST_SUBSCRIBE;
    sr.subscribe = &sl;
    Gnmi__Poll pl = GNMI__POLL__INIT;
    poll.request_case = GNMI__SUBSCRIBE_REQUEST__REQUEST_POLL;
    poll.poll = &pl;
    const ProtobufCMessage *m3[3] = {&sr.base, &poll.base, &poll.base};
    sl.mode = GNMI__SUBSCRIPTION_LIST__MODE__ONCE;
    make(K_SUB_ONCE, YB_PROTO_GNMI, "/gnmi.gNMI/Subscribe", m3, 1);
    sl.mode = GNMI__SUBSCRIPTION_LIST__MODE__POLL;
    make(K_SUB_POLL, YB_PROTO_GNMI, "/gnmi.gNMI/Subscribe", m3, 3);
    sl.mode = GNMI__SUBSCRIPTION_LIST__MODE__STREAM;
    make(K_SUB_STREAM, YB_PROTO_GNMI, "/gnmi.gNMI/Subscribe", m3, 1);
    make(K_PLAIN, YB_PROTO_HTTP2, "/other", NULL, 0);
    yb_gnmi_path_free(p);
}

/* ---- the input, read as operands ----------------------------------------- */

typedef struct {
    const uint8_t *d;
    size_t n, off;
} input;

static uint8_t byte(input *in)
{
    return in->off < in->n ? in->d[in->off++] : 0;
}

static uint32_t u32(input *in)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 8 | byte(in);
    return v;
}

/* Up to len input bytes (fewer at the end); returns how many. */
static size_t take(input *in, size_t len, const uint8_t **p)
{
    if (len > in->n - in->off)
        len = in->n - in->off;
    *p = in->d + in->off;
    in->off += len;
    return len;
}

/* ---- frames ---------------------------------------------------------------- */

static uint8_t fr[1 << 17];

static size_t frame_head(uint8_t *b, size_t len, uint8_t type, uint8_t flags, uint32_t sid)
{
    b[0] = (uint8_t)(len >> 16);
    b[1] = (uint8_t)(len >> 8);
    b[2] = (uint8_t)len;
    b[3] = type;
    b[4] = flags;
    b[5] = (uint8_t)(sid >> 24 & 0x7f);
    b[6] = (uint8_t)(sid >> 16);
    b[7] = (uint8_t)(sid >> 8);
    b[8] = (uint8_t)sid;
    return 9 + len;
}

#define NV(n, v) {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE}

/* A HEADERS frame with the response headers or trailers chosen by in. */
static size_t headers(input *in, nghttp2_hd_deflater *hd, uint32_t sid, int trailers)
{
    static const char *const status[] = {"200", "200", "404", "500", "503", "100", "204", "2x"};
    static const char *const ctype[] = {"application/grpc", "application/grpc+proto",
                                        "text/html", NULL};
    static const char *const gs[] = {"0", "0", "1", "2", "3", "5", "8", "13", "14", "16", "17",
                                     "abc", "-1", "99999999999"};
    uint8_t sel = byte(in);
    char msg[32];
    const uint8_t *mp;
    size_t ml = take(in, byte(in) % 24, &mp);
    memcpy(msg, mp, ml);
    msg[ml] = 0;
    for (size_t i = 0; i < ml; i++)
        if (!msg[i])
            msg[i] = ' ';
    nghttp2_nv nv[4];
    size_t n = 0;
    if (!trailers) {
        nv[n++] = (nghttp2_nv)NV(":status", status[sel & 7]);
        if (ctype[(sel >> 3) & 3])
            nv[n++] = (nghttp2_nv)NV("content-type", ctype[(sel >> 3) & 3]);
    }
    if (trailers || (sel & 0x20)) { /* trailers, or a trailers-only response */
        const char *g = gs[byte(in) % (sizeof gs / sizeof gs[0])]; /* NV reads v twice */
        nv[n++] = (nghttp2_nv)NV("grpc-status", g);
        if (ml)
            nv[n++] = (nghttp2_nv)NV("grpc-message", msg);
    }
    ssize_t len = nghttp2_hd_deflate_hd(hd, fr + 9, sizeof fr - 9, nv, n);
    if (len < 0)
        return 0;
    uint8_t flags = NGHTTP2_FLAG_END_HEADERS;
    if (trailers || (sel & 0x40))
        flags |= NGHTTP2_FLAG_END_STREAM;
    return frame_head(fr, (size_t)len, NGHTTP2_HEADERS, flags, sid);
}

/* A DATA frame: gRPC messages (prefix + input bytes) or raw input bytes. */
static size_t data(input *in, uint32_t sid)
{
    uint8_t sel = byte(in);
    size_t len = byte(in) | (size_t)(sel & 3) << 8, off = 9;
    const uint8_t *p;
    if (sel & 4) { /* a gRPC message of len bytes, its prefix possibly lying */
        uint32_t claim = sel & 8 ? (uint32_t)len : u32(in);
        fr[off++] = sel & 16 ? 1 : 0; /* compressed flag */
        fr[off++] = (uint8_t)(claim >> 24);
        fr[off++] = (uint8_t)(claim >> 16);
        fr[off++] = (uint8_t)(claim >> 8);
        fr[off++] = (uint8_t)claim;
    }
    len = take(in, len, &p);
    memcpy(fr + off, p, len);
    off += len;
    return frame_head(fr, off - 9, NGHTTP2_DATA, sel & 32 ? NGHTTP2_FLAG_END_STREAM : 0, sid);
}

static size_t simple(uint8_t type, uint8_t flags, uint32_t sid, const uint8_t *p, size_t len)
{
    memcpy(fr + 9, p, len);
    return frame_head(fr, len, type, flags, sid);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size)
{
    static int inited;
    if (!inited) {
        init();
        inited = 1;
    }
    stub s;
    memset(&s, 0, sizeof s);
    const yb_codec_ops *ops = &yb_h2_client_ops;
    yb_codec *c = ops->create(&cfg, &STUB_HOST, &s);
    nghttp2_hd_deflater *hd;
    if (!c || ops->start(c) || nghttp2_hd_deflate_new(&hd, 4096))
        abort();
    input in = {d, size, 0};
    int eof = 1;
    while (in.off < in.n && !s.fatal) {
        uint8_t op = byte(&in);
        uint32_t sid = 1 + 2 * (uint32_t)((op >> 4) & 7);
        size_t len = 0;
        uint8_t tmp[64];
        const uint8_t *p;
        switch (op & 15) {
        case 0: { /* SETTINGS with up to 3 entries */
            size_t ne = byte(&in) % 4;
            for (size_t i = 0; i < ne; i++) {
                tmp[6 * i] = 0;
                tmp[6 * i + 1] = 1 + byte(&in) % 6;
                uint32_t v = u32(&in);
                memcpy(tmp + 6 * i + 2, (uint8_t[]){v >> 24, v >> 16, v >> 8, v}, 4);
            }
            len = simple(NGHTTP2_SETTINGS, 0, 0, tmp, 6 * ne);
            break;
        }
        case 1:
            len = simple(NGHTTP2_SETTINGS, NGHTTP2_FLAG_ACK, 0, tmp, 0);
            break;
        case 2:
            len = headers(&in, hd, sid, 0);
            break;
        case 3:
            len = data(&in, sid);
            break;
        case 4:
            len = headers(&in, hd, sid, 1);
            break;
        case 5: { /* RST_STREAM */
            uint32_t ec = byte(&in) % 14;
            len = simple(NGHTTP2_RST_STREAM, 0, sid,
                         (uint8_t[]){0, 0, 0, (uint8_t)ec}, 4);
            break;
        }
        case 6: { /* GOAWAY */
            uint32_t last = byte(&in) % 20, ec = byte(&in) % 14;
            len = simple(NGHTTP2_GOAWAY, 0, 0,
                         (uint8_t[]){0, 0, 0, (uint8_t)last, 0, 0, 0, (uint8_t)ec}, 8);
            break;
        }
        case 7: { /* WINDOW_UPDATE */
            uint32_t inc = u32(&in) & 0x7fffffff;
            len = simple(NGHTTP2_WINDOW_UPDATE, 0, byte(&in) & 1 ? sid : 0,
                         (uint8_t[]){inc >> 24, inc >> 16, inc >> 8, inc}, 4);
            break;
        }
        case 8:
            memset(tmp, 0, 8);
            len = simple(NGHTTP2_PING, byte(&in) & 1, 0, tmp, 8);
            break;
        case 9: /* raw bytes */
            len = take(&in, byte(&in), &p);
            memcpy(fr, p, len);
            break;
        case 10:
            stub_submit(&s, ops, c, &prep[byte(&in) % K__N]);
            ops->flush(c, ++s.now);
            continue;
        case 11: {
            int k = byte(&in) % STUB_MAX_X;
            if (k < s.n && s.state[k] == 1) {
                s.state[k] = 3; /* the session fails it: it must not complete */
                ops->cancel(c, &s.x[k]);
                ops->flush(c, ++s.now);
            }
            continue;
        }
        case 12: {
            int k = byte(&in) % STUB_MAX_X;
            if (k < s.n && s.state[k] == 1 && s.x[k].req->open_ended) {
                ops->finish(c, &s.x[k]);
                ops->flush(c, ++s.now);
            }
            continue;
        }
        case 13:
            ops->on_drain(c, ++s.now);
            continue;
        default: /* 14, 15: the peer closes */
            in.off = in.n;
            continue;
        }
        if (!len)
            continue;
        s.fed += len;
        if (ops->on_read(c, fr, len, ++s.now) < 0) {
            eof = 0;
            break;
        }
        ops->flush(c, ++s.now);
    }
    if (eof && !s.fatal)
        ops->on_eof(c, ++s.now);
    ops->destroy(c);
    nghttp2_hd_deflate_del(hd);
    return 0;
}
