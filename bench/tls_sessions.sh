#!/bin/bash
# bench/tls_sessions.sh -- client CPU per new TLS session: yangblast vs h2load.
#
# Every request on a session of its own (TLS 1.3, h2 by ALPN, one gNMI Set
# of ~14.5 KB each), against
#   -s nghttpd  (default) nghttpd answering every POST with a static
#               gRPC-framed SetResponse and a grpc-status 0 trailer; it
#               accepts only the P-256 group, so a client leading with an
#               X25519 key share is sent a HelloRetryRequest;
#   -s sink     `yangblast serve --sink` (X25519 first, as OpenSSL).
# Clients:
#   h2load -n N -c N -t 1: N clients of one request each, all started at
#     once (h2load has no session per request otherwise); it never resumes
#     a session (it does not call SSL_set_session), so its figure is a
#     full handshake in both comparisons;
#   yangblast run --sessions per-request -c C -n N -t 1 (C sessions at a
#     time), verifying the server's certificate (h2load does not), and
#     with --tls-resume (-R) a second time, resuming.
# Rounds interleave the clients (their order rotates), each against a fresh
# server pinned to another core than the client (-P SERVER,CLIENT; default
# 0,1).  CPU is user + sys of the whole client process (bash's `time`,
# from rusage) divided by N.  A run counts only when the server's own
# counts agree: N TLS connections and N calls (nghttpd's -v log: handshakes
# completed and streams ended by the client; the sink's --stats), and
# every call ok on the client's side.
#
# Usage: bench/tls_sessions.sh [-n SESSIONS] [-c CONCURRENT] [-r ROUNDS]
#        [-s nghttpd|sink] [-R] [-P SERVER,CLIENT] [YANGBLAST]
# Prints per round CPU us per session and the ratios yangblast/h2load (goal
# <= 0.9 with and without resumption), the range over rounds and the
# median ratios, and the load average before and after.  Never fails on
# the numbers; exits non-zero only when something could not run or the
# counts disagree.
set -u
n=1000 c=8 rounds=5 server=nghttpd resume=0 pin=0,1
while getopts n:c:r:s:RP: o; do
    case $o in
    n) n=$OPTARG ;; c) c=$OPTARG ;; r) rounds=$OPTARG ;; s) server=$OPTARG ;; R) resume=1 ;;
    P) pin=$OPTARG ;;
    *) echo "usage: $0 [-n N] [-c C] [-r ROUNDS] [-s nghttpd|sink] [-R] [-P S,C] [YANGBLAST]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
YB=${1:-${YB:-./yangblast}}
for tool in nghttpd h2load taskset openssl ss; do
    command -v $tool >/dev/null || { echo "$0: $tool missing (Debian: nghttp2-server, nghttp2-client, util-linux, openssl, iproute2)" >&2; exit 2; }
done
[ -x "$YB" ] || { echo "$0: $YB: not an executable yangblast" >&2; exit 2; }
case $server in sink|nghttpd) ;; *) echo "$0: -s nghttpd or sink" >&2; exit 2 ;; esac
[ "$(ulimit -n)" -gt $((n + 64)) ] || ulimit -n $((n + 64)) 2>/dev/null ||
    { echo "$0: h2load -c $n needs $n descriptors; ulimit -n is $(ulimit -n)" >&2; exit 2; }
score=${pin%,*} ccore=${pin#*,}
PY=/usr/bin/python3
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
bench_scratch

path=$(bench_gnmi_set "$W") || exit 1
mkdir -p "$W/docs$(dirname "$path")"
printf '\000\000\000\000\002\022\000' >"$W/docs$path"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=localhost -addext 'subjectAltName=DNS:localhost,IP:127.0.0.1' \
    -keyout "$W/key.pem" -out "$W/cert.pem" >/dev/null 2>&1 || exit 1
port=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')

start_server() {
    rm -f "$W/stats.json" "$W/server.log"
    if [ "$server" = sink ]; then
        taskset -c "$score" "$YB" serve --sink --gnmi "127.0.0.1:$port" --restconf off \
            --tls-cert "$W/cert.pem" --tls-key "$W/key.pem" --stats "$W/stats.json" \
            >"$W/server.log" 2>&1 &
    else
        taskset -c "$score" nghttpd -v -a 127.0.0.1 -d "$W/docs" --trailer 'grpc-status: 0' \
            -m 1000 "$port" "$W/key.pem" "$W/cert.pem" >"$W/server.log" 2>&1 &
    fi
    srvpid=$!
    # wait for the listener without connecting (a probe would be counted)
    for _ in $(seq 100); do
        ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && return 0
        sleep 0.05
    done
    echo "$0: the $server server did not start:" >&2
    cat "$W/server.log" >&2
    return 1
}
# server_counts (after bench_server_stop): "CONNECTIONS CALLS" as the server saw them.
server_counts() {
    if [ "$server" = sink ]; then
        $PY -c 'import json,sys; s=json.load(open(sys.argv[1]))
print(s["connections"]["gnmi"], s["requests"]["gnmi"]["Set"])' "$W/stats.json" 2>/dev/null
    else
        awk '/SSL\/TLS handshake completed/ { h++ }
             /recv (DATA|HEADERS) frame/ { f = 1; next }
             f && /; END_STREAM/ { e++ }
             { f = f && /^ *;/ }
             END { print h + 0, e + 0 }' "$W/server.log"
    fi
}
cpu_of() {
    local out=$1 TIMEFORMAT='%3U %3S'
    shift
    { time taskset -c "$ccore" "$@" >"$out" 2>&1; } 2>"$W/time" || { echo "FAILED"; return 1; }
    awk '{ printf "%.3f\n", $1 + $2 }' "$W/time"
}
# run_one h2load|full|resumed: prints CPU seconds, or FAILED (why on stderr).
run_one() {
    local who=$1 s ok counts extra=""
    start_server || { echo FAILED; return; }
    if [ "$who" = h2load ]; then
        s=$(cpu_of "$W/out" h2load -n "$n" -c "$n" -t 1 -d "$W/body.bin" \
            -H 'content-type: application/grpc' -H 'te: trailers' "https://127.0.0.1:$port$path")
        grep -q "requests: $n total, $n started, $n done, $n succeeded" "$W/out" || s=FAILED
    else
        [ "$who" = resumed ] && extra=--tls-resume
        s=$(cpu_of "$W/out" "$YB" run "$W/set.ybc" --target "grpcs://localhost:$port" \
            --cacert "$W/cert.pem" --sessions per-request -c "$c" -n "$n" -t 1 $extra --json "$W/yb.json")
        ok=$($PY -c 'import json,sys; r=json.load(open(sys.argv[1]))
print(r["summary"]["requests_ok"], r["sessions"]["opened"], r["sessions"]["tls_resumed"])' "$W/yb.json" 2>/dev/null)
        set -- $ok
        if [ "${1:-}" != "$n" ] || [ "${2:-}" != "$n" ]; then
            s=FAILED
        elif [ "$who" = resumed ] && [ "${3:-0}" -lt $((n * 9 / 10)) ]; then
            echo "$0: only ${3:-0} of $n sessions resumed" >&2
            s=FAILED
        fi
    fi
    [ "$s" = FAILED ] && cat "$W/out" >&2
    bench_server_stop
    counts=$(server_counts)
    if [ "$s" != FAILED ] && [ "$counts" != "$n $n" ]; then
        echo "$0: $who: the $server server saw \"$counts\" (TLS connections, calls), expected \"$n $n\"" >&2
        s=FAILED
    fi
    echo "$s"
}

clients="h2load full"
[ "$resume" = 1 ] && clients="h2load full resumed"
echo "# $n new TLS 1.3 sessions, one ~$(stat -c %s "$W/body.bin")-byte gNMI Set each, server $server on 127.0.0.1:$port"
echo "# pinned: server on CPU $score, client on CPU $ccore; $(nproc) CPUs online"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# h2load:    h2load -n $n -c $n -t 1 -d body.bin -H 'content-type: application/grpc' -H 'te: trailers' https://127.0.0.1:$port$path"
echo "# yangblast: $YB run set.ybc --target grpcs://localhost:$port --cacert cert.pem --sessions per-request -c $c -n $n -t 1$([ "$resume" = 1 ] && echo ' [--tls-resume]')"
printf '%-6s %12s %12s %8s' round "h2load us" "yb full us" ratio
[ "$resume" = 1 ] && printf ' %12s %8s' "yb resumed us" ratio
echo
: >"$W/rows"
for r in $(seq "$rounds"); do
    # rotate the order of the clients from round to round
    set -- $clients
    for _ in $(seq $(((r - 1) % $#))); do set -- "${@:2}" "$1"; done
    declare -A cpu=()
    for who in "$@"; do
        cpu[$who]=$(run_one "$who")
        [ "${cpu[$who]}" = FAILED ] && exit 1
    done
    awk -v r="$r" -v h="${cpu[h2load]}" -v f="${cpu[full]}" -v s="${cpu[resumed]:-}" -v n="$n" 'BEGIN {
        uh = h * 1e6 / n; uf = f * 1e6 / n
        printf "%-6s %12.1f %12.1f %8.2f", r, uh, uf, uf / uh
        if (s != "") { us = s * 1e6 / n; printf " %12.1f %8.2f", us, us / uh }
        printf "\n" }' | tee -a "$W/rows"
    unset cpu
done
awk -v res="$resume" '
    function med(a, k,   i, j, t) {
        for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
    }
    { h[NR] = $2; f[NR] = $3; qf[NR] = $4; if (res) { s[NR] = $5; qs[NR] = $6 } }
    END {
        printf "median %12.1f %12.1f %8.2f", med(h, NR), med(f, NR), med(qf, NR)
        if (res) printf " %12.1f %8.2f", med(s, NR), med(qs, NR)
        printf "   (ratios: yangblast/h2load CPU per session; goal <= 0.90)\n"
        printf "range  %.2f..%.2f full", qf[1], qf[NR]
        if (res) printf ", %.2f..%.2f resumed", qs[1], qs[NR]
        printf "\n"
    }' "$W/rows"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# server's counts agreed with every client in every round"
