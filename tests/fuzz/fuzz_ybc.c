/* libFuzzer target: the .ybc reader, and prepare of every record it
 * accepts for both codecs (HTTP/1.1 and HTTP/2/gRPC).
 *
 * Byte 0 says what the rest is: with its low bit clear, a whole .ybc file;
 * set, the decompressed content of one (magic, then length-prefixed
 * entries), which the target compresses first so that the fuzzer mutates
 * records rather than zstd frames.  The file reaches the reader through a
 * memfd (the reader opens paths), so the summary at its end is read too.
 * Oracles: a summary's protocol is in range; a record the reader returns passes
 * yb_request_problem (the reader refuses what the writer would); preparing
 * it either succeeds or fails with an error code, never crashes; a second
 * reader that leaves every entry to protobuf-c (yb_corpus_reader_protobuf_only)
 * reads the same records and fails at the same one with the same message
 * (the reader's own decoder of request entries agrees with protobuf-c). */
#include "config.h"
#include "codec/codec.h"
#include "corpus/corpus.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

static void prepare_with(const yb_codec_ops *ops, const yb_request *r)
{
    static const yb_header extra[] = {{(char *)"x-extra", (uint8_t *)"1", 1}};
    yb_codec_cfg cfg = {.authority = "127.0.0.1:1", .scheme = "http",
                        .auth_header = "Basic dTpw", .user = "u", .password = "p",
                        .extra = extra, .n_extra = 1, .timeout_ns = 1000000000,
                        .max_body = 1 << 20, .streams = 8, .user_agent = "fuzz"};
    yb_prepared p = {0};
    if (ops->prepare(&cfg, r, &p) == 0)
        ops->prepared_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    if (fd < 0 && (fd = memfd_create("ybc", 0)) < 0)
        abort();
    if (size < 1)
        return 0;
    static uint8_t z[1 << 16];
    const uint8_t *file = data + 1;
    size_t len = size - 1;
    if (data[0] & 1) {
        len = ZSTD_compress(z, sizeof z, data + 1, size - 1, 1);
        if (ZSTD_isError(len))
            return 0;
        file = z;
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, file, len, 0) != (ssize_t)len)
        abort();
    char path[64], err[256];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    yb_corpus_reader *rd = yb_corpus_reader_open(path, err, sizeof err);
    if (!rd)
        return 0;
    /* a summary read from the file's end is in range, whatever it says */
    const yb_corpus_summary *s = yb_corpus_reader_summary(rd);
    if (s && (unsigned)s->first > YB_PROTO_HTTP2)
        abort();
    char err2[256];
    yb_corpus_reader *pb = yb_corpus_reader_open(path, err2, sizeof err2);
    if (!pb)
        abort(); /* it opened once */
    yb_corpus_reader_protobuf_only(pb);
    if (data[0] & 2) {
        yb_corpus_reader_drop_redacted(rd);
        yb_corpus_reader_drop_redacted(pb);
    }
    const yb_request *r, *r2;
    int rc, rc2;
    while ((rc = yb_corpus_reader_next(rd, &r, err, sizeof err)) == 1) {
        if (yb_request_problem(r))
            abort(); /* the reader must refuse what the writer would */
        if (yb_corpus_reader_next(pb, &r2, err2, sizeof err2) != 1 || !yb_request_equal(r, r2))
            abort(); /* its own decoder read what protobuf-c did not */
        prepare_with(&yb_h1_client_ops, r);
        prepare_with(&yb_h2_client_ops, r);
    }
    rc2 = yb_corpus_reader_next(pb, &r2, err2, sizeof err2);
    if (rc2 != rc || (rc < 0 && strcmp(err, err2)))
        abort(); /* protobuf-c read on, or failed otherwise */
    yb_corpus_reader_close(pb);
    yb_corpus_reader_close(rd);
    return 0;
}
