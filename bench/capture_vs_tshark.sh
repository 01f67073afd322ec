#!/bin/bash
# bench/capture_vs_tshark.sh [-s MB] [-t MB] [-r ROUNDS] [YANGBLAST]
#
# Capture-to-corpus throughput: MB of pcap per CPU second of
# `yangblast capture` next to tshark extracting the same requests' fields
# (h2c :path and DATA, HTTP/1.1 method, URI and body) from the same mix.
#
# The pcap is made here, never committed: bench/mkpcap.py replays the
# committed captures/gnmi-h2c.pcap, gnmi-interleaved.pcap (gNMI over h2c)
# and h1-keepalive.pcap, h1-pipelined.pcap (RESTCONF over HTTP/1.1) as new
# connections (fresh client addresses, 16 in flight, interleaved) until the
# file holds -s MB (default 1500; less when the disk has no room).  tshark
# keeps per-packet state (about 5 MB of RSS per MB of pcap), so it reads a
# -t MB file (default 200) of the same mix: its MB/s is per MB of the same
# traffic, the ratio compares rates.
#
# Rounds (-r, default 3) alternate yangblast and tshark; each figure is
# printed as min..max over the rounds, with the CPU time (user + sys of the
# process, /usr/bin/time) and wall time, peak RSS, and the load average.
# The record count is checked against the templates' (a faster but wrong
# capture cannot pass): the script exits non-zero when it differs.  Not a
# test: never fails on the figures.  Target: >= 1000 MB/s per CPU second,
# >= 20x tshark.
set -u
SIZE=1500 TSIZE=200 ROUNDS=3
while getopts "s:t:r:" o; do
    case $o in
    s) SIZE=$OPTARG ;;
    t) TSIZE=$OPTARG ;;
    r) ROUNDS=$OPTARG ;;
    *) echo "usage: $0 [-s MB] [-t MB] [-r ROUNDS] [YANGBLAST]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
YB=$(realpath "${1:-${YB:-./yangblast}}")
SRC=${YB_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
[ -x "$YB" ] || { echo "no yangblast binary at $YB" >&2; exit 2; }
command -v tshark >/dev/null || { echo "tshark not installed" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time not installed" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/yb-bench-cap.XXXXXX")
trap 'rm -rf "$W"' EXIT

avail=$(df -Pm "$W" | awk 'NR==2 {print $4}')
# the pcap, tshark's, the corpus and a margin
if [ "$avail" -lt $((SIZE + TSIZE + SIZE / 4 + 500)) ]; then
    SIZE=$(((avail - TSIZE - 500) * 4 / 5))
    echo "only $avail MB free in $W: pcap cut to $SIZE MB"
fi
T=("$SRC/captures/gnmi-h2c.pcap" "$SRC/captures/gnmi-interleaved.pcap"
   "$SRC/captures/h1-keepalive.pcap" "$SRC/captures/h1-pipelined.pcap")
info=$(/usr/bin/python3 "$SRC/bench/mkpcap.py" "$W/big.pcap" "$SIZE" "${T[@]}") || exit 2
/usr/bin/python3 "$SRC/bench/mkpcap.py" "$W/small.pcap" "$TSIZE" "${T[@]}" >"$W/small.info" || exit 2
copies=$(set -- $info; echo "$5")
# tshark: h2c and HTTP/1.1 on the templates' server ports
dec=()
for pt in $(set -- $info; shift 6; echo "$@"); do
    case ${pt#*=} in
    */gnmi-*) dec+=(-d "tcp.port==${pt%%=*},http2") ;;
    *) dec+=(-d "tcp.port==${pt%%=*},http") ;;
    esac
done
# records per template (one copy each), from the committed expectations
want=0 i=0
for t in "${T[@]}"; do
    per=$(($(wc -l <"${t%.pcap}.expected.jsonl") - 1))
    # copies cycle through the templates in order
    n=$(((copies - i + ${#T[@]} - 1) / ${#T[@]}))
    want=$((want + n * per))
    i=$((i + 1))
done
mb() { /usr/bin/python3 -c "import os,sys; print('%.1f' % (os.path.getsize(sys.argv[1]) / 1e6))" "$1"; }
BIG=$(mb "$W/big.pcap") SMALL=$(mb "$W/small.pcap")
echo "capture_vs_tshark: $BIG MB pcap ($copies connection copies, $want requests), tshark on $SMALL MB of the same mix"
echo "machine: $(nproc) CPUs, $(uname -r), no CPU pinning; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "yangblast: $YB capture -q -r PCAP -o OUT.ybc"
echo "tshark:    tshark -r PCAP ${dec[*]} -Y 'http2.header.name == \":path\" || http.request' -T fields -e http2.header.value -e http2.data.data -e http.request.method -e http.request.uri -e http.file_data"

fail=0
# once, untimed: every request paired with its response, nothing dropped
"$YB" capture -r "$W/small.pcap" -o "$W/out.ybc" 2>"$W/report" || fail=1
grep -q ' 0 without a response status' "$W/report" &&
    grep -q '^dropped requests: gap 0, malformed 0, too large 0, incomplete 0, invalid 0, overflow 0, filtered 0' "$W/report" ||
    { echo "capture of the small pcap lost requests or responses:"; cat "$W/report"; fail=1; }
for r in $(seq "$ROUNDS"); do
    rm -f "$W/out.ybc"
    /usr/bin/time -f "%e %U %S %M" -o "$W/yb.time" "$YB" capture -q -r "$W/big.pcap" -o "$W/out.ybc" || fail=1
    got=$("$YB" corpus info "$W/out.ybc" 2>/dev/null | sed -n 's/^records: *//p')
    [ "$got" = "$want" ] || { echo "round $r: yangblast wrote ${got:-no} records, want $want"; fail=1; }
    rm -f "$W/out.ybc"
    /usr/bin/time -f "%e %U %S %M" -o "$W/ts.time" tshark -r "$W/small.pcap" "${dec[@]}" \
        -Y 'http2.header.name == ":path" || http.request' -T fields -e http2.header.value \
        -e http2.data.data -e http.request.method -e http.request.uri -e http.file_data \
        2>/dev/null >"$W/ts.out" || fail=1
    echo "$r $(cat "$W/yb.time") $(cat "$W/ts.time") $(wc -l <"$W/ts.out") $(cut -d' ' -f1 /proc/loadavg)" >>"$W/rounds"
done
/usr/bin/python3 - "$BIG" "$SMALL" "$W/rounds" <<'PY'
import sys
big, small = float(sys.argv[1]), float(sys.argv[2])
rows = [l.split() for l in open(sys.argv[3])]
yb, ts, ratio, load = [], [], [], []
for r in rows:
    _, ye, yu, ys, yrss, te, tu, tsy, trss, lines, la = r
    y = big / (float(yu) + float(ys))
    t = small / (float(tu) + float(tsy))
    yb.append(y); ts.append(t); ratio.append(y / t); load.append(float(la))
    print("round %s: yangblast %.2f s CPU (%.2f s wall, RSS %d MB) %.0f MB/s | "
          "tshark %.2f s CPU (%.2f s wall, RSS %d MB, %s lines) %.1f MB/s | %.1fx | load %s"
          % (r[0], float(yu) + float(ys), float(ye), int(yrss) // 1024, y,
             float(tu) + float(tsy), float(te), int(trss) // 1024, lines, t, y / t, la))
rng = lambda v, f: (f + ".." + f) % (min(v), max(v))
print("yangblast capture: %s MB/s per CPU second" % rng(yb, "%.0f"))
print("tshark fields:     %s MB/s per CPU second" % rng(ts, "%.1f"))
print("ratio:             %sx (target >= 20x; yangblast target >= 1000 MB/s)" % rng(ratio, "%.1f"))
print("load average:      %s" % rng(load, "%.1f"))
PY
exit $fail
