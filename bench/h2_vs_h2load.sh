#!/bin/bash
# bench/h2_vs_h2load.sh -- client CPU per gRPC call: yangblast vs h2load.
#
# Both clients send the same pre-framed gNMI SetRequest (the first record
# of a synthesized corpus, ~14.5 KB) with the same gRPC headers to the same
# server, which is cheap per request so that the clients are what is
# measured:
#   -s sink     (default) `yangblast serve --sink`: answers at once, without
#               decoding, a SetResponse with one UpdateResult per operation
#               and grpc-status 0 -- valid answers, calls count as ok.
#   -s nghttpd  nghttpd answering every POST with a static file holding a
#               gRPC-framed SetResponse (one UpdateResult) plus, through
#               --trailer, grpc-status 0: a valid answer, calls count as ok.
# -T: over TLS 1.3 (grpcs:// / https://, h2 by ALPN) instead of h2c.
# Same connections, same streams in flight, same request count, one thread
# each; h2load -c C -m M means C connections with M streams each, and so
# does yangblast's -c C -m M.
#
# Rounds are interleaved pairs (odd rounds h2load first, even rounds
# yangblast first) against a fresh server each, server and client pinned
# to different cores (-P SERVER,CLIENT; default 0,1).  Each client's CPU is
# user + sys of the whole process (bash's `time`, from rusage) divided by
# the request count.  A run counts only when the server's own counts agree
# with the client: sink -- its --stats show N Set calls and at least N
# bodies' bytes received; nghttpd -- its -v log shows N streams ended by
# the client and N bodies' DATA bytes (so a faster-but-wrong client cannot
# pass).  yangblast also checks every response (SetResponse results),
# h2load checks nothing but the status.
#
# Usage: bench/h2_vs_h2load.sh [-n REQUESTS] [-c CONNS] [-m STREAMS]
#        [-r ROUNDS] [-s sink|nghttpd] [-T] [-P SERVER,CLIENT] [-y 'ARGS'] [YANGBLAST]
#   -y: more arguments for yangblast run, e.g. -y '--io epoll'.
# Prints per round CPU us/RPC for both and the ratio yangblast/h2load (the
# goal is <= 0.7), then the range over rounds and the median ratio, and the
# load average before and after.  Never fails on the numbers; exits
# non-zero only when something could not run or the counts disagree.
set -u
n=100000 c=16 m=10 rounds=5 server=sink tls=0 pin=0,1 yargs=
while getopts n:c:m:r:s:TP:y: o; do
    case $o in
    n) n=$OPTARG ;; c) c=$OPTARG ;; m) m=$OPTARG ;; r) rounds=$OPTARG ;; s) server=$OPTARG ;;
    T) tls=1 ;; P) pin=$OPTARG ;; y) yargs=$OPTARG ;;
    *) echo "usage: $0 [-n N] [-c C] [-m M] [-r ROUNDS] [-s sink|nghttpd] [-T] [-P S,C] [-y 'ARGS'] [YANGBLAST]" >&2
       exit 2 ;;
    esac
done
shift $((OPTIND - 1))
YB=${1:-${YB:-./yangblast}}
for tool in nghttpd h2load taskset openssl; do
    command -v $tool >/dev/null || { echo "$0: $tool missing (Debian: nghttp2-server / nghttp2-client / util-linux / openssl)" >&2; exit 2; }
done
[ -x "$YB" ] || { echo "$0: $YB: not an executable yangblast" >&2; exit 2; }
case $server in sink|nghttpd) ;; *) echo "$0: -s sink or nghttpd" >&2; exit 2 ;; esac
score=${pin%,*} ccore=${pin#*,}
PY=/usr/bin/python3
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
bench_scratch

# The request: one synthesized Set; its gRPC-framed body for h2load.
path=$(bench_gnmi_set "$W") || exit 1
body_len=$(stat -c %s "$W/body.bin")
mkdir -p "$W/docs$(dirname "$path")"
printf '\000\000\000\000\002\022\000' >"$W/docs$path"
if [ "$tls" = 1 ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj /CN=localhost -addext 'subjectAltName=DNS:localhost,IP:127.0.0.1' \
        -keyout "$W/key.pem" -out "$W/cert.pem" >/dev/null 2>&1 || exit 1
    yscheme=grpcs hscheme=https ytls="--cacert $W/cert.pem"
else
    yscheme=grpc hscheme=http ytls=""
fi

port=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
# start_server: a fresh server for one client run, pinned to its core.
start_server() {
    local t=()
    if [ "$server" = sink ]; then
        [ "$tls" = 1 ] && t=(--tls-cert "$W/cert.pem" --tls-key "$W/key.pem")
        bench_gnmi_sink_start "$W" "$port" "$score" "${t[@]}"
        return
    fi
    rm -f "$W/server.log"
    t=(--no-tls "$port")
    [ "$tls" = 1 ] && t=("$port" "$W/key.pem" "$W/cert.pem")
    # -v: the frame log the counts are checked on
    taskset -c "$score" nghttpd -v -a 127.0.0.1 -d "$W/docs" --trailer 'grpc-status: 0' \
        -m 1000 "${t[@]}" >"$W/server.log" 2>&1 &
    srvpid=$!
    bench_wait_port "$port" "$W/server.log"
}
# server_counts: after bench_server_stop, "CALLS BYTES" as the server saw them:
# calls ended by the client (sink: Set calls; nghttpd: END_STREAM
# received), request body bytes received (sink: all gNMI bytes in).
server_counts() {
    if [ "$server" = sink ]; then
        bench_gnmi_sink_counts "$W"
    else
        awk '/recv DATA frame/ { if (match($0, /length=[0-9]+/)) b += substr($0, RSTART + 7, RLENGTH - 7) }
             /recv (DATA|HEADERS) frame/ { f = 1; next }
             f && /; END_STREAM/ { e++ }
             { f = f && /^ *;/ }
             END { print e + 0, b + 0 }' "$W/server.log"
    fi
}

# cpu_of OUT CMD...: runs CMD pinned to the client core, stdout+stderr to
# OUT; prints "user+sys" seconds.
cpu_of() {
    local out=$1 TIMEFORMAT='%3U %3S'
    shift
    { time taskset -c "$ccore" "$@" >"$out" 2>&1; } 2>"$W/time" || { echo "FAILED"; return 1; }
    awk '{ printf "%.3f\n", $1 + $2 }' "$W/time"
}

# run_one h2load|yangblast: one client run against a fresh server; prints
# its CPU seconds, or FAILED after saying why on stderr.
run_one() {
    local who=$1 s ok counts
    start_server || { echo FAILED; return; }
    if [ "$who" = h2load ]; then
        s=$(cpu_of "$W/h2load.out" h2load -n "$n" -c "$c" -m "$m" -t 1 -d "$W/body.bin" \
            -H 'content-type: application/grpc' -H 'te: trailers' "$hscheme://127.0.0.1:$port$path")
        grep -q "requests: $n total, $n started, $n done, $n succeeded" "$W/h2load.out" || s=FAILED
        [ "$s" = FAILED ] && cat "$W/h2load.out" >&2
    else
        # shellcheck disable=SC2086
        s=$(cpu_of "$W/yb.out" "$YB" run "$W/set.ybc" --target "$yscheme://localhost:$port" $ytls \
            -c "$c" -m "$m" -t 1 -n "$n" --json "$W/yb.json" $yargs)
        ok=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["requests_ok"])' \
            "$W/yb.json" 2>/dev/null)
        [ "$ok" = "$n" ] || { s=FAILED; cat "$W/yb.out" >&2; }
    fi
    bench_server_stop
    counts=$(server_counts)
    if [ "$s" != FAILED ] && ! awk -v c="$counts" -v n="$n" -v l="$body_len" \
            'BEGIN { split(c, a, " "); exit !(a[1] == n && a[2] >= n * l) }'; then
        echo "$0: $who: the $server server saw \"$counts\" (calls, body bytes), expected $n calls and >= $((n * body_len)) bytes" >&2
        s=FAILED
    fi
    echo "$s"
}

echo "# $n Set calls of $body_len bytes (gRPC-framed), $c connections x $m streams, one thread," \
    "server $server$([ "$tls" = 1 ] && echo ' over TLS 1.3') on 127.0.0.1:$port"
echo "# pinned: server on CPU $score, client on CPU $ccore; $(nproc) CPUs online"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# h2load:    h2load -n $n -c $c -m $m -t 1 -d body.bin -H 'content-type: application/grpc' -H 'te: trailers' $hscheme://127.0.0.1:$port$path"
echo "# yangblast: $YB run set.ybc --target $yscheme://localhost:$port ${ytls:+--cacert cert.pem }-c $c -m $m -t 1 -n $n $yargs"
printf '%-6s %14s %16s %8s\n' round "h2load us/RPC" "yangblast us/RPC" ratio
: >"$W/rows"
for r in $(seq "$rounds"); do
    if [ $((r % 2)) = 1 ]; then
        sh=$(run_one h2load); [ "$sh" = FAILED ] && exit 1
        sy=$(run_one yangblast); [ "$sy" = FAILED ] && exit 1
    else
        sy=$(run_one yangblast); [ "$sy" = FAILED ] && exit 1
        sh=$(run_one h2load); [ "$sh" = FAILED ] && exit 1
    fi
    awk -v r="$r" -v h="$sh" -v y="$sy" -v n="$n" 'BEGIN {
        uh = h * 1e6 / n; uy = y * 1e6 / n
        printf "%-6s %14.2f %16.2f %8.2f\n", r, uh, uy, uy / uh }' | tee -a "$W/rows"
done
sort -n -k4 "$W/rows" | awk '{ h[NR] = $2; y[NR] = $3; q[NR] = $4 }
    END {
        hmin = hmax = h[1]; ymin = ymax = y[1]
        for (i = 2; i <= NR; i++) {
            if (h[i] < hmin) hmin = h[i]; if (h[i] > hmax) hmax = h[i]
            if (y[i] < ymin) ymin = y[i]; if (y[i] > ymax) ymax = y[i]
        }
        med = NR % 2 ? q[(NR + 1) / 2] : (q[NR / 2] + q[NR / 2 + 1]) / 2
        printf "range  %6.2f..%-6.2f %7.2f..%-7.2f %4.2f..%-4.2f median ratio %.2f (yangblast/h2load CPU per RPC; goal <= 0.70)\n",
            hmin, hmax, ymin, ymax, q[1], q[NR], med
    }'
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# server's counts agreed with both clients in every round"
