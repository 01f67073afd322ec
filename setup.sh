#!/bin/bash
# yangblast set-up on a Debian 12 machine (as root): installs the Debian
# packages it lacks, builds from scratch, then
#   ./setup.sh demo   runs the demo (the main job), or
#   ./setup.sh test   runs the whole test suite and ends with
#                     "tests: N passed, N failed" (exit 1 on any failure
#                     or when nothing ran), or
#   ./setup.sh test valgrind
#                     runs it under valgrind on a build without sanitizers
#                     (make check-valgrind, in build-valgrind/; exit 1 when
#                     valgrind reports memory errors or leaks).
set -euo pipefail
cd "$(dirname "$0")"
mode=${1:-demo}
variant=${2:-}
case "$mode$variant" in demo|test|build|testvalgrind) ;;
*) echo "usage: $0 demo|test|build, or $0 test valgrind" >&2; exit 2 ;; esac

BUILD_PKGS="gcc make autoconf automake pkg-config libc6-dev
  libuv1-dev libnghttp2-dev libssl-dev libprotobuf-c-dev protobuf-c-compiler
  libzstd-dev libpcap-dev libhttp-parser-dev libjansson-dev zlib1g-dev libyaml-dev
  libcmocka-dev liburing-dev openssl ca-certificates"
TEST_PKGS="protobuf-compiler python3 python3-grpcio python3-protobuf
  nginx-light nghttp2-client nghttp2-server curl tcpdump tshark wrk
  valgrind procps iproute2 groff-base python3-h2 python3-yaml python3-cryptography clang libclang-rt-14-dev time
  chromium prometheus python3-prometheus-client ansible strace"

want="$BUILD_PKGS"
[ "$mode" = test ] && want="$want $TEST_PKGS"
missing=""
for p in $want; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "== installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends $missing
fi

jobs=$(nproc 2>/dev/null || echo 2)
echo "== building"
autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
if [ "$variant" = valgrind ]; then
    # valgrind cannot run sanitizer-instrumented code: a plain build.
    rm -rf build-valgrind && mkdir build-valgrind && cd build-valgrind
    ../configure -q && make -j"$jobs" >/dev/null
    echo "== running the test suite under valgrind (slow: about half an hour)"
    exec make -j"$jobs" check-valgrind
fi
if [ "$mode" = test ]; then
    # The suite runs on a strict, sanitizer-instrumented build.  A build
    # that fails is a failed test, reported in the same closing line.
    rm -rf build-test && mkdir build-test && cd build-test
    if ! { ../configure -q --enable-werror --enable-sanitizers && make -j"$jobs" >/dev/null; }; then
        echo "== the build failed"
        echo "tests: 0 passed, 1 failed"
        exit 1
    fi
    echo "== running the test suite"
    set +e
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 make -j"$jobs" check >check.out 2>&1
    set -e
    log=test-suite.log
    grep -E '^(PASS|FAIL|ERROR|XPASS|SKIP|XFAIL):' check.out || true
    num() { sed -n "s/^# $1: *\([0-9]*\).*/\1/p" "$log" | head -1; }
    pass=$(num PASS); fail=$(num FAIL); err=$(num ERROR); xpass=$(num XPASS)
    pass=${pass:-0}; failed=$(( ${fail:-0} + ${err:-0} + ${xpass:-0} ))
    if [ "$failed" -ne 0 ] || [ "$pass" -eq 0 ]; then
        echo "== failures (from $PWD/$log):"
        awk '/^(FAIL|ERROR|XPASS)|^not ok/' "$log" | head -50
        grep -B2 -A25 -E '^(not ok|ERROR)' tests/*/*.log 2>/dev/null | head -200 || true
    fi
    echo "tests: $pass passed, $failed failed"
    [ "$failed" -eq 0 ] && [ "$pass" -gt 0 ]
    exit $?
fi

mkdir -p build && cd build
[ -f Makefile ] || ../configure -q
make -j"$jobs" >/dev/null
[ "$mode" = build ] && exit 0
exec ../demo/demo.sh "$PWD/yangblast"
