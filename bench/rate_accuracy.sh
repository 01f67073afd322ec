#!/bin/bash
# Rate accuracy of yangblast's open loop (issue: load models): achieved vs
# target rate and send lateness p50/p99/max at 1k, 10k and 50k requests/s
# against `yangblast serve --sink` on loopback, RESTCONF and gNMI.
# Targets: rate error <= 0.2 %, send lateness p99 <= 100 us where the
# machine allows.  The achieved rate is what the server (a fresh sink per
# point, --stats) received over the run's duration, beside the client's
# own count of requests sent.  wrk2's own expectation for comparison: it corrects for
# coordinated omission the same way but schedules with 1 ms timers, so its
# per-request send jitter is up to ~1 ms.  Prints figures; never fails on
# them.
#   usage: bench/rate_accuracy.sh [path/to/yangblast] [seconds-per-point]
set -u
YB=${1:-./build/yangblast}
SECS=${2:-5}
PY=/usr/bin/python3
T=$(mktemp -d /tmp/yb-rate.XXXXXX)
SPID=
trap '[ -n "$SPID" ] && { kill $SPID 2>/dev/null; wait $SPID 2>/dev/null; }; rm -rf "$T"' EXIT

# serve_start: a fresh sink for one point (its --stats count is the point's
# own), RURL/GURL set; serve_stop writes $T/st.json.
serve_start() {
    rm -f "$T/serve.out" # (the last server's line must not be taken for this one's)
    taskset -c 0 "$YB" serve --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --sink --stats "$T/st.json" \
        > "$T/serve.out" 2>&1 &
    SPID=$!
    for _ in $(seq 50); do grep -q '^serve:' "$T/serve.out" && break; sleep 0.1; done
    read -r _ _ RURL _ GURL < <(grep '^serve:' "$T/serve.out" | head -1)
    [ -n "${GURL:-}" ] || { echo "serve did not start"; cat "$T/serve.out"; exit 1; }
}
serve_stop() { kill -INT "$SPID"; wait "$SPID"; SPID=; }
"$YB" synth acl --proto restconf -n 1000 -o "$T/r.ybc" >/dev/null
"$YB" synth acl --proto gnmi -n 1000 -o "$T/g.ybc" >/dev/null

echo "# $(nproc) CPUs, server on CPU 0, a one-thread client on CPU 1; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-9s %8s %6s %10s %10s %9s %9s %10s %10s %10s %8s\n' protocol target spin achieved "error %" \
    sent served "late p50" "late p99" "late max" "cpu %"
for proto in restconf gnmi; do
    if [ $proto = restconf ]; then corpus=$T/r.ybc; extra="-c 64"
    else corpus=$T/g.ybc; extra="-c 8 -m 16"; fi
    for rate in 1000 10000 50000; do
        threads=1; [ $rate -ge 50000 ] && threads=2
        spins="0"; [ $rate -le 10000 ] && spins="0 100us"
        for spin in $spins; do
            serve_start
            url=$RURL; [ $proto = gnmi ] && url=$GURL
            pin="taskset -c 1"; [ $threads -gt 1 ] && pin=
            $pin "$YB" run "$corpus" --target "$url" $extra -t $threads --rate $rate -D ${SECS}s \
                --spin $spin --max-backlog 100000 -q --json "$T/o.json" >/dev/null 2>&1
            serve_stop
            $PY - "$T/o.json" "$T/st.json" $proto $rate $spin <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1])); st = json.load(open(sys.argv[2]))
proto, rate, spin = sys.argv[3], float(sys.argv[4]), sys.argv[5]
s, l = d['summary'], d['latency_us']['lateness']
served = st['requests'][proto]['total']
# achieved: what the server received over the run's duration (a request
# the client counted as started but the server never saw does not count)
ach = served / s['duration_s'] if s['duration_s'] else 0
print('%-9s %8d %6s %10.1f %10.3f %9d %9d %7d us %7d us %7d us %7.0f%s' % (proto, rate, spin, ach,
      100 * (ach - rate) / rate, s['requests_started'], served, l['p50'], l['p99'], l['max'],
      100 * d['self_check']['cpu_utilization'],
      '' if served == s['requests_started'] else '  (sent != served)'))
PYEOF
        done
    done
done
echo "(achieved = requests the server received / duration; sent = the client's started;"
echo " lateness = send time - due time; wrk2 for comparison schedules with 1 ms timer granularity)"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
