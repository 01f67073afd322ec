#!/bin/bash
# Accepted outcomes against yangblast serve: --accept / --accept-grpc turn
# the listed statuses into successes (counted ok, in the success latency,
# still counted under their status), --expect original checks replies
# against the statuses recorded in the corpus and counts a mismatch as an
# 'unexpected' error with its reason; bad values exit 2 before any traffic.
. "${YB_SRCDIR:-.}/tests/lib.sh"

# yb NAME ARGS...: yangblast run with --json $T/NAME.json, text in
# $T/NAME.out, exit in $rc.
yb() {
    local n=$1
    shift
    timeout 60 "$YB" run -q --json "$T/$n.json" "$@" >"$T/$n.out" 2>&1
    rc=$?
}
# summary NAME: [ok, errors by class (non-zero), http status, grpc status, e2e count]
summary() {
    jget "$T/$1.json" '[r["summary"]["requests_ok"], {c: n for c, n in r["errors"].items() if c != "reasons" and n}, r["status"], r["grpc_status"], r["latency_us"]["e2e"]["count"]]'
}
reasons() {
    jget "$T/$1.json" 'sorted([e["class"], e["reason"], e["count"]] for e in r["errors"]["reasons"])'
}

"$YB" synth acl --method POST --count 10 --scheme http -o "$T/post.ybc" >/dev/null 2>&1 ||
    { not_ok "synth acl --method POST"; done_testing; exit 1; }

# ---- RESTCONF: a create succeeds once, then 409 -----------------------------
yb_serve "$T/s1.out" --restconf 127.0.0.1:0 --gnmi off || exit 1
yb plain "$T/post.ybc" --target "$RURL" -n 30
is "POST x10 then run -n 30: exit 1" "$rc" 1
is "... 10 ok, 20 status errors (http 409)" "$(summary plain)" \
    '[10,{"status":20},{"201":10,"409":20},{},10]'
yb_serve_stop

yb_serve "$T/s2.out" --restconf 127.0.0.1:0 --gnmi off || exit 1
yb acc "$T/post.ybc" --target "$RURL" -n 30 --accept 404,409
is "--accept 404,409: exit 0" "$rc" 0
is "--accept: 30 ok, no errors, statuses still 201x10 409x20, all 30 in the success latency" \
    "$(summary acc)" '[30,{},{"201":10,"409":20},{},30]'
is "--accept: the JSON states the rule" "$(jget "$T/acc.json" 'r["run"]["accept"]')" \
    '{"expect":"status","grpc":[],"http":[404,409]}'
like "--accept: the text states the rule" "$(cat "$T/acc.out")" \
    '^Success: HTTP below 400 and 404, 409; gRPC OK$'
yb plain2 "$T/post.ybc" --target "$RURL" -n 5
is "without --accept the text has no Success line" "$(grep -c '^Success:' "$T/plain2.out")" 0
is "... and the JSON the default rule" "$(jget "$T/plain2.json" 'r["run"]["accept"]')" \
    '{"expect":"status","grpc":[],"http":[]}'

# ---- --expect original: recorded statuses from JSON lines ---------------------
# The server holds YB_ACL_000001..10 now.  Records: 000001 GET expecting
# 200 (match), 000002 GET expecting 404 (mismatch: it exists), 000099 GET
# expecting 404 (match: a recorded 4xx is a success), 000098 GET with no
# recorded status (404: a status error as without --expect).
"$YB" synth acl --op get --count 2 --scheme http -o "$T/get.ybc" >/dev/null 2>&1
"$YB" corpus cat "$T/get.ybc" | /usr/bin/python3 -c '
import json, sys
recs = [json.loads(l) for l in sys.stdin]
a, b = recs
a["expected_status"] = 200
b["expected_status"] = 404
c = dict(b, path=b["path"].replace("YB_ACL_000002", "YB_ACL_000099"), conn_order=2)
d = dict(b, path=b["path"].replace("YB_ACL_000002", "YB_ACL_000098"), conn_order=3)
del d["expected_status"]
for r in (a, b, c, d):
    print(json.dumps(r))
' >"$T/get.jsonl"
check "corpus import of JSON lines with expected statuses" \
    "$YB" corpus import "$T/get.jsonl" -o "$T/exp.ybc"
yb orig "$T/exp.ybc" --target "$RURL" --expect original
is "--expect original: exit 1" "$rc" 1
is "--expect original: 2 ok, 1 unexpected, 1 status" "$(summary orig)" \
    '[2,{"status":1,"unexpected":1},{"200":2,"404":2},{},2]'
is "--expect original: the reasons" "$(reasons orig)" \
    '[["status","http 404",1],["unexpected","expected 404, got 200",1]]'
like "--expect original: the text counts the class" "$(cat "$T/orig.out")" '^Errors: .*unexpected 1'
yb orig_acc "$T/exp.ybc" --target "$RURL" --expect original --accept 200,404
is "--expect original --accept 200,404: an accepted status passes too" "$(summary orig_acc)" \
    '[4,{},{"200":2,"404":2},{},4]'
yb norig "$T/exp.ybc" --target "$RURL"
is "without --expect: recorded statuses are not consulted (404s are status errors)" \
    "$(summary norig)" '[2,{"status":2},{"200":2,"404":2},{},2]'
yb_serve_stop

# ---- gNMI: a Set the server fails with ALREADY_EXISTS --------------------------
"$YB" synth acl --proto gnmi --count 5 -o "$T/g.ybc" >/dev/null 2>&1
yb_serve "$T/s3.out" --restconf off --gnmi 127.0.0.1:0 --fault status:6 || exit 1
yb g "$T/g.ybc" --target "$GURL"
is "gNMI, every Set fails with 6: exit 1" "$rc" 1
is "... 5 status errors" "$(summary g)" '[0,{"status":5},{"200":5},{"6":5},0]'
yb gacc "$T/g.ybc" --target "$GURL" --accept-grpc 6,9
is "--accept-grpc 6,9: exit 0" "$rc" 0
is "--accept-grpc: 5 ok, still counted under gRPC 6" "$(summary gacc)" \
    '[5,{},{"200":5},{"6":5},5]'
like "--accept-grpc: the text states the rule" "$(cat "$T/gacc.out")" \
    '^Success: HTTP below 400; gRPC OK and 6 ALREADY_EXISTS, 9 FAILED_PRECONDITION$'
"$YB" corpus cat "$T/g.ybc" | /usr/bin/python3 -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    r["expected_grpc_status"] = 0
    print(json.dumps(r))
' >"$T/g.jsonl"
"$YB" corpus import "$T/g.jsonl" -o "$T/gexp.ybc" >/dev/null 2>&1
yb gorig "$T/gexp.ybc" --target "$GURL" --expect original
is "gNMI --expect original, recorded OK, got 6: 5 unexpected" "$(summary gorig)" \
    '[0,{"unexpected":5},{"200":5},{"6":5},0]'
like "... with the reason naming both codes" "$(reasons gorig)" \
    '^\[\["unexpected","expected grpc 0 OK, got grpc 6 ALREADY_EXISTS[^"]*",5\]\]$'
yb_serve_stop

# ---- per-record accepted statuses (accept_status / accept_grpc_status) ---------
# The POST records list 409 as accepted: a second pass succeeds without
# --accept; other records still fail on 409.
"$YB" corpus cat --with-header "$T/post.ybc" | /usr/bin/python3 -c '
import json, sys
for i, l in enumerate(sys.stdin):
    r = json.loads(l)
    if i > 0 and i <= 5:  # records 0..4 accept 409 (and 404)
        r["accept_status"] = [409, 404]
    print(json.dumps(r))
' >"$T/rec.jsonl"
check "import of records with accept_status" "$YB" corpus import "$T/rec.jsonl" -o "$T/rec.ybc"
"$YB" corpus cat --with-header "$T/rec.ybc" >"$T/rec2.jsonl"
is "accept_status survives import and cat unchanged" \
    "$(/usr/bin/python3 -c '
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
a[0] = b[0] = None  # the header: created time differs
print(a == b, [r.get("accept_status") for r in b[1:4]])' "$T/rec.jsonl" "$T/rec2.jsonl")" \
    'True [[409, 404], [409, 404], [409, 404]]'
yb_serve "$T/s6.out" --restconf 127.0.0.1:0 --gnmi off || exit 1
yb rec "$T/rec.ybc" --target "$RURL" -n 20
is "accept_status [409,404] on 5 of 10 records, 2 passes: 15 ok, 5 status errors (the others)" \
    "$(summary rec)" '[15,{"status":5},{"201":10,"409":10},{},15]'
yb rec_orig "$T/rec.ybc" --target "$RURL" -n 10 --expect original
is "... with --expect original and no recorded status: the same rule (5 ok)" \
    "$(summary rec_orig)" '[5,{"status":5},{"409":10},{},5]'
yb_serve_stop
"$YB" corpus cat "$T/g.ybc" | /usr/bin/python3 -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    r["accept_grpc_status"] = [6]
    print(json.dumps(r))
' >"$T/grec.jsonl"
"$YB" corpus import "$T/grec.jsonl" -o "$T/grec.ybc" >/dev/null 2>&1
yb_serve "$T/s7.out" --restconf off --gnmi 127.0.0.1:0 --fault status:6 || exit 1
yb grec "$T/grec.ybc" --target "$GURL"
is "accept_grpc_status [6]: every Set failing with 6 succeeds" "$rc $(summary grec)" \
    '0 [5,{},{"200":5},{"6":5},5]'
yb_serve_stop
for bad in '"accept_status": [99]' '"accept_status": [1000]' '"accept_status": "409"' \
    '"accept_grpc_status": [17]' '"accept_status": [400,401,402,403,404,405,406,407,408,409,410,411,412,413,414,415,416]'; do
    printf '{"protocol":"restconf","method":"GET","path":"/a",%s}\n' "$bad" >"$T/badacc.jsonl"
    "$YB" corpus import "$T/badacc.jsonl" -o "$T/badacc.ybc" >"$T/badacc.out" 2>&1
    is "import refuses $bad: exit 2" "$?" 2
done
like "... naming the key" "$(cat "$T/badacc.out")" '"accept_status" must be an array of at most 16 codes'

# ---- experiment takes the same outcome options ----------------------------------
yb_serve "$T/s4.out" --restconf 127.0.0.1:0 --gnmi off || exit 1
timeout 120 "$YB" experiment sessions -q --restconf "$RURL" --restconf-corpus "$T/post.ybc" -n 20 \
    --json "$T/exp1.json" >"$T/exp1.out" 2>&1
is "experiment without --accept: a create corpus fails its second pass (exit 1)" "$?" 1
yb_serve_stop
yb_serve "$T/s5.out" --restconf 127.0.0.1:0 --gnmi off || exit 1
timeout 120 "$YB" experiment sessions -q --restconf "$RURL" --restconf-corpus "$T/post.ybc" -n 20 \
    --accept 409 --json "$T/exp2.json" >"$T/exp2.out" 2>&1
is "experiment --accept 409: exit 0" "$?" 0
is "experiment --accept 409: every run 20 ok, 409s still counted, the rule in each run's JSON" \
    "$(jget "$T/exp2.json" '[[x["summary"]["requests_ok"], x["status"].get("409"), x["run"]["accept"]["http"]] for x in r["runs"]]')" \
    '[[20,10,[409]],[20,20,[409]]]'
yb_serve_stop

# ---- bad values: exit 2, nothing sent -------------------------------------------
for v in 99 1000 "" "409," "4x9" "409,,404" "-409" " 409"; do
    check_rc "--accept '$v': exit 2" 2 "$YB" run -q "$T/post.ybc" --target http://127.0.0.1:9 --accept "$v"
done
like "... naming the option and what it takes" "$(cat "$T/.out")" \
    "^yangblast run: --accept ' 409': expected HTTP statuses 100\\.\\.999, comma-separated"
for v in 17 -1 "6,x"; do
    check_rc "--accept-grpc '$v': exit 2" 2 "$YB" run -q "$T/post.ybc" --target http://127.0.0.1:9 --accept-grpc "$v"
done
check_rc "--expect recorded: exit 2" 2 "$YB" run -q "$T/post.ybc" --target http://127.0.0.1:9 --expect recorded

done_testing
