#!/bin/bash
# yangblast serve --auth: credentials count only from the request headers
# (never from a chunked trailer or gRPC request trailers), and two of
# them are refused (RESTCONF 400, gNMI UNAUTHENTICATED) rather than one of
# them picked.  RESTCONF with curl and a raw socket (curl cannot send
# trailers); gNMI with a raw HTTP/2 peer on python3-h2.
. "${YB_SRCDIR:-.}/tests/serve/common.sh"
A=/restconf/data/openconfig-acl:acl
export YANGBLAST_SERVE_PASSWORD=s3cret
GOOD="Authorization: Basic $(printf 'admin:s3cret' | base64)"
BAD="Authorization: Basic $(printf 'admin:nope' | base64)"
check "serve --auth admin" start_serve --auth admin --stats "$T/stats.json"

# ---- RESTCONF ---------------------------------------------------------------
is "one good Authorization: 200" "$(rc_code GET $A -H "$GOOD")" 200
is "two good Authorization headers: 400" "$(rc_code GET $A -H "$GOOD" -H "$GOOD")" 400
like "400 says why" "$(cat "$T/body")" 'more than one Authorization header'
is "good then bad: 400 (not the first taken)" "$(rc_code GET $A -H "$GOOD" -H "$BAD")" 400
is "bad then good: 400 (not the last taken)" "$(rc_code GET $A -H "$BAD" -H "$GOOD")" 400
is "PATCH with two: 400, nothing written" \
   "$(rc_code PATCH "$A/acl-sets" -H "$CT" -H "$GOOD" -H "$BAD" -d '{"openconfig-acl:acl-sets":{"acl-set":[{"name":"D","type":"ACL_IPV4"}]}}')" 400
is "and the set is not there" "$(rc_code GET "$A/acl-sets/acl-set=D,ACL_IPV4" -H "$GOOD")" 404

# rc_raw HEAD-HEADERS TRAILER-HEADERS: a chunked PATCH on a raw socket;
# prints the status code.  Header lines are separated by '|'.
rc_raw() {
    "$PY" - "$RP" "$1" "$2" <<'EOF'
import socket, sys
port, head, trail = int(sys.argv[1]), sys.argv[2], sys.argv[3]
body = b'{"openconfig-acl:acl-sets":{"acl-set":[{"name":"TR","type":"ACL_IPV4"}]}}'
lines = lambda s: "".join(h + "\r\n" for h in s.split("|") if h).encode()
req = (b"PATCH /restconf/data/openconfig-acl:acl/acl-sets HTTP/1.1\r\nHost: x\r\n"
       b"Transfer-Encoding: chunked\r\nConnection: close\r\n" + lines(head) + b"\r\n" +
       b"%x\r\n" % len(body) + body + b"\r\n0\r\n" + lines(trail) + b"\r\n")
s = socket.create_connection(("127.0.0.1", port))
s.sendall(req)
s.settimeout(5)
out = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    out += b
print(out.split(b" ", 2)[1].decode() if out.startswith(b"HTTP/1.1 ") else "none")
EOF
}
is "credentials only in a chunked trailer: 401" "$(rc_raw "$CT" "$GOOD")" 401
is "and the set is not there" "$(rc_code GET "$A/acl-sets/acl-set=TR,ACL_IPV4" -H "$GOOD")" 404
is "Content-Type only in the trailer: 415" "$(rc_raw "$GOOD" "$CT")" 415
is "good credentials in the head, a bad one in the trailer: trailer ignored (204)" \
   "$(rc_raw "$CT|$GOOD" "$BAD")" 204
is "the chunked PATCH was applied" "$(rc_code GET "$A/acl-sets/acl-set=TR,ACL_IPV4" -H "$GOOD")" 200

# ---- gNMI ---------------------------------------------------------------------
# g_raw MODE: one Capabilities call on a raw HTTP/2 connection; prints its
# grpc-status (from the response headers or trailers).  MODE: good (the
# metadata in the request headers), trailers (only in request trailers),
# dupuser / duppass (one of them twice, both right), none.
g_raw() {
    "$PY" - "$GP" "$1" <<'EOF'
import socket, sys
import h2.connection, h2.config, h2.events
port, mode = int(sys.argv[1]), sys.argv[2]
cred = [("username", "admin"), ("password", "s3cret")]
hdrs = [(":method", "POST"), (":scheme", "http"), (":authority", "x"),
        (":path", "/gnmi.gNMI/Capabilities"), ("content-type", "application/grpc"),
        ("te", "trailers")]
if mode == "good":
    hdrs += cred
elif mode == "dupuser":
    hdrs += cred + [("username", "admin")]
elif mode == "duppass":
    hdrs += [("password", "s3cret")] + cred
c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
c.initiate_connection()
c.send_headers(1, hdrs)
c.send_data(1, b"\0\0\0\0\0", end_stream=(mode != "trailers"))
if mode == "trailers":
    c.send_headers(1, cred, end_stream=True)
s = socket.create_connection(("127.0.0.1", port))
s.sendall(c.data_to_send())
s.settimeout(5)
status = "none"
done = False
while not done:
    b = s.recv(65536)
    if not b:
        break
    for e in c.receive_data(b):
        if isinstance(e, (h2.events.ResponseReceived, h2.events.TrailersReceived)):
            for k, v in e.headers:
                if k == b"grpc-status":
                    status = v.decode()
        done |= isinstance(e, (h2.events.StreamEnded, h2.events.StreamReset))
    s.sendall(c.data_to_send())
print(status)
EOF
}
is "gNMI metadata in the request headers: OK (0)" "$(g_raw good)" 0
is "gNMI credentials only in request trailers: UNAUTHENTICATED (16)" "$(g_raw trailers)" 16
is "gNMI username twice: UNAUTHENTICATED (16)" "$(g_raw dupuser)" 16
is "gNMI password twice: UNAUTHENTICATED (16)" "$(g_raw duppass)" 16
is "gNMI no credentials: UNAUTHENTICATED (16)" "$(g_raw none)" 16
like "the grpcio client with right credentials: OK" "$(gc --user admin --password s3cret capabilities 2>&1)" '0.10.0'

check_rc "stop" 0 stop_serve
# failures: RESTCONF 4 duplicates + 1 trailer-only = 5 (the 415 and the
# 204 had good head credentials); gNMI 4
is "auth failures counted" "$(jget "$T/stats.json" 'r["auth_failures"]')" 9
unset YANGBLAST_SERVE_PASSWORD
done_testing
