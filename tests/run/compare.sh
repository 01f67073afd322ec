#!/bin/bash
# yangblast compare on the reports of real runs: a 1 ms and a 5 ms
# `yangblast serve` (a regression under --max-regression 10%: exit 1), a
# report against itself (every delta 0, exit 0), unlike runs (refused
# without --force, flagged with it), and hostile or malformed reports
# (exit 2 naming the file and the key).  Every run is bounded by `timeout 90`.
. "${YB_SRCDIR:-.}/tests/lib.sh"

RC_CORPUS=$YB_SRCDIR/corpus/restconf-acl-1000.ybc

yb_serve "$T/s1.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --service-time fixed:1ms ||
    { echo "Bail out! serve did not start"; exit 1; }
fast=$RURL
timeout 90 "$YB" run -q "$RC_CORPUS" --target "$fast" -n 200 -c 2 --json "$T/base.json" >/dev/null 2>&1
is "base run (1 ms server)" "$?" 0
yb_serve_stop
yb_serve "$T/s5.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --service-time fixed:5ms ||
    { echo "Bail out! serve did not start"; exit 1; }
slow=$RURL
timeout 90 "$YB" run -q "$RC_CORPUS" --target "$slow" -n 200 -c 2 --json "$T/new.json" >/dev/null 2>&1
is "new run (5 ms server)" "$?" 0
timeout 90 "$YB" run -q "$RC_CORPUS" --target "$slow" -n 200 -c 4 --json "$T/c4.json" >/dev/null 2>&1
is "a run at -c 4" "$?" 0
timeout 90 "$YB" run -q "$RC_CORPUS" --target "$slow" -n 200 -c 2 --io epoll --json "$T/epoll.json" \
    >/dev/null 2>&1
is "a run with --io epoll" "$?" 0
yb_serve_stop

# cmp NAME ARGS...: yangblast compare, stdout in $T/NAME.out, stderr in $T/NAME.err, exit in $rc.
cmp() {
    local n=$1
    shift
    timeout 30 "$YB" compare "$@" >"$T/$n.out" 2>"$T/$n.err"
    rc=$?
}

# ---- 1 ms vs 5 ms: a regression --------------------------------------------------------
cmp slower "$T/base.json" "$T/new.json" --max-regression 10% --json "$T/slower.json"
is "1 ms -> 5 ms with --max-regression 10%: exit 1" "$rc" 1
is "JSON: e2e.p50 and rate regressed, in their directions; the limit is 10" \
    "$(jget "$T/slower.json" '[[f["figure"], f["better"], f["regression"], f["limit_pct"]] for f in r["figures"] if f["figure"] in ("rate", "e2e.p50")]')" \
    '[["rate","higher",true,10.0],["e2e.p50","lower",true,10.0]]'
is "JSON: e2e.p50 base/new are the reports' own p50 values" \
    "$(/usr/bin/python3 -c '
import json, sys
c = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2])); n = json.load(open(sys.argv[3]))
f = [x for x in c["figures"] if x["figure"] == "e2e.p50"][0]
bp, np_ = b["latency_us"]["e2e"]["p50"], n["latency_us"]["e2e"]["p50"]
print(f["base"] == bp and f["new"] == np_ and abs(f["delta"] - (np_ - bp)) < 1e-9 and abs(f["delta_pct"] - (np_ - bp) * 100 / bp) < 1e-9 and np_ > bp)
' "$T/slower.json" "$T/base.json" "$T/new.json")" True
is "only the target differs: listed, not unlike" \
    "$(jget "$T/slower.json" '[r["unlike"], [(s["key"], s["unlike"]) for s in r["settings_differ"]]]')" \
    '[false,[["target",false]]]'
like "text: the rate row says REGRESSION, higher is better" "$(cat "$T/slower.out")" \
    '^rate \(/s\) +[0-9.]+ +[0-9.]+ +-[0-9.]+ +-[0-9.]+% +higher +10% +REGRESSION$'
like "text: the verdict counts them" "$(cat "$T/slower.out")" '^[0-9]+ REGRESSIONS? beyond the limits'
like "text: the differing target is listed first" "$(sed -n '4,5p' "$T/slower.out")" \
    "^  target +$slow|^  target +$fast"
cmp ungated "$T/base.json" "$T/new.json"
is "without --max-regression: nothing gated, exit 0" "$rc/$(grep -c 'nothing is gated' "$T/ungated.out")" 0/1
cmp perfig "$T/base.json" "$T/new.json" --max-regression write.p50=1000% --json "$T/perfig.json"
is "a per-figure limit gates that figure only" \
    "$rc/$(jget "$T/perfig.json" '[f["figure"] for f in r["figures"] if f["limit_pct"] is not None]')" \
    '0/["write.p50"]'
# (the central figures: a tail of 200 requests on a shared machine is noise)
cmp improved "$T/new.json" "$T/base.json" --max-regression e2e.p50=10% --max-regression rate=10%
is "5 ms -> 1 ms (an improvement) gated on e2e.p50 and rate: exit 0" "$rc" 0

# ---- a report against itself ----------------------------------------------------------
cmp same "$T/base.json" "$T/base.json" --max-regression 0% --json "$T/same.json"
is "the same report twice, even with a 0% limit: exit 0" "$rc" 0
is "every delta 0, no regression, no setting differs" \
    "$(jget "$T/same.json" '[all(f["delta"] in (0, None) and f["delta_pct"] in (0, None) for f in r["figures"]), r["regressions"], r["settings_differ"], len(r["figures"]) > 10]')" \
    '[true,0,[],true]'

# ---- unlike runs --------------------------------------------------------------------
cmp unlike "$T/new.json" "$T/c4.json" --max-regression 10%
is "different concurrency without --force: exit 2" "$rc" 2
like "... the message names the setting with both values" "$(cat "$T/unlike.err")" \
    'are unlike runs \(concurrency: 2 vs 4\).*--force compares them anyway'
is "... and nothing is printed on stdout" "$(wc -c <"$T/unlike.out")" 0
cmp forced "$T/new.json" "$T/c4.json" --force --json "$T/forced.json"
is "--force: compared (exit 0 without limits)" "$rc" 0
like "--force: a WARNING line in the report" "$(cat "$T/forced.out")" \
    '^WARNING: unlike runs \(concurrency: 2 vs 4\)'
like "--force: and on stderr" "$(cat "$T/forced.err")" 'WARNING: unlike runs'
is "--force: JSON says unlike and forced, concurrency marked" \
    "$(jget "$T/forced.json" '[r["unlike"], r["forced"], [s for s in r["settings_differ"] if s["key"] == "concurrency"]]')" \
    '[true,true,[{"base":2,"key":"concurrency","new":4,"unlike":true}]]'

# the I/O path: new.json ran with --io auto (io_uring where the kernel allows it)
io=$(jget "$T/new.json" 'r["cpu"]["io"]')
is "--io epoll: the report says epoll" "$(jget "$T/epoll.json" 'r["cpu"]["io"]')" epoll
cmp io "$T/new.json" "$T/epoll.json"
if [ "$io" = io_uring ]; then
    is "io_uring against epoll: unlike runs, exit 2" "$rc" 2
    like "... naming the I/O path with both values" "$(cat "$T/io.err")" \
        'are unlike runs \(io: io_uring vs epoll\)'
else
    ok "# SKIP this kernel refuses io_uring ($io): both runs on epoll"
    ok "# SKIP (the same)"
fi
/usr/bin/python3 -c "
import json,sys
d = json.load(open(sys.argv[1])); del d['cpu']['io']; del d['cpu']['io_uring_threads']
json.dump(d, open(sys.argv[2], 'w'))" "$T/epoll.json" "$T/noio.json"
cmp noio "$T/new.json" "$T/noio.json"
is "a report from before cpu.io against one with it: alike (exit 0)" "$rc" 0

# ---- a run whose generator was the bottleneck is flagged -----------------------------
# Both sides' own self-checks are cleared first: on a busy machine the real
# runs may carry cpu_starved, and only the flag set here is under test.
/usr/bin/python3 -c "
import json,sys
for src, dst, sat in ((sys.argv[1], sys.argv[3], False), (sys.argv[2], sys.argv[4], True)):
    d = json.load(open(src))
    for k in ('behind_schedule', 'cpu_saturated', 'cpu_starved'):
        d['self_check'][k] = False
    d['self_check']['cpu_saturated'] = sat
    json.dump(d, open(dst, 'w'))" "$T/base.json" "$T/new.json" "$T/base_clean.json" "$T/sat.json"
cmp saturated "$T/base_clean.json" "$T/sat.json" --json "$T/saturated.json"
like "a CPU-saturated generator in NEW: a WARNING line" "$(cat "$T/saturated.out")" \
    "^WARNING: NEW $T/sat\\.json: its generator was CPU-saturated \\(self_check\\.cpu_saturated\\)"
is "... and in the JSON warnings" "$(jget "$T/saturated.json" 'len(r["warnings"])')" 1

# ---- hostile and malformed reports --------------------------------------------------
mutate() { # mutate OUT PYTHON-STATEMENT: base.json changed by the statement (on d)
    /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $2; json.dump(d, open(sys.argv[3], 'w'))" \
        "$T/base.json" _ "$1"
}
bad() { # bad FILE WANT: compare base.json FILE exits 2 and names FILE and what
    cmp bad "$T/base.json" "$1"
    is "hostile $(basename "$1"): exit 2" "$rc" 2
    like "... message: $2" "$(cat "$T/bad.err")" "^yangblast compare: $1: $2"
}
mutate "$T/str.json" 'd["latency_us"]["e2e"]["p99"] = "12"'
bad "$T/str.json" 'latency_us\.e2e\.p99: expected a number, found a string'
mutate "$T/neg.json" 'd["summary"]["rate_per_s"] = -5'
bad "$T/neg.json" 'summary\.rate_per_s: expected a number >= 0'
mutate "$T/nocpu.json" 'del d["cpu"]'
bad "$T/nocpu.json" 'cpu: missing \(expected an object\)'
mutate "$T/arr.json" 'd["latency_us"]["ttfb"] = [1, 2]'
bad "$T/arr.json" 'latency_us\.ttfb: expected an object, found an array'
mutate "$T/schema.json" 'd["schema"] = "yangblast-experiment/1"'
bad "$T/schema.json" "schema: 'yangblast-experiment/1' is not a run report"
printf '{"schema": "yangblast-report/1", "run": {' >"$T/trunc.json"
bad "$T/trunc.json" 'line 1, column [0-9]+: '
printf '{"schema":"yangblast-report/1","schema":"x"}' >"$T/dup.json"
bad "$T/dup.json" 'line 1, column [0-9]+: duplicate object key'
printf '[1,2,3]' >"$T/array.json"
bad "$T/array.json" 'expected a JSON object \(a yangblast report\), found an array'
/usr/bin/python3 -c 'print("[" * 100000)' >"$T/deep.json"
bad "$T/deep.json" 'line 1, column [0-9]+: '
printf '\xff\xfe{}' >"$T/binary.json"
bad "$T/binary.json" 'line 1, column [0-9]+: '
cmp missing "$T/base.json" "$T/does-not-exist.json"
is "a missing file: exit 2 naming it" "$rc/$(grep -c "does-not-exist.json: No such file" "$T/missing.err")" 2/1
cmp badlimit "$T/base.json" "$T/base.json" --max-regression 10
like "--max-regression 10 (no %): exit 2, says what it takes" "$rc $(cat "$T/badlimit.err")" \
    "^2 yangblast compare: --max-regression '10': expected P%"
cmp badfig "$T/base.json" "$T/base.json" --max-regression 'e2e.p95=5%'
like "--max-regression on a figure the report lacks: exit 2" "$rc $(cat "$T/badfig.err")" \
    "^2 yangblast compare: --max-regression 'e2e.p95=5%': no figure 'e2e.p95'"
cmp one "$T/base.json"
is "one report only: exit 2" "$rc" 2

done_testing
