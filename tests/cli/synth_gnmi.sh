#!/bin/bash
# synth gnmi --set-request: a gnmic-style request file becomes a corpus of
# SetRequests, checked with protoc and by replaying it against `yangblast
# serve` (the datastore holds what the file said, seen over RESTCONF).
. "${YB_SRCDIR:-.}/tests/serve/common.sh"
PROTOC=$(command -v protoc || true)
PROTO_DIR=$YB_SRCDIR/src/gnmi
SETS='/openconfig-acl:acl/acl-sets'

mkdir -p "$T/req/values"
cat >"$T/req/create.json" <<'EOF'
{"updates": [{"path": "/openconfig-acl:acl/acl-sets/acl-set[name=S1][type=ACL_IPV4]",
              "value": {"openconfig-acl:acl-set": [{"name": "S1", "type": "openconfig-acl:ACL_IPV4",
                        "config": {"name": "S1", "type": "openconfig-acl:ACL_IPV4",
                                   "description": "from a request file"}}]},
              "encoding": "json_ietf"}],
 "replaces": [{"path": "/openconfig-acl:acl/acl-sets/acl-set[name=S2][type=ACL_IPV4]",
               "value-file": "values/s2.json"}]}
EOF
cat >"$T/req/values/s2.json" <<'EOF'
{"openconfig-acl:acl-set": [{"name": "S2", "type": "openconfig-acl:ACL_IPV4",
  "config": {"name": "S2", "type": "openconfig-acl:ACL_IPV4", "description": "from a value file"}}]}
EOF
cat >"$T/req/delete.json" <<'EOF'
{"deletes": ["/openconfig-acl:acl/acl-sets/acl-set[name=S1][type=ACL_IPV4]"]}
EOF

check "synth gnmi --set-request --count 3" "$YB" synth gnmi --set-request "$T/req/create.json" \
    --count 3 --authority sw1 -o "$T/create.ybc"
"$YB" corpus cat --decode "$T/create.ybc" >"$T/create.jsonl"
is "three copies, in order, Set records" "$($PY -c '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
print(len(rs), [r["conn_order"] for r in rs], {r["path"] for r in rs}, {r["authority"] for r in rs},
      len({json.dumps(r["grpc"]) for r in rs}))' "$T/create.jsonl")" \
    "3 [0, 1, 2] {'/gnmi.gNMI/Set'} {'sw1'} 1"
is "update and replace, values inline, paths kept" "$($PY -c '
import json, sys
m = json.loads(open(sys.argv[1]).readline())["grpc"][0]["SetRequest"]
u, r = m["update"][0], m["replace"][0]
print(u["path"], u["val"]["json_ietf_val"]["openconfig-acl:acl-set"][0]["config"]["description"])
print(r["path"], r["val"]["json_ietf_val"]["openconfig-acl:acl-set"][0]["config"]["description"])' "$T/create.jsonl")" \
"/openconfig-acl:acl/acl-sets/acl-set[name=S1][type=ACL_IPV4] from a request file
/openconfig-acl:acl/acl-sets/acl-set[name=S2][type=ACL_IPV4] from a value file"
like "header names the request file" "$("$YB" corpus info "$T/create.ybc")" \
    'source: +synth gnmi --set-request .*create.json --count 3'

if [ -n "$PROTOC" ]; then
    "$YB" corpus cat "$T/create.ybc" | head -1 | $PY -c '
import base64, json, sys
b = base64.b64decode(json.loads(sys.stdin.readline())["body_base64"])
assert b[0] == 0 and int.from_bytes(b[1:5], "big") == len(b) - 5
sys.stdout.buffer.write(b[5:])' >"$T/create.bin"
    TXT=$("$PROTOC" --decode=gnmi.SetRequest -I "$PROTO_DIR" gnmi.proto <"$T/create.bin" 2>&1)
    like "protoc: update json_ietf_val, compact" "$TXT" \
        'json_ietf_val: "\{\\"openconfig-acl:acl-set\\":\[\{\\"name\\":\\"S1\\",'
    like "protoc: replace from the value file" "$TXT" 'from a value file'
    like "protoc: key value S2" "$TXT" 'value: "S2"'
else
    ok "protoc checks # SKIP protoc not installed"
fi

# --encoding json, ascii values, union-replaces and a prefix.
cat >"$T/req/other.json" <<'EOF'
{"prefix": "openconfig:/system",
 "updates": [{"path": "config/hostname", "value": "sw1"},
             {"path": "config/motd-banner", "value": "hello", "encoding": "ASCII"}],
 "union-replaces": [{"path": "config/domain-name", "value": "lab"}]}
EOF
check "--encoding json" "$YB" synth gnmi --set-request "$T/req/other.json" --encoding json -o "$T/other.ybc"
like "prefix with origin, json_val, ascii_val, union_replace" "$("$YB" corpus cat --decode "$T/other.ybc")" \
    '"prefix":"openconfig:/system","update":\[\{"path":"/config/hostname","val":\{"json_val":"sw1"\}\},\{"path":"/config/motd-banner","val":\{"ascii_val":"hello"\}\}\],"union_replace":\[\{"path":"/config/domain-name","val":\{"json_val":"lab"\}\}\]'

# ---- YAML request files (gnmic's usual form) ------------------------------------------
cat >"$T/req/create.yaml" <<'EOF'
# the same request as create.json
updates:
  - path: "/openconfig-acl:acl/acl-sets/acl-set[name=S1][type=ACL_IPV4]"
    value:
      openconfig-acl:acl-set:
        - name: S1
          type: openconfig-acl:ACL_IPV4
          config: {name: S1, type: "openconfig-acl:ACL_IPV4", description: from a request file}
    encoding: json_ietf
replaces:
  - path: /openconfig-acl:acl/acl-sets/acl-set[name=S2][type=ACL_IPV4]
    value-file: values/s2.json
EOF
check "synth gnmi from YAML" "$YB" synth gnmi --set-request "$T/req/create.yaml" --count 3 \
    --authority sw1 -o "$T/create-yaml.ybc"
is "YAML and JSON request files give the same records" \
    "$("$YB" corpus cat "$T/create-yaml.ybc" | md5sum)" "$("$YB" corpus cat "$T/create.ybc" | md5sum)"
cat >"$T/req/types.yml" <<'EOF'
updates:
  - path: /a
    value: {i: 12, n: -3, f: 1.5, t: true, T: TRUE, z: ~, e: , s: "1", y: yes, o: 007, l: [1, two]}
EOF
"$YB" synth gnmi --set-request "$T/req/types.yml" -o "$T/types.ybc"
like "YAML scalars typed as JSON reads them; quoted, yes and 007 stay strings" \
    "$("$YB" corpus cat --decode "$T/types.ybc")" \
    '"json_ietf_val":\{"i":12,"n":-3,"f":1.5,"t":true,"T":true,"z":null,"e":null,"s":"1","y":"yes","o":"007","l":\[1,"two"\]\}'

# ---- replayed against serve: the datastore holds the file's values ------------------
if start_serve; then
    timeout 60 "$YB" run "$T/create.ybc" --target "grpc://127.0.0.1:$GP" -q -n 3 \
        --json "$T/run1.json" >"$T/run1.out" 2>&1
    is "run create: exit 0, 3 ok" "$?:$(jget "$T/run1.json" 'r["summary"]["requests_ok"]')" "0:3"
    is "serve: S1 created by the update" "$(rc_code GET "/restconf/data$SETS/acl-set=S1,ACL_IPV4/config/description")" 200
    like "serve: S1 description" "$(cat "$T/body")" 'from a request file'
    rc_code GET "/restconf/data$SETS/acl-set=S2,ACL_IPV4/config/description" >/dev/null
    like "serve: S2 description from the value file" "$(cat "$T/body")" 'from a value file'
    check "synth gnmi delete" "$YB" synth gnmi --set-request "$T/req/delete.json" -o "$T/delete.ybc"
    timeout 60 "$YB" run "$T/delete.ybc" --target "grpc://127.0.0.1:$GP" -q -n 1 >/dev/null 2>&1
    is "serve: S1 deleted" "$(rc_code GET "/restconf/data$SETS/acl-set=S1,ACL_IPV4")" 404
    is "serve: S2 still there" "$(rc_code GET "/restconf/data$SETS/acl-set=S2,ACL_IPV4")" 200
    stop_serve
else
    not_ok "serve starts"
fi

# ---- errors: named file and key, exit 2, nothing written ------------------------------------------
# refuse_in EXT DESC REGEX TEXT [options...]: a request file bad.EXT holding
# TEXT is refused: exit 2, REGEX on stderr, no output.
refuse_in() {
    local ext=$1 d=$2 re=$3 text=$4; shift 4
    printf '%s\n' "$text" >"$T/req/bad.$ext"
    rm -f "$T/bad.ybc"
    "$YB" synth gnmi --set-request "$T/req/bad.$ext" "$@" -o "$T/bad.ybc" 2>"$T/bad.err"
    local rc=$?
    if [ "$rc" = 2 ] && [ ! -e "$T/bad.ybc" ] && grep -Eq -- "$re" "$T/bad.err"; then ok "refuses $d"
    else not_ok "refuses $d (exit $rc)"; sed 's/^/# /' "$T/bad.err" | head -3; fi
}
refuse() { refuse_in json "$@"; }
refuse_yaml() { refuse_in yaml "$@"; }
refuse "a malformed path" 'bad.json: updates\[1\]\.path: malformed gNMI path "/a\[k=v"' \
    '{"updates":[{"path":"/ok","value":1},{"path":"/a[k=v","value":1}]}'
refuse "a misspelt item key" 'bad.json: replaces\[0\]: unknown key "valeu"' \
    '{"replaces":[{"path":"/a","valeu":1}]}'
refuse "a misspelt top key" 'bad.json: unknown key "update"' '{"update":[]}'
refuse "an item without value" 'bad.json: updates\[0\]: missing "value" \(or "value-file"\)' \
    '{"updates":[{"path":"/a"}]}'
refuse "value and value-file" 'updates\[0\]: give "value" or "value-file", not both' \
    '{"updates":[{"path":"/a","value":1,"value-file":"x"}]}'
refuse "an unknown encoding" 'bad.json: updates\[0\]\.encoding: must be json_ietf, json or ascii' \
    '{"updates":[{"path":"/a","value":1,"encoding":"proto"}]}'
refuse "an ascii value that is no string" 'updates\[0\]\.value: an ascii value must be a string' \
    '{"updates":[{"path":"/a","value":1,"encoding":"ascii"}]}'
refuse "a missing value file" 'updates\[0\]\.value-file: .*nope.json: cannot open' \
    '{"updates":[{"path":"/a","value-file":"nope.json"}]}'
printf '{"a": [1,\n' >"$T/req/broken.json"
refuse "a value file that is not JSON" 'updates\[0\]\.value-file: .*broken.json:2:.*invalid JSON' \
    '{"updates":[{"path":"/a","value-file":"broken.json"}]}'
refuse "invalid JSON with line and column" 'bad.json:1:[0-9]+: invalid JSON' '{"updates":[}'
refuse "a delete that is no path" 'bad.json: deletes\[1\]: must be a gNMI path string' \
    '{"deletes":["/a",3]}'
refuse "an empty request" 'bad.json: no updates, replaces, union-replaces or deletes' '{}'
# YAML: the line of the problem; aliases refused (no YAML bombs).
refuse_yaml "a YAML alias" 'bad.yaml:5: aliases \(\*name\) are not accepted' \
    "$(printf 'updates:\n  - path: /a\n    value: &v [1, 2]\n  - path: /b\n    value: *v')"
refuse_yaml "a duplicate YAML key" 'bad.yaml:4: duplicate mapping key' \
    "$(printf 'updates:\n  - path: /a\n    value: 1\n    value: 2')"
refuse_yaml "bad YAML indentation, with its line" 'bad.yaml:3: ' \
    "$(printf 'updates:\n  - path: /a\n   value: 1')"
refuse_yaml "a YAML integer beyond 64 bits" 'bad.yaml:3: an integer beyond 64 bits' \
    "$(printf 'updates:\n  - path: /a\n    value: 99999999999999999999')"
refuse_yaml "YAML nested 80 deep" 'bad.yaml:3: nested deeper than 64' \
    "$(printf 'updates:\n  - path: /a\n    value: %s%s' "$(printf '[%.0s' $(seq 80))" "$(printf ']%.0s' $(seq 80))")"
refuse_yaml "a malformed path in YAML" 'bad.yaml: updates\[0\]\.path: malformed gNMI path' \
    "$(printf 'updates:\n  - path: "/a[k=v"\n    value: 1')"
check_rc "synth gnmi without --set-request: exit 2" 2 "$YB" synth gnmi -o "$T/x.ybc"
check_rc "synth gnmi --rules: exit 2" 2 "$YB" synth gnmi --set-request "$T/req/delete.json" --rules 3 -o "$T/x.ybc"
like "synth gnmi --op names the option" "$("$YB" synth gnmi --set-request "$T/req/delete.json" --op get -o "$T/x.ybc" 2>&1)" \
    '--op applies to synth acl, not synth gnmi'
like "synth acl --set-request names the option" "$("$YB" synth acl --set-request "$T/req/delete.json" -o "$T/x.ybc" 2>&1)" \
    '--set-request applies to synth gnmi, not synth acl'
check_rc "missing request file: exit 2" 2 "$YB" synth gnmi --set-request "$T/req/none.json" -o "$T/x.ybc"
if [ -e "$T/x.ybc" ]; then not_ok "refused runs write nothing"; else ok "refused runs write nothing"; fi
# A request the corpus cannot hold (a body over half of an entry's 64 MiB):
# the reason named, not strerror(EINVAL); nothing written.
$PY -c 'import sys; open(sys.argv[1], "w").write("{\"a\":\"" + "1" * 34000000 + "\"}")' "$T/req/values/big.json"
printf '{"updates":[{"path":"/a","value-file":"values/big.json"}]}\n' >"$T/req/big.json"
"$YB" synth gnmi --set-request "$T/req/big.json" --count 2 -o "$T/big.ybc" 2>"$T/big.err"
is "a body too large for an entry: exit 3, nothing written" "$?:$([ -e "$T/big.ybc" ] && echo written)" "3:"
like "a body too large for an entry: said so, with its size" "$(cat "$T/big.err")" \
    'big.ybc: cannot write request 0: body too large for one corpus entry \(340000[0-9][0-9] bytes\)'
rm -f "$T/req/values/big.json"

done_testing
