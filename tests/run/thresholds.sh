#!/bin/bash
# run --threshold / --abort-on-fail against a real `yangblast serve` with a
# known service time: each threshold's measured value is the report's own
# figure, a failed one exits 1, bad expressions are refused (exit 2) before
# any connection, and --abort-on-fail stops a 30 s run early and says which
# threshold did.  Every run is bounded by `timeout 90`.
. "${YB_SRCDIR:-.}/tests/lib.sh"

RC_CORPUS=$YB_SRCDIR/corpus/restconf-acl-1000.ybc

# yb NAME ARGS...: yangblast run, text in $T/NAME.out, JSON in $T/NAME.json, exit in $rc.
yb() {
    local n=$1
    shift
    timeout 90 "$YB" run -q --json "$T/$n.json" "$@" >"$T/$n.out" 2>&1
    rc=$?
}

# ---- a 2 ms server ---------------------------------------------------------------
yb_serve "$T/serve.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --service-time fixed:2ms ||
    { echo "Bail out! serve did not start"; exit 1; }

yb tight "$RC_CORPUS" --target "$RURL" -n 100 -c 2 --threshold 'e2e.p99<1ms'
is "e2e.p99<1ms against a 2 ms server: exit 1" "$rc" 1
is "JSON: the failed threshold, its metric, limit in us, pass false" \
    "$(jget "$T/tight.json" '[(t["expr"], t["metric"], t["op"], t["limit"], t["unit"], t["pass"], t["scope"]) for t in r["thresholds"]]')" \
    '[["e2e.p99<1ms","e2e.p99","<",1000.0,"us",false,null]]'
is "JSON: measured is the report's own e2e p99 (and at least the service time)" \
    "$(jget "$T/tight.json" '[r["thresholds"][0]["measured"] == r["latency_us"]["e2e"]["p99"], r["thresholds"][0]["measured"] >= 2000]')" \
    '[true,true]'
p99ms=$(jget "$T/tight.json" '"%.3f" % (r["latency_us"]["e2e"]["p99"] / 1000.0)')
like "text: FAIL with the measured value" "$(cat "$T/tight.out")" \
    "^  FAIL  e2e\\.p99<1ms +measured $p99ms ms\$"
is "not stopped early without --abort-on-fail" "$(jget "$T/tight.json" 'r["stopped_by_threshold"]')" null

yb loose "$RC_CORPUS" --target "$RURL" -n 100 -c 2 --threshold 'e2e.p99<10s' \
    --threshold 'rate>=1/s' --threshold 'requests>=100' --threshold 'errors<=0' \
    --threshold "target=$RURL:ttfb.p99.9<10s"
is "e2e.p99<10s, rate, requests, errors, a scoped ttfb: exit 0" "$rc" 0
is "all pass; rate is summary.rate_per_s; the scope is the target" \
    "$(jget "$T/loose.json" '[[t["pass"] for t in r["thresholds"]], r["thresholds"][1]["measured"] == r["summary"]["rate_per_s"], r["thresholds"][1]["unit"], r["thresholds"][4]["scope"]]')" \
    "[[true,true,true,true,true],true,\"per_s\",{\"kind\":\"target\",\"name\":\"$RURL\"}]"
like "text: a pass line per threshold" "$(cat "$T/loose.out")" '^  pass  rate>=1/s +measured [0-9.]+/s$'

yb nodata "$RC_CORPUS" --target "$RURL" -n 20 --threshold 'tls.p50<5ms'
is "tls.p50 against a target without TLS: nothing to measure fails (exit 1)" "$rc" 1
is "JSON: measured null, the note says why" \
    "$(jget "$T/nodata.json" '[r["thresholds"][0]["measured"], r["thresholds"][0]["note"].startswith("no data"), r["thresholds"][0]["pass"]]')" \
    '[null,true,false]'

# --abort-on-fail: a 30 s run stops within seconds, and says why
yb abort "$RC_CORPUS" --target "$RURL" -D 30s -c 2 --threshold 'e2e.p99<1ms' --abort-on-fail
is "--abort-on-fail: exit 1 (not 4: no signal)" "$rc" 1
is "JSON: stopped_by_threshold names it, not interrupted" \
    "$(jget "$T/abort.json" '[r["stopped_by_threshold"]["expr"], r["stopped_by_threshold"]["metric"], r["interrupted"], r["thresholds"][0]["stopped_run"]]')" \
    '["e2e.p99<1ms","e2e.p99",false,true]'
is "the run stopped after a few seconds of 30 (report duration, loose bound)" \
    "$(jget "$T/abort.json" '[r["summary"]["duration_s"] < 15, r["stopped_by_threshold"]["t_s"] <= 10, r["stopped_by_threshold"]["measured"] >= 1000]')" \
    '[true,true,true]'
like "text: STOPPED EARLY names the threshold" "$(cat "$T/abort.out")" \
    "^STOPPED EARLY by --abort-on-fail: 'e2e\\.p99<1ms' failed on the first [0-9]+ s"
yb noabort "$RC_CORPUS" --target "$RURL" -D 2s -c 2 --threshold 'e2e.p99<10s' --abort-on-fail
is "--abort-on-fail with a passing threshold: the run goes its 2 s, exit 0" \
    "$rc/$(jget "$T/noabort.json" '[r["stopped_by_threshold"], r["summary"]["duration_s"] >= 2]')" '0/[null,true]'
yb_serve_stop

# ---- errors<1% against a server failing half its requests --------------------------
yb_serve "$T/serve2.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --fault status:500@0.5 ||
    { echo "Bail out! serve did not start"; exit 1; }
yb faults "$RC_CORPUS" --target "$RURL" -n 200 -c 2 --max-errors 1000 --threshold 'errors<1%' \
    --threshold 'errors.status<=1000'
is "errors<1% with half the requests failing: exit 1 (--max-errors allows them)" "$rc" 1
is "errors: the percentage of completed, the class count passes" \
    "$(jget "$T/faults.json" '[r["thresholds"][0]["pass"], r["thresholds"][0]["unit"], abs(r["thresholds"][0]["measured"] - 100.0 * r["summary"]["requests_error"] / r["summary"]["requests_completed"]) < 1e-9, 20 < r["thresholds"][0]["measured"] < 80, r["thresholds"][1]["measured"] == r["errors"]["status"], r["thresholds"][1]["pass"]]')" \
    '[false,"percent",true,true,true,true]'
yb_serve_stop

# ---- bad expressions: exit 2 before any traffic -------------------------------------
yb_serve "$T/serve3.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --stats "$T/bad.stats" ||
    { echo "Bail out! serve did not start"; exit 1; }
bad() {
    local want=$1
    shift
    timeout 30 "$YB" run -q "$RC_CORPUS" --target "$RURL" -n 5 "$@" >"$T/bad.out" 2>&1
    local got=$?
    is "refused: $* -> exit 2" "$got" 2
    like "... the message names it: $want" "$(cat "$T/bad.out")" "$want"
}
bad "--threshold 'e2e.p99<50': e2e.p99 takes a duration with its unit" --threshold 'e2e.p99<50'
bad "--threshold 'e2e.p99': no comparison" --threshold 'e2e.p99'
bad "--threshold 'latency<5ms': unknown metric 'latency'.*A threshold is " --threshold 'latency<5ms'
bad "--threshold 'e2e.p101<5ms': unknown metric" --threshold 'e2e.p101<5ms'
bad "--threshold 'errors<x%': errors takes a percentage" --threshold 'errors<x%'
bad "--threshold 'errors<150%'" --threshold 'errors<150%'
bad "--threshold 'rate>=fast': rate takes" --threshold 'rate>=fast'
bad "scope 'host=sw1': expected target=NAME" --threshold 'host=sw1:e2e.p99<5ms'
bad "--threshold 'target=sw1:e2e.p99<5ms': no target 'sw1' in this run \\(its targets: '$RURL'\\)" \
    --threshold 'target=sw1:e2e.p99<5ms'
bad "no workload 'w1': this run has no per-workload figures" --threshold 'workload=w1:e2e.p99<5ms'
bad "--abort-on-fail goes with --threshold" --abort-on-fail
bad "--abort-on-fail: none of the thresholds can be checked before the end" --abort-on-fail \
    --threshold 'tls.p50<5ms' --threshold 'errors>=1' --threshold "target=$RURL:e2e.p99<1s"
bad "--threshold 'e2e.p99<1ms<2ms': expected one value" --threshold 'e2e.p99<1s' \
    --threshold 'e2e.p99<1ms<2ms'
yb_serve_stop
is "the server saw no connection from the refused runs" \
    "$(jget "$T/bad.stats" 'sum(r["connections"].values())')" 0

# ---- experiment: each run of the study judged on its own -----------------------------
yb_serve "$T/serve4.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 ||
    { echo "Bail out! serve did not start"; exit 1; }
timeout 90 "$YB" experiment sessions -q --restconf "$RURL" -n 20 --threshold 'e2e.p99<10s' \
    --threshold 'e2e.p50<1us' --json "$T/exp.json" >"$T/exp.out" 2>&1
is "experiment with a threshold no run meets: exit 1 (after the whole study)" "$?" 1
is "experiment JSON: both runs carry both verdicts" \
    "$(jget "$T/exp.json" '[[t["pass"] for t in x["thresholds"]] for x in r["runs"]]')" \
    '[[true,false],[true,false]]'
like "experiment text: a block per run" "$(cat "$T/exp.out")" \
    '^Thresholds, RESTCONF, new session per request, 20 requests:$'
yb_serve_stop

# ---- scopes in a run of several targets (--targets --fan-out) ------------------------
"$YB" serve --devices 2 --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 \
    --write-inventory "$T/inv.yaml" >"$T/fleet.out" 2>&1 &
FPID=$!
stop_fleet() { kill "$FPID" 2>/dev/null; wait "$FPID" 2>/dev/null; FPID=; }
at_exit stop_fleet
for i in $(seq 100); do grep -q 'devices ready' "$T/fleet.out" && break; sleep 0.1; done
yb fleet "$RC_CORPUS" --targets "$T/inv.yaml" --fan-out -n 10 --threshold 'target=sw1:requests>=10' \
    --threshold 'target=sw2:requests<=10' --threshold 'requests>=20'
is "fan-out to 2 devices, thresholds scoped by inventory name: exit 0" "$rc" 0
is "each scope measures its own target (10 each), the whole run 20" \
    "$(jget "$T/fleet.json" '[(t["scope"]["name"] if t["scope"] else None, t["measured"], t["pass"]) for t in r["thresholds"]]')" \
    '[["sw1",10.0,true],["sw2",10.0,true],[null,20.0,true]]'
timeout 30 "$YB" run -q "$RC_CORPUS" --targets "$T/inv.yaml" --fan-out -n 10 \
    --threshold 'target=sw9:e2e.p99<1s' >"$T/fleet9.out" 2>&1
is "an unknown target in a fleet: exit 2" "$?" 2
like "... naming the run's targets" "$(cat "$T/fleet9.out")" \
    "no target 'sw9' in this run \\(its targets: 'sw1', 'http://127\\.0\\.0\\.1:[0-9]+', 'sw2', "
stop_fleet

done_testing
