/* yangblast capture: pcap/pcapng -> corpus.
 *
 * A pipeline of small stages, each in its own file:
 *   pcap_in.c  libpcap reading (pcap and pcapng, BPF filter) and the
 *              pcapng Decryption Secrets Blocks libpcap does not expose
 *   decode.c   link layer (Ethernet/802.1Q, SLL, SLL2, NULL/LOOP, raw IP)
 *              -> IPv4/IPv6 -> TCP segment
 *   reasm.c    TCP flows and in-order reassembly per direction (bounded)
 *   h1x.c      HTTP/1.1 request extraction, responses matched for status
 *   h2x.c      HTTP/2 frames, HPACK (nghttp2's inflater), gRPC
 *   redact.c   credential redaction
 *   capture.c  protocol recognition, TLS glue, record ordering, stats
 *
 * Data flows one way: packets in, records out through a callback.  Packets
 * can be fed from memory (yb_capture_packet), which is what the fuzz target
 * and the unit tests do; yb_capture_read_file drives it from a file. */
#ifndef YB_CAPTURE_H
#define YB_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "corpus/corpus.h"

/* Link types accepted by yb_capture_packet (the pcap LINKTYPE_ values). */
#define YB_LINK_NULL 0       /* BSD loopback, host byte order family */
#define YB_LINK_ETHERNET 1
#define YB_LINK_RAW 101      /* raw IPv4/IPv6 (libpcap's DLT_RAW maps here) */
#define YB_LINK_LOOP 108     /* OpenBSD loopback, network byte order family */
#define YB_LINK_SLL 113      /* Linux cooked v1 */
#define YB_LINK_IPV4 228
#define YB_LINK_IPV6 229
#define YB_LINK_SLL2 276     /* Linux cooked v2 */

struct yb_keylog;    /* capture/tls_decrypt.h */
struct yb_tls_store; /* capture/tls_decrypt.h */

/* Most user names to redact (yb_capture_opts.redact). */
#define YB_CAPTURE_MAX_REDACT 64

typedef struct {
    /* Bytes one flow may hold (out-of-order segments, a request being
     * assembled, HTTP/2 frames and streams).  0 = the default, 16 MiB. */
    uint64_t max_flow_buffer;
    /* Bytes all flows together may hold, plus records waiting for their
     * response.  0 = the default, 512 MiB. */
    uint64_t max_total_buffer;
    int keep_credentials;  /* 1: no redaction */
    /* Header / gRPC metadata names to redact besides the defaults (any
     * case; borrowed, must outlive the pipeline; at most
     * YB_CAPTURE_MAX_REDACT are used). */
    const char *const *redact;
    size_t n_redact;
    int mgmt_only;         /* 1: keep only RESTCONF and gNMI records */
    /* Key log for TLS decryption (borrowed; may be NULL).  pcapng DSBs
     * read by yb_capture_read_file are added to it. */
    struct yb_keylog *keylog;
    /* Server RSA keys for TLS 1.2 RSA key exchange and the TLS 1.2 session
     * cache shared by the capture's flows (borrowed; may be NULL: the
     * pipeline then keeps its own cache, without server keys). */
    struct yb_tls_store *tls_store;
} yb_capture_opts;

/* Counters of what was seen, extracted and dropped (all cumulative). */
typedef struct {
    uint64_t files, file_errors;        /* inputs read; truncated/corrupt inputs */
    uint64_t file_bytes;                /* size of the inputs */
    uint64_t packets, packet_bytes;     /* packets handed to the pipeline */
    uint64_t not_tcp;                   /* IPv4/IPv6 but not TCP, or not IP */
    uint64_t bad_link;                  /* unsupported link type */
    uint64_t malformed;                 /* headers cut short or inconsistent */
    uint64_t fragments;                 /* IP fragments seen */
    uint64_t frag_reassembled;          /* datagrams reassembled from them */
    uint64_t frag_timeout, frag_evicted;/* datagrams dropped: incomplete after 30 s;
                                           over the caps (oldest first) */
    uint64_t frag_overlap, frag_invalid;/* ... overlaps that disagree; cut, too
                                           long or misaligned fragments */
    uint64_t frag_incomplete;           /* ... still incomplete at the end */
    uint64_t snaplen_truncated;         /* packets cut by the snapshot length */
    uint64_t flows;                     /* TCP connections */
    uint64_t flows_h1, flows_h2, flows_tls, flows_other, flows_empty;
    uint64_t flows_too_short;           /* of flows_other: ended too short to tell */
    uint64_t flows_midstream;           /* start (SYN) not captured */
    uint64_t late_segments, late_bytes; /* data segments (their bytes) of a
                                           connection after its RST or FINs:
                                           absorbed, not a new flow */
    uint64_t tls_decrypted, tls_skipped;/* TLS flows decrypted / not */
    uint64_t tls_resumed;               /* of the decrypted: TLS 1.2 resumed sessions */
    uint64_t tls_no_support;            /* skipped because TLS decryption is not built in */
    uint64_t retrans_bytes;             /* bytes seen twice (retransmissions, overlaps) */
    uint64_t gaps, gap_bytes;           /* holes in a stream (lost data) */
    uint64_t dropped_flow_cap_bytes;    /* out-of-order bytes given up: flow cap */
    uint64_t dropped_total_cap_bytes;   /* ... total cap */
    uint64_t dropped_unparsed_bytes;    /* bytes of unrecognised or dead streams */
    uint64_t requests;                  /* records written */
    uint64_t req_restconf, req_gnmi, req_http1, req_http2;
    uint64_t req_filtered;              /* dropped by mgmt_only */
    uint64_t drop_gap;                  /* requests lost to a gap */
    uint64_t drop_parse;                /* malformed requests */
    uint64_t drop_too_large;            /* over max_flow_buffer */
    uint64_t drop_incomplete;           /* cut off by the end of the capture/connection */
    uint64_t drop_invalid;              /* not representable in a corpus */
    uint64_t drop_overflow;             /* record queue over the total cap */
    uint64_t no_response;               /* written without a response status */
    uint64_t h1_errors, h2_errors, hpack_errors, grpc_framing_errors;
    uint64_t h2_lost_requests, h2_lost_responses; /* HTTP/2 streams that lost their
                                                     request / response */
    uint64_t h2_lost_body_bytes;        /* DATA bytes lost in gaps */
    uint64_t redacted;                  /* header values replaced */
} yb_capture_stats;

typedef struct yb_capture yb_capture;

/* Called once per record, in order of the requests' first byte, with
 * records yb_request_problem accepts only (the others are counted invalid
 * and skipped; a writer may take them with yb_corpus_writer_add_checked).
 * r is owned by the pipeline and valid during the call; return 0, or a
 * negative code to stop (yb_capture_packet then returns it). */
typedef int (*yb_capture_emit_fn)(void *ud, const yb_request *r);

/* Creates a pipeline; opts is copied.  Returns NULL on ENOMEM. */
yb_capture *yb_capture_new(const yb_capture_opts *opts, yb_capture_emit_fn emit, void *ud);
/* Frees c and everything it holds; records not yet emitted are lost (call
 * yb_capture_finish first). */
void yb_capture_free(yb_capture *c);

/* Feeds one packet: link type (YB_LINK_*), capture time in ns since the
 * epoch, captured bytes and the original length on the wire.  data is
 * borrowed for the call.  Returns 0, or the emit callback's negative code,
 * or -ENOMEM. */
int yb_capture_packet(yb_capture *c, int linktype, uint64_t ts_ns, const uint8_t *data,
                      size_t caplen, size_t wirelen);
/* Ends every flow (data after a hole is flushed, pending requests are
 * completed or dropped) and emits what is left.  Returns 0 or the emit
 * callback's negative code.  Idempotent. */
int yb_capture_finish(yb_capture *c);

/* Reads one pcap or pcapng file (the format is taken from the contents,
 * not the name) through libpcap with an optional BPF filter (NULL = all),
 * feeding every packet.  pcapng Decryption Secrets Blocks of TLS key log
 * type are added to opts->keylog first (when it is non-NULL).  A file cut
 * short or corrupt after its header is a warning (stats.file_errors, a line
 * in warn when non-NULL), not an error.  Returns 0; -1 with err when the
 * file cannot be opened or the filter does not compile; or the emit
 * callback's negative code. */
int yb_capture_read_file(yb_capture *c, const char *path, const char *filter,
                         FILE *warn, char *err, size_t errlen);

/* Counters so far (owned by c). */
const yb_capture_stats *yb_capture_get_stats(const yb_capture *c);
/* Header names whose values were redacted so far (lower case, owned by c);
 * *n gets the count. */
const char *const *yb_capture_redactions(const yb_capture *c, size_t *n);

/* Writes the human report ("what was found") to f. */
void yb_capture_report_text(const yb_capture *c, FILE *f);
/* Writes the same as one JSON object (schema in yangblast-capture(1)) to f.
 * Returns 0 or -1. */
int yb_capture_report_json(const yb_capture *c, FILE *f);

#endif
