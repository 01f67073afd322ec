/* Capture files: packets through libpcap (pcap and pcapng, whatever the
 * file is called: libpcap goes by the magic number), and the pcapng
 * Decryption Secrets Blocks that libpcap skips, read here with a
 * bounds-checked block walker. */
#include "config.h"
#include "capture/capture_priv.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PCAPNG_SHB 0x0A0D0D0Au
#define PCAPNG_DSB 0x0000000Au
#define DSB_TLS_KEYLOG 0x544c534bu /* "TLSK" */
#define BOM 0x1A2B3C4Du
/* A key log larger than this is not a key log. */
#define MAX_DSB (16u << 20)
/* stdio's buffer for the capture file */
#define READ_BUF (1u << 20)

static uint32_t rd32(const uint8_t *p, int swap)
{
    uint32_t v = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                 ((uint32_t)p[3] << 24);
    return swap ? __builtin_bswap32(v) : v;
}

/* The block walker over a source (a FILE or memory). */
typedef struct {
    FILE *f;
    const uint8_t *mem;
    size_t len, off;
} src;

static int src_read(src *s, void *buf, size_t n)
{
    if (s->f)
        return fread(buf, 1, n, s->f) == n ? 0 : -1;
    if (s->off > s->len || s->len - s->off < n)
        return -1;
    memcpy(buf, s->mem + s->off, n);
    s->off += n;
    return 0;
}

static int src_skip(src *s, uint64_t n)
{
    if (s->f)
        return fseeko(s->f, (off_t)n, SEEK_CUR) == 0 ? 0 : -1;
    if (s->off > s->len || s->len - s->off < n)
        return -1;
    s->off += (size_t)n;
    return 0;
}

static int walk(src *s, int (*add)(void *, const uint8_t *, size_t), void *ud)
{
    uint8_t h[12];
    int found = 0, swap = 0;
    if (src_read(s, h, 12) < 0)
        return 0;
    if (rd32(h, 0) != PCAPNG_SHB)
        return 0; /* classic pcap: no secrets blocks */
    for (;;) {
        uint32_t type = rd32(h, 0);
        if (type == PCAPNG_SHB) {
            /* Each section sets its own byte order. */
            uint32_t bom = rd32(h + 8, 0);
            if (bom == BOM)
                swap = 0;
            else if (__builtin_bswap32(bom) == BOM)
                swap = 1;
            else
                return -1;
        }
        uint32_t blen = rd32(h + 4, swap);
        if (blen < 12 || blen % 4)
            return -1;
        if (type == PCAPNG_DSB && blen >= 20) {
            /* body: secrets type, secrets length, data (padded), then the
             * options and the trailing length; we have read 12 bytes. */
            uint8_t t[4];
            if (src_read(s, t, 4) < 0)
                return -1;
            /* h[8..12) = secrets type, t = secrets length. */
            uint32_t stype = rd32(h + 8, swap), slen = rd32(t, swap);
            if (slen > MAX_DSB || (uint64_t)slen + 20 > blen)
                return -1;
            uint8_t *text = malloc(slen ? slen : 1);
            if (!text)
                return -1;
            if (src_read(s, text, slen) < 0) {
                free(text);
                return -1;
            }
            if (stype == DSB_TLS_KEYLOG) {
                found++;
                if (add)
                    add(ud, text, slen);
            }
            free(text);
            if (src_skip(s, (uint64_t)blen - 16 - slen) < 0)
                return -1;
        } else {
            if (src_skip(s, (uint64_t)blen - 12) < 0)
                return -1;
        }
        if (src_read(s, h, 12) < 0)
            return found;
    }
}

int yb_cap_pcapng_dsb(FILE *f, int (*add)(void *ud, const uint8_t *t, size_t n), void *ud)
{
    src s = {f, NULL, 0, 0};
    return walk(&s, add, ud);
}

int yb_cap_pcapng_dsb_mem(const uint8_t *buf, size_t len,
                          int (*add)(void *ud, const uint8_t *t, size_t n), void *ud)
{
    src s = {NULL, buf, len, 0};
    return walk(&s, add, ud);
}

static int add_secrets(void *ud, const uint8_t *t, size_t n)
{
    return yb_cap_add_secrets(ud, t, n);
}

int yb_capture_read_file(yb_capture *c, const char *path, const char *filter, FILE *warn,
                         char *err, size_t errlen)
{
    char perr[PCAP_ERRBUF_SIZE] = "";
    struct stat sb;
    uint64_t size = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    /* libpcap freads each record: through stdio's default 4 KB buffer that
     * was a read(2) per 4 KB.  (Set before the stream's first read; glibc
     * ignores the size unless given the buffer; without one, 4 KB reads.) */
    char *vbuf = malloc(READ_BUF);
    if (vbuf)
        setvbuf(f, vbuf, _IOFBF, READ_BUF);
    int ndsb = yb_cap_pcapng_dsb(f, add_secrets, c);
    if (ndsb < 0 && warn)
        fprintf(warn, "yangblast: warning: %s: malformed pcapng block while looking for "
                      "decryption secrets\n", path);
    rewind(f);
    pcap_t *p = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, perr);
    if (!p) {
        fclose(f);
        free(vbuf);
        snprintf(err, errlen, "%s: not a capture file libpcap can read: %s", path, perr);
        return -1;
    }
    if (filter && *filter) {
        struct bpf_program prog;
        if (pcap_compile(p, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) < 0) {
            snprintf(err, errlen, "filter '%s': %s", filter, pcap_geterr(p));
            pcap_close(p);
            free(vbuf);
            return -1;
        }
        int rc = pcap_setfilter(p, &prog);
        pcap_freecode(&prog);
        if (rc < 0) {
            snprintf(err, errlen, "filter '%s': %s", filter, pcap_geterr(p));
            pcap_close(p);
            free(vbuf);
            return -1;
        }
    }
    int link = pcap_datalink(p), ret = 0, failed = 0;
    struct pcap_pkthdr *h;
    const u_char *data;
    int rc;
    while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
        uint64_t ts = (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec;
        ret = yb_capture_packet(c, link, ts, data, h->caplen, h->len);
        if (ret < 0)
            break;
    }
    if (ret == 0 && rc == PCAP_ERROR) {
        failed = 1;
        if (warn)
            fprintf(warn, "yangblast: warning: %s: %s (packets up to there were used)\n", path,
                    pcap_geterr(p));
    }
    yb_cap_count_file(c, size, failed);
    pcap_close(p); /* closes f */
    free(vbuf);
    if (ret < 0)
        snprintf(err, errlen, "%s: %s", path, strerror(-ret));
    return ret < 0 ? ret : 0;
}
