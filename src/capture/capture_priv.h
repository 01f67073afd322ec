/* Internal interfaces between the capture stages (see capture.h for the
 * pipeline).  Functions here are module-internal: prefixed yb_cap_. */
#ifndef YB_CAPTURE_PRIV_H
#define YB_CAPTURE_PRIV_H

#include "capture/capture.h"

/* Memory the capture keeps for reuse (slots, nghttp2's blocks) is
 * poisoned under ASan while kept, so that a use after its release is
 * still caught. */
#if defined(__SANITIZE_ADDRESS__)
#define YB_CAP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define YB_CAP_ASAN 1
#endif
#endif
#ifdef YB_CAP_ASAN
#include <sanitizer/asan_interface.h>
#define YB_CAP_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define YB_CAP_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define YB_CAP_POISON(p, n) ((void)0)
#define YB_CAP_UNPOISON(p, n) ((void)0)
#endif

#define YB_CAP_DEFAULT_FLOW_BUFFER (16ull << 20)
#define YB_CAP_DEFAULT_TOTAL_BUFFER (512ull << 20)
/* A request's decoded header block (names + values) above this is dropped:
 * HPACK can expand a small block a thousandfold. */
#define YB_CAP_MAX_HEADER_BYTES (256u * 1024u)
#define YB_CAP_MAX_HEADERS 256
/* Closed connections remembered to absorb their late packets (a few
 * hundred bytes each). */
#define YB_CAP_MAX_CLOSED_FLOWS 16384u

/* ---- decode.c ---------------------------------------------------------- */

typedef struct {
    int af;                   /* 4 or 6 */
    uint8_t src[16], dst[16]; /* IPv4 in the first 4 bytes */
    uint16_t sport, dport;
    uint32_t seq;
    uint32_t ack;             /* acknowledgment number (with YB_TCP_ACK) */
    uint8_t flags;            /* TCP flags (YB_TCP_*) */
    const uint8_t *payload;   /* points into the packet */
    size_t len;               /* payload bytes captured */
    size_t missing;           /* payload bytes on the wire but cut by snaplen */
} yb_cap_seg;

#define YB_TCP_FIN 0x01
#define YB_TCP_SYN 0x02
#define YB_TCP_RST 0x04
#define YB_TCP_ACK 0x10

typedef struct yb_cap_frags yb_cap_frags;

/* Decodes one packet (captured at now, ns) down to TCP.  IP fragments of
 * TCP go to fr (NULL: only counted).  Returns 1 with *seg filled (pointing
 * into data, or into fr's last reassembled datagram, valid until fr's next
 * fragment), 0 when the packet is not TCP, a fragment of a datagram not
 * yet complete, or counted as unusable in st. */
int yb_cap_decode(yb_capture_stats *st, yb_cap_frags *fr, uint64_t now, int linktype,
                  const uint8_t *data, size_t caplen, size_t wirelen, yb_cap_seg *seg);

/* ---- frag.c: IP fragment reassembly (policy at the top of frag.c) ---- */

/* Capture time after which an incomplete datagram is dropped. */
#define YB_CAP_FRAG_TIMEOUT_NS (30ull * 1000000000ull)
/* Datagrams waiting at once; bytes they may hold together. */
#define YB_CAP_FRAG_MAX_DGRAMS 1024u
#define YB_CAP_FRAG_MAX_BYTES (16u << 20)

/* One fragment, as decode.c read it. */
typedef struct {
    int af;                   /* 4 or 6 */
    uint8_t src[16], dst[16];
    uint32_t id;              /* identification */
    uint8_t proto;            /* IPv4 protocol / IPv6 next header after the fragment header */
    size_t offset;            /* bytes */
    int more;                 /* MF: not the last fragment */
    const uint8_t *data;      /* fragment payload (captured part) */
    size_t len;               /* its length on the wire */
    int truncated;            /* the capture holds less than len */
} yb_cap_frag;

yb_cap_frags *yb_cap_frags_new(yb_capture *c);
/* Adds a fragment seen at now.  Returns 1 when it completes its datagram:
 * *out / *outlen are then the datagram's payload (after the IP header, or
 * after the IPv6 fragment header), owned by fr and valid until the next
 * call; 0 otherwise (waiting, or dropped: counted). */
int yb_cap_frags_add(yb_cap_frags *fr, const yb_cap_frag *f, uint64_t now, const uint8_t **out,
                     size_t *outlen);
/* Drops the datagrams still waiting (counted incomplete). */
void yb_cap_frags_finish(yb_cap_frags *fr);
void yb_cap_frags_free(yb_cap_frags *fr);

/* ---- capture.c: connections (application side of a TCP flow) --------- */

typedef struct yb_cap_conn yb_cap_conn;

/* side: 0 = the endpoint that sent the flow's first packet (first, whose
 * addresses and ports are copied), 1 = the other.  client_side: 0/1 when
 * the SYN told who the client is, -1 when not. */
yb_cap_conn *yb_cap_conn_new(yb_capture *c, uint64_t conn_id, int client_side, int midstream,
                             const yb_cap_seg *first);
void yb_cap_conn_data(yb_cap_conn *k, int side, const uint8_t *d, size_t n);
void yb_cap_conn_gap(yb_cap_conn *k, int side, uint64_t n);
void yb_cap_conn_fin(yb_cap_conn *k, int side);
/* Ends the connection: pending requests are completed or dropped; frees k. */
void yb_cap_conn_end(yb_cap_conn *k);

/* The pipeline object's parts the stages share. */
yb_capture_stats *yb_cap_stats(yb_capture *c);
const yb_capture_opts *yb_cap_opts(const yb_capture *c);
uint64_t yb_cap_now(const yb_capture *c);
/* Memory accounting against max_total_buffer: returns 0, or -1 (nothing
 * charged) when the total cap would be exceeded. */
int yb_cap_mem_charge(yb_capture *c, uint64_t n);
void yb_cap_mem_release(yb_capture *c, uint64_t n);

/* Adds TLS key log text (a pcapng DSB) to the key log, when TLS
 * decryption is built in and a key log was given (or is created for the
 * DSB); returns 0 or -1. */
int yb_cap_add_secrets(yb_capture *c, const uint8_t *text, size_t len);
/* Counts an input file (size in bytes) and its failure. */
void yb_cap_count_file(yb_capture *c, uint64_t size, int failed);

/* ---- capture.c: records in flight ------------------------------------- */

/* A slot is opened when a request's first byte is seen (so records come
 * out in order of their start), filled when the request is complete and
 * released once its response status is known or cannot come.  The
 * extractor that opened a slot owns one reference until it calls
 * yb_cap_slot_done or yb_cap_slot_drop. */
typedef struct yb_cap_slot yb_cap_slot;

typedef enum {
    YB_DROP_GAP,
    YB_DROP_PARSE,
    YB_DROP_TOO_LARGE,
    YB_DROP_INCOMPLETE,
} yb_cap_drop_reason;

/* Returns a new open slot for connection conn_id, or NULL (ENOMEM, or the
 * record queue is over its cap: counted). */
yb_cap_slot *yb_cap_slot_open(yb_capture *c, uint64_t conn_id);
/* The request being built (owned by the slot).  Its strings and headers
 * belong to the slot's arena: set them only with the functions below
 * (never yb_request_set_str / add_header, never yb_request_cleanup). */
yb_request *yb_cap_slot_req(yb_cap_slot *s);
/* Sets *field (one of the request's strings) to a copy of v[0..n) cut at
 * its first NUL.  Returns 0 or -ENOMEM (*field unchanged). */
int yb_cap_slot_set(yb_cap_slot *s, char **field, const void *v, size_t n);
/* Appends a header: the name cut at its first NUL, the value as it is
 * (NUL-terminated after value_len).  Returns 0 or -ENOMEM. */
int yb_cap_slot_add_header(yb_cap_slot *s, const void *name, size_t nlen, const void *value,
                           size_t vlen);
/* Replaces the body with a copy (owned by the slot); returns 0 or -ENOMEM. */
int yb_cap_slot_set_body(yb_cap_slot *s, const void *body, size_t len);
/* Gives the slot a body buffer from yb_cap_buf_take (capacity cap) holding
 * len bytes; the slot gives it back. */
void yb_cap_slot_take_body(yb_cap_slot *s, uint8_t *body, size_t len, size_t cap);

/* Body buffers: the capture keeps a few that records and streams gave
 * back, so that each request body is not a malloc and free of several KB
 * (glibc's slow path).  yb_cap_buf_take returns one of at least need
 * bytes (its capacity in *cap) or NULL on ENOMEM; yb_cap_buf_give takes b
 * (capacity cap; NULL is fine) back, keeping it or freeing it. */
uint8_t *yb_cap_buf_take(yb_capture *c, size_t need, size_t *cap);
void yb_cap_buf_give(yb_capture *c, uint8_t *b, size_t cap);
/* The request is complete: protocol classified, redacted, charged. */
void yb_cap_slot_complete(yb_capture *c, yb_cap_slot *s);
/* The extractor lets go: the record is written once all earlier ones are. */
void yb_cap_slot_done(yb_capture *c, yb_cap_slot *s);
/* The request is lost; counted under reason; releases the reference. */
void yb_cap_slot_drop(yb_capture *c, yb_cap_slot *s, yb_cap_drop_reason why);
/* 1 while the slot's request has been completed. */
int yb_cap_slot_is_complete(const yb_cap_slot *s);

/* ---- h1x.c ------------------------------------------------------------- */

struct yb_h1_req;
/* A request parser for a new HTTP/1.1 connection (reset; body cap from
 * the options), reused from an ended connection when one is idle; NULL on
 * ENOMEM.  Give it back with yb_cap_h1_req_give (NULL is fine), which
 * keeps a few and frees the rest. */
struct yb_h1_req *yb_cap_h1_req_take(yb_capture *c);
void yb_cap_h1_req_give(yb_capture *c, struct yb_h1_req *p);

typedef struct yb_cap_h1 yb_cap_h1;
/* dir 0 = client->server, 1 = server->client.  scheme is copied. */
yb_cap_h1 *yb_cap_h1_new(yb_capture *c, uint64_t conn_id, const char *scheme, int midstream);
void yb_cap_h1_data(yb_cap_h1 *h, int dir, const uint8_t *d, size_t n);
void yb_cap_h1_gap(yb_cap_h1 *h, int dir);
void yb_cap_h1_fin(yb_cap_h1 *h, int dir);
/* The connection's first request was lost before the protocol was known:
 * its response must not go to the next request.  Counted as a gap drop. */
void yb_cap_h1_lost_request(yb_cap_h1 *h);
void yb_cap_h1_free(yb_cap_h1 *h);

/* ---- h2x.c ------------------------------------------------------------- */

typedef struct yb_cap_h2 yb_cap_h2;
yb_cap_h2 *yb_cap_h2_new(yb_capture *c, uint64_t conn_id, const char *scheme);
void yb_cap_h2_data(yb_cap_h2 *h, int dir, const uint8_t *d, size_t n);
void yb_cap_h2_gap(yb_cap_h2 *h, int dir, uint64_t n);
void yb_cap_h2_free(yb_cap_h2 *h);
/* Says that stream stream_id of connection conn_id lost its request
 * (dir 0: the record is dropped) or its response (dir 1) for why (a
 * static string), bytes of body lost with it (0 when unknown); the
 * capture lists the first few and counts them all. */
void yb_cap_h2_lost(yb_capture *c, uint64_t conn_id, uint32_t stream_id, int dir, const char *why,
                    uint64_t bytes);
/* The allocator of a capture's HPACK inflaters (h2x.c): made with the
 * capture's first HTTP/2 connection, freed with the capture after its
 * connections.  yb_cap_h2_pool_of returns c's, made on first use (NULL
 * when it cannot be: nghttp2 then uses malloc). */
typedef struct yb_cap_h2_pool yb_cap_h2_pool;
yb_cap_h2_pool *yb_cap_h2_pool_new(void);
void yb_cap_h2_pool_free(yb_cap_h2_pool *pl);
yb_cap_h2_pool *yb_cap_h2_pool_of(yb_capture *c);
/* Length of the client connection preface. */
#define YB_H2_PREFACE_LEN 24
extern const uint8_t yb_cap_h2_preface[YB_H2_PREFACE_LEN];

/* ---- redact.c ---------------------------------------------------------- */

/* Replaces the values of credential headers in r (a slot's request) with
 * "<redacted>" (static storage: r's values are never freed one by one):
 * the default names, and extra[0..n_extra) (any case), and calls note(ud,
 * name) for each with the name as the record spells it.  Returns the
 * number replaced. */
int yb_cap_redact(yb_request *r, const char *const *extra, size_t n_extra,
                  void (*note)(void *ud, const char *name), void *ud);

/* ---- pcap_in.c --------------------------------------------------------- */

/* Scans a pcapng file for Decryption Secrets Blocks with TLS key log
 * secrets and calls add(ud, text, len) for each.  Returns the number found
 * (0 for a pcap file or none), or -1 for a malformed block (the ones before
 * it were delivered). */
int yb_cap_pcapng_dsb(FILE *f, int (*add)(void *ud, const uint8_t *t, size_t n), void *ud);
/* Same over a memory image of a pcapng file. */
int yb_cap_pcapng_dsb_mem(const uint8_t *buf, size_t len,
                          int (*add)(void *ud, const uint8_t *t, size_t n), void *ud);

/* The classic pcap files read without libpcap's copies (see pcap_in.c). */
struct bpf_program;
typedef struct {
    int link;          /* link type of the packets (libpcap's DLT_) */
    uint32_t snaplen;  /* snapshot length: longer records are left to libpcap */
    int nsec;          /* timestamps in ns (else in us) */
    const struct bpf_program *filter; /* compiled BPF filter, NULL for none */
} yb_cap_pcap_fmt;
/* Returns 0 and sets fmt->nsec when the file header h[0..n) is one whose
 * records yb_cap_pcap_records reads (pcap 2.4 in this host's byte order),
 * else -1. */
int yb_cap_pcap_fast_header(const uint8_t *h, size_t n, yb_cap_pcap_fmt *fmt);
/* Hands each whole record in b[0..n) (untrusted) to yb_capture_packet,
 * those the filter passes, in place.  Stops before a record whose header or
 * data runs past n, or one libpcap would cut or refuse (*stop = 1), or
 * after yb_capture_packet fails (*rc its code, else 0).  Returns the bytes
 * of the records consumed. */
size_t yb_cap_pcap_records(yb_capture *c, const yb_cap_pcap_fmt *fmt, const uint8_t *b, size_t n,
                           int *stop, int *rc);

/* ---- reasm.c ----------------------------------------------------------- */

typedef struct yb_cap_flows yb_cap_flows;
yb_cap_flows *yb_cap_flows_new(yb_capture *c);
/* Feeds one segment; returns 0 or -ENOMEM. */
int yb_cap_flows_segment(yb_cap_flows *f, const yb_cap_seg *s);
/* Ends every flow (holes flushed as gaps). */
void yb_cap_flows_finish(yb_cap_flows *f);
void yb_cap_flows_free(yb_cap_flows *f);

#endif
