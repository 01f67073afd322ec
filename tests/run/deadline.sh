#!/bin/bash
# Open loop under overload: `-D` ends issuing at D.  A slow `yangblast serve`
# (5 ms per request, one worker: 200/s) gets 2000/s for 2 s.  Requests due
# before D that never got a session are `unsent`, not started and not sent
# late; `started` equals what the server received; started + unsent +
# backlog overflow is the whole schedule; the run ends within the grace
# period (2 s) after D, not when the backlog has drained (~20 s).
. "$YB_SRCDIR/tests/lib.sh"
PY=/usr/bin/python3
"$YB" synth acl --proto restconf -n 40 -r 2 --name-prefix DL_R -o "$T/r.ybc" >/dev/null
"$YB" synth acl --proto gnmi -n 40 -r 2 --name-prefix DL_G -o "$T/g.ybc" >/dev/null
j() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# overload NAME CORPUS SERVE-PROTO ARGS...: a fresh slow server, one run
# against it, the server's own request count in $T/NAME.stats.
overload() {
    local name=$1 corpus=$2 proto=$3; shift 3
    yb_serve "$T/$name.serve" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 \
        --service-time fixed:5ms --workers 1 --stats "$T/$name.stats" ||
        { echo "Bail out! serve did not start"; exit 1; }
    local url=$RURL
    [ "$proto" = gnmi ] && url=$GURL
    local t0 t1
    t0=$(date +%s%N)
    timeout 60 "$YB" run "$corpus" --target "$url" --rate 2000 -D 2s -q \
        --json "$T/$name.json" "$@" >"$T/$name.out" 2>&1
    t1=$(date +%s%N)
    WALL_MS=$(( (t1 - t0) / 1000000 ))
    yb_serve_stop
}

for v in "restconf r -c 2" "restconf2 r -c 2 -t 2" "backlog r -c 2 --max-backlog 100" \
         "gnmi g -c 2 -m 2"; do
    set -- $v
    name=$1 c=$T/$2.ybc; shift 2
    proto=restconf; [ "$name" = gnmi ] && proto=gnmi
    overload "$name" "$c" $proto "$@"
    diag "$name: $(grep '^Requests:' "$T/$name.out"), wall ${WALL_MS} ms"
    check "$name: report written" test -s "$T/$name.json"
    started=$(j "$T/$name.json" "d['summary']['requests_started']")
    unsent=$(j "$T/$name.json" "d['summary']['requests_unsent']")
    over=$(j "$T/$name.json" "d['errors']['backlog_overflow']")
    served=$(j "$T/$name.stats" "d['requests']['$proto']['total']")
    is "$name: started = requests the server received" "$started" "$served"
    check "$name: unsent > 0 (the target could not keep up)" test "$unsent" -gt 0
    is "$name: started + unsent + backlog_overflow = the 4000 due before D" \
        "$((started + unsent + over))" 4000
    is "$name: every started request completed or was cut off" \
        "$(j "$T/$name.json" "d['summary']['requests_completed'] - d['errors']['backlog_overflow'] + d['cut_off']")" \
        "$started"
    check "$name: ended within D + grace + slack (${WALL_MS} ms <= 6000)" test "$WALL_MS" -le 6000
    like "$name: the text report shows unsent" "$(cat "$T/$name.out")" "unsent $unsent,"
done
# A rate at which several requests fall due within one wake-up's window
# (requests due within 250 us go out together): against a sink that keeps
# up, every request of the schedule before D is sent, none late past D.
for v in "batch -t 1" "batch2 -t 2"; do
    set -- $v
    name=$1; shift
    yb_serve "$T/$name.serve" --restconf 127.0.0.1:0 --gnmi off --sink --stats "$T/$name.stats" ||
        { echo "Bail out! serve did not start"; exit 1; }
    timeout 60 "$YB" run "$T/r.ybc" --target "$RURL" --rate 20000 -D 1s -c 32 "$@" -q \
        --max-backlog 100000 --json "$T/$name.json" >"$T/$name.out" 2>&1
    yb_serve_stop
    diag "$name: $(grep '^Requests:' "$T/$name.out")"
    started=$(j "$T/$name.json" "d['summary']['requests_started']")
    is "$name: started = requests the sink received" "$started" \
        "$(j "$T/$name.stats" "d['requests']['restconf']['total']")"
    is "$name: started + unsent + backlog_overflow = the 20000 due before D" \
        "$(j "$T/$name.json" "d['summary']['requests_started'] + d['summary']['requests_unsent'] + d['errors']['backlog_overflow']")" \
        20000
    is "$name: every started request completed" \
        "$(j "$T/$name.json" "d['summary']['requests_completed'] + d['cut_off']")" "$started"
done
over=$(j "$T/backlog.json" "d['errors']['backlog_overflow']")
check "backlog: --max-backlog 100 overflowed ($over)" test "$over" -gt 0
done_testing
