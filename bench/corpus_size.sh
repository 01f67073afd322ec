#!/bin/bash
# bench/corpus_size.sh [-n COUNT] [-r ROUNDS] [-l "LEVELS"] [YANGBLAST]
#
# What the zstd level of a corpus costs and gives, on the bundled corpora's
# workload (`synth acl --count COUNT --seed 1`, default 1000, RESTCONF and
# gNMI): per level, the file size and its ratio to the same records as
# gzip -9'd JSON lines (`corpus cat | gzip -9`, the peer), the CPU time of
# synth at that level and of reading every record back (`corpus info`,
# what a replay's reader does).  Times are min..max over ROUNDS (default
# 3); sizes do not vary.  A second table compresses the same decompressed
# stream with the zstd CLI, with and without long-distance matching
# (--long=21, the reader's 2 MiB window), at the same levels.
#
# The records are checked to be identical at every level (`corpus cat`
# digests); the script exits non-zero when they differ.  Last, synth's
# rate at its default level over ROUNDS runs of --count $SYNTH_N (default
# 1000000), RESTCONF then gNMI (a SetRequest per set): records per second
# of wall time (what the target means: 1M records in 5 s) and per CPU
# second of all its threads.  Targets: corpus
# <= 0.6x gzip -9 JSON lines; reading no slower than at level 3; synth >=
# 200,000 records/s.
set -u
N=1000 ROUNDS=3 LEVELS="1 3 9 10 12 15 19"
while getopts "n:r:l:" o; do
    case $o in
    n) N=$OPTARG ;;
    r) ROUNDS=$OPTARG ;;
    l) LEVELS=$OPTARG ;;
    *) echo "usage: $0 [-n COUNT] [-r ROUNDS] [-l LEVELS] [YANGBLAST]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
YB=$(realpath "${1:-${YB:-./yangblast}}")
[ -x "$YB" ] || { echo "no yangblast binary at $YB" >&2; exit 2; }
for t in zstd gzip /usr/bin/python3; do
    command -v "$t" >/dev/null || { echo "$t not installed" >&2; exit 2; }
done
W=$(mktemp -d "${TMPDIR:-/tmp}/yb-bench-size.XXXXXX")
trap 'rm -rf "$W"' EXIT
export SOURCE_DATE_EPOCH=1767225600
# cpu CMD...: runs CMD (stdout discarded), prints its user+sys CPU seconds
# (getrusage of the child: microseconds, not /usr/bin/time's centiseconds)
cpu() {
    /usr/bin/python3 -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.4f" % (r.ru_utime + r.ru_stime))' "$@"
}
echo "corpus_size: synth acl --count $N --seed 1 --level L; $ROUNDS rounds"
echo "machine: $(nproc) CPUs, no CPU pinning; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
fail=0
for proto in restconf gnmi; do
    # the reference at level 3: its decompressed stream is the records'
    # entries as they are (format 1), what the zstd CLI lines compress
    "$YB" synth acl --proto "$proto" --count "$N" --seed 1 --level 3 -o "$W/ref.ybc" || exit 2
    "$YB" corpus cat "$W/ref.ybc" >"$W/ref.jsonl" || exit 2
    want=$(sha256sum <"$W/ref.jsonl")
    gz=$(gzip -9 -c "$W/ref.jsonl" | wc -c)
    zstd -d -q -c "$W/ref.ybc" >"$W/ref.raw" || exit 2
    echo
    echo "$proto: $(wc -c <"$W/ref.raw") bytes of records; JSON lines $(wc -c <"$W/ref.jsonl"), gzip -9 $gz bytes"
    printf '%-6s %10s %8s %16s %16s\n' level bytes "x gzip" "synth CPU s" "read CPU s"
    for l in $LEVELS; do
        : >"$W/s.t"; : >"$W/r.t"
        for r in $(seq "$ROUNDS"); do
            cpu "$YB" synth acl --proto "$proto" --count "$N" --seed 1 --level "$l" \
                -o "$W/l.ybc" >>"$W/s.t" || exit 2
            cpu "$YB" corpus info "$W/l.ybc" >>"$W/r.t" || exit 2
        done
        [ "$("$YB" corpus cat "$W/l.ybc" | sha256sum)" = "$want" ] ||
            { echo "level $l: records differ"; fail=1; }
        sz=$(wc -c <"$W/l.ybc")
        printf '%-6s %10d %8s %16s %16s\n' "$l" "$sz" "$(awk -v a="$sz" -v b="$gz" 'BEGIN{printf "%.3f", a/b}')" \
            "$(sort -n "$W/s.t" | sed -n '1p;$p' | paste -sd' ' | awk '{print $1".."$2}')" \
            "$(sort -n "$W/r.t" | sed -n '1p;$p' | paste -sd' ' | awk '{print $1".."$2}')"
    done
    echo "zstd CLI on the same stream (x gzip -9): level, plain, --long=21"
    for l in $LEVELS; do
        a=$(zstd -q -c "-$l" --zstd=wlog=21 "$W/ref.raw" | wc -c)
        b=$(zstd -q -c "-$l" --long=21 "$W/ref.raw" | wc -c)
        awk -v l="$l" -v a="$a" -v b="$b" -v g="$gz" \
            'BEGIN{printf "  %-4s %9d (%.3f) %9d (%.3f)\n", l, a, a/g, b, b/g}'
    done
done
# synth's rate at its default level: records per second of wall time (the
# target: 1M records in 5 s on this machine, zstd compressing in worker
# threads beside the generator) and per CPU second (all threads)
#
# The output goes to the bench's temporary directory (the file system of
# $TMPDIR) and synth fsyncs it before its rename: its wall time includes
# writing the file.  A first run writing a new file of that size can take
# several times longer with the same CPU (seen: 26 s instead of 6, the
# page cache's writeback of ~330 MB competing), a machine's state rather
# than synth's: so one run is made first, untimed in the ranges (its wall
# time printed apart), and each timed round replaces that file, as a
# corpus regenerated in place is.
SN=${SYNTH_N:-1000000}
# rate PROTO: the rounds of synth acl --proto PROTO --count $SN, printed
rate() {
    : >"$W/rate"; : >"$W/rate.load"
    for r in 0 $(seq "$ROUNDS"); do
        /usr/bin/python3 -c '
import resource, subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
w = time.monotonic() - t
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.4f %.4f" % (w, r.ru_utime + r.ru_stime))' "$YB" synth acl --proto "$1" --count "$SN" \
            -o "$W/rate.ybc" >"$W/rate.one" || exit 2
        if [ "$r" = 0 ]; then
            first=$(cat "$W/rate.one")
            echo "first run (a new file): $first (wall s, CPU s); load average $(cut -d' ' -f1 /proc/loadavg)" >"$W/rate.first"
            continue
        fi
        cat "$W/rate.one" >>"$W/rate"
        echo "load average: $(cut -d' ' -f1 /proc/loadavg)" >>"$W/rate.load"
    done
    rm -f "$W/rate.ybc"
    echo
    awk -v n="$SN" -v p="$1" '
        NR == 1 || $1 < w0 { w0 = $1 } NR == 1 || $1 > w1 { w1 = $1 }
        NR == 1 || $2 < c0 { c0 = $2 } NR == 1 || $2 > c1 { c1 = $2 }
        END {
            printf "synth acl --proto %s --count %d (default level): wall %.2f..%.2f s, %.0f..%.0f records/s (target 200000/s: 1M in 5 s)\n", p, n, w0, w1, n / w1, n / w0
            printf "  CPU (all threads) %.2f..%.2f s, %.0f..%.0f records per CPU second\n", c0, c1, n / c1, n / c0
        }' "$W/rate"
    sed 's/^/  /' "$W/rate.load" | paste -sd' '
    sed 's/^/  /' "$W/rate.first"
}
rate restconf
rate gnmi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $fail
