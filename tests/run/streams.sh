#!/bin/bash
# -c N -m M means what it means in h2load: N sessions (connections), M
# requests in flight on each (HTTP/2 streams), N x M in flight in the
# closed loop.  Counted on the server's side: `yangblast serve` (its stats)
# and nghttpd (its -v frame log), and compared with h2load's own -c 4 -m 8
# against the same nghttpd.  RESTCONF (HTTP/1.1): -c N is N connections.
. "$YB_SRCDIR/tests/lib.sh"
PY=/usr/bin/python3
"$YB" synth acl --proto gnmi -n 40 -r 1 --name-prefix CM_G -o "$T/g.ybc" >/dev/null
"$YB" synth acl --proto restconf -n 40 -r 1 --name-prefix CM_R -o "$T/r.ybc" >/dev/null
j() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# 1. yangblast serve, 20 ms per request so that the streams overlap.
yb_serve "$T/serve.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --service-time fixed:20ms \
    --stats "$T/serve.stats" || { echo "Bail out! serve did not start"; exit 1; }
timeout 60 "$YB" run "$T/g.ybc" --target "$GURL" -c 4 -m 8 -n 320 -q --json "$T/s.json" >/dev/null
is "serve, -c 4 -m 8: 320 ok on 4 sessions (client side)" \
    "$(j "$T/s.json" "d['summary']['requests_ok'], d['sessions']['opened']")" "320 4"
timeout 60 "$YB" run "$T/r.ybc" --target "$RURL" -c 4 -n 40 -q --json "$T/rs.json" >/dev/null
is "serve, RESTCONF -c 4: 40 ok on 4 connections" \
    "$(j "$T/rs.json" "d['summary']['requests_ok'], d['sessions']['opened']")" "40 4"
yb_serve_stop
is "serve counted 4 gNMI and 4 RESTCONF connections, 320 gNMI streams" \
    "$(j "$T/serve.stats" "d['connections']['gnmi'], d['connections']['restconf'], d['requests']['gnmi']['total']")" \
    "4 4 320"
is "serve saw at most and at least once 8 streams open on one connection" \
    "$(j "$T/serve.stats" "d['streams_max_concurrent']")" 8

# 2. nghttpd -v: connections, streams and the most open at once per
# connection, from its frame log.
cat > "$T/ngcount.py" <<'PYEOF'
import re, sys
open_, most, streams = {}, {}, 0
for line in open(sys.argv[1]):
    m = re.match(r'\[id=(\d+)\] \[[ 0-9.]+\] (.*)', line)
    if not m:
        continue
    cid, rest = m.groups()
    h = re.match(r'recv HEADERS frame <.*stream_id=(\d+)>', rest)
    if h:
        s = open_.setdefault(cid, set())
        s.add(h.group(1))
        streams += 1
        most[cid] = max(most.get(cid, 0), len(s))
        continue
    c = re.match(r'stream_id=(\d+) closed', rest)
    if c:
        open_.setdefault(cid, set()).discard(c.group(1))
# connections, streams, the most open at once on any and on every connection
print(len(most), streams, max(most.values(), default=0), min(most.values(), default=0))
PYEOF
mkdir -p "$T/www"
NGPID=
ng_stop() { [ -n "$NGPID" ] && kill "$NGPID" 2>/dev/null && wait "$NGPID" 2>/dev/null; NGPID=; }
at_exit ng_stop
# ng_run NAME CMD...: a fresh nghttpd for one client run; prints its counts.
ng_run() {
    local name=$1; shift
    local port
    port=$(free_port)
    nghttpd -v --no-tls -d "$T/www" "$port" > "$T/$name.nglog" 2>&1 &
    NGPID=$!
    wait_port "$port" || { echo "Bail out! nghttpd did not start"; exit 1; }
    NGPORT=$port "$@" > "$T/$name.out" 2>&1
    ng_stop
    $PY "$T/ngcount.py" "$T/$name.nglog"
}
yb_ng() { timeout 60 "$YB" run "$T/g.ybc" --target "grpc://127.0.0.1:$NGPORT" -c 4 -m 8 -n 320 -q; }
h2_ng() { timeout 60 h2load -c 4 -m 8 -n 320 "http://127.0.0.1:$NGPORT/"; }
yb=$(ng_run yb yb_ng)
h2=$(ng_run h2 h2_ng)
diag "nghttpd saw (connections, streams, most open at once on any / every connection): yangblast $yb, h2load $h2"
is "nghttpd, yangblast -c 4 -m 8: 4 connections, 320 streams, 8 open at once on each" "$yb" "4 320 8 8"
is "nghttpd, h2load -c 4 -m 8: the same" "$h2" "4 320 8 8"

# 3. pool=N is retired: -c N is the number of sessions.
yb_serve "$T/serve2.out" --restconf off --gnmi 127.0.0.1:0 --stats "$T/serve2.stats" ||
    { echo "Bail out! serve did not restart"; exit 1; }
out=$(timeout 60 "$YB" run "$T/g.ybc" --target "$GURL" --sessions pool=2 -m 4 -n 40 -q \
    --json "$T/p.json" 2>&1 >/dev/null)
like "--sessions pool=2 warns that it is -c 2 now" "$out" 'warning: --sessions pool=2 is -c 2 now'
is "--sessions pool=2 -m 4: 2 sessions" "$(j "$T/p.json" "d['sessions']['opened'], d['run']['concurrency']")" "2 2"
check_rc "--sessions pool=2 with -c 4 is refused (both set the sessions)" 2 \
    "$YB" run "$T/g.ybc" --target "$GURL" --sessions pool=2 -c 4 -n 4 -q
yb_serve_stop
is "serve counted the 2 connections of pool=2" "$(j "$T/serve2.stats" "d['connections']['gnmi']")" 2
done_testing
