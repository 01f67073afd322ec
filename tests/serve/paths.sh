#!/bin/bash
# yangblast serve, RESTCONF resource paths of hostile shapes (runs of
# slashes, bad escapes, empty keys, too many segments or keys, separators
# inside key values): each gets a RESTCONF answer, the server stays up and
# (in the sanitizer build) reports no memory error.
. "${YB_SRCDIR:-.}/tests/serve/common.sh"
A=/restconf/data/openconfig-acl:acl
SETS=$A/acl-sets
U() { printf 'http://127.0.0.1:%s%s' "$RP" "$1"; }
slashes() { head -c "$1" /dev/zero | tr '\0' /; }
set_body() { printf '{"openconfig-acl:acl-set":[{"name":"%s","type":"ACL_IPV4","config":{"name":"%s","type":"ACL_IPV4"}}]}' "$1" "$1"; }
# post PATH BODY: prints the status; the headers land in $T/h.
post() { curl -s -o "$T/body" -D "$T/h" -w '%{http_code}' -X POST -H "$CT" -d "$2" "$(U "$1")"; }
loc() { sed -n 's/^Location: \(.*\)\r$/\1/p' "$T/h"; }

check "serve starts" start_serve --gnmi off

# A POST whose path ends in many slashes: the Location is built from the
# path without them (this read past a heap buffer before).
is "POST to acl-sets + 3000 slashes: 201" "$(post "$SETS$(slashes 3000)" "$(set_body S1)")" 201
is "its Location has one slash before the child" "$(loc)" "$SETS/acl-set=S1,ACL_IPV4"
is "POST to acl-sets + 60000 slashes: 201" "$(post "$SETS$(slashes 60000)" "$(set_body S2)")" 201
is "its Location" "$(loc)" "$SETS/acl-set=S2,ACL_IPV4"
is "POST to acl-sets/ + query with slashes: 201" "$(post "$SETS/?x=////" "$(set_body S3)")" 201
is "its Location ignores the query" "$(loc)" "$SETS/acl-set=S3,ACL_IPV4"
is "POST to /restconf/data + 5000 slashes: the acl exists (409)" \
   "$(post "/restconf/data$(slashes 5000)" '{"openconfig-acl:acl":{}}')" 409
is "POST to slashes between segments: 201" \
   "$(post "/restconf/data//openconfig-acl:acl///acl-sets//" "$(set_body S4)")" 201
is "its Location keeps the inner slashes as sent" "$(loc)" \
   "/restconf/data//openconfig-acl:acl///acl-sets/acl-set=S4,ACL_IPV4"

# Separators inside key values and names stay escaped in the Location, so
# that it names the created resource.
is "POST a set named 'a=b,c/d': 201" "$(post "$SETS" "$(set_body 'a=b,c/d')")" 201
is "its Location escapes = , / inside the key" "$(loc)" "$SETS/acl-set=a%3Db%2Cc%2Fd,ACL_IPV4"
is "and GET on that Location finds the set" "$(rc_code GET "$(loc)")" 200
is "POST a child whose name holds '=' and '%': 201" \
   "$(post "$A" '{"openconfig-acl:x=y%":{"z":1}}')" 201
is "its Location escapes them" "$(loc)" "$A/x%3Dy%25"
is "POST an entry with an integer key: 201" "$(post "$SETS/acl-set=S1,ACL_IPV4/acl-entries" \
   '{"openconfig-acl:acl-entry":[{"sequence-id":-7,"config":{"sequence-id":-7}}]}')" 201
is "its Location carries the number" "$(loc)" "$SETS/acl-set=S1,ACL_IPV4/acl-entries/acl-entry=-7"

# Malformed or oversized paths: a 4xx answer, never a crash.
for p in "$SETS/acl-set=%" "$SETS/acl-set=%4" "$SETS/acl-set=%zz,ACL_IPV4" "$SETS/acl-set=a%00,b" \
         "$SETS/%" "$SETS/=" "$SETS/=x" "/restconf/data/openconfig-acl:" "$A/:"; do
    like "GET $p: 400 or 404" "$(rc_code GET "$p")" '^40[04]$'
done
is "empty keys: 404" "$(rc_code GET "$SETS/acl-set=,")" 404
is "five keys: 400 (too many)" "$(rc_code GET "$SETS/acl-set=a,b,c,d,e")" 400
deep=$(for i in $(seq 40); do printf '/x'; done)
is "40 segments: 400" "$(rc_code GET "$A$deep")" 400
long=$(head -c 5000 /dev/zero | tr '\0' x)
is "a 5000-byte segment: 400" "$(rc_code GET "$A/$long")" 400
is "POST with a 5000-byte segment and slashes: 400" "$(post "$A/$long$(slashes 100)" "$(set_body S9)")" 400
is "PUT + many slashes: 204 or 201" "$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H "$CT" \
   -d "$(set_body S1)" "$(U "$SETS/acl-set=S1,ACL_IPV4$(slashes 2000)")")" 204
is "DELETE + many slashes: 204" "$(rc_code DELETE "$SETS/acl-set=S2,ACL_IPV4$(slashes 2000)")" 204
is "a URL over the head limit: 414" "$(rc_code GET "$A/$(slashes 70000)")" 414

is "the server still answers" "$(rc_code GET "$SETS/acl-set=S3,ACL_IPV4")" 200
check_rc "SIGTERM stops it cleanly" 0 stop_serve
is "no sanitizer report" "$(grep -c -E 'AddressSanitizer|runtime error' "$SOUT")" 0
done_testing
