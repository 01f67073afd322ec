#!/bin/bash
# bench/corpus_memory.sh -- peak memory and CPU of replaying a large corpus
# against a small one, for the same number of requests.
#
# Makes (with `yangblast synth acl`, 14.5 KB RESTCONF PATCHes) a corpus of
# -N records (default 1,000,000) and one of 1,000, then in each round
# replays, in alternating order, each for N requests (-n N, -c 10, one
# thread) against a fresh `yangblast serve --sink --stats` on CPU 0, the
# client on CPU 1.  The big corpus is streamed (it is far over the
# 256 MiB prepared-request cache; one pass), the small one is cached and
# cycled.  Prints each run's peak RSS (ru_maxrss of the client) and CPU
# per request (rusage), the ratio of the peaks (target: big <= 64 MB and
# <= 1.5 x small) and the extra CPU per request of streaming (target
# <= 3 us), and that extra split into user and system CPU: the kernel's
# share (the writes, the sink's wake-ups) moves by several us a request
# from minute to minute on a shared host, the user share is what the
# reader and the codec cost.  The server's own request count must equal
# the client's.  Each round also times the reader alone, without a
# network or a server: the user CPU per record of `yangblast corpus info`
# over the big corpus, which decodes every record (its zstd frames, the
# join of skeleton and digits, the entry's view and checks).  It moves
# with the machine's speed, not with the kernel's cost of the sink's
# wake-ups, so a round whose extra is high while the reader alone is not
# says the kernel moved, and one whose reader alone is high says the
# machine ran slow then.
#
# Usage: bench/corpus_memory.sh [-N RECORDS] [-r ROUNDS] [-k CORPUS] [YANGBLAST]
#   -k CORPUS: use this big corpus instead of synthesizing one (synth of
#   1M records takes about a minute)
# Never fails on the numbers; exits non-zero when a run fails or the
# counts disagree.
set -u
N=1000000 rounds=2 big=
while getopts N:r:k: o; do
    case $o in
    N) N=$OPTARG ;; r) rounds=$OPTARG ;; k) big=$OPTARG ;;
    *) echo "usage: $0 [-N RECORDS] [-r ROUNDS] [-k CORPUS] [YANGBLAST]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
YB=${1:-${YB:-./yangblast}}
PY=/usr/bin/python3
[ -x "$YB" ] || { echo "$0: $YB: not an executable yangblast" >&2; exit 2; }
command -v taskset >/dev/null || { echo "$0: taskset missing (Debian: util-linux)" >&2; exit 2; }
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
W=$(mktemp -d "${TMPDIR:-/tmp}/yb-mem.XXXXXX")
trap 'bench_sink_stop; rm -rf "$W"' EXIT
if [ -z "$big" ]; then
    big=$W/big.ybc
    t0=$(date +%s.%N)
    "$YB" synth acl -n "$N" --scheme http -o "$big" >/dev/null || exit 1
    echo "# synth of $N records: $($PY -c "print('%.1f' % ($(date +%s.%N) - $t0))") s"
fi
"$YB" synth acl -n 1000 --scheme http -o "$W/small.ybc" >/dev/null || exit 1

# one_run CORPUS: sets rss_mb, cpu_us, usr_us (per request) of replaying CORPUS for N requests.
one_run() {
    bench_sink_start "$W" || return 1
    bench_rusage "$W/ru" "$W/run.out" "$YB" run "$1" --target "$SINK_URL" -c 10 -t 1 -n "$N" -q \
        --json "$W/o.json" || { echo "# run failed:"; sed 's/^/#   /' "$W/run.out"; return 1; }
    bench_sink_stop
    read -r rss_mb cpu_us usr_us < <($PY - "$W/o.json" "$W/st.json" "$W/ru" "$N" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1])); st = json.load(open(sys.argv[2]))
rss, user, sys_ = open(sys.argv[3]).read().split()
cpu = float(user) + float(sys_)
s = d['summary']; n = int(sys.argv[4])
ok = s['requests_completed'] == n and s['requests_error'] == 0 and \
     st['requests']['restconf']['total'] == n
print('%.1f %.2f %.2f' % (int(rss) / 1024, cpu * 1e6 / n, float(user) * 1e6 / n) if ok else
      'BAD BAD BAD')
PYEOF
)
    [ "$rss_mb" != BAD ] || { echo "# $1: not $N requests completed without errors and counted by the server"; return 1; }
}

# reader_alone: sets rd_us, the user CPU per record of `corpus info` of the big corpus.
reader_alone() {
    bench_rusage "$W/ru" "$W/info.out" "$YB" corpus info "$big" ||
        { echo "# corpus info failed:"; sed 's/^/#   /' "$W/info.out"; return 1; }
    rd_us=$($PY -c "import sys; n = int(sys.argv[2]); print('%.2f' % (float(open(sys.argv[1]).read().split()[1]) * 1e6 / n))" \
        "$W/ru" "$(awk '/^records:/ { print $2 }' "$W/info.out")")
}

echo "# $(nproc) CPUs; server on CPU 0, client on CPU 1; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# each: $YB run CORPUS --target URL -c 10 -t 1 -n $N   (big: $N records, small: 1000)"
echo "# reader alone: user CPU per record of $YB corpus info BIG (on CPU 1)"
printf '%-5s %12s %12s %12s %12s %10s %12s %10s %10s %13s\n' round "big RSS MB" "big us/rq" "small RSS MB" \
    "small us/rq" "RSS ratio" "extra us/rq" "user" "system" "reader alone"
rr= ex= exu= exs= ra=
for r in $(seq "$rounds"); do
    reader_alone || exit 1
    for which in big small; do
        [ $((r % 2)) = 0 ] && which=$([ $which = big ] && echo small || echo big)
        if [ $which = big ]; then one_run "$big" || exit 1; br=$rss_mb bc=$cpu_us bu=$usr_us
        else one_run "$W/small.ybc" || exit 1; sr=$rss_mb sc=$cpu_us su=$usr_us; fi
    done
    ratio=$($PY -c "print('%.2f' % ($br / $sr))") extra=$($PY -c "print('%.2f' % ($bc - $sc))")
    xu=$($PY -c "print('%.2f' % ($bu - $su))") xs=$($PY -c "print('%.2f' % (($bc - $bu) - ($sc - $su)))")
    rr="$rr $ratio" ex="$ex $extra" exu="$exu $xu" exs="$exs $xs" ra="$ra $rd_us"
    printf '%-5s %12s %12s %12s %12s %10s %12s %10s %10s %13s\n' "$r" "$br" "$bc" "$sr" "$sc" "$ratio" \
        "$extra" "$xu" "$xs" "$rd_us"
done
echo "peak RSS big/small: $(bench_range $rr) (target <= 1.5, big <= 64 MB)"
echo "extra CPU per request streaming: $(bench_range $ex) us (target <= 3)"
echo "  of which user: $(bench_range $exu) us, system: $(bench_range $exs) us"
echo "reader alone (corpus info, user CPU per record): $(bench_range $ra) us"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
