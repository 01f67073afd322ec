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
PKGS="libuv libnghttp2 libprotobuf-c libzstd jansson openssl libpcap zlib yaml-0.1 liburing"
CFLAGS_F=(-std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined
          -fno-sanitize-recover=undefined -I"$B" -I"$S/src" -I"$B/src" -I"$S/tests/fuzz")
LIBS_F=($(pkg-config --libs $PKGS) -lhttp_parser -lm -lpthread)
# shellcheck disable=SC2046
"$CC" "${CFLAGS_F[@]}" $(pkg-config --cflags $PKGS) "${SRCS[@]}" -o "$OUT" "${LIBS_F[@]}" \
    2>"$OUT.link.log" && { cat "$OUT.link.log" >&2; rm -f "$OUT.link.log"; exit 0; }
# The listed sources did not link on their own: a module they use came to
# depend on one the spec does not list.  The whole library, built once per
# build tree with the fuzzer's flags (fuzz-lib/, under a lock: make check
# builds targets in parallel), resolves the rest -- the linker takes from
# it only what is missing, so the listed sources (and stubs) still win.
grep -q 'undefined reference' "$OUT.link.log" || { cat "$OUT.link.log" >&2; rm -f "$OUT.link.log"; exit 1; }
rm -f "$OUT.link.log"
L=$B/fuzz-lib
mkdir -p "$L"
exec 9>"$L/lock"
flock 9
LIBSRCS=$(printf 'yb-print-lib:\n\t@echo $(libyangblast_a_SOURCES)\n' |
          make -s -C "$B" -f Makefile -f - yb-print-lib)
# A header newer than the last build makes every object stale.
[ ! -f "$L/stamp" ] || [ -z "$(find "$S/src" "$B/src" -name '*.h' -newer "$L/stamp" | head -1)" ] ||
    rm -f "$L"/*.o
touch "$L/stamp.new"
OBJS=()
for f in $LIBSRCS src/corpus/corpus.pb-c.c src/gnmi/gnmi.pb-c.c src/gnmi/gnmi_ext.pb-c.c; do
    case $f in *.c) ;; *) continue ;; esac
    src=$S/$f
    case $f in *.pb-c.c) [ -f "$B/$f" ] || make -C "$B" "$f" >/dev/null; src=$B/$f ;; esac
    o=$L/$(echo "$f" | tr / _ | sed 's/\.c$/.o/')
    OBJS+=("$o")
    [ "$o" -nt "$src" ] && continue
    # shellcheck disable=SC2046
    "$CC" "${CFLAGS_F[@]/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,}" $(pkg-config --cflags $PKGS) \
        -c "$src" -o "$o.tmp" && mv "$o.tmp" "$o"
done
rm -f "$L/libyb_fuzz.a.tmp"
mv "$L/stamp.new" "$L/stamp"
ar rcs "$L/libyb_fuzz.a.tmp" "${OBJS[@]}" && mv "$L/libyb_fuzz.a.tmp" "$L/libyb_fuzz.a"
# shellcheck disable=SC2046
"$CC" "${CFLAGS_F[@]}" $(pkg-config --cflags $PKGS) "${SRCS[@]}" "$L/libyb_fuzz.a" \
    -o "$OUT" "${LIBS_F[@]}"
