#!/bin/bash
# Chains: records grouped into a chain run in order on one session, each
# step sent when the one before it completed.  Against yangblast serve:
# synth acl --lifecycle (create, get, delete per set) in a closed loop
# leaves the datastore empty; -n starts a chain only when all of it fits;
# a failed step ends its chain (the steps after it are never sent);
# --log shows each chain's steps on one session, one after the other; the
# report counts chains and their latency, and each step as an operation.
# Broken chains in a corpus are refused before the run.
. "$YB_SRCDIR/tests/lib.sh"
PY=/usr/bin/python3

"$YB" synth acl --method POST --lifecycle --count 6 -r 2 --scheme http -o "$T/life.ybc" \
    >/dev/null 2>&1 || { not_ok "synth acl --lifecycle"; done_testing; exit 1; }
is "synth --lifecycle: POST, GET, DELETE per set, the first marked as a chain of 3" \
    "$("$YB" corpus cat "$T/life.ybc" | head -3 | $PY -c '
import json, sys
print(" ".join("%s:%s" % (r["method"], r.get("chain", "-")) for r in map(json.loads, sys.stdin)))')" \
    "POST:3 GET:- DELETE:-"
check_rc "synth --lifecycle with --op is refused" 2 \
    "$YB" synth acl --lifecycle --op get -o "$T/x.ybc"

# ---- a closed loop of lifecycles leaves nothing behind -------------------------
yb_serve "$T/s1.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 || exit 1
timeout 60 "$YB" run -q "$T/life.ybc" --target "$RURL" -n 91 -c 3 -t 2 \
    --json "$T/l1.json" >/dev/null 2>&1
is "lifecycle -n 91 -c 3 -t 2: exit 0" "$?" 0
is "... 90 requests (a chain starts only when -n has room for all of it), 30 chains ok" \
    "$(jget "$T/l1.json" '[r["summary"]["requests_started"], r["summary"]["requests_ok"], r["chains"], r["latency_us"]["chain"]["count"]]')" \
    '[90,90,{"failed":0,"ok":30},30]'
is "... each step an operation: 30 POST, 30 GET, 30 DELETE" \
    "$(jget "$T/l1.json" 'sorted((o["operation"].split()[0], o["requests"], o["ok"]) for o in r["operations"])')" \
    '[["DELETE",30,30],["GET",30,30],["POST",30,30]]'
is "... a chain takes at least as long as its steps" \
    "$(jget "$T/l1.json" 'r["latency_us"]["chain"]["p50"] >= r["latency_us"]["e2e"]["p50"]')" "true"
is "serve holds no ACL set after the lifecycle loop" "$(acl_count "$RURL")" 0
# gNMI: Set update, Get, Set delete; --unique names each pass's sets apart,
# since with 4 calls in flight and 4 chains a pass's chain can start while
# its namesake of the pass before is still running (its Get would then find
# the set deleted: the server's answer, not the tool's fault)
"$YB" synth acl --proto gnmi --lifecycle --unique --count 4 -r 2 --scheme http -o "$T/glife.ybc" >/dev/null 2>&1
timeout 60 "$YB" run -q "$T/glife.ybc" --target "$GURL" -n 120 -c 2 -m 2 \
    --json "$T/g1.json" >/dev/null 2>&1
is "gNMI lifecycle -n 120 -c 2 -m 2: 120 ok, 40 chains" \
    "$(jget "$T/g1.json" '[r["summary"]["requests_ok"], r["chains"]]')" '[120,{"failed":0,"ok":40}]'
is "serve holds no ACL set after the gNMI lifecycle loop" "$(acl_count "$RURL")" 0

# ---- in order, on one session ------------------------------------------------
timeout 60 "$YB" run -q "$T/life.ybc" --target "$RURL" -n 18 -c 3 --log "$T/log.jsonl" \
    >/dev/null 2>&1
is "--log: each chain's steps on one session, each sent after the one before it was done" \
    "$($PY -c '
import json, sys
rows = {}
for l in open(sys.argv[1]):
    e = json.loads(l)
    rows[e["record"]] = e
good = 0
for k in range(0, 18, 3):
    a, b, c = rows[k], rows[k + 1], rows[k + 2]
    if a["session"] == b["session"] == c["session"] and \
       b["t_start_ns"] >= a["t_done_ns"] and c["t_start_ns"] >= b["t_done_ns"]:
        good += 1
print(good)' "$T/log.jsonl")" 6
is "serve holds no ACL set" "$(acl_count "$RURL")" 0

# ---- a failed step ends its chain ---------------------------------------------
"$YB" corpus cat "$T/life.ybc" | $PY -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    if r["method"] == "GET":   # read a set nobody made: 404
        r["path"] = r["path"].replace("YB_ACL_", "NOPE_")
    print(json.dumps(r))' >"$T/fail.jsonl"
"$YB" corpus import "$T/fail.jsonl" -o "$T/fail.ybc" >/dev/null 2>&1
timeout 60 "$YB" run -q "$T/fail.ybc" --target "$RURL" -c 3 --json "$T/f.json" \
    >/dev/null 2>&1
is "a failing GET (one pass over the corpus): exit 1" "$?" 1
is "... 6 POST ok, 6 GET 404, no DELETE sent; 6 chains failed, none ok" \
    "$(jget "$T/f.json" '[r["summary"]["requests_started"], r["status"], r["chains"], r["latency_us"]["chain"]["count"]]')" \
    '[12,{"201":6,"404":6},{"failed":6,"ok":0},0]'
is "... so the 6 sets created stay" "$(acl_count "$RURL")" 6
yb_serve_stop

# ---- broken chains are refused before the run ----------------------------------
"$YB" corpus cat "$T/life.ybc" | head -2 >"$T/short.jsonl"
"$YB" corpus import "$T/short.jsonl" -o "$T/short.ybc" >/dev/null 2>&1
timeout 30 "$YB" run -q "$T/short.ybc" --target http://127.0.0.1:9 >"$T/short.out" 2>&1
is "a corpus ending inside a chain: exit 2" "$?" 2
like "... named" "$(cat "$T/short.out")" "short.ybc: the corpus ends inside the chain of 3 records that starts at record 0"
"$YB" corpus cat "$T/life.ybc" | head -6 | $PY -c '
import json, sys
rs = [json.loads(l) for l in sys.stdin]
rs[1]["chain"] = 2
for r in rs: print(json.dumps(r))' >"$T/nest.jsonl"
"$YB" corpus import "$T/nest.jsonl" -o "$T/nest.ybc" >/dev/null 2>&1
timeout 30 "$YB" run -q "$T/nest.ybc" --target http://127.0.0.1:9 >"$T/nest.out" 2>&1
is "a chain inside a chain: exit 2" "$?" 2
like "... named" "$(cat "$T/nest.out")" "record 1 starts a chain inside the chain of 3 records that starts at record 0"
echo '{"protocol":"restconf","method":"GET","path":"/","chain":1}' >"$T/one.jsonl"
check_rc "\"chain\": 1 is refused by corpus import" 2 "$YB" corpus import "$T/one.jsonl" -o "$T/one.ybc"

done_testing
