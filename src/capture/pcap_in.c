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
#include <unistd.h>

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

/* ---- classic pcap records, parsed in place ------------------------------
 *
 * libpcap hands out a packet after two freads (its record header, then the
 * data into its own buffer) through stdio's buffer: three copies of every
 * byte and a fifth of a capture's CPU.  The common file (pcap 2.4 in this
 * host's byte order, as tcpdump, dumpcap and editcap write it) is read here
 * instead: FAST_BUF bytes at a time with pread into one buffer, each packet
 * handed on where it lies in the buffer.  (Mapping the file instead, 4 MB
 * at a time, cost more: each page's first touch through a new mapping
 * waited for a page walk, which under a hypervisor came to a fifth of
 * capture's CPU; the kernel's copy into a buffer that stays in the cache
 * costs a fifth of that: 300 MB in 0.02 s against 0.12 s.)  Only records libpcap would hand out
 * unchanged are taken: at the first record that libpcap would cut, reject
 * or report (captured length over the snapshot length or its 256 KB sanity
 * limit, a record cut by the end of the file, a read error) the file is
 * given back to libpcap from that record on, so its handling and messages
 * stay libpcap's.  Other files (pcapng, the other byte order, older
 * versions) are libpcap's alone. */

#define PCAP_MAGIC_US 0xa1b2c3d4u
#define PCAP_MAGIC_NS 0xa1b23c4du
#define PCAP_FILE_HDR 24
#define PCAP_REC_HDR 16
/* libpcap's max_snaplen_for_dlt for every link type capture decodes */
#define FAST_MAX_CAPLEN 262144u
/* The block read at once: the largest record the fast path takes fits
 * (with its header), and the buffer stays in the processor's cache
 * (256 KB..1 MB measured alike; 4 MB cost a tenth more). */
#define FAST_BUF (512u << 10)

/* (the file's int32 as libpcap stores it in a struct timeval: sign-extended) */
static int64_t s32(uint32_t v)
{
    return v < 0x80000000u ? (int64_t)v : (int64_t)v - 0x100000000ll;
}

int yb_cap_pcap_fast_header(const uint8_t *h, size_t n, yb_cap_pcap_fmt *fmt)
{
    uint32_t one = 1;
    uint8_t little;
    memcpy(&little, &one, 1);
    if (n < PCAP_FILE_HDR || !little)
        return -1;
    uint32_t magic = rd32(h, 0);
    if (magic != PCAP_MAGIC_US && magic != PCAP_MAGIC_NS)
        return -1; /* the other byte order, pcapng, a variant: libpcap's */
    if (h[4] != 2 || h[5] != 0 || h[6] != 4 || h[7] != 0)
        return -1; /* not 2.4: libpcap may swap the lengths */
    fmt->nsec = magic == PCAP_MAGIC_NS;
    return 0;
}

size_t yb_cap_pcap_records(yb_capture *c, const yb_cap_pcap_fmt *fmt, const uint8_t *b, size_t n,
                           int *stop, int *rc)
{
    size_t off = 0;
    *stop = 0;
    *rc = 0;
    while (n - off >= PCAP_REC_HDR) {
        const uint8_t *r = b + off;
        uint32_t caplen = rd32(r + 8, 0), len = rd32(r + 12, 0);
        if (caplen > fmt->snaplen || caplen > FAST_MAX_CAPLEN) {
            *stop = 1; /* libpcap cuts or refuses it */
            break;
        }
        if (n - off - PCAP_REC_HDR < caplen)
            break; /* the rest is in the next block */
        const uint8_t *data = r + PCAP_REC_HDR;
        off += PCAP_REC_HDR + caplen;
        int64_t sec = s32(rd32(r, 0)), frac = s32(rd32(r + 4, 0));
        if (!fmt->nsec)
            frac *= 1000;
        if (fmt->filter) {
            struct pcap_pkthdr ph;
            ph.ts.tv_sec = (time_t)sec;
            ph.ts.tv_usec = (suseconds_t)frac;
            ph.caplen = caplen;
            ph.len = len;
            if (!pcap_offline_filter(fmt->filter, &ph, data))
                continue;
        }
        uint64_t ts = (uint64_t)sec * 1000000000ull + (uint64_t)frac;
        int ret = yb_capture_packet(c, fmt->link, ts, data, caplen, len);
        if (ret < 0) {
            *rc = ret;
            break;
        }
    }
    return off;
}

/* Reads the records of fd, size bytes when opened, from offset *pos on
 * with pread.  Returns 1 when the file ended at a record boundary or
 * yb_capture_packet failed (*ret); 2 when the file was cut short while
 * being read (it ended before size: *pos at the first record not used, the
 * records before were); 0 when libpcap must go on from offset *pos (a
 * record it cuts or refuses, one cut by the end of the file, a read error,
 * or no memory for the buffer). */
static int read_fast(yb_capture *c, int fd, const yb_cap_pcap_fmt *fmt, off_t size, off_t *pos,
                     int *ret)
{
    uint8_t *buf = malloc(FAST_BUF);
    off_t at = *pos; /* file offset of buf[0] */
    size_t have = 0;
    int rc = 0;
    if (!buf)
        return 0;
    for (;;) {
        ssize_t k = pread(fd, buf + have, FAST_BUF - have, at + (off_t)have);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            break; /* libpcap reads it again and reports the error */
        have += (size_t)k;
        if (k == 0 && at + (off_t)have < size) {
            rc = 2; /* shorter than when it was opened */
            break;
        }
        int stop;
        size_t used = yb_cap_pcap_records(c, fmt, buf, have, &stop, ret);
        at += (off_t)used;
        have -= used;
        if (have)
            memmove(buf, buf + used, have);
        if (*ret < 0 || (k == 0 && have == 0)) {
            rc = 1;
            break;
        }
        if (stop || k == 0)
            break; /* a record for libpcap, or one cut by the end of the file */
    }
    *pos = at;
    free(buf);
    return rc;
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
    struct bpf_program prog = {0, NULL};
    if (filter && *filter) {
        if (pcap_compile(p, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) < 0) {
            snprintf(err, errlen, "filter '%s': %s", filter, pcap_geterr(p));
            pcap_close(p);
            free(vbuf);
            return -1;
        }
        if (pcap_setfilter(p, &prog) < 0) {
            snprintf(err, errlen, "filter '%s': %s", filter, pcap_geterr(p));
            pcap_freecode(&prog);
            pcap_close(p);
            free(vbuf);
            return -1;
        }
    }
    int link = pcap_datalink(p), ret = 0, failed = 0;
    struct pcap_pkthdr *h;
    const u_char *data;
    int rc = 0, all_read = 0;
    uint8_t fh[PCAP_FILE_HDR];
    yb_cap_pcap_fmt fmt = {link, (uint32_t)pcap_snapshot(p), 0, prog.bf_insns ? &prog : NULL};
    struct stat fs;
    if (pcap_snapshot(p) > 0 && !pcap_is_swapped(p) && fstat(fileno(f), &fs) == 0 &&
        S_ISREG(fs.st_mode) && pread(fileno(f), fh, sizeof fh, 0) == (ssize_t)sizeof fh &&
        yb_cap_pcap_fast_header(fh, sizeof fh, &fmt) == 0) {
        off_t pos = PCAP_FILE_HDR;
        int fr = read_fast(c, fileno(f), &fmt, fs.st_size, &pos, &ret);
        if (fr == 2) {
            all_read = failed = 1;
            if (warn)
                fprintf(warn, "yangblast: warning: %s: cut short while being read (packets up "
                              "to there were used)\n", path);
        } else if (fr == 1) {
            all_read = 1; /* libpcap has nothing left */
        } else if (fseeko(f, pos, SEEK_SET) != 0) {
            all_read = failed = 1;
            if (warn)
                fprintf(warn, "yangblast: warning: %s: cannot seek: %s (packets up to there were "
                              "used)\n", path, strerror(errno));
        }
    }
    while (ret == 0 && !all_read && (rc = pcap_next_ex(p, &h, &data)) == 1) {
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
    pcap_freecode(&prog);
    pcap_close(p); /* closes f */
    free(vbuf);
    if (ret < 0)
        snprintf(err, errlen, "%s: %s", path, strerror(-ret));
    return ret < 0 ? ret : 0;
}
