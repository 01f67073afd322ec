#!/bin/bash
# gNMI bodies as text: `corpus cat --decode` prints gNMI messages as JSON,
# `corpus import` encodes them back.  The round trip is checked byte for
# byte on every bundled corpus, every corpus made from captures/ and synth
# output of every op and mode; edits are checked with Debian's protoc.
. "$YB_SRCDIR/tests/lib.sh"
PY=/usr/bin/python3
PROTOC=$(command -v protoc || true)
PROTO_DIR=$YB_SRCDIR/src/gnmi
export SOURCE_DATE_EPOCH=1767225600

# roundtrip NAME CORPUS: cat --with-header --decode | import gives the same
# file; prints nothing, records the result.
roundtrip() {
    "$YB" corpus cat --with-header --decode "$2" >"$T/rt.jsonl" 2>"$T/rt.err" &&
        "$YB" corpus import "$T/rt.jsonl" -o "$T/rt.ybc" 2>>"$T/rt.err"
    if cmp -s "$2" "$T/rt.ybc"; then ok "$1: cat --decode | import is byte for byte"
    else not_ok "$1: cat --decode | import is byte for byte"; sed 's/^/# /' "$T/rt.err" | head -5; fi
}

# decoded_count FILE: "<gnmi records> <records with grpc messages>" of a
# decoded JSON-lines file.
decoded_count() {
    $PY -c '
import json, sys
n = d = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("protocol") != "gnmi":
        continue
    n += 1
    d += isinstance(r.get("grpc"), list)
print(n, d)' "$1"
}

# ---- byte for byte: bundled corpora -------------------------------------------
for f in "$YB_SRCDIR"/corpus/*.ybc; do
    roundtrip "bundled $(basename "$f")" "$f"
done
"$YB" corpus cat --decode "$YB_SRCDIR/corpus/gnmi-acl-1000.ybc" >"$T/bundled.jsonl"
is "bundled gNMI corpus: all 1000 bodies decoded" "$(decoded_count "$T/bundled.jsonl")" "1000 1000"

# ---- byte for byte: corpora made from captures/ (as tests/capture does) ------------
C=$YB_SRCDIR/captures
for f in "$C"/*.pcap "$C"/*.pcapng; do
    [ -f "$f" ] || continue
    name=$(basename "$f"); name=${name%.pcap}; name=${name%.pcapng}
    kl=()
    [ -f "$C/$name.keylog" ] && kl=(--keylog "$C/$name.keylog")
    "$YB" capture -q -r "$f" "${kl[@]}" -o "$T/cap.ybc" 2>/dev/null
    roundtrip "capture $name" "$T/cap.ybc"
    case $name in
    gnmi-*)
        "$YB" corpus cat --decode "$T/cap.ybc" >"$T/cap.jsonl"
        set -- $(decoded_count "$T/cap.jsonl")
        if [ "$1" -gt 0 ] && [ "$1" = "$2" ]; then ok "capture $name: all $1 gNMI bodies decoded"
        else not_ok "capture $name: all gNMI bodies decoded (got $2 of $1)"; fi ;;
    esac
done

# ---- byte for byte: synth, every op and mode ------------------------------------------
for op in create replace delete get capabilities; do
    rules=(); case $op in create|replace) rules=(--rules 2) ;; esac
    "$YB" synth acl --proto gnmi --op "$op" --count 3 "${rules[@]}" -o "$T/s.ybc"
    roundtrip "synth gnmi --op $op" "$T/s.ybc"
done
for mode in once poll stream; do
    "$YB" synth acl --proto gnmi --op subscribe --mode "$mode" --count 2 -o "$T/s.ybc"
    roundtrip "synth gnmi subscribe --mode $mode" "$T/s.ybc"
done
for m in PATCH POST PUT; do
    "$YB" synth acl --method "$m" --count 2 --rules 1 -o "$T/s.ybc"
    roundtrip "synth restconf create --method $m" "$T/s.ybc"
done
for op in replace delete get; do
    "$YB" synth acl --op "$op" --count 2 -o "$T/s.ybc"
    roundtrip "synth restconf --op $op" "$T/s.ybc"
done

# ---- the decoded form --------------------------------------------------------------------
"$YB" synth acl --proto gnmi --op subscribe --mode poll --polls 2 --count 1 -o "$T/poll.ybc"
is "POLL: one record, 1 + 2 messages, in order" \
    "$("$YB" corpus cat --decode "$T/poll.ybc" | $PY -c '
import json, sys
r = json.loads(sys.stdin.readline())
print([list(m["SubscribeRequest"])[0] for m in r["grpc"]], r["grpc"][0]["SubscribeRequest"]["subscribe"]["mode"])')" \
    "['subscribe', 'poll', 'poll'] POLL"
"$YB" synth acl --proto gnmi --op subscribe --mode stream --sample-interval 250ms --count 1 -o "$T/st.ybc"
like "STREAM: uint64 sample_interval as a string, enum by name" \
    "$("$YB" corpus cat --decode "$T/st.ybc")" '"mode":"SAMPLE","sample_interval":"250000000"'
like "Set: path string, json_ietf_val inline with its layout" "$(head -1 "$T/bundled.jsonl")" \
    '"grpc":\[\{"SetRequest":\{"update":\[\{"path":"/openconfig-acl:acl/acl-sets","val":\{"json_ietf_val":\{"openconfig-acl:acl-set":\[\{"name":"YB_ACL_000001".*"json_format":"indent4"'
if grep -q '"body' "$T/bundled.jsonl"; then not_ok "Set: no body key next to grpc"; else ok "Set: no body key next to grpc"; fi

# ---- edits reach the wire (checked by protoc) ---------------------------------------------------
if [ -z "$PROTOC" ]; then
    ok "edits checked with protoc # SKIP protoc not installed (Debian: protobuf-compiler)"
else
    # body_message CORPUS INDEX FILE: writes the first gRPC message of record
    # INDEX's body to FILE.
    body_message() {
        "$YB" corpus cat "$1" | $PY -c '
import base64, json, sys
lines = sys.stdin.readlines()
r = json.loads(lines[int(sys.argv[1])])
b = base64.b64decode(r["body_base64"])
assert b[0] == 0
n = int.from_bytes(b[1:5], "big")
open(sys.argv[2], "wb").write(b[5:5 + n])' "$2" "$3"
    }
    # Change one value, one path key (with characters the path string must
    # escape) and the Get encoding with python's json module.
    $PY - "$T/bundled.jsonl" "$T/edited.jsonl" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
r = json.loads(lines[0])
u = r["grpc"][0]["SetRequest"]["update"][0]
u["val"]["json_ietf_val"]["openconfig-acl:acl-set"][0]["config"]["description"] = "edited by python"
u["path"] = "/openconfig-acl:acl/acl-sets/acl-set[name=A\\]B\\\\C/D=E][type=ACL_IPV4]"
lines[0] = json.dumps(r, separators=(",", ":"))
open(sys.argv[2], "w").write("\n".join(lines[:3]) + "\n")
EOF
    check "edited decoded form imports" "$YB" corpus import "$T/edited.jsonl" -o "$T/edited.ybc"
    body_message "$T/edited.ybc" 0 "$T/edited.bin"
    "$PROTOC" --decode=gnmi.SetRequest -I "$PROTO_DIR" gnmi.proto <"$T/edited.bin" >"$T/edited.txt" 2>&1
    TXT=$(cat "$T/edited.txt")
    like "edit: protoc sees the new description in json_ietf_val" "$TXT" 'json_ietf_val: ".*edited by python'
    like "edit: json_ietf_val still indented by 4" "$TXT" 'json_ietf_val: "\{\\n    \\"openconfig-acl:acl-set'
    like "edit: escaped key value decoded as A]B\\C/D=E" "$TXT" 'value: "A]B\\\\C/D=E"'
    like "edit: second key kept" "$TXT" 'value: "ACL_IPV4"'
    is "edit: other records unchanged" \
        "$("$YB" corpus cat "$T/edited.ybc" | tail -2 | md5sum)" \
        "$("$YB" corpus cat "$YB_SRCDIR/corpus/gnmi-acl-1000.ybc" | sed -n 2,3p | md5sum)"
    like "edit: cat --decode prints the escaped path back" "$("$YB" corpus cat --decode "$T/edited.ybc" | head -1)" \
        '"path":"/openconfig-acl:acl/acl-sets/acl-set\[name=A\\\\\]B\\\\\\\\C/D=E\]\[type=ACL_IPV4\]"'

    # Hand-written TypedValues in the proto3 JSON mapping.
    cat >"$T/typed.jsonl" <<'EOF'
{"protocol":"gnmi","method":"POST","path":"/gnmi.gNMI/Set","grpc":[{"SetRequest":{"prefix":"openconfig:/system","update":[{"path":"/a","val":{"int_val":"-9007199254740993"}},{"path":"/b","val":{"uint_val":"18446744073709551615"}},{"path":"/c","val":{"bytes_val":"AAEC/w=="}},{"path":"/d","val":{"double_val":1.5}},{"path":"/e","val":{"bool_val":true}},{"path":"/f","val":{"leaflist_val":{"element":[{"string_val":"x"},{"ascii_val":"y"}]}}},{"path":"/g","val":{"json_val":[1,"two",{"3":null}]}},{"path":"/h","val":{"decimal_val":{"digits":"12345","precision":2}}}],"delete":["/x[k=v]",{"target":"t1","elem":"/y"}]}}]}
EOF
    check "typed values import" "$YB" corpus import "$T/typed.jsonl" -o "$T/typed.ybc"
    body_message "$T/typed.ybc" 0 "$T/typed.bin"
    TXT=$("$PROTOC" --decode=gnmi.SetRequest -I "$PROTO_DIR" gnmi.proto <"$T/typed.bin" 2>&1)
    like "typed: prefix origin" "$TXT" 'origin: "openconfig"'
    like "typed: int64 from a string" "$TXT" 'int_val: -9007199254740993'
    like "typed: uint64 max" "$TXT" 'uint_val: 18446744073709551615'
    like "typed: bytes from base64" "$TXT" 'bytes_val: "\\000\\001\\002\\377"'
    like "typed: double" "$TXT" 'double_val: 1.5'
    like "typed: bool" "$TXT" 'bool_val: true'
    like "typed: leaf-list" "$TXT" 'ascii_val: "y"'
    like "typed: json_val compact" "$TXT" 'json_val: "\[1,\\"two\\",\{\\"3\\":null\}\]"'
    like "typed: decimal64" "$TXT" 'digits: 12345'
    like "typed: delete with target" "$TXT" 'target: "t1"'
    roundtrip "typed values" "$T/typed.ybc"
    like "typed: printed back in the same form" "$("$YB" corpus cat --decode "$T/typed.ybc")" \
        '"prefix":"openconfig:/system","delete":\["/x\[k=v\]",\{"elem":"/y","target":"t1"\}\],"update":\[\{"path":"/a","val":\{"int_val":"-9007199254740993"\}.*"uint_val":"18446744073709551615".*"bytes_val":"AAEC/w==".*"json_val":\[1,"two",\{"3":null\}\]'
fi

# ---- bodies that keep their bytes -------------------------------------------------------------------
# mkrec BODY_HEX: a gNMI Set record whose body is the given bytes.
mkrec() {
    $PY -c '
import base64, json, sys
b = bytes.fromhex(sys.argv[1])
print(json.dumps({"protocol": "gnmi", "method": "POST", "path": "/gnmi.gNMI/Set",
                  "body_base64": base64.b64encode(b).decode()}))' "$1"
}
{
    mkrec 010000000412020a00          # compressed flag
    mkrec 0000000003f80601            # unknown field 111 in SetRequest
    mkrec 000000000422000a00          # update (4) before prefix (1): not protobuf-c's order
    mkrec 00000000020a0000000000      # two messages, the second truncated in its prefix
    mkrec 00000000000000000000        # two empty SetRequests: decodable
} >"$T/raw.jsonl"
"$YB" corpus import "$T/raw.jsonl" -o "$T/raw.ybc"
"$YB" corpus cat --decode "$T/raw.ybc" >"$T/raw.dec"
is "kept raw: grpc null with the reason, per record" "$($PY -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r["grpc"] is None, "body_base64" in r, r.get("grpc_raw_reason", "-").split(" (")[0][:40])' "$T/raw.dec")" \
"True True message 0 has the gRPC compressed flag
True True unknown field 111 in gnmi.SetRequest
True True re-encoding differs from the recorded by
True True truncated gRPC prefix at byte 7
False False -"
roundtrip "kept-raw bodies" "$T/raw.ybc"

# A hostile body nesting leaf-lists 100000 deep (1.4 MB): kept raw with its
# reason, not a stack overflow in protobuf-c's recursive unpack.
$PY - >"$T/deep.jsonl" <<'EOF'
import base64, json
def varint(n):
    out = b""
    while True:
        b, n = n & 0x7f, n >> 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])
def ld(field, payload):
    return varint(field << 3 | 2) + varint(len(payload)) + payload
tv = ld(12, b"x")                      # TypedValue.ascii_val
for _ in range(100000):
    tv = ld(8, ld(1, tv))              # TypedValue.leaflist_val.element
req = ld(4, ld(3, tv))                 # SetRequest.update.val
body = b"\0" + len(req).to_bytes(4, "big") + req
print(json.dumps({"protocol": "gnmi", "method": "POST", "path": "/gnmi.gNMI/Set",
                  "body_base64": base64.b64encode(body).decode()}))
EOF
"$YB" corpus import "$T/deep.jsonl" -o "$T/deep.ybc"
"$YB" corpus cat --decode "$T/deep.ybc" >"$T/deep.dec" 2>"$T/deep.err"
is "deep nesting: cat --decode exits 0" "$?" 0
is "deep nesting: kept raw with the reason" "$($PY -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["grpc"], r["grpc_raw_reason"])' "$T/deep.dec" 2>&1)" \
    "None message 0 is not a valid gnmi.SetRequest (or nests deeper than 64)"

# ---- malformed decoded JSON: line and key named, nothing written --------------------------------------
bad() { # bad DESC REGEX JSON
    printf '%s\n' '{"protocol":"gnmi","method":"POST","path":"/gnmi.gNMI/Get","grpc":[{"GetRequest":{}}]}' "$3" >"$T/bad.jsonl"
    rm -f "$T/bad.ybc"
    "$YB" corpus import "$T/bad.jsonl" -o "$T/bad.ybc" 2>"$T/bad.err"
    local rc=$?
    if [ "$rc" = 2 ] && [ ! -e "$T/bad.ybc" ] && grep -Eq -- "$2" "$T/bad.err"; then ok "import refuses $1"
    else not_ok "import refuses $1 (exit $rc)"; sed 's/^/# /' "$T/bad.err" | head -3; fi
}
G='{"protocol":"gnmi","method":"POST","path":"/gnmi.gNMI/Set","grpc":'
bad "an unterminated key" 'bad.jsonl:2: key "grpc"\[0\]\.SetRequest\.delete\[0\]: malformed gNMI path "/a\[k=v"' \
    "$G"'[{"SetRequest":{"delete":["/a[k=v"]}}]}'
bad "an unknown field" 'bad.jsonl:2: key "grpc"\[0\]\.SetRequest\.updates: unknown field of gnmi.SetRequest' \
    "$G"'[{"SetRequest":{"updates":[]}}]}'
bad "the wrong message type" 'bad.jsonl:2: key "grpc"\[0\]: must be \{"SetRequest": \{\.\.\.\}\}' \
    "$G"'[{"GetRequest":{}}]}'
bad "an enum name" 'bad.jsonl:2: key "grpc"\[0\]\.GetRequest\.encoding: must be one of JSON, BYTES, PROTO, ASCII, JSON_IETF' \
    '{"protocol":"gnmi","method":"POST","path":"/gnmi.gNMI/Get","grpc":[{"GetRequest":{"encoding":"XML"}}]}'
bad "uint64 out of range" 'key "grpc"\[0\]\.SetRequest\.update\[0\]\.val\.uint_val: must be an integer in 0\.\.18446744073709551615' \
    "$G"'[{"SetRequest":{"update":[{"path":"/a","val":{"uint_val":"18446744073709551616"}}]}}]}'
bad "two values in a TypedValue" 'update\[0\]\.val\.string_val: only one of a oneof' \
    "$G"'[{"SetRequest":{"update":[{"path":"/a","val":{"int_val":1,"string_val":"x"}}]}}]}'
bad "grpc with body" 'key "grpc": give the body either' "$G"'[],"body":"x"}'
bad "grpc on a RESTCONF record" 'key "grpc": gNMI messages need "protocol": "gnmi"' \
    '{"protocol":"restconf","method":"POST","path":"/gnmi.gNMI/Set","grpc":[]}'
bad "grpc on another RPC path" 'key "grpc": gNMI messages need the record.s path to be /gnmi.gNMI/Set' \
    '{"protocol":"gnmi","method":"POST","path":"/gnoi.system.System/Ping","grpc":[]}'
bad "a bad json_format" 'val\.json_format: must be "compact", "spaced" or "indentN"' \
    "$G"'[{"SetRequest":{"update":[{"path":"/a","val":{"json_ietf_val":1,"json_format":"tabs"}}]}}]}'
bad "grpc not an array" 'key "grpc": must be an array' "$G"'{"SetRequest":{}}}'

done_testing
