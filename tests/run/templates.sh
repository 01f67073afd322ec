#!/bin/bash
# Request templates: placeholders in a record's path, header values and
# body, filled per request.  Checked on real servers: yangblast serve (its
# datastore after the run: synth acl --unique creates distinct sets on every
# pass), nginx's access log (templated paths, reproducible with --seed,
# Content-Length of a templated body), and the python grpcio gNMI server,
# which decodes every templated SetRequest (placeholders in json_ietf_val
# and in path elements: the protobuf re-encoded per request).  A malformed
# template is refused before any traffic (exit 2) naming the record, the
# field and the placeholder; `{{` in a record that is not a template is
# sent as it is.
. "$YB_SRCDIR/tests/lib.sh"
. "$YB_SRCDIR/tests/peers/nginx.sh"
. "$YB_SRCDIR/tests/peers/peer.sh"
PY=/usr/bin/python3

# edit IN OUT PYTHON: rewrites each JSON line r of `corpus cat --decode IN`
# with the python statements (r is the record) and imports them into OUT.
edit() {
    "$YB" corpus cat --decode "$1" | $PY -c "
import json, sys
for i, l in enumerate(sys.stdin):
    r = json.loads(l)
$3
    print(json.dumps(r))" >"$T/edit.jsonl" && "$YB" corpus import "$T/edit.jsonl" -o "$2" >/dev/null
}
# acl_names URL: the ACL set names serve holds, sorted, comma-separated.
acl_names() {
    $PY -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/restconf/data/openconfig-acl:acl/acl-sets"))
print(",".join(sorted(a["name"] for a in d.get("openconfig-acl:acl-sets", {}).get("acl-set", []))))
' "$1" 2>/dev/null
}

# ---- 1. serve: synth acl --unique ---------------------------------------------
"$YB" synth acl --method POST --count 10 --scheme http -o "$T/post.ybc" >/dev/null 2>&1 &&
    "$YB" synth acl --method POST --count 10 --scheme http --unique -o "$T/uniq.ybc" >/dev/null 2>&1 ||
    { not_ok "synth acl --unique"; done_testing; exit 1; }
is "synth --unique: records are marked as templates, names end in _{{iter}}" \
    "$("$YB" corpus cat "$T/uniq.ybc" | head -1 | $PY -c 'import json,sys; r=json.load(sys.stdin); print(r.get("template"), "YB_ACL_000001_{{iter}}" in r["body"])')" \
    "True True"
yb_serve "$T/s1.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 || exit 1
timeout 60 "$YB" run -q "$T/post.ybc" --target "$RURL" -n 30 --json "$T/plain.json" >/dev/null 2>&1
is "without --unique: run -n 30 of 10 creates is 201x10, 409x20" \
    "$(jget "$T/plain.json" 'r["status"]')" '{"201":10,"409":20}'
yb_serve_stop
yb_serve "$T/s2.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 || exit 1
timeout 60 "$YB" run -q "$T/uniq.ybc" --target "$RURL" -n 30 --json "$T/uniq.json" >/dev/null 2>&1
is "--unique: run -n 30 exits 0" "$?" 0
is "--unique: 30 x 201" "$(jget "$T/uniq.json" 'r["status"]')" '{"201":30}'
names=$(acl_names "$RURL")
is "--unique: serve holds 30 distinct ACL sets" "$(echo "$names" | tr , '\n' | sort -u | wc -l)" 30
like "--unique: ... named per pass (YB_ACL_000001_0 .. YB_ACL_000010_2)" "$names" \
    '^YB_ACL_000001_0,YB_ACL_000001_1,YB_ACL_000001_2,YB_ACL_000002_0,.*,YB_ACL_000010_2$'
# gNMI: the name sits in json_ietf_val; -t 2 -c 2: each worker its own records
"$YB" synth acl --proto gnmi --count 6 --scheme http --name-prefix GU --unique \
    -o "$T/guniq.ybc" >/dev/null 2>&1
timeout 60 "$YB" run -q "$T/guniq.ybc" --target "$GURL" -n 18 -t 2 -c 2 \
    --json "$T/guniq.json" >/dev/null 2>&1
is "gNMI --unique, -t 2: 18 ok" "$(jget "$T/guniq.json" '[r["summary"]["requests_ok"], r["grpc_status"]]')" \
    '[18,{"0":18}]'
is "gNMI --unique: serve holds 18 distinct GU sets" \
    "$(acl_names "$RURL" | tr , '\n' | grep -c '^GU_')" 18
yb_serve_stop
check_rc "synth --unique with --op capabilities is refused" 2 \
    "$YB" synth acl --proto gnmi --op capabilities --unique -o "$T/x.ybc"

# ---- 2. malformed templates: exit 2 before any traffic --------------------------
"$YB" synth acl --count 3 --scheme http -r 1 -o "$T/small.ybc" >/dev/null 2>&1
bad() { # bad DESC REGEX PYTHON: the record edit must be refused with REGEX
    edit "$T/small.ybc" "$T/bad.ybc" "$3"
    timeout 30 "$YB" run -q "$T/bad.ybc" --target http://127.0.0.1:9 -n 3 >"$T/bad.out" 2>&1
    local rc=$?
    is "$1: exit 2" "$rc" 2
    like "$1: the message names it" "$(cat "$T/bad.out")" "$2"
}
bad "unknown placeholder in the body" \
    "bad\.ybc: record 2: template body: placeholder '\{\{nope\}\}': unknown placeholder" \
    '    r["template"] = True
    if i == 2: r["body"] = r["body"].replace("YB_ACL", "{{nope}}", 1)'
bad "unterminated placeholder in the path" \
    "record 1: template path: unterminated placeholder '\{\{iter'" \
    '    r["template"] = True
    if i == 1: r["path"] += "/{{iter"'
bad "bad range in a header value" \
    "record 0: template header 'Accept': placeholder '\{\{random:9..1\}\}': bad range" \
    '    r["template"] = True
    r["headers"][1]["value"] = "{{random:9..1}}"'
# not marked as a template: refused only with --templates
edit "$T/small.ybc" "$T/bad.ybc" '    r["path"] += "/{{counter:mod=0}}"'
check_rc "a record not marked as a template is not checked: it runs (exit 1: nothing listens)" 1 \
    "$YB" run -q "$T/bad.ybc" --target http://127.0.0.1:9 -n 1 --timeout 2s
timeout 30 "$YB" run -q "$T/bad.ybc" --target http://127.0.0.1:9 -n 1 --templates >"$T/bad.out" 2>&1
is "--templates: the same record is checked, exit 2" "$?" 2
like "... a bad counter named" "$(cat "$T/bad.out")" \
    "record 0: template path: placeholder '\{\{counter:mod=0\}\}': counter mod must be"
check_rc "--seed without any templated record is refused" 2 \
    "$YB" run -q "$T/small.ybc" --target http://127.0.0.1:9 -n 1 --seed 3
"$YB" synth acl --proto gnmi --count 2 --scheme http -r 1 -o "$T/gsmall.ybc" >/dev/null 2>&1
edit "$T/gsmall.ybc" "$T/gbad.ybc" '    r["template"] = True
    u = r["grpc"][0]["SetRequest"]["update"][0]
    u["val"]["json_ietf_val"]["openconfig-acl:acl-set"][0]["name"] = "{{random:a..b}}"'
timeout 30 "$YB" run -q "$T/gbad.ybc" --target grpc://127.0.0.1:9 -n 1 >"$T/gbad.out" 2>&1
is "gNMI: a bad placeholder in json_ietf_val: exit 2" "$?" 2
like "... naming the message and field" "$(cat "$T/gbad.out")" \
    "record 0: template body: gRPC message 0 \(gnmi.SetRequest\): update.val.json_ietf_val: placeholder '\{\{random:a..b\}\}': bad range"

# ---- 3. nginx: templated paths, --seed, Content-Length of a templated body ------
port=$(free_port)
check "nginx starts" nginx_start "$T/ng" "$port"
ngx_stop() { nginx_stop "$T/ng"; }
at_exit ngx_stop
LOG=$(nginx_log "$T/ng")
"$YB" synth acl --method POST --count 2 --scheme http -r 1 -o "$T/two.ybc" >/dev/null 2>&1
# record 0: every placeholder in its path; record 1: a literal {{iter}} (not a template)
edit "$T/two.ybc" "$T/paths.ybc" '    if i == 0:
        r["template"] = True
        r["path"] = "/restconf/data/t/{{iter}}/{{index}}/{{worker}}/{{session}}/{{counter:start=100,step=10,mod=3}}/{{random:1..6}}/{{choice:red|green}}/{{uuid}}/{{target}}/{{uuid}}/{{open}}"
        r["body"] = r["body"].replace("YB_ACL_000001", "{{choice:x|yyyyyy}}")
    else:
        r["path"] = "/restconf/data/lit/{{iter}}"'
# uris SINCE: the /restconf request URIs logged from line SINCE on (field 5)
uris() { sleep 0.3; tail -n +"$1" "$LOG" | awk -F'\t' '$5 ~ /^\/restconf/ {print $5}'; }
n0=$(($(wc -l <"$LOG") + 1))
timeout 60 "$YB" run -q "$T/paths.ybc" --target "http://127.0.0.1:$port" -n 6 --seed 42 >/dev/null 2>&1
is "nginx: run -n 6 --seed 42 exits 0" "$?" 0
u1=$(uris $n0)
is "6 requests logged" "$(echo "$u1" | wc -l)" 6
is "iter, index, worker, session, counter (start 100, step 10, mod 3), target per request" \
    "$(echo "$u1" | grep '/t/' | cut -d/ -f5-9,13 | tr '\n' ' ')" \
    "0/0/0/1/100/127.0.0.1 1/2/0/1/120/127.0.0.1 2/4/0/1/110/127.0.0.1 "
is "random:1..6 in range, choice one of its items" \
    "$(echo "$u1" | grep '/t/' | cut -d/ -f10,11 | grep -cE '^[1-6]/(red|green)$')" 3
is "uuid: a version 4 UUID, the same text twice in one request has one value" \
    "$(echo "$u1" | grep '/t/' | awk -F/ '$12 == $14 {print $12}' |
        grep -cE '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$')" 3
is "uuids differ between requests" "$(echo "$u1" | grep '/t/' | cut -d/ -f12 | sort -u | wc -l)" 3
is "{{open}} is a literal {{" "$(echo "$u1" | grep '/t/' | cut -d/ -f15 | sort -u)" "{{"
is "a record not marked as a template is sent as it is" \
    "$(echo "$u1" | grep -c '^/restconf/data/lit/{{iter}}$')" 3
n0=$(($(wc -l <"$LOG") + 1))
timeout 60 "$YB" run -q "$T/paths.ybc" --target "http://127.0.0.1:$port" -n 6 --seed 42 >/dev/null 2>&1
is "--seed 42 again: the same URIs, byte for byte" "$(uris $n0)" "$u1"
n0=$(($(wc -l <"$LOG") + 1))
timeout 60 "$YB" run -q "$T/paths.ybc" --target "http://127.0.0.1:$port" -n 6 --seed 43 >/dev/null 2>&1
u3=$(uris $n0)
if [ "$u3" != "$u1" ]; then ok "--seed 43: other values"; else not_ok "--seed 43: other values"; fi
# Content-Length (field 8) follows the filled body: x (1 byte) or yyyyyy (6)
read -r base k < <("$YB" corpus cat "$T/two.ybc" | head -1 | $PY -c 'import json,sys; b=json.load(sys.stdin)["body"]; print(len(b.encode()), b.count("YB_ACL_000001"))')
n0=$(($(wc -l <"$LOG") + 1))
timeout 60 "$YB" run -q "$T/paths.ybc" --target "http://127.0.0.1:$port" -n 20 --seed 1 >/dev/null 2>&1
sleep 0.3
is "templated body: every Content-Length is the filled body's, every reply 201" \
    "$(tail -n +"$n0" "$LOG" | awk -F'\t' '$5 ~ /\/t\// {print $6, $8}' | sort -u | tr '\n' ' ')" \
    "201 $((base - 12 * k)) 201 $((base - 7 * k)) "
timeout 60 "$YB" run -q "$T/two.ybc" --target "http://127.0.0.1:$port" -n 2 --templates \
    -H 'X-Run: {{iter}}' >/dev/null 2>&1
is "--templates: every record is a template (a corpus without placeholders runs as before)" "$?" 0
nginx_stop "$T/ng"

# ---- 4. grpcio gNMI server: placeholders in json_ietf_val and path elements ------
if peer_start "$T/py" gnmi_server.py --log-sets "$T/sets.jsonl" --max-seconds 120; then
    gport=$(peer_port "$T/py")
    edit "$T/gsmall.ybc" "$T/gt.ybc" '    r["template"] = True
    u = r["grpc"][0]["SetRequest"]["update"][0]
    u["path"] = "/openconfig-acl:acl/acl-sets/acl-set[name=T{{iter}}_{{index}}][type=ACL_IPV4]/config"
    u["val"]["json_ietf_val"] = {"name": "T{{iter}}_{{index}}", "description": "{{choice:a|bb|ccc}} {{counter:start=5,step=-1}}", "uuid": "{{uuid}}"}'
    timeout 60 "$YB" run -q "$T/gt.ybc" --target "grpc://127.0.0.1:$gport" -n 8 -m 4 --seed 9 \
        --json "$T/gt.json" >/dev/null 2>&1
    is "grpcio: 8 templated SetRequests ok" "$(jget "$T/gt.json" '[r["summary"]["requests_ok"], r["grpc_status"]]')" \
        '[8,{"0":8}]'
    is "grpcio: every SetRequest decoded with its values filled in (path key, JSON values)" \
        "$($PY -c '
import json, re, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
out = []
for row in rows:
    (op, path, v), = row
    m = re.fullmatch(r"/openconfig-acl:acl/acl-sets/acl-set\[name=T(\d+)_(\d+)\]\[type=ACL_IPV4\]/config", path)
    it, ix = int(m.group(1)), int(m.group(2))
    d, c = v["description"].split(" ")
    ok = (op == "update" and v["name"] == "T%d_%d" % (it, ix) and it == ix // 2
          and d in ("a", "bb", "ccc") and int(c) == 5 - ix
          and re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", v["uuid"]))
    out.append(ix if ok else -1)
print(sorted(out))' "$T/sets.jsonl" 2>&1)" "[0, 1, 2, 3, 4, 5, 6, 7]"
    peer_stop "$T/py"
else
    not_ok "gnmi_server.py started"
fi

done_testing
