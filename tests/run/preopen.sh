#!/bin/bash
# An open loop (--rate) opens its -c sessions before its clock starts: no
# request pays a session's set-up or waits behind it, and every set-up
# is still counted (sessions opened, and the connect and HTTP/2 phases),
# equal to the connections the server saw.  A target that never finishes
# the set-up holds the start at most --timeout, and a stop meanwhile ends
# the run at once with nothing sent.  A closed loop opens them as before.
. "$YB_SRCDIR/tests/lib.sh"
. "$YB_SRCDIR/tests/peers/peer.sh"
PY=/usr/bin/python3
j() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

"$YB" synth acl --proto restconf -n 20 -r 1 -o "$T/r.ybc" >/dev/null
"$YB" synth acl --proto gnmi -n 20 -r 1 -o "$T/g.ybc" >/dev/null
# run NAME CORPUS URL ARGS...: JSON in $T/NAME.json, CSV log in $T/NAME.csv.
run() {
    local name=$1 corpus=$2 url=$3; shift 3
    timeout 60 "$YB" run "$corpus" --target "$url" -q --json "$T/$name.json" \
        --log "$T/$name.csv" --log-format csv "$@" >"$T/$name.out" 2>&1
    echo $?
}
# first NAME FIELD: FIELD of the log's first request (by due time).
first() {
    $PY -c "import csv,sys; r=min(csv.DictReader(open(sys.argv[1])), key=lambda r: int(r['t_due_ns'])); print(r[sys.argv[2]] or '-')" \
        "$T/$1.csv" "$2"
}

yb_serve "$T/s.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --stats "$T/s.stats.json" ||
    { echo "Bail out! serve did not start"; exit 1; }
# 10/s with -c 4: each answer comes long before the next is due, so a
# session opened on demand would be the only one
is "RESTCONF open loop: exit 0" "$(run r "$T/r.ybc" "$RURL" --rate 10 -D 1s -c 4)" 0
is "RESTCONF open loop: 10 ok" "$(j "$T/r.json" "d['summary']['requests_ok']")" 10
is "RESTCONF open loop: the 4 sessions opened before the clock are counted" \
    "$(j "$T/r.json" "d['sessions']['opened']")" 4
is "RESTCONF open loop: 4 connect phases" "$(j "$T/r.json" "d['latency_us']['connect']['count']")" 4
is "RESTCONF open loop: the first request paid no set-up" "$(first r connect_ns)" -
is "gNMI open loop: exit 0" "$(run g "$T/g.ybc" "$GURL" --rate 10 -D 1s -c 4)" 0
is "gNMI open loop: 10 ok" "$(j "$T/g.json" "d['summary']['requests_ok']")" 10
is "gNMI open loop: 4 sessions opened, 4 connect and 4 HTTP/2 phases" \
    "$(j "$T/g.json" "d['sessions']['opened'], d['latency_us']['connect']['count'], d['latency_us']['h2']['count']")" \
    "4 4 4"
is "gNMI open loop: the first request paid no set-up" "$(first g h2_ns)" -
# a closed loop is unchanged: its first requests open the sessions
is "closed loop: exit 0" "$(run c "$T/r.ybc" "$RURL" -n 8 -c 2)" 0
is "closed loop: 2 sessions, opened by its first requests" \
    "$(j "$T/c.json" "d['sessions']['opened']") $(first c connect_ns | sed 's/^[0-9][0-9]*$/paid/')" "2 paid"
yb_serve_stop
is "the server saw the connections the reports counted (4 + 2, 4)" \
    "$(j "$T/s.stats.json" "d['connections']['restconf'], d['connections']['gnmi']")" "6 4"

# A peer that accepts and never sends SETTINGS: the start waits --timeout
# (1 s) for it, then the run goes on as before (its requests time out),
# and the sessions counted equal the peer's connections.
if peer_start "$T/silent" h2bad.py --mode silent --stats "$T/silent.stats.json" --max-seconds 60; then
    url="grpc://127.0.0.1:$(peer_port "$T/silent")"
    t0=$(date +%s%N)
    is "silent peer: exit 1 (errors)" "$(run sil "$T/g.ybc" "$url" --rate 20 -D 2s -c 2 --timeout 1s)" 1
    ms=$((($(date +%s%N) - t0) / 1000000))
    check "silent peer: the start waited the 1 s timeout (run took $ms ms >= 3000)" test "$ms" -ge 3000
    # due in the first second: failed by the timeout; in the last: unsent
    # at -D (the one due at 1 s times out at -D itself: either)
    is "silent peer: 20 or 21 failed, the rest of the 40 unsent, none ok" \
        "$(j "$T/sil.json" "d['summary']['requests_error'] in (20, 21), d['summary']['requests_error'] + d['summary']['requests_unsent'], d['summary']['requests_ok']")" \
        "True 40 0"
    is "silent peer: only set-up and session timeouts" \
        "$(j "$T/sil.json" "sorted(set(r['class'] for r in d['errors']['reasons']))")" \
        "['connect_timeout', 'timeout']"
    # a stop while the set-up waits: at once, nothing sent
    "$YB" run "$T/g.ybc" --target "$url" --rate 20 -D 10s -c 2 -q --json "$T/int.json" \
        >"$T/int.out" 2>&1 &
    pid=$!
    sleep 1
    t0=$(date +%s%N)
    kill -INT $pid
    wait $pid
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    is "SIGINT while the sessions are set up: interrupted (exit 4)" "$rc" 4
    check "SIGINT while the sessions are set up: it stopped within 2 s ($ms ms), not after --timeout" \
        test "$ms" -lt 2000
    is "SIGINT while the sessions are set up: nothing started" \
        "$(j "$T/int.json" "d['interrupted'], d['summary']['requests_started']")" "True 0"
    peer_stop "$T/silent"
    is "silent peer: the sessions the two runs counted are the peer's connections" \
        "$(($(j "$T/sil.json" "d['sessions']['opened']") + $(j "$T/int.json" "d['sessions']['opened']")))" \
        "$(j "$T/silent.stats.json" "d['connections']")"
else
    not_ok "h2bad.py silent starts"
fi
done_testing
