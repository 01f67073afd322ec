#!/bin/bash
# yangblast serve, gNMI front end, checked with the project's python grpcio
# client and h2load: Capabilities, Set/Get round trips (also across
# protocols), atomic Set, Subscribe ONCE/POLL/STREAM, auth, h2load load.
. "${YB_SRCDIR:-.}/tests/serve/common.sh"
SETP='/openconfig-acl:acl/acl-sets/acl-set[name=G1][type=ACL_IPV4]'

check "serve starts" start_serve
out=$(gc capabilities)
like "Capabilities: gNMI 0.10.0" "$out" '"gNMI_version": "0.10.0"'
like "Capabilities: openconfig-acl model" "$out" '"name": "openconfig-acl"'
like "Capabilities: JSON_IETF" "$out" '"JSON_IETF"'

cat >"$T/g1.json" <<'J'
{"openconfig-acl:acl-set":[{"name":"G1","type":"openconfig-acl:ACL_IPV4",
 "config":{"name":"G1","type":"openconfig-acl:ACL_IPV4","description":"from gnmi"},
 "acl-entries":{"acl-entry":[{"sequence-id":5,"config":{"sequence-id":5}}]}}]}
J
like "Set update answers one UpdateResult" "$(gc set "$T/g1.json" "$SETP")" '"results": \[\{"op": "UPDATE"'
out=$(gc get "$SETP/config")
like "Get reads back what Set wrote" "$out" '"description": "from gnmi"'
is "Set over gNMI, GET over RESTCONF" \
   "$(rc_code GET '/restconf/data/openconfig-acl:acl/acl-sets/acl-set=G1,ACL_IPV4/config/description')" 200
like "RESTCONF sees the gNMI value" "$(cat "$T/body")" '"from gnmi"'
is "PATCH over RESTCONF" "$(rc_code PATCH '/restconf/data/openconfig-acl:acl/acl-sets/acl-set=G1,ACL_IPV4/config' -H "$CT" -d '{"openconfig-acl:config":{"description":"from restconf"}}')" 204
like "Get over gNMI sees it" "$(gc get "$SETP/config")" '"description": "from restconf"'
echo '{"openconfig-acl:config":{"name":"G1","type":"ACL_IPV4"}}' >"$T/cfg.json"
like "Set replace" "$(gc set "$T/cfg.json" "$SETP/config" --op replace)" '"op": "REPLACE"'
out=$(gc get "$SETP/config")
like "replace dropped the description" "$out" '"value": \{"name": "G1", "type": "ACL_IPV4"\}'
out=$(gc get '/openconfig-acl:acl/acl-sets/acl-set[name=NONE][type=ACL_IPV4]' 2>&1)
like "Get of a missing set: NOT_FOUND" "$out" 'NOT_FOUND'
printf '{"openconfig-acl:config": {' >"$T/bad.json"
like "Set with bad JSON: INVALID_ARGUMENT" "$(gc set "$T/bad.json" "$SETP/config" 2>&1)" 'INVALID_ARGUMENT'

# Atomic Set: a delete and a good update before a bad one change nothing.
cat >"$T/atomic.py" <<'P'
import os, sys, grpc
sys.path.insert(0, os.path.join(os.environ["YB_SRCDIR"], "tests", "peers"))
sys.dont_write_bytecode = True
import gnmi_common
pb, _ = gnmi_common.load_protos()
ch = grpc.insecure_channel("127.0.0.1:" + sys.argv[1])
call = ch.unary_unary("/gnmi.gNMI/Set", request_serializer=pb.SetRequest.SerializeToString,
                      response_deserializer=pb.SetResponse.FromString)
req = pb.SetRequest()
req.delete.add().CopyFrom(gnmi_common.parse_path(pb, sys.argv[2]))
u = req.update.add()
u.path.CopyFrom(gnmi_common.parse_path(pb, "/openconfig-acl:acl/acl-sets/acl-set[name=NEW][type=ACL_IPV4]"))
u.val.json_ietf_val = b'{"config":{"name":"NEW"}}'
u = req.update.add()
u.path.CopyFrom(gnmi_common.parse_path(pb, sys.argv[2]))
u.val.json_ietf_val = b'{"config": '
try:
    call(req, timeout=10)
    print("OK")
except grpc.RpcError as e:
    print(e.code().name)
P
is "Set with one bad update fails whole" "$(YB_SRCDIR=$YB_SRCDIR "$PY" "$T/atomic.py" "$GP" "$SETP")" INVALID_ARGUMENT
like "the delete in it was not applied" "$(gc get "$SETP/config")" '"name": "G1"'
like "the good update in it was not applied" "$(gc get '/openconfig-acl:acl/acl-sets/acl-set[name=NEW][type=ACL_IPV4]' 2>&1)" NOT_FOUND

echo '{"openconfig-acl:acl-set":[{"name":"G2","type":"ACL_IPV4","config":{"name":"G2"}}]}' >"$T/g2.json"
gc set "$T/g2.json" '/openconfig-acl:acl/acl-sets/acl-set[name=G2][type=ACL_IPV4]' >/dev/null
out=$(gc subscribe-once /openconfig-acl:acl)
is "Subscribe ONCE: one notification per set, then sync" \
   "$(printf '%s\n' "$out" | sed -n 's/.*acl-set\[name=\(G[12]\)\].*/\1/p;s/{"sync": true}/sync/p' | tr '\n' ' ')" "G1 G2 sync "
out=$(gc subscribe-poll /openconfig-acl:acl/acl-sets 2)
is "Subscribe POLL: initial + 2 polls, each ends with sync" "$(printf '%s\n' "$out" | grep -c '"sync"')" 3
is "Subscribe POLL: every round carries both sets" "$(printf '%s\n' "$out" | grep -c 'acl-set\[')" 6
out=$(gc subscribe-stream /openconfig-acl:acl --interval-ms 50 --count 4)
is "Subscribe STREAM: 4 samples after sync" "$(printf '%s\n' "$out" | grep -c '"timestamp"')" 4
check "STREAM timestamps are ns and advance" "$PY" -c '
import json, sys
ts = [json.loads(l)["timestamp"] for l in sys.argv[1].splitlines() if "timestamp" in l]
assert all(t > 1.6e18 for t in ts) and ts == sorted(ts) and ts[-1] > ts[0], ts' "$out"

# Counters advance: sample through a raw grpcio stream.
cat >"$T/counters.py" <<'P'
import os, sys, grpc, threading
sys.path.insert(0, os.path.join(os.environ["YB_SRCDIR"], "tests", "peers"))
sys.dont_write_bytecode = True
import gnmi_common
pb, _ = gnmi_common.load_protos()
ch = grpc.insecure_channel("127.0.0.1:" + sys.argv[1])
st = ch.stream_stream("/gnmi.gNMI/Subscribe", request_serializer=pb.SubscribeRequest.SerializeToString,
                      response_deserializer=pb.SubscribeResponse.FromString)
r = pb.SubscribeRequest()
r.subscribe.mode = pb.SubscriptionList.STREAM
r.subscribe.encoding = pb.JSON_IETF
s = r.subscribe.subscription.add()
s.path.CopyFrom(gnmi_common.parse_path(pb, "/openconfig-acl:acl/acl-sets/acl-set[name=G1][type=ACL_IPV4]"))
s.mode = pb.SAMPLE
s.sample_interval = 50_000_000
hold = threading.Event()
def gen():
    yield r
    hold.wait(10)
call = st(gen(), timeout=10)
pk = []
for resp in call:
    if resp.WhichOneof("response") == "update" and resp.update.prefix.elem:
        vals = {u.path.elem[-1].name: u.val.uint_val for u in resp.update.update}
        pk.append(vals["matched-packets"])
        if len(pk) == 3:
            break
hold.set()
call.cancel()
print("advancing" if pk[0] < pk[1] < pk[2] else "stuck %r" % pk)
P
is "STREAM matched-packets advance" "$(YB_SRCDIR=$YB_SRCDIR "$PY" "$T/counters.py" "$GP")" advancing

# h2load against Set with a real framed SetRequest from the synthesizer.
"$YB" synth acl --proto gnmi --count 1 -o "$T/set.ybc" >/dev/null
"$YB" corpus cat "$T/set.ybc" | "$PY" -c 'import json,sys,base64; sys.stdout.buffer.write(base64.b64decode(json.loads(sys.stdin.readline())["body_base64"]))' >"$T/set.bin"
out=$(h2load -d "$T/set.bin" -H 'content-type: application/grpc' -H 'te: trailers' -m 10 -n 1000 -c 4 "http://127.0.0.1:$GP/gnmi.gNMI/Set" 2>&1)
like "h2load: 1000 Sets succeeded, 0 failed" "$out" 'requests: 1000 total, 1000 started, 1000 done, 1000 succeeded, 0 failed, 0 errored'
diag "normal mode: $(printf '%s\n' "$out" | grep '^finished in')"
like "the Sets reached the store" "$(gc get '/openconfig-acl:acl/acl-sets/acl-set[name=YB_ACL_000001][type=ACL_IPV4]/config')" 'YB_ACL_000001'
check_rc "SIGTERM stops it cleanly" 0 stop_serve
like "summary counts RPCs" "$(cat "$SOUT")" 'gnmi [0-9]+ \(Capabilities 1 Get [0-9]+ Set 100[0-9]'
like "summary counts gRPC codes" "$(cat "$SOUT")" 'grpc status: OK=[0-9]+ INVALID_ARGUMENT=2 NOT_FOUND=2'

# Sink mode: the generator's ceiling.
check "serve --sink" start_serve --sink
out=$(h2load -d "$T/set.bin" -H 'content-type: application/grpc' -H 'te: trailers' -m 10 -n 20000 -c 4 "http://127.0.0.1:$GP/gnmi.gNMI/Set" 2>&1)
like "sink: h2load 20000 Sets, 0 failed" "$out" '20000 succeeded, 0 failed, 0 errored'
diag "sink mode: $(printf '%s\n' "$out" | grep '^finished in')"
like "sink: Set answers one UpdateResult per operation" "$(gc set "$T/g1.json" "$SETP")" '"results": \[\{[^]]*"op": "UPDATE"[^]]*\}\]'
like "sink: Capabilities answers an empty CapabilityResponse" "$(gc capabilities)" '"gNMI_version": ""'
is "sink: RESTCONF PATCH 204" "$(rc_code PATCH /restconf/data/openconfig-acl:acl -H "$CT" -d 'not even json')" 204
is "sink: RESTCONF GET 200, empty" "$(rc_code GET /restconf/data/openconfig-acl:acl):$(wc -c <"$T/body")" "200:0"
check_rc "stop" 0 stop_serve

# Credentials as gRPC metadata.
export YANGBLAST_SERVE_PASSWORD=pw1
check "serve with --auth" start_serve --auth admin --restconf off
like "no metadata: UNAUTHENTICATED" "$(gc capabilities 2>&1)" UNAUTHENTICATED
like "wrong password: UNAUTHENTICATED" "$(gc --user admin --password x capabilities 2>&1)" UNAUTHENTICATED
like "right password: OK" "$(gc --user admin --password pw1 capabilities 2>&1)" '0.10.0'
check_rc "stop" 0 stop_serve
unset YANGBLAST_SERVE_PASSWORD
done_testing
