#!/bin/bash
# tests/fuzz/run.sh TARGET|PATH/TARGET.fuzz [SEEDDIR...] -- TAP test: builds
# the libFuzzer target TARGET (build.sh) and fuzzes it for FUZZ_SECONDS
# (default 10) from its seeds plus SEEDDIRs: the checked-in files under
# tests/fuzz/seeds/TARGET/, and those tests/fuzz/seeds/TARGET.sh SRCDIR OUTDIR
# makes when a target's seeds are derived from other files of the tree.
# Before fuzzing, every input that once failed (tests/fuzz/regress/TARGET/*,
# and the files in the directories listed in FUZZ_REGRESS) must run clean.  Passes when the target builds, the fuzzer ran and found no
# crash, leak, sanitizer report or hang.  SKIP when clang/libFuzzer is absent.
# `make check` runs it as the log compiler of each tests/fuzz/*.fuzz test.
. "$YB_SRCDIR/tests/lib.sh"
if [ -n "${YB_WRAP:-}" ]; then
    echo "1..0 # SKIP fuzz targets carry their own sanitizers (not run under YB_WRAP)"
    exit 0
fi
TARGET=$(basename "$1" .fuzz); shift
B=${YB_BUILDDIR:-$(dirname "$YB")}
SECS=${FUZZ_SECONDS:-10}
"$YB_SRCDIR/tests/fuzz/build.sh" "$YB_SRCDIR" "$B" "$TARGET" "$T/fuzz_$TARGET" >"$T/build.log" 2>&1
rc=$?
if [ $rc = 77 ]; then
    echo "1..0 # SKIP clang with libFuzzer (libclang-rt-14-dev) not installed"
    exit 0
fi
is "fuzz target $TARGET builds" "$rc" 0 || { sed 's/^/# /' "$T/build.log" | head -20; done_testing; exit; }
for f in "$YB_SRCDIR/tests/fuzz/regress/$TARGET"/* ${FUZZ_REGRESS:+$(for d in $FUZZ_REGRESS; do echo "$d"/*; done)}; do
    [ -f "$f" ] || continue
    "$T/fuzz_$TARGET" "$f" >"$T/regress.log" 2>&1
    rc=$?
    is "regression input $(basename "$f")" "$rc" 0
    [ $rc = 0 ] || tail -20 "$T/regress.log" | sed 's/^/# /'
done
# The working corpus is a scratch copy: new inputs never land in the tree.
mkdir -p "$T/corpus"
for d in "$YB_SRCDIR/tests/fuzz/seeds/$TARGET" "$@"; do
    [ -d "$d" ] && cp -r "$d"/. "$T/corpus/"
done
G=$YB_SRCDIR/tests/fuzz/seeds/$TARGET.sh
[ ! -x "$G" ] || check "seeds made by seeds/$TARGET.sh" "$G" "$YB_SRCDIR" "$T/corpus"
# shellcheck disable=SC2046
"$T/fuzz_$TARGET" $(sed 's/#.*//' "$YB_SRCDIR/tests/fuzz/$TARGET.fuzz" | tr -s ' \t' '\n' | grep -- '^-' |
                   sed "s|^-dict=|-dict=$YB_SRCDIR/tests/fuzz/|") \
    -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$T/" "$T/corpus" >"$T/fuzz.log" 2>&1
rc=$?
is "fuzzing $TARGET ${SECS}s: no crash, leak or hang" "$rc" 0
if [ $rc != 0 ]; then
    tail -40 "$T/fuzz.log" | sed 's/^/# /'
    for a in "$T"/crash-* "$T"/leak-* "$T"/timeout-* "$T"/oom-*; do
        [ -f "$a" ] && { diag "artifact $(basename "$a"):"; od -An -tx1 "$a" | head -8 | sed 's/^/#  /'; }
    done
fi
like "fuzzer ran" "$(tail -12 "$T/fuzz.log")" 'Done [0-9]+ runs'
diag "$(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$T/fuzz.log") $(grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$T/fuzz.log" | tail -1)"
done_testing
