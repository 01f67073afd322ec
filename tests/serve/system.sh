#!/bin/bash
# yangblast serve reports itself under openconfig-system: the process's CPU
# times and memory as the OS counts them (checked against /proc/PID/stat and
# /proc/PID/status sampled here), the host's memory and CPUs, and the
# modelled worker occupancy as a separate process entry (pid 0), over gNMI
# Get / Subscribe ONCE, POLL, STREAM and RESTCONF GET, per device.
. "${YB_SRCDIR:-.}/tests/serve/common.sh"
CORPUS="$YB_SRCDIR/corpus/restconf-acl-1000.ybc"
HZ=$(getconf CLK_TCK)
SYS=/restconf/data/openconfig-system:system

# ticks PID: utime + stime of PID from /proc (fields 14 and 15 after comm).
ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
# rget PATH: the RESTCONF body of a GET of PATH (below $SYS).
rget() { curl -s "http://127.0.0.1:$RP$SYS$1"; }
# pyj EXPR: evaluates EXPR over the JSON document on stdin as d.
pyj() { "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1" 2>/dev/null || echo ERR; }

check "serve starts" start_serve
"$YB" run "$CORPUS" --target "http://127.0.0.1:$RP" -c 4 -D 4s -q >"$T/load1.out" 2>&1 &
LPID=$!
sleep 1.5
# Cumulative CPU: what serve reads must lie between two samples of ours.
b=$(ticks "$SPID")
rss0=$(awk '/^VmRSS:/ {printf "%.0f", $2 * 1024}' "/proc/$SPID/status")
out=$(gc get "/system/processes/process[pid=$SPID]/state")
rss1=$(awk '/^VmRSS:/ {printf "%.0f", $2 * 1024}' "/proc/$SPID/status")
a=$(ticks "$SPID")
u=$(printf '%s\n' "$out" | sed -n 's/.*cpu-usage-user", "value": \([0-9]*\).*/\1/p')
s=$(printf '%s\n' "$out" | sed -n 's/.*cpu-usage-system", "value": \([0-9]*\).*/\1/p')
ns_per_tick=$((1000000000 / HZ))
tot=$(( ${u:-0} + ${s:-0} ))
if [ -n "$u" ] && [ "$tot" -ge $((b * ns_per_tick)) ] && [ "$tot" -le $((a * ns_per_tick)) ] && [ "$a" -gt 0 ]; then
    ok "gNMI Get: cpu-usage-user + system = /proc/PID/stat utime + stime (${b}..${a} ticks)"
else
    not_ok "gNMI Get: cpu-usage-user + system = /proc/PID/stat utime + stime"
    diag "serve said ${tot} ns; /proc said ${b}..${a} ticks of ${ns_per_tick} ns"
fi
like "gNMI Get: the process is named" "$out" "process\[pid=$SPID\]/state/name\", \"value\": \"yangblast\""
rss=$(printf '%s\n' "$out" | sed -n 's/.*memory-usage", "value": \([0-9]*\).*/\1/p')
if [ -n "$rss" ] && [ "$rss" -gt 0 ] && [ $((rss * 10)) -ge $((rss0 * 9)) ] && [ $((rss * 10)) -le $((rss1 * 11)) ]; then
    ok "memory-usage within 10% of VmRSS read around it"
else
    not_ok "memory-usage within 10% of VmRSS read around it"; diag "serve $rss, /proc $rss0..$rss1"
fi
# Utilisation: serve's figure covers the second before the request; ours
# the same second, from /proc, by the wall clock.
w0=$(date +%s%N); t0=$(ticks "$SPID"); sleep 1
theirs=$(rget "/processes/process=$SPID/state/cpu-utilization" | pyj 'd["openconfig-system:cpu-utilization"]')
t1=$(ticks "$SPID"); w1=$(date +%s%N)
mine=$(( (t1 - t0) * 100 * 1000000000 / HZ / (w1 - w0) ))
d=$(( ${theirs:-999} - mine )); [ $d -lt 0 ] && d=$(( -d ))
if [ "$theirs" != ERR ] && [ "$d" -le 25 ]; then
    ok "RESTCONF cpu-utilization ($theirs%) within 25 points of /proc ($mine%)"
else
    not_ok "RESTCONF cpu-utilization within 25 points of /proc"; diag "serve $theirs, /proc $mine"
fi
wait "$LPID"
is "the load ran" "$(grep -c 'Requests' "$T/load1.out" | awk '{print ($1 > 0)}')" 1

# Host memory: MemTotal exactly; used = MemTotal - MemAvailable, roughly.
phys=$(rget "/memory/state/physical" | pyj 'd["openconfig-system:physical"]')
is "memory/state/physical = MemTotal" "$phys" "$(awk '/^MemTotal:/ {printf "%.0f", $2 * 1024}' /proc/meminfo)"
used=$(rget "/memory/state" | pyj 'd["openconfig-system:state"]["used"]')
want=$(awk '/^MemTotal:/ {t=$2} /^MemAvailable:/ {a=$2} END {printf "%.0f", (t - a) * 1024}' /proc/meminfo)
is "memory/state/used near MemTotal - MemAvailable" \
   "$(awk -v u="$used" -v w="$want" 'BEGIN {d = u - w; if (d < 0) d = -d; print (u > 0 && d < w / 5 + 67108864)}')" 1
body=$(rget "/cpus/cpu=ALL")
like "RESTCONF cpu=ALL: a one-entry list keyed ALL" "$body" '^\{"openconfig-system:cpu":\[\{"index":"ALL","state":\{"index":"ALL","total":\{"instant":[0-9]+\}'
ncpu=$(rget "/cpus" | pyj 'len(d["openconfig-system:cpus"]["cpu"])')
is "one entry per host CPU plus ALL" "$ncpu" $(( $(grep -c '^cpu[0-9]' /proc/stat) + 1 ))
is "RESTCONF GET of a missing node: 404" "$(rc_code GET "$SYS/nothing")" 404
is "RESTCONF PUT on the system tree: 405" "$(rc_code PUT "$SYS/memory" -H "$CT" -d '{}')" 405
like "gNMI Get of a missing node: NOT_FOUND" "$(gc get /system/nothing 2>&1)" NOT_FOUND
like "gNMI Get mixing trees: INVALID_ARGUMENT" \
     "$("$PY" - "$GP" 2>&1 <<'P'
import os, sys, grpc
sys.path.insert(0, os.path.join(os.environ["YB_SRCDIR"], "tests", "peers"))
sys.dont_write_bytecode = True
import gnmi_common
pb, _ = gnmi_common.load_protos()
ch = grpc.insecure_channel("127.0.0.1:" + sys.argv[1])
call = ch.unary_unary("/gnmi.gNMI/Get", request_serializer=pb.GetRequest.SerializeToString,
                      response_deserializer=pb.GetResponse.FromString)
req = pb.GetRequest(encoding=pb.JSON_IETF)
req.path.add().CopyFrom(gnmi_common.parse_path(pb, "/system/memory"))
req.path.add().CopyFrom(gnmi_common.parse_path(pb, "/openconfig-acl:acl"))
try:
    call(req, timeout=10)
    print("OK")
except grpc.RpcError as e:
    print(e.code().name)
P
)" INVALID_ARGUMENT
like "Capabilities lists openconfig-system" "$(gc capabilities)" '"name": "openconfig-system"'

out=$(gc subscribe-once '/system/memory/state')
is "Subscribe ONCE: three memory leaves, then sync" "$(printf '%s\n' "$out" | grep -c '"path"') $(printf '%s\n' "$out" | tail -1)" '3 {"sync": true}'
out=$(gc subscribe-poll '/system/processes/process[pid=0]/state/name' 2)
is "Subscribe POLL: the modelled entry answers each poll" \
   "$(printf '%s\n' "$out" | grep -c '"value": "serve-model-busy"') $(printf '%s\n' "$out" | grep -c sync)" "3 3"
out=$(gc subscribe-stream '/system/cpus/cpu[index=ALL]/state/total/instant' --interval-ms 200 --count 3)
is "Subscribe STREAM SAMPLE: one leaf per sample" "$(printf '%s\n' "$out" | grep -c '"updates": 1}')" 3
stop_serve

# The modelled busy figure, per device: sw1 loaded past its worker,
# sw2 idle; a Get of the system tree is answered outside the workers.
# start_fleet ARGS...: as start_serve for --devices: RP and GP are sw1's.
start_fleet() {
    SOUT="$T/fleet.out"
    : >"$SOUT" # not left to the background job: the loop could read an old line
    "$YB" serve --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 "$@" >"$SOUT" 2>&1 &
    SPID=$!
    _serve_pids="$_serve_pids $SPID"
    local n=600
    while [ $n -gt 0 ] && ! grep -q 'devices ready' "$SOUT"; do
        kill -0 "$SPID" 2>/dev/null || break
        sleep 0.05; n=$((n - 1))
    done
    RP=$(sed -n 's#^serve: sw1 restconf http://127.0.0.1:\([0-9]*\) .*#\1#p' "$SOUT")
    GP=$(sed -n 's#^serve: sw1 .* gnmi grpc://127.0.0.1:\([0-9]*\)$#\1#p' "$SOUT")
    url2=$(sed -n 's#^serve: sw2 restconf \(http://[0-9.:]*\) .*#\1#p' "$SOUT")
    [ -n "$RP" ] && [ -n "$GP" ] && [ -n "$url2" ]
}
# (1 worker of 100 ms, 8 requests in flight: the queue never empties, even
# on a machine too busy to send each next request at once)
check "a fleet of 2 starts" start_fleet --devices 2 --workers 1 --service-time fixed:100ms
"$YB" run "$CORPUS" --target "http://127.0.0.1:$RP" -c 8 -D 4s -q >"$T/load2.out" 2>&1 &
LPID=$!
sleep 2.5
busy1=$(rget "/processes/process=0/state/cpu-utilization" | pyj 'd["openconfig-system:cpu-utilization"]')
busy2=$(curl -s "$url2$SYS/processes/process=0/state/cpu-utilization" | pyj 'd["openconfig-system:cpu-utilization"]')
is "sw1 saturated: busy 90..100%, sw2 idle: 0%" \
   "$(awk -v a="$busy1" -v b="$busy2" 'BEGIN {print (a >= 90 && a <= 100 && b == 0)}')" 1
[ "$(awk -v a="$busy1" -v b="$busy2" 'BEGIN {print (a >= 90 && a <= 100 && b == 0)}')" = 1 ] || diag "sw1 $busy1 sw2 $busy2"
like "a system Get under saturation is answered (no worker needed)" \
     "$(gc get '/system/processes/process[pid=0]/state/name')" serve-model-busy
wait "$LPID"
sleep 2.2
busy1=$(rget "/processes/process=0/state/cpu-utilization" | pyj 'd["openconfig-system:cpu-utilization"]')
is "sw1 idle again after the load: 0%" "$busy1" 0
stop_serve
done_testing
