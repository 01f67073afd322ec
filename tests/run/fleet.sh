#!/bin/bash
# Several targets in one run, checked on the servers' own statistics:
# --targets FILE --fan-out against `serve --devices 3` (each device counts
# exactly its share), a mixed RESTCONF + gNMI corpus routed to two --target
# URLs (each server sees exactly its protocol's records), and every
# inventory error refused with exit 2, naming file, line and key, before
# any traffic (the devices saw no connection at all).
. "$YB_SRCDIR/tests/lib.sh"

# dev NAME EXPR: EXPR over device d of NAME's statistics, for each device.
dev() { jget "$T/$1.stats.json" "[$2 for d in r['devices']]"; }
# sw2_concurrency IN OUT N: inventory IN with sw2 at concurrency N, as OUT.
sw2_concurrency() {
    /usr/bin/python3 - "$@" <<'EOF'
import sys
s = open(sys.argv[1]).read().replace("  - name: sw2\n", "  - name: sw2\n    concurrency: %s\n" % sys.argv[3])
open(sys.argv[2], "w").write(s)
EOF
}

"$YB" synth acl --proto restconf -n 10 -r 1 -o "$T/rc.ybc" >/dev/null &&
"$YB" synth acl --proto gnmi -n 7 -r 1 -o "$T/gn.ybc" >/dev/null &&
{ "$YB" corpus cat "$T/rc.ybc"; "$YB" corpus cat "$T/gn.ybc"; } >"$T/mixed.jsonl" &&
"$YB" corpus import "$T/mixed.jsonl" -o "$T/mixed.ybc" >/dev/null ||
    { echo "Bail out! corpora"; exit 1; }

# ---- inventory errors: exit 2, FILE:LINE: key, before any traffic --------------
serve_fleet bad || { echo "Bail out! serve --devices did not start"; exit 1; }
I=$T/bad.yaml
url() { /usr/bin/python3 -c "import re,sys; print(re.findall(r'$1: \"?([^\"\\n]+)', open(sys.argv[1]).read())[$2])" "$I"; }
R1=$(url restconf 0) G1=$(url gnmi 0) G2=$(url gnmi 1)
# refused DESC FILE MESSAGE [RUN ARGS...]: run --targets FILE exits 2 with
# exactly "yangblast run: MESSAGE".
refused() {
    local d=$1 f=$2 msg=$3; shift 3
    "$YB" run "${CORPUS:-$T/rc.ybc}" --targets "$f" --fan-out -q "$@" >"$T/out" 2>"$T/err"
    is "$d: exit 2" "$?" 2
    is "$d: the message" "$(head -1 "$T/err")" "yangblast run: $msg"
}
inv() { printf "$@" >"$T/e.yaml"; }
unset YB_FLEET_NOPE
inv 'targets:\n  - name: sw1\n    restconf: %s\n    colour: red\n' "$R1"
refused "unknown key" "$T/e.yaml" "$T/e.yaml:4: unknown key 'colour' in target 'sw1'"
inv 'defaults:\n  user: admin\n  password-env: YB_FLEET_NOPE\ntargets:\n  - name: sw1\n    restconf: %s\n' "$R1"
refused "missing secret (environment variable)" "$T/e.yaml" \
    "$T/e.yaml:3: key 'password-env' in defaults: environment variable 'YB_FLEET_NOPE' is not set"
inv 'targets:\n  - name: sw1\n    restconf: %s\n    user: admin\n    password-file: %s/nope\n' "$R1" "$T"
refused "missing secret (file)" "$T/e.yaml" \
    "$T/e.yaml:5: key 'password-file' in target 'sw1': cannot read '$T/nope': No such file or directory"
inv 'targets:\n  - name: sw1\n    restconf: %s\n    user: admin\n    password: LITERALPW\n' "$R1"
refused "literal password" "$T/e.yaml" \
    "$T/e.yaml:5: key 'password' in target 'sw1': a literal password is refused (it would sit in the file in clear); give password-env: VARIABLE or password-file: PATH"
is "the literal password is never repeated" "$(grep -c LITERALPW "$T/err")" 0
inv 'targets:\n  %s:\n    password: LITERALPW\n' "${G1#grpc://}"
refused "literal password (gnmic shape)" "$T/e.yaml" \
    "$T/e.yaml:3: key 'password' in target '${G1#grpc://}': a literal password is refused (it would sit in the file in clear); give password-env: VARIABLE or password-file: PATH"
inv 'targets:\n  - name: sw1\n    restconf: %s\n  - name: sw1\n    gnmi: %s\n' "$R1" "$G1"
refused "duplicate name" "$T/e.yaml" "$T/e.yaml:4: key 'name': duplicate target name 'sw1' (first at line 2)"
inv 'targets:\n  - name: sw1\n    restconf: htp://127.0.0.1:1\n'
refused "bad URL" "$T/e.yaml" \
    "$T/e.yaml:3: key 'restconf' in target 'sw1': bad URL 'htp://127.0.0.1:1': scheme must be http, https, grpc or grpcs"
inv 'targets:\n  - name: sw1\n    labels: {rack: r1}\n'
refused "target without a URL" "$T/e.yaml" \
    "$T/e.yaml:2: target 'sw1' has no URL: give restconf: URL and/or gnmi: URL"
inv 'targets:\n  - name: sw1\n    restconf: %s\n    concurrency: lots\n' "$R1"
refused "bad concurrency" "$T/e.yaml" \
    "$T/e.yaml:4: key 'concurrency' in target 'sw1': 'lots': expected an integer in 1..100000"
inv 'targets:\n  - name: sw1\n    restconf: %s\n    tls: {insecure: true}\n' "$R1"
refused "TLS settings for a plain target" "$T/e.yaml" \
    "$T/e.yaml:2: target 'sw1': has TLS settings, but the URL it is sent to is not TLS (https://, grpcs://)"
inv 'a: &x [1, 2]\nb: [*x, *x]\ntargets:\n  - name: sw1\n    restconf: %s\n' "$R1"
refused "YAML aliases" "$T/e.yaml" "$T/e.yaml:2: YAML aliases (*x) are not accepted in an inventory"
inv 'targets:\n  - name: sw1\n    restconf: %s\n  - name: sw2\n    restconf: %s\n' "$R1" "$R1"
CORPUS=$T/mixed.ybc refused "records without a target (sw1 has no gNMI URL)" "$T/e.yaml" \
    "$T/e.yaml:2: target 'sw1': has no gnmi: URL for the 7 HTTP/2 (gNMI) records of $T/mixed.ybc"
"$YB" run "$T/rc.ybc" --targets "$T/bad.yaml" -q >"$T/out" 2>"$T/err"
is "--targets without --fan-out: exit 2" "$?" 2
like "... says so" "$(head -1 "$T/err")" "needs --fan-out"
"$YB" run "$T/mixed.ybc" --target "$R1" -q >"$T/out" 2>"$T/err"
is "mixed corpus, one --target: exit 2" "$?" 2
like "... naming the protocols and their counts" "$(head -1 "$T/err")" 'mixes protocols.*restconf 10, gnmi 7 records.*second|--target'
"$YB" run "$T/rc.ybc" --target "$R1" --target "$G2" -q >"$T/out" 2>"$T/err"
is "a --target that would receive no record: exit 2" "$?" 2
inv 'targets:\n  - name: sw1\n    restconf: %s\n    gnmi: %s\n    rack: 1\n' "$R1" "$G1"
"$YB" experiment sessions --targets "$T/e.yaml" -n 10 -q >"$T/out" 2>"$T/err"
is "experiment --targets with an unknown key: exit 2" "$?" 2
is "... naming file, line and key" "$(head -1 "$T/err")" \
    "yangblast experiment: $T/e.yaml:5: unknown key 'rack' in target 'sw1'"
stop_fleet
is "no device saw a connection or a request" \
    "$(dev bad "d['connections']['restconf'] + d['connections']['gnmi'] + d['requests']['restconf']['total'] + d['requests']['gnmi']['total']")" \
    "[0,0,0]"

# ---- fan-out: every device gets the whole workload -----------------------------
serve_fleet fan || { echo "Bail out! serve --devices did not start"; exit 1; }
timeout 60 "$YB" run "$T/rc.ybc" --targets "$T/fan.yaml" --fan-out -n 12 -c 2 -t 2 -q \
    --json "$T/fan.json" >"$T/fan.txt" 2>&1
is "fan-out -n 12 to 3 devices: exit 0" "$?" 0
is "run: 36 requests, 36 ok" "$(jget "$T/fan.json" "[r['summary']['requests_completed'], r['summary']['requests_ok']]")" "[36,36]"
is "JSON targets: per target requests/ok/errors" \
    "$(jget "$T/fan.json" "[[t['name'], t['requests'], t['ok'], t['errors']] for t in r['targets']]")" \
    '[["sw1",12,12,0],["sw2",12,12,0],["sw3",12,12,0]]'
is "JSON targets: p50 <= p99, both > 0" \
    "$(jget "$T/fan.json" "all(0 < t['p50_ms'] <= t['p99_ms'] for t in r['targets'])")" true
like "text report: a line per target" "$(grep -c '^  sw[123] *12 *12 *0 ' "$T/fan.txt")" '^3$'
# per-target concurrency from the inventory: sw2 gets 4 slots (4 sessions)
sw2_concurrency "$T/fan.yaml" "$T/fan4.yaml" 4
timeout 60 "$YB" run "$T/gn.ybc" --targets "$T/fan4.yaml" --fan-out -n 20 -c 2 -q \
    --json "$T/fan4.json" >/dev/null 2>&1
is "gNMI fan-out, sw2 at concurrency 4: exit 0" "$?" 0
stop_fleet
is "each device counted exactly its share: 12 RESTCONF, 20 gNMI" \
    "$(dev fan "[d['requests']['restconf']['total'], d['requests']['gnmi']['total']]")" \
    "[[12,20],[12,20],[12,20]]"
is "sessions: -c 2 each, sw2 4 from the inventory (gNMI)" \
    "$(dev fan "d['connections']['gnmi']")" "[2,4,2]"

# ---- --split: the load model divided among the devices, exactly ----------------
serve_fleet split || { echo "Bail out! serve --devices did not start"; exit 1; }
timeout 60 "$YB" run "$T/rc.ybc" --targets "$T/split.yaml" --fan-out --split -n 20 -c 6 -q \
    --json "$T/split1.json" >"$T/split1.txt" 2>&1
is "--split -n 20 over 3 devices: exit 0" "$?" 0
is "JSON targets: 7 + 7 + 6 (the remainder spread one each)" \
    "$(jget "$T/split1.json" "[[t['name'], t['ok']] for t in r['targets']] + [r['summary']['requests_ok']]")" \
    '[["sw1",7],["sw2",7],["sw3",6],20]'
# open loop: -n 30 at 40/s in all, -c 6 in all; each device takes every
# third due time, so the last request is due at 29/40 s whatever the split
timeout 60 "$YB" run "$T/gn.ybc" --targets "$T/split.yaml" --fan-out --split -n 30 --rate 40 \
    -c 6 -q --json "$T/split2.json" >/dev/null 2>&1
is "--split --rate 40 -n 30 -c 6: exit 0" "$?" 0
is "... 10 requests per device" "$(jget "$T/split2.json" "[t['ok'] for t in r['targets']]")" '[10,10,10]'
is "... the rate divided, not each device at 40/s (the last one due at 0.725 s)" \
    "$(jget "$T/split2.json" "r['summary']['duration_s'] >= 0.725")" true
# no -n: one pass over the corpus divided (a mixed one: each kind by itself)
timeout 60 "$YB" run "$T/mixed.ybc" --targets "$T/split.yaml" --fan-out --split -q \
    --json "$T/split3.json" >/dev/null 2>&1
is "--split, mixed corpus, one pass: exit 0" "$?" 0
stop_fleet
is "server counts per device: RESTCONF 7+4, 7+3, 6+3; gNMI 10+3, 10+2, 10+2" \
    "$(dev split "[d['requests']['restconf']['total'], d['requests']['gnmi']['total']]")" \
    "[[11,13],[10,12],[9,12]]"
is "RESTCONF sessions: -c 6 divided (2 per device), then 1 per device by default" \
    "$(dev split "d['connections']['restconf']")" "[3,3,3]"
# refused before any traffic
"$YB" run "$T/rc.ybc" --target http://127.0.0.1:1 --split -q >"$T/out" 2>"$T/err"
is "--split without --fan-out: exit 2" "$?" 2
like "... says what it goes with" "$(head -1 "$T/err")" "--split goes with --targets FILE --fan-out"
"$YB" run "$T/rc.ybc" --targets "$T/split.yaml" --fan-out --split -c 2 -q >"$T/out" 2>"$T/err"
is "--split -c 2 over 3 targets: exit 2" "$?" 2
is "... naming the least -c" "$(head -1 "$T/err")" \
    "yangblast run: --split: -c 2 cannot be divided among 3 targets x -t 1 (at least one session each): give -c 3 or more"
"$YB" run "$T/gn.ybc" --targets "$T/split.yaml" --fan-out --split -t 3 -c 9 -q >"$T/out" 2>"$T/err"
is "--split, 7 records over 3 targets x 3 workers: exit 2" "$?" 2
like "... naming the records" "$(head -1 "$T/err")" "the 7 HTTP/2 \(gNMI\) records of .* cannot be divided among 3 targets x -t 3"
"$YB" run "$T/gn.ybc" --targets "$T/fan4.yaml" --fan-out --split -q >"$T/out" 2>"$T/err"
is "--split with a target's own concurrency: exit 2" "$?" 2
like "... naming file, line and target" "$(head -1 "$T/err")" "fan4.yaml:[0-9]+: target 'sw2' has its own concurrency: --split divides"

# ---- lanes: the targets share the worker threads, each on its own schedule -------
# Three targets on one thread (-t 1: one worker, a lane per target), open
# loop at 40/s each, then three targets on two threads with sw2 at 3
# sessions (split over both workers) in a closed loop.
serve_fleet lanes || { echo "Bail out! serve --devices did not start"; exit 1; }
timeout 60 "$YB" run "$T/gn.ybc" --targets "$T/lanes.yaml" --fan-out --rate 40 -n 9 -t 1 -q \
    --json "$T/lanes1.json" >/dev/null 2>&1
is "open loop, 3 targets on one worker: exit 0" "$?" 0
is "JSON targets: 9 ok each, on its own schedule" \
    "$(jget "$T/lanes1.json" "[[t['name'], t['started'], t['ok']] for t in r['targets']]")" \
    '[["sw1",9,9],["sw2",9,9],["sw3",9,9]]'
sw2_concurrency "$T/lanes.yaml" "$T/lanes3.yaml" 3
timeout 60 "$YB" run "$T/rc.ybc" --targets "$T/lanes3.yaml" --fan-out -n 13 -c 2 -t 2 -q \
    --json "$T/lanes2.json" >/dev/null 2>&1
is "closed loop, 3 targets on two workers: exit 0" "$?" 0
is "JSON targets: 13 ok each" \
    "$(jget "$T/lanes2.json" "[[t['name'], t['ok']] for t in r['targets']]")" \
    '[["sw1",13],["sw2",13],["sw3",13]]'
stop_fleet
is "each device counted exactly its requests (gNMI 9, RESTCONF 13)" \
    "$(dev lanes "[d['requests']['gnmi']['total'], d['requests']['restconf']['total']]")" \
    "[[9,13],[9,13],[9,13]]"
is "sessions: one per target (gNMI); 2, 3, 2 (RESTCONF)" \
    "$(dev lanes "[d['connections']['gnmi'], d['connections']['restconf']]")" "[[1,2],[1,3],[1,2]]"

# ---- 50 devices (TLS, gNMI) on two threads: one session each, exact counts -------
# bench/fleet.sh's correctness part: 50 targets share 2 worker threads (25
# lanes each); every device must see exactly its requests on one session.
"$YB" serve --devices 50 --restconf off --gnmi 127.0.0.1:0 --self-signed \
    --write-cert "$T/f50.pem" --write-inventory "$T/f50.yaml" --stats "$T/f50.stats.json" \
    >"$T/f50.out" 2>&1 &
FPID=$!
for i in $(seq 100); do grep -q 'devices ready' "$T/f50.out" && break; sleep 0.1; done
timeout 120 "$YB" run "$T/gn.ybc" --targets "$T/f50.yaml" --fan-out -n 4 -c 1 -t 2 -q \
    --json "$T/f50.json" >/dev/null 2>&1
is "50 TLS gNMI targets on 2 threads: exit 0" "$?" 0
is "JSON: 200 ok, each target 4 ok on 1 session" \
    "$(jget "$T/f50.json" "[r['summary']['requests_ok'], sorted(set((t['ok'], t['sessions_opened']) for t in r['targets']))]")" \
    "[200,[[4,1]]]"
stop_fleet
is "every device counted exactly 4 gNMI requests on 1 connection" \
    "$(jget "$T/f50.stats.json" "sorted(set((d['requests']['gnmi']['total'], d['connections']['gnmi']) for d in r['devices'])) + [len(r['devices'])]")" \
    "[[4,1],50]"

# ---- timeouts among many lanes on one thread ------------------------------------
# The worker's tick looks only at the lanes whose time has come (their
# earliest timeout, deadline, back-off): 12 devices that answer after 2 s
# and a 13th target that never sends SETTINGS (h2bad.py silent), one
# thread, --timeout 1s: every request to a device times out waiting for
# its answer (2 each, one after the other on its session), the silent
# target's set-up times out twice, none before 1 s, and the run ends.
. "$YB_SRCDIR/tests/peers/peer.sh"
DEVICES=12 serve_fleet slow --service-time fixed:2s || { echo "Bail out! serve --devices did not start"; exit 1; }
if peer_start "$T/mute" h2bad.py --mode silent --max-seconds 60; then
    { cat "$T/slow.yaml"; printf '  - name: mute\n    gnmi: "grpc://127.0.0.1:%s"\n' "$(peer_port "$T/mute")"; } \
        >"$T/slow2.yaml"
    timeout 60 "$YB" run "$T/gn.ybc" --targets "$T/slow2.yaml" --fan-out -n 2 -c 1 -t 1 --timeout 1s \
        -q --json "$T/slow.json" >/dev/null 2>&1
    is "13 targets on 1 thread, every request timed out: exit 1" "$?" 1
    is "JSON: 26 requests, 0 ok; 24 timeouts, 2 connect timeouts; 2 errors per target" \
        "$(jget "$T/slow.json" "[r['summary']['requests_completed'], r['summary']['requests_ok'], r['errors']['timeout'], r['errors']['connect_timeout'], sorted(set(t['errors'] for t in r['targets'])), len(r['targets'])]")" \
        "[26,0,24,2,[2],13]"
    is "no request failed before its 1 s" \
        "$(jget "$T/slow.json" "min(e['first_s'] for e in r['errors']['reasons']) >= 1.0")" "true"
    peer_stop "$T/mute"
else
    not_ok "timeouts among many lanes: h2bad.py did not start"
fi
stop_fleet

# ---- routing: a mixed corpus to two --target URLs, and fanned out ---------------
serve_fleet mix || { echo "Bail out! serve --devices did not start"; exit 1; }
I=$T/mix.yaml
R1=$(url restconf 0) G2=$(url gnmi 1)
timeout 60 "$YB" run "$T/mixed.ybc" --target "$R1" --target "$G2" -q --json "$T/route.json" >/dev/null 2>&1
is "mixed corpus, --target RESTCONF --target gNMI: exit 0" "$?" 0
is "JSON targets: 10 to the RESTCONF URL, 7 to the gNMI URL" \
    "$(jget "$T/route.json" "[[t['url'], t['ok']] for t in r['targets']]")" "[[\"$R1\",10],[\"$G2\",7]]"
timeout 60 "$YB" run "$T/mixed.ybc" --targets "$T/mix.yaml" --fan-out -q --json "$T/mixfan.json" >/dev/null 2>&1
is "mixed corpus fanned out: exit 0" "$?" 0
is "JSON targets: each device's RESTCONF and gNMI workloads" \
    "$(jget "$T/mixfan.json" "[[t['name'], t['ok']] for t in r['targets']]")" \
    '[["sw1/restconf",10],["sw1/gnmi",7],["sw2/restconf",10],["sw2/gnmi",7],["sw3/restconf",10],["sw3/gnmi",7]]'
stop_fleet
is "each device saw exactly its protocol's records (RESTCONF, gNMI)" \
    "$(dev mix "[d['requests']['restconf']['total'], d['requests']['gnmi']['total']]")" \
    "[[20,7],[10,14],[10,7]]"

# ---- --route authority: each record to the target its recorded authority names --
serve_fleet auth || { echo "Bail out! serve --devices did not start"; exit 1; }
I=$T/auth.yaml
R1=$(url restconf 0)
# the mixed corpus with recorded authorities: sw1's RESTCONF URL address,
# sw2's host-only alias (https: port 443), sw3's alias with a port; gNMI
# records to sw1 by name (any case) and to sw3 by its other alias
/usr/bin/python3 - "$T/mixed.jsonl" "$T/auth.jsonl" "${R1#http://}" <<'EOF2'
import json, sys
out = open(sys.argv[2], "w")
rc = gn = 0
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["protocol"] == "restconf":
        r["authority"], r["scheme"] = ((sys.argv[3], "http") if rc < 4 else
                                       ("SW2.lab", "https") if rc < 7 else ("10.0.0.3:443", "https"))
        rc += 1
    else:
        r["authority"] = "Sw1" if gn < 2 else "10.0.0.3:8080"
        gn += 1
    out.write(json.dumps(r) + "\n")
EOF2
"$YB" corpus import "$T/auth.jsonl" -o "$T/auth.ybc" >/dev/null || { echo "Bail out! import"; exit 1; }
/usr/bin/python3 - "$I" "$T/auth2.yaml" <<'EOF2'
import sys
s = open(sys.argv[1]).read()
s = s.replace("  - name: sw2\n", "  - name: sw2\n    aliases: [sw2.lab]\n")
s = s.replace("  - name: sw3\n", "  - name: sw3\n    aliases: [\"10.0.0.3:443\", \"10.0.0.3:8080\"]\n")
open(sys.argv[2], "w").write(s)
EOF2
timeout 60 "$YB" run "$T/auth.ybc" --targets "$T/auth2.yaml" --route authority -c 2 -q \
    --json "$T/auth.json" >/dev/null 2>&1
is "--route authority, mixed corpus: exit 0" "$?" 0
is "JSON targets: the records of each authority on its target" \
    "$(jget "$T/auth.json" "[[t['name'], t['ok']] for t in r['targets']]")" \
    '[["sw1/restconf",4],["sw1/gnmi",2],["sw2/restconf",3],["sw3/restconf",3],["sw3/gnmi",5]]'
# refused before any traffic: records with no target, named with their counts
"$YB" run "$T/auth.ybc" --targets "$I" --route authority -q >"$T/out" 2>"$T/err"
is "records whose authority names no target: exit 2" "$?" 2
is "... naming how many, which authorities and protocols" "$(head -1 "$T/err")" \
    "yangblast run: --route authority: 11 records of $T/auth.ybc have no target in $I: 'SW2.lab' HTTP/1.1 (RESTCONF) 3; '10.0.0.3:443' HTTP/1.1 (RESTCONF) 3; '10.0.0.3:8080' HTTP/2 (gNMI) 5 (give the target an alias with the recorded host[:port])"
/usr/bin/python3 - "$T/auth2.yaml" "$T/auth3.yaml" <<'EOF2'
import re, sys
s = open(sys.argv[1]).read()
open(sys.argv[2], "w").write(re.sub(r"\n    gnmi: [^\n]*", "", s, count=1)) # sw1's
EOF2
"$YB" run "$T/auth.ybc" --targets "$T/auth3.yaml" --route authority -q >"$T/out" 2>"$T/err"
is "a target named without a URL for the record's protocol: exit 2" "$?" 2
like "... naming the target and the URL it lacks" "$(head -1 "$T/err")" \
    "2 records of .* have no target .*: 'Sw1' HTTP/2 \(gNMI\) 2 \(target 'sw1', which has no gnmi: URL\)"
/usr/bin/python3 - "$T/auth2.yaml" "$T/auth4.yaml" <<'EOF2'
import re, sys
s = open(sys.argv[1]).read()
sw3 = re.findall(r'restconf: "http://([^"]+)"', s)[2]
s = s.replace("aliases: [sw2.lab]", "aliases: [sw2.lab, \"%s\"]" % sw3)
open(sys.argv[2], "w").write(s)
EOF2
"$YB" run "$T/auth.ybc" --targets "$T/auth4.yaml" --route authority -q >"$T/out" 2>"$T/err"
is "an alias that is another target's URL address: exit 2" "$?" 2
like "... naming both" "$(head -1 "$T/err")" \
    "auth4.yaml:[0-9]+: target 'sw3': '127.0.0.1:[0-9]+' also names target 'sw2' \\(line [0-9]+\\)"
head -3 "$T/auth.jsonl" | /usr/bin/python3 -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l); r["authority"] = ""; print(json.dumps(r))' >"$T/noauth.jsonl"
"$YB" corpus import "$T/noauth.jsonl" -o "$T/noauth.ybc" >/dev/null
"$YB" run "$T/noauth.ybc" --targets "$T/auth2.yaml" --route authority -q >"$T/out" 2>"$T/err"
is "records without an authority: exit 2, named as such" "$? $(head -1 "$T/err")" \
    "2 yangblast run: --route authority: 3 records of $T/noauth.ybc have no target in $T/auth2.yaml: '(none)' HTTP/1.1 (RESTCONF) 3 (give the target an alias with the recorded host[:port])"
"$YB" run "$T/auth.ybc" --targets "$T/auth2.yaml" --route authority --fan-out -q >"$T/out" 2>"$T/err"
is "--route authority with --fan-out: exit 2" "$?" 2
"$YB" run "$T/auth.ybc" --target "$R1" --route authority -q >"$T/out" 2>"$T/err"
is "--route authority without --targets: exit 2" "$?" 2
"$YB" run "$T/auth.ybc" --targets "$T/auth2.yaml" --route host -q >"$T/out" 2>"$T/err"
is "--route host: exit 2" "$?" 2
is "... saying what it takes" "$(head -1 "$T/err")" "yangblast run: --route 'host': expected 'authority'"
stop_fleet
is "server counts: each device exactly the records its authorities name (RESTCONF, gNMI)" \
    "$(dev auth "[d['requests']['restconf']['total'], d['requests']['gnmi']['total']]")" \
    "[[4,2],[3,0],[3,5]]"

# ---- a mixed capture (captures/) replayed with routing -------------------------
# four captures of a controller: RESTCONF to 127.0.0.1:34653 and to "sw1",
# gNMI to 127.0.0.1:46615 and 127.0.0.1:40135
C=$YB_SRCDIR/captures
"$YB" capture -q -r "$C/h1-keepalive.pcap" -r "$C/gnmi-h2c.pcap" -r "$C/gnmi-interleaved.pcap" \
    -r "$C/h1-pipelined.pcap" -o "$T/cap.ybc" || { echo "Bail out! capture"; exit 1; }
serve_fleet cap || { echo "Bail out! serve --devices did not start"; exit 1; }
I=$T/cap.yaml
timeout 60 "$YB" run "$T/cap.ybc" --target "$(url restconf 1)" --target "$(url gnmi 2)" \
    --no-credentials --accept 404 -q --json "$T/cap1.json" >/dev/null 2>&1
is "capture, routed by protocol (--target URL --target URL): exit 0" "$?" 0
/usr/bin/python3 - "$I" "$T/cap2.yaml" <<'EOF2'
import sys
s = open(sys.argv[1]).read()
s = s.replace("  - name: sw1\n", "  - name: sw1\n    aliases: [\"127.0.0.1:34653\", \"127.0.0.1:46615\"]\n")
s = s.replace("  - name: sw3\n", "  - name: sw3\n    aliases: [\"127.0.0.1:40135\"]\n")
open(sys.argv[2], "w").write(s)
EOF2
timeout 60 "$YB" run "$T/cap.ybc" --targets "$T/cap2.yaml" --route authority --no-credentials \
    --accept 404 -q --json "$T/cap2.json" >/dev/null 2>&1
is "capture, routed by authority: exit 0" "$?" 0
is "JSON targets: sw1 its 6 RESTCONF and 4 gNMI records, sw3 its 16 (sw2: none, not contacted)" \
    "$(jget "$T/cap2.json" "[[t['name'], t['ok']] for t in r['targets']]")" \
    '[["sw1/restconf",6],["sw1/gnmi",4],["sw3/gnmi",16]]'
stop_fleet
is "server counts: by protocol 6 RESTCONF to sw2, 20 gNMI to sw3; then by authority" \
    "$(dev cap "[d['requests']['restconf']['total'], d['requests']['gnmi']['total'], d['connections']['restconf'] + d['connections']['gnmi']]")" \
    "[[6,4,2],[6,0,1],[0,36,2]]"

# ---- TLS and credentials by reference, from the inventory serve wrote ----------
export YANGBLAST_SERVE_PASSWORD=fleet-secret
serve_fleet tls --self-signed --write-cert "$T/ca.pem" --auth admin ||
    { echo "Bail out! serve --devices --self-signed did not start"; exit 1; }
(unset YANGBLAST_PASSWORD; "$YB" run "$T/mixed.ybc" --targets "$T/tls.yaml" --fan-out -q \
    >"$T/out" 2>"$T/err")
is "password-env not set: exit 2" "$?" 2
like "... naming file, line and key" "$(head -1 "$T/err")" "tls.yaml:4: key 'password-env' in defaults: environment variable 'YANGBLAST_PASSWORD' is not set"
YANGBLAST_PASSWORD=wrong timeout 60 "$YB" run "$T/rc.ybc" --targets "$T/tls.yaml" --fan-out -n 2 \
    -q --json "$T/tlsbad.json" >/dev/null 2>&1
is "a wrong password: every request fails (exit 1)" "$?" 1
YANGBLAST_PASSWORD=fleet-secret timeout 60 "$YB" run "$T/mixed.ybc" --targets "$T/tls.yaml" \
    --fan-out -q --json "$T/tls.json" >/dev/null 2>&1
is "TLS fleet with credentials by reference: exit 0" "$?" 0
stop_fleet
is "each device: 2 refused (wrong password), then its 10 RESTCONF and 7 gNMI records over TLS" \
    "$(dev tls "[d['requests']['restconf']['total'], d['requests']['gnmi']['total'], d['auth_failures']]")" \
    "[[12,7,2],[12,7,2],[12,7,2]]"

# ---- tls server-name: SNI and the name verified, per target --------------------
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -keyout "$T/sw1.key" -out "$T/sw1.pem" -subj /CN=sw1.lab \
    -addext "subjectAltName=DNS:sw1.lab" >/dev/null 2>&1 || { echo "Bail out! openssl"; exit 1; }
serve_fleet sni --tls-cert "$T/sw1.pem" --tls-key "$T/sw1.key" ||
    { echo "Bail out! serve --devices --tls-cert did not start"; exit 1; }
I=$T/sni.yaml
printf 'targets:\n  - name: sw1\n    restconf: %s\n    tls: {ca: %s, server-name: sw1.lab}\n  - name: sw2\n    restconf: %s\n    tls: {ca: %s}\n' \
    "$(url restconf 0)" "$T/sw1.pem" "$(url restconf 1)" "$T/sw1.pem" >"$T/sni2.yaml"
timeout 60 "$YB" run "$T/rc.ybc" --targets "$T/sni2.yaml" --fan-out -q >/dev/null 2>&1
is "server-name sw1.lab verifies sw1; sw2 (verified as 127.0.0.1) fails: exit 1" "$?" 1
stop_fleet
is "... sw1 got its 10 requests over TLS, the others none" \
    "$(dev sni "d['requests']['restconf']['total']")" "[10,0,0]"
printf 'targets:\n  - name: sw1\n    restconf: http://127.0.0.1:1\n    tls: {server-name: sw1.lab}\n' >"$T/e.yaml"
refused "server-name with a plain URL" "$T/e.yaml" \
    "$T/e.yaml:2: target 'sw1': has TLS settings, but the URL it is sent to is not TLS (https://, grpcs://)"
printf 'targets:\n  - name: sw1\n    restconf: https://127.0.0.1:1\n    tls: {server-name: "a b"}\n' >"$T/e.yaml"
refused "server-name that is not a host name" "$T/e.yaml" \
    "$T/e.yaml:4: key 'server-name' in target 'sw1': expected a host name (at most 255 bytes, no spaces, '/', ':', '@' or brackets)"

# ---- experiment sessions --targets: the study per device -------------------------
DEVICES=2 serve_fleet exp || { echo "Bail out! serve --devices did not start"; exit 1; }
timeout 180 "$YB" experiment sessions --targets "$T/exp.yaml" -n 10 -q --json "$T/exp.json" \
    >"$T/exp.txt" 2>&1
is "experiment --targets with 2 devices: exit 0" "$?" 0
is "JSON: the study's runs for each device in turn (device, target, policy, ok)" \
    "$(jget "$T/exp.json" "[[x['run']['device'], x['run']['target'].split(':')[0], x['run']['sessions'], x['summary']['requests_ok']] for x in r['runs']]")" \
    '[["sw1","http","reuse",10],["sw1","http","per-request",10],["sw1","grpc","reuse",10],["sw1","grpc","per-request",10],["sw2","http","reuse",10],["sw2","http","per-request",10],["sw2","grpc","reuse",10],["sw2","grpc","per-request",10]]'
is "JSON: each run's target is its own device's URL" \
    "$(jget "$T/exp.json" "[x['run']['target'] for x in r['runs']][0::2]")" \
    "$(I=$T/exp.yaml; printf '["%s","%s","%s","%s"]' "$(url restconf 0)" "$(url gnmi 0)" "$(url restconf 1)" "$(url gnmi 1)")"
is "text: the study's tables per device" \
    "$(grep -cE '^(sw1|sw2): (RESTCONF|gNMI), (single persistent session|new session per request)' "$T/exp.txt")" 8
is "text: the headline per device and protocol" \
    "$(grep -cE '^(sw1|sw2) (RESTCONF|gNMI): one persistent session is' "$T/exp.txt")" 4
/usr/bin/python3 - "$T/exp.yaml" "$T/one.yaml" <<'EOF'
import sys
s = open(sys.argv[1]).read().split("  - name: ")
open(sys.argv[2], "w").write(s[0] + "  - name: " + s[2])
EOF
timeout 120 "$YB" experiment sessions --targets "$T/one.yaml" -n 10 -q --json "$T/exp1.json" >/dev/null 2>&1
is "experiment --targets, an inventory of one (sw2): exit 0" "$?" 0
stop_fleet
is "server counts: sw1 studied once, sw2 twice: 2 policies x 10 requests per protocol each time" \
    "$(dev exp "[d['requests']['restconf']['total'], d['requests']['gnmi']['total']]")" \
    "[[20,20],[40,40]]"
is "... one session for reuse and one per request, per protocol" \
    "$(dev exp "[d['connections']['restconf'], d['connections']['gnmi']]")" "[[11,11],[22,22]]"
done_testing
