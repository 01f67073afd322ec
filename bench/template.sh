#!/bin/bash
# bench/template.sh -- what a template adds per request, next to the
# untemplated figure.
#
# The request: the first record of `synth acl --unique` (its ACL set name
# ends in _{{iter}}: the name in the path and several times in the body),
# ~14.5 KB, as a RESTCONF POST and as a gNMI SetRequest.
#
# 1. The codec's submit (bench/tmpl_cost, built here with `make
#    bench/tmpl_cost` when missing): the record prepared as it is and as a
#    template, batches of each interleaved, submitted through the real
#    client codec on a stub session (no sockets): the median ns per request
#    of each and the difference.  Targets: <= 2 us added for RESTCONF,
#    <= 5 us for gNMI.
# 2. The whole generator: `yangblast run` against `yangblast serve --sink`
#    with the templated corpus and with the same corpus not marked as a
#    template, -r interleaved pairs: CPU per request (user + sys of the run
#    over its requests, the report's cpu.per_request_us) of each.
#
# Usage: bench/template.sh [-n REQUESTS] [-r ROUNDS] [YANGBLAST]
# Build without --enable-sanitizers for meaningful figures.  Never fails on
# the numbers; exits non-zero only when something could not run.
set -u
n=50000 rounds=3
while getopts n:r: o; do
    case $o in
    n) n=$OPTARG ;; r) rounds=$OPTARG ;;
    *) echo "usage: $0 [-n N] [-r ROUNDS] [YANGBLAST]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
YB=${1:-${YB:-./yangblast}}
[ -x "$YB" ] || { echo "$0: $YB: not an executable yangblast" >&2; exit 2; }
BD=$(cd "$(dirname "$YB")" && pwd)
PROBE=$BD/bench/tmpl_cost
[ -x "$PROBE" ] || make -C "$BD" bench/tmpl_cost >/dev/null || { echo "$0: cannot build $PROBE" >&2; exit 2; }
PY=/usr/bin/python3
W=$(mktemp -d "${TMPDIR:-/tmp}/yb-bench.XXXXXX")
srvpid=""
cleanup() {
    [ -n "$srvpid" ] && kill "$srvpid" 2>/dev/null && wait "$srvpid" 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT

# corpora: templated (synth --unique) and the same records unmarked
for p in restconf gnmi; do
    m=""; [ $p = restconf ] && m="--method POST"
    "$YB" synth acl --proto $p $m -n 1 --unique --scheme http -o "$W/$p-t.ybc" || exit 1
    "$YB" corpus cat "$W/$p-t.ybc" | $PY -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l); r.pop("template", None); print(json.dumps(r))' >"$W/$p.jsonl" &&
        "$YB" corpus import "$W/$p.jsonl" -o "$W/$p-p.ybc" >/dev/null || exit 1
done

echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "1. codec submit, ns per request (median of 400 batches of 200)"
printf '%-10s %10s %10s %10s %8s\n' proto plain templated added target
for p in restconf gnmi; do
    out=$("$PROBE" "$W/$p-t.ybc" 400) || { echo "$0: tmpl_cost failed on $p" >&2; exit 1; }
    pl=$(echo "$out" | sed -n 's/^plain //p')
    tp=$(echo "$out" | sed -n 's/^templated //p')
    ad=$(echo "$out" | sed -n 's/^added //p')
    tgt=2000; [ $p = gnmi ] && tgt=5000
    printf '%-10s %10s %10s %10s %8s\n' $p "$pl" "$tp" "$ad" "<=$tgt"
done

echo
echo "2. yangblast run -n $n against serve --sink: CPU us per request ($rounds interleaved pairs)"
port_r=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
port_g=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
"$YB" serve --sink --restconf "127.0.0.1:$port_r" --gnmi "127.0.0.1:$port_g" >"$W/serve.log" 2>&1 &
srvpid=$!
for _ in $(seq 50); do grep -q '^serve:' "$W/serve.log" && break; sleep 0.1; done
cpu() { # cpu CORPUS URL: prints cpu.per_request_us of one run
    "$YB" run -q "$1" --target "$2" -n "$n" -c 4 --json "$W/r.json" >/dev/null 2>&1 ||
        { echo "$0: run of $1 failed" >&2; exit 1; }
    $PY -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["cpu"]["per_request_us"])' "$W/r.json"
}
printf '%-10s %-24s %-24s\n' proto plain templated
for p in restconf gnmi; do
    url=http://127.0.0.1:$port_r; [ $p = gnmi ] && url=grpc://127.0.0.1:$port_g
    a="" b=""
    for _ in $(seq "$rounds"); do
        a="$a $(cpu "$W/$p-p.ybc" "$url")"
        b="$b $(cpu "$W/$p-t.ybc" "$url")"
    done
    printf '%-10s %-24s %-24s\n' $p "$a" "$b"
done
