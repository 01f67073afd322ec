#!/bin/bash
# run --telemetry: device telemetry on its own session against yangblast
# serve (gNMI STREAM SAMPLE and RESTCONF GET polling): a series entry for
# every second from the baseline to after the load, serve's modelled busy
# figure saturated by a load past its one worker (and the sentence saying
# so), serve's own process with its real pid, --telemetry-path leaves; the
# python grpcio server, which has no system paths, gives a note, not a
# failed run.
. "${YB_SRCDIR:-.}/tests/lib.sh"
. "$YB_SRCDIR/tests/peers/peer.sh"
GC="$YB_SRCDIR/corpus/gnmi-acl-1000.ybc"
RC="$YB_SRCDIR/corpus/restconf-acl-1000.ybc"

check_rc "--telemetry-interval without --telemetry: usage error" 2 \
    "$YB" run "$GC" --target grpc://127.0.0.1:1 --telemetry-interval 2s
check_rc "--telemetry-path that is not a path: usage error" 2 \
    "$YB" run "$GC" --target grpc://127.0.0.1:1 --telemetry --telemetry-path '/a[b'

check "serve starts" yb_serve "$T/serve.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 \
    --workers 1 --service-time fixed:100ms
check_rc "gNMI run with --telemetry" 0 "$YB" run "$GC" --target "$GURL" -c 8 -D 3s -q \
    --telemetry --telemetry-baseline 3s --telemetry-path /system/memory/state/free \
    --json "$T/g.json" --html "$T/g.html"
cp "$T/.out" "$T/g.txt"
J="r['telemetry']['devices'][0]"
is "gNMI: supported, over gnmi" "$(jget "$T/g.json" "[$J['supported'], $J['protocol']]")" '[true,"gnmi"]'
# (1 worker of 100 ms and 8 calls in flight: the queue never empties, even
# when this machine is slow to send the next request)
# every second from -2 to the last second of the load, CPU and memory each
is "a series entry for every second, baseline to tail" \
   "$(jget "$T/g.json" "(lambda s: s[0]['t_s'] <= -2 and s[-1]['t_s'] >= 3 and [e['t_s'] for e in s] == list(range(s[0]['t_s'], s[-1]['t_s'] + 1)) and all(e['cpu_pct'] is not None and e['mem_used_bytes'] for e in s))($J['series'])")" true
is "the load's seconds carry its requests" \
   "$(jget "$T/g.json" "all(e.get('requests', 0) > 0 for e in $J['series'] if 0 <= e['t_s'] < 2)")" true
is "modelled busy under load: max >= 95%, mean >= 60% (1 worker, 8 in flight)" \
   "$(jget "$T/g.json" "[p['cpu_pct_max'] >= 95 and p['cpu_pct_mean'] >= 60 for p in $J['top_processes'] if p['name'] == 'serve-model-busy']")" '[true]'
is "serve's own process with its pid" \
   "$(jget "$T/g.json" "[p['name'] for p in $J['top_processes'] if p['pid'] == $SPID]")" '["yangblast"]'
# (second -2, not the baseline's first seconds: the subscription itself
# takes serve's one modelled worker when it opens, with the session's
# set-up cost, and each figure looks a second back)
is "baseline: modelled busy idle before the load" \
   "$(jget "$T/g.json" "[e['top_process']['cpu_pct'] < 50 or e['top_process']['name'] != 'serve-model-busy' for e in $J['series'] if e['t_s'] == -2 and 'top_process' in e]")" '[true]'
like "the saturation sentence names the modelled process" "$(jget "$T/g.json" "$J['saturation']")" \
     '^The device saturates: process serve-model-busy \(pid 0\) at >= 95% of a core in [0-9]+ of [0-9]+ s under load'
like "text: the sentence" "$(cat "$T/g.txt")" 'The device saturates: process serve-model-busy'
like "text: baseline vs under load" "$(cat "$T/g.txt")" 'CPU %: baseline mean [0-9.]+ max [0-9.]+; under load mean'
like "--html: the device's CPU per second" "$(cat "$T/g.html")" 'data-kind="telemetry-cpu"'
like "--html: the saturation sentence" "$(cat "$T/g.html")" 'The device saturates: process serve-model-busy'
is "--telemetry-path: its leaf, baseline and load" \
   "$(jget "$T/g.json" "[(x['path'], x['baseline_mean'] > 0, x['load_mean'] > 0) for x in $J['extra']]")" \
   '[["/system/memory/state/free",true,true]]'
is "telemetry's own cost: one Subscribe, notifications counted" \
   "$(jget "$T/g.json" "[r['telemetry']['cost']['requests'], r['telemetry']['cost']['notifications'] >= 5]")" '[1,true]'
is "the load never saw the telemetry session" "$(jget "$T/g.json" "[r['summary']['requests_completed'] == r['summary']['requests_ok'], r['sessions']['opened']]")" '[true,8]'

check_rc "RESTCONF run with --telemetry (GET polling)" 0 "$YB" run "$RC" --target "$RURL" -c 2 -D 2s -q \
    --telemetry --telemetry-baseline 1s --telemetry-interval 500ms --json "$T/r.json"
is "RESTCONF: supported, polled" "$(jget "$T/r.json" "[$J['supported'], $J['protocol']]")" '[true,"restconf"]'
is "RESTCONF: every second has CPU and memory" \
   "$(jget "$T/r.json" "(lambda s: s[0]['t_s'] <= -1 and [e['t_s'] for e in s] == list(range(s[0]['t_s'], s[-1]['t_s'] + 1)) and all(e['cpu_pct'] is not None and e['mem_used_bytes'] for e in s))($J['series'])")" true
is "RESTCONF: three GETs per interval" \
   "$(jget "$T/r.json" "r['telemetry']['cost']['requests'] >= 3 * 6 and r['telemetry']['cost']['requests'] % 3 in (0, 1, 2)")" true
yb_serve_stop

peer_start "$T/py" gnmi_server.py --max-seconds 60 || not_ok "python gnmi server starts"
pp=$(peer_port "$T/py")
check_rc "python grpcio target: the run still succeeds" 0 "$YB" run "$GC" --target "grpc://127.0.0.1:$pp" \
    -n 20 -q --telemetry --telemetry-baseline 1s --json "$T/p.json"
like "python grpcio target: a plain note" "$(cat "$T/.out")" 'telemetry not supported by target'
is "python grpcio target: JSON says unsupported" "$(jget "$T/p.json" "$J['supported']")" false
like "python grpcio target: JSON note" "$(jget "$T/p.json" "$J['note']")" '^telemetry not supported by target'
peer_stop "$T/py"
done_testing
