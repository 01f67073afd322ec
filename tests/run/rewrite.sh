#!/bin/bash
# Rewrites at replay: captured corpora (captures/) replayed against other
# servers with --rewrite-path, --set-header, --drop-header, --rewrite-body
# and --map-authority.  nginx's access log shows what arrived (paths,
# Content-Type, Host); serve's datastore shows rewritten RESTCONF and gNMI
# bodies (gNMI edited in its text form).  Hostile rules exit 2 before any
# traffic, naming the option (or the record and the rule).
. "${YB_SRCDIR:-.}/tests/lib.sh"
. "$YB_SRCDIR/tests/peers/nginx.sh"

# yb NAME ARGS...: yangblast run with --json $T/NAME.json, output in
# $T/NAME.out, exit in $rc.
yb() {
    local n=$1
    shift
    timeout 60 "$YB" run -q --json "$T/$n.json" "$@" >"$T/$n.out" 2>&1
    rc=$?
}
# acl_names URL: the ACL set names in serve's datastore, sorted, comma-separated.
acl_names() {
    curl -s "$1/restconf/data/openconfig-acl:acl" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)["openconfig-acl:acl"]
print(",".join(sorted(s["name"] for s in d.get("acl-sets", {}).get("acl-set", []))))'
}

check "capture h1-keepalive.pcap" "$YB" capture -r "$YB_SRCDIR/captures/h1-keepalive.pcap" -o "$T/h1.ybc"
check "capture gnmi-h2c.pcap" "$YB" capture -r "$YB_SRCDIR/captures/gnmi-h2c.pcap" -o "$T/g.ybc"

# ---- nginx: what arrives ------------------------------------------------------
# The capture: PATCH /restconf/data/openconfig-acl:acl/acl-sets (A1),
# GET /restconf/data/openconfig-acl:acl?depth=2, GET /nothing/here; all
# recorded for 127.0.0.1:34653, with Accept and (for the PATCH) Content-Type.
port=$(free_port)
check "nginx starts" nginx_start "$T/ng" "$port"
stop_nginx() { nginx_stop "$T/ng"; }
at_exit stop_nginx
yb ng "$T/h1.ybc" --target "http://127.0.0.1:$port" --no-credentials \
    --rewrite-path /nothing/here=/restconf/data/moved \
    --rewrite-path /restconf/data/openconfig-acl:acl=/restconf/data/v2:acl \
    --rewrite-path /restconf=/never-used \
    --set-header 'Content-Type: application/yang-data+json; rewritten=1' \
    --drop-header accept \
    --map-authority 127.0.0.1:34653=sw2.lab:8443 \
    --rewrite-body 's/"name":"(A[0-9])"/"name":"\1_NEW"/g' \
    --max-errors 9
is "nginx: the run ends (exit 0)" "$rc" 0
is "nginx: 3 requests, all ok" "$(jget "$T/ng.json" '[r["summary"]["requests_ok"], r["status"]]')" \
    '[3,{"200":2,"204":1}]'
log=$(nginx_log "$T/ng")
is "nginx: the paths as rewritten (first matching prefix wins)" \
    "$(cut -f4,5 "$log" | tr '\t\n' ' |')" \
    'PATCH /restconf/data/v2:acl/acl-sets|GET /restconf/data/v2:acl?depth=2|GET /restconf/data/moved|'
is "nginx: Content-Type set on every request (replacing the recorded one)" \
    "$(cut -f9 "$log" | sort -u | tr '\n' '|')" 'application/yang-data+json; rewritten=1|'
is "nginx: Host is the mapped authority" "$(cut -f16 "$log" | sort -u)" 'sw2.lab:8443'
like "nginx: the unused rule is warned about, before the run" "$(cat "$T/ng.out")" \
    "warning: --rewrite-path '/restconf=/never-used' changes no record of"
yb ng0 "$T/h1.ybc" --target "http://127.0.0.1:$port" --no-credentials --max-errors 9
is "nginx: without rules, Host is the target's" "$(tail -3 "$log" | cut -f16 | sort -u)" "127.0.0.1:$port"
is "nginx: ... and the recorded paths" "$(tail -3 "$log" | cut -f5 | tr '\n' '|')" \
    '/restconf/data/openconfig-acl:acl/acl-sets|/restconf/data/openconfig-acl:acl?depth=2|/nothing/here|'

# ---- the rules as plan keys: each workload its own, over the defaults' ---------
# Two workloads replay the same capture at the same nginx concurrently; the
# log tells them apart by their rewritten paths.
cat >"$T/ng.plan.yaml" <<EOF
defaults:
  rewrite-path: /nothing/here=/restconf/data/moved-by-defaults
  targets: http://127.0.0.1:$port
workloads:
  - name: a
    corpus: h1.ybc
    rewrite-path: /restconf/data/openconfig-acl:acl=/restconf/data/plan-a:acl
    set-header: "Content-Type: application/yang-data+json; workload=a"
  - name: b
    corpus: h1.ybc
    rewrite-path:
      - /restconf/data/openconfig-acl:acl/acl-sets=/restconf/data/plan-b:acl/sets
      - /restconf/data/openconfig-acl:acl=/restconf/data/plan-b:acl
    drop-header: [content-type]
    map-authority: 127.0.0.1:34653=plan-b.lab:8443
EOF
n0=$(wc -l <"$log")
yb ngplan --plan "$T/ng.plan.yaml" --no-credentials --max-errors 9
is "plan: the run ends (exit 0), 6 requests ok" \
    "$rc $(jget "$T/ngplan.json" '[w["ok"] for w in r["workloads"]]')" '0 [3,3]'
is "plan: each workload's paths, Content-Type and Host as its own rules (and the defaults') say" \
    "$(tail -n +$((n0 + 1)) "$log" | cut -f4,5,9,16 | sed "s/127.0.0.1:$port/TARGET/" | LC_ALL=C sort | tr '\t\n' ' |')" \
"GET /restconf/data/moved-by-defaults - plan-b.lab:8443|\
GET /restconf/data/moved-by-defaults application/yang-data+json; workload=a TARGET|\
GET /restconf/data/plan-a:acl?depth=2 application/yang-data+json; workload=a TARGET|\
GET /restconf/data/plan-b:acl?depth=2 - plan-b.lab:8443|\
PATCH /restconf/data/plan-a:acl/acl-sets application/yang-data+json; workload=a TARGET|\
PATCH /restconf/data/plan-b:acl/sets - plan-b.lab:8443|"
nginx_stop "$T/ng"

# ---- serve: rewritten bodies reach the datastore -------------------------------
yb_serve "$T/s1.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 || exit 1
before=$(acl_names "$RURL")
yb rc "$T/h1.ybc" --target "$RURL" --no-credentials --max-errors 9 \
    --rewrite-body 's/"name":"(A[0-9])"/"name":"RW_RESTCONF_\1"/g'
is "serve, RESTCONF: exit 0" "$rc" 0
# gNMI: the Set replaces /acl/acl-sets/acl-set[type=ACL_IPV4][name=A3] with
# name A3; both the path element and the JSON value are rewritten.
yb g "$T/g.ybc" --target "$GURL" --no-credentials --rewrite-body 's/A3/RW_GNMI/g'
is "serve, gNMI: exit 0, 4 ok" "$rc $(jget "$T/g.json" 'r["summary"]["requests_ok"]')" "0 4"
after=$(acl_names "$RURL")
added=$(comm -13 <(tr ',' '\n' <<<"$before") <(tr ',' '\n' <<<"$after") | tr '\n' ',')
is "serve: the datastore holds the rewritten names, not the recorded ones" "$added" 'RW_GNMI,RW_RESTCONF_A1,'
# a mixed corpus routed to two targets (each target's workload gets the rules)
{ "$YB" corpus cat --with-header "$T/h1.ybc"; "$YB" corpus cat "$T/g.ybc"; } |
    /usr/bin/python3 -c '
import json, sys
for i, l in enumerate(sys.stdin):
    r = json.loads(l)
    if i == 0: # one header: both captures redactions
        r["yangblast_corpus"]["redactions"] += ["username", "password"]
    print(json.dumps(r))' >"$T/mixed.jsonl"
check "a mixed corpus" "$YB" corpus import "$T/mixed.jsonl" -o "$T/mixed.ybc"
yb mixed "$T/mixed.ybc" --target "$RURL" --target "$GURL" --no-credentials --max-errors 9 \
    --rewrite-body 's/A([0-9])/MIXED_\1/g'
is "serve, mixed corpus over two targets: exit 0" "$rc" 0
added=$(comm -13 <(tr ',' '\n' <<<"$after") <(acl_names "$RURL" | tr ',' '\n') | tr '\n' ',')
is "serve: both targets' records were rewritten" "$added" 'MIXED_1,MIXED_3,'
# a plan: a RESTCONF and a gNMI workload each rename with their own rule, a
# third replays the capture as recorded
after=$(acl_names "$RURL")
cat >"$T/sv.plan.yaml" <<EOF
workloads:
  - name: rc
    corpus: h1.ybc
    targets: $RURL
    rewrite-body: 's/"name":"(A[0-9])"/"name":"PLAN_RC_\\1"/g'
  - name: gnmi
    corpus: g.ybc
    targets: $GURL
    rewrite-body: [s/A3/PLAN_GNMI/g]
  - name: plain
    corpus: g.ybc
    targets: $GURL
    start: 500ms
EOF
yb svplan --plan "$T/sv.plan.yaml" --no-credentials --max-errors 9
is "serve, plan: exit 0; gNMI workloads all ok" \
    "$rc $(jget "$T/svplan.json" '[w["ok"] for w in r["workloads"]][1:]')" '0 [4,4]'
added=$(comm -13 <(tr ',' '\n' <<<"$after") <(acl_names "$RURL" | tr ',' '\n') | tr '\n' ',')
is "serve: each workload's records carried its own rules (the plain one: the recorded name)" \
    "$added" 'A3,PLAN_GNMI,PLAN_RC_A1,'
yb_serve_stop

# ---- hostile rules: exit 2 before any traffic, naming the option ---------------
bad() { # bad WHAT WANT ARGS...
    local what=$1 want=$2
    shift 2
    timeout 30 "$YB" run -q "$T/h1.ybc" --target http://127.0.0.1:9 --no-credentials "$@" \
        >"$T/bad.out" 2>&1
    is "$what: exit 2" "$?" 2
    like "$what: says why" "$(cat "$T/bad.out")" "$want"
}
bad "bad regex" "^yangblast run: --rewrite-body 's/\\(a/b/': bad regular expression" \
    --rewrite-body 's/(a/b/'
bad "empty FROM" "^yangblast run: --rewrite-path '=/b': expected FROM=TO" --rewrite-path =/b
bad "header with CR/LF" "': a header value may not hold CR or LF" \
    --set-header $'X-A: 1\r\nX-Evil: 2'
bad "a credential on the command line" "credentials never come from the command line" \
    --set-header 'Authorization: Basic eDp5'
bad "unknown flag" "flag 'q' unknown" --rewrite-body 's/a/b/q'
bad "-H Host with --map-authority" "give one" -H 'Host: x' --map-authority a=b
timeout 30 "$YB" run -q --plan "$T/none.yaml" --rewrite-path /a=/b >"$T/bad.out" 2>&1
is "a rewrite option with --plan: exit 2" "$?" 2
like "... says it is a workload key" "$(cat "$T/bad.out")" \
    "^yangblast run: --rewrite-path does not apply with --plan: it is a key of each workload"
# badplan WHAT MESSAGE-REGEX YAML: a plan's rule refused with file:line:key
P=$T/bad.plan.yaml
badplan() {
    printf '%s' "$3" >"$P"
    timeout 30 "$YB" run -q --plan "$P" --no-credentials >"$T/bad.out" 2>&1
    is "plan, $1: exit 2" "$?" 2
    like "plan, $1: names file, line and key" "$(head -1 "$T/bad.out")" "$2"
}
W=$'workloads:\n  - name: w1\n    corpus: h1.ybc\n    targets: http://127.0.0.1:9\n'
badplan "bad regex in a list" \
    "^yangblast run: $P:7: key 'rewrite-body' in workload 'w1': --rewrite-body 's/\\(a/b/': bad regular expression" \
    "$W"$'    rewrite-body:\n      - s/a/b/\n      - s/(a/b/\n'
badplan "a credential as a header" \
    "^yangblast run: $P:5: key 'set-header' in workload 'w1': --set-header 'Authorization: \\.\\.\\.': Authorization cannot be set" \
    "$W"$'    set-header: "Authorization: Bearer s3cr3t-t0ken"\n'
is "... without repeating its value" "$(grep -c s3cr3t "$T/bad.out")" 0
badplan "an empty list" "^yangblast run: $P:5: key 'drop-header' in workload 'w1': expected a value or a list" \
    "$W"$'    drop-header: []\n'
badplan "a mapping" "^yangblast run: $P:5: key 'set-header' in workload 'w1': expected a value" \
    "$W"$'    set-header: {X-A: 1}\n'
badplan "a defaults rule" "^yangblast run: $P:2: key 'map-authority' in defaults: --map-authority 'x': expected" \
    $'defaults:\n  map-authority: x\n'"$W"
badplan "a gNMI rewrite that breaks a record" \
    "^yangblast run: $P:2: workload 'w1': .*g.ybc: record 1: --rewrite-body 's/\"replace\"/\"replase\"/': the rewritten gNMI text does not encode" \
    $'workloads:\n  - name: w1\n    corpus: g.ybc\n    targets: grpc://127.0.0.1:9\n    rewrite-body: s/"replace"/"replase"/\n'
# a gNMI rewrite that breaks the message: found before the run, naming the record
timeout 30 "$YB" run -q "$T/g.ybc" --target grpc://127.0.0.1:9 --no-credentials \
    --rewrite-body 's/"replace"/"replase"/' >"$T/bad.out" 2>&1
is "gNMI text that no longer encodes: exit 2" "$?" 2
like "... naming the record and the rule" "$(cat "$T/bad.out")" \
    "g.ybc: record 1: --rewrite-body 's/\"replace\"/\"replase\"/': the rewritten gNMI text does not encode"
timeout 30 "$YB" run -q "$T/g.ybc" --target grpc://127.0.0.1:9 --no-credentials \
    --rewrite-body 's/^\[/{/' >"$T/bad.out" 2>&1
is "gNMI text that is no longer JSON: exit 2" "$?" 2
like "... says so" "$(cat "$T/bad.out")" "the rewritten gNMI text is not JSON"
is "--help lists the rewrite options" \
    "$("$YB" run --help | grep -cE '^  +--(rewrite-path|set-header|drop-header|rewrite-body|map-authority) ')" 5

done_testing
