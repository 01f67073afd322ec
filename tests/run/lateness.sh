#!/bin/bash
# Send lateness split into its two causes, and the self-check's verdict.
# 1. --rate 400 -c 1 against a 3 ms target (one worker: ~330/s at most):
#    requests wait for the one session; the report says the target or the
#    concurrency is the limit and never blames the generator for that wait.
# 2. A rate no generator keeps up with, and an original timing with every
#    request due at once: the sessions still come up at once.
# 3. A generator sharing its CPU with two busy loops is starved: the
#    self-check says other processes took its CPU (run-queue wait from
#    /proc/thread-self/schedstat, involuntary context switches, steal), not
#    merely what its own CPU share was.
. "$YB_SRCDIR/tests/lib.sh"
PY=/usr/bin/python3
"$YB" synth acl --proto restconf -n 40 -r 2 --name-prefix LT_R -o "$T/r.ybc" >/dev/null
j() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

yb_serve "$T/slow.serve" --restconf 127.0.0.1:0 --gnmi off --service-time fixed:3ms --workers 1 ||
    { echo "Bail out! serve did not start"; exit 1; }
timeout 60 "$YB" run "$T/r.ybc" --target "$RURL" --rate 400 -c 1 -D 3s -q --json "$T/t.json" \
    >"$T/t.out" 2>&1
check "rate 400 -c 1: report written" test -s "$T/t.json"
diag "$(j "$T/t.json" "d['self_check']")"
is "rate 400 -c 1 against 3 ms: the target / concurrency is the limit" \
    "$(j "$T/t.json" "d['self_check']['target_limited']")" True
like "the text says so" "$(cat "$T/t.out")" 'the target or the chosen concurrency is the limit'
is "both parts of lateness are in the JSON, each counting every sent request" \
    "$(j "$T/t.json" "(d['latency_us']['generator_lateness']['count'] == d['latency_us']['session_wait']['count'] == d['summary']['requests_started'])")" True
is "the wait, not the generator, made the lateness (wait p99 > 10 x generator p99)" \
    "$(j "$T/t.json" "d['latency_us']['session_wait']['p99'] > 10 * d['latency_us']['generator_lateness']['p99']")" True
# The generator is blamed only for its own lateness, and then "add
# threads" only when it was busy and nothing else took its CPU.  (Its own
# lateness can pass 1 ms here: this VM's timer wake-ups are that late at
# times, whatever the client; it is then said to have woken late.)
is "the generator used little of its CPU (not saturated)" \
    "$(j "$T/t.json" "d['self_check']['cpu_saturated']")" False
check "no 'Add threads' advice" sh -c "! grep -q 'Add threads\|add threads' '$T/t.out'"
like "the table shows the generator's part under lateness" "$(cat "$T/t.out")" '^ gen late +[0-9]+ '
like "... and the wait for a session" "$(cat "$T/t.out")" '^ wait +[0-9]+ '
yb_serve_stop

# 2. A rate no generator keeps up with (10,000,000/s): each wake-up issues
#    for one batch window at most and goes back to the loop, so the
#    sessions come up at once.  (Before, the lane issued until the run's
#    last request before the loop saw a connection: connect took 13-15 %
#    of the run, 27-40 ms, and only the backlog was ever sent.)
yb_serve "$T/sink.serve" --sink --restconf 127.0.0.1:0 --gnmi off ||
    { echo "Bail out! serve did not start"; exit 1; }
timeout 60 "$YB" run "$T/r.ybc" --target "$RURL" --rate 10000000 -c 4 -n 60000 -q \
    --json "$T/f.json" >"$T/f.out" 2>&1
check "rate 10,000,000/s: report written" test -s "$T/f.json"
diag "connect max $(j "$T/f.json" "d['latency_us']['connect']['max']") us of a \
$(j "$T/f.json" "d['summary']['duration_s']") s run"
is "the sessions came up within 5 % of the run (the loop ran while the lane issued)" \
    "$(j "$T/f.json" "d['latency_us']['connect']['max'] < 0.05 * d['summary']['duration_s'] * 1e6")" True
is "every request accounted for: started + backlog overflow = 60000" \
    "$(j "$T/f.json" "d['summary']['requests_started'] + d['errors'].get('backlog_overflow', 0)")" 60000
# ... and --timing original with every record due at once (synth's records
# all say t=0): before, connect took 390 ms, 61 % of the run
"$YB" synth acl --proto restconf -n 60000 -r 1 --name-prefix LT_O -o "$T/o.ybc" >/dev/null
timeout 60 "$YB" run "$T/o.ybc" --target "$RURL" --timing original -c 4 -q --json "$T/o.json" \
    >"$T/o.out" 2>&1
check "--timing original, 60000 due at once: report written" test -s "$T/o.json"
is "the sessions came up within 5 % of the run" \
    "$(j "$T/o.json" "d['latency_us']['connect']['max'] < 0.05 * d['summary']['duration_s'] * 1e6")" True
is "every request accounted for: started + backlog overflow = 60000" \
    "$(j "$T/o.json" "d['summary']['requests_started'] + d['errors'].get('backlog_overflow', 0)")" 60000
yb_serve_stop

if [ ! -r /proc/thread-self/schedstat ] || ! command -v taskset >/dev/null; then
    ok "# SKIP no /proc/thread-self/schedstat or taskset"
    done_testing
    exit
fi
yb_serve "$T/fast.serve" --restconf 127.0.0.1:0 --gnmi off ||
    { echo "Bail out! serve did not start"; exit 1; }
HOGS=""
stop_hogs() { for p in $HOGS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; HOGS=""; }
at_exit stop_hogs
cpu=$(taskset -pc $$ | sed 's/.*: //; s/[,-].*//')
for i in 1 2; do
    taskset -c "$cpu" sh -c 'while :; do :; done' &
    HOGS="$HOGS $!"
done
timeout 60 taskset -c "$cpu" "$YB" run "$T/r.ybc" --target "$RURL" --rate 200 -c 2 -D 2s -q \
    --json "$T/s.json" >"$T/s.out" 2>&1
stop_hogs
diag "$(j "$T/s.json" "d['self_check']")"
is "sharing its CPU with two busy loops: the generator is starved" \
    "$(j "$T/s.json" "d['self_check']['cpu_starved']")" True
is "... though its own CPU share was small (not saturated)" \
    "$(j "$T/s.json" "d['self_check']['cpu_saturated']")" False
like "the text names other processes, not the generator's own CPU" "$(cat "$T/s.out")" \
    'other processes or the hypervisor'
check "no 'Add threads' advice for a starved generator" sh -c "! grep -q 'Add threads' '$T/s.out'"
done_testing
