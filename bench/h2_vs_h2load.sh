#!/bin/bash
# bench/h2_vs_h2load.sh -- client CPU per gRPC call: yangblast vs h2load.
#
# Both clients send the same pre-framed gNMI SetRequest (the first record
# of a synthesized corpus) with the same gRPC headers to the same server,
# which is cheap per request so that the clients are what is measured:
#   -s sink     (default) `yangblast serve --sink`: answers at once, without
#               decoding, a SetResponse with one UpdateResult per operation
#               and grpc-status 0 -- valid answers, calls count as ok.
#   -s nghttpd  nghttpd answering every POST with a static file holding a
#               gRPC-framed SetResponse (one UpdateResult) plus, through
#               --trailer, grpc-status 0: a valid answer, calls count as ok.
# Same connections, same streams in flight, same request count; each
# client's CPU (user + sys, from bash's `time` over the process) is divided
# by the request count.  yangblast also parses and validates every
# response, h2load does not.
#
# Mapping: h2load -c C -m M is C connections with M streams each, C*M
# calls in flight; yangblast's -c C -m M means the same.
#
# Usage: bench/h2_vs_h2load.sh [-n REQUESTS] [-c CONNS] [-m STREAMS]
#        [-r ROUNDS] [-s sink|nghttpd] [YANGBLAST]
# Prints CPU us/RPC for both and the ratio yangblast/h2load (the goal is
# <= 0.7).  Never fails on the numbers; exits non-zero only when a client
# could not run or did not complete every request.
set -u
n=100000 c=2 m=8 rounds=3 server=sink
while getopts n:c:m:r:s: o; do
    case $o in
    n) n=$OPTARG ;; c) c=$OPTARG ;; m) m=$OPTARG ;; r) rounds=$OPTARG ;; s) server=$OPTARG ;;
    *) echo "usage: $0 [-n N] [-c C] [-m M] [-r ROUNDS] [-s sink|nghttpd] [YANGBLAST]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
YB=${1:-${YB:-./yangblast}}
for tool in nghttpd h2load; do
    command -v $tool >/dev/null || { echo "$0: $tool missing (Debian: nghttp2-server / nghttp2-client)" >&2; exit 2; }
done
[ -x "$YB" ] || { echo "$0: $YB: not an executable yangblast" >&2; exit 2; }
PY=/usr/bin/python3
W=$(mktemp -d "${TMPDIR:-/tmp}/yb-bench.XXXXXX")
srvpid=""
cleanup() {
    [ -n "$srvpid" ] && kill "$srvpid" 2>/dev/null && wait "$srvpid" 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT

# The request: one synthesized Set; its gRPC-framed body for h2load.
"$YB" synth acl --proto gnmi -n 1 -o "$W/set.ybc" || exit 1
"$YB" corpus cat "$W/set.ybc" | $PY -c '
import base64, json, sys
rec = json.loads(sys.stdin.readline())
open(sys.argv[1], "wb").write(base64.b64decode(rec["body_base64"]))
print(rec["path"])' "$W/body.bin" >"$W/path" || exit 1
path=$(cat "$W/path")
mkdir -p "$W/docs$(dirname "$path")"
printf '\000\000\000\000\002\022\000' >"$W/docs$path"

port=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
case $server in
sink)
    "$YB" serve --sink --gnmi "127.0.0.1:$port" --restconf off >"$W/server.log" 2>&1 &
    srvpid=$!
    okkey=requests_ok
    yb_extra="" ;;
nghttpd)
    nghttpd --no-tls -a 127.0.0.1 -d "$W/docs" --trailer 'grpc-status: 0' -m 1000 "$port" \
        >"$W/server.log" 2>&1 &
    srvpid=$!
    okkey=requests_ok
    yb_extra="" ;;
*) echo "$0: -s sink or nghttpd" >&2; exit 2 ;;
esac
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done

# cpu_of OUT CMD...: runs CMD, stdout+stderr to OUT; prints "user+sys" seconds.
cpu_of() {
    local out=$1 TIMEFORMAT='%3U %3S'
    shift
    { time "$@" >"$out" 2>&1; } 2>"$W/time" || { echo "FAILED"; return 1; }
    awk '{ printf "%.3f\n", $1 + $2 }' "$W/time"
}

body_len=$(stat -c %s "$W/body.bin")
echo "# $n Set calls of $body_len bytes (gRPC-framed), $c connections x $m streams, server $server on 127.0.0.1:$port"
echo "# h2load:    h2load -n $n -c $c -m $m -t 1 -d body.bin -H 'content-type: application/grpc' -H 'te: trailers' http://127.0.0.1:$port$path"
echo "# yangblast: $YB run set.ybc --target grpc://127.0.0.1:$port -c $c -m $m -t 1 -n $n $yb_extra"
printf '%-6s %14s %14s %8s\n' round "h2load us/RPC" "yangblast us/RPC" ratio
tot_h=0 tot_y=0 status=0
for r in $(seq "$rounds"); do
    sh=$(cpu_of "$W/h2load.out" h2load -n "$n" -c "$c" -m "$m" -t 1 -d "$W/body.bin" \
        -H 'content-type: application/grpc' -H 'te: trailers' "http://127.0.0.1:$port$path")
    if [ "$sh" = FAILED ] || ! grep -q "requests: $n total, $n started, $n done, $n succeeded" "$W/h2load.out"; then
        echo "h2load did not complete every request:" >&2; cat "$W/h2load.out" >&2; status=1; break
    fi
    sy=$(cpu_of "$W/yb.out" "$YB" run "$W/set.ybc" --target "grpc://127.0.0.1:$port" \
        -c "$c" -m "$m" -t 1 -n "$n" $yb_extra --json "$W/yb.json")
    ok=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"][sys.argv[2]])' "$W/yb.json" "$okkey" 2>/dev/null)
    if [ "$sy" = FAILED ] || [ "$ok" != "$n" ]; then
        echo "yangblast did not complete every request:" >&2; cat "$W/yb.out" >&2; status=1; break
    fi
    uh=$(awk -v s="$sh" -v n="$n" 'BEGIN { printf "%.2f", s * 1e6 / n }')
    uy=$(awk -v s="$sy" -v n="$n" 'BEGIN { printf "%.2f", s * 1e6 / n }')
    printf '%-6s %14s %14s %8s\n' "$r" "$uh" "$uy" "$(awk -v a="$uy" -v b="$uh" 'BEGIN { printf "%.2f", a / b }')"
    tot_h=$(awk -v a="$tot_h" -v b="$sh" 'BEGIN { print a + b }')
    tot_y=$(awk -v a="$tot_y" -v b="$sy" 'BEGIN { print a + b }')
done
[ "$status" = 0 ] || exit "$status"
awk -v h="$tot_h" -v y="$tot_y" -v n="$n" -v r="$rounds" 'BEGIN {
    uh = h * 1e6 / (n * r); uy = y * 1e6 / (n * r)
    printf "all    %14.2f %14.2f %8.2f   (yangblast/h2load CPU per RPC; goal <= 0.70)\n", uh, uy, uy / uh
}'
echo "# h2load's rate: $(grep -o 'finished in.*' "$W/h2load.out")"
echo "# yangblast's rate: $(grep -A2 '^# Requests' "$W/yb.out" | tail -1)"
echo "# yangblast's own figure (engine only, no start-up): $(grep '^Generator CPU' "$W/yb.out")"
