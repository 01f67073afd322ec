#!/bin/bash
# tests/capture/roundtrip.sh -- replay a corpus with `yangblast run` while
# tcpdump records loopback, convert the capture back and get the same
# requests: method, path, body and the corpus's headers (the client adds
# its own, e.g. user-agent, grpc-timeout: those are allowed extra).
# SKIP when tcpdump cannot capture (not root).
. "$YB_SRCDIR/tests/lib.sh"
. "$YB_SRCDIR/tests/peers/nginx.sh"
. "$YB_SRCDIR/tests/peers/peer.sh"
if ! command -v tcpdump >/dev/null || [ "$(id -u)" != 0 ]; then
    echo "1..0 # SKIP tcpdump on lo needs root"
    exit 0
fi
TD=
stop_all() {
    [ -n "$TD" ] && kill -INT "$TD" 2>/dev/null && wait "$TD" 2>/dev/null
    nginx_stop "$T/nginx" 2>/dev/null
    peer_stop "$T/gnmi" 2>/dev/null
    return 0
}
at_exit stop_all
cap_start() { # FILE PORT
    timeout 120 tcpdump -i lo --immediate-mode -U -s 0 -w "$1" "tcp port $2" 2>"$T/td.err" &
    TD=$!
    for _ in $(seq 100); do grep -q "listening on" "$T/td.err" 2>/dev/null && return 0; sleep 0.05; done
    return 1
}
# tcpdump gets a moment to write what the kernel still holds.
cap_stop() { sleep 1; kill -INT "$TD"; wait "$TD" 2>/dev/null; TD=; }
# same ORIG CAPTURED: compares record by record (python, JSON lines).
same() {
    /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
if len(a) != len(b):
    sys.exit("count %d != %d" % (len(a), len(b)))
key = lambda r: (r["path"], r.get("body", r.get("body_base64")))
for x, y in zip(sorted(a, key=key), sorted(b, key=key)):
    for k in ("protocol", "method", "path"):
        if x[k] != y[k]:
            sys.exit("%s: %r != %r" % (k, x[k], y[k]))
    if x.get("body") != y.get("body") or x.get("body_base64") != y.get("body_base64"):
        sys.exit("body differs for " + x["path"])
    got = {(h["name"].lower(), h.get("value")) for h in y["headers"]}
    for h in x["headers"]:
        if (h["name"].lower(), h.get("value")) not in got:
            sys.exit("header %s missing for %s" % (h["name"], x["path"]))
PY
}

# RESTCONF over HTTP/1.1 against nginx.
p=$(free_port)
nginx_start "$T/nginx" "$p" || { not_ok "nginx starts"; done_testing; exit; }
"$YB" synth acl --proto restconf -n 6 --rules 3 -o "$T/rc.ybc"
cap_start "$T/rc.pcap" "$p" || { not_ok "tcpdump starts"; done_testing; exit; }
"$YB" run "$T/rc.ybc" --target "http://127.0.0.1:$p" -n 6 -c 2 -q >/dev/null
cap_stop
"$YB" capture -r "$T/rc.pcap" -o "$T/rc-back.ybc" 2>"$T/rc.report"
"$YB" corpus cat "$T/rc.ybc" >"$T/a.jsonl"
"$YB" corpus cat "$T/rc-back.ybc" >"$T/b.jsonl"
check "RESTCONF round trip: same requests" same "$T/a.jsonl" "$T/b.jsonl" || { sed "s/^/# /" "$T/rc.report"; cp "$T/rc.pcap" /tmp/rt-fail.pcap; }
like "RESTCONF round trip: statuses kept" "$(cat "$T/b.jsonl")" '"expected_status":204'
nginx_stop "$T/nginx"

# gNMI over h2c against the python server, 4 streams at a time.
peer_start "$T/gnmi" gnmi_server.py --max-seconds 60 || { not_ok "gnmi server starts"; done_testing; exit; }
gp=$(peer_port "$T/gnmi")
"$YB" synth acl --proto gnmi -n 8 --rules 3 -o "$T/g.ybc"
cap_start "$T/g.pcap" "$gp" || { not_ok "tcpdump starts"; done_testing; exit; }
"$YB" run "$T/g.ybc" --target "grpc://127.0.0.1:$gp" -n 8 -c 1 -m 4 -q >/dev/null
cap_stop
"$YB" capture -q -r "$T/g.pcap" -o "$T/g-back.ybc"
"$YB" corpus cat "$T/g.ybc" >"$T/a.jsonl"
"$YB" corpus cat "$T/g-back.ybc" >"$T/b.jsonl"
check "gNMI round trip: same requests" same "$T/a.jsonl" "$T/b.jsonl"
like "gNMI round trip: grpc status kept" "$(cat "$T/b.jsonl")" '"expected_grpc_status":0'
done_testing
