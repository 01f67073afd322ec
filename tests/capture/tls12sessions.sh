#!/bin/bash
# tests/capture/tls12sessions.sh OUTDIR -- records TLS 1.2 sessions with RSA
# key exchange between `openssl s_server -www` (an RSA certificate) and
# `openssl s_client -no_tls1_3`, with tcpdump on lo (needs root):
#   1  AES128-SHA          CBC, encrypt-then-MAC (OpenSSL's default); a ticket;
#                          the client's key log of this one connection
#                          (OUTDIR/client.keylog)
#   2  AES128-SHA          resumes 1 by its ticket
#   3  AES256-SHA256       CBC, -no_etm (MAC-then-encrypt)
#   4  AES128-GCM-SHA256   -no_ticket: a session ID
#   5  AES128-GCM-SHA256   resumes 4 by its session ID
#   6  AES256-GCM-SHA384
# each one `GET /restconf/data/N` (N = 1..6).  Writes OUTDIR/tls12.pcap,
# OUTDIR/key.pem (0600) and OUTDIR/cert.pem.  Exits non-zero when a step
# fails (the caller decides whether that is a SKIP).
set -u
D=${1:?usage: tls12sessions.sh OUTDIR}
mkdir -p "$D"
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=sw -days 2 \
    -keyout "$D/key.pem" -out "$D/cert.pem" >/dev/null 2>&1 || exit 1
chmod 600 "$D/key.pem"
TD= SP=
stop() {
    [ -n "$SP" ] && kill "$SP" 2>/dev/null && wait "$SP" 2>/dev/null
    [ -n "$TD" ] && kill -INT "$TD" 2>/dev/null && wait "$TD" 2>/dev/null
    SP= TD=
}
trap stop EXIT
openssl s_server -accept "127.0.0.1:$port" -cert "$D/cert.pem" -key "$D/key.pem" -www \
    -no_tls1_3 -cipher 'AES128-SHA:AES256-SHA256:AES128-GCM-SHA256:AES256-GCM-SHA384:@SECLEVEL=0' \
    >"$D/server.log" 2>&1 &
SP=$!
for _ in $(seq 100); do grep -q ACCEPT "$D/server.log" 2>/dev/null && break; sleep 0.05; done
timeout 120 tcpdump -i lo --immediate-mode -U -s 0 -w "$D/tls12.pcap" "tcp port $port" \
    2>"$D/tcpdump.err" &
TD=$!
for _ in $(seq 100); do grep -q "listening on" "$D/tcpdump.err" 2>/dev/null && break; sleep 0.05; done
# get N SUITE [s_client options]: one connection, one GET, the response read.
get() {
    local n=$1 suite=$2
    shift 2
    printf 'GET /restconf/data/%s HTTP/1.1\r\nHost: sw\r\n\r\n' "$n" |
        timeout 10 openssl s_client -connect "127.0.0.1:$port" -no_tls1_3 -cipher "$suite:@SECLEVEL=0" \
            -ign_eof -quiet "$@" >"$D/client$n.out" 2>"$D/client$n.err"
}
rm -f "$D/client.keylog"
get 1 AES128-SHA -sess_out "$D/s1.pem" -keylogfile "$D/client.keylog" &&
    get 2 AES128-SHA -sess_in "$D/s1.pem" &&
    get 3 AES256-SHA256 -no_etm &&
    get 4 AES128-GCM-SHA256 -no_ticket -sess_out "$D/s4.pem" &&
    get 5 AES128-GCM-SHA256 -no_ticket -sess_in "$D/s4.pem" &&
    get 6 AES256-GCM-SHA384 || exit 1
sleep 0.5
stop
exit 0
