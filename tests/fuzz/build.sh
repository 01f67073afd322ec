#!/bin/bash
# tests/fuzz/build.sh SRCDIR BUILDDIR TARGET OUT -- builds the libFuzzer
# target TARGET (tests/fuzz/fuzz_TARGET.c plus the project sources listed in
# tests/fuzz/TARGET.fuzz) with clang, ASan and UBSan into OUT.
# BUILDDIR must be a configured build tree (config.h, generated protobuf
# sources).  Exits 77 when clang or its libFuzzer runtime is missing, 2 when
# TARGET has no .fuzz file.
set -eu
S=$1 B=$2 TARGET=$3 OUT=$4
SPEC=$S/tests/fuzz/$TARGET.fuzz
[ -f "$SPEC" ] || { echo "build.sh: no fuzz target '$TARGET' ($SPEC)" >&2; exit 2; }
CC=${FUZZ_CC:-clang}
command -v "$CC" >/dev/null || exit 77
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n){(void)d;(void)n;return 0;}' \
    >"$OUT.probe.c"
"$CC" -fsanitize=fuzzer "$OUT.probe.c" -o "$OUT.probe" 2>/dev/null || { rm -f "$OUT.probe"*; exit 77; }
rm -f "$OUT.probe"*
# The spec lists sources as words: src/... paths or globs (src/util/*.c);
# the generated protobuf sources (*.pb-c.c) are taken from (and made in) the
# build tree.  Lines starting with '#' are comments, words starting with '-'
# are libFuzzer options (read by run.sh and campaign.sh, ignored here; a
# -dict= file is named relative to tests/fuzz/).
SRCS=("$S/tests/fuzz/fuzz_$TARGET.c")
for w in $(sed 's/#.*//' "$SPEC"); do
    case $w in
    -*) ;;
    *.pb-c.c) [ -f "$B/$w" ] || make -C "$B" "$w" >/dev/null
              SRCS+=("$B/$w") ;;
    *) for f in "$S"/$w; do
           [ -f "$f" ] || { echo "build.sh: $SPEC: no source $w" >&2; exit 2; }
           SRCS+=("$f")
       done ;;
    esac
done
PKGS="libuv libnghttp2 libprotobuf-c libzstd jansson openssl libpcap zlib yaml-0.1"
# shellcheck disable=SC2046
"$CC" -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined -I"$B" -I"$S/src" -I"$B/src" -I"$S/tests/fuzz" \
    $(pkg-config --cflags $PKGS) "${SRCS[@]}" \
    -o "$OUT" $(pkg-config --libs $PKGS) -lhttp_parser -lm -lpthread
