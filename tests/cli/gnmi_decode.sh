#!/bin/bash
# The gNMI encoding, decoded independently: corpus cat -> base64 -> gRPC
# unframing in Python -> Debian's protoc --decode with the project's .proto.
. "$YB_SRCDIR/tests/lib.sh"
PY=/usr/bin/python3
PROTOC=$(command -v protoc || true)
if [ -z "$PROTOC" ]; then
    ok "gNMI bodies decode with protoc # SKIP protoc not installed (Debian: protobuf-compiler)"
    done_testing
    exit $?
fi
PROTO_DIR=$YB_SRCDIR/src/gnmi

# frames CORPUS PREFIX: writes the gRPC messages of the first record's body
# to PREFIX.0, PREFIX.1, ... and prints their count.  Fails on bad framing.
frames() {
    "$YB" corpus cat "$1" | $PY -c '
import base64, json, sys
rec = json.loads(sys.stdin.readline())
body = base64.b64decode(rec["body_base64"]) if "body_base64" in rec else rec.get("body", "").encode()
off = n = 0
while off < len(body):
    assert len(body) - off >= 5, "truncated gRPC prefix"
    assert body[off] == 0, "compressed flag set"
    size = int.from_bytes(body[off + 1:off + 5], "big")
    msg = body[off + 5:off + 5 + size]
    assert len(msg) == size, "truncated gRPC message"
    open("%s.%d" % (sys.argv[1], n), "wb").write(msg)
    off += 5 + size
    n += 1
print(n)
' "$2"
}

# decode TYPE FILE: protoc's text form of FILE as gnmi.TYPE (to stdout).
decode() {
    "$PROTOC" --decode="gnmi.$1" -I "$PROTO_DIR" gnmi.proto <"$2"
}

# json_val TEXTFILE: prints the first json_ietf_val of a decoded message,
# unescaped, so it can be parsed as JSON.
json_val_check() {
    $PY -c '
import codecs, json, re, sys
text = open(sys.argv[1]).read()
m = re.search(r"json_ietf_val: \"((?:[^\"\\]|\\.)*)\"", text)
assert m, "no json_ietf_val"
raw = codecs.escape_decode(m.group(1).encode("latin-1"))[0]
doc = json.loads(raw.decode("utf-8"))
sets = doc["openconfig-acl:acl-set"]
assert len(sets) == 1
s = sets[0]
assert s["name"] == sys.argv[2], s["name"]
assert s["config"]["name"] == sys.argv[2]
entries = s["acl-entries"]["acl-entry"]
assert len(entries) == int(sys.argv[3]), len(entries)
assert [e["sequence-id"] for e in entries] == list(range(1, len(entries) + 1))
for e in entries:
    assert "source-address" in e["ipv4"]["config"]
    assert e["actions"]["config"]["forwarding-action"].startswith("openconfig-acl:")
' "$@"
}

# ---- Set: update ---------------------------------------------------------------
check "synth gnmi create" "$YB" synth acl --proto gnmi --count 1 -o "$T/set.ybc"
is "create: one gRPC message" "$(frames "$T/set.ybc" "$T/set")" 1
check "create: protoc decodes gnmi.SetRequest" decode SetRequest "$T/set.0"
decode SetRequest "$T/set.0" >"$T/set.txt" 2>&1
TXT=$(cat "$T/set.txt")
like "create: an update" "$TXT" '^update \{'
like "create: path elem openconfig-acl:acl" "$TXT" 'name: "openconfig-acl:acl"'
like "create: path elem acl-sets" "$TXT" 'name: "acl-sets"'
like "create: json_ietf_val names YB_ACL_000001" "$TXT" 'json_ietf_val: ".*YB_ACL_000001'
if printf '%s\n' "$TXT" | grep -Eq '^(replace|delete) '; then not_ok "create: no replace or delete"
else ok "create: no replace or delete"; fi
check "create: json_ietf_val is the ACL set with 13 rules" json_val_check "$T/set.txt" YB_ACL_000001 13
"$PROTOC" --encode=gnmi.SetRequest -I "$PROTO_DIR" gnmi.proto <"$T/set.txt" >"$T/set.re"
check "create: protoc re-encodes the same bytes" cmp "$T/set.0" "$T/set.re"

check "synth gnmi create --rules 2 --name-prefix" "$YB" synth acl --proto gnmi --count 3 \
    --rules 2 --name-prefix LAB -o "$T/set2.ybc"
frames "$T/set2.ybc" "$T/set2" >/dev/null
decode SetRequest "$T/set2.0" >"$T/set2.txt"
check "create: --rules and --name-prefix reach the payload" json_val_check "$T/set2.txt" LAB_000001 2

# ---- Set: replace ---------------------------------------------------------------
check "synth gnmi replace" "$YB" synth acl --proto gnmi --op replace --count 1 -o "$T/rep.ybc"
frames "$T/rep.ybc" "$T/rep" >/dev/null
decode SetRequest "$T/rep.0" >"$T/rep.txt" 2>&1
TXT=$(cat "$T/rep.txt")
like "replace: a replace" "$TXT" '^replace \{'
like "replace: path keyed by name" "$TXT" 'value: "YB_ACL_000001"'
like "replace: path keyed by type" "$TXT" 'value: "ACL_IPV4"'
check "replace: json_ietf_val is the ACL set" json_val_check "$T/rep.txt" YB_ACL_000001 13
"$PROTOC" --encode=gnmi.SetRequest -I "$PROTO_DIR" gnmi.proto <"$T/rep.txt" >"$T/rep.re"
check "replace: protoc re-encodes the same bytes" cmp "$T/rep.0" "$T/rep.re"

# ---- Set: delete ----------------------------------------------------------------
check "synth gnmi delete" "$YB" synth acl --proto gnmi --op delete --count 1 -o "$T/del.ybc"
frames "$T/del.ybc" "$T/del" >/dev/null
check "delete: protoc decodes gnmi.SetRequest" decode SetRequest "$T/del.0"
decode SetRequest "$T/del.0" >"$T/del.txt" 2>&1
TXT=$(cat "$T/del.txt")
like "delete: a delete" "$TXT" '^delete \{'
like "delete: path elem openconfig-acl:acl" "$TXT" 'name: "openconfig-acl:acl"'
like "delete: path elem acl-set" "$TXT" 'name: "acl-set"'
like "delete: key name" "$TXT" 'key: "name"'
like "delete: key value YB_ACL_000001" "$TXT" 'value: "YB_ACL_000001"'
if printf '%s\n' "$TXT" | grep -q 'json_ietf_val'; then not_ok "delete: no value"
else ok "delete: no value"; fi

# ---- Get ----------------------------------------------------------------------------
check "synth gnmi get" "$YB" synth acl --proto gnmi --op get --count 2 -o "$T/get.ybc"
"$YB" corpus cat "$T/get.ybc" | tail -1 >"$T/get2.jsonl"
frames "$T/get.ybc" "$T/get" >/dev/null
check "get: protoc decodes gnmi.GetRequest" decode GetRequest "$T/get.0"
TXT=$(decode GetRequest "$T/get.0" 2>&1)
like "get: encoding JSON_IETF" "$TXT" '^encoding: JSON_IETF$'
like "get: path elem acl-sets" "$TXT" 'name: "acl-sets"'
like "get: key value YB_ACL_000001" "$TXT" 'value: "YB_ACL_000001"'
like "get: recorded rpc path" "$(cat "$T/get2.jsonl")" '"path":"/gnmi.gNMI/Get"'

# ---- Capabilities ------------------------------------------------------------------
check "synth gnmi capabilities" "$YB" synth acl --proto gnmi --op capabilities --count 1 -o "$T/cap.ybc"
is "capabilities: one message" "$(frames "$T/cap.ybc" "$T/cap")" 1
is "capabilities: empty CapabilityRequest" "$(stat -c %s "$T/cap.0")" 0
check "capabilities: protoc decodes gnmi.CapabilityRequest" decode CapabilityRequest "$T/cap.0"

# ---- Subscribe ------------------------------------------------------------------------
check "synth gnmi subscribe stream" "$YB" synth acl --proto gnmi --op subscribe --mode stream \
    --sample-interval 500ms --count 1 -o "$T/sub.ybc"
is "subscribe stream: one message" "$(frames "$T/sub.ybc" "$T/sub")" 1
TXT=$(decode SubscribeRequest "$T/sub.0" 2>&1)
# STREAM is the list mode's zero value, so proto3 leaves it out.
if printf '%s\n' "$TXT" | grep -q 'mode: \(ONCE\|POLL\)'; then not_ok "subscribe stream: list mode STREAM"
else ok "subscribe stream: list mode STREAM"; fi
like "subscribe stream: SAMPLE" "$TXT" 'mode: SAMPLE'
like "subscribe stream: 500 ms in ns" "$TXT" 'sample_interval: 500000000'
like "subscribe stream: encoding JSON_IETF" "$TXT" 'encoding: JSON_IETF'
like "subscribe stream: path acl-sets" "$TXT" 'name: "acl-sets"'

check "synth gnmi subscribe poll" "$YB" synth acl --proto gnmi --op subscribe --mode poll \
    --polls 3 --count 1 -o "$T/poll.ybc"
is "subscribe poll: 1 + 3 messages" "$(frames "$T/poll.ybc" "$T/poll")" 4
like "subscribe poll: list mode POLL" "$(decode SubscribeRequest "$T/poll.0" 2>&1)" 'mode: POLL'
for i in 1 2 3; do
    like "subscribe poll: message $i is a Poll" "$(decode SubscribeRequest "$T/poll.$i" 2>&1)" '^poll \{'
done

check "synth gnmi subscribe once" "$YB" synth acl --proto gnmi --op subscribe --count 1 -o "$T/once.ybc"
is "subscribe once: one message" "$(frames "$T/once.ybc" "$T/once")" 1
TXT=$(decode SubscribeRequest "$T/once.0" 2>&1)
like "subscribe once: list mode ONCE" "$TXT" '^  mode: ONCE$'

done_testing
