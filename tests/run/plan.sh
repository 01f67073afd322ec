#!/bin/bash
# run --plan FILE against `serve --devices 3`: writers + pollers +
# subscribers + a late RESTCONF workload in one run, each workload's counts
# checked against the devices' own statistics; a start offset leaves the
# first second of the per-second series empty; a plan of one workload gives
# the numbers of the equivalent command line; every plan error exits 2
# naming file, line and key before any connection.
. "$YB_SRCDIR/tests/lib.sh"

dev() { jget "$T/$1.stats.json" "[$2 for d in r['devices']]"; }
url() { /usr/bin/python3 -c "import re,sys; print(re.findall(r'$2: \"?([^\"\\n]+)', open(sys.argv[1]).read())[$3])" "$T/$1.yaml"; }

"$YB" synth acl --proto restconf -n 10 -r 1 -o "$T/rc.ybc" >/dev/null || { echo "Bail out! synth"; exit 1; }

# ---- plan errors: exit 2, FILE:LINE: key, before any traffic ---------------------
serve_fleet bad || { echo "Bail out! serve --devices did not start"; exit 1; }
P=$T/e.yaml
plan() { printf "$@" >"$P"; }
# refused DESC MESSAGE-REGEX [RUN ARGS...]
refused() {
    local d=$1 msg=$2; shift 2
    "$YB" run --plan "$P" --targets "$T/bad.yaml" -q "$@" >"$T/out" 2>"$T/err"
    is "$d: exit 2" "$?" 2
    like "$d: names file, line and key" "$(head -1 "$T/err")" "$msg"
}
W='workloads:\n  - name: w1\n    synth: {protocol: gnmi, count: 2, rules: 1}\n'
plan "$W"'    colour: red\n'
refused "unknown key" "^yangblast run: $P:4: unknown key 'colour' in workload 'w1'"
plan "$W"'    rate: fast\n'
refused "bad value" "^yangblast run: $P:4: key 'rate' in workload 'w1': --rate 'fast': expected"
plan "$W"'    start: soon\n'
refused "bad start" "^yangblast run: $P:4: key 'start' in workload 'w1': 'soon': expected a duration"
plan 'workloads:\n  - name: w1\n    corpus: nope.ybc\n'
refused "missing corpus" "^yangblast run: $P:3: key 'corpus' in workload 'w1': cannot read '$T/nope.ybc'"
plan "$W"'    targets: [sw1, sw9]\n'
refused "unknown target name" "^yangblast run: $P:4: key 'targets' in workload 'w1': unknown target 'sw9'"
plan "$W"'  - name: w1\n    corpus: %s\n' "$T/rc.ybc"
refused "duplicate workload name" "^yangblast run: $P:4: key 'name': duplicate workload name 'w1' \\(first at line 2\\)"
plan 'workloads:\n  - name: w1\n    synth: {protocol: gnmi, colour: 1}\n'
refused "unknown synth key" "^yangblast run: $P:3: unknown key 'colour' in synth of workload 'w1'"
plan 'workloads:\n  - name: w1\n    synth: {protocol: gnmi, mode: stream}\n'
refused "synth's own check" "^yangblast synth: $P:3: key 'synth' in workload 'w1': --mode applies to --op subscribe only"
plan 'workloads:\n  - name: w1\n    corpus: %s\n    targets: [grpc://127.0.0.1:1]\n  - name: w2\n    corpus: %s\n' "$T/rc.ybc" "$T/rc.ybc"
refused "a workload whose records have no target" \
    "^yangblast run: $P:2: workload 'w1': 10 records of $T/rc.ybc have no target"
plan "$W"'    concurrency: 1\n'
refused "concurrency below -t" "^yangblast run: $P:2: workload 'w1': -c \\(1\\) must be at least -t \\(2\\)" -t 2
plan "$W"
refused "a threshold naming no workload" "workload=nope" --threshold 'workload=nope:errors<=0'
plan "$W"
"$YB" run --plan "$P" --targets "$T/bad.yaml" -c 2 -q >"$T/out" 2>"$T/err"
is "a workload option on the command line: exit 2" "$?" 2
like "... says it is a workload key" "$(head -1 "$T/err")" "^yangblast run: -c does not apply with --plan"
plan 'workloads:\n  - name: w1\n    synth: {protocol: gnmi}\n    duration: 1s\n'
"$YB" run --plan "$P" -q >"$T/out" 2>"$T/err"
is "a workload without any target: exit 2" "$?" 2
like "... naming the workload" "$(head -1 "$T/err")" "^yangblast run: $P:2: workload 'w1': has no targets"
plan 'workloads:\n  - name: w1\n    corpus: %s\n    targets: http://127.0.0.1:1\n' "$T/rc.ybc"
refused "an inventory no workload goes to" "^yangblast run: --targets $T/bad.yaml: no workload goes to it"
is "no synthesized corpus left behind" "$(ls "${TMPDIR:-/tmp}" | grep -c '^yangblast-plan-')" 0
stop_fleet
is "no device saw a connection or a request" \
    "$(dev bad "d['connections']['restconf'] + d['connections']['gnmi'] + d['requests']['restconf']['total'] + d['requests']['gnmi']['total']")" \
    "[0,0,0]"

# ---- writers + pollers + subscribers + a late RESTCONF workload ---------------------
serve_fleet mix || { echo "Bail out! serve --devices did not start"; exit 1; }
cat >"$T/stress.yaml" <<EOF
defaults:
  duration: 2s
workloads:
  - name: writers
    synth: {kind: acl, protocol: gnmi, op: set, count: 100, rules: 1}
    rate: 20
    targets: [sw1, sw2]
  - name: pollers
    synth: {protocol: gnmi, op: get, count: 5}
    concurrency: 3
    requests: 300
    accept-grpc: 5
    targets: sw3
  - name: subscribers
    synth: {protocol: gnmi, op: subscribe, mode: stream, count: 4, sample-interval: 100ms}
    subscriptions: 4
    targets: [sw1]
  - name: late-restconf
    synth: {protocol: restconf, op: create, method: PATCH, count: 50, rules: 1}
    rate: 10
    start: 1s
    duration: 1s
    targets: [sw2]
EOF
# sw3's own concurrency in the inventory (4) yields to the pollers' 3
/usr/bin/python3 - "$T/mix.yaml" <<'EOF'
import sys
s = open(sys.argv[1]).read().replace("  - name: sw3\n", "  - name: sw3\n    concurrency: 4\n")
open(sys.argv[1], "w").write(s)
EOF
timeout 60 "$YB" run --plan "$T/stress.yaml" --targets "$T/mix.yaml" -q --json "$T/stress.json" \
    --html "$T/stress.html" --threshold 'workload=writers:errors<=0' --log "$T/stress.log" \
    >"$T/stress.txt" 2>&1
is "the plan ran: exit 0" "$?" 0
stop_fleet
wl() { jget "$T/stress.json" "[w['$1'] for w in r['workloads']]"; }
is "JSON workloads in the plan's order" "$(wl name)" '["writers","pollers","subscribers","late-restconf"]'
is "... no errors" "$(wl errors)" "[0,0,0,0]"
is "writers: their requests are the Sets sw1 and sw2 served" \
    "$(jget "$T/stress.json" "r['workloads'][0]['requests']")" \
    "$(jget "$T/mix.stats.json" "sum(d['requests']['gnmi']['Set'] for d in r['devices'])")"
is "the pollers' concurrency 3 held on sw3 (its inventory says 4): 3 gNMI sessions (sw1: a writer and 4 subscribers, sw2: a writer)" \
    "$(dev mix "d['connections']['gnmi']")" "[5,1,3]"
is "... sw1 and sw2 got Sets, sw3 none" "$(dev mix "d['requests']['gnmi']['Set'] > 0")" "[true,true,false]"
is "pollers: their requests are the Gets sw3 served, none elsewhere" \
    "$(dev mix "d['requests']['gnmi']['Get']")" "[0,0,$(jget "$T/stress.json" "r['workloads'][1]['requests']")]"
is "subscribers: 4 Subscribe calls on sw1 (where the Sets go), ended ok at the end" \
    "$(dev mix "d['requests']['gnmi']['Subscribe']"),$(jget "$T/stress.json" "r['workloads'][2]['ok']")" "[4,0,0],4"
is "... their notifications counted per workload" \
    "$(jget "$T/stress.json" "r['workloads'][2]['notifications'] > 0 and r['workloads'][2]['notifications_per_s'] > 0 and r['workloads'][2]['sync_p50_ms'] > 0 and r['workloads'][0]['notifications'] == 0")" true
is "late-restconf: its PATCHes are those sw2 served, none elsewhere" \
    "$(dev mix "d['requests']['restconf']['PATCH']")" "[0,$(jget "$T/stress.json" "r['workloads'][3]['requests']"),0]"
is "... its start offset is in the report" "$(jget "$T/stress.json" "[w['start_s'] for w in r['workloads']]")" "[0.0,0.0,0.0,1.0]"
is "the run's total is the workloads' sum" \
    "$(jget "$T/stress.json" "r['summary']['requests_completed'] == sum(w['requests'] for w in r['workloads'])")" true
is "JSON targets: each device once" "$(jget "$T/stress.json" "[t['name'] for t in r['targets']]")" '["sw1","sw2","sw3"]'
like "text report: a Workloads table with the Subscribe columns" "$(grep -A5 '^Workloads:' "$T/stress.txt" | tr '\n' ' ')" \
    'notif/s.*late p99.*writers.*pollers.*subscribers.*late-restconf'

is "a threshold scoped to a workload, judged on its figures" \
    "$(jget "$T/stress.json" "[[t['expr'], t['measured'], t['pass']] for t in r['thresholds']]")" \
    '[["workload=writers:errors<=0",0.0,true]]'
like "the run line says the load is per workload" "$(grep -A1 '^Run:' "$T/stress.txt" | tail -1)" \
    '^ +threads 1, 4 workloads, each with its own load model and sessions'
is "--log: each line names its workload and target (their rows in the report), counts as in JSON" \
    "$(/usr/bin/python3 -c "
import json, sys
ls = [json.loads(x) for x in open(sys.argv[1])]
r = json.load(open(sys.argv[2]))
ws = sorted({l['workload'] for l in ls})
print([sorted({l['target'] for l in ls if l['workload'] == w}) for w in ws],
      [sum(l['workload'] == w for l in ls) == r['workloads'][w]['requests'] for w in ws])" "$T/stress.log" "$T/stress.json")" \
    "[[0, 1], [2], [0], [1]] [True, True, True, True]"
is "HTML report: the per-workload table, a row per workload" \
    "$(/usr/bin/python3 -c "import sys; s = open(sys.argv[1]).read(); i = s.find('Per workload'); print(i > 0 and all(s.find(n, i) > 0 for n in ['writers', 'pollers', 'subscribers', 'late-restconf', 'sample_lateness_p99_ms']))" "$T/stress.html")" True

# ---- a start offset: nothing in the first second ------------------------------------
serve_fleet off || { echo "Bail out! serve --devices did not start"; exit 1; }
printf 'defaults:\n  start: 1s\n  duration: 1s\nworkloads:\n  - name: late\n    corpus: %s\n    rate: 20\n    targets: [sw1]\n  - name: late-closed\n    corpus: %s\n    targets: [sw2]\n' \
    "$T/rc.ybc" "$T/rc.ybc" >"$T/off.plan.yaml"
timeout 60 "$YB" run --plan "$T/off.plan.yaml" --targets "$T/off.yaml" -q --json "$T/off.json" >/dev/null 2>&1
is "start 1s: exit 0" "$?" 0
stop_fleet
is "no request in the first second, all of them after it" \
    "$(jget "$T/off.json" "[sum(i['requests'] for i in r['intervals'] if i['t_s'] == 0), sum(i['requests'] for i in r['intervals'] if i['t_s'] >= 1) == r['summary']['requests_completed'] > 0]")" \
    "[0,true]"
is "run.target_rate_curve: 0/s before the offset, 20/s during the workload, 0/s after" \
    "$(jget "$T/off.json" "sorted({q for t, q in r['run']['target_rate_curve'] if t < 0.99 or 1.01 < t < 1.99 or t > 2.01})")" \
    "[0.0,20.0]"
is "... 20/s between 1 s and 2 s only" \
    "$(jget "$T/off.json" "all((q == 20.0) == (1.0 <= t < 2.0) for t, q in r['run']['target_rate_curve'])")" true
is "... sw1 (open loop) and sw2 (closed loop) served exactly their workloads' requests" \
    "$(dev off "d['requests']['restconf']['total']")" \
    "$(jget "$T/off.json" "[w['requests'] for w in r['workloads']] + [0]")"
is "... both workloads sent some" "$(jget "$T/off.json" "[w['requests'] > 0 for w in r['workloads']]")" "[true,true]"

# ---- a plan of one workload = the equivalent command line ----------------------------
serve_fleet one || { echo "Bail out! serve --devices did not start"; exit 1; }
R1=$(url one restconf 0) R2=$(url one restconf 1)
timeout 60 "$YB" run "$T/rc.ybc" --target "$R1" -n 25 -c 2 -q --json "$T/cli.json" >/dev/null 2>&1
is "command line: exit 0" "$?" 0
printf 'workloads:\n  - name: same\n    corpus: %s\n    requests: 25\n    concurrency: 2\n    targets: %s\n' \
    "$T/rc.ybc" "$R2" >"$T/one.plan.yaml"
timeout 60 "$YB" run --plan "$T/one.plan.yaml" -q --json "$T/plan1.json" >/dev/null 2>&1
is "the plan: exit 0" "$?" 0
stop_fleet
same='[r["summary"]["requests_completed"], r["summary"]["requests_ok"], r["status"], sorted((o["name"], o["requests"], o["ok"]) for o in (r["operations"] if isinstance(r["operations"], list) else [dict(v, name=k) for k, v in r["operations"].items()]))]'
is "same requests, ok, statuses and operations" "$(jget "$T/plan1.json" "$same")" "$(jget "$T/cli.json" "$same")"
is "... and each device served 25 PATCHes over 2 sessions" \
    "$(dev one "[d['requests']['restconf']['PATCH'], d['connections']['restconf']]")" "[[25,2],[25,2],[0,0]]"

done_testing
