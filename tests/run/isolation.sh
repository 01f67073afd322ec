#!/bin/bash
# Failure isolation: a dead target, or one that closes every connection
# unanswered, costs a bounded number of connects (the pool backs off: 10
# ms after a failed set-up, doubling to 1 s, one probe at a time), the
# back-off ends when the target answers again, and in a fleet a target killed mid-run never disturbs the others: each of
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

# the back-off itself, from the per-request log: each connect starts no
# sooner than 10 ms after the previous failure, doubling (a lower bound:
# no clock can make it shorter)
timeout 30 "$YB" run "$T/gn.ybc" --target "grpc://127.0.0.1:$dead" -c 1 -D 2s -q \
    --log "$T/dead.log" >/dev/null 2>&1
is "-c 1 against the dead target, --log: the gaps between connects double from 10 ms" \
    "$(/usr/bin/python3 - "$T/dead.log" <<'EOF'
import json, sys
t = sorted(json.loads(l)["t_start_ns"] for l in open(sys.argv[1]))
gaps = [b - a for a, b in zip(t, t[1:])]
want = [min(10 * 2 ** k, 1000) * 1000000 for k in range(len(gaps))]
print(len(gaps) >= 5 and all(g >= w for g, w in zip(gaps, want)))
EOF
)" True

# ---- a refusing target: accepts, reads the request, closes unanswered ----------
"$YB" synth acl --proto restconf -n 5 -o "$T/rc.ybc" >/dev/null || { echo "Bail out! corpus"; exit 1; }
/usr/bin/python3 "$YB_SRCDIR/tests/peers/badhttp.py" close --max-seconds 30 >"$T/bad.out" &
BPID=$!
stop_bad() { kill "$BPID" 2>/dev/null; wait "$BPID" 2>/dev/null; }
at_exit stop_bad
for i in $(seq 50); do grep -q '^listening' "$T/bad.out" && break; sleep 0.1; done
bport=$(awk '/^listening/ {print $2}' "$T/bad.out")
timeout 30 "$YB" run "$T/rc.ybc" --target "http://127.0.0.1:$bport" -c 2 -D 2s -q \
    --json "$T/close.json" >/dev/null 2>&1
is "a server that closes every connection unanswered, 2 s: exit 1" "$?" 1
stop_bad
# without the back-off: thousands of connections in 2 s (each closed at once)
opened=$(jget "$T/close.json" "r['sessions']['opened']")
like "its sessions back off too (at most 30 in 2 s)" "$opened" '^([2-9]|[12][0-9]|30)$'
is "... every one a 'closed' error, followed by a back-off" \
    "$(jget "$T/close.json" "[r['errors']['closed'], r['summary']['requests_completed'], r['sessions']['reconnect_backoffs']]")" \
    "[$opened,$opened,$opened]"

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

# ---- a fleet of 11: one killed mid-run, one slow; the nine keep their schedule --
# nine devices in one `serve --devices 9`, the victim in a process of its
# own, and a slow one (400 ms per request, one at a time: 2.5/s of the 20/s
# it is sent); -t 1: all eleven share one worker thread
"$YB" serve --devices 9 --restconf off --gnmi 127.0.0.1:0 --write-inventory "$T/nine.yaml" \
    --stats "$T/nine.stats.json" >"$T/nine.out" 2>&1 &
NPID=$!
stop_nine() { kill "$NPID" 2>/dev/null; wait "$NPID" 2>/dev/null; }
at_exit stop_nine
for i in $(seq 100); do grep -q 'devices ready' "$T/nine.out" && break; sleep 0.1; done
grep -q 'devices ready' "$T/nine.out" || { cat "$T/nine.out"; echo "Bail out! serve --devices 9"; exit 1; }
yb_serve "$T/victim.out" --restconf off --gnmi 127.0.0.1:0 --stats "$T/victim.stats.json" ||
    { echo "Bail out! serve did not start"; exit 1; }
VURL=$GURL
"$YB" serve --restconf off --gnmi 127.0.0.1:0 --service-time fixed:400ms --workers 1 \
    >"$T/slow.out" 2>&1 &
SLPID=$!
stop_slow() { kill "$SLPID" 2>/dev/null; wait "$SLPID" 2>/dev/null; }
at_exit stop_slow
for i in $(seq 100); do grep -q '^serve:' "$T/slow.out" && break; sleep 0.1; done
read -r _ _ _ _ SLURL < <(grep '^serve:' "$T/slow.out" | head -1) || { echo "Bail out! slow serve"; exit 1; }
{ cat "$T/nine.yaml"; printf '  - name: victim\n    gnmi: %s\n  - name: slow\n    gnmi: %s\n' \
    "$VURL" "$SLURL"; } >"$T/ten.yaml"
# open loop, 20/s and 60 requests per target: each target's share is
# exactly 60, whatever the others do; the victim dies after about 1 s
timeout 60 "$YB" run "$T/gn.ybc" --targets "$T/ten.yaml" --fan-out --rate 20 -n 60 \
    --timeout 2s -q --json "$T/ten.json" >"$T/ten.out" 2>&1 &
RPID=$!
sleep 1
yb_serve_stop
wait $RPID
is "11 targets, one killed, one slow: exit 1 (their requests failed)" "$?" 1
stop_nine
stop_slow
is "the nine: each device served exactly its 60 (its own count)" \
    "$(jget "$T/nine.stats.json" "[d['requests']['gnmi']['total'] for d in r['devices']]")" \
    "[60,60,60,60,60,60,60,60,60]"
is "the nine: 60 ok each, no error, no back-off" \
    "$(jget "$T/ten.json" "[[t['ok'], t['errors'], t['reconnect_backoffs']] for t in r['targets'][:9]]")" \
    "$(printf '[%s]' "$(printf '[60,0,0],%.0s' 1 2 3 4 5 6 7 8 | sed 's/,$//'),[60,0,0]")"
is "the victim and the slow one: their 60 requests each accounted for, the errors theirs" \
    "$(jget "$T/ten.json" "[[t['name'], t['requests']] for t in r['targets'][9:]] + [r['targets'][9]['errors'] + r['targets'][10]['errors'] == r['summary']['requests_completed'] - r['summary']['requests_ok']]")" \
    '[["victim",60],["slow",60],true]'
like "... the slow one's: requests that waited beyond --timeout 2s" \
    "$(jget "$T/ten.json" "r['targets'][10]['errors']")" '^[1-9][0-9]*$'
like "... some of them failed" "$(jget "$T/ten.json" "r['targets'][9]['errors']")" '^[1-9][0-9]*$'
is "... it served what succeeded before it died" \
    "$(jget "$T/ten.json" "r['targets'][9]['ok'] <= $(jget "$T/victim.stats.json" "r['requests']['gnmi']['total']")")" true
# a dead target costs a bounded number of connects: about 2 s dead, one
# worker, back-offs of 10 ms doubling to 1 s (without them: thousands)
like "the victim's connects after its death are bounded (at most 15)" \
    "$(jget "$T/ten.json" "r['targets'][9]['sessions_opened']")" '^([1-9]|1[0-5])$'
like "... each failed one followed by a back-off" \
    "$(jget "$T/ten.json" "r['targets'][9]['reconnect_backoffs']")" '^([1-9]|1[0-4])$'
# the nine kept their schedule: a stall caused by the victim (its 2 s
# timeout, its back-offs of up to 1 s) would put seconds into their
# latency; their p99 stays far below (and close to each other's)
is "the nine: p99 under 1 s each (no stall from the victim)" \
    "$(jget "$T/ten.json" "all(0 < t['p99_ms'] < 1000 for t in r['targets'][:9])")" true
is "the text report: a row per target" \
    "$(grep -cE '^  (sw[1-9]|victim|slow) ' "$T/ten.out")" 11

done_testing
