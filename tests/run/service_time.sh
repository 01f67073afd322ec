#!/bin/bash
# `serve --service-time` to the microsecond, with and without --sink: an
# answer is never early (every end-to-end latency is at least the service
# time, or the body's per-KiB share of it), and late only by a wake-up,
# not by a rounding to whole milliseconds (a 150 us service time answered
# at a median under 0.9 ms; the millisecond timer it replaced answered
# after 1 ms at the earliest).  --workers holds the sink's answers too.
. "$YB_SRCDIR/tests/lib.sh"
PY=/usr/bin/python3
j() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# one rule per set: the full server's own work stays small beside 150 us
"$YB" synth acl --proto restconf -n 50 -r 1 -o "$T/r.ybc" >/dev/null
"$YB" synth acl --proto gnmi -n 50 -r 1 -o "$T/g.ybc" >/dev/null
"$YB" synth acl --proto gnmi -n 5 -r 50 -o "$T/big.ybc" >/dev/null
# run NAME CORPUS URL ARGS...: a closed loop of one session, JSON in $T/NAME.json.
run() {
    local name=$1 corpus=$2 url=$3; shift 3
    timeout 60 "$YB" run "$corpus" --target "$url" -q --json "$T/$name.json" "$@" \
        >"$T/$name.out" 2>&1
    echo $?
}
# e2e NAME FIELD: the field of the successful requests' end-to-end latency, in us.
e2e() { j "$T/$1.json" "d['latency_us']['e2e']['$2']"; }

for mode in full sink; do
    extra=; [ $mode = sink ] && extra=--sink
    yb_serve "$T/$mode.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 $extra \
        --service-time fixed:150us --stats "$T/$mode.stats.json" ||
        { echo "Bail out! serve $extra did not start"; exit 1; }
    for p in r g; do
        url=$RURL label=RESTCONF
        [ $p = g ] && url=$GURL label=gNMI
        is "$mode $label fixed:150us: exit 0" "$(run $mode$p "$T/$p.ybc" "$url" -c 1 -n 200)" 0
        is "$mode $label fixed:150us: 200 ok" "$(j "$T/$mode$p.json" "d['summary']['requests_ok']")" 200
        min=$(e2e $mode$p min) p50=$(e2e $mode$p p50)
        check "$mode $label fixed:150us: never early (min $min us >= 150)" test "$min" -ge 150
        if [ -z "${YB_WRAP:-}" ]; then
            check "$mode $label fixed:150us: not rounded to a millisecond (p50 $p50 us < 900)" \
                test "$p50" -lt 900
        fi
    done
    yb_serve_stop
    is "$mode: the server answered 200 + 200" \
        "$(j "$T/$mode.stats.json" "d['requests']['restconf']['total'], d['requests']['gnmi']['total']")" \
        "200 200"
done

# The sink charges the per-KiB share on the bytes it received, unparsed.
yb_serve "$T/kb.out" --restconf off --gnmi 127.0.0.1:0 --sink --service-time fixed:0+per-kb:50us ||
    { echo "Bail out! serve --sink per-kb did not start"; exit 1; }
is "sink per-kb: exit 0" "$(run kb "$T/big.ybc" "$GURL" -c 1 -n 10)" 0
is "sink per-kb: 10 ok" "$(j "$T/kb.json" "d['summary']['requests_ok']")" 10
want=$("$YB" corpus cat "$T/big.ybc" | $PY -c '
import base64, json, sys
print(min(len(base64.b64decode(json.loads(l)["body_base64"])) for l in sys.stdin) * 50 // 1024)')
min=$(e2e kb min)
check "sink per-kb: the smallest body's share is ${want} us (> 2 ms), min latency $min us" \
    test "$want" -gt 2000 -a "$min" -ge "$want"
yb_serve_stop

# --workers 1 with 2 ms each: four sessions at once still get one answer
# per 2 ms from the sink, and the rest wait in its queue.
yb_serve "$T/w.out" --restconf 127.0.0.1:0 --gnmi off --sink --service-time fixed:2ms --workers 1 \
    --stats "$T/w.stats.json" || { echo "Bail out! serve --sink --workers did not start"; exit 1; }
is "sink --workers 1: exit 0" "$(run w "$T/r.ybc" "$RURL" -c 4 -n 100)" 0
is "sink --workers 1: 100 ok" "$(j "$T/w.json" "d['summary']['requests_ok']")" 100
dur=$(j "$T/w.json" "int(d['summary']['duration_s'] * 1000)")
check "sink --workers 1: 100 answers of 2 ms one at a time take >= 200 ms ($dur ms)" test "$dur" -ge 200
yb_serve_stop
is "sink --workers 1: requests queued (max depth >= 2)" \
    "$(j "$T/w.stats.json" "int(d['queue_depth']['max'] >= 2)")" 1

done_testing
