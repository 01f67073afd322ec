#!/bin/bash
# tests/fuzz/build.sh SRCDIR BUILDDIR OUT -- builds the capture pipeline's
# libFuzzer target (tests/fuzz/fuzz_capture.c) with clang, ASan and UBSan.
# BUILDDIR must be a configured build tree (config.h, generated protobuf
# sources).  Exits 77 when clang or its libFuzzer runtime is missing.
set -eu
S=$1 B=$2 OUT=$3
CC=${FUZZ_CC:-clang}
command -v "$CC" >/dev/null || exit 77
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n){(void)d;(void)n;return 0;}' \
    >"$OUT.probe.c"
"$CC" -fsanitize=fuzzer "$OUT.probe.c" -o "$OUT.probe" 2>/dev/null || { rm -f "$OUT.probe"*; exit 77; }
rm -f "$OUT.probe"*
for f in src/corpus/corpus.pb-c.c src/gnmi/gnmi.pb-c.c src/gnmi/gnmi_ext.pb-c.c; do
    [ -f "$B/$f" ] || make -C "$B" "$f" >/dev/null
done
PKGS="libnghttp2 libprotobuf-c libzstd jansson openssl libpcap"
# shellcheck disable=SC2046
"$CC" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$B" -I"$S/src" -I"$B/src" $(pkg-config --cflags $PKGS) \
    "$S/tests/fuzz/fuzz_capture.c" \
    "$S"/src/capture/capture.c "$S"/src/capture/decode.c "$S"/src/capture/reasm.c \
    "$S"/src/capture/h1x.c "$S"/src/capture/h2x.c "$S"/src/capture/redact.c \
    "$S"/src/capture/pcap_in.c "$S"/src/capture/tls_decrypt.c \
    "$S"/src/corpus/corpus.c "$S"/src/codec/h1.c "$S"/src/gnmi/gnmi_msg.c "$S"/src/util/util.c \
    "$B"/src/corpus/corpus.pb-c.c "$B"/src/gnmi/gnmi.pb-c.c "$B"/src/gnmi/gnmi_ext.pb-c.c \
    -o "$OUT" $(pkg-config --libs $PKGS) -lhttp_parser -lm
