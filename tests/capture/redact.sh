#!/bin/bash
# tests/capture/redact.sh -- credential redaction: every default name
# (Authorization, Proxy-Authorization, Cookie, Set-Cookie, X-Api-Key,
# X-Auth-Token; gRPC authorization, username, password, access_token) and
# the names given with --redact (any case, repeatable) are replaced by
# <redacted> in the corpus, listed in its header, and their values appear
# nowhere: not in the corpus, the text report or the JSON report.
. "$YB_SRCDIR/tests/lib.sh"

# One HTTP/1.1 connection and one gNMI (h2c) connection, each carrying
# every credential name with a value that contains "SECRET".
/usr/bin/python3 - "$YB_SRCDIR/tests/capture" "$T" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
from pcaptool import flow_pcap
out = sys.argv[2]
h1 = (b"GET /restconf/data/x HTTP/1.1\r\nHost: sw\r\n"
      b"Authorization: Basic SECRET-authz\r\nProxy-Authorization: Basic SECRET-proxy\r\n"
      b"Cookie: sid=SECRET-cookie\r\nSet-Cookie: sid=SECRET-setcookie\r\n"
      b"X-Api-Key: SECRET-apikey\r\nX-Auth-Token: SECRET-authtoken\r\n"
      b"X-Tenant-Secret: SECRET-tenant\r\nusername: plain-user\r\n\r\n")
flow_pcap(out + "/h1.pcap", [(0, h1), (1, b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")],
          dport=8080)
def lit(name, value):  # HPACK literal without indexing, new name
    return bytes([0, len(name)]) + name + bytes([len(value)]) + value
def frame(t, fl, sid, body):
    return struct.pack(">I", len(body))[1:] + bytes([t, fl]) + struct.pack(">I", sid) + body
hb = (b"\x83\x86" + lit(b":path", b"/gnmi.gNMI/Get") + lit(b":authority", b"sw")
      + lit(b"content-type", b"application/grpc")
      + lit(b"authorization", b"Bearer SECRET-grpcauth") + lit(b"username", b"SECRET-user")
      + lit(b"password", b"SECRET-pass") + lit(b"access_token", b"SECRET-token")
      + lit(b"x-tenant-secret", b"SECRET-grpctenant"))
cl = (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b"") + frame(1, 4, 1, hb)
      + frame(0, 1, 1, b"\0\0\0\0\0"))
sv = (frame(4, 0, 0, b"") + frame(1, 4, 1, b"\x88" + lit(b"content-type", b"application/grpc"))
      + frame(0, 0, 1, b"\0\0\0\0\0") + frame(1, 5, 1, lit(b"grpc-status", b"0")))
flow_pcap(out + "/gnmi.pcap", [(0, cl), (1, sv)], sport=40001, dport=9339)
PY

# Defaults only: X-Tenant-Secret is kept, everything else redacted.
"$YB" capture -r "$T/h1.pcap" -r "$T/gnmi.pcap" -o "$T/def.ybc" --json "$T/def.json" 2>"$T/def.err"
is "defaults: exit 0" "$?" 0
"$YB" corpus cat --with-header "$T/def.ybc" >"$T/def.jsonl"
is "defaults: 2 records" "$(grep -c '"protocol"' "$T/def.jsonl")" 2
is "defaults: redacted names in the corpus header" \
    "$(head -1 "$T/def.jsonl" | /usr/bin/python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)["yangblast_corpus"]["redactions"])))')" \
    "access_token authorization cookie password proxy-authorization set-cookie username x-api-key x-auth-token"
is "defaults: the secrets left are the unlisted header's" \
    "$(cat "$T/def.jsonl" "$T/def.err" "$T/def.json" | grep -o 'SECRET-[a-z]*' | sort -u | tr '\n' ' ')" \
    "SECRET-grpctenant SECRET-tenant "
is "defaults: a plain HTTP request's 'username' is no gRPC metadata" \
    "$(grep -o '"name":"username","value":"[^"]*"' "$T/def.jsonl" | sort -u | tr '\n' ' ')" \
    '"name":"username","value":"<redacted>" "name":"username","value":"plain-user" '
is "defaults: values replaced by <redacted>" "$(grep -o '"value":"<redacted>"' "$T/def.jsonl" | wc -l)" 10
is "defaults: JSON counts them" "$(jget "$T/def.json" 'r["redacted_values"]')" 10

# --redact, in another case than on the wire, twice.
"$YB" capture -r "$T/h1.pcap" -r "$T/gnmi.pcap" -o "$T/red.ybc" --json "$T/red.json" \
    --redact X-TENANT-SECRET --redact x-other 2>"$T/red.err"
is "--redact: exit 0" "$?" 0
"$YB" corpus cat --with-header "$T/red.ybc" >"$T/red.jsonl"
is "--redact: listed in the corpus header" \
    "$(head -1 "$T/red.jsonl" | /usr/bin/python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)["yangblast_corpus"]["redactions"])))')" \
    "access_token authorization cookie password proxy-authorization set-cookie username x-api-key x-auth-token x-tenant-secret"
is "--redact: no secret anywhere (corpus, report, JSON)" \
    "$(cat "$T/red.jsonl" "$T/red.err" "$T/red.json" | grep -c 'SECRET')" 0
is "--redact: JSON lists the names" "$(jget "$T/red.json" 'sorted(r["redactions"])')" \
    '["access_token","authorization","cookie","password","proxy-authorization","set-cookie","username","x-api-key","x-auth-token","x-tenant-secret"]'
like "--redact: the record keeps the wire spelling of the name" "$(cat "$T/red.jsonl")" \
    '"name":"X-Tenant-Secret","value":"<redacted>"'

# --keep-credentials keeps every value.
"$YB" capture -q -r "$T/h1.pcap" -r "$T/gnmi.pcap" -o "$T/keep.ybc" --keep-credentials
is "--keep-credentials: every secret kept" \
    "$("$YB" corpus cat "$T/keep.ybc" | grep -o 'SECRET-[a-z]*' | sort -u | wc -l)" 12
# Bad uses.
check_rc "--redact with --keep-credentials: exit 2" 2 "$YB" capture -r "$T/h1.pcap" -o "$T/x.ybc" \
    --keep-credentials --redact x-a
like "--redact with --keep-credentials: says why" "$(cat "$T/.out")" \
    'yangblast capture: --redact and --keep-credentials contradict'
check_rc "--redact 'a b': exit 2" 2 "$YB" capture -r "$T/h1.pcap" -o "$T/x.ybc" --redact 'a b'
like "--redact 'a b': says what a name is" "$(cat "$T/.out")" "--redact 'a b': expected a header"
check_rc "--redact '': exit 2" 2 "$YB" capture -r "$T/h1.pcap" -o "$T/x.ybc" --redact ''
done_testing
