#!/bin/bash
# experiment sweep against yangblast serve with a known capacity: 4 workers
# of 200 ms serve at most 20 requests/s.  The knee (the most throughput
# meeting the SLO) lands within 10 % of it, for a concurrency sweep and for
# an open-loop rate sweep; the bad step says why; bad levels are refused.
# The requests are gNMI Capabilities: next to nothing for either side's
# CPU, so that the modelled workers are the limit even on a busy machine.
. "${YB_SRCDIR:-.}/tests/lib.sh"
GC="$T/caps.ybc"
"$YB" synth acl -p gnmi --op capabilities -n 4 -o "$GC" || exit 1
WORKERS=4 SERVICE_MS=200
CAP=$((WORKERS * 1000 / SERVICE_MS))   # requests/s the model can serve

check_rc "no levels: usage error" 2 "$YB" experiment sweep "$GC" --target grpc://127.0.0.1:1
check_rc "-c LIST with --rate: usage error (-c is then the sessions)" 2 "$YB" experiment sweep "$GC" --target grpc://127.0.0.1:1 -c 1,2 --rate 10,20
check_rc "descending levels: usage error" 2 "$YB" experiment sweep "$GC" --target grpc://127.0.0.1:1 -c 4,2
check_rc "a scoped SLO: usage error" 2 "$YB" experiment sweep "$GC" --target grpc://127.0.0.1:1 -c 1,2 --slo 'target=x:e2e.p99<1s'
check_rc "a bad SLO: usage error" 2 "$YB" experiment sweep "$GC" --target grpc://127.0.0.1:1 -c 1,2 --slo 'e2e.p99<'
check_rc "-D is the sweep's own (--step): refused" 2 "$YB" experiment sweep "$GC" --target grpc://127.0.0.1:1 -c 1,2 -D 5s

check "serve starts" yb_serve "$T/serve.out" --restconf off --gnmi 127.0.0.1:0 \
    --workers $WORKERS --service-time fixed:${SERVICE_MS}ms

# within10 JSON: 1 when the knee is within 10 % of the model's capacity
within10() { jget "$1" "int(abs(r['sweep']['knee']['achieved_per_s'] - $CAP) <= 0.1 * $CAP)"; }

check_rc "concurrency sweep runs" 0 "$YB" experiment sweep "$GC" --target "$GURL" -c 2,4,8 \
    --step 3s --warmup 1s --slo 'e2e.p99<2s' --bisect 2 -q --json "$T/c.json" --html "$T/c.html"
cp "$T/.out" "$T/c.txt"
is "concurrency: knee within 10% of $CAP/s" "$(within10 "$T/c.json")" 1
[ "$(within10 "$T/c.json")" = 1 ] || diag "$(cat "$T/c.txt")"
like "concurrency: the knee in one line" "$(cat "$T/c.txt")" '^Knee: [0-9.]+ requests/s at [0-9]+ sessions \(p99 [0-9.]+ ms'
is "concurrency: 8 sessions bring no more throughput" \
   "$(jget "$T/c.json" "[s['why'].startswith('throughput stopped growing') for s in r['sweep']['steps'] if s['level'] == 8]")" '[true]'
is "concurrency: a bisection step between 4 and 8" \
   "$(jget "$T/c.json" "[4 < s['level'] < 8 for s in r['sweep']['steps'] if s['bisection']][:1]")" '[true]'
is "concurrency: every step has its percentiles" \
   "$(jget "$T/c.json" "all(s['p50_us'] > 0 and s['p99_us'] >= s['p50_us'] and s['p999_us'] >= s['p99_us'] for s in r['sweep']['steps'])")" true

check_rc "rate sweep runs" 0 "$YB" experiment sweep "$GC" --target "$GURL" --rate 10..30/+10 -c 8 \
    --step 3s --warmup 1s --slo 'e2e.p99<1s' --slo 'errors<1%' --bisect 2 -q --json "$T/r.json" \
    --telemetry --telemetry-baseline 1s
cp "$T/.out" "$T/r.txt"
is "rate: knee within 10% of $CAP/s" "$(within10 "$T/r.json")" 1
[ "$(within10 "$T/r.json")" = 1 ] || diag "$(cat "$T/r.txt")"
is "rate: 30/s is past the capacity (a bad step)" \
   "$(jget "$T/r.json" "[s['pass'] for s in r['sweep']['steps'] if s['level'] == 30]")" '[false]'
is "rate: 10/s achieved as offered" \
   "$(jget "$T/r.json" "[int(abs(s['achieved_per_s'] - 10) <= 1) for s in r['sweep']['steps'] if s['level'] == 10]")" '[1]'
like "--html: the throughput-latency curve" "$(cat "$T/c.html")" 'data-kind="sweep-curve"'
like "--html: the knee" "$(cat "$T/c.html")" 'Knee: [0-9.]+ requests/s at [0-9]+ sessions'
check "yangblast report renders a sweep's JSON" "$YB" report "$T/r.json" -o "$T/r.html"
like "... with its curve" "$(cat "$T/r.html")" 'data-kind="sweep-curve"'
is "rate with --telemetry: the device's CPU for every step" \
   "$(jget "$T/r.json" "all(isinstance(s['device_cpu_pct'], float) for s in r['sweep']['steps'])")" true
done_testing
