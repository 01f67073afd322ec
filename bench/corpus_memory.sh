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
# <= 3 us).  The server's own request count must equal the client's.
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
W=$(mktemp -d "${TMPDIR:-/tmp}/yb-mem.XXXXXX")
spid=
trap '[ -n "$spid" ] && { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; }; rm -rf "$W"' EXIT
if [ -z "$big" ]; then
    big=$W/big.ybc
    t0=$(date +%s.%N)
    "$YB" synth acl -n "$N" --scheme http -o "$big" >/dev/null || exit 1
    echo "# synth of $N records: $($PY -c "print('%.1f' % ($(date +%s.%N) - $t0))") s"
fi
"$YB" synth acl -n 1000 --scheme http -o "$W/small.ybc" >/dev/null || exit 1

# one_run CORPUS: sets rss_mb, cpu_us (per request) of replaying CORPUS for N requests.
one_run() {
    taskset -c 0 "$YB" serve --sink --restconf 127.0.0.1:0 --gnmi off --stats "$W/st.json" \
        >"$W/serve.out" 2>&1 &
    spid=$!
    for _ in $(seq 50); do grep -q '^serve:' "$W/serve.out" && break; sleep 0.1; done
    local url
    url=$(awk '/^serve:/ { print $3; exit }' "$W/serve.out")
    [ -n "$url" ] || { echo "# serve did not start"; cat "$W/serve.out"; return 1; }
    taskset -c 1 $PY -c '
import os, sys
pid = os.fork()
if pid == 0:
    fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1); os.dup2(fd, 2)
    os.execvp(sys.argv[3], sys.argv[3:])
_, st, ru = os.wait4(pid, 0)
open(sys.argv[1], "w").write("%d %.4f\n" % (ru.ru_maxrss, ru.ru_utime + ru.ru_stime))
sys.exit(0 if os.waitstatus_to_exitcode(st) == 0 else 1)
' "$W/ru" "$W/run.out" "$YB" run "$1" --target "$url" -c 10 -t 1 -n "$N" -q --json "$W/o.json" ||
        { echo "# run failed:"; sed 's/^/#   /' "$W/run.out"; return 1; }
    kill -INT "$spid"; wait "$spid"; spid=
    read -r rss_mb cpu_us < <($PY - "$W/o.json" "$W/st.json" "$W/ru" "$N" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1])); st = json.load(open(sys.argv[2]))
rss, cpu = open(sys.argv[3]).read().split()
s = d['summary']; n = int(sys.argv[4])
ok = s['requests_completed'] == n and s['requests_error'] == 0 and \
     st['requests']['restconf']['total'] == n
print('%.1f %.2f' % (int(rss) / 1024, float(cpu) * 1e6 / n) if ok else 'BAD BAD')
PYEOF
)
    [ "$rss_mb" != BAD ] || { echo "# $1: not $N requests completed without errors and counted by the server"; return 1; }
}

echo "# $(nproc) CPUs; server on CPU 0, client on CPU 1; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# each: $YB run CORPUS --target URL -c 10 -t 1 -n $N   (big: $N records, small: 1000)"
printf '%-5s %12s %12s %12s %12s %10s %12s\n' round "big RSS MB" "big us/rq" "small RSS MB" "small us/rq" \
    "RSS ratio" "extra us/rq"
rr= ex=
for r in $(seq "$rounds"); do
    for which in big small; do
        [ $((r % 2)) = 0 ] && which=$([ $which = big ] && echo small || echo big)
        if [ $which = big ]; then one_run "$big" || exit 1; br=$rss_mb bc=$cpu_us
        else one_run "$W/small.ybc" || exit 1; sr=$rss_mb sc=$cpu_us; fi
    done
    ratio=$($PY -c "print('%.2f' % ($br / $sr))") extra=$($PY -c "print('%.2f' % ($bc - $sc))")
    rr="$rr $ratio" ex="$ex $extra"
    printf '%-5s %12s %12s %12s %12s %10s %12s\n' "$r" "$br" "$bc" "$sr" "$sc" "$ratio" "$extra"
done
rng() { $PY -c "import sys,statistics as st; v=sorted(map(float,sys.argv[1:])); print('%.2f..%.2f, median %.2f' % (v[0], v[-1], st.median(v)))" "$@"; }
echo "peak RSS big/small: $(rng $rr) (target <= 1.5, big <= 64 MB)"
echo "extra CPU per request streaming: $(rng $ex) us (target <= 3)"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
