#!/bin/bash
# run --plan with --telemetry against `serve --devices 2`: one telemetry
# session per device the plan's workloads use (a device with a gNMI and a
# RESTCONF workload is watched once, over gNMI; the devices' own counts say
# so), a series entry for every second with that device's own load beside
# it, split per workload; a plan of RESTCONF URLs is polled over RESTCONF;
# the python grpcio server (no system paths) gives a note, not a failure.
. "${YB_SRCDIR:-.}/tests/lib.sh"
. "$YB_SRCDIR/tests/peers/peer.sh"

dev() { jget "$T/$1.stats.json" "[$2 for d in r['devices']]"; }
DEVICES=2 serve_fleet tp --workers 1 --service-time fixed:20ms ||
    { echo "Bail out! serve --devices did not start"; exit 1; }
cat >"$T/p.yaml" <<PLAN
defaults:
  duration: 2s
workloads:
  - name: writers
    synth: {protocol: gnmi, op: set, count: 20, rules: 1}
    rate: 20
    targets: [sw1, sw2]
  - name: pollers
    synth: {protocol: restconf, op: get, count: 5}
    concurrency: 2
    accept: 404
    targets: [sw2]
PLAN
check_rc "a plan with --telemetry runs" 0 timeout 60 "$YB" run --plan "$T/p.yaml" --targets "$T/tp.yaml" -q \
    --telemetry --telemetry-baseline 1s --json "$T/p.json"
cp "$T/.out" "$T/p.txt"
stop_fleet
D="r['telemetry']['devices']"
is "one device each, over gNMI (sw2's RESTCONF pollers too)" \
    "$(jget "$T/p.json" "[[d['target'], d['protocol'], d['supported']] for d in $D]")" \
    '[["sw1","gnmi",true],["sw2","gnmi",true]]'
is "one telemetry Subscribe per device, seen by the devices themselves" \
    "$(dev tp "d['requests']['gnmi']['Subscribe']"),$(jget "$T/p.json" "r['telemetry']['cost']['requests']")" "[1,1],2"
is "a series entry for every second, baseline to the end of the load, CPU in each" \
    "$(jget "$T/p.json" "all((lambda s: s[0]['t_s'] <= -1 and s[-1]['t_s'] >= 1 and [e['t_s'] for e in s] == list(range(s[0]['t_s'], s[-1]['t_s'] + 1)) and all(e['cpu_pct'] is not None for e in s))(d['series']) for d in $D)")" true
is "each device's seconds carry its own load: the sum is what it served" \
    "$(jget "$T/p.json" "[sum(e.get('requests', 0) for e in d['series']) for d in $D]")" \
    "$(dev tp "d['requests']['gnmi']['Set'] + d['requests']['restconf']['total']")"
is "... split per workload (sw1: writers; sw2: writers and pollers)" \
    "$(jget "$T/p.json" "[sorted({k for e in d['series'] for k in e.get('workloads', {})}) for d in $D]")" \
    '[["writers"],["pollers","writers"]]'
is "... the workloads' columns add up to the device's requests every second" \
    "$(jget "$T/p.json" "all(sum(e['workloads'].values()) == e['requests'] for d in $D for e in d['series'] if 'workloads' in e)")" true
is "... and to each workload's total" \
    "$(jget "$T/p.json" "[sum(e.get('workloads', {}).get(w['name'], 0) for d in $D for e in d['series']) == w['requests'] > 0 for w in r['workloads']]")" '[true,true]'
like "text: the workloads' columns beside the device's CPU" "$(cat "$T/p.txt")" 't \(s\) +CPU %.*p99 \(ms\) +writers +pollers'

"$YB" synth acl --proto restconf --op get -n 2 -o "$T/g.ybc" >/dev/null || { echo "Bail out! synth"; exit 1; }
# URLs in the plan (no inventory): a RESTCONF-only device is polled
DEVICES=2 serve_fleet tu || { echo "Bail out! serve --devices did not start"; exit 1; }
RURL=$(/usr/bin/python3 -c "import re,sys; print(re.findall(r'restconf: \"?([^\"\\n]+)', open(sys.argv[1]).read())[0])" "$T/tu.yaml")
printf 'workloads:\n  - name: gets\n    synth: {protocol: restconf, op: get, count: 5}\n    accept: 404\n    concurrency: 2\n    duration: 1s\n    targets: %s\n' \
    "$RURL" >"$T/u.yaml"
check_rc "a plan of a RESTCONF URL with --telemetry runs" 0 timeout 60 "$YB" run --plan "$T/u.yaml" -q \
    --telemetry --telemetry-baseline 1s --json "$T/u.json"
# a fan-out (no plan): each device beside its own load, not the run's
check_rc "run --targets --fan-out --telemetry runs" 0 timeout 60 "$YB" run "$T/g.ybc" --targets "$T/tu.yaml" \
    --fan-out -n 10 --accept 404 -q --telemetry --telemetry-baseline 1s --json "$T/f.json"
stop_fleet
is "fan-out: each device's seconds carry its own 10 requests" \
    "$(jget "$T/f.json" "[sum(e.get('requests', 0) for e in d['series']) for d in $D]")" '[10,10]'
is "... its device polled over RESTCONF" "$(jget "$T/u.json" "[[d['protocol'], d['supported']] for d in $D]")" '[["restconf",true]]'
is "... no gNMI session to it" "$(dev tu "d['connections']['gnmi']")" '[0,0]'

peer_start "$T/py" gnmi_server.py --max-seconds 60 || not_ok "python gnmi server starts"
pp=$(peer_port "$T/py")
printf 'workloads:\n  - name: caps\n    synth: {protocol: gnmi, op: capabilities, count: 2}\n    requests: 20\n    targets: grpc://127.0.0.1:%s\n' \
    "$pp" >"$T/py.yaml"
check_rc "a plan against the python grpcio server with --telemetry: the run succeeds" 0 \
    timeout 60 "$YB" run --plan "$T/py.yaml" -q --telemetry --telemetry-baseline 1s --json "$T/py.json"
like "... a plain note" "$(cat "$T/.out")" 'telemetry not supported by target'
is "... JSON: unsupported, the load's 20 requests ok" \
    "$(jget "$T/py.json" "[[d['supported'] for d in $D], r['summary']['requests_ok']]")" '[[false],20]'
peer_stop "$T/py"
done_testing
