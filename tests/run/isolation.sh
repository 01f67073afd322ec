#!/bin/bash
# Failure isolation: a dead target costs a bounded number of connects
# (the pool backs off: 10 ms after a failed set-up, doubling to 1 s, one
# probe at a time), the back-off ends when the target answers again, and
# in a fleet a target killed mid-run never disturbs the others: each of
# them serves exactly its share (the servers' own counts).
. "$YB_SRCDIR/tests/lib.sh"

"$YB" synth acl --proto gnmi -n 10 -r 1 -o "$T/gn.ybc" >/dev/null ||
    { echo "Bail out! corpus"; exit 1; }

# ---- a dead target: bounded connects, every attempt counted ----------------------
dead=$(free_port)
timeout 30 "$YB" run "$T/gn.ybc" --target "grpc://127.0.0.1:$dead" -c 4 -t 2 -D 2s -q \
    --json "$T/dead.json" >"$T/dead.out" 2>&1
is "dead target for 2 s: exit 1 (every request failed)" "$?" 1
# A closed loop used to reconnect back to back (thousands of connects in
# 2 s); with the back-off each of the 2 workers tries its 2 sessions, then
# one probe after 10, 20, 40 ... ms: about 10 connects per worker.
opened=$(jget "$T/dead.json" "r['sessions']['opened']")
like "connects bounded by the back-off (at most 30 in 2 s)" "$opened" '^([4-9]|[12][0-9]|30)$'
is "each connect failed as refused, once per request, each followed by a back-off" \
    "$(jget "$T/dead.json" "[r['errors']['refused'], r['summary']['requests_completed'], r['sessions']['reconnect_backoffs']]")" \
    "[$opened,$opened,$opened]"
is "nothing else failed, nothing succeeded" \
    "$(jget "$T/dead.json" "[r['summary']['requests_ok'], sum(v for k, v in r['errors'].items() if k not in ('refused', 'reasons'))]")" \
    "[0,0]"
like "text report: the back-offs" "$(grep '^Sessions opened' "$T/dead.out")" \
    "^Sessions opened: $opened; .*; reconnect back-offs: $opened$"

# ---- the target comes back: the back-off ends, the run goes on ------------------
port=$(free_port)
timeout 30 "$YB" run "$T/gn.ybc" --target "grpc://127.0.0.1:$port" -c 2 -D 4s -q \
    --json "$T/back.json" >/dev/null 2>&1 &
RPID=$!
sleep 0.7
yb_serve "$T/serve.out" --restconf off --gnmi "127.0.0.1:$port" --stats "$T/back.stats.json" ||
    { echo "Bail out! serve did not start"; exit 1; }
wait $RPID
is "target up after 0.7 s: exit 1 (the early requests were refused)" "$?" 1
yb_serve_stop
is "after the back-off, requests succeed: the server's count is the run's ok" \
    "$(jget "$T/back.json" "r['summary']['requests_ok']")" \
    "$(jget "$T/back.stats.json" "r['requests']['gnmi']['total']")"
like "... and there were some" "$(jget "$T/back.json" "r['summary']['requests_ok']")" '^[1-9][0-9]*$'
is "the server saw the 2 sessions, nothing reconnected once it answered" \
    "$(jget "$T/back.stats.json" "r['connections']['gnmi']")" 2
is "refused attempts = back-offs = sessions opened - 2" \
    "$(jget "$T/back.json" "[r['errors']['refused'], r['sessions']['reconnect_backoffs'], r['sessions']['opened'] - 2]")" \
    "$(jget "$T/back.json" "[r['errors']['refused']] * 3")"

done_testing
