#!/bin/bash
# yangblast merge on the reports of real runs against `yangblast serve`: three shards
# (--shard I/3, one --start-at) with --json, --hlog and --log, merged.  Checked: the
# merged counts are the shards' sum and serve's own count; the merged p50/p99/max are
# the percentiles recomputed from all three per-request logs (tests/report/hdr_v2.py:
# HdrHistogram's rules written independently of yangblast's C code -- each e2e_ns
# rounded up to whole us, the value at a percentile being the highest value of the
# slot of the ceil(p% x n)-th smallest value -- so equality is exact, not a tolerance);
# the merged interval log adds up to the same; compare and report read the merged
# report.  A plain report merged with itself doubles every count and keeps every
# percentile.  Refused with exit 2 naming the files or the key: different run ids
# (unless --force), a shard given twice, hostile reports and logs -- and the output
# files that were there are left whole.  Every run is bounded by `timeout 90`.
. "${YB_SRCDIR:-.}/tests/lib.sh"

CORPUS=$YB_SRCDIR/corpus/restconf-acl-1000.ybc
export PYTHONPATH=$YB_SRCDIR/tests/report
HLOG_CHECK=${YB_BUILDDIR:-.}/tests/tools/hlog_check
PY=/usr/bin/python3

yb_serve "$T/s.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --service-time uniform:200us..3ms \
    --stats "$T/serve.json" || { echo "Bail out! serve did not start"; exit 1; }
at=$($PY -c 'import time; print("@%.3f" % (time.time() + 3))')
pids=
for i in 0 1 2; do
    timeout 90 "$YB" run -q "$CORPUS" --target "$RURL" -n 600 -c 3 --rate 400 --shard $i/3 \
        --start-at "$at" --json "$T/shard$i.json" --hlog "$T/shard$i.hlog" --log "$T/shard$i.log" \
        >"$T/shard$i.out" 2>&1 &
    pids="$pids $!"
done
wait $pids # not serve
for i in 0 1 2; do
    is "shard $i/3 ran" "$(jget "$T/shard$i.json" 'r["shard"]["index"]')" $i
done
timeout 90 "$YB" run -q "$CORPUS" --target "$RURL" -n 200 -c 2 --json "$T/plain.json" \
    --log "$T/plain.log" >/dev/null 2>&1
is "a plain run (no --shard)" "$?" 0
# two shards of a 2 s open loop, the second started 2 s after the first
at=$($PY -c 'import time; print("%.3f" % (time.time() + 3))')
pids=
for i in 0 1; do
    timeout 90 "$YB" run -q "$CORPUS" --target "$RURL" -n 400 -c 2 --rate 200 --shard $i/2 \
        --start-at "@$($PY -c "print('%.3f' % ($at + 2 * $i))")" --json "$T/late$i.json" \
        >/dev/null 2>&1 &
    pids="$pids $!"
done
wait $pids
yb_serve_stop

# merge NAME ARGS...: yangblast merge, stdout in $T/NAME.out, stderr in $T/NAME.err, exit in $rc.
merge() {
    local n=$1
    shift
    timeout 60 "$YB" merge "$@" >"$T/$n.out" 2>"$T/$n.err"
    rc=$?
}

merge m "$T/shard2.json" "$T/shard0.json" "$T/shard1.json" --json "$T/m.json" --hlog "$T/m.hlog"
is "merge of the three shards: exit 0" "$rc" 0
is "merged requests = the shards' sum = 600 = serve's own count of requests and of 204s (less the 600 of the other runs)" \
    "$($PY - "$T" <<'PY'
import json, sys
t = sys.argv[1]
m = json.load(open(t + "/m.json"))
s = [json.load(open("%s/shard%d.json" % (t, i))) for i in range(3)]
srv = json.load(open(t + "/serve.json"))
key = lambda r: r["summary"]["requests_completed"]
print(key(m), sum(map(key, s)), m["summary"]["requests_ok"],
      srv["requests"]["restconf"]["total"] - 600, srv["http_status"]["204"] - 600)
PY
)" "600 600 600 600 600"
is "merged p50/p99/p99.9/max = the percentiles of all three per-request logs, exactly" \
    "$($PY - "$T" <<'PY'
import json, sys, hdr_v2
t = sys.argv[1]
vals = sorted(hdr_v2.us_of_ns(x["e2e_ns"]) for i in range(3)
              for x in map(json.loads, open("%s/shard%d.log" % (t, i))) if x["error"] is None)
e = json.load(open(t + "/m.json"))["latency_us"]["e2e"]
print(len(vals), [hdr_v2.percentile(vals, p) for p in (50, 99, 99.9, 100)] ==
      [e["p50"], e["p99"], e["p99_9"], e["max"]])
PY
)" "600 True"
is "the logs' union is the run's requests 0..599, each once" \
    "$(cat "$T"/shard[012].log | $PY -c 'import json,sys; ix=sorted(json.loads(l)["index"] for l in sys.stdin); print(ix == list(range(600)))')" \
    True
is "the operations and the seconds of the merged report add up to the merged e2e histogram" \
    "$($PY - "$T/m.json" <<'PY'
import json, sys, hdr_v2
r = json.load(open(sys.argv[1]))
whole = hdr_v2.decode(r["histograms"]["e2e"])
for part in ("operations", "intervals"):
    print(part, hdr_v2.parts_sum(r, part) == whole)
print(sum(i["requests"] for i in r["intervals"]))
PY
)" "operations True
intervals True
600"
is "the shard table: a row per shard, in index order, and the run id" \
    "$(grep -E '^ +[0-9]/3 ' "$T/m.out" | awk '{print $1, $4}' | tr '\n' ' ')" \
    "0/3 $(jget "$T/shard0.json" 'r["summary"]["requests_completed"]') 1/3 $(jget "$T/shard1.json" 'r["summary"]["requests_completed"]') 2/3 $(jget "$T/shard2.json" 'r["summary"]["requests_completed"]') "
like "the text report is a run's: its table and latency rows" "$(cat "$T/m.out")" \
    '^ +600 \|.*' 
is "the JSON: the shards' run_id, a shards array, no shard object" \
    "$(jget "$T/m.json" '[r["run_id"] == "'"$(jget "$T/shard0.json" 'r["run_id"]')"'", [s["index"] for s in r["shards"]], "shard" in r]')" \
    '[true,[0,1,2],false]'
"$HLOG_CHECK" "$T/m.hlog" >"$T/hlog.txt" 2>&1
is "merged .hlog: valid, tags adding up to each second, 600 requests in all" \
    "$?/$(grep '^total' "$T/hlog.txt")" "0/total 600"
is "merged .hlog = each second's histogram of the merged JSON, slot for slot" \
    "$($PY - "$T/m.json" "$T/m.hlog" <<'PY'
import json, sys, hdr_v2
r = json.load(open(sys.argv[1]))
lines = [l.strip().split(",") for l in open(sys.argv[2]) if l[0].isdigit()]
got = {int(float(l[0])): hdr_v2.decode(l[3]) for l in lines}
want = {i["t_s"]: hdr_v2.decode(i["histograms"]["e2e"]) for i in r["intervals"] if i["histograms"]}
print(got == want, len(got) > 0)
PY
)" "True True"
timeout 30 "$YB" compare "$T/m.json" "$T/m.json" >/dev/null 2>&1
is "compare reads the merged report" "$?" 0
timeout 30 "$YB" report -o "$T/m.html" "$T/m.json" >/dev/null 2>&1
is "report renders it" "$?" 0

like "yangblast --help lists merge" "$("$YB" --help)" '^  merge +merge the reports of a run'
like "merge --help" "$("$YB" merge --help)" '^Usage: yangblast merge \[OPTIONS\] REPORT.json'

# ---- a report merged with itself: every count doubled, every percentile kept -----------
merge self "$T/plain.json" "$T/plain.json" --json "$T/self.json"
is "a plain report merged with itself: exit 0" "$rc" 0
is "counts doubled, percentiles and max kept, each second doubled" \
    "$($PY - "$T/plain.json" "$T/self.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
s = lambda r, k: r["summary"][k]
print([s(b, k) == 2 * s(a, k) for k in ("requests_completed", "requests_ok", "data_bytes")],
      all(b["latency_us"][p][k] == a["latency_us"][p][k] and
          b["latency_us"][p]["count"] == 2 * a["latency_us"][p]["count"]
          for p in a["latency_us"] for k in ("p50", "p90", "p99", "p99_9", "max")),
      [i["requests"] for i in b["intervals"]] == [2 * i["requests"] for i in a["intervals"]],
      b["status"]["204"] == 2 * a["status"]["204"])
PY
)" "[True, True, True] True True True"

# ---- seconds aligned on the wall clock ---------------------------------------------------
merge late "$T/late1.json" "$T/late0.json" --json "$T/late.json"
is "shards started 2 s apart: merged (exit 0)" "$rc" 0
is "each merged second = the first shard's second k + the second shard's second k - 2" \
    "$($PY - "$T" <<'PY'
import json, sys
t = sys.argv[1]
a, b, m = (json.load(open(t + f)) for f in ("/late0.json", "/late1.json", "/late.json"))
shift = round((b["shard"]["start_unix_ns"] - a["shard"]["start_unix_ns"]) / 1e9)
sec = lambda r, k: r["intervals"][k]["requests"] if 0 <= k < len(r["intervals"]) else 0
n = len(m["intervals"])
print(shift, n == max(len(a["intervals"]), len(b["intervals"]) + shift),
      all(sec(m, k) == sec(a, k) + sec(b, k - shift) for k in range(n)),
      sum(i["requests"] for i in m["intervals"]), m["summary"]["duration_s"] > 3.5)
PY
)" "2 True True 400 True"
like "... with the start spread warned about" "$(cat "$T/late.err")" \
    "WARNING: shards started [12][0-9]{3}\.[0-9]+ ms apart \(more than the tolerance of 100.000 ms\)"

# ---- per-target rows: --fan-out divides the targets among the shards -----------------------
DEVICES=3 serve_fleet fleet || { echo "Bail out! serve --devices did not start"; exit 1; }
for i in 0 1; do
    timeout 90 "$YB" run -q "$CORPUS" --targets "$T/fleet.yaml" --fan-out -n 30 -c 2 \
        --shard $i/2 --json "$T/fleet$i.json" --threshold 'target=sw2:requests>=30' >/dev/null 2>&1
    is "fleet shard $i/2 (a threshold on sw2, shard 1's target: judged there, skipped in shard 0)" "$?" 0
done
stop_fleet
merge fleet "$T/fleet0.json" "$T/fleet1.json" --json "$T/fleet.json"
is "fleet shards merged: each target's row is its shard's, the rows' histograms add up to the run's" \
    "$rc/$($PY - "$T" <<'PY'
import json, sys, hdr_v2
t = sys.argv[1]
rows = {x["name"]: x for i in (0, 1) for x in json.load(open("%s/fleet%d.json" % (t, i)))["targets"]}
m = json.load(open(t + "/fleet.json"))
same = all(rows[x["name"]][k] == x[k] for x in m["targets"]
           for k in ("requests", "ok", "p50_ms", "p99_ms", "sessions_opened"))
total = {}
for x in m["targets"]:
    for v, c in hdr_v2.decode(x["histograms"]["e2e"]).items():
        total[v] = total.get(v, 0) + c
print(sorted(x["name"] for x in m["targets"]), same,
      total == hdr_v2.decode(m["histograms"]["e2e"]), m["summary"]["requests_completed"])
PY
)" "0/['sw1', 'sw2', 'sw3'] True True 90"
like "the text report has the Targets table" "$(cat "$T/fleet.out")" '^  sw2 +30 +30 +0 '
merge fleetth "$T/fleet0.json" "$T/fleet1.json" --json "$T/fleetth.json" --threshold 'requests>=90' \
    --threshold 'target=sw2:requests>=30' --threshold 'target=sw1:e2e.p50<1h' --threshold 'errors<1%' \
    --threshold 'target=sw3:rate>0'
is "merge --threshold on the whole and on merged target rows: exit 0, each judged on merged figures" \
    "$rc/$(jget "$T/fleetth.json" '[(t["pass"], t["skipped"], t["measured"]) for t in r["thresholds"][:3]]')" \
    "0/[[true,false,90.0],[true,false,30.0],[true,false,$(jget "$T/fleetth.json" '[x["p50_ms"] * 1000 for x in r["targets"] if x["name"] == "sw1"][0]')]]"
like "... the verdicts close the text report" "$(tail -6 "$T/fleetth.out")" "pass +target=sw2:requests>=30 +measured 30"
merge fleetfail "$T/fleet0.json" "$T/fleet1.json" --threshold 'target=sw2:requests>30'
is "a merged target row failing its threshold: exit 1, FAIL" "$rc/$(grep -c 'FAIL  target=sw2:requests>30' "$T/fleetfail.out")" "1/1"
merge fleetno "$T/fleet0.json" "$T/fleet1.json" --threshold 'target=sw9:requests>1'
is "a threshold naming no merged target: exit 2, naming the targets" \
    "$rc/$(grep -c "no target 'sw9' in this run (its targets: 'sw1', 'sw3', 'sw2')" "$T/fleetno.err")" "2/1"
merge fleetphase "$T/fleet0.json" "$T/fleet1.json" --threshold 'target=sw1:ttfb.p99<1s'
is "a target threshold on a figure the merged rows do not carry: exit 2, saying so" \
    "$rc/$(grep -c 'end-to-end latency only' "$T/fleetphase.err")" "2/1"

$PY -c 'import json, sys; r = json.load(open(sys.argv[1])); r["latency_us"]["e2e"]["clamped"] = 3; json.dump(r, open(sys.argv[2], "w"))' \
    "$T/plain.json" "$T/clamped.json"
merge clamped "$T/clamped.json" "$T/clamped.json" --json "$T/clamped2.json"
is "values clamped (a count the encoding does not carry) are summed" \
    "$rc/$(jget "$T/clamped2.json" 'r["latency_us"]["e2e"]["clamped"]')/$(grep -c '^(6 values outside 1 us .. 1 h were clamped)' "$T/clamped.out")" \
    "0/6/1"

# ---- a plan in three shards = the same plan in one process, row for row -----------------
"$YB" synth acl --proto restconf -n 30 -r 1 -o "$T/rc.ybc" >/dev/null
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
# shard 0, the first run on a fresh fleet, does not race its own writers for them (NOT_FOUND)
timeout 90 "$YB" run -q "$T/rc.ybc" --targets "$T/pl.yaml" --fan-out -n 5 -c 1 >/dev/null 2>&1 ||
    not_ok "the sets written before the shards (exit $?)"
for i in 0 1 2; do
    timeout 90 "$YB" run -q --plan "$T/plan.yaml" --targets "$T/pl.yaml" --shard $i/3 \
        --json "$T/plan$i.json" >"$T/plan$i.out" 2>&1 ||
        { not_ok "plan shard $i/3 (exit $?)"; diag "$(grep -A4 '^Error reasons' "$T/plan$i.out")"; }
done
timeout 90 "$YB" run -q --plan "$T/plan.yaml" --targets "$T/pl.yaml" --json "$T/plan1p.json" \
    >/dev/null 2>&1 || not_ok "the plan in one process (exit $?)"
stop_fleet
merge plan "$T/plan0.json" "$T/plan1.json" "$T/plan2.json" --json "$T/planm.json"
is "plan shards merged: the counts of the plan run in one process, per workload and per target" \
    "$rc/$($PY - "$T/planm.json" "$T/plan1p.json" <<'PY'
import json, sys
m, one = (json.load(open(f)) for f in sys.argv[1:])
rows = lambda r, k: sorted((x["name"], x["requests"], x["ok"], x["started"]) for x in r[k])
print(rows(m, "workloads") == rows(one, "workloads"), rows(m, "targets") == rows(one, "targets"),
      m["summary"]["requests_completed"], one["summary"]["requests_completed"],
      sorted((o["operation"], o["requests"]) for o in m["operations"]) ==
      sorted((o["operation"], o["requests"]) for o in one["operations"]))
PY
)" "0/True True 111 111 True"
like "the text report has the Workloads table" "$(cat "$T/plan.out")" '^  pollers +0\.0 +21 +21 +0 '

# ---- refusals --------------------------------------------------------------------------
merge ids "$T/shard0.json" "$T/plain.json"
is "different run ids: exit 2" "$rc" 2
like "... naming both files and --force" "$(cat "$T/ids.err")" \
    "shard0.json and .*plain.json are reports of different runs \(run_id [0-9a-f]+ vs [0-9a-f]+\); --force"
merge forced "$T/shard0.json" "$T/plain.json" --force --json "$T/forced.json"
is "--force merges them: exit 0, counts added" \
    "$rc/$(jget "$T/forced.json" 'r["summary"]["requests_completed"]')" \
    "0/$(( $(jget "$T/shard0.json" 'r["summary"]["requests_completed"]') + 200 ))"
merge dup "$T/shard0.json" "$T/shard1.json" "$T/shard0.json"
is "a shard given twice: exit 2" "$rc" 2
like "... naming the two files and the shard" "$(cat "$T/dup.err")" "shard0.json and .*shard0.json are both shard 0"
merge two "$T/shard0.json" "$T/shard2.json" --tolerance 0s
is "two shards of three: merged (exit 0)" "$rc" 0
like "... with shard 1 reported missing" "$(cat "$T/two.err")" "WARNING: shard 1 of 3 missing"
like "... and, with --tolerance 0s, the start spread" "$(cat "$T/two.err")" \
    "WARNING: shards started [0-9.]+ ms apart \(more than the tolerance of 0.000 ms\)"

# ---- the I/O path (cpu.io): each shard's, and the merge's -----------------------------------
io0=$(jget "$T/shard0.json" 'r["cpu"]["io"]')
like "each shard says how its sessions did their I/O" "$io0" '^(io_uring|epoll)$'
is "... the same for the three shards (one machine, --io auto)" \
    "$(jget "$T/shard1.json" 'r["cpu"]["io"]') $(jget "$T/shard2.json" 'r["cpu"]["io"]')" "$io0 $io0"
n0=$([ "$io0" = io_uring ] && echo 3 || echo 0)
is "the merge says the same, of the shards' three threads" \
    "$(jget "$T/m.json" '[r["cpu"]["io"], r["cpu"]["io_uring_threads"]]')" "[\"$io0\",$n0]"
iomerge() { # NAME PYTHON-STATEMENT-ON-r: shard0 merged with a copy of shard1 changed
    $PY -c "import json, sys; r = json.load(open(sys.argv[1])); $2; json.dump(r, open(sys.argv[2], 'w'))" \
        "$T/shard1.json" "$T/io_$1.json"
    merge "io_$1" "$T/shard0.json" "$T/io_$1.json" --json "$T/io_$1.out.json"
}
iomerge flip 'r["cpu"]["io_uring_threads"] = 1 - r["cpu"]["io_uring_threads"]'
is "a shard on io_uring and one on epoll: the merge says mixed, 1 of 2 threads" \
    "$rc $(jget "$T/io_flip.out.json" '[r["cpu"]["io"], r["cpu"]["io_uring_threads"]]')" \
    '0 ["mixed",1]'
iomerge old 'del r["cpu"]["io"]; del r["cpu"]["io_uring_threads"]'
is "a shard that does not say (a report from before): the merge does not either" \
    "$rc $(jget "$T/io_old.out.json" '"io" in r["cpu"] or "io_uring_threads" in r["cpu"]')" \
    "0 false"
like "... nor its text report" "$(cat "$T/io_old.out")" 'us per request$'

# ---- hostile inputs: exit 2 naming the file and the key; outputs left whole ----------------
echo '{"keep": true}' >"$T/out.json"
echo 'keep' >"$T/out.hlog"
hostile() { # NAME PYTHON-STATEMENT-ON-r: a copy of shard1.json changed
    $PY -c "import json, sys; r = json.load(open(sys.argv[1])); $2; json.dump(r, open(sys.argv[2], 'w'))" \
        "$T/shard1.json" "$T/$1.json"
    merge "h_$1" "$T/shard0.json" "$T/$1.json" --json "$T/out.json" --hlog "$T/out.hlog" \
        --hlog-in "$T/shard0.hlog"
}
hostile count 'r["latency_us"]["e2e"]["count"] += 1'
is "a histogram whose count differs from its summary: exit 2" "$rc" 2
like "... naming the file and the key" "$(cat "$T/h_count.err")" \
    "count.json: histograms.e2e: its count differs"
hostile b64 'r["histograms"]["ttfb"] = "HISTFAAAAAA="'
like "a histogram that does not decode: exit 2 naming the key" "$rc $(cat "$T/h_b64.err")" \
    "^2 .*b64.json: histograms.ttfb: not an HdrHistogram"
hostile neg 'r["summary"]["requests_ok"] = -5'
like "a negative counter: exit 2 naming the key" "$rc $(cat "$T/h_neg.err")" \
    "^2 .*neg.json: summary.requests_ok: expected an integer >= 0"
hostile order 'r["intervals"][0]["t_s"] = 7'
like "a series out of order: exit 2 naming the element" "$rc $(cat "$T/h_order.err")" \
    "^2 .*order.json: intervals\[0\]\.t_s"
hostile iothr 'r["cpu"]["io_uring_threads"] = 2'
like "more threads on io_uring than the run had: exit 2 naming the key" \
    "$rc $(cat "$T/h_iothr.err")" "^2 .*iothr.json: cpu.io_uring_threads: 2 of 1 threads"
hostile nohist 'del r["histograms"]'
like "a report without histograms: exit 2 naming the key" "$rc $(cat "$T/h_nohist.err")" \
    "^2 .*nohist.json: histograms: missing"
hostile cls 'r["errors"]["reasons"] = [{"class": "nope", "reason": "x", "count": 1, "first_s": 0}]'
like "an unknown error class: exit 2 naming the key" "$rc $(cat "$T/h_cls.err")" \
    "^2 .*cls.json: errors.reasons\[0\]\.class"
printf 'not json' >"$T/junk.json"
merge junk "$T/junk.json" --json "$T/out.json"
like "not JSON at all: exit 2 with line and column" "$rc $(cat "$T/junk.err")" "^2 .*junk.json: line 1, column"
is "the existing outputs were left whole" "$(cat "$T/out.json" "$T/out.hlog")" '{"keep": true}
keep'
sed 's/^\(1\.000,1\.000,[0-9.]*,\)HISTF/\1XXXXX/' "$T/shard1.hlog" >"$T/bad.hlog"
merge badhlog "$T/shard0.json" "$T/shard1.json" --hlog "$T/out.hlog" \
    --hlog-in "$T/shard0.hlog" --hlog-in "$T/bad.hlog" --json "$T/out.json"
like "a bad interval log line: exit 2 naming the file and the line" "$rc $(grep -v WARNING "$T/badhlog.err")" \
    "^2 .*bad.hlog:[0-9]+: the histogram is not"
is "... and the outputs were left whole" "$(cat "$T/out.json" "$T/out.hlog")" '{"keep": true}
keep'

done_testing
