#!/bin/bash
# experiment sweep against yangblast serve with a known capacity: 8 workers
# of 100 ms serve at most 80 requests/s.  The knee (the most throughput
# meeting the SLO) lands within 10 % of it, for a concurrency sweep and for
# an open-loop rate sweep; the bad step says why; bad levels are refused.
. "${YB_SRCDIR:-.}/tests/lib.sh"
GC="$YB_SRCDIR/corpus/gnmi-acl-1000.ybc"
WORKERS=8 SERVICE_MS=100
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

check_rc "concurrency sweep runs" 0 "$YB" experiment sweep "$GC" --target "$GURL" -c 4,8,16 \
    --step 2s --warmup 1s --slo 'e2e.p99<2s' --bisect 2 -q --json "$T/c.json"
cp "$T/.out" "$T/c.txt"
is "concurrency: knee within 10% of $CAP/s" "$(within10 "$T/c.json")" 1
[ "$(within10 "$T/c.json")" = 1 ] || diag "$(cat "$T/c.txt")"
like "concurrency: the knee in one line" "$(cat "$T/c.txt")" '^Knee: [0-9.]+ requests/s at [0-9]+ sessions \(p99 [0-9.]+ ms'
is "concurrency: 16 sessions bring no more throughput" \
   "$(jget "$T/c.json" "[s['why'].startswith('throughput stopped growing') for s in r['sweep']['steps'] if s['level'] == 16]")" '[true]'
is "concurrency: a bisection step between 8 and 16" \
   "$(jget "$T/c.json" "[8 < s['level'] < 16 for s in r['sweep']['steps'] if s['bisection']][:1]")" '[true]'
is "concurrency: every step has its percentiles" \
   "$(jget "$T/c.json" "all(s['p50_us'] > 0 and s['p99_us'] >= s['p50_us'] and s['p999_us'] >= s['p99_us'] for s in r['sweep']['steps'])")" true

check_rc "rate sweep runs" 0 "$YB" experiment sweep "$GC" --target "$GURL" --rate 40..120/+40 -c 16 \
    --step 2s --warmup 1s --slo 'e2e.p99<1s' --slo 'errors<1%' --bisect 2 -q --json "$T/r.json"
cp "$T/.out" "$T/r.txt"
is "rate: knee within 10% of $CAP/s" "$(within10 "$T/r.json")" 1
[ "$(within10 "$T/r.json")" = 1 ] || diag "$(cat "$T/r.txt")"
is "rate: 120/s is past the capacity (a bad step)" \
   "$(jget "$T/r.json" "[s['pass'] for s in r['sweep']['steps'] if s['level'] == 120]")" '[false]'
is "rate: 40/s achieved as offered" \
   "$(jget "$T/r.json" "[int(abs(s['achieved_per_s'] - 40) <= 4) for s in r['sweep']['steps'] if s['level'] == 40]")" '[1]'
done_testing
