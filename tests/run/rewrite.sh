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
is "rewrites with --plan: exit 2" "$?" 2
like "... says they do not apply" "$(cat "$T/bad.out")" "do not apply with --plan"
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
