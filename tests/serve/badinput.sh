#!/bin/bash
# yangblast serve under bad input: garbage bytes, HTTP/2 preface errors,
# truncated gRPC frames, oversized bodies.  Each gets an error answer or a
# closed connection, and the server keeps serving the next client.
. "${YB_SRCDIR:-.}/tests/serve/common.sh"
A=/restconf/data/openconfig-acl:acl

# send PORT FILE: writes FILE, half-closes, prints what came back (<= 2 s).
send() {
    "$PY" -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(open(sys.argv[2], "rb").read())
s.shutdown(socket.SHUT_WR)
s.settimeout(2)
out = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
except (socket.timeout, ConnectionResetError):
    pass
sys.stdout.write(out.decode("latin-1"))' "$1" "$2"
}

check "serve --max-body 64k" start_serve --max-body 64k
head -c 3000 /dev/urandom >"$T/garbage"
out=$(send "$RP" "$T/garbage")
like "RESTCONF garbage: 400 or close" "${out:-closed}" '^(HTTP/1.1 400|closed)'
is "RESTCONF still serves" "$(rc_code GET $A)" 200
printf 'GET /restconf/data HTTP/1.1\r\nHost: x\r\nContent-Length: zz\r\n\r\n' >"$T/badcl"
like "bad Content-Length: 400" "$(send "$RP" "$T/badcl")" '^HTTP/1.1 400'
head -c 100000 /dev/zero | tr '\0' 'a' | sed 's/^/{"x":"/;s/$/"}/' >"$T/big.json"
is "RESTCONF body over --max-body: 413" "$(rc_code PATCH $A -H "$CT" --data-binary @"$T/big.json")" 413
like "413 is an ietf-restconf error" "$(cat "$T/body")" 'too-big'
is "RESTCONF still serves" "$(rc_code GET $A)" 200

out=$(send "$GP" "$T/garbage" | od -An -c | head -c 200)
is "gNMI garbage preface: closed (GOAWAY at most)" "$(kill -0 "$SPID" && echo alive)" alive
printf 'GET / HTTP/1.1\r\nHost: x\r\n\r\n' >"$T/h1"
send "$GP" "$T/h1" >/dev/null
like "gNMI after an HTTP/1.1 request on its port: still serves" "$(gc capabilities)" '0.10.0'

# Truncated gRPC frame: the prefix announces 100 bytes, 3 follow.
printf '\0\0\0\0\144abc' >"$T/trunc.bin"
U="http://127.0.0.1:$GP/gnmi.gNMI"
out=$(timeout 10 nghttp -v -d "$T/trunc.bin" -H 'content-type: application/grpc' -H 'te: trailers' "$U/Set" 2>&1)
like "truncated gRPC message: INTERNAL (13)" "$out" 'grpc-status: 13'
# A well-framed message that is not a SetRequest.
printf '\0\0\0\0\3\377\377\377' >"$T/junk.bin"
out=$(timeout 10 nghttp -v -d "$T/junk.bin" -H 'content-type: application/grpc' -H 'te: trailers' "$U/Get" 2>&1)
like "undecodable protobuf: INTERNAL (13)" "$out" 'grpc-status: 13'
# Compressed flag set.
printf '\1\0\0\0\0' >"$T/comp.bin"
out=$(timeout 10 nghttp -v -d "$T/comp.bin" -H 'content-type: application/grpc' -H 'te: trailers' "$U/Get" 2>&1)
like "compressed flag: an error status" "$out" 'grpc-status: 1[23]'
# Oversized gRPC body.
"$PY" -c 'import sys; b = b"x" * 100000; sys.stdout.buffer.write(b"\0" + len(b).to_bytes(4, "big") + b)' >"$T/huge.bin"
out=$(timeout 10 nghttp -v -d "$T/huge.bin" -H 'content-type: application/grpc' -H 'te: trailers' "$U/Set" 2>&1)
like "gRPC body over --max-body: RESOURCE_EXHAUSTED (8)" "$out" 'grpc-status: 8'
out=$(timeout 10 nghttp -v -d "$T/comp.bin" -H 'content-type: text/plain' "$U/Get" 2>&1)
like "not application/grpc: HTTP 415" "$out" ':status: 415'
out=$(timeout 10 nghttp -v -d "$T/comp.bin" -H 'content-type: application/grpc' "$U/Nope" 2>&1)
like "unknown RPC: UNIMPLEMENTED (12)" "$out" 'grpc-status: 12'
# A client that vanishes mid-request.
printf 'PATCH /restconf/data/openconfig-acl:acl HTTP/1.1\r\nHost: x\r\nContent-Type: application/yang-data+json\r\nContent-Length: 1000\r\n\r\n{"acl' >"$T/cut"
send "$RP" "$T/cut" >/dev/null
like "gNMI still serves" "$(gc capabilities)" '0.10.0'
is "RESTCONF still serves" "$(rc_code GET $A)" 200
check_rc "SIGTERM stops it cleanly" 0 stop_serve
like "bad input counted" "$(cat "$SOUT")" 'bad input: [1-9]'
done_testing
