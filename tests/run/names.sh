#!/bin/bash
# Which name goes where.  -H 'Host: NAME' sets Host (HTTP/1.1) and
# :authority (HTTP/2) instead of the target's, never beside it; RESTCONF
# requests carry a User-Agent (yangblast's, or -H's), as gNMI does.
# --servername NAME sets TLS SNI and the name the certificate is verified
# against; --connect-to HOST:PORT:ADDR:PORT (curl's meaning) dials another
# address while the URL's name stays in Host, SNI and verification.
# Checked in nginx's access log (Host, User-Agent), in nghttpd's frame log
# (:authority, user-agent), and against `yangblast serve` with a
# certificate for sw1.lab only (made here with openssl).
. "$YB_SRCDIR/tests/lib.sh"
PY=/usr/bin/python3
. "$YB_SRCDIR/tests/peers/nginx.sh"
"$YB" synth acl --proto restconf -n 4 -r 1 --name-prefix NM_R -o "$T/r.ybc" >/dev/null
"$YB" synth acl --proto gnmi -n 4 -r 1 --name-prefix NM_G -o "$T/g.ybc" >/dev/null
j() { $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# 1. nginx: Host and User-Agent as logged (fields 16 and 17).
port=$(free_port)
check "nginx starts" nginx_start "$T/ng" "$port"
ngx_stop() { nginx_stop "$T/ng"; }
at_exit ngx_stop
LOG=$(nginx_log "$T/ng")
# hosts_uas: the distinct "Host|User-Agent" of the /restconf lines since line $1.
hosts_uas() { tail -n +"$1" "$LOG" | awk -F'\t' '$5 ~ /^\/restconf/ {print $16 "|" $17}' | sort -u; }
n0=$(($(wc -l <"$LOG") + 1))
timeout 60 "$YB" run "$T/r.ybc" --target "http://127.0.0.1:$port" -q >/dev/null 2>&1
sleep 0.3
like "RESTCONF: Host is the target's, User-Agent is yangblast's" "$(hosts_uas $n0)" \
    "^127\.0\.0\.1:$port\|yangblast/[0-9]"
is "... one of each per request (no duplicates)" "$(hosts_uas $n0 | wc -l)" 1
n0=$(($(wc -l <"$LOG") + 1))
timeout 60 "$YB" run "$T/r.ybc" --target "http://127.0.0.1:$port" -q -H 'Host: sw1.lab' \
    -H 'User-Agent: lab-bot/2' -H 'X-Extra: 1' >/dev/null 2>&1
sleep 0.3
is "-H Host and -H User-Agent replace ours" "$(hosts_uas $n0)" "sw1.lab|lab-bot/2"
nginx_stop "$T/ng"
check_rc "-H 'Host: ...' twice is refused" 2 "$YB" run "$T/r.ybc" --target "http://127.0.0.1:$port" \
    -H 'Host: a' -H 'host: b'

# 2. nghttpd: :authority and user-agent of gNMI requests, each once.
mkdir -p "$T/www"
nport=$(free_port)
nghttpd -v --no-tls -d "$T/www" "$nport" >"$T/ng.log" 2>&1 &
NGPID=$!
at_exit ng_stop
ng_stop() { kill "$NGPID" 2>/dev/null; wait "$NGPID" 2>/dev/null; }
wait_port "$nport" || { echo "Bail out! nghttpd did not start"; exit 1; }
timeout 60 "$YB" run "$T/g.ybc" --target "grpc://127.0.0.1:$nport" -n 1 -q -H 'Host: sw1.lab:8080' \
    -H 'User-Agent: lab-bot/2' >/dev/null 2>&1
ng_stop
hdrs=$(grep -E 'recv \(stream_id=1\) (:authority|host|user-agent):' "$T/ng.log" | sed 's/.*) //' | sort)
is "gNMI: -H Host is :authority (no host header beside it), -H User-Agent replaces ours" \
    "$hdrs" "$(printf ':authority: sw1.lab:8080\nuser-agent: lab-bot/2')"

# 3. serve with a certificate for sw1.lab only.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -keyout "$T/sw1.key" -out "$T/sw1.pem" -subj /CN=sw1.lab \
    -addext "subjectAltName=DNS:sw1.lab" >/dev/null 2>&1 || { echo "Bail out! openssl"; exit 1; }
yb_serve "$T/serve.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --tls-cert "$T/sw1.pem" \
    --tls-key "$T/sw1.key" || { echo "Bail out! serve did not start"; exit 1; }
rport=${RURL##*:}
run() { timeout 60 "$YB" run "$@" -q --json "$T/o.json" >/dev/null 2>&1; j "$T/o.json" "d['summary']['requests_ok'], d['errors']['tls']"; }
is "https://127.0.0.1 with a sw1.lab certificate: verification fails" \
    "$(run "$T/r.ybc" --target "$RURL" --cacert "$T/sw1.pem")" "0 4"
is "... with --servername sw1.lab it passes" \
    "$(run "$T/r.ybc" --target "$RURL" --cacert "$T/sw1.pem" --servername sw1.lab)" "4 0"
is "gNMI (grpcs) with --servername sw1.lab passes" \
    "$(run "$T/g.ybc" --target "$GURL" --cacert "$T/sw1.pem" --servername sw1.lab)" "4 0"
is "--servername other.lab fails verification" \
    "$(run "$T/r.ybc" --target "$RURL" --cacert "$T/sw1.pem" --servername other.lab)" "0 4"
# sw1.lab does not resolve: --connect-to dials 127.0.0.1, the name stays sw1.lab
is "https://sw1.lab:$rport --connect-to sw1.lab:$rport:127.0.0.1: passes verification" \
    "$(run "$T/r.ybc" --target "https://sw1.lab:$rport" --connect-to "sw1.lab:$rport:127.0.0.1:" --cacert "$T/sw1.pem")" "4 0"
is "--connect-to ::127.0.0.1:$rport (any host, any port)" \
    "$(run "$T/r.ybc" --target "https://sw1.lab:1" --connect-to "::127.0.0.1:$rport" --cacert "$T/sw1.pem")" "4 0"
# experiment takes --servername (both targets) and --connect-to (the target it matches)
exp() { timeout 120 "$YB" experiment sessions -n 4 -q --json "$T/e.json" "$@" >/dev/null 2>&1
        $PY -c "import json,sys; print(' '.join('%d/%d' % (r['summary']['requests_ok'], r['errors']['tls']) for r in json.load(open(sys.argv[1]))['runs']))" "$T/e.json"; }
is "experiment --restconf https://127.0.0.1 with a sw1.lab certificate: verification fails (the study stops)" \
    "$(exp --restconf "$RURL" --cacert "$T/sw1.pem")" "0/4"
is "experiment ... --servername sw1.lab: passes (reuse and per-request)" \
    "$(exp --restconf "$RURL" --cacert "$T/sw1.pem" --servername sw1.lab)" "4/0 4/0"
gport=${GURL##*:}
is "experiment --connect-to dials for the target it matches only, --servername for both" \
    "$(exp --restconf "https://sw1.lab:$rport" --gnmi "$GURL" --cacert "$T/sw1.pem" \
        --connect-to "sw1.lab:$rport:127.0.0.1:$rport" --servername sw1.lab)" "4/0 4/0 4/0 4/0"
yb_serve_stop
check_rc "--connect-to that does not match the target is refused" 2 \
    "$YB" run "$T/r.ybc" --target "https://sw1.lab:443" --connect-to "sw2.lab::127.0.0.1:1"
like "... saying so" "$(cat "$T/.out")" 'does not match the target'
check_rc "--connect-to malformed is refused" 2 \
    "$YB" run "$T/r.ybc" --target "https://sw1.lab:443" --connect-to "sw1.lab:443:127.0.0.1"
check_rc "--servername with http:// is refused (no TLS)" 2 \
    "$YB" run "$T/r.ybc" --target "http://127.0.0.1:1" --servername sw1.lab
check_rc "experiment --connect-to that matches neither target is refused" 2 \
    "$YB" experiment sessions --restconf "https://sw1.lab:443" --gnmi "grpcs://sw1.lab:8080" \
    --connect-to "sw2.lab::127.0.0.1:1"
like "... saying so" "$(cat "$T/.out")" "matches no target of the study \\(sw1.lab:443, sw1.lab:8080\\)"
check_rc "experiment --servername without a TLS target is refused" 2 \
    "$YB" experiment sessions --restconf "http://127.0.0.1:1" --servername sw1.lab
for o in "--connect-to ::127.0.0.1:1" "--servername sw1.lab" "-H Host:sw1.lab"; do
    check_rc "$o with two targets is refused (it names one target)" 2 \
        "$YB" run "$T/r.ybc" --target "https://127.0.0.1:1" --target "grpcs://127.0.0.1:2" $o
done
done_testing
