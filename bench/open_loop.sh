#!/bin/bash
# bench/open_loop.sh -- the open loop's cost and ceiling against the closed
# loop, RESTCONF over HTTP/1.1 to `yangblast serve --sink` on loopback.
#
# Each round runs, back to back:
#   closed: yangblast run CORPUS -c C -t 1 -D S           (as fast as it goes)
#   open:   yangblast run CORPUS -c 128 -t 1 --rate R -D S  (R = the closed
#           loop's throughput in that round, or -R RATE; -o sets the -c)
# and prints each one's client CPU per request (rusage of the process,
# microseconds), its throughput and the ratio open/closed (target <= 1.5 at
# 10k/s).  A closed loop's CPU per request depends on how many responses
# one wake-up finds, so the two are compared at the same throughput.  No
# -c brings the closed loop down to 10k/s against a sink that answers at
# once (on the 2-core bench VM -c 1 runs at 23,000-27,000/s on io_uring);
# -S DUR gives the sink that service time (`serve --sink --service-time
# fixed:DUR`, exact to a wake-up), for both loops, so that -c 1 -S 60us
# runs the closed loop near 10k/s and -R 10000 then compares the two at
# the same throughput against the same target.  Without -S and -R the
# ratio is at the closed loop's own throughput.
#
# Then (-m) it looks for the highest open-loop rate held: it tries rates at
# 50 %, 60 %, ... 100 % of the closed loop's best throughput and reports the
# highest whose achieved rate (requests the server counted, over the run's
# duration) is within 0.2 % of the target with send lateness p99 <= 1 ms
# (target: >= 0.8 x the closed loop's maximum).  Each row also shows the
# two parts of that lateness (the report's generator_lateness and
# session_wait): the generator's own, from the due time until it handed
# the request over, and the wait for a free session (all -c busy: the
# server's answers, or the machine, set the pace).  The open loop's
# sessions (-o, default 128) must cover the rate times the answers' time,
# stalls included: on the 2-vCPU bench VM either vCPU stops for 2-5 ms
# about once a second, and at 61,000/s 64 sessions are busy after 1 ms.
# It opens them before its clock starts (e44c2eb).
#
# Every run gets a fresh server, started with --stats, whose own count of
# requests must equal the client's completed ones.  Server on CPU 0, client
# on CPU 1 (taskset); the load average is printed before and after.
#
# Usage: bench/open_loop.sh [-d SECONDS] [-r ROUNDS] [-R RATE] [-c CONNS] [-o CONNS] [-S DUR] [-m] [YANGBLAST]
#   (-c: the closed loop's connections, default 4; -o: the open loop's,
#   default 128; -S: the sink's service time, default none; the -m search
#   uses the best closed-loop throughput of the rounds)
# Never fails on the numbers; exits non-zero when a run could not be made
# or the counts disagree.
set -u
secs=5 rounds=3 rate= c=4 ocs=128 search= svc=
while getopts d:r:R:c:o:S:m o; do
    case $o in
    d) secs=$OPTARG ;; r) rounds=$OPTARG ;; R) rate=$OPTARG ;; c) c=$OPTARG ;; m) search=1 ;;
    o) ocs=$OPTARG ;; S) svc=$OPTARG ;;
    *) echo "usage: $0 [-d SECONDS] [-r ROUNDS] [-R RATE] [-c CONNS] [-o CONNS] [-S DUR] [-m] [YANGBLAST]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [ -n "$search" ] && [ -n "$svc" ]; then
    echo "$0: -m looks for the highest rate against the sink's own ceiling: without -S" >&2
    exit 2
fi
YB=${1:-${YB:-./yangblast}}
PY=/usr/bin/python3
[ -x "$YB" ] || { echo "$0: $YB: not an executable yangblast" >&2; exit 2; }
command -v taskset >/dev/null || { echo "$0: taskset missing (Debian: util-linux)" >&2; exit 2; }
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
W=$(mktemp -d "${TMPDIR:-/tmp}/yb-open.XXXXXX")
trap 'bench_sink_stop; rm -rf "$W"' EXIT
"$YB" synth acl --op get -n 1000 --scheme http -o "$W/g.ybc" >/dev/null || exit 1

# one_run NAME ARGS...: a fresh sink, one yangblast run against it; sets
# cpu_us (per request), tput (completed/s), served (the server's count),
# late99 (send lateness p99, us), gen99 and wait99 (its two parts' p99:
# the generator's own lateness, the wait for a free session), ach (served
# / duration, /s).
one_run() {
    local name=$1
    shift
    bench_sink_start "$W" ${svc:+--service-time "fixed:$svc"} || return 1
    taskset -c 1 "$YB" run "$W/g.ybc" --target "$SINK_URL" -t 1 -D "${secs}s" -q --json "$W/o.json" "$@" \
        >"$W/run.out" 2>&1 || { echo "# $name failed:"; sed 's/^/#   /' "$W/run.out"; return 1; }
    bench_sink_stop
    read -r cpu_us tput served late99 gen99 wait99 ach errs < <($PY - "$W/o.json" "$W/st.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1])); st = json.load(open(sys.argv[2]))
s = d['summary']; served = st['requests']['restconf']['total']; L = d['latency_us']
print('%.2f %.0f %d %d %d %d %.1f %d' % (d['cpu']['per_request_us'], s['requests_completed'] / s['duration_s'],
      served, L['lateness']['p99'], L['generator_lateness']['p99'], L['session_wait']['p99'],
      served / s['duration_s'],
      s['requests_error'] + (served != s['requests_completed'])))
PYEOF
)
    if [ "$errs" != 0 ]; then
        echo "# $name: errors, or the server counted $served requests and the client otherwise"
        return 1
    fi
}

echo "# $(nproc) CPUs; server on CPU 0, client on CPU 1; ${secs}s a run; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# server: $YB serve --sink${svc:+ --service-time fixed:$svc}"
echo "# closed: $YB run g.ybc --target URL -c $c -t 1 -D ${secs}s"
echo "# open:   $YB run g.ybc --target URL -c $ocs -t 1 --rate ${rate:-CLOSED_THROUGHPUT} -D ${secs}s"
printf '%-5s %12s %12s %12s %12s %13s %8s\n' round "closed us/rq" "closed rq/s" "open us/rq" "open rq/s" \
    "open late99" ratio
ratios= best=0
for r in $(seq "$rounds"); do
    one_run closed -c "$c" || exit 1
    cc=$cpu_us ct=$tput
    [ "${tput%.*}" -gt "$best" ] && best=${tput%.*}
    one_run open -c "$ocs" --rate "${rate:-${ct%.*}}" --max-backlog 100000 || exit 1
    oc=$cpu_us ot=$tput ol=$late99
    ratio=$($PY -c "print('%.2f' % ($oc / $cc))")
    ratios="$ratios $ratio"
    printf '%-5s %12s %12s %12s %12s %10s us %8s\n' "$r" "$cc" "$ct" "$oc" "$ot" "$ol" "$ratio"
done
echo "ratio open/closed CPU per request: $(bench_range $ratios) (target <= 1.5)"
if [ -n "$search" ]; then
    echo "# closed loop's best: $best requests/s; open loop at fractions of it (-c $ocs):"
    printf '%-8s %10s %10s %9s %12s %s  (%s, %s)\n' fraction target achieved "error %" "late p99" held \
        "of which generator p99" "session wait p99"
    held=0
    for f in 50 60 70 80 90 100; do
        tr=$((best * f / 100))
        one_run "open $tr/s" -c "$ocs" --rate "$tr" --max-backlog 1000000 || exit 1
        ok=$($PY -c "print(int(abs($ach - $tr) <= 0.002 * $tr and $late99 <= 1000))")
        printf '%-8s %10s %10s %9s %9s us %-4s (%s us, %s us)\n' "$f%" "$tr" "$ach" \
            "$($PY -c "print('%.3f' % (100 * ($ach - $tr) / $tr))")" "$late99" "$([ "$ok" = 1 ] && echo yes || echo no)" \
            "$gen99" "$wait99"
        [ "$ok" = 1 ] && held=$tr
    done
    echo "highest rate held: $held/s = $($PY -c "print('%.2f' % ($held / $best))") x the closed loop's best (target >= 0.8)"
fi
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
