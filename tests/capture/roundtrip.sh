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

# round_trip NAME CORPUS PORT URL RUN-ARGS...: replays CORPUS under tcpdump
# and converts the capture back into $T/NAME-back.jsonl; compares with the
# corpus.  Loopback capture on a loaded machine can lose packets (tcpdump
# says "dropped by kernel"), so a mismatch is tried again, up to 3 times;
# a real extraction bug fails every time.
round_trip() {
    local name=$1 corpus=$2 port=$3 url=$4 try
    shift 4
    "$YB" corpus cat "$corpus" >"$T/$name-orig.jsonl"
    for try in 1 2 3; do
        cap_start "$T/$name.pcap" "$port" || return 1
        "$YB" run "$corpus" --target "$url" -q "$@" >/dev/null
        cap_stop
        "$YB" capture -r "$T/$name.pcap" -o "$T/$name-back.ybc" 2>"$T/$name.report"
        "$YB" corpus cat "$T/$name-back.ybc" >"$T/$name-back.jsonl"
        same "$T/$name-orig.jsonl" "$T/$name-back.jsonl" 2>"$T/$name.diff" && return 0
        diag "$name round trip, try $try: $(cat "$T/$name.diff"); tcpdump: $(grep -h dropped "$T/td.err" | tr '\n' ' ')"
    done
    sed "s/^/# /" "$T/$name.report"
    return 1
}

# RESTCONF over HTTP/1.1 against nginx.
p=$(free_port)
nginx_start "$T/nginx" "$p" || { not_ok "nginx starts"; done_testing; exit; }
"$YB" synth acl --proto restconf -n 6 --rules 3 -o "$T/rc.ybc"
check "RESTCONF round trip: same requests" round_trip rc "$T/rc.ybc" "$p" "http://127.0.0.1:$p" -n 6 -c 2
like "RESTCONF round trip: statuses kept" "$(cat "$T/rc-back.jsonl")" '"expected_status":204'
nginx_stop "$T/nginx"

# gNMI over h2c against the python server, 4 streams at a time.
peer_start "$T/gnmi" gnmi_server.py --max-seconds 60 || { not_ok "gnmi server starts"; done_testing; exit; }
gp=$(peer_port "$T/gnmi")
"$YB" synth acl --proto gnmi -n 8 --rules 3 -o "$T/g.ybc"
check "gNMI round trip: same requests" round_trip g "$T/g.ybc" "$gp" "grpc://127.0.0.1:$gp" -n 8 -c 1 -m 4
like "gNMI round trip: grpc status kept" "$(cat "$T/g-back.jsonl")" '"expected_grpc_status":0'
done_testing
