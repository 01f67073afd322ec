#!/bin/bash
# experiment sweep with several targets and with plan workloads, against
# `serve --devices 2` whose devices have known, unequal capacities (200 ms
# per request; sw1 with 4 workers serves at most 20/s, sw2 with 2 at most
# 10/s):
# - --targets FILE --fan-out: the fleet steps together; the fleet's knee
#   lands within 10 % of 30/s and each device's own within 10 % of its
#   capacity; --telemetry gives each device's CPU per step;
# - --plan FILE --workload writers: writers swept on sw1 while pollers run
#   there at 5/s as the plan says: the writers' knee lands within 10 % of
#   the 15/s the pollers leave them; an SLO scoped to the pollers is judged
#   on theirs;
# - the rewrites apply to a sweep's requests; bad combinations exit 2.
# gNMI Capabilities and Sets cost next to no CPU: the modelled workers are
# the limit even on a busy machine; growth decides the knee, not a clock.
. "${YB_SRCDIR:-.}/tests/lib.sh"
GC="$T/caps.ybc"
"$YB" synth acl -p gnmi --op capabilities -n 4 -o "$GC" >/dev/null || { echo "Bail out! synth"; exit 1; }

# within10 FILE EXPR CAP: 1 when EXPR (of the JSON r) is within 10 % of CAP
within10() { jget "$1" "int(abs(($2) - $3) <= 0.1 * $3)"; }
knee_of() { echo "[d['knee']['achieved_per_s'] for d in r['sweep']['devices'] if d['name'] == '$1'][0]"; }

check_rc "serve --workers lists more values than devices: usage error" 2 "$YB" serve --devices 2 --workers 1,2,3
check_rc "--targets without --fan-out: usage error" 2 "$YB" experiment sweep "$GC" --targets /dev/null -c 1,2
check_rc "--workload without --plan: usage error" 2 "$YB" experiment sweep "$GC" --target grpc://127.0.0.1:1 -c 1,2 --workload w
check_rc "--plan without --workload: usage error" 2 "$YB" experiment sweep --plan /dev/null -c 1,2

DEVICES=2 serve_fleet sf --workers 4,2 --service-time fixed:200ms ||
    { echo "Bail out! serve --devices did not start"; exit 1; }
check_rc "an SLO scoped to a target that is not there: usage error" 2 "$YB" experiment sweep "$GC" \
    --targets "$T/sf.yaml" --fan-out -c 1,2 --slo 'target=sw9:e2e.p99<1s'
check_rc "fleet sweep runs" 0 "$YB" experiment sweep "$GC" --targets "$T/sf.yaml" --fan-out -c 1,2,4,8 \
    --step 3s --warmup 1s --slo 'e2e.p99<2s' --bisect 0 -q --json "$T/f.json" --html "$T/f.html" \
    --telemetry --telemetry-baseline 1s
cp "$T/.out" "$T/f.txt"
is "fleet: knee within 10% of 30/s (20 + 10)" "$(within10 "$T/f.json" "r['sweep']['knee']['achieved_per_s']" 30)" 1
is "fleet: sw1's knee within 10% of 20/s" "$(within10 "$T/f.json" "$(knee_of sw1)" 20)" 1
is "fleet: sw2's knee within 10% of 10/s" "$(within10 "$T/f.json" "$(knee_of sw2)" 10)" 1
[ "$(within10 "$T/f.json" "$(knee_of sw2)" 10)" = 1 ] || diag "$(cat "$T/f.txt")"
is "fleet: every step has a row per device, judged" \
    "$(jget "$T/f.json" "all([p['name'] for p in s['parts']] == ['sw1', 'sw2'] and all(isinstance(p['pass'], bool) for p in s['parts']) for s in r['sweep']['steps'])")" true
is "fleet: the devices' rows add up to the step's" \
    "$(jget "$T/f.json" "all(sum(p['ok'] for p in s['parts']) == s['ok'] for s in r['sweep']['steps'])")" true
is "fleet: each device's CPU for every step (--telemetry)" \
    "$(jget "$T/f.json" "all(isinstance(p['device_cpu_pct'], float) for s in r['sweep']['steps'] for p in s['parts'])")" true
like "fleet text: each device's knee stated" "$(cat "$T/f.txt")" 'Knee of sw2: [0-9.]+ requests/s at [0-9]+ sessions'
like "fleet --html: each device's knee" "$(cat "$T/f.html")" 'Knee of sw2: [0-9.]+ requests/s at [0-9]+ sessions'
is "fleet --html: a row per device under each step" "$(grep -c 'data-kind="sweep-part"' "$T/f.html")" \
    "$(jget "$T/f.json" "sum(len(s['parts']) for s in r['sweep']['steps'])")"
/usr/bin/python3 -c "import json,sys; r=json.load(open(sys.argv[1])); r['sweep']['steps'][0]['parts'][1]['p99_us'] = 'x'; json.dump(r, open(sys.argv[2], 'w'))" \
    "$T/f.json" "$T/fbad.json"
"$YB" report "$T/fbad.json" -o "$T/fbad.html" 2>"$T/fbad.err"
is "report: a hostile part row: exit 2" "$?" 2
like "... naming the key" "$(cat "$T/fbad.err")" 'sweep\.steps\[0\]\.parts\[1\]\.p99_us: expected a number, got a string'
stop_fleet
is "one telemetry Subscribe per device, on the devices' own counts" \
    "$(jget "$T/sf.stats.json" "[d['requests']['gnmi']['Subscribe'] for d in r['devices']]")" '[1,1]'

DEVICES=2 serve_fleet sp --workers 4 --service-time fixed:200ms ||
    { echo "Bail out! serve --devices did not start"; exit 1; }
cat >"$T/p.yaml" <<PLAN
workloads:
  - name: writers
    synth: {protocol: gnmi, op: set, count: 100, rules: 1}
    targets: [sw1]
  - name: pollers
    synth: {protocol: gnmi, op: capabilities, count: 4}
    rate: 5
    concurrency: 8
    targets: [sw1]
PLAN
check_rc "--workload that is not in the plan: usage error" 2 "$YB" experiment sweep --plan "$T/p.yaml" \
    --targets "$T/sp.yaml" --workload nope -c 1,2
check_rc "plan sweep runs" 0 "$YB" experiment sweep --plan "$T/p.yaml" --targets "$T/sp.yaml" \
    --workload writers -c 1,2,4,8 --step 3s --warmup 1s --slo 'e2e.p99<2s' \
    --slo 'workload=pollers:errors<1%' --bisect 0 -q --json "$T/p.json"
cp "$T/.out" "$T/p.txt"
stop_fleet
is "plan: the writers' knee within 10% of the 15/s the pollers leave" \
    "$(within10 "$T/p.json" "r['sweep']['knee']['achieved_per_s']" 15)" 1
[ "$(within10 "$T/p.json" "r['sweep']['knee']['achieved_per_s']" 15)" = 1 ] || diag "$(cat "$T/p.txt")"
is "plan: the swept workload is named" "$(jget "$T/p.json" "r['sweep']['workload']")" writers
is "plan: the pollers ran beside every step at their 5/s" \
    "$(jget "$T/p.json" "all(abs(s['parts'][0]['achieved_per_s'] - 5) <= 1 and s['parts'][0]['name'] == 'pollers' for s in r['sweep']['steps'])")" true
is "plan: the devices served the writers' Sets and the pollers' calls, sw2 nothing" \
    "$(jget "$T/sp.stats.json" "[d['requests']['gnmi']['Set'] > 0 and d['requests']['gnmi']['Capabilities'] > 0 for d in r['devices']] + [r['devices'][1]['requests']['gnmi']['total']]")" '[true,false,0]'
like "plan text: the pollers' row under each step" "$(cat "$T/p.txt")" 'w:pollers +[0-9.]+'

# RESTCONF over a new session per request, open loop: every device's row,
# every request on a connection of its own (the devices' own counts)
"$YB" synth acl --proto restconf --op get -n 4 -o "$T/rg.ybc" >/dev/null || { echo "Bail out! synth"; exit 1; }
DEVICES=2 serve_fleet rp --service-time fixed:1ms || { echo "Bail out! serve --devices did not start"; exit 1; }
check_rc "RESTCONF per-request rate sweep of a fleet runs" 0 "$YB" experiment sweep "$T/rg.ybc" \
    --targets "$T/rp.yaml" --fan-out --rate 5,10 -c 2 --sessions per-request --accept 404 \
    --step 1s --warmup 0s --bisect 0 -q --json "$T/rp.json"
stop_fleet
is "... each step has both devices' rows, each with its requests" \
    "$(jget "$T/rp.json" "[[p['name'] for p in s['parts'] if p['ok'] > 0] for s in r['sweep']['steps']]")" \
    '[["sw1","sw2"],["sw1","sw2"]]'
is "... a connection per request on each device" \
    "$(jget "$T/rp.stats.json" "[d['connections']['restconf'] == d['requests']['restconf']['total'] > 0 for d in r['devices']]")" \
    '[true,true]'

# rewrites reach a sweep's requests: a path no server knows fails every one
DEVICES=2 serve_fleet rw --service-time fixed:1ms || { echo "Bail out! serve --devices did not start"; exit 1; }
GURL=$(/usr/bin/python3 -c "import re,sys; print(re.findall(r'gnmi: \"?([^\"\\n]+)', open(sys.argv[1]).read())[0])" "$T/rw.yaml")
"$YB" experiment sweep "$GC" --target "$GURL" -c 1 --step 1s --warmup 0s -q --json "$T/rw.json" \
    --rewrite-path '/gnmi.gNMI/Capabilities=/gnmi.gNMI/Nope' >/dev/null 2>&1
stop_fleet
is "--rewrite-path applies to the sweep: no step succeeds" \
    "$(jget "$T/rw.json" "[r['sweep']['knee'], [s['ok'] for s in r['sweep']['steps']]]")" '[null,[0]]'
is "... and the device never saw a Capabilities call" "$(jget "$T/rw.stats.json" "r['devices'][0]['requests']['gnmi']['Capabilities']")" 0
done_testing
