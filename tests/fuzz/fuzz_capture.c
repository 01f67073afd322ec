/* libFuzzer target: the whole capture pipeline, from packet bytes to
 * records, fed from memory (no files).
 *
 * Input layout: byte 0 picks the link type; then a sequence of packets,
 * each a 2-byte big-endian length and that many bytes (the last one takes
 * what is left).  Every 8th input is instead treated as a pcapng image for
 * the Decryption Secrets Block walker, and every 8th other (bits 0x18 of
 * byte 0 set, 0x20 clear) as a classic pcap file image for the reader
 * that parses its records in place (the file header's link type as
 * given, fed in blocks of a size byte 1 picks, as the file reader's
 * refills cut them).  Records are validated as the corpus writer would,
 * then discarded.
 *
 * TLS flows are decrypted with the key logs listed (colon-separated) in
 * YB_FUZZ_KEYLOGS, e.g. the committed captures' (tests/capture/fuzz.sh
 * sets it), so that seeds made of TLS captures reach the handshake, the
 * records and the protocol inside; without it the key log is empty and
 * only the handshake up to the key lookup is exercised.  Inputs with bit
 * 0x20 of byte 0 (and not DSB mode) run without any key log.  Server RSA
 * keys listed in YB_FUZZ_SERVER_KEYS (colon-separated PEM files) decrypt
 * TLS 1.2 RSA key exchange (the committed captures' test keys). */
#include "config.h"
#include "capture/capture.h"
#include "capture/capture_priv.h"
#include "capture/tls_decrypt.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int LINKS[] = {YB_LINK_ETHERNET, YB_LINK_RAW, YB_LINK_SLL, YB_LINK_SLL2,
                            YB_LINK_NULL, YB_LINK_LOOP, YB_LINK_IPV4, YB_LINK_IPV6};

static yb_keylog *keylog; /* for the whole run (borrowed by every pipeline) */
/* Server keys, parsed once: each input gets a store of its own sharing
 * them (its session cache must not carry over from one input to the next). */
static yb_tls_store *keys;

/* Calls add(path) for each entry of the colon-separated list. */
static void each_path(const char *list, void (*add)(const uint8_t *b, size_t n))
{
    char path[4096];
    static uint8_t buf[1 << 20];
    while (list && *list) {
        size_t n = strcspn(list, ":");
        if (n < sizeof path) {
            memcpy(path, list, n);
            path[n] = 0;
            FILE *f = fopen(path, "rb");
            size_t got = f ? fread(buf, 1, sizeof buf, f) : 0;
            if (f)
                fclose(f);
            add(buf, got);
        }
        list += n + (list[n] == ':');
    }
}

static void add_keylog(const uint8_t *b, size_t n)
{
    yb_keylog_add_text(keylog, b, n);
}

static void add_server_key(const uint8_t *b, size_t n)
{
    char err[256];
    yb_tls_store_add_server_key(keys, b, n, "fuzz", err, sizeof err);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    keylog = yb_keylog_new();
    if (keylog)
        each_path(getenv("YB_FUZZ_KEYLOGS"), add_keylog);
    keys = yb_tls_store_new();
    if (keys)
        each_path(getenv("YB_FUZZ_SERVER_KEYS"), add_server_key);
    return 0;
}

static int emit(void *ud, const yb_request *r)
{
    (void)ud;
    if (yb_request_problem(r))
        abort(); /* the pipeline must never emit an unwritable record */
    return 0;
}

static int count_dsb(void *ud, const uint8_t *t, size_t n)
{
    (void)t;
    *(size_t *)ud += n;
    return 0;
}

/* A classic pcap file image: b[0] sets the block size, then the file.
 * The reader's loop: the whole records of what has been read, the rest
 * kept for the next block; each window is a heap copy of exactly its
 * bytes, so that ASan sees a read past it. */
static void pcap_image(yb_capture *c, const uint8_t *b, size_t n)
{
    yb_cap_pcap_fmt fmt = {0, 0, 0, NULL};
    if (n < 25 || yb_cap_pcap_fast_header(b + 1, n - 1, &fmt) < 0)
        return;
    const uint8_t *h = b + 1;
    fmt.snaplen = (uint32_t)h[16] | (uint32_t)h[17] << 8 | (uint32_t)h[18] << 16 |
                  (uint32_t)h[19] << 24;
    fmt.link = h[20] | h[21] << 8;
    const uint8_t *recs = h + 24;
    size_t total = n - 25, block = 64 + (size_t)b[0] * 64, pos = 0, have = 0;
    for (;;) {
        size_t k = total - pos - have < block ? total - pos - have : block;
        have += k;
        uint8_t *win = malloc(have ? have : 1);
        if (!win)
            return;
        memcpy(win, recs + pos, have);
        int stop, rc;
        size_t used = yb_cap_pcap_records(c, &fmt, win, have, &stop, &rc);
        free(win);
        pos += used;
        have -= used;
        if (rc < 0 || stop || k == 0)
            return;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if ((data[0] & 0x38) == 0x38) {
        size_t total = 0;
        yb_cap_pcapng_dsb_mem(data + 1, size - 1, count_dsb, &total);
        return 0;
    }
    yb_capture_opts o;
    memset(&o, 0, sizeof o);
    o.max_flow_buffer = 64 << 10; /* small caps: exercise the limits */
    o.max_total_buffer = 1 << 20;
    o.keep_credentials = data[0] & 0x40;
    o.keylog = data[0] & 0x20 ? NULL : (struct yb_keylog *)keylog;
    yb_tls_store *store = data[0] & 0x20 ? NULL : yb_tls_store_new();
    yb_tls_store_copy_keys(store, keys);
    o.tls_store = store;
    yb_capture *c = yb_capture_new(&o, emit, NULL);
    if (!c) {
        yb_tls_store_free(store);
        return 0;
    }
    if ((data[0] & 0x38) == 0x18) {
        pcap_image(c, data + 1, size - 1);
        yb_capture_finish(c);
        yb_capture_free(c);
        yb_tls_store_free(store);
        return 0;
    }
    int link = LINKS[data[0] & 7];
    size_t off = 1;
    uint64_t ts = 1000;
    while (off < size) {
        size_t n = size - off;
        if (n >= 2) {
            size_t l = ((size_t)data[off] << 8) | data[off + 1];
            off += 2;
            n = size - off;
            if (l < n)
                n = l;
        } else {
            off = size;
            break;
        }
        yb_capture_packet(c, link, ts, data + off, n, n + (data[0] & 0x80 ? 7 : 0));
        ts += 1000;
        off += n;
    }
    yb_capture_finish(c);
    yb_capture_free(c);
    yb_tls_store_free(store);
    return 0;
}
