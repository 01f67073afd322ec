#!/bin/bash
# bench/fleet.sh -- one yangblast process against a fleet: N emulated
# devices (`yangblast serve --devices N`, TLS, gNMI), one gNMI session each,
# driven by one `yangblast run --targets INV --fan-out`, against 1 device
# with N sessions (`run --target URL -c N`) in the same run.
#
# For each case it measures, in interleaved rounds:
#   set-up   seconds until every session had answered one call: the
#            server holds each call for H seconds (--service-time fixed:H),
#            so the run lasts set-up + H; set-up = duration - H.
#   memory   client RSS per open session: the peak VmRSS of the client
#            (sampled every 20 ms from /proc while all N sessions are open,
#            each with one call held by the server), minus the peak of the
#            same command with one session, divided by N - 1.  The targets'
#            own state (inventory entry, lane, pool, recorder, TLS context)
#            counts with its session in the fleet case.
#   CPU      client user + sys per request: a run of P requests per
#            session minus a run of 1 per session (the same N TLS
#            handshakes), divided by N x (P - 1); the server answers at once.
#
# Usage: bench/fleet.sh [-d DEVICES] [-p PER_SESSION] [-H HOLD_S] [-r ROUNDS]
#        [-t THREADS] [YANGBLAST]
# Prints one line per round, then ranges (min..max over rounds) and the
# ratios fleet / single, with the targets: <= 64 KB per idle TLS+HTTP/2
# session, CPU per request <= 1.2 x the single-target case.  Never fails on
# the numbers; exits non-zero when something could not run or a request
# failed.
set -u
devices=1000 per=20 hold=3 rounds=3 threads=1
while getopts d:p:H:r:t: o; do
    case $o in
    d) devices=$OPTARG ;; p) per=$OPTARG ;; H) hold=$OPTARG ;; r) rounds=$OPTARG ;;
    t) threads=$OPTARG ;;
    *) echo "usage: $0 [-d DEVICES] [-p PER_SESSION] [-H HOLD_S] [-r ROUNDS] [-t THREADS] [YANGBLAST]" >&2
       exit 2 ;;
    esac
done
shift $((OPTIND - 1))
YB=${1:-${YB:-./yangblast}}
[ -x "$YB" ] || { echo "$0: $YB: not an executable yangblast" >&2; exit 2; }
[ "$devices" -ge 2 ] && [ "$per" -ge 2 ] ||
    { echo "$0: -d and -p must be at least 2" >&2; exit 2; }
PY=/usr/bin/python3
W=$(mktemp -d "${TMPDIR:-/tmp}/yb-fleet.XXXXXX")
srvpid=""
stop_server() {
    [ -n "$srvpid" ] && kill "$srvpid" 2>/dev/null && wait "$srvpid" 2>/dev/null
    srvpid=""
}
cleanup() { stop_server; rm -rf "$W"; }
trap cleanup EXIT

# Open files: the server needs one per device and per connection, the
# client one per session; both raise their soft limit to the hard one.
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt $((2 * devices + 200)) ]; then
    echo "$0: the hard limit of open files ($hard) is below what $devices devices and" \
         "their sessions need ($((2 * devices + 200))): raise it (ulimit -Hn, as root)" >&2
    exit 2
fi

"$YB" synth acl --proto gnmi -n 1 -o "$W/set.ybc" >/dev/null || exit 1

# serve ARGS...: N TLS gNMI devices on 127.1.x.y, one port; writes
# $W/inv.yaml (secrets by reference: none here) and $W/ca.pem.
serve() {
    port=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.1.0.1",0)); print(s.getsockname()[1]); s.close()')
    # emptied here, not by the background job's redirection: that one may
    # come after the wait below has read the previous server's "ready"
    : >"$W/server.log"
    "$YB" serve --devices "$devices" --device-addresses 127.1.0.1 --gnmi ":$port" \
        --restconf off --self-signed --write-cert "$W/ca.pem" --write-inventory "$W/inv.yaml" \
        "$@" >"$W/server.log" 2>&1 &
    srvpid=$!
    for _ in $(seq 300); do grep -q 'devices ready' "$W/server.log" && return 0; sleep 0.1; done
    echo "$0: serve --devices $devices did not start:" >&2
    cat "$W/server.log" >&2
    exit 1
}

# The three clients: the fleet (every device, one session each), one
# device with N sessions, and one device with one session (the baseline).
# They exec, so that the background job measure starts is the client itself.
fleet() { exec "$YB" run "$W/set.ybc" --targets "$W/inv.yaml" --fan-out -c 1 -t "$threads" "$@"; }
single() { exec "$YB" run "$W/set.ybc" --target "grpcs://127.1.0.1:$port" --cacert "$W/ca.pem" \
               --servername localhost -c "$devices" -t "$threads" "$@"; }
one() { exec "$YB" run "$W/set.ybc" --target "grpcs://127.1.0.1:$port" --cacert "$W/ca.pem" \
            --servername localhost -c 1 -t 1 "$@"; }

# measure NAME CMD...: runs CMD with --json; prints "peak_rss_kb cpu_s
# duration_s requests ok" (peak VmRSS sampled every 20 ms; CPU: the
# report's cpu.user_s + cpu.sys_s, the whole process during the run).
measure() {
    local name=$1 peak=0 rss
    shift
    "$@" -q --json "$W/$name.json" >"$W/$name.out" 2>&1 &
    local pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
        [ -n "$rss" ] && [ "$rss" -gt "$peak" ] && peak=$rss
        sleep 0.02
    done
    wait "$pid"
    local rc=$?
    if [ $rc -ne 0 ] || [ ! -s "$W/$name.json" ]; then
        echo "$0: $name failed (exit $rc):" >&2
        grep -E -A12 '^(Requests|Errors):|^yangblast' "$W/$name.out" | head -40 >&2
        exit 1
    fi
    $PY - "$W/$name.json" "$peak" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["summary"]
print(sys.argv[2], r["cpu"]["user_s"] + r["cpu"]["sys_s"], s["duration_s"],
      s["requests_completed"], s["requests_ok"])
EOF
}

echo "# machine: $(nproc) CPUs, $(awk '/MemTotal/ {print int($2/1024)" MB"}' /proc/meminfo)," \
     "load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r)"
echo "# $devices devices (TLS, gNMI), 1 session each, vs 1 device x $devices sessions;" \
     "-t $threads; hold ${hold}s; $per calls per session for CPU; $rounds rounds"
: >"$W/rows"
for round in $(seq "$rounds"); do
    # set-up and memory: every session holds one call for $hold s
    serve --service-time "fixed:${hold}s"
    read -r b_rss _ _ _ b_ok <<<"$(measure base one -n 1)"
    read -r f_rss _ f_dur _ f_ok <<<"$(measure fm fleet -n 1)"
    read -r s_rss _ s_dur _ s_ok <<<"$(measure sm single -n "$devices")"
    stop_server
    # CPU: answered at once; P per session minus 1 per session
    serve --sink
    read -r _ f1_cpu _ _ f1_ok <<<"$(measure fc1 fleet -n 1)"
    read -r _ fp_cpu _ _ fp_ok <<<"$(measure fcp fleet -n "$per")"
    read -r _ s1_cpu _ _ s1_ok <<<"$(measure sc1 single -n "$devices")"
    read -r _ sp_cpu _ _ sp_ok <<<"$(measure scp single -n $((devices * per)))"
    stop_server
    want="1 $devices $devices $devices $((devices * per)) $devices $((devices * per))"
    got="$b_ok $f_ok $s_ok $f1_ok $fp_ok $s1_ok $sp_ok"
    [ "$got" = "$want" ] || { echo "$0: round $round: ok counts $got, want $want" >&2; exit 1; }
    $PY - "$devices" "$per" "$hold" "$b_rss" "$f_rss" "$s_rss" "$f_dur" "$s_dur" \
        "$f1_cpu" "$fp_cpu" "$s1_cpu" "$sp_cpu" "$round" >>"$W/rows" <<'EOF'
import sys
n, per, hold = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
b, f, s = (int(x) for x in sys.argv[4:7])
fd, sd = (float(x) for x in sys.argv[7:9])
f1, fp, s1, sp = (float(x) for x in sys.argv[9:13])
calls = n * (per - 1)
row = [(f - b) / (n - 1), (s - b) / (n - 1), fd - hold, sd - hold,
       (fp - f1) / calls * 1e6, (sp - s1) / calls * 1e6]
print(" ".join("%.3f" % v for v in row))
print("round %s: KB/session fleet %.1f single %.1f | set-up s fleet %.2f single %.2f | "
      "CPU us/call fleet %.1f single %.1f" % (sys.argv[13], *row), file=sys.stderr)
EOF
done
$PY - "$W/rows" <<'EOF'
import sys
rows = [[float(v) for v in l.split()] for l in open(sys.argv[1]) if l.strip()]
def rng(i):
    v = [r[i] for r in rows]
    return "%.1f..%.1f" % (min(v), max(v))
def ratio(i, j):
    v = [r[i] / r[j] for r in rows if r[j] > 0]
    return "%.2f..%.2f" % (min(v), max(v)) if v else "n/a"
print("client RSS per open session (KB): fleet %s, single target %s  (target <= 64)"
      % (rng(0), rng(1)))
print("set-up of every session (s):       fleet %s, single target %s, ratio %s"
      % (rng(2), rng(3), ratio(2, 3)))
print("client CPU per call (us):          fleet %s, single target %s, ratio %s  (target <= 1.2)"
      % (rng(4), rng(5), ratio(4, 5)))
EOF
