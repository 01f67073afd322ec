#!/bin/bash
# yangblast serve: cost model and fault injection, effects asserted with
# curl, nghttp and the grpcio client.  Timing checks are loose lower
# bounds only (a stall must not answer early).
. "${YB_SRCDIR:-.}/tests/serve/common.sh"
A=/restconf/data/openconfig-acl:acl

check "serve --fault reset@1" start_serve --fault reset@1
curl -s -o /dev/null "http://127.0.0.1:$RP$A"; rc=$?
like "reset: curl fails with 52 or 56" "$rc" '^(52|56)$'
like "reset: gNMI call fails UNAVAILABLE" "$(gc capabilities 2>&1)" 'UNAVAILABLE'
check_rc "stop" 0 stop_serve
like "resets counted" "$(cat "$SOUT")" 'faults: reset 2 '

check "serve --fault status:503@1 --fault status:14@0" start_serve --fault status:503@1 --fault status:14@0
is "status:503: RESTCONF answers 503" "$(rc_code GET $A)" 503
like "503 body is an ietf-restconf error" "$(cat "$T/body")" 'ietf-restconf:errors'
like "status:503 for gNMI is UNAVAILABLE" "$(gc capabilities 2>&1)" 'UNAVAILABLE'
check_rc "stop" 0 stop_serve

check "serve --fault status:8" start_serve --fault status:8
like "gRPC code status:8: RESOURCE_EXHAUSTED" "$(gc capabilities 2>&1)" 'RESOURCE_EXHAUSTED'
is "gRPC code 8 over RESTCONF: 429" "$(rc_code GET $A)" 429
check_rc "stop" 0 stop_serve

check "serve --fault stall:600ms@1" start_serve --fault stall:600ms@1
t=$(curl -s -o /dev/null -w '%{time_total}' "http://127.0.0.1:$RP$A")
check "stall: the answer took >= 0.55 s ($t)" awk -v t="$t" 'BEGIN { exit !(t >= 0.55) }'
s0=$(date +%s%N); gc capabilities >/dev/null; s1=$(date +%s%N)
check "stall: gNMI too ($(( (s1 - s0) / 1000000 )) ms)" test $(( (s1 - s0) / 1000000 )) -ge 550
check_rc "stop" 0 stop_serve

# GOAWAY after 2 streams: nghttp sends 3 requests on one connection.
printf '\0\0\0\0\0' >"$T/empty.bin"
check "serve --fault goaway-after:2" start_serve --fault goaway-after:2
U="http://127.0.0.1:$GP/gnmi.gNMI"
out=$(timeout 10 nghttp -nv -d "$T/empty.bin" -H 'content-type: application/grpc' -H 'te: trailers' "$U/Capabilities" "$U/Get" "$U/Set" 2>&1)
like "goaway-after:2: nghttp sees GOAWAY" "$out" 'recv GOAWAY frame'
like "GOAWAY keeps the first two streams" "$out" 'last_stream_id=15'
is "the two streams before it were answered" "$(printf '%s\n' "$out" | grep -c 'grpc-status: 0')" 2
out=$(h2load -d "$T/empty.bin" -H 'content-type: application/grpc' -H 'te: trailers' -n 20 -c 1 -m 1 "$U/Capabilities" 2>&1)
like "h2load: 2 succeed, the rest fail after GOAWAY" "$out" '20 total, [0-9]+ started, [0-9]+ done, 2 succeeded, 18 failed'
check_rc "stop" 0 stop_serve

# Workers and the queue: 1 worker, 100 ms each, 5 at once.
check "serve --workers 1 --service-time fixed:100ms" start_serve --workers 1 --service-time fixed:100ms --stats "$T/q.json" --gnmi off
s0=$(date +%s%N)
cp=""
for i in 1 2 3 4 5; do curl -s -o /dev/null "http://127.0.0.1:$RP$A" & cp="$cp $!"; done
wait $cp
s1=$(date +%s%N)
check "5 requests through 1 worker took >= 450 ms ($(( (s1 - s0) / 1000000 )) ms)" test $(( (s1 - s0) / 1000000 )) -ge 450
check_rc "stop" 0 stop_serve
check "queue depth max >= 3 and mean > 0 in --stats" "$PY" -c 'import json,sys; q=json.load(open(sys.argv[1]))["queue_depth"]; assert q["max"] >= 3 and q["mean"] > 0, q' "$T/q.json"
like "summary shows the queue" "$(cat "$SOUT")" 'queue depth: max [3-9]'

check_rc "bad --service-time" 2 "$YB" serve --service-time lognormal:5ms
check_rc "bad --fault" 2 "$YB" serve --fault reset@2
check "uniform and exp with per-kb parse" start_serve --service-time 'uniform:1ms..3ms+per-kb:10us' --fault stall:1ms@0.5
is "and serve" "$(rc_code GET $A)" 200
check_rc "stop" 0 stop_serve
check "exp" start_serve --service-time exp:1ms --gnmi off
is "and serve" "$(rc_code GET $A)" 200
check_rc "stop" 0 stop_serve

# --seed: the same faults fire on the same requests.
seq_of() {
    start_serve --fault reset@0.5 --seed "$1" --gnmi off >/dev/null || return 1
    local s=""
    # answered (0) or reset (1): curl's exit code for a reset (52 or 56)
    # depends on when the RST lands, the fault decision does not
    for i in $(seq 1 16); do
        if curl -s -o /dev/null "http://127.0.0.1:$RP$A"; then s="${s}0"; else s="${s}1"; fi
    done
    stop_serve
    echo "$s"
}
a=$(seq_of 7); b=$(seq_of 7)
is "--seed reproduces the fault sequence" "$a" "$b"
like "and some requests were reset, some not" "$a" '^.*0.*$'

# --max-sessions 1: a second connection is refused while one is held.
check "serve --max-sessions 1" start_serve --max-sessions 1 --gnmi off
"$PY" -c 'import socket,sys,time; s=socket.create_connection(("127.0.0.1",int(sys.argv[1]))); time.sleep(1.5)' "$RP" &
hold=$!
sleep 0.3
curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$RP$A"; rc=$?
like "second session refused (curl $rc)" "$rc" '^(52|56|7)$'
wait $hold
is "after the first closes, a session is accepted" "$(rc_code GET $A)" 200
check_rc "stop" 0 stop_serve
like "refused counted" "$(cat "$SOUT")" 'refused 1'

# --idle-timeout: an idle connection is closed.
check "serve --idle-timeout 300ms" start_serve --idle-timeout 300ms --gnmi off
out=$("$PY" -c '
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(5)
t = time.time()
print("closed" if s.recv(1) == b"" else "data", "%.1f" % (time.time() - t))' "$RP")
like "idle connection closed after ~0.3 s" "$out" '^closed 0\.[2-9]'
is "a busy client is fine" "$(rc_code GET $A)" 200
check_rc "stop" 0 stop_serve
like "idle-closed counted" "$(cat "$SOUT")" 'idle-closed 1'
done_testing
