#!/bin/bash
# One run divided among N processes (--shard I/N): N = 3 shards of an open
# loop, a closed loop, one pass over a corpus, an inventory --fan-out and a
# plan, each against a real `yangblast serve`, checked on the shards'
# per-request logs (their union is the single run's requests, every global
# index once, each in shard index mod N, open-loop due times exactly the
# single run's) and on the server's own counts (the sum of the shards');
# the run id (the same on every shard, another for other work); --start-at
# (the clock starts at the instant, the report records it); and every bad
# value refused with exit 2 naming the option.
. "$YB_SRCDIR/tests/lib.sh"
PY=/usr/bin/python3

"$YB" synth acl --proto restconf -n 30 -r 1 -o "$T/rc.ybc" >/dev/null &&
"$YB" synth acl --proto gnmi -n 12 -r 1 -o "$T/gn.ybc" >/dev/null || { echo "Bail out! synth"; exit 1; }

# union NAME SINGLE.jsonl SHARD0.jsonl ...: compares the shards' logs with
# the single run's; prints "OK" or what differs.  Keys: (workload, target
# name, index); the target's name comes from each file's JSON report
# (NAME.json beside the log) when it has a targets array.
union() {
    $PY - "$@" <<'PYEOF'
import json, os, sys
single, shards = sys.argv[2], sys.argv[3:]
def load(path):
    rep = json.load(open(path[:-len(".jsonl")] + ".json"))
    names = [t["name"] for t in rep.get("targets") or []]
    out = []
    for l in open(path):
        d = json.loads(l)
        t = names[d["target"]] if names else d["target"]
        out.append(((d["workload"], t, d[os.environ.get("KEY", "index")]), d))
    return rep, out
_, one = load(single)
want = {k: d for k, d in one}
if len(want) != len(one):
    sys.exit("the single run has duplicate indexes")
got, n = {}, len(shards)
for i, p in enumerate(shards):
    rep, lines = load(p)
    if rep["shard"]["index"] != i or rep["shard"]["count"] != n:
        sys.exit("%s: shard block %r" % (p, rep["shard"]))
    for k, d in lines:
        if k in got:
            sys.exit("index %r sent twice" % (k,))
        if d["shard"] != i:
            sys.exit("%s: line of shard %r" % (p, d["shard"]))
        got[k] = d
if set(got) != set(want):
    sys.exit("missing %r extra %r" % (sorted(set(want) - set(got))[:5], sorted(set(got) - set(want))[:5]))
if os.environ.get("DUE"): # the open loop's workload: its due times are the schedule's
    bad = [k for k in want if k[0] == int(os.environ["DUE"]) and want[k]["t_due_ns"] != got[k]["t_due_ns"]]
    if bad:
        sys.exit("due times differ at %r" % bad[:5])
if os.environ.get("MOD"):
    bad = [k for k in got if k[2] % n != got[k]["shard"]]
    if bad:
        sys.exit("index not in shard index mod N: %r" % bad[:5])
if os.environ.get("RECORD"):
    bad = [k for k in got if got[k]["record"] != want[k]["record"]]
    if bad:
        sys.exit("records differ at %r" % bad[:5])
print("OK", len(got))
PYEOF
}
served() { jget "$1" "r['requests']['$2']['total']"; }
sumj() { local e=$1; shift; local s=0 f; for f in "$@"; do s=$((s + $(jget "$f" "$e"))); done; echo $s; }

# run_shards NAME N ARGS...: the single run NAME.one and shards NAME.0 ..
# NAME.N-1 of `run ARGS`, each with --log and --json (shard 1 on -t 2, or $T1).
run_shards() {
    local name=$1 n=$2 i t; shift 2
    "$YB" run "$@" -q --log "$T/$name.one.jsonl" --json "$T/$name.one.json" >"$T/$name.one.out" 2>&1 ||
        { diag "single run failed: $(cat "$T/$name.one.out")"; return 1; }
    for i in $(seq 0 $((n - 1))); do
        t=1; [ "$i" = 1 ] && t=${T1:-2}
        "$YB" run "$@" -t $t --shard "$i/$n" -q --log "$T/$name.$i.jsonl" --json "$T/$name.$i.json" \
            >"$T/$name.$i.out" 2>&1 || { diag "shard $i failed: $(cat "$T/$name.$i.out")"; return 1; }
    done
}

# ---- open loop: due times interleave into the planned schedule --------------------------
yb_serve "$T/s1.out" --restconf 127.0.0.1:0 --gnmi off --stats "$T/s1.stats.json" ||
    { echo "Bail out! serve did not start"; exit 1; }
run_shards ol 3 "$T/rc.ybc" --target "$RURL" --rate 400 -n 90 -c 6 || not_ok "open loop runs"
yb_serve_stop
is "open loop: the shards' union is the single run, each index once, its due time the schedule's" \
    "$(DUE=0 MOD=1 union x "$T/ol.one.jsonl" "$T"/ol.{0,1,2}.jsonl)" "OK 90"
is "open loop: the shards took 30 each" \
    "$(for i in 0 1 2; do jget "$T/ol.$i.json" "r['summary']['requests_completed']"; done | tr '\n' ' ')" "30 30 30 "
is "open loop: the server counted the single run plus the shards" \
    "$(served "$T/s1.stats.json" restconf)" "$((90 + $(sumj "r['summary']['requests_completed']" "$T"/ol.{0,1,2}.json)))"
is "open loop: each shard's report gives its part of the rate and of -n and -c" \
    "$(for i in 0 1 2; do jget "$T/ol.$i.json" "[round(r['run']['rate_target_per_s'], 6), r['run']['planned_requests'], r['run']['concurrency']]"; done | tr '\n' ' ')" \
    "[133.333333,30,2] [133.333333,30,2] [133.333333,30,2] "
is "the run id: the same on every shard and in the single run" \
    "$(for f in one 0 1 2; do jget "$T/ol.$f.json" "r['run_id']"; done | sort -u | wc -l)" 1
like "the run id: 32 hex digits" "$(jget "$T/ol.0.json" "r['run_id']")" '^[0-9a-f]{32}$'
like "text report: one line for the shard and its clock" "$(grep '^Shard:' "$T/ol.1.out")" \
    "^Shard: 1/3 on $(hostname), started 20[0-9-]+T[0-9:.]+Z, clock (synchronised|NOT synchronised) \\(max error [0-9.]+ ms, est. error [0-9.]+ ms\\)$"
is "the single run has no shard block" "$(jget "$T/ol.one.json" "'shard' in r")" false
is "JSON shard block: keys and values" \
    "$(jget "$T/ol.2.json" "[r['shard'][k] for k in ('index','count','host','start_at_unix_ns','start_offset_ns')] + [sorted(r['shard']['clock'] or {})]")" \
    "[2,3,\"$(hostname)\",null,0,[\"esterror_us\",\"maxerror_us\",\"synchronised\"]]"

# ---- closed loop: sessions s mod N, -n counts k mod N ----------------------------------
yb_serve "$T/s2.out" --restconf 127.0.0.1:0 --gnmi off --stats "$T/s2.stats.json" ||
    { echo "Bail out! serve did not start"; exit 1; }
for i in 0 1 2; do
    "$YB" run "$T/rc.ybc" --target "$RURL" -c 5 -n 77 --shard "$i/3" -q --log "$T/cl.$i.jsonl" \
        --json "$T/cl.$i.json" >/dev/null 2>&1 || not_ok "closed loop shard $i"
done
yb_serve_stop
is "closed loop -c 5: shards open 2, 2, 1 sessions" \
    "$(for i in 0 1 2; do jget "$T/cl.$i.json" "r['sessions']['opened']"; done | tr '\n' ' ')" "2 2 1 "
is "closed loop -n 77: the shards' indexes are 0..76 once each, k mod 3 in shard k" \
    "$($PY -c '
import json, sys
seen = []
for i in range(3):
    for l in open(sys.argv[1] + ".%d.jsonl" % i):
        d = json.loads(l)
        if d["index"] % 3 != i: sys.exit("index %d in shard %d" % (d["index"], i))
        seen.append(d["index"])
print(sorted(seen) == list(range(77)), len(seen))' "$T/cl")" "True 77"
is "closed loop: the server counted 77" "$(served "$T/s2.stats.json" restconf)" 77
is "closed loop: -n parts 26, 26, 25" \
    "$(for i in 0 1 2; do jget "$T/cl.$i.json" "r['summary']['requests_completed']"; done | tr '\n' ' ')" "26 26 25 "

# ---- one pass over a corpus: record r to shard r mod N -----------------------------------
yb_serve "$T/s3.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --stats "$T/s3.stats.json" ||
    { echo "Bail out! serve did not start"; exit 1; }
run_shards cp 3 "$T/gn.ybc" --target "$GURL" -c 3 || not_ok "corpus pass runs"
yb_serve_stop
is "corpus pass: the union is the single pass, records = indexes, record r in shard r mod 3" \
    "$(MOD=1 RECORD=1 union x "$T/cp.one.jsonl" "$T"/cp.{0,1,2}.jsonl)" "OK 12"
is "corpus pass: the server counted two passes" "$(served "$T/s3.stats.json" gnmi)" 24

# ---- recorded timing: each record at its recorded time; whole recorded connections ----
"$YB" corpus cat "$T/rc.ybc" | $PY -c '
import json, sys
for i, l in enumerate(sys.stdin):
    d = json.loads(l)
    d["timestamp_ns"], d["conn_id"], d["conn_order"] = i * 7000000 + (i % 4) * 1300000, i % 5, i // 5
    print(json.dumps(d))' >"$T/timed.jsonl" && "$YB" corpus import "$T/timed.jsonl" -o "$T/timed.ybc" >/dev/null ||
    { echo "Bail out! timed corpus"; exit 1; }
yb_serve "$T/s5.out" --restconf 127.0.0.1:0 --gnmi off --stats "$T/s5.stats.json" ||
    { echo "Bail out! serve did not start"; exit 1; }
run_shards to 3 "$T/timed.ybc" --target "$RURL" --timing original --speed 2 -c 6 || not_ok "timing original runs"
T1=1 run_shards so 3 "$T/timed.ybc" --target "$RURL" --timing original --speed 2 --sessions original ||
    not_ok "sessions original runs"
yb_serve_stop
is "--timing original: the union is the single pass, records = indexes, due times the recorded ones" \
    "$(DUE=0 MOD=1 RECORD=1 union x "$T/to.one.jsonl" "$T"/to.{0,1,2}.jsonl)" "OK 30"
is "--sessions original: whole recorded connections, the union of records is the single pass's" \
    "$(KEY=record DUE=0 union x "$T/so.one.jsonl" "$T"/so.{0,1,2}.jsonl)" "OK 30"
is "--sessions original: connection c (records r, r mod 5 = c) went to shard c mod 3" \
    "$($PY -c '
import json, sys
bad = [(i, d["record"]) for i in range(3) for d in map(json.loads, open(sys.argv[1] + ".%d.jsonl" % i))
       if d["record"] % 5 % 3 != i]
print(bad or "OK")' "$T/so")" OK
is "recorded timing: the server counted 4 passes" "$(served "$T/s5.stats.json" restconf)" 120

# ---- --fan-out: targets divided among the shards -----------------------------------------
DEVICES=4 serve_fleet fo || { echo "Bail out! serve --devices did not start"; exit 1; }
run_shards fo 3 "$T/rc.ybc" --targets "$T/fo.yaml" --fan-out -n 20 \
    --threshold 'target=sw2:requests>=20' || not_ok "fan-out runs"
stop_fleet
is "fan-out: the union of (target, index) is the single run's" \
    "$(union x "$T/fo.one.jsonl" "$T"/fo.{0,1,2}.jsonl)" "OK 80"
is "fan-out: shard 0 took targets 0 and 3, shards 1 and 2 one each" \
    "$(for i in 0 1 2; do jget "$T/fo.$i.json" "','.join(t['name'] for t in r['targets'])"; done | tr '\n' ' ')" \
    "sw1,sw4 sw2 sw3 "
is "fan-out: a threshold on sw2 is judged by sw2's shard, skipped (passing) by the others" \
    "$(for i in 0 1 2; do jget "$T/fo.$i.json" "[(t['skipped'], t['pass'], t['measured']) for t in r['thresholds']]"; done | tr '\n' ' ')" \
    "[[true,true,null]] [[false,true,20.0]] [[true,true,null]] "
like "... the text report says skip and why" "$(grep 'target=sw2' "$T/fo.0.out")" \
    "skip +target=sw2:requests>=20 +another shard's target: judged by yangblast merge --threshold"
is "fan-out: every device served the single run's 20 and its shard's 20" \
    "$(jget "$T/fo.stats.json" "[d['requests']['restconf']['total'] for d in r['devices']]")" "[40,40,40,40]"

# ---- a plan: each workload divided -------------------------------------------------------
cat >"$T/plan.yaml" <<EOF
workloads:
  - name: writers
    corpus: $T/rc.ybc
    concurrency: 3
    requests: 45
    targets: [sw1, sw2]
  - name: pollers
    synth: {protocol: gnmi, op: get, count: 5}
    rate: 200
    concurrency: 3
    requests: 21
    targets: [sw2]
EOF
DEVICES=2 serve_fleet pl || { echo "Bail out! serve --devices did not start"; exit 1; }
# the pollers Get the five sets the writers' first records make; written once first, so that
# the single run, the first on a fresh fleet, does not race its own writers for them (NOT_FOUND)
"$YB" run -q "$T/rc.ybc" --targets "$T/pl.yaml" --fan-out -n 5 -c 1 >/dev/null 2>&1 ||
    not_ok "the sets written before the plan runs (exit $?)"
run_shards pl 3 --plan "$T/plan.yaml" --targets "$T/pl.yaml" || not_ok "plan runs"
stop_fleet
is "plan: the union of (workload, target, index) is the single run's, the pollers' due times its" \
    "$(MOD=1 DUE=1 union x "$T/pl.one.jsonl" "$T"/pl.{0,1,2}.jsonl)" "OK 111"
is "plan: each device served the 5 sets written first, the single run and the shards (sw1 5 + 45 x 2, sw2 5 + 66 x 2)" \
    "$(jget "$T/pl.stats.json" "[d['requests']['restconf']['total'] + d['requests']['gnmi']['total'] for d in r['devices']]")" \
    "[95,137]"

# ---- the run id -------------------------------------------------------------------------
rid() { "$YB" run "$@" -q --json "$T/rid.json" >/dev/null 2>&1; jget "$T/rid.json" "r['run_id']"; }
dead="http://127.0.0.1:$(free_port)"
a=$(rid "$T/rc.ybc" --target "$dead" -n 3 -c 2 --max-errors 9)
is "run id: the options' order does not matter" "$(rid "$T/rc.ybc" -c 2 --max-errors 9 --target "$dead" -n 3)" "$a"
is "run id: outputs and -t do not count" \
    "$(rid "$T/rc.ybc" --target "$dead" -n 3 -c 2 -t 2 --max-errors 9 --log /dev/null)" "$a"
b=$(rid "$T/rc.ybc" --target "$dead" -n 4 -c 2 --max-errors 9)
[ "$a" != "$b" ] && ok "run id: another -n, another id" || not_ok "run id: another -n, another id ($a)"
cp "$T/rc.ybc" "$T/copy.ybc"
is "run id: the corpus' content, not its path" "$(rid "$T/copy.ybc" --target "$dead" -n 3 -c 2 --max-errors 9)" "$a"
is "run id: --run-id names it" "$(rid "$T/rc.ybc" --target "$dead" -n 3 --max-errors 9 --run-id nightly-42)" nightly-42
cp "$T/rc.ybc" "$T/pc.ybc"
printf 'workloads:\n  - name: w\n    corpus: %s\n    requests: 2\n' "$T/pc.ybc" >"$T/idplan.yaml"
a=$(rid --plan "$T/idplan.yaml" --target "$dead" --max-errors 9)
"$YB" synth acl --proto restconf -n 31 -r 1 -o "$T/pc.ybc" >/dev/null
b=$(rid --plan "$T/idplan.yaml" --target "$dead" --max-errors 9)
[ -n "$a" ] && [ "$a" != ERR ] && [ "$a" != "$b" ] && ok "run id: a plan's corpus counts (changed in place, another id)" ||
    not_ok "run id: a plan's corpus counts ($a $b)"
long=$(printf 'r%.0s' $(seq 64))
is "run id: --run-id of 64 characters, whole" "$(rid "$T/rc.ybc" --target "$dead" -n 3 --max-errors 9 --run-id "$long")" "$long"

# ---- --start-at: prepare, wait, start at the instant -----------------------------------
yb_serve "$T/s4.out" --restconf 127.0.0.1:0 --gnmi off || { echo "Bail out! serve did not start"; exit 1; }
at=$(( $(date +%s) + 2 ))
JOB_COMPLETION_INDEX=0 "$YB" run "$T/rc.ybc" --target "$RURL" -c 2 --shards 2 \
    --shard-from-env JOB_COMPLETION_INDEX --start-at "@$at" -q --json "$T/sa.0.json" >/dev/null 2>&1 &
p0=$!
JOB_COMPLETION_INDEX=1 "$YB" run "$T/rc.ybc" --target "$RURL" -c 2 --shards 2 \
    --shard-from-env JOB_COMPLETION_INDEX --start-at "$(date -u -d "@$at" +%Y-%m-%dT%H:%M:%SZ)" -q \
    --json "$T/sa.1.json" >/dev/null 2>&1
wait $p0
for i in 0 1; do
    is "--start-at: shard $i started at or after the instant and says so (index, requested, offset)" \
        "$(jget "$T/sa.$i.json" "[r['shard']['index'], r['shard']['start_at_unix_ns'] == $at * 10**9, r['shard']['start_unix_ns'] >= $at * 10**9, r['shard']['start_offset_ns'] == r['shard']['start_unix_ns'] - r['shard']['start_at_unix_ns'], 0 <= r['shard']['start_offset_ns'] < 10**9]")" \
        "[$i,true,true,true,true]"
done
is "--start-at: the two shards ran the corpus between them" \
    "$(sumj "r['summary']['requests_ok']" "$T"/sa.{0,1}.json)" 30
# an instant just past (within the second allowed): at once, and said
past=$($PY -c 'import time; print("%.3f" % (time.time() - 0.5))')
"$YB" run "$T/rc.ybc" --target "$RURL" --start-at "$past" -q --json "$T/late.json" >/dev/null 2>"$T/late.err"
is "--start-at half a second past: runs at once, offset in the report" \
    "$(jget "$T/late.json" "[r['summary']['requests_ok'], r['shard']['start_offset_ns'] >= 5 * 10**8]")" "[30,true]"
like "... and warns" "$(cat "$T/late.err")" "^yangblast run: warning: the run started [0-9.]+ s after --start-at $past"
# a signal while waiting: exit 4, no report
"$YB" run "$T/rc.ybc" --target "$RURL" --start-at "@$(( $(date +%s) + 60 ))" -q --json "$T/int.json" \
    >/dev/null 2>"$T/int.err" &
p=$!
sleep 1
kill -INT $p
wait $p
is "SIGINT while waiting for --start-at: exit 4" "$?" 4
is "... no report written" "$(ls "$T/int.json" 2>/dev/null)" ""
like "... and says nothing was sent" "$(cat "$T/int.err")" "nothing was sent"
yb_serve_stop

# ---- bad values: exit 2, naming the option ----------------------------------------------
bad() {
    local d=$1 msg=$2; shift 2
    "$YB" run "$T/rc.ybc" --target "http://127.0.0.1:1" -q "$@" >"$T/out" 2>"$T/err"
    is "$d: exit 2" "$?" 2
    like "$d: the message" "$(head -1 "$T/err")" "$msg"
}
bad "--shard I >= N" "^yangblast run: --shard '3/3': expected I/N" --shard 3/3 -c 3
bad "--shard N = 0" "^yangblast run: --shard '0/0': expected I/N" --shard 0/0
bad "--shard garbage" "^yangblast run: --shard 'one/3': expected I/N" --shard one/3
bad "--shards 0" "^yangblast run: --shards '0': expected an integer in 1..1024" --shards 0 --shard-from-env X
bad "--shard-from-env unset" \
    "^yangblast run: --shard-from-env YB_NO_SUCH_VAR: the environment variable YB_NO_SUCH_VAR is not set" \
    --shards 3 --shard-from-env YB_NO_SUCH_VAR -c 3
export YB_SHARD_IX=3
bad "--shard-from-env out of range" \
    "^yangblast run: --shard-from-env YB_SHARD_IX: YB_SHARD_IX='3' is not a shard index \\(an integer 0..2 for --shards 3\\)" \
    --shards 3 --shard-from-env YB_SHARD_IX -c 3
YB_SHARD_IX=x
bad "--shard-from-env not a number" "^yangblast run: --shard-from-env YB_SHARD_IX: YB_SHARD_IX='x' is not a shard index" \
    --shards 3 --shard-from-env YB_SHARD_IX -c 3
YB_SHARD_IX=1
bad "-c below N (the index from the environment)" \
    "^yangblast run: 1 sessions \\(-c\\) cannot be divided among 3 shards \\(--shard-from-env; " \
    --shards 3 --shard-from-env YB_SHARD_IX
unset YB_SHARD_IX
bad "--shards without --shard-from-env" "^yangblast run: --shards N goes with --shard-from-env" --shards 3
bad "--shard with --shards" "^yangblast run: --shard I/N excludes --shards" --shard 0/3 --shards 3 --shard-from-env X
bad "-c below N" "^yangblast run: 2 sessions \\(-c\\) cannot be divided among 3 shards \\(--shard; " --shard 0/3 -c 2
bad "--start-at in the past" "^yangblast run: --start-at '2020-01-01T00:00:00Z' is [0-9.]+ s in the past" \
    --start-at 2020-01-01T00:00:00Z
bad "--start-at garbage" "^yangblast run: --start-at 'soon': expected RFC 3339" --start-at soon
bad "--start-at without a zone" "^yangblast run: --start-at '2030-01-01T00:00:00': expected RFC 3339" \
    --start-at 2030-01-01T00:00:00
bad "--run-id with a space" "^yangblast run: --run-id 'a b': expected 1 to 64" --run-id 'a b'
bad "--run-id of 65 characters" "^yangblast run: --run-id 'r{65}': expected 1 to 64" --run-id "${long}r"
DEVICES=2 serve_fleet few || { echo "Bail out! serve --devices did not start"; exit 1; }
"$YB" run "$T/rc.ybc" --targets "$T/few.yaml" --fan-out --shard 0/3 -q >"$T/out" 2>"$T/err"
is "--fan-out with fewer targets than shards: exit 2" "$?" 2
like "... naming the option" "$(head -1 "$T/err")" "^yangblast run: --shard: 3 shards, but --fan-out has 2 targets"
stop_fleet
is "... before any traffic" "$(jget "$T/few.stats.json" "sum(d['connections']['restconf'] for d in r['devices'])")" 0

done_testing
