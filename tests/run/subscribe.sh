#!/bin/bash
# gNMI Subscribe in `yangblast run`: ONCE, POLL (each Poll after a
# sync_response) and STREAM (held open for the run, SAMPLE notifications
# with their lateness), and --subscriptions N; against `yangblast serve`
# and tests/peers/gnmi_server.py.  Every run is bounded by `timeout 60`.
. "${YB_SRCDIR:-.}/tests/lib.sh"
. "$YB_SRCDIR/tests/peers/peer.sh"
PY=/usr/bin/python3

# yb ARGS...: yangblast under `timeout 60`; output in $T/out, exit in $rc.
yb() {
    timeout 60 "$YB" "$@" >"$T/out" 2>&1
    rc=$?
}

SOUT=$T/serve.out
stop_py() { [ -f "$T/py/pid" ] && peer_stop "$T/py"; return 0; }
at_exit stop_py
yb_serve "$SOUT" --restconf off --gnmi 127.0.0.1:0 || { echo "Bail out! serve did not start"; exit 1; }

SETS=5
check "synth gnmi Set corpus" "$YB" synth acl --proto gnmi -n $SETS --name-prefix SUB -o "$T/set.ybc"
check "synth subscribe once" "$YB" synth acl --proto gnmi --op subscribe --mode once -n 4 -o "$T/once.ybc"
check "synth subscribe poll" "$YB" synth acl --proto gnmi --op subscribe --mode poll --polls 3 -n 4 -o "$T/poll.ybc"
check "synth subscribe stream" "$YB" synth acl --proto gnmi --op subscribe --mode stream --sample-interval 100ms -n 4 -o "$T/stream.ybc"

yb run "$T/set.ybc" --target "$GURL" -q --json "$T/set.json"
is "serve: $SETS ACL sets created" "$rc $(jget "$T/set.json" 'r["summary"]["requests_ok"]')" "0 $SETS"

# ---- ONCE ---------------------------------------------------------------------
yb run "$T/once.ybc" --target "$GURL" -c 2 -q --json "$T/once.json"
is "ONCE: exit 0, 4 ok, no errors" \
    "$rc $(jget "$T/once.json" '[r["summary"]["requests_ok"], r["summary"]["requests_error"], r["grpc_status"]]')" \
    '0 [4,0,{"0":4}]'
is "ONCE: one notification per set per call" \
    "$(jget "$T/once.json" 'r["subscribe"]["notifications"]')" $((4 * SETS))
is "ONCE: time to sync recorded for every call" \
    "$(jget "$T/once.json" 'r["latency_us"]["sync"]["count"] == r["summary"]["requests_completed"] and r["latency_us"]["sync"]["p50"] > 0')" true
is "ONCE: the notifications' lateness recorded" \
    "$(jget "$T/once.json" 'r["latency_us"]["sample_lateness"]["count"]')" $((4 * SETS))
like "ONCE: text report has a Subscribe block" "$(cat "$T/out")" \
    '^Subscribe: 20 notifications .*/s\), 20 updates'
like "ONCE: text report shows time to sync" "$(cat "$T/out")" 'time to sync_response \(ms\): p50 '

# ---- POLL ---------------------------------------------------------------------
yb run "$T/poll.ybc" --target "$GURL" -c 2 -q --json "$T/poll.json"
is "POLL: exit 0, 4 ok, no errors" \
    "$rc $(jget "$T/poll.json" '[r["summary"]["requests_ok"], r["summary"]["requests_error"], r["grpc_status"]]')" \
    '0 [4,0,{"0":4}]'
is "POLL --polls 3: initial + 3 polls of every set per call" \
    "$(jget "$T/poll.json" 'r["subscribe"]["notifications"]')" $((4 * 4 * SETS))
is "POLL: time to (first) sync recorded for every call" \
    "$(jget "$T/poll.json" 'r["latency_us"]["sync"]["count"]')" 4

# ---- STREAM, --subscriptions --------------------------------------------------------
yb run "$T/stream.ybc" --target "$GURL" --subscriptions 4 -D 3s -q --json "$T/stream.json" \
    --csv "$T/stream.csv"
is "STREAM --subscriptions 4 -D 3s: exit 0" "$rc" 0
csvn=$(/usr/bin/python3 -c "
import csv, json, sys
row = [r for r in csv.DictReader(open(sys.argv[1])) if r['operation'] == ''][-1]  # the run's row
d = json.load(open(sys.argv[2]))
print(int(row['notifications']) == d['subscribe']['notifications'] > 0)" "$T/stream.csv" "$T/stream.json")
is "STREAM: the CSV row carries the notification count" "$csvn" True
is "STREAM: 4 calls, ended with the run as ok, none cut off, no errors" \
    "$(jget "$T/stream.json" '[r["summary"]["requests_started"], r["summary"]["requests_ok"], r["summary"]["requests_error"], r["cut_off"]]')" \
    '[4,4,0,0]'
n=$(jget "$T/stream.json" 'r["subscribe"]["notifications"]')
diag "STREAM: $n notifications ($(jget "$T/stream.json" 'r["subscribe"]["notifications_per_s"]')/s)"
# ~30 samples of every set per stream (100 ms for 3 s), plus the initial ones
check "STREAM: ~4 streams x ~30 samples x $SETS sets (generous bounds)" \
    test "$n" -ge $((4 * 15 * SETS)) -a "$n" -le $((4 * 45 * SETS))
is "STREAM: updates counted (>= notifications)" \
    "$(jget "$T/stream.json" 'r["subscribe"]["updates"] >= r["subscribe"]["notifications"]')" true
is "STREAM: sample lateness recorded, p99 < 100 ms" \
    "$(jget "$T/stream.json" 'r["latency_us"]["sample_lateness"]["count"] > 0 and r["latency_us"]["sample_lateness"]["p99"] < 100000')" true
is "STREAM: sync recorded per stream" "$(jget "$T/stream.json" 'r["latency_us"]["sync"]["count"]')" 4
is "STREAM: intervals show notifications in at least 2 seconds, summing to the total" \
    "$(jget "$T/stream.json" '[sum(1 for i in r["intervals"] if i["notifications"] > 0) >= 2, sum(i["notifications"] for i in r["intervals"]) == r["subscribe"]["notifications"], sum(i["updates"] for i in r["intervals"]) == r["subscribe"]["updates"]]')" \
    '[true,true,true]'

# ONCE under --subscriptions: a call that ends is replaced (closed loop)
yb run "$T/once.ybc" --target "$GURL" --subscriptions 2 -D 1s -q --json "$T/oncel.json"
is "ONCE --subscriptions 2 -D 1s: exit 0, no errors" \
    "$rc $(jget "$T/oncel.json" 'r["summary"]["requests_error"]')" "0 0"
is "ONCE --subscriptions: calls replaced (more than 2), each with its notifications" \
    "$(jget "$T/oncel.json" '[r["summary"]["requests_ok"] > 2, r["subscribe"]["notifications"] == '$SETS' * r["summary"]["requests_ok"]]')" \
    '[true,true]'

yb run "$T/stream.ybc" --target "$GURL" --subscriptions 2
is "--subscriptions without --duration: usage error" "$rc" 2
yb run "$T/stream.ybc" --target "$GURL" --subscriptions 2 -D 1s -c 3
is "--subscriptions N with another -c: usage error" "$rc" 2

# ---- gnmi_server.py (python grpcio) ---------------------------------------------
if peer_start "$T/py" gnmi_server.py --stats "$T/py/stats.json" --max-seconds 120; then
    PURL=grpc://127.0.0.1:$(peer_port "$T/py")
    yb run "$T/set.ybc" --target "$PURL" -q
    is "python: Set corpus ok" "$rc" 0
    yb run "$T/once.ybc" --target "$PURL" -c 2 -q --json "$T/pyonce.json"
    is "python ONCE: exit 0, 4 ok" \
        "$rc $(jget "$T/pyonce.json" '[r["summary"]["requests_ok"], r["summary"]["requests_error"]]')" '0 [4,0]'
    yb run "$T/poll.ybc" --target "$PURL" -c 2 -q --json "$T/pypoll.json"
    is "python POLL: exit 0, 4 ok" \
        "$rc $(jget "$T/pypoll.json" '[r["summary"]["requests_ok"], r["summary"]["requests_error"]]')" '0 [4,0]'
    yb run "$T/stream.ybc" --target "$PURL" --subscriptions 2 -D 2s -q --json "$T/pystream.json"
    is "python STREAM: exit 0, 2 ok, none cut off" \
        "$rc $(jget "$T/pystream.json" '[r["summary"]["requests_ok"], r["summary"]["requests_error"], r["cut_off"]]')" '0 [2,0,0]'
    is "python STREAM: sample lateness p99 < 100 ms" \
        "$(jget "$T/pystream.json" 'r["latency_us"]["sample_lateness"]["count"] > 0 and r["latency_us"]["sample_lateness"]["p99"] < 100000')" true
    peer_stop "$T/py"
    once=$(jget "$T/pyonce.json" 'r["subscribe"]["notifications"]')
    poll=$(jget "$T/pypoll.json" 'r["subscribe"]["notifications"]')
    strm=$(jget "$T/pystream.json" 'r["subscribe"]["notifications"]')
    is "python: 4 ONCE, 4 POLL with 12 Polls, 2 STREAM, no bad requests" \
        "$(jget "$T/py/stats.json" '[r["subscribe_modes"]["ONCE"], r["subscribe_modes"]["POLL"], r["polls"], r["subscribe_modes"]["STREAM"], r["bad_requests"]]')" \
        "[4,4,12,2,0]"
    # the server counts a notification once it is written: the last sample of
    # each STREAM call may cross our reset, so allow one per call either way
    sent=$(jget "$T/py/stats.json" 'r["notifications_sent"]')
    diag "python: server sent $sent, yangblast counted $once + $poll + $strm"
    check "python: server's notifications_sent matches what yangblast counted" \
        test $((sent - once - poll - strm)) -ge -2 -a $((sent - once - poll - strm)) -le 2
    check "python ONCE: notifications received" test "$once" -gt 0
else
    not_ok "gnmi_server.py starts"
fi
done_testing
