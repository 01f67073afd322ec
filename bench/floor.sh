#!/bin/bash
# bench/floor.sh -- the floor of a client's CPU per request on this machine:
# the peer tool, a minimal client that only moves the same bytes
# (bench/floor_h1, bench/floor_h2) twice -- sleeping in epoll_wait whenever
# nothing is ready ("floor"), and polling first for up to -p (default 10us,
# the window yangblast's worker polls before it sleeps with --io epoll:
# "floor+poll") -- and yangblast, on the same workload.
# The floor clients make a read and a write call per request, as the peers
# and yangblast --io epoll do; yangblast's default (--io auto: the
# worker's io_uring) makes about one call per request, so it can go below
# that floor.  -y '--io epoll' compares like with like.
#
# Workloads (-w, a comma-separated list; default get,set):
#   get    HTTP/1.1 GET of one ACL set (~150-byte request, the one
#          bench/h1_vs_wrk.sh -w get sends) to nginx (tests/peers/nginx.sh),
#          -c connections (default 10), -d seconds each:
#          wrk  vs  floor_h1  vs  yangblast run -c C -t 1 -D Ds
#   patch  the same with the 14.5 KB ACL-set PATCH of bench/h1_vs_wrk.sh
#   set    gNMI Set of ~14.5 KB (gRPC-framed, the one bench/h2_vs_h2load.sh
#          sends) over h2c to `yangblast serve --sink`, 16 connections x 10
#          streams, -n calls each:
#          h2load  vs  floor_h2  vs  yangblast run -c 16 -m 10 -t 1 -n N
# floor_h1 sends the bytes wrk sends (request line, Host, Accept or
# Content-Type, Content-Length, body) and nginx's log must show requests of
# exactly that length from both; floor_h2 sends h2load's headers (less its
# user-agent) and the same body.
#
# Every client run gets a fresh server pinned to CPU 0, the client runs on
# CPU 1; its CPU is user + sys of the whole process (rusage) divided by the
# requests it completed.  Rounds interleave the clients (odd rounds: peer,
# floor, floor+poll, yangblast; even rounds the other way round).  The
# server's own counts are checked after each run: nginx's log holds as many
# requests of the workload (method, path, status; for wrk and floor_h1 also
# the request's length) as the client says it completed -- floor_h1:
# exactly, and nothing else; wrk and yangblast stop mid-request, so up to
# -c more, answered or not; the sink's --stats hold N Set calls and at
# least N bodies' bytes.
#
# Usage: bench/floor.sh [-d SECONDS] [-n CALLS] [-c CONNS] [-r ROUNDS]
#        [-w get,set,patch] [-p POLL] [-y 'ARGS'] [YANGBLAST]
#   -y: more arguments for yangblast's runs (e.g. -y '--io epoll': libuv's
#   read and write per request instead of the worker's io_uring).
#   YANGBLAST defaults to $YB, then ./yangblast (an -O2 build); the floor
#   clients are taken from $FLOOR_BIN, default the bench/ directory next to
#   it (build them with `make bench/floor_h1 bench/floor_h2`).
# Prints per round CPU us/request of each client, the ratios floor/peer,
# floor+poll/peer, yangblast/floor, yangblast/floor+poll and yangblast/peer
# and the share of user time in each client's CPU (the rest is the
# kernel's), then their ranges and medians, and the
# load average before and after.  Never fails on the numbers; exits
# non-zero when a run fails or the server's counts disagree.
set -u
secs=5 n=50000 c1=10 c2=16 m2=10 rounds=3 works=get,set poll=10us yargs=
while getopts d:n:c:r:w:p:y: o; do
    case $o in
    d) secs=$OPTARG ;; n) n=$OPTARG ;; c) c1=$OPTARG ;; r) rounds=$OPTARG ;; w) works=$OPTARG ;;
    p) poll=$OPTARG ;; y) yargs=$OPTARG ;;
    *) echo "usage: $0 [-d SECONDS] [-n CALLS] [-c CONNS] [-r ROUNDS] [-w get,set,patch] [-p POLL] [-y 'ARGS'] [YANGBLAST]" >&2
       exit 2 ;;
    esac
done
shift $((OPTIND - 1))
for v in secs n c1 rounds; do
    case ${!v} in ''|*[!0-9]*|0*) echo "$0: -${v:0:1}: a positive integer" >&2; exit 2 ;; esac
done
YB=${1:-${YB:-./yangblast}}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${YB_SRCDIR:-$HERE/..}
FL=${FLOOR_BIN:-$(dirname "$YB")/bench}
PY=/usr/bin/python3
[ -x "$YB" ] || { echo "$0: $YB: not an executable yangblast" >&2; exit 2; }
command -v taskset >/dev/null || { echo "$0: taskset missing (Debian: util-linux)" >&2; exit 2; }
do_h1=0 do_h2=0
for w in ${works//,/ }; do
    case $w in
    get|patch) do_h1=1; need="wrk nginx"; prog=floor_h1 ;;
    set) do_h2=1; need=h2load; prog=floor_h2 ;;
    *) echo "$0: -w: get, set or patch, not '$w'" >&2; exit 2 ;;
    esac
    for t in $need; do
        command -v $t >/dev/null || [ -x /usr/sbin/$t ] ||
            { echo "$0: $t missing (Debian: wrk / nginx-light / nghttp2-client)" >&2; exit 2; }
    done
    [ -x "$FL/$prog" ] || { echo "$0: $FL/$prog missing: make bench/$prog (or set FLOOR_BIN)" >&2; exit 2; }
done
. "$SRC/tests/peers/nginx.sh"
. "$HERE/lib.sh"
bench_scratch
trap 'bench_server_stop; nginx_stop "$W/ng"; rm -rf "$W"' EXIT
export NGINX_MAX_SECONDS=$((secs * 3 + 60))
port=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')

# fpoll WHO: the floor client's -p: 0 for floor, $poll for floorp.
fpoll() { if [ "$1" = floorp ]; then echo "$poll"; else echo 0; fi; }

# ---- HTTP/1.1 against nginx ---------------------------------------------------
# h1_setup WORK: the request of WORK (get, patch) for all three clients in
# $W/WORK/: acl.ybc (yangblast), patch.lua (wrk), req.bin (floor_h1).
h1_setup() {
    local d=$W/$1 op=get
    [ "$1" = patch ] && op=create
    mkdir -p "$d"
    bench_h1_workload "$d" "$op" http 1 >"$d/first" || return 1
    bench_h1_request "$d" "127.0.0.1:$port" "$d/req.bin"
}
# h1_run WORK WHO: one run of WHO (peer, floor, floorp, yangblast) against a fresh
# nginx; prints "CPU_S REQUESTS USER_S", or FAILED after saying why on stderr.
h1_run() {
    local d=$W/$1 who=$2 url=http://127.0.0.1:$port s k method body_len avg path status log
    read -r method body_len avg path <"$d/first"
    status=200; [ "$1" = patch ] && status=204
    rm -rf "$W/ng"
    bench_nginx_pinned "$W/ng" "$port" >&2 || { echo FAILED; return; }
    case $who in
    peer)
        s=$(bench_cpu "$W/out" wrk -t 1 -c "$c1" -d "${secs}s" -s "$d/patch.lua" "$url")
        k=$(sed -n 's/^ *\([0-9][0-9]*\) requests in .*/\1/p' "$W/out")
        grep -qE 'Non-2xx|Socket errors' "$W/out" && s=FAILED ;;
    floor|floorp)
        s=$(bench_cpu "$W/out" "$FL/floor_h1" -p "$(fpoll "$who")" 127.0.0.1 "$port" "$c1" "${secs}s" \
            "$d/req.bin")
        k=$(sed -n 's/^floor_h1: requests \([0-9]*\) .*/\1/p' "$W/out") ;;
    yangblast)
        # shellcheck disable=SC2086
        s=$(bench_cpu "$W/out" "$YB" run "$d/acl.ybc" --target "$url" -c "$c1" -t 1 -D "${secs}s" \
            --json "$W/yb.json" $yargs)
        k=$($PY -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]
print(s["requests_completed"] if s["requests_error"] == 0 else "")' "$W/yb.json" 2>/dev/null) ;;
    esac
    nginx_stop "$W/ng"
    if [ "$s" = FAILED ] || [ -z "$k" ]; then
        echo "$0: $1: $who failed or saw errors:" >&2; sed 's/^/#   /' "$W/out" >&2; echo FAILED; return
    fi
    log=$(nginx_log "$W/ng")
    # what the server saw: requests, and those not of the workload (method,
    # path, status; for wrk and floor_h1 also the request's length)
    local want_len=-; [ "$who" != yangblast ] && want_len=$(stat -c %s "$d/req.bin")
    read -r seen good <<<"$(awk -F'\t' -v m="$method" -v p="$path" -v st="$status" -v l="$want_len" \
        '$4 == m && $5 == p && $6 == st && (l == "-" || $7 == l) { g++ } END { print NR, g + 0 }' "$log")"
    local max=$((k + c1)); [ "${who#floor}" != "$who" ] && max=$k
    if [ "$good" -lt "$k" ] || [ "$seen" -gt "$max" ] || [ "$good" -gt "$max" ]; then
        echo "$0: $1: $who says $k requests completed; nginx logged $seen, $good of them $method $path -> $status (request length: $want_len); want $k..$max" >&2
        echo FAILED; return
    fi
    echo "$s $k $(cut -d' ' -f1 "$W/out.us")"
}

# ---- gNMI Set over h2c against serve --sink -------------------------------------
h2_setup() {
    mkdir -p "$W/set"
    gpath=$(bench_gnmi_set "$W/set") || return 1
    body_len=$(stat -c %s "$W/set/body.bin")
}
h2_run() {
    local who=$2 s k counts
    bench_gnmi_sink_start "$W" "$port" 0 || { echo FAILED; return; }
    case $who in
    peer)
        s=$(bench_cpu "$W/out" h2load -n "$n" -c "$c2" -m "$m2" -t 1 -d "$W/set/body.bin" \
            -H 'content-type: application/grpc' -H 'te: trailers' "http://127.0.0.1:$port$gpath")
        grep -q "requests: $n total, $n started, $n done, $n succeeded" "$W/out" && k=$n || k= ;;
    floor|floorp)
        s=$(bench_cpu "$W/out" "$FL/floor_h2" -p "$(fpoll "$who")" 127.0.0.1 "$port" "$c2" "$m2" "$n" \
            "$gpath" "$W/set/body.bin")
        k=$(sed -n 's/^floor_h2: requests \([0-9]*\) .*/\1/p' "$W/out") ;;
    yangblast)
        # shellcheck disable=SC2086
        s=$(bench_cpu "$W/out" "$YB" run "$W/set/set.ybc" --target "grpc://localhost:$port" \
            -c "$c2" -m "$m2" -t 1 -n "$n" --json "$W/yb.json" $yargs)
        k=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["requests_ok"])' \
            "$W/yb.json" 2>/dev/null) ;;
    esac
    bench_server_stop
    if [ "$s" = FAILED ] || [ "$k" != "$n" ]; then
        echo "$0: set: $who failed or completed '$k' of $n:" >&2; sed 's/^/#   /' "$W/out" >&2; echo FAILED; return
    fi
    counts=$(bench_gnmi_sink_counts "$W")
    if ! awk -v c="$counts" -v n="$n" -v l="$body_len" \
            'BEGIN { split(c, a, " "); exit !(a[1] == n && a[2] >= n * l) }'; then
        echo "$0: set: $who: the sink saw \"$counts\" (Set calls, bytes in), expected $n and >= $((n * body_len))" >&2
        echo FAILED; return
    fi
    echo "$s $k $(cut -d' ' -f1 "$W/out.us")"
}

echo "# $(nproc) CPUs; server on CPU 0, clients on CPU 1 (taskset); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# get/patch: nginx, $c1 connections, ${secs}s a run: wrk -t 1 -c $c1 -d ${secs}s | $FL/floor_h1 -p 0|$poll 127.0.0.1 PORT $c1 ${secs}s req.bin | $YB run acl.ybc -c $c1 -t 1 -D ${secs}s $yargs"
echo "# set: serve --sink over h2c, $n calls, $c2 x $m2 streams: h2load -n $n -c $c2 -m $m2 -t 1 -d body.bin | $FL/floor_h2 -p 0|$poll 127.0.0.1 PORT $c2 $m2 $n PATH body.bin | $YB run set.ybc -c $c2 -m $m2 -t 1 -n $n $yargs"
status=0
for w in ${works//,/ }; do
    case $w in get|patch) h1_setup "$w" || exit 1 ;; set) h2_setup || exit 1 ;; esac
done
printf '%-6s %-5s %8s %8s %8s %8s %11s %11s %9s %9s %8s %s\n' work round "peer us" "floor us" \
    "+poll us" "yb us" floor/peer +poll/peer yb/floor yb/+poll yb/peer "  user % of CPU: peer floor +poll yb"
: >"$W/rows"
for r in $(seq "$rounds"); do
    order="peer floor floorp yangblast"; [ $((r % 2)) = 0 ] && order="yangblast floorp floor peer"
    for w in ${works//,/ }; do
        for who in $order; do
            if [ "$w" = set ]; then res=$(h2_run "$w" "$who"); else res=$(h1_run "$w" "$who"); fi
            [ "$res" = FAILED ] && { status=1; break 3; }
            eval "res_$who=\$res"
        done
        # shellcheck disable=SC2154
        $PY -c 'import sys
w, r = sys.argv[1:3]
runs = [a.split() for a in sys.argv[3:7]]
p, f, fp, y = [float(a[0]) * 1e6 / int(a[1]) for a in runs]
if min(p, f, fp, y) <= 0:
    sys.exit("a run without CPU time: %s" % " / ".join(sys.argv[3:7]))
user = [100 * float(a[2]) / float(a[0]) for a in runs]
print("%-6s %-5s %8.2f %8.2f %8.2f %8.2f %11.2f %11.2f %9.2f %9.2f %8.2f   %3.0f %3.0f %3.0f %3.0f"
      % ((w, r, p, f, fp, y, f / p, fp / p, y / f, y / fp, y / p) + tuple(user)))' \
            "$w" "$r" "$res_peer" "$res_floor" "$res_floorp" "$res_yangblast" >>"$W/rows" ||
            { status=1; break 2; }
        tail -n 1 "$W/rows"
    done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
for w in ${works//,/ }; do
    grep -q "^$w " "$W/rows" || continue
    peer=wrk; [ "$w" = set ] && peer=h2load
    col() { awk -v w="$w" -v k="$1" '$1 == w { print $k }' "$W/rows"; }
    # shellcheck disable=SC2046
    {
        printf '%-30s %s\n' "$w: $peer us/request" "$(bench_range $(col 3))" \
            "$w: floor us/request" "$(bench_range $(col 4))" \
            "$w: floor+poll us/request" "$(bench_range $(col 5))" \
            "$w: yangblast us/request" "$(bench_range $(col 6))" \
            "$w: floor/$peer" "$(bench_range $(col 7))" \
            "$w: floor+poll/$peer" "$(bench_range $(col 8))" \
            "$w: yangblast/floor" "$(bench_range $(col 9))" \
            "$w: yangblast/floor+poll" "$(bench_range $(col 10))" \
            "$w: yangblast/$peer" "$(bench_range $(col 11))" \
            "$w: user % of CPU, $peer" "$(bench_range $(col 12))" \
            "$w: user % of CPU, floor" "$(bench_range $(col 13))" \
            "$w: user % of CPU, floor+poll" "$(bench_range $(col 14))" \
            "$w: user % of CPU, yangblast" "$(bench_range $(col 15))"
    }
done
[ "$status" = 0 ] && echo "# the servers' counts agreed with every client in every run"
exit $status
