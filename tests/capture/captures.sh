#!/bin/bash
# tests/capture/captures.sh -- every committed capture in captures/ converts
# to exactly its committed NAME.expected.jsonl (see captures/record.sh), and
# the options that change the output do what they say.
. "$YB_SRCDIR/tests/lib.sh"
C=$YB_SRCDIR/captures
export SOURCE_DATE_EPOCH=1767225600

for f in "$C"/*.pcap "$C"/*.pcapng; do
    [ -f "$f" ] || continue
    name=$(basename "$f"); name=${name%.pcap}; name=${name%.pcapng}
    kl=()
    [ -f "$C/$name.keylog" ] && kl=(--keylog "$C/$name.keylog")
    if [ -f "$C/$name.server-key.pem" ]; then
        install -m 600 "$C/$name.server-key.pem" "$T/$name.key" # git keeps no modes
        kl+=(--server-key "$T/$name.key")
    fi
    "$YB" capture -q -r "$f" "${kl[@]}" -o "$T/$name.ybc" 2>"$T/$name.err"
    is "$name: capture exits 0" "$?" 0
    got=$("$YB" corpus cat --with-header "$T/$name.ybc" 2>&1)
    is "$name: records equal $name.expected.jsonl" "$got" "$(cat "$C/$name.expected.jsonl")"
done

# Recognition per capture.
n=$("$YB" corpus cat "$T/gnmi-interleaved.ybc" | grep -c '"path":"/gnmi.gNMI/Set"')
is "interleaved: 16 Set records" "$n" 16
like "gnmi-h2c: Capabilities, Set, Get, Subscribe" \
    "$("$YB" corpus cat "$T/gnmi-h2c.ybc" | grep -o '"path":"[^"]*"' | tr '\n' ' ')" \
    'Capabilities.*Set.*Get.*Subscribe'
like "gnmi-h2c: grpc status kept" "$(head -1 <("$YB" corpus cat "$T/gnmi-h2c.ybc"))" \
    '"expected_status":200,"expected_grpc_status":0'
like "h1-pipelined: chunked body decoded" "$("$YB" corpus cat "$T/h1-pipelined.ybc")" \
    '"body":"\{\\"acl-set\\":\[\{\\"name\\":\\"A2\\",\\"type\\":\\"ACL_IPV4\\"\}\]\}"'

# Redaction on by default, --keep-credentials keeps the values.
like "h1-keepalive: Authorization redacted" "$("$YB" corpus cat "$T/h1-keepalive.ybc")" \
    '"Authorization","value":"<redacted>"'
"$YB" capture -q -r "$C/h1-keepalive.pcap" --keep-credentials -o "$T/keep.ybc"
like "--keep-credentials keeps Basic credentials" "$("$YB" corpus cat --with-header "$T/keep.ybc")" \
    '"Authorization","value":"Basic YWRtaW46czNjcmV0"'
like "--keep-credentials: header lists no redactions" \
    "$("$YB" corpus cat --with-header "$T/keep.ybc" | head -1)" '"redactions":\[\]'
like "gnmi-h2c: username/password metadata redacted" \
    "$("$YB" corpus cat --with-header "$T/gnmi-h2c.ybc" | head -1)" '"redactions":\["username","password"\]'

# --mgmt-only drops the generic HTTP/1.1 request (the 404 outside /restconf).
"$YB" capture -q -r "$C/h1-keepalive.pcap" --mgmt-only -o "$T/mgmt.ybc"
is "--mgmt-only: 2 RESTCONF records of 3" "$("$YB" corpus cat "$T/mgmt.ybc" | wc -l)" 2

# Several inputs, a BPF filter, a file whose name lies about its format.
"$YB" capture -q -r "$C/h1-keepalive.pcap" -r "$C/gnmi-h2c.pcap" -o "$T/two.ybc"
is "two -r files: 7 records" "$("$YB" corpus cat "$T/two.ybc" | wc -l)" 7
"$YB" capture -q -r "$C/h1-keepalive.pcap" -r "$C/gnmi-h2c.pcap" -f 'tcp port 80' -o "$T/none.ybc"
is "-f 'tcp port 80': nothing" "$("$YB" corpus cat "$T/none.ybc" | wc -l)" 0
cp "$C/gnmi-tls-dsb.pcapng" "$T/lies.pcap"
"$YB" capture -q -r "$T/lies.pcap" -o "$T/lies.ybc"
is "pcapng named .pcap: read by content (4 records via its DSB)" \
    "$("$YB" corpus cat "$T/lies.ybc" | wc -l)" 4

# TLS without keys: seen and skipped, reported.
"$YB" capture -r "$C/gnmi-tls.pcap" -o "$T/nokeys.ybc" --json "$T/nokeys.json" 2>"$T/nokeys.err"
like "TLS without keys: reported as skipped" "$(cat "$T/nokeys.err")" 'tls: 1 flow\(s\), 0 decrypted, 1 seen and skipped'
is "TLS without keys: JSON tls.skipped" \
    "$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["tls"]["skipped"], r["requests"]["total"])' "$T/nokeys.json")" "1 0"

# The JSON report.
"$YB" capture -q -r "$C/gnmi-interleaved.pcap" -o "$T/j.ybc" --json "$T/j.json"
is "JSON report: flows, requests by RPC" \
    "$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["flows"]["http2"], r["requests"]["gnmi"], r["requests"]["by_kind"]["gnmi /gnmi.gNMI/Set"])' "$T/j.json")" "1 16 16"

# Usage errors exit 2.
check_rc "no -r: exit 2" 2 "$YB" capture -o "$T/x.ybc"
check_rc "missing file: exit 2" 2 "$YB" capture -r "$T/nope.pcap" -o "$T/x.ybc"
check_rc "bad filter: exit 2" 2 "$YB" capture -r "$C/h1-keepalive.pcap" -f 'tcp port banana' -o "$T/x.ybc"
check_rc "bad --max-flow-buffer: exit 2" 2 "$YB" capture -r "$C/h1-keepalive.pcap" --max-flow-buffer 1x -o "$T/x.ybc"
check_rc "missing --keylog file: exit 2" 2 "$YB" capture -r "$C/h1-keepalive.pcap" --keylog "$T/none.keylog" -o "$T/x.ybc"
done_testing
