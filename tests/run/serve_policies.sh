#!/bin/bash
# `yangblast run` against `yangblast serve` in every session policy, over
# TLS with credentials, RESTCONF and gNMI: the server's own connection
# counts must match what each policy promises, and every request succeeds.
. "$YB_SRCDIR/tests/lib.sh"
PY=/usr/bin/python3
SOUT=$T/serve.out
export YANGBLAST_SERVE_PASSWORD=pol-secret YANGBLAST_PASSWORD=pol-secret
yb_serve "$SOUT" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --self-signed \
    --write-cert "$T/cert.pem" --auth admin || { echo "Bail out! serve did not start"; exit 1; }
like "serve announces https and grpcs" "$RURL $GURL" '^https://127\.0\.0\.1:[0-9]+ grpcs://127\.0\.0\.1:[0-9]+$'

"$YB" synth acl --proto restconf -n 20 -r 2 --name-prefix POL_R -o "$T/r.ybc" >/dev/null
"$YB" synth acl --proto gnmi -n 20 -r 2 --name-prefix POL_G -o "$T/g.ybc" >/dev/null
# A corpus with two recorded connections (for --sessions original).
"$YB" corpus cat "$T/r.ybc" | $PY -c '
import json, sys
for i, l in enumerate(sys.stdin):
    r = json.loads(l); r["conn_id"] = i % 2; r["conn_order"] = i // 2; print(json.dumps(r))' \
    | "$YB" corpus import -o "$T/r2.ybc"

j() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
# run_pol NAME CORPUS URL ARGS...: runs and records sessions opened / ok.
run_pol() {
    local name=$1 corpus=$2 url=$3; shift 3
    timeout 60 "$YB" run "$corpus" --target "$url" --cacert "$T/cert.pem" --user admin -q \
        --json "$T/$name.json" "$@" >/dev/null 2>"$T/$name.err"
    echo $?
}
for proto in r g; do
    url=$RURL; [ $proto = g ] && url=$GURL
    label=RESTCONF; [ $proto = g ] && label=gNMI
    is "$label reuse -c 2: exit 0" "$(run_pol ${proto}reuse "$T/$proto.ybc" "$url" -c 2)" 0
    is "$label reuse -c 2: 20 ok over 2 sessions, 2 full handshakes" \
        "$(j "$T/${proto}reuse.json" "d['summary']['requests_ok'], d['sessions']['opened'], d['sessions']['tls_full']")" "20 2 2"
    is "$label per-request: exit 0" "$(run_pol ${proto}per "$T/$proto.ybc" "$url" -c 2 --sessions per-request)" 0
    is "$label per-request: 20 ok over 20 sessions" \
        "$(j "$T/${proto}per.json" "d['summary']['requests_ok'], d['sessions']['opened']")" "20 20"
    is "$label per-request --tls-resume: exit 0" \
        "$(run_pol ${proto}res "$T/$proto.ybc" "$url" -c 2 --sessions per-request --tls-resume)" 0
    res=$(j "$T/${proto}res.json" "d['sessions']['tls_resumed']")
    check "$label per-request --tls-resume: most handshakes resumed ($res of 20)" test "$res" -ge 15
    is "$label -c 2: exit 0" "$(run_pol ${proto}pool "$T/$proto.ybc" "$url" -c 2)" 0
    is "$label -c 2: 2 sessions" "$(j "$T/${proto}pool.json" "d['sessions']['opened']")" 2
    if [ $proto = g ]; then
        is "$label -m 4 on one session: exit 0" "$(run_pol ${proto}mux "$T/$proto.ybc" "$url" -c 1 -m 4)" 0
        is "$label -m 4: one session carried 20" "$(j "$T/${proto}mux.json" "d['summary']['requests_ok'], d['sessions']['opened']")" "20 1"
    fi
done
is "RESTCONF --sessions original: exit 0" "$(run_pol orig "$T/r2.ybc" "$RURL" -c 2 --sessions original)" 0
is "RESTCONF --sessions original: one session per recorded connection" \
    "$(j "$T/orig.json" "d['summary']['requests_ok'], d['sessions']['opened']")" "20 2"
check "no password in any output" sh -c "! grep -rq pol-secret $T/*.json $T/*.err"
timeout 60 "$YB" run "$T/r.ybc" --target "$RURL" --cacert "$T/cert.pem" --user admin -q -c 2 \
    --sessions per-request --tls-resume --json "$T/nores.json" >/dev/null 2>&1
yb_serve_stop
SOUT1=$SOUT
yb_serve "$T/serve2.out" --restconf 127.0.0.1:0 --gnmi off --self-signed \
    --write-cert "$T/cert2.pem" --auth admin --no-resumption
timeout 60 "$YB" run "$T/r.ybc" --target "$RURL" --cacert "$T/cert2.pem" --user admin -q -c 2 \
    --sessions per-request --tls-resume --json "$T/nores.json" >/dev/null 2>&1
is "serve --no-resumption: every handshake is full" \
    "$(j "$T/nores.json" "d['sessions']['tls_full'], d['sessions']['tls_resumed']")" "20 0"
yb_serve_stop
SOUT=$SOUT1
like "serve counted the connections it saw (2+20+20+2+2+20 restconf, 2+20+20+2+1 gnmi)" \
    "$(cat "$SOUT")" 'connections: restconf 66, gnmi 45'
done_testing
