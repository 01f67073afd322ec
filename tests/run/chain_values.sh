#!/bin/bash
# Chain steps that take a value from the previous step's response:
# {{prev.json:POINTER}} (a RESTCONF body), {{prev.header:NAME}} and
# {{prev.gnmi:PATH#POINTER}} (a gNMI GetResponse).  Against yangblast serve:
# create -> read back -> delete by the name read, over RESTCONF and gNMI,
# leaves the datastore empty (the names are random UUIDs: only a value
# really read can delete them).  Against nghttpd: plain HTTP/2 answers
# naming the next file.  Against a login peer (tests/peers/login.py):
# a login's token from its JSON body and from its header authorizes the
# next request; the tokens appear in no output.  A value that is not there
# fails its step with a reason naming the placeholder, and the step is
# never sent.  Misplaced or malformed placeholders are refused at load time.
. "$YB_SRCDIR/tests/lib.sh"
. "$YB_SRCDIR/tests/peers/peer.sh"
PY=/usr/bin/python3

# corpus KIND ARG -o FILE: a JSONL corpus of chains, imported
corpus() {
    $PY - "$1" "$2" >"$T/$1.jsonl" <<'EOF'
import json, sys
kind, arg = sys.argv[1], sys.argv[2]
A = [{"name": "Accept", "value": "application/yang-data+json"}]
C = [{"name": "Content-Type", "value": "application/yang-data+json"}] + A
G = [{"name": "content-type", "value": "application/grpc"}, {"name": "te", "value": "trailers"}]
def rc(method, path, headers, body="", **kw):
    return dict(protocol="restconf", method=method, scheme="http", authority="localhost",
                path=path, headers=headers, body=body, **kw)
def gn(rpc, msg, **kw):
    return dict(protocol="gnmi", method="POST", scheme="http", authority="localhost",
                path="/gnmi.gNMI/" + rpc, headers=G, grpc=[msg], **kw)
out = [{"yangblast_corpus": {"format_version": 1, "redactions": []}}]
aset = {"openconfig-acl:acl-set": [{"name": "PV_{{uuid}}", "type": "openconfig-acl:ACL_IPV4",
        "config": {"name": "PV_{{uuid}}", "type": "openconfig-acl:ACL_IPV4"}}]}
if kind == "rc":      # create, read all back, delete the one read
    out += [rc("POST", "/restconf/data/openconfig-acl:acl/acl-sets", C, json.dumps(aset),
               chain=3, template=True),
            rc("GET", "/restconf/data/openconfig-acl:acl/acl-sets", A),
            rc("DELETE", "/restconf/data/openconfig-acl:acl/acl-sets/acl-set={{prev.json:%s}},"
               "ACL_IPV4" % arg, A, template=True)]
elif kind == "gnmi":  # Set, Get, Set delete of the name in the GetResponse
    out += [gn("Set", {"SetRequest": {"update": [{"path": "/openconfig-acl:acl/acl-sets",
                                                  "val": {"json_ietf_val": aset}}]}},
               chain=3, template=True),
            gn("Get", {"GetRequest": {"path": ["/openconfig-acl:acl/acl-sets"],
                                      "encoding": "JSON_IETF"}}),
            gn("Set", {"SetRequest": {"delete": [
                "/openconfig-acl:acl/acl-sets/acl-set[name={{prev.gnmi:%s}}][type=ACL_IPV4]"
                % arg]}}, template=True)]
elif kind == "login": # the token from the body, then from the header
    out += [rc("POST", "/login", C, '{"user": "lab"}', chain=2),
            rc("GET", "/restconf/data/system", A + [{"name": "Authorization",
               "value": "Bearer {{prev.json:%s}}" % arg}], template=True),
            rc("POST", "/login", C, '{"user": "lab"}', chain=2),
            rc("GET", "/restconf/data/system", A + [{"name": "X-Auth-Token",
               "value": "{{prev.header:X-Auth-Token}}"}], template=True)]
elif kind == "big":   # a login answer of arg bytes, then its token
    out += [rc("GET", "/big?n=" + arg, A, chain=2),
            rc("GET", "/restconf/data/system", A + [{"name": "Authorization",
               "value": "Bearer {{prev.json:/token}}"}], template=True)]
elif kind == "gnmihdr": # the Get's name, and a header of the Get's answer
    out += [gn("Set", {"SetRequest": {"update": [{"path": "/openconfig-acl:acl/acl-sets",
                                                  "val": {"json_ietf_val": aset}}]}},
               chain=3, template=True),
            gn("Get", {"GetRequest": {"path": ["/openconfig-acl:acl/acl-sets"],
                                      "encoding": "JSON_IETF"}}),
            gn("Set", {"SetRequest": {"update": [{
                "path": "/openconfig-acl:acl/acl-sets/acl-set[name={{prev.gnmi:/openconfig-acl"
                        ":acl/acl-sets#/acl-set/0/name}}][type=ACL_IPV4]/config/description",
                "val": {"json_ietf_val": "{{prev.header:content-type}}"}}]}}, template=True)]
elif kind == "accepted": # a 401 the record accepts: its body is read too
    out += [rc("GET", "/restconf/data/system", A, chain=2, accept_status=[401]),
            rc("GET", "/restconf/data/system", A + [{"name": "Authorization",
               "value": "Bearer {{prev.json:/error}}"}], template=True, accept_status=[401])]
elif kind == "h2":    # HTTP/2 (nghttpd's files): each answer names the next file
    h2 = lambda path, **kw: dict(protocol="http2", method="GET", scheme="http",
                                 authority="localhost", path=path, headers=[], body="", **kw)
    out += [h2("/a.json", chain=3), h2("/{{prev.json:/next}}", template=True),
            h2("/{{prev.json:/next}}", template=True)]
elif kind == "first": # a placeholder where there is no previous step
    out += [rc("GET", "/restconf/data/x{{prev.json:/a}}", A, template=True)]
elif kind == "syntax":
    out += [rc("GET", "/a", A, chain=2),
            rc("GET", "/b{{%s}}" % arg, A, template=True)]
for r in out:
    print(json.dumps(r))
EOF
    rm -f "$T/$3.ybc"
    "$YB" corpus import "$T/$1.jsonl" -o "$T/$3.ybc" >"$T/import.out" 2>&1 ||
        diag "corpus $1 $2: $(cat "$T/import.out")"
}

# ---- RESTCONF against serve: create -> read back -> delete the one read -----------
yb_serve "$T/s1.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 || exit 1
corpus rc /openconfig-acl:acl-sets/acl-set/0/name rc
timeout 60 "$YB" run -q "$T/rc.ybc" --target "$RURL" -n 30 --json "$T/rc.json" >"$T/rc.out" 2>&1
is "RESTCONF: exit 0" "$?" 0
is "... 30 requests ok, 10 chains ok" \
    "$(jget "$T/rc.json" '[r["summary"]["requests_ok"], r["chains"]]')" '[30,{"failed":0,"ok":10}]'
is "... 10 DELETEs of the set each chain created, by the name its GET read" \
    "$(jget "$T/rc.json" '[o["ok"] for o in r["operations"] if o["operation"].startswith("DELETE")]')" '[10]'
is "... the operation's name keeps the placeholder whole" \
    "$(jget "$T/rc.json" '[o["operation"] for o in r["operations"] if o["operation"].startswith("DELETE")]')" \
    '["DELETE /restconf/data/openconfig-acl:acl/acl-sets/acl-set={1},{2}"]'
is "serve holds no ACL set (each random name was read back and deleted)" "$(acl_count "$RURL")" 0

# a pointer to nothing: the DELETE fails unsent, its reason names the pointer
corpus rc /openconfig-acl:acl-sets/acl-set/0/nope rcbad
timeout 60 "$YB" run -q "$T/rcbad.ybc" --target "$RURL" -n 9 --json "$T/rcbad.json" >"$T/rcbad.out" 2>&1
is "a missing value: exit 1" "$?" 1
is "... 6 started and ok, 3 failed (never started), 3 chains failed" \
    "$(jget "$T/rcbad.json" '[r["summary"]["requests_started"], r["summary"]["requests_ok"], r["summary"]["requests_completed"], r["chains"]]')" \
    '[6,6,9,{"failed":3,"ok":0}]'
is "... the reason names the placeholder and what was missing" \
    "$(jget "$T/rcbad.json" '[[e["reason"], e["count"]] for e in r["errors"]["reasons"]]')" \
    "[[\"chain step: {{prev.json:/openconfig-acl:acl-sets/acl-set/0/nope}}: no member 'nope' at '/openconfig-acl:acl-sets/acl-set/0' in the previous response's body\",3]]"
is "... serve saw no DELETE: the 3 sets are still there" "$(acl_count "$RURL")" 3
curl -s -X DELETE "$RURL/restconf/data/openconfig-acl:acl" >/dev/null

# ---- gNMI against serve: the name in a GetResponse's json_ietf_val ------------------
corpus gnmi '/openconfig-acl:acl/acl-sets#/acl-set/0/name' gnmi
timeout 60 "$YB" run -q "$T/gnmi.ybc" --target "$GURL" -n 30 --json "$T/gnmi.json" >"$T/gnmi.out" 2>&1
is "gNMI: exit 0, 30 ok, 10 chains ok" \
    "$? $(jget "$T/gnmi.json" '[r["summary"]["requests_ok"], r["chains"]]')" '0 [30,{"failed":0,"ok":10}]'
is "serve holds no ACL set after the gNMI chains" "$(acl_count "$RURL")" 0
corpus gnmi '/openconfig-acl:acl/other#/acl-set/0/name' gnmibad
timeout 60 "$YB" run -q "$T/gnmibad.ybc" --target "$GURL" -n 3 --json "$T/gnmibad.json" >/dev/null 2>&1
like "gNMI, an update path the GetResponse has not: the reason says so" \
    "$(jget "$T/gnmibad.json" 'r["errors"]["reasons"][0]["reason"]')" \
    "^chain step: \\{\\{prev.gnmi:/openconfig-acl:acl/other#/acl-set/0/name\\}\\}: no update at /openconfig-acl:acl/other in the previous GetResponse \\(1 updates\\)"
# a header of the gNMI answer (HTTP/2) into a value, the name from its body
curl -s -X DELETE "$RURL/restconf/data/openconfig-acl:acl" >/dev/null
corpus gnmihdr x gnmihdr
timeout 60 "$YB" run -q "$T/gnmihdr.ybc" --target "$GURL" -n 3 --json "$T/gnmihdr.json" >/dev/null 2>&1
is "gNMI: a response header (content-type) taken into a Set's value: exit 0" "$?" 0
is "... serve's set has it as its description" \
    "$(curl -s "$RURL/restconf/data/openconfig-acl:acl/acl-sets" | $PY -c '
import json, sys
print([s["config"].get("description") for s in json.load(sys.stdin)["openconfig-acl:acl-sets"]["acl-set"]])')" \
    "['application/grpc']"
yb_serve_stop

# ---- a login's token, from its body and from its header ------------------------------
peer_start "$T/login" login.py --stats "$T/login.json" --max-seconds 120 ||
    { echo "Bail out! login peer"; exit 1; }
LURL=http://127.0.0.1:$(peer_port "$T/login")
corpus login /session/token login
timeout 60 "$YB" run "$T/login.ybc" --target "$LURL" -n 40 -c 2 --json "$T/login.rep.json" \
    --log "$T/login.log" >"$T/login.out" 2>&1
is "login chains: exit 0, 40 ok, 20 chains ok" \
    "$? $(jget "$T/login.rep.json" '[r["summary"]["requests_ok"], r["chains"]]')" '0 [40,{"failed":0,"ok":20}]'
corpus login /session/nope loginbad
timeout 60 "$YB" run "$T/loginbad.ybc" --target "$LURL" -n 4 --json "$T/loginbad.json" \
    >"$T/loginbad.out" 2>&1
is "a token pointer to nothing: exit 1, 1 step failed" \
    "$? $(jget "$T/loginbad.json" '[r["summary"]["requests_ok"], r["chains"]]')" '1 [3,{"failed":1,"ok":1}]'
# the previous response is kept up to 1 MiB: a longer one fails the step
corpus big 1048576 big
timeout 60 "$YB" run "$T/big.ybc" --target "$LURL" -n 2 --json "$T/big.json" >/dev/null 2>&1
is "a 1 MiB answer: its token is read (exit 0)" "$?" 0
corpus big 1048577 big1
timeout 60 "$YB" run "$T/big1.ybc" --target "$LURL" -n 2 --json "$T/big1.json" >/dev/null 2>&1
is "an answer 1 byte over 1 MiB: exit 1, the step fails unsent, saying so" \
    "$? $(jget "$T/big1.json" '[r["summary"]["requests_started"], r["errors"]["reasons"][0]["reason"]]')" \
    "1 [1,\"chain step: {{prev.json:/token}}: the previous response's body was not kept whole (over 1048576 bytes, or over the worker's response memory budget)\"]"
# an accepted error status: its body is there for the next step
corpus accepted x accepted
timeout 60 "$YB" run "$T/accepted.ybc" --target "$LURL" -n 2 --json "$T/accepted.json" >/dev/null 2>&1
is "a 401 the record accepts, then a value from its body: exit 0, 2 ok" \
    "$? $(jget "$T/accepted.json" 'r["summary"]["requests_ok"]')" "0 2"
peer_stop "$T/login"
is "the peer: 24 logins; 22 requests with a good token; the 2 refused are the accepted chain's (no token, then the 401's own text as one)" \
    "$(jget "$T/login.json" '[r["logins"], r["good"], r["bad"], r["bad_values"]]')" \
    '[24,22,2,[["",null],["Bearer bad token",null]]]'
is "no token handed out appears in any output (report, log, stdout/stderr)" \
    "$($PY -c '
import json, sys
toks = json.load(open(sys.argv[1]))["issued"]
text = "".join(open(f, errors="replace").read() for f in sys.argv[2:])
print(len(toks), sum(t in text for t in toks))' "$T/login.json" "$T/login.rep.json" "$T/login.log" \
        "$T/login.out" "$T/loginbad.json" "$T/loginbad.out")" "46 0"

# ---- plain HTTP/2: nghttpd's files, each naming the next ---------------------------
mkdir -p "$T/www"
echo '{"next":"b.json"}' >"$T/www/a.json"
echo '{"next":"c.json"}' >"$T/www/b.json"
echo '{"end":true}' >"$T/www/c.json"
ngport=$(free_port)
nghttpd -v --no-tls -d "$T/www" "$ngport" >"$T/ng.log" 2>&1 &
NGPID=$!
ng_stop() { [ -n "$NGPID" ] && kill "$NGPID" 2>/dev/null && wait "$NGPID" 2>/dev/null; NGPID=; }
at_exit ng_stop
wait_port "$ngport" || { echo "Bail out! nghttpd did not start"; exit 1; }
corpus h2 x h2
timeout 60 "$YB" run -q "$T/h2.ybc" --target "http://127.0.0.1:$ngport" -n 6 --json "$T/h2.json" \
    >/dev/null 2>&1
is "HTTP/2: exit 0, 2 chains ok" "$? $(jget "$T/h2.json" 'r["chains"]')" '0 {"failed":0,"ok":2}'
ng_stop
is "... nghttpd served each file twice: the paths the answers named" \
    "$(grep -o ':path: /[a-z.]*' "$T/ng.log" | sort | uniq -c | awk '{print $3 "x" $1}' | tr '\n' ' ')" \
    "/a.jsonx2 /b.jsonx2 /c.jsonx2 "

# ---- refused at load time ------------------------------------------------------------
corpus first x first
"$YB" run -q "$T/first.ybc" --target http://127.0.0.1:9 >"$T/out" 2>&1
is "a {{prev....}} outside a chain's later step: exit 2" "$?" 2
like "... says it is not a later step of a chain" "$(cat "$T/out")" \
    "first.ybc: record 0: template: its \\{\\{prev....\\}\\} placeholders take values from the response of the step before, but it is not a later step of a chain"
"$YB" run -q "$T/first.ybc" --target http://127.0.0.1:9 -H 'X-A: {{prev.json:/a}}' >"$T/out" 2>&1
is "{{prev....}} in -H (every request's): exit 2" "$?" 2
like "... says it belongs in a step's record" "$(cat "$T/out")" "^yangblast run: -H 'X-A: \\.\\.\\.': a \\{\\{prev"
for bad in 'prev.json:a/b|a JSON pointer is empty or starts with' \
           'prev.json:/a~2|~0 or ~1' \
           'prev.header:|takes the header.s name' \
           'prev.header:X@Y|a header name is an HTTP token' \
           'prev.gnmi:a[b|not a gNMI path' \
           'prev.gnmi:/a#b|the JSON pointer after .#.' \
           'prev.body|unknown placeholder \(the previous response.s values'; do
    ph=${bad%%|*} want=${bad#*|}
    corpus syntax "$ph" syntax
    "$YB" run -q "$T/syntax.ybc" --target http://127.0.0.1:9 >"$T/out" 2>&1
    rc=$?
    like "{{$ph}}: exit $rc, names the record and the placeholder" "$rc $(cat "$T/out")" \
        "^2 yangblast run: .*syntax.ybc: record 1: template path: placeholder '\\{\\{$(printf '%s' "$ph" | sed 's/[][\.|$*^(){}]/\\&/g')\\}\\}': .*$want"
done

done_testing
