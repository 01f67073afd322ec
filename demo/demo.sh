#!/bin/bash
# The yangblast demo (`./setup.sh demo`): reproduce the shape of the SONiC
# session study against the embedded target.  `yangblast serve` plays the
# switch on loopback (TLS with a generated self-signed certificate, a login
# checked on every request, a service time per ACL set, and a per-session
# set-up cost standing in for a switch CPU's handshake work); `yangblast
# experiment sessions` replays the bundled ACL corpora over RESTCONF and gNMI,
# one persistent session vs a new session per request, 1,000 requests each,
# and prints the study's four tables and where the time goes.
set -euo pipefail
YB=${1:-yangblast}
here=$(cd "$(dirname "$0")/.." && pwd)
n=${YB_DEMO_REQUESTS:-1000}
out=$(mktemp -d /tmp/yangblast-demo.XXXXXX)
spid=
cleanup() {
    [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    rm -rf "$out"
}
trap cleanup EXIT

# The switch: costs roughly calibrated to the study (a few ms per ACL set,
# a login per request, session set-up that a management CPU pays dearly).
export YANGBLAST_SERVE_PASSWORD=demo-password
"$YB" serve --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 \
    --self-signed --write-cert "$out/cert.pem" \
    --auth admin --auth-cost 1ms \
    --service-time fixed:1ms+per-kb:100us --workers 4 \
    --session-cost 6ms \
    > "$out/serve.out" 2>&1 &
spid=$!
for _ in $(seq 100); do grep -q '^serve:' "$out/serve.out" && break; sleep 0.1; done
read -r _ _ restconf _ gnmi < <(grep '^serve:' "$out/serve.out" | head -1) || true
if [ -z "${gnmi:-}" ]; then
    echo "yangblast serve did not start:" >&2
    cat "$out/serve.out" >&2
    exit 3
fi
echo "== embedded switch: RESTCONF $restconf, gNMI $gnmi (TLS, login per request)"
echo "== replaying $n openconfig-acl ACL sets (~14.5 KB each) per configuration"
export YANGBLAST_PASSWORD=demo-password
"$YB" experiment sessions --restconf "$restconf" --gnmi "$gnmi" \
    --cacert "$out/cert.pem" --user admin -n "$n" \
    --restconf-corpus "$here/corpus/restconf-acl-1000.ybc" \
    --gnmi-corpus "$here/corpus/gnmi-acl-1000.ybc" \
    --json "$out/study.json"
echo
echo "== what the switch served"
kill -TERM "$spid"
wait "$spid" || true
spid=
sed -n '2,$p' "$out/serve.out"
