#!/bin/bash
# Coordinated omission: one 1 s stall injected into `yangblast serve` (on
# exactly the 500th request) during a fixed-rate run over one HTTP/1.1
# session.  The requests that fell due during the stall waited for the
# session; latency from their due time (corrected) shows it, service time
# from the actual send (uncorrected) hides it.  Also for gNMI.
. "$YB_SRCDIR/tests/lib.sh"
PY=/usr/bin/python3
SOUT=$T/serve.out
yb_serve "$SOUT" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --fault 'stall:1s@#500' ||
    { echo "Bail out! serve did not start"; exit 1; }

"$YB" synth acl --proto restconf -n 100 -r 2 --name-prefix CO_R -o "$T/r.ybc" >/dev/null
"$YB" synth acl --proto gnmi -n 100 -r 2 --name-prefix CO_G -o "$T/g.ybc" >/dev/null
pct() { $PY -c "import json,sys; d=json.load(open(sys.argv[1]))['latency_us']; print(d[sys.argv[2]][sys.argv[3]])" "$@"; }

# RESTCONF: 500/s for 5 s on one session; request 500 stalls 1 s.
timeout 60 "$YB" run "$T/r.ybc" --target "$RURL" -c 1 --rate 500 -D 5s -q --json "$T/r.json" >/dev/null
check "restconf run completed" test -s "$T/r.json"
e=$(pct "$T/r.json" e2e p99_9) s=$(pct "$T/r.json" service p99_9) m=$(pct "$T/r.json" service max)
diag "restconf: corrected p99.9 ${e} us, uncorrected p99.9 ${s} us, uncorrected max ${m} us"
check "restconf: the stall happened (service max >= 0.9 s)" test "$m" -ge 900000
check "restconf: corrected p99.9 reflects the 1 s stall (>= 0.7 s)" test "$e" -ge 700000
check "restconf: uncorrected p99.9 does not (< 0.1 s)" test "$s" -lt 100000
e99=$(pct "$T/r.json" e2e p99)
check "restconf: even corrected p99 shows it (>= 0.5 s; ~500 requests waited)" test "$e99" -ge 500000

# gNMI: the same on one session with one stream, on a fresh server so the
# stall is again its 500th request.
yb_serve_stop
yb_serve "$SOUT" --restconf off --gnmi 127.0.0.1:0 --fault 'stall:1s@#500' ||
    { echo "Bail out! serve did not restart"; exit 1; }
timeout 60 "$YB" run "$T/g.ybc" --target "$GURL" -c 1 -m 1 --rate 500 -D 5s -q --json "$T/g.json" >/dev/null
check "gnmi run completed" test -s "$T/g.json"
e=$(pct "$T/g.json" e2e p99_9) s=$(pct "$T/g.json" service p99_9) m=$(pct "$T/g.json" service max)
diag "gnmi: corrected p99.9 ${e} us, uncorrected p99.9 ${s} us, uncorrected max ${m} us"
check "gnmi: the stall happened (service max >= 0.9 s)" test "$m" -ge 900000
check "gnmi: corrected p99.9 reflects the 1 s stall (>= 0.7 s)" test "$e" -ge 700000
check "gnmi: uncorrected p99.9 does not (< 0.1 s)" test "$s" -lt 100000
done_testing
