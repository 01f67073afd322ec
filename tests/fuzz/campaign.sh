#!/bin/bash
# tests/fuzz/campaign.sh DURATION [TARGET...] -- a longer fuzzing campaign:
# builds each libFuzzer target (default: every tests/fuzz/*.fuzz) and runs
# it for DURATION (seconds, or with a unit: 90s, 10m, 2h), one after the
# other, then prints per target the executions, the coverage reached
# (edges `cov`, features `ft`), the corpus size and the artifacts found.
# Environment: YB_BUILDDIR, a configured build tree (default: ./build);
# FUZZ_WORKDIR (default: ./fuzz-campaign) keeps each target's binary,
# growing corpus (TARGET/corpus, seeded from tests/fuzz/seeds/TARGET and
# tests/fuzz/seeds/TARGET.sh),
# log and artifacts, so successive campaigns continue where the last ended;
# FUZZ_JOBS runs that many fuzzer processes per target (default 1).
# Exit status: 0 when no target found anything, 1 otherwise, 2 on usage.
set -u
S=$(cd "$(dirname "$0")/../.." && pwd)
usage() { echo "usage: $0 DURATION [TARGET...]   (DURATION: N, Ns, Nm or Nh)" >&2; exit 2; }
[ $# -ge 1 ] || usage
case $1 in
*[0-9]s|*[0-9]) secs=${1%s} ;;
*[0-9]m) secs=$(( ${1%m} * 60 )) ;;
*[0-9]h) secs=$(( ${1%h} * 3600 )) ;;
*) usage ;;
esac
case $secs in ''|*[!0-9]*) usage ;; esac
[ "$secs" -gt 0 ] || usage
shift
if [ $# = 0 ]; then
    set -- $(cd "$S/tests/fuzz" && ls -- *.fuzz | sed 's/\.fuzz$//')
fi
B=$(cd "${YB_BUILDDIR:-build}" 2>/dev/null && pwd) || { echo "$0: no build tree: set YB_BUILDDIR" >&2; exit 2; }
[ -f "$B/config.h" ] || { echo "$0: $B is not a configured build tree (no config.h)" >&2; exit 2; }
W=${FUZZ_WORKDIR:-fuzz-campaign}
mkdir -p "$W" && W=$(cd "$W" && pwd)
jobs=${FUZZ_JOBS:-1}
found=0
printf '%-10s %12s %10s %8s %8s %8s  %s\n' target execs execs/s cov ft corpus artifacts
for t in "$@"; do
    d=$W/$t
    mkdir -p "$d/corpus" "$d/artifacts"
    if ! "$S/tests/fuzz/build.sh" "$S" "$B" "$t" "$d/fuzz_$t" >"$d/build.log" 2>&1; then
        echo "$t: build failed (exit $?), see $d/build.log"; found=1; continue
    fi
    [ -d "$S/tests/fuzz/seeds/$t" ] && cp -rn "$S/tests/fuzz/seeds/$t"/. "$d/corpus/"
    [ -x "$S/tests/fuzz/seeds/$t.sh" ] && "$S/tests/fuzz/seeds/$t.sh" "$S" "$d/corpus"
    # shellcheck disable=SC2046
    "$d/fuzz_$t" $(sed 's/#.*//' "$S/tests/fuzz/$t.fuzz" | tr -s ' \t' '\n' | grep -- '^-' |
                   sed "s|^-dict=|-dict=$S/tests/fuzz/|") \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        -artifact_prefix="$d/artifacts/" "$d/corpus" >"$d/fuzz.log" 2>&1
    execs=$(grep -Eo '^#[0-9]+' "$d/fuzz.log" | tail -1 | tr -d '#')
    cov=$(grep -Eo 'cov: [0-9]+' "$d/fuzz.log" | tail -1 | cut -d' ' -f2)
    ft=$(grep -Eo 'ft: [0-9]+' "$d/fuzz.log" | tail -1 | cut -d' ' -f2)
    n=$(find "$d/corpus" -type f | wc -l)
    arts=$(find "$d/artifacts" -type f | wc -l)
    [ "$arts" = 0 ] || found=1
    printf '%-10s %12s %10s %8s %8s %8s  %s\n' "$t" "${execs:-?}" "$(( ${execs:-0} / secs ))" \
        "${cov:-?}" "${ft:-?}" "$n" "$arts"
done
echo "work directory: $W"
exit $found
