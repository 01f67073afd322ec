#!/bin/bash
# bench/h1_vs_wrk.sh -- client CPU per RESTCONF request: yangblast vs wrk.
#
# Both clients send ACL-set PATCHes (application/yang-data+json, ~14.5 KB)
# over plain HTTP/1.1 keep-alive to the same nginx (tests/peers/nginx.sh,
# which answers 204 after reading the whole body), with the same number of
# connections (-c 10), one thread each, for the same duration.  wrk sends
# the first record of a synthesized corpus (method, path, body,
# Content-Type and Accept) from a Lua script; yangblast replays the corpus
# (cycling), by default a corpus of that one record, so that both send the
# same bytes.  -n N gives yangblast a corpus of N different records
# instead (as a replay does: N x 14.5 KB of bodies, which for N = 1000 no
# longer fit in the CPU's caches, so each body is read from memory, where
# wrk's one body stays cached).  Each client's CPU (user + sys of the whole process, from
# its rusage) is divided by the requests it completed (wrk's summary;
# yangblast's --json report).  yangblast also times every phase of every
# request into histograms, wrk keeps only its latency histogram.
#
# -s sink runs both against `yangblast serve --sink` instead of nginx (the
# generator's ceiling: the server answers 204 at once without parsing).
# -w get sends small GETs of one ACL set (~150 B requests, nginx answers a
# small JSON body) instead of the PATCHes; -T runs both over TLS (https,
# nginx only; yangblast with -k, wrk does not verify).
#
# The server is pinned to CPU 0 and each client to CPU 1 (taskset), the
# rounds interleave the two clients (wrk first in odd rounds, yangblast
# first in even ones), and each round checks nginx's own count of the
# requests it answered against what the client says it completed.  The
# load average is printed before and after: on a shared machine only the
# ratios of one run mean something.
#
# Usage: bench/h1_vs_wrk.sh [-d SECONDS] [-c CONNS] [-r ROUNDS] [-n RECORDS] [-s nginx|sink] [-w patch|get] [-T] [-y 'ARGS'] [YANGBLAST]
#   (YANGBLAST defaults to $YB, then ./yangblast; run it from a build dir;
#   -y: more arguments for yangblast run, e.g. -y '--io epoll')
# Prints CPU us/request for both and the ratio yangblast/wrk per round, and
# the range and median of the ratios (the goals: <= 0.7 for small requests,
# <= 0.9 for the 14.5 KB PATCH).  Never fails on the numbers; exits non-zero only when a client
# or nginx could not run, or a client saw errors.
set -u
secs=10 c=10 rounds=1 nrec=1 server=nginx work=patch tls= yargs=
while getopts d:c:r:n:s:w:Ty: o; do
    case $o in
    d) secs=$OPTARG ;; c) c=$OPTARG ;; r) rounds=$OPTARG ;; n) nrec=$OPTARG ;;
    s) server=$OPTARG ;; w) work=$OPTARG ;; T) tls=tls ;; y) yargs=$OPTARG ;;
    *) echo "usage: $0 [-d SECONDS] [-c CONNS] [-r ROUNDS] [-n RECORDS] [-s nginx|sink] [-w patch|get] [-T] [-y 'ARGS'] [YANGBLAST]" >&2; exit 2 ;;
    esac
done
case $nrec in ''|*[!0-9]*|0*) echo "$0: -n: a number of records >= 1" >&2; exit 2 ;; esac
shift $((OPTIND - 1))
YB=${1:-${YB:-./yangblast}}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${YB_SRCDIR:-$HERE/..}
case $work in patch) synth_op=create ;; get) synth_op=get ;; *) echo "$0: -w patch or get" >&2; exit 2 ;; esac
[ -n "$tls" ] && [ "$server" = sink ] && { echo "$0: -T needs -s nginx" >&2; exit 2; }
command -v taskset >/dev/null || { echo "$0: taskset missing (Debian: util-linux)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "$0: wrk missing (Debian: wrk)" >&2; exit 2; }
[ -x "$YB" ] || { echo "$0: $YB: not an executable yangblast" >&2; exit 2; }
[ -f "$SRC/tests/peers/nginx.sh" ] || { echo "$0: $SRC/tests/peers/nginx.sh missing (set YB_SRCDIR)" >&2; exit 2; }
. "$SRC/tests/peers/nginx.sh"
. "$HERE/lib.sh"
PY=/usr/bin/python3
W=$(mktemp -d "${TMPDIR:-/tmp}/yb-bench.XXXXXX")
srvpid=
cleanup() {
    if [ -n "$srvpid" ]; then kill "$srvpid" 2>/dev/null; wait "$srvpid" 2>/dev/null; fi
    nginx_stop "$W/ng"
    rm -rf "$W"
}
trap cleanup EXIT

# The workload, and wrk's copy of its first record.
scheme=http; [ -n "$tls" ] && scheme=https
bench_h1_workload "$W" "$synth_op" "$scheme" "$nrec" >"$W/first" || exit 1
read -r method body_len avg_len path <"$W/first"

export NGINX_MAX_SECONDS=$(( (secs * 2 + 30) * rounds + 60 ))
port=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
if [ "$server" = sink ]; then
    taskset -c 0 "$YB" serve --sink --restconf "127.0.0.1:$port" --gnmi off >"$W/server.log" 2>&1 &
    srvpid=$!
    for _ in $(seq 50); do grep -q '^serve:' "$W/server.log" && break; sleep 0.1; done
else
    bench_nginx_pinned "$W/ng" "$port" $tls || exit 1
fi
url=$scheme://127.0.0.1:$port
yb_tls=(); [ -n "$tls" ] && yb_tls=(-k)

echo "# $method $path, body $body_len bytes (wrk; yangblast: $nrec-record corpus, average $avg_len), $server on $url, ${secs}s each, $c connections, 1 thread"
echo "# $(nproc) CPUs; server on CPU 0, client on CPU 1 (taskset); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# wrk:       wrk -t 1 -c $c -d ${secs}s -s patch.lua $url"
echo "# yangblast: $YB run acl.ybc --target $url ${yb_tls[*]} -c $c -t 1 -D ${secs}s --json out.json $yargs"
printf '%-5s %10s %10s %12s %10s %10s %12s %8s\n' round "wrk req" "wrk cpu_s" "wrk us/req" \
    "yb req" "yb cpu_s" "yb us/req" ratio
# The nginx log line wrk's requests must produce (method, status,
# Content-Length, Content-Type).
if [ "$work" = get ]; then want_seen="$method 200 - -"
else want_seen="$method 204 $body_len application/yang-data+json"; fi
# count_ok CLIENT COMPLETED SERVED: the server answered every request the
# client counts as completed, and at most -c more (cut off at the end).
count_ok() {
    [ "$server" = nginx ] || return 0
    if [ "$3" -lt "$2" ] || [ "$3" -gt $(($2 + c)) ]; then
        echo "# $1 says $2 requests completed, nginx logged $3"; return 1
    fi
}
run_wrk() {
    cw=$(bench_cpu "$W/wrk.out" wrk -t 1 -c "$c" -d "${secs}s" -s "$W/patch.lua" "$url")
    nw=$(sed -n 's/^ *\([0-9][0-9]*\) requests in .*/\1/p' "$W/wrk.out")
    if [ "$cw" = FAILED ] || [ -z "$nw" ] || grep -qE 'Non-2xx|Socket errors' "$W/wrk.out"; then
        echo "# wrk failed or saw errors:"; sed 's/^/#   /' "$W/wrk.out"; return 1
    fi
    if [ "$server" = nginx ]; then
        # What wrk sent, as nginx saw it.
        seen=$(head -n 1 "$(nginx_log "$W/ng")" | cut -f 4,6,8,9 | tr '\t' ' ')
        if [ "$seen" != "$want_seen" ]; then
            echo "# wrk's requests are not the corpus's first record: nginx saw '$seen'"; return 1
        fi
        count_ok wrk "$nw" "$(bench_nginx_served "$W/ng")" || return 1
    fi
}
run_yb() {
    # shellcheck disable=SC2086
    cy=$(bench_cpu "$W/yb.out" "$YB" run "$W/acl.ybc" --target "$url" "${yb_tls[@]}" -c "$c" -t 1 \
        -D "${secs}s" --json "$W/yb.json" $yargs)
    ny=$($PY -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["summary"]
print(s["requests_completed"] if s["requests_error"] == 0 else "")' "$W/yb.json" 2>/dev/null)
    if [ "$cy" = FAILED ] || [ -z "$ny" ]; then
        echo "# yangblast failed or saw errors:"; sed 's/^/#   /' "$W/yb.out"; return 1
    fi
    [ "$server" = nginx ] && { count_ok yangblast "$ny" "$(bench_nginx_served "$W/ng")" || return 1; }
    return 0
}
[ "$server" = nginx ] && bench_nginx_served "$W/ng" >/dev/null
tot_w=0 tot_wn=0 tot_y=0 tot_yn=0 status=0 ratios=
for r in $(seq "$rounds"); do
    if [ $((r % 2)) = 1 ]; then
        run_wrk && run_yb || { status=1; break; }
    else
        run_yb && run_wrk || { status=1; break; }
    fi
    uw=$(bench_us_per "$cw" "$nw") uy=$(bench_us_per "$cy" "$ny")
    ratio=$($PY -c "print('%.2f' % ($uy / $uw))")
    ratios="$ratios $ratio"
    printf '%-5s %10s %10s %12s %10s %10s %12s %8s\n' "$r" "$nw" "$cw" "$uw" "$ny" "$cy" "$uy" "$ratio"
    read -r wu ws <"$W/wrk.out.us"; read -r yu ys <"$W/yb.out.us"
    echo "#     user/sys s: wrk $wu/$ws, yangblast $yu/$ys"
    tot_w=$($PY -c "print(round($tot_w + $cw, 3))") tot_wn=$((tot_wn + nw))
    tot_y=$($PY -c "print(round($tot_y + $cy, 3))") tot_yn=$((tot_yn + ny))
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$tot_wn" -gt 0 ] && [ "$tot_yn" -gt 0 ]; then
    uw=$(bench_us_per "$tot_w" "$tot_wn") uy=$(bench_us_per "$tot_y" "$tot_yn")
    target=0.90; [ "$work" = get ] && target=0.70
    echo "wrk:       $uw us CPU/request ($tot_wn requests, ${tot_w}s CPU)"
    echo "yangblast: $uy us CPU/request ($tot_yn requests, ${tot_y}s CPU;" \
        "its own report: $($PY -c "import json,sys; print(round(json.load(open(sys.argv[1]))['cpu']['per_request_us'], 1))" "$W/yb.json") us, last round)"
    echo "ratio yangblast/wrk: $($PY -c "print('%.2f' % ($uy / $uw))") overall;" \
        "per round $(bench_range $ratios)" \
        "(target <= $target)"
fi
exit $status
