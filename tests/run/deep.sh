#!/bin/bash
# Hostile nesting: protobuf-c's unpack recurses once per nested message, so
# a small gNMI message nesting leaf-lists 200,000 deep would exhaust the
# stack of whoever decodes it.  The client (decoding a GetResponse) and
# serve (decoding a SetRequest) must refuse it as a bad message -- a
# counted protocol error, an INVALID_ARGUMENT -- and carry on.
. "${YB_SRCDIR:-.}/tests/lib.sh"
. "$YB_SRCDIR/tests/peers/peer.sh"
PY=/usr/bin/python3
DEPTH=200000
stop_py() { [ -f "$T/py/pid" ] && peer_stop "$T/py"; return 0; }
at_exit stop_py

check "synth gnmi Get corpus" "$YB" synth acl --proto gnmi --op get -n 3 -o "$T/get.ybc"

# ---- the client: a GetResponse nesting DEPTH leaf-lists -------------------------
if peer_start "$T/py" gnmi_server.py --deep-get "$DEPTH" --max-seconds 60; then
    timeout 60 "$YB" run "$T/get.ybc" --target "grpc://127.0.0.1:$(peer_port "$T/py")" -q \
        --max-body 64M --json "$T/deep.json" >"$T/out" 2>&1
    rc=$?
    is "deep GetResponse: exit 1 (errors), not a crash" "$rc" 1
    is "no sanitizer report" "$(grep -c 'Sanitizer' "$T/out")" 0
    is "3 completed, 0 ok, 3 protocol errors" \
        "$(jget "$T/deep.json" 'r["summary"]["requests_completed"], r["summary"]["requests_ok"], r["errors"]["protocol"]')" \
        "(3, 0, 3)"
else
    not_ok "gnmi_server.py --deep-get started"
fi
stop_py

# ---- serve: a SetRequest nesting DEPTH leaf-lists --------------------------------
yb_serve "$T/serve.out" --restconf off --gnmi 127.0.0.1:0 || exit 1
gport=${GURL##*:}
"$PY" - "$YB_SRCDIR/tests/peers" "$gport" "$DEPTH" >"$T/py.out" 2>&1 <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[1])
import grpc, gnmi_common
ch = grpc.insecure_channel("127.0.0.1:" + sys.argv[2],
                           options=[("grpc.max_send_message_length", 64 << 20)])
call = ch.unary_unary("/gnmi.gNMI/Set", request_serializer=lambda b: b,
                      response_deserializer=lambda b: b)
try:
    call(gnmi_common.deep_set_request(int(sys.argv[3])), timeout=20)
    print("status OK")
except grpc.RpcError as e:
    print("status", e.code().name)
cap = ch.unary_unary("/gnmi.gNMI/Capabilities", request_serializer=lambda b: b,
                     response_deserializer=lambda b: b)
try:
    cap(b"", timeout=20)
    print("then Capabilities OK")
except grpc.RpcError as e:
    print("then Capabilities", e.code().name)
PYEOF
like "serve refuses the deep SetRequest (INTERNAL: cannot parse, as gRPC servers answer)" "$(cat "$T/py.out")" "status INTERNAL"
like "and still answers" "$(cat "$T/py.out")" 'then Capabilities OK'
is "serve is alive" "$(kill -0 "$SPID" 2>/dev/null && echo yes)" yes
yb_serve_stop
is "serve logged no sanitizer report" "$(grep -c 'Sanitizer' "$T/serve.out")" 0
done_testing
