#!/bin/bash
# Load models of `yangblast run` against a real nginx: fixed-rate open loop,
# ramps and steps, original timing and sessions, bounded backlog, SIGINT,
# and the HdrHistogram / CSV outputs.  Generous bounds: exact speed belongs
# in bench/.
. "$YB_SRCDIR/tests/lib.sh"
. "$YB_SRCDIR/tests/peers/nginx.sh"
PY=/usr/bin/python3
HLOG_CHECK=${YB_BUILDDIR:-.}/tests/tools/hlog_check

NG=$T/ng; mkdir -p "$NG"
PORT=$(free_port)
stop_ng() { nginx_stop "$NG"; }
at_exit stop_ng
nginx_start "$NG" "$PORT" >/dev/null || { echo "Bail out! nginx did not start"; exit 1; }
URL=http://127.0.0.1:$PORT
LOG=$(nginx_log "$NG")

"$YB" synth acl -n 50 -r 2 -o "$T/small.ybc" >/dev/null
# nginx answers /slow/... after 200 ms (the target URL's path is not used:
# records carry their own paths)
printf '%s\n' '{"protocol":"restconf","method":"GET","path":"/slow/x"}' | "$YB" corpus import -o "$T/slow.ybc"
jq_() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# 1. fixed rate: achieved within a few percent of the target
timeout 60 "$YB" run "$T/small.ybc" --target "$URL" -c 4 --rate 200 -D 3s -q --json "$T/rate.json" >/dev/null
check_rc "fixed rate run exits 0" 0 test -s "$T/rate.json"
rate=$(jq_ "$T/rate.json" "d['summary']['rate_per_s']")
ok_rate=$($PY -c "print(1 if abs($rate-200)/200 < 0.04 else 0)")
is "achieved rate $rate/s is within 4% of 200/s" "$ok_rate" 1
n=$(jq_ "$T/rate.json" "d['summary']['requests_completed']")
ok_n=$($PY -c "print(1 if 570 <= $n <= 630 else 0)")
is "3 s at 200/s completes about 600 requests ($n)" "$ok_n" 1
is "open loop is described in the JSON" "$(jq_ "$T/rate.json" "d['run']['rate_target_per_s']")" "200.0"
ivs=$(jq_ "$T/rate.json" "' '.join(str(i['requests']) for i in d['intervals'])")
ok_iv=$($PY -c "v=[int(x) for x in '$ivs'.split()]; print(1 if len(v)>=3 and all(180<=x<=220 for x in v[:3]) else 0)")
is "per-second series holds ~200 per second ($ivs)" "$ok_iv" 1
has_p=$(jq_ "$T/rate.json" "all('p50_us' in i and 'p99_us' in i and i['p99_us'] >= i['p50_us'] > 0 for i in d['intervals'] if i['requests'])")
is "per-second p50/p99 present and ordered" "$has_p" True

# 2. a ramp visibly ramps; steps step
timeout 60 "$YB" run "$T/small.ybc" --target "$URL" -c 4 --rate ramp:50..350/3s -q --json "$T/ramp.json" >/dev/null
ivs=$(jq_ "$T/ramp.json" "' '.join(str(i['requests']) for i in d['intervals'])")
ok_ramp=$($PY -c "v=[int(x) for x in '$ivs'.split()]; print(1 if len(v)>=3 and v[0]<v[1]<v[2] and v[2]>2*v[0] else 0)")
is "ramp 50..350/3s rises second by second ($ivs)" "$ok_ramp" 1
tot=$(jq_ "$T/ramp.json" "d['summary']['requests_completed']")
ok_tot=$($PY -c "print(1 if 540 <= $tot <= 660 else 0)")
is "ramp ends by itself after its duration with ~600 requests ($tot)" "$ok_tot" 1
timeout 60 "$YB" run "$T/small.ybc" --target "$URL" -c 4 --rate step:100@1s,300@1s -q --json "$T/step.json" >/dev/null
ivs=$(jq_ "$T/step.json" "' '.join(str(i['requests']) for i in d['intervals'])")
ok_step=$($PY -c "v=[int(x) for x in '$ivs'.split()]; print(1 if len(v)>=2 and 85<=v[0]<=115 and 270<=v[1]<=330 else 0)")
is "step:100@1s,300@1s gives ~100 then ~300 per second ($ivs)" "$ok_step" 1

# 3. original timing reproduces recorded gaps; --speed scales them;
#    --sessions original keeps recorded connections apart
cat > "$T/gaps.jsonl" <<'JL'
{"protocol":"restconf","method":"GET","path":"/restconf/data/g1","timestamp_ns":0,"conn_id":7,"conn_order":0}
{"protocol":"restconf","method":"GET","path":"/restconf/data/g2","timestamp_ns":400000000,"conn_id":9,"conn_order":0}
{"protocol":"restconf","method":"GET","path":"/restconf/data/g3","timestamp_ns":1200000000,"conn_id":7,"conn_order":1}
{"protocol":"restconf","method":"GET","path":"/restconf/data/g4","timestamp_ns":1600000000,"conn_id":9,"conn_order":1}
JL
"$YB" corpus import "$T/gaps.jsonl" -o "$T/gaps.ybc"
: > "$LOG.mark"; before=$(wc -l < "$LOG")
timeout 60 "$YB" run "$T/gaps.ybc" --target "$URL" --timing original --sessions original -q --json "$T/orig.json" >/dev/null
check "original timing run completes 4 requests" test "$(jq_ "$T/orig.json" "d['summary']['requests_ok']")" = 4
tail -n +$((before + 1)) "$LOG" | awk -F'\t' '$5 ~ /^\/restconf\/data\/g/ {print $5, $11, $1}' > "$T/orig.log"
gaps=$($PY - "$T/orig.log" <<'PYEOF'
import sys
rows = sorted((l.split() for l in open(sys.argv[1])), key=lambda r: r[0])
t = [float(r[1]) for r in rows]
print(" ".join("%.2f" % (t[i] - t[0]) for i in range(len(t))))
PYEOF
)
ok_gaps=$($PY -c "
want=[0,0.4,1.2,1.6]; got=[float(x) for x in '$gaps'.split()]
print(1 if len(got)==4 and all(abs(a-b)<=0.12 for a,b in zip(got,want)) else 0)")
is "recorded gaps 0/0.4/1.2/1.6 s are reproduced ($gaps)" "$ok_gaps" 1
conns=$(awk '{print $1, $3}' "$T/orig.log" | sort | $PY -c "
import sys
m={}
for l in sys.stdin:
    p,c=l.split(); m[p]=c
print(1 if m['/restconf/data/g1']==m['/restconf/data/g3'] and m['/restconf/data/g2']==m['/restconf/data/g4'] and m['/restconf/data/g1']!=m['/restconf/data/g2'] else 0)")
is "--sessions original: each recorded connection on its own session" "$conns" 1
before=$(wc -l < "$LOG")
timeout 60 "$YB" run "$T/gaps.ybc" --target "$URL" --timing original --speed 2 -q >/dev/null
gaps2=$(tail -n +$((before + 1)) "$LOG" | awk -F'\t' '$5 ~ /^\/restconf\/data\/g/ {print $5, $11}' | sort | awk 'NR==1{t0=$2} {printf "%.2f ", $2-t0}')
ok_g2=$($PY -c "
want=[0,0.2,0.6,0.8]; got=[float(x) for x in '$gaps2'.split()]
print(1 if len(got)==4 and all(abs(a-b)<=0.1 for a,b in zip(got,want)) else 0)")
is "--speed 2 halves the gaps ($gaps2)" "$ok_g2" 1

# 4. a full backlog overflows into counted errors, never silently
timeout 60 "$YB" run "$T/slow.ybc" --target "$URL" -c 1 --rate 200 -D 1s --max-backlog 5 \
    -q --json "$T/bl.json" >/dev/null
rc=$?
is "backlog overflow makes the run exit 1" "$rc" 1
ovf=$(jq_ "$T/bl.json" "d['errors']['backlog_overflow']")
ok_ovf=$($PY -c "print(1 if $ovf > 50 else 0)")
is "overflowing requests are counted ($ovf)" "$ok_ovf" 1
acc=$(jq_ "$T/bl.json" "d['summary']['requests_completed'] - d['errors']['backlog_overflow'] + d['cut_off'] == d['summary']['requests_started']")
is "every issued request is accounted for (completed - overflow + cut off = started: an overflow never got a session)" "$acc" True

# 5. SIGINT mid-run: graceful stop, complete reports
"$YB" run "$T/slow.ybc" --target "$URL" -c 2 -D 30s -q --json "$T/int.json" \
    --hlog "$T/int.hlog" > "$T/int.out" 2>&1 &
pid=$!
sleep 1.5
kill -INT $pid
wait $pid
rc=$?
is "SIGINT: exits 4, the documented code of an interrupted run (not 0, not a signal)" "$rc" 4
is "SIGINT: JSON interrupted true, by SIGINT" "$(jq_ "$T/int.json" "(d['interrupted'], d['interrupted_by'])")" "(True, 'SIGINT')"
is "SIGINT: JSON planned duration 30 s, no planned count" "$(jq_ "$T/int.json" "(d['run']['planned_duration_s'], d['run']['planned_requests'])")" "(30.0, None)"
like "SIGINT: the text report says so, planned and actual" "$(cat "$T/int.out")" "INTERRUPTED by SIGINT: ran [0-9.]+ s of 30.000 s planned; [0-9]+ requests started, [0-9]+ completed"
check "SIGINT: the JSON report is valid" $PY -c "import json; json.load(open('$T/int.json'))"
like "SIGINT: the text report is complete" "$(cat "$T/int.out")" "Generator CPU:"
dur=$(jq_ "$T/int.json" "d['summary']['duration_s']")
ok_dur=$($PY -c "print(1 if $dur < 10 else 0)")
is "SIGINT: the run stopped early (duration $dur s)" "$ok_dur" 1
check "SIGINT: the interval log was written" test -s "$T/int.hlog"
"$YB" run "$T/slow.ybc" --target "$URL" -c 2 -n 100000 -q --json "$T/term.json" > "$T/term.out" 2>&1 &
pid=$!
sleep 1.5
kill -TERM $pid
wait $pid
is "SIGTERM: exit 4" "$?" 4
is "SIGTERM: JSON interrupted by SIGTERM, planned 100000 requests" "$(jq_ "$T/term.json" "(d['interrupted'], d['interrupted_by'], d['run']['planned_requests'])")" "(True, 'SIGTERM', 100000)"
like "SIGTERM: the text report names the planned requests" "$(cat "$T/term.out")" "INTERRUPTED by SIGTERM: .* completed of 100000 planned"
timeout 60 "$YB" run "$T/small.ybc" --target "$URL" -n 5 -q --json "$T/whole.json" >/dev/null
is "a complete run: exit 0, interrupted false" "$? $(jq_ "$T/whole.json" "d['interrupted']")" "0 False"

# 6. HdrHistogram outputs and CSV
timeout 60 "$YB" run "$T/small.ybc" --target "$URL" -c 2 --rate 300 -D 2s -q --json "$T/h.json" \
    --hlog "$T/h.hlog" --hgrm "$T/h.hgrm" --csv "$T/h.csv" >/dev/null
check "hlog decodes with the project's decoder" "$HLOG_CHECK" "$T/h.hlog"
total=$("$HLOG_CHECK" "$T/h.hlog" | awk '$1=="total"{print $2}')
is "hlog counts add up to the requests" "$total" "$(jq_ "$T/h.json" "d['summary']['requests_completed']")"
lines=$(grep -c '^[0-9]' "$T/h.hlog")
check "hlog has one line per second ($lines)" test "$lines" -ge 2 -a "$lines" -le 3
like "hlog header follows the published format" "$(sed -n 2,4p "$T/h.hlog")" \
    '^#\[Histogram log format version 1\.3\]'
like "hlog legend line" "$(cat "$T/h.hlog")" '^"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"$'
like "hlog lines are start,length,max,HISTF..." "$(grep '^[0-9]' "$T/h.hlog" | head -1)" \
    '^[0-9]+\.[0-9]{3},1\.000,[0-9]+\.[0-9]{3},HISTF[A-Za-z0-9+/=]+$'
like "hgrm header" "$(head -1 "$T/h.hgrm")" '^ +Value +Percentile +TotalCount +1/\(1-Percentile\)$'
like "hgrm footer" "$(tail -3 "$T/h.hgrm")" '#\[Max += +[0-9.]+, Total count += +[0-9]+\]'
hcount=$(sed -n 's/.*Total count *= *\([0-9]*\).*/\1/p' "$T/h.hgrm")
is "hgrm total count matches" "$hcount" "$(jq_ "$T/h.json" "d['summary']['requests_completed']")"
timeout 60 "$YB" run "$T/small.ybc" --target "$URL" -c 1 -n 10 -q --csv "$T/h.csv" >/dev/null
is "csv: a header and one row per run (empty operation), each followed by its operations' rows" \
    "$(awk -F, 'NR>1 && $NF==""' "$T/h.csv" | wc -l) $(awk -F, 'NR>1 && $NF!=""' "$T/h.csv" | wc -l)" "2 2"
is "csv: header names the columns" "$(head -1 "$T/h.csv" | cut -d, -f1-3)" "time_unix_s,corpus,target"
is "csv: the second run has 10 ok requests" "$(awk -F, 'NR>1 && $NF==""' "$T/h.csv" | sed -n 2p | cut -d, -f10)" 10

done_testing
