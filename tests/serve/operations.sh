#!/bin/bash
# The report's per-operation breakdown: RESTCONF method + path template and
# gNMI RPC (Set split by kind), counted against `yangblast serve`; the
# rows sum to the totals; --max-operations groups the rest as `other`.
. "${YB_SRCDIR:-.}/tests/serve/common.sh"
SETS='/restconf/data/openconfig-acl:acl/acl-sets'

# A RESTCONF corpus of 5 PATCH, 3 GET, 2 DELETE, concatenated by import.
"$YB" synth acl -n 5 --rules 1 -o "$T/patch.ybc" &&
    "$YB" synth acl -n 3 --op get -o "$T/get.ybc" &&
    "$YB" synth acl -n 2 --op delete -o "$T/del.ybc" &&
    { "$YB" corpus cat "$T/patch.ybc"; "$YB" corpus cat "$T/get.ybc"; "$YB" corpus cat "$T/del.ybc"; } |
    "$YB" corpus import -o "$T/mix.ybc"
is "mixed RESTCONF corpus built" "$?" 0

# gNMI: 3 Sets carrying only updates, 1 Set with an update and a delete, 2 Gets.
cat >"$T/upd.json" <<'JEOF'
{"updates": [{"path": "/openconfig-acl:acl/acl-sets/acl-set[name=S1][type=ACL_IPV4]",
              "value": {"openconfig-acl:acl-set": [{"name": "S1", "type": "openconfig-acl:ACL_IPV4",
                        "config": {"name": "S1", "type": "openconfig-acl:ACL_IPV4"}}]}}]}
JEOF
cat >"$T/both.json" <<'JEOF'
{"updates": [{"path": "/openconfig-acl:acl/acl-sets/acl-set[name=S2][type=ACL_IPV4]",
              "value": {"openconfig-acl:acl-set": [{"name": "S2", "type": "openconfig-acl:ACL_IPV4",
                        "config": {"name": "S2", "type": "openconfig-acl:ACL_IPV4"}}]}}],
 "deletes": ["/openconfig-acl:acl/acl-sets/acl-set[name=S9][type=ACL_IPV4]"]}
JEOF
"$YB" synth gnmi --set-request "$T/upd.json" --count 3 -o "$T/upd.ybc" &&
    "$YB" synth gnmi --set-request "$T/both.json" -o "$T/both.ybc" &&
    "$YB" synth acl -p gnmi --op get -n 2 -o "$T/gget.ybc" &&
    { "$YB" corpus cat "$T/upd.ybc"; "$YB" corpus cat "$T/both.ybc"; "$YB" corpus cat "$T/gget.ybc"; } |
    "$YB" corpus import -o "$T/gmix.ybc"
is "mixed gNMI corpus built" "$?" 0

# ops FILE: "requests/ok/errors operation" per row, then "sum=S completed=C ok=O/O"
ops() {
    $PY - "$1" <<'PYEOF' 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
ops = r["operations"]
for o in ops:
    print("%d/%d/%d %s" % (o["requests"], o["ok"], o["errors"], o["operation"]))
s = r["summary"]
print("sum=%d completed=%d ok=%d/%d" % (sum(o["requests"] for o in ops), s["requests_completed"],
      sum(o["ok"] for o in ops), s["requests_ok"]))
PYEOF
}

if start_serve; then
    # -t 1: one worker issues them in corpus order (PATCH before GET before DELETE)
    timeout 60 "$YB" run "$T/mix.ybc" --target "http://127.0.0.1:$RP" -q --json "$T/r.json" >"$T/r.out" 2>&1
    is "RESTCONF: templates, counts, rows sum to the totals" "$(ops "$T/r.json")" \
"5/5/0 PATCH $SETS
3/3/0 GET $SETS/acl-set={1},{2}
2/2/0 DELETE $SETS/acl-set={1},{2}
sum=10 completed=10 ok=10/10"
    like "text report: the Operations table" "$(grep -A5 '^Operations' "$T/r.out" | tr '\n' '|')" \
"^Operations .*[|] +requests +ok +errors +p50 ms +p99 ms +max ms +operation[|] +5 +5 +0 +[0-9.]+ +[0-9.]+ +[0-9.]+  PATCH $SETS[|] +3 +3 +0 +[0-9. ]+  GET $SETS/acl-set=\{1\},\{2\}[|] +2 +2 +0 +[0-9. ]+  DELETE $SETS/acl-set=\{1\},\{2\}[|]Generator CPU"
    is "latency of a row: p50 <= p99 <= max, all > 0" "$(jget "$T/r.json" \
        'all(0 < o["p50_ms"] <= o["p99_ms"] <= o["max_ms"] for o in r["operations"])')" true

    # two workers each count their share; the merge adds them by name
    timeout 60 "$YB" run "$T/mix.ybc" --target "http://127.0.0.1:$RP" -t 2 -c 2 -n 40 -q \
        --json "$T/r2.json" >/dev/null 2>&1
    is "-t 2 -n 40: three rows, 20+12+8, sum 40" "$(jget "$T/r2.json" \
        '[(o["operation"].split()[0], o["requests"]) for o in r["operations"]] + [sum(o["requests"] for o in r["operations"])]')" \
        '[["PATCH",20],["GET",12],["DELETE",8],40]'

    timeout 60 "$YB" run "$T/mix.ybc" --target "http://127.0.0.1:$RP" -q --max-operations 1 \
        --json "$T/r1.json" >"$T/r1.out" 2>&1
    is "--max-operations 1: the first operation, the rest as other" "$(ops "$T/r1.json")" \
"5/5/0 PATCH $SETS
5/5/0 other
sum=10 completed=10 ok=10/10"
    like "text: other says why" "$(cat "$T/r1.out")" 'other: the operations beyond the first 1 distinct'

    # the Gets read what the PATCHes create
    timeout 60 "$YB" run "$T/patch.ybc" --target "http://127.0.0.1:$RP" -q >/dev/null 2>&1
    timeout 60 "$YB" run "$T/gmix.ybc" --target "grpc://127.0.0.1:$GP" -q --json "$T/g.json" >/dev/null 2>&1
    is "gNMI: Set.update, Set (mixed kinds), Get" "$(ops "$T/g.json")" \
"3/3/0 Set.update
2/2/0 Get
1/1/0 Set
sum=6 completed=6 ok=6/6"
    stop_serve
else
    not_ok "serve starts"
fi

check_rc "--max-operations 0: exit 2" 2 "$YB" run "$T/mix.ybc" --target http://127.0.0.1:1 --max-operations 0
check_rc "--max-operations 4097: exit 2" 2 "$YB" run "$T/mix.ybc" --target http://127.0.0.1:1 --max-operations 4097
done_testing
