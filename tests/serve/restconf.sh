#!/bin/bash
# yangblast serve, RESTCONF front end, checked with curl: RFC 8040 create/
# merge/replace/read/delete semantics, error bodies, auth, stats.
. "${YB_SRCDIR:-.}/tests/serve/common.sh"
A=/restconf/data/openconfig-acl:acl
SETS=$A/acl-sets

check "serve starts and prints its ports" start_serve --stats "$T/stats.json"
like "ports are numbers" "$RP $GP" '^[0-9]+ [0-9]+$'

cat >"$T/patch.json" <<'J'
{"openconfig-acl:acl-sets":{"acl-set":[{"name":"A1","type":"openconfig-acl:ACL_IPV4",
 "config":{"name":"A1","type":"openconfig-acl:ACL_IPV4","description":"first"},
 "acl-entries":{"acl-entry":[{"sequence-id":10,"config":{"sequence-id":10},
   "actions":{"config":{"forwarding-action":"openconfig-acl:ACCEPT"}}}]}}]}}
J
is "PATCH acl-sets creates (204)" "$(rc_code PATCH $SETS -H "$CT" --data @"$T/patch.json")" 204
is "GET the set (200)" "$(rc_code GET "$SETS/acl-set=A1,ACL_IPV4")" 200
like "GET returns what was set" "$(cat "$T/body")" '"openconfig-acl:acl-set":\[\{.*"description":"first"'
is "GET deeper: acl-entry=10" "$(rc_code GET "$SETS/acl-set=A1,ACL_IPV4/acl-entries/acl-entry=10")" 200
like "acl-entry body" "$(cat "$T/body")" '"openconfig-acl:acl-entry":\[\{"sequence-id":10'
is "type key with module prefix, percent-encoded" \
   "$(rc_code GET "$SETS/acl-set=A1,openconfig-acl%3AACL_IPV4/config")" 200

POST='{"openconfig-acl:acl-set":[{"name":"B 2","type":"ACL_IPV6","config":{"name":"B 2","type":"ACL_IPV6"}}]}'
is "POST creates (201)" "$(curl -s -o /dev/null -D "$T/h" -w '%{http_code}' -X POST -H "$CT" -d "$POST" "http://127.0.0.1:$RP$SETS")" 201
like "POST answers a Location" "$(cat "$T/h")" 'Location: /restconf/data/openconfig-acl:acl/acl-sets/acl-set=B%202,ACL_IPV6'
is "POST again: 409" "$(rc_code POST $SETS -H "$CT" -d "$POST")" 409
like "409 carries ietf-restconf:errors data-exists" "$(cat "$T/body")" '"ietf-restconf:errors".*"error-tag":"data-exists"'
is "GET the POSTed set by percent-encoded name" "$(rc_code GET "$SETS/acl-set=B%202,ACL_IPV6")" 200

is "PATCH merges into the set (204)" \
   "$(rc_code PATCH "$SETS/acl-set=A1,ACL_IPV4/config" -H "$CT" -d '{"openconfig-acl:config":{"description":"merged"}}')" 204
rc_code GET "$SETS/acl-set=A1,ACL_IPV4" >/dev/null
like "merge changed the leaf" "$(cat "$T/body")" '"description":"merged"'
like "merge kept the rest" "$(cat "$T/body")" '"sequence-id":10'
is "PATCH a missing set: 404" \
   "$(rc_code PATCH "$SETS/acl-set=NOPE,ACL_IPV4" -H "$CT" -d '{"openconfig-acl:acl-set":[{"name":"NOPE","type":"ACL_IPV4"}]}')" 404
like "404 carries ietf-restconf:errors" "$(cat "$T/body")" '"ietf-restconf:errors"'

PUT='{"openconfig-acl:acl-set":[{"name":"C3","type":"ACL_IPV4","config":{"name":"C3","type":"ACL_IPV4","description":"put"}}]}'
is "PUT a new set: 201" "$(rc_code PUT "$SETS/acl-set=C3,ACL_IPV4" -H "$CT" -d "$PUT")" 201
is "PUT it again: 204" "$(rc_code PUT "$SETS/acl-set=C3,ACL_IPV4" -H "$CT" -d "$PUT")" 204
is "PUT with a key that contradicts the path: 400" \
   "$(rc_code PUT "$SETS/acl-set=OTHER,ACL_IPV4" -H "$CT" -d "$PUT")" 400

is "malformed JSON: 400" "$(rc_code PATCH $SETS -H "$CT" -d '{"openconfig-acl:acl-sets": {')" 400
like "400 carries malformed-message" "$(cat "$T/body")" '"error-tag":"malformed-message"'
is "wrong media type: 415" "$(rc_code PATCH $SETS -H 'Content-Type: text/plain' -d '{}')" 415
like "415 carries ietf-restconf:errors" "$(cat "$T/body")" '"ietf-restconf:errors"'
is "unknown resource: 404" "$(rc_code GET /restconf/data/openconfig-interfaces:interfaces)" 404

is "DELETE the set: 204" "$(rc_code DELETE "$SETS/acl-set=C3,ACL_IPV4")" 204
is "GET after DELETE: 404" "$(rc_code GET "$SETS/acl-set=C3,ACL_IPV4")" 404
is "DELETE again: 404" "$(rc_code DELETE "$SETS/acl-set=C3,ACL_IPV4")" 404
is "DELETE an acl-entry: 204" "$(rc_code DELETE "$SETS/acl-set=A1,ACL_IPV4/acl-entries/acl-entry=10")" 204
is "the entry is gone" "$(rc_code GET "$SETS/acl-set=A1,ACL_IPV4/acl-entries/acl-entry=10")" 404

# SONiC's own payload: the members of the acl container, PATCHed bare.
REF="$YB_SRCDIR/../shared/reference/sonic-acl/01_create_MyACL1_MyACL2.json"
if [ -f "$REF" ]; then
    is "SONiC reference payload PATCH" "$(rc_code PATCH $A -H "$CT" --data @"$REF")" 204
    is "its rule reads back" "$(rc_code GET "$SETS/acl-set=MyACL2,ACL_IPV4/acl-entries/acl-entry=1/config")" 200
else
    ok "# SKIP SONiC reference payloads not present"
    ok "# SKIP SONiC reference payloads not present"
fi

# Keep-alive: several requests on one connection.
out=$(curl -s -o /dev/null -o /dev/null -w '%{http_code} %{num_connects}\n' "http://127.0.0.1:$RP$SETS/acl-set=A1,ACL_IPV4" "http://127.0.0.1:$RP$SETS/acl-set=A1,ACL_IPV4" | tr '\n' ' ')
is "two requests, one connection" "$out" "200 1 200 0 "

check_rc "SIGTERM stops it cleanly" 0 stop_serve
like "summary counts RESTCONF methods" "$(cat "$SOUT")" 'requests: restconf [0-9]+ \(GET [0-9]+ POST 2 PUT 3 PATCH [0-9]+ DELETE 3'
like "summary counts statuses" "$(cat "$SOUT")" 'http status:.* 201=2 .*409=1 415=1'
check "--stats wrote JSON" "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["requests"]["restconf"]["POST"]==2 and d["http_status"]["415"]==1, d' "$T/stats.json"

# Credentials.
export YANGBLAST_SERVE_PASSWORD=s3cret
check "serve with --auth" start_serve --auth admin --auth-cost 1ms --gnmi off
is "no credentials: 401" "$(curl -s -o "$T/body" -D "$T/h" -w '%{http_code}' "http://127.0.0.1:$RP$A")" 401
like "401 asks for Basic" "$(cat "$T/h")" 'WWW-Authenticate: Basic'
is "wrong password: 401" "$(rc_code GET $A -u admin:nope)" 401
is "right password: 200" "$(rc_code GET $A -u admin:s3cret)" 200
printf 'filepw\n' >"$T/pw"
check_rc "stop" 0 stop_serve
like "auth failures counted" "$(cat "$SOUT")" 'auth failures: 2'
unset YANGBLAST_SERVE_PASSWORD
check "serve with --auth-password-file" start_serve --auth admin --auth-password-file "$T/pw" --gnmi off
is "password from the file: 200" "$(rc_code GET $A -u admin:filepw)" 200
check_rc "stop" 0 stop_serve
check_rc "--auth without a password is a usage error" 2 "$YB" serve --auth admin
check_rc "bad --restconf address is a usage error" 2 "$YB" serve --restconf nonsense
done_testing
