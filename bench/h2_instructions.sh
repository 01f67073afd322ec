#!/bin/bash
# bench/h2_instructions.sh -- user-space instructions per gRPC call, counted
# by callgrind: yangblast, h2load and (when built) bench/floor_h2.
#
# CPU time on a shared machine is noisy; instruction counts are not.  Each
# client makes the same unary gNMI Set calls as bench/h2_vs_h2load.sh (one
# synthesized Set, 16 connections x 10 streams by default, h2c) against a
# fresh `yangblast serve --sink` pinned to CPU 0, under
# `valgrind --tool=callgrind`, twice: N and N + 10,000 calls.  The
# difference of the two totals divided by 10,000 is the cost of a call
# without the run's fixed cost (start-up, connections, the report).  Only
# user space is counted: the kernel's share (the socket copies, about
# 60 % of the CPU per call on these machines) is not in these figures.
# Batching differs a little from run to run (how many answers one read
# brings), so figures move by about +-1 %; compare builds at that level.
#
# Per client it prints the instructions per call and how they split by
# object (libnghttp2, libc, the program, libuv, ...), from callgrind_annotate.
# With -L DIR (a directory holding a libnghttp2.so.14 built with symbols, for
# profiling only) the clients load that one, and the callgrind files kept
# with -k show nghttp2's functions by name.
#
# Usage: bench/h2_instructions.sh [-n N] [-c CONNS] [-m STREAMS] [-L LIBDIR]
#        [-k DIR] [YANGBLAST]
# Exits non-zero when a client could not run or did not complete its calls.
set -u
n=2000 c=16 m=10 libdir="" keep=""
while getopts n:c:m:L:k: o; do
    case $o in
    n) n=$OPTARG ;; c) c=$OPTARG ;; m) m=$OPTARG ;; L) libdir=$OPTARG ;; k) keep=$OPTARG ;;
    *) echo "usage: $0 [-n N] [-c C] [-m M] [-L LIBDIR] [-k DIR] [YANGBLAST]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
YB=${1:-${YB:-./yangblast}}
for tool in valgrind callgrind_annotate h2load taskset; do
    command -v $tool >/dev/null || { echo "$0: $tool missing (Debian: valgrind / nghttp2-client / util-linux)" >&2; exit 2; }
done
[ -x "$YB" ] || { echo "$0: $YB: not an executable yangblast" >&2; exit 2; }
[ -z "$libdir" ] || [ -e "$libdir/libnghttp2.so.14" ] || { echo "$0: -L $libdir: no libnghttp2.so.14 there" >&2; exit 2; }
[ -z "$keep" ] || mkdir -p "$keep" || exit 2
PY=/usr/bin/python3
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
bench_scratch
FLOOR=$(dirname "$YB")/bench/floor_h2

path=$(bench_gnmi_set "$W") || exit 1
port=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')

# run_cg WHO CALLS: one client run of CALLS calls under callgrind against
# a fresh sink; its callgrind file is $W/cg.WHO.CALLS.  Fails when the
# client did not complete every call.
run_cg() {
    local who=$1 k=$2 out=$W/out.$1.$2 cg=$W/cg.$1.$2 ok
    bench_gnmi_sink_start "$W" "$port" 0 || return 1
    local vg=(env ${libdir:+LD_LIBRARY_PATH=$libdir} valgrind -q --tool=callgrind --callgrind-out-file="$cg")
    case $who in
    yangblast)
        "${vg[@]}" "$YB" run "$W/set.ybc" --target "grpc://localhost:$port" -c "$c" -m "$m" -t 1 \
            -n "$k" --json "$W/yb.json" >"$out" 2>&1
        ok=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["requests_ok"])' \
            "$W/yb.json" 2>/dev/null) ;;
    h2load)
        "${vg[@]}" h2load -n "$k" -c "$c" -m "$m" -t 1 -d "$W/body.bin" \
            -H 'content-type: application/grpc' -H 'te: trailers' "http://127.0.0.1:$port$path" >"$out" 2>&1
        grep -q "requests: $k total, $k started, $k done, $k succeeded" "$out" && ok=$k ;;
    floor)
        "${vg[@]}" "$FLOOR" 127.0.0.1 "$port" "$c" "$m" "$k" "$path" "$W/body.bin" >"$out" 2>&1
        ok=$(sed -n 's/^floor_h2: requests \([0-9]*\) .*/\1/p' "$out") ;;
    esac
    bench_server_stop
    local counts
    counts=$(bench_gnmi_sink_counts "$W")
    if [ "${ok:-}" != "$k" ] || [ "${counts%% *}" != "$k" ]; then
        echo "$0: $who completed '${ok:-}' of $k calls (the sink counted '${counts%% *}'):" >&2
        sed 's/^/#   /' "$out" >&2
        return 1
    fi
    [ -z "$keep" ] || cp "$cg" "$keep/"
}

# per_call WHO: instructions per call and their split by object, from the
# two runs' callgrind files.
per_call() {
    $PY - "$W/cg.$1.$n" "$W/cg.$1.$((n + 10000))" "$1" <<'EOF'
import re, subprocess, sys
def by_object(f):
    out = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100", f],
                         capture_output=True, text=True, check=True).stdout
    total, objs = 0, {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(\S.*)$", line)
        if not m:
            continue
        v = int(m.group(1).replace(",", ""))
        if "PROGRAM TOTALS" in m.group(2):
            total = v
            continue
        o = re.search(r"\[([^\]]+)\]\s*$", m.group(2))
        if o:
            name = o.group(1).rsplit("/", 1)[-1]
            name = re.sub(r"\.so[.\d]*$", "", name)
            objs[name] = objs.get(name, 0) + v
    return total, objs
(ta, oa), (tb, ob) = by_object(sys.argv[1]), by_object(sys.argv[2])
per = (tb - ta) / 10000
split = sorted(((ob.get(k, 0) - oa.get(k, 0)) / 10000, k) for k in set(oa) | set(ob))
parts = ", ".join("%s %.0f" % (k, v) for v, k in reversed(split) if v >= 0.01 * per)
print("%-10s %9.0f   %s" % (sys.argv[3], per, parts))
EOF
}

whos="yangblast h2load"
[ -x "$FLOOR" ] && whos="$whos floor" || echo "# (no $FLOOR: make bench/floor_h2 to count the floor too)"
echo "# gNMI Set ($(stat -c %s "$W/body.bin") B body), $c connections x $m streams, h2c, serve --sink on CPU 0;" \
     "callgrind, runs of $n and $((n + 10000)) calls${libdir:+, libnghttp2 from $libdir}"
printf '%-10s %9s   %s\n' client "Ir/call" "by object"
for who in $whos; do
    run_cg "$who" "$n" && run_cg "$who" $((n + 10000)) || exit 1
    per_call "$who" || exit 1
done
