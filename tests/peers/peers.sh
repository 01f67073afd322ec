#!/bin/bash
# The real peers of yangblast's integration tests work as documented:
# nginx (plain and TLS) as a RESTCONF stand-in, badhttp.py's misbehaviours,
# and gnmi_server.py driven by gnmi_client.py.  Loopback only; every peer
# is stopped by PID (at_exit as a safety net).
. "$YB_SRCDIR/tests/lib.sh"
P=$YB_SRCDIR/tests/peers
. "$P/nginx.sh"
. "$P/peer.sh"

PY=/usr/bin/python3
export NGINX_MAX_SECONDS=120

cleanup() {
    nginx_stop "$T/ng" ; nginx_stop "$T/ngtls"
    for d in "$T"/bh-* "$T"/gnmi*; do [ -d "$d" ] && peer_stop "$d"; done
    return 0
}
at_exit cleanup

# jget FILE PYEXPR: evaluates PYEXPR with the JSON document in d.
jget() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
# lastlog DIR: the last access-log line of that nginx.
lastlog() { tail -n 1 "$(nginx_log "$1")"; }
# field N LINE: the N-th tab-separated field.
field() { printf '%s\n' "$2" | cut -f "$1"; }
gone() { ! ps -p "$1" >/dev/null 2>&1 || ps -o stat= -p "$1" | grep -q '^Z'; }

# ---------------------------------------------------------------- nginx plain
port=$(free_port)
check "nginx plain starts on 127.0.0.1:$port" nginx_start "$T/ng" "$port"
U=http://127.0.0.1:$port
for f in nginx.conf nginx.pid access.log; do
    check "nginx keeps $f in its directory" test -e "$T/ng/$f"
done
paths=$(grep -oE '(pid|error_log|access_log|[a-z_]*temp_path|ssl_certificate[a-z_]*|listen|server) +(unix:)?/[^ ;]+' "$T/ng/nginx.conf" |
    awk '{print $NF}' | sed 's/^unix://')
is "nginx.conf: pid, logs, temp paths, sockets (11) all inside its directory" \
    "$(printf '%s\n' "$paths" | grep -c "^$T/ng/")" 11
check "nginx.conf: no path outside" sh -c "! printf '%s\n' '$paths' | grep -v '^$T/ng/'"

"$PY" -c 'import sys; sys.stdout.write("{\"openconfig-acl:acl-sets\":\"" + "x"*14000 + "\"}")' >"$T/body14k.json"
code=$(curl -sS -o /dev/null -w '%{http_code}' -X PATCH -u admin:hunter2 \
    -H 'Content-Type: application/yang-data+json' --data-binary @"$T/body14k.json" \
    "$U/restconf/data/openconfig-acl:acl/acl-sets")
is "PATCH 14 KB -> 204" "$code" 204
l=$(lastlog "$T/ng")
is "log: method" "$(field 4 "$l")" PATCH
is "log: uri" "$(field 5 "$l")" /restconf/data/openconfig-acl:acl/acl-sets
is "log: status" "$(field 6 "$l")" 204
check "log: request_length >= 14000 (body read)" test "$(field 7 "$l")" -ge 14000
is "log: content_length" "$(field 8 "$l")" 14030
is "log: content type" "$(field 9 "$l")" application/yang-data+json
is "log: authorization present" "$(field 10 "$l")" 1
is "log: plain HTTP has no TLS reuse flag" "$(field 3 "$l")" -
like "log: connection and connection_requests are numbers" "$(field 1 "$l") $(field 2 "$l")" '^[0-9]+ 1$'
check "log never holds credentials" sh -c "! grep -Eq 'Basic|YWRtaW46aHVudGVyMg|hunter2' '$(nginx_log "$T/ng")'"
is "fields per line" "$(printf '%s\n' "$l" | awk -F'\t' '{print NF}')" 17
like "log: Host" "$(field 16 "$l")" '^127\.0\.0\.1:[0-9]+$'
like "log: User-Agent (curl's)" "$(field 17 "$l")" '^curl/'

is "POST -> 201" "$(curl -sS -o /dev/null -w '%{http_code}' -X POST -d '{}' "$U/restconf/data/openconfig-acl:acl")" 201
is "PUT -> 204" "$(curl -sS -o /dev/null -w '%{http_code}' -X PUT -d '{}' "$U/restconf/data/openconfig-acl:acl")" 204
is "DELETE -> 204" "$(curl -sS -o /dev/null -w '%{http_code}' -X DELETE "$U/restconf/data/openconfig-acl:acl")" 204
is "log: no Authorization -> 0" "$(field 10 "$(lastlog "$T/ng")")" 0
out=$(curl -sS -w '\n%{http_code}' -X PATCH -d '{}' "$U/restconf/data/conflict")
like "conflict -> 409" "$out" '^409$'
like "conflict body is ietf-restconf:errors" "$out" '"ietf-restconf:errors".*"error-tag":"data-exists"'
out=$(curl -sS -w '\n%{http_code} %{content_type}' "$U/restconf/data/openconfig-acl:acl")
like "GET -> 200 yang-data+json" "$out" '^200 application/yang-data\+json$'
check "GET body is JSON" "$PY" -c 'import json,sys; json.loads(sys.argv[1])' "$(printf '%s\n' "$out" | head -1)"
is "unknown path -> 404" "$(curl -sS -o /dev/null -w '%{http_code}' "$U/nope")" 404

# Keep-alive: two requests in one curl run share a connection.
curl -sS -o /dev/null -o /dev/null "$U/restconf/data/a" "$U/restconf/data/b"
l2=$(tail -n 2 "$(nginx_log "$T/ng")")
is "keep-alive: same connection number" "$(printf '%s\n' "$l2" | cut -f1 | uniq | wc -l)" 1
is "keep-alive: connection_requests 1 then 2" "$(printf '%s\n' "$l2" | cut -f2 | tr '\n' ' ')" "1 2 "

out=$(curl -sS -w '%{http_code}' -X POST -d '{"a":1}' "$U/slow/x")
like "slow -> JSON" "$(printf '%s\n' "$out" | head -1)" '^\{"yangblast-test:slow"'
is "slow -> 200" "$(printf '%s\n' "$out" | tail -1)" 200
check "slow: request_time >= 0.15 s in the log" \
    awk -F'\t' 'END { exit !($12 >= 0.150) }' "$(nginx_log "$T/ng")"

npid=$(nginx_pid "$T/ng")
nginx_stop "$T/ng"
check "nginx plain stopped (master $npid gone)" gone "$npid"
check "nginx port closed" sh -c "! (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null"

# ------------------------------------------------------------------ nginx TLS
# A second self-signed cert: the wrong CA for nginx, the cert of the gNMI peer.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$T/gkey.pem" -out "$T/gcert.pem" -days 2 -subj /CN=localhost \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" >/dev/null 2>&1
port=$(free_port)
check "nginx TLS starts" nginx_start "$T/ngtls" "$port" tls
C=$(nginx_cert "$T/ngtls")
check "cert has SAN localhost + 127.0.0.1" sh -c \
    "openssl x509 -in '$C' -noout -ext subjectAltName | grep -q 'DNS:localhost, IP Address:127.0.0.1'"
is "TLS GET via localhost with --cacert" \
    "$(curl -sS --cacert "$C" -o /dev/null -w '%{http_code}' "https://localhost:$port/restconf/data/x")" 200
is "TLS GET via 127.0.0.1 with --cacert" \
    "$(curl -sS --cacert "$C" -o /dev/null -w '%{http_code}' "https://127.0.0.1:$port/restconf/data/x")" 200
check_rc "TLS without the CA fails verification" 60 \
    curl -sS -o /dev/null --cacert "$T/gcert.pem" "https://localhost:$port/restconf/data/x"
l=$(lastlog "$T/ngtls")
like "TLS log: ssl_session_reused field present" "$(field 3 "$l")" '^[.r]$'
like "TLS log: protocol" "$(field 14 "$l")" '^TLSv1\.[23]$'
# Two connections in one curl run (Connection: close): the second resumes
# (TLS 1.3 ticket).
n0=$(wc -l <"$(nginx_log "$T/ngtls")")
curl -sS --cacert "$C" -H 'Connection: close' -o /dev/null -o /dev/null \
    "https://localhost:$port/restconf/data/a" "https://localhost:$port/restconf/data/b"
l2=$(tail -n +$((n0 + 1)) "$(nginx_log "$T/ngtls")")
is "TLS 1.3 ticket resumption: '.' then 'r'" "$(printf '%s\n' "$l2" | cut -f3 | tr '\n' ' ')" ". r "
# Session-id resumption (TLS 1.2, tickets off) through the shared cache.
echo | openssl s_client -connect "127.0.0.1:$port" -CAfile "$C" -tls1_2 -no_ticket \
    -sess_out "$T/ngtls/sess" >"$T/s1.out" 2>&1
echo | openssl s_client -connect "127.0.0.1:$port" -CAfile "$C" -tls1_2 -no_ticket \
    -sess_in "$T/ngtls/sess" >"$T/s2.out" 2>&1
like "TLS 1.2 first handshake is new" "$(cat "$T/s1.out")" '^New, TLSv1\.2'
like "TLS 1.2 session-id resumption" "$(cat "$T/s2.out")" '^Reused, TLSv1\.2'
npid=$(nginx_pid "$T/ngtls")
nginx_stop "$T/ngtls"
check "nginx TLS stopped" gone "$npid"

# -------------------------------------------------------------------- badhttp
bh() {  # bh MODE: starts badhttp in MODE, sets BU
    peer_start "$T/bh-$1" badhttp.py "$1" --max-seconds 30 && BU="http://127.0.0.1:$(peer_port "$T/bh-$1")/x"
}
bh reset && {
    check_rc "badhttp reset: curl sees a reset (56)" 56 curl -sS -m 5 -o /dev/null "$BU"
    peer_stop "$T/bh-reset"; }
bh garbage && {
    curl -sS -m 5 -o /dev/null "$BU" 2>"$T/err"; rc=$?
    like "badhttp garbage: curl rejects the status line (1 or 8)" "$rc" '^(1|8)$'
    check "badhttp garbage: raw answer" sh -c \
        "printf 'GET / HTTP/1.1\r\nHost: x\r\n\r\n' | timeout 5 $PY -c '
import socket,sys
s=socket.create_connection((\"127.0.0.1\",$(peer_port "$T/bh-garbage"))); s.sendall(sys.stdin.buffer.read())
d=b\"\"
while True:
    b=s.recv(100)
    if not b: break
    d+=b
sys.exit(d!=b\"HTTP/1.1 ABC nonsense\r\n\r\n\")'"
    peer_stop "$T/bh-garbage"; }
bh stall && {
    check_rc "badhttp stall: curl times out (28)" 28 curl -sS -m 1 -o /dev/null "$BU"
    peer_stop "$T/bh-stall"; }
bh close && {
    check_rc "badhttp close: empty reply (52)" 52 curl -sS -m 5 -o /dev/null "$BU"
    peer_stop "$T/bh-close"; }
bh truncated && {
    check_rc "badhttp truncated: partial body (18)" 18 curl -sS -m 5 -o "$T/trunc" "$BU"
    is "badhttp truncated: 10 bytes arrived" "$(wc -c <"$T/trunc")" 10
    peer_stop "$T/bh-truncated"; }
bh ok && {
    is "badhttp ok: 200" "$(curl -sS -m 5 -o /dev/null -w '%{http_code}' "$BU")" 200
    pid=$(peer_pid "$T/bh-ok")
    peer_stop "$T/bh-ok"; rc=$?
    is "badhttp exits 0 on SIGTERM" "$rc" 0
    check "badhttp gone" gone "$pid"; }
check "badhttp bounds its lifetime (--max-seconds)" sh -c \
    "timeout 10 $PY '$P/badhttp.py' stall --max-seconds 0.5 >/dev/null"

# ---------------------------------------------------------------- gNMI plain
G=$T/gnmi
check "gnmi_server starts" peer_start "$G" gnmi_server.py --stats "$G/stats.json" --max-seconds 120
gport=$(peer_port "$G")
like "gnmi_server printed its port" "$gport" '^[0-9]+$'
gc() { "$PY" "$P/gnmi_client.py" --target "127.0.0.1:$gport" "$@"; }
out=$(gc capabilities)
like "Capabilities: gNMI 0.10.0" "$out" '"gNMI_version": "0.10.0"'
like "Capabilities: JSON_IETF" "$out" '"encodings": \["JSON_IETF"\]'
like "Capabilities: openconfig-acl" "$out" '"name": "openconfig-acl"'
cat >"$T/acl.json" <<'EOF'
{"openconfig-acl:acl-set":[{"name":"ACL1","type":"ACL_IPV4","config":{"name":"ACL1","type":"ACL_IPV4"}}]}
EOF
AP='/openconfig-acl:acl/acl-sets/acl-set[name=ACL1][type=ACL_IPV4]'
out=$(gc set "$T/acl.json" "$AP")
like "Set: one UpdateResult UPDATE with the path echoed" "$out" \
    '"results": \[\{"op": "UPDATE", "path": "/openconfig-acl:acl/acl-sets/acl-set\[name=ACL1\]\[type=ACL_IPV4\]"\}\]'
out=$(gc get "$AP")
check "Get returns what Set stored" "$PY" -c '
import json,sys
got=json.loads(sys.argv[1]); want=json.load(open(sys.argv[2]))
sys.exit(got["value"]!=want)' "$out" "$T/acl.json"
out=$(gc get /openconfig-acl:acl)
like "Get of a parent returns the entry below" "$out" 'acl-set\[name=ACL1\]'
out=$(gc get /nothing/here 2>&1); rc=$?
is "Get of a missing path fails" "$rc" 1
like "Get of a missing path: NOT_FOUND" "$out" 'NOT_FOUND'
out=$(gc subscribe-once /openconfig-acl:acl)
is "Subscribe ONCE: one update then sync" "$(printf '%s\n' "$out" | wc -l)" 2
like "Subscribe ONCE: the update" "$(printf '%s\n' "$out" | head -1)" '"path": "/openconfig-acl:acl/acl-sets/acl-set\[name=ACL1\]'
like "Subscribe ONCE: sync_response" "$(printf '%s\n' "$out" | tail -1)" '"sync": true'
out=$(gc subscribe-poll /openconfig-acl:acl 2)
is "Subscribe POLL: initial + 2 polls, each with sync" "$(printf '%s\n' "$out" | grep -c '"sync": true')" 3
out=$(gc subscribe-stream / --interval-ms 20 --count 3)
is "Subscribe STREAM SAMPLE: 3 samples after sync" "$(printf '%s\n' "$out" | grep -c '"timestamp"')" 3
check "Subscribe STREAM: timestamps are ns and increase" "$PY" -c '
import json,sys
ts=[json.loads(l)["timestamp"] for l in sys.argv[1].splitlines() if "timestamp" in l]
sys.exit(not (all(t > 10**18 for t in ts) and ts == sorted(ts) and len(set(ts)) == 3))' "$out"
echo '{"broken":' >"$T/bad.json"
out=$(gc set "$T/bad.json" "$AP" 2>&1)
like "Set with invalid JSON: INVALID_ARGUMENT" "$out" 'INVALID_ARGUMENT'
out=$(gc delete "$AP")
like "Set delete: op DELETE" "$out" '"op": "DELETE"'
S=$G/stats.json
is "stats: connections = client runs" "$(jget "$S" 'd["connections"]')" 10
is "stats: rpcs per method" "$(jget "$S" '[d["rpcs"][k] for k in ("Capabilities","Get","Set","Subscribe")]')" "[1, 3, 3, 3]"
is "stats: valid SetRequests" "$(jget "$S" 'd["set_valid"]')" 2
is "stats: set ops" "$(jget "$S" '[d["set_ops"][k] for k in ("update","replace","delete")]')" "[1, 0, 1]"
is "stats: bad requests" "$(jget "$S" 'd["bad_requests"]')" 1
is "stats: subscribe modes" "$(jget "$S" '[d["subscribe_modes"][k] for k in ("ONCE","POLL","STREAM")]')" "[1, 1, 1]"
is "stats: no credentials seen" "$(jget "$S" 'd["with_credentials"]')" 0
gpid=$(peer_pid "$G")
peer_stop "$G"; rc=$?
is "gnmi_server exits 0 on SIGTERM" "$rc" 0
check "gnmi_server gone" gone "$gpid"
check "stats file left complete after exit" jget "$S" 'd["rpcs_total"]'

# ------------------------------------------------- gNMI TLS + password auth
GA=$T/gnmi-auth
export GNMI_TEST_PASSWORD=s3cret-pw
check "gnmi_server TLS + --require-user starts" peer_start "$GA" gnmi_server.py \
    --tls "$T/gcert.pem" "$T/gkey.pem" --require-user admin --stats "$GA/stats.json" --max-seconds 120
gport=$(peer_port "$GA")
gct() { "$PY" "$P/gnmi_client.py" --target "localhost:$gport" --tls "$T/gcert.pem" "$@"; }
out=$(gct capabilities 2>&1); rc=$?
is "no credentials: exit 1" "$rc" 1
like "no credentials: UNAUTHENTICATED" "$out" 'UNAUTHENTICATED'
out=$(gct --user admin --password wrong capabilities 2>&1)
like "wrong password: UNAUTHENTICATED" "$out" 'UNAUTHENTICATED'
out=$(gct --user admin capabilities 2>&1)
like "right credentials over TLS: Capabilities answers" "$out" '"gNMI_version": "0.10.0"'
out=$(gct --user admin set "$T/acl.json" "$AP" 2>&1)
like "right credentials: Set" "$out" '"op": "UPDATE"'
is "stats: unauthenticated" "$(jget "$GA/stats.json" 'd["unauthenticated"]')" 2
is "stats: usernames (no passwords)" "$(jget "$GA/stats.json" 'd["usernames"]')" "{'admin': 3}"
check "stats never hold the password" sh -c "! grep -q -e s3cret-pw -e wrong '$GA/stats.json'"
is "stats: tls" "$(jget "$GA/stats.json" 'd["tls"]')" True
peer_stop "$GA"
unset GNMI_TEST_PASSWORD

# ------------------------------------------------------- gNMI fault injection
GF=$T/gnmi-fault
check "gnmi_server --status-code 14 starts" peer_start "$GF" gnmi_server.py \
    --status-code 14 --delay-ms 50 --stats "$GF/stats.json" --max-seconds 60
gport=$(peer_port "$GF")
out=$(gc capabilities 2>&1)
like "fault: UNAVAILABLE with the percent message" "$out" 'UNAVAILABLE: bad thing: 100%'
is "stats: faults injected" "$(jget "$GF/stats.json" 'd["faults_injected"]')" 1
gfpid=$(peer_pid "$GF")
peer_stop "$GF"
check "gnmi_server bounds its lifetime (--max-seconds)" sh -c \
    "timeout 20 $PY '$P/gnmi_server.py' --max-seconds 0.5 >/dev/null"

check "no peer left running" sh -c "! ps -p '$gpid,$gfpid,$npid' >/dev/null"
done_testing
