#!/bin/bash
# tests/capture/tlshandshake.sh -- TLS 1.3 handshake messages that real
# stacks send are accepted or skipped, never fatal: a client
# EncryptedExtensions with ALPS (BoringSSL/Chromium; forged by tlscap.py
# since OpenSSL cannot send one, and checked against tshark's own
# decryption), NewSessionTicket, mTLS (CertificateRequest, the client's
# Certificate and CertificateVerify) in the handshake and after it; and
# hostile variants of the client EncryptedExtensions skipped with their
# reason named, in the text and the JSON.  (KeyUpdate, EndOfEarlyData and
# HelloRetryRequest are checked by tests/unit/test_tls_decrypt.c.)
. "$YB_SRCDIR/tests/lib.sh"
TC="/usr/bin/python3 $YB_SRCDIR/tests/capture/tlscap.py"
PT="/usr/bin/python3 $YB_SRCDIR/tests/capture/pcaptool.py"
if ! /usr/bin/python3 -c 'import cryptography' 2>/dev/null; then
    echo "1..0 # SKIP python3-cryptography missing"
    exit 0
fi
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=sw \
    -keyout "$T/k.pem" -out "$T/c.pem" -days 2 >/dev/null 2>&1
for s in h1 mtls pha alps alps-new ee-bad ee-twice ee-cut tls12-ee; do
    $TC "$T/c.pem" "$T/k.pem" "$T/$s.pcap" "$T/$s.keylog" $s || not_ok "tlscap.py $s"
done
cap() { # NAME: capture with its key log; text in NAME.err, JSON in NAME.json
    "$YB" capture -r "$T/$1.pcap" --keylog "$T/$1.keylog" -o "$T/$1.ybc" --json "$T/$1.json" 2>"$T/$1.err"
}
nots() { "$YB" corpus cat "$1" | sed 's/"timestamp_ns":[0-9]*,//'; }

cap h1
ref=$(nots "$T/h1.ybc")
is "h1: the GET" "$(echo "$ref" | grep -o '"method":"GET","scheme":"https","authority":"sw","path":"/restconf/data/x"')" \
    '"method":"GET","scheme":"https","authority":"sw","path":"/restconf/data/x"'
for s in mtls pha alps alps-new; do
    cap $s
    is "$s: decrypted, nothing skipped" \
        "$(jget "$T/$s.json" '[r["tls"]["decrypted"], r["tls"]["skipped"], r["requests"]["total"]]')" "[1,0,1]"
    is "$s: the same record as without" "$(nots "$T/$s.ybc")" "$ref"
done
# What the capture holds, as tshark decrypts it.
if command -v tshark >/dev/null; then
    hs() { tshark -r "$T/$1.pcap" -o "tls.keylog_file:$T/$1.keylog" -V 2>/dev/null |
        grep -o 'Handshake Type: [A-Za-z ]*' | sort | uniq -c | tr -s ' ' | tr '\n' ';'; }
    like "h1: the server sent NewSessionTickets" "$(hs h1)" 'New Session Ticket'
    like "mtls: CertificateRequest, 2 Certificate, 2 CertificateVerify" "$(hs mtls)" \
        '2 Handshake Type: Certificate ; 1 Handshake Type: Certificate Request ; 2 Handshake Type: Certificate Verify ;'
    like "pha: CertificateRequest after the handshake" "$(hs pha)" '1 Handshake Type: Certificate Request ;'
    like "alps: tshark sees 2 EncryptedExtensions (server's and client's)" "$(hs alps)" \
        '2 Handshake Type: Encrypted Extensions ;'
    like "alps: with application_settings (17513)" \
        "$(tshark -r "$T/alps.pcap" -o "tls.keylog_file:$T/alps.keylog" -V 2>/dev/null | grep 'Type: application_settings')" \
        'application_settings \(17513\)'
else
    ok "# SKIP tshark not installed"
fi

# Hostile client EncryptedExtensions: skipped, the reason named.
reason_is() { # DESC NAME REASON
    is "$1: text" "$(grep '^  skipped' "$T/$2.err")" "  skipped 127.0.0.1:40000 -> 127.0.0.1:443: $3"
    is "$1: JSON" "$(jget "$T/$2.json" '[r["tls"]["skipped"], r["tls"]["skipped_flows"][0]["reason"]]')" \
        "$(/usr/bin/python3 -c 'import json,sys; print(json.dumps([1, sys.argv[1]], separators=(",", ":")))' "$3")"
}
for s in ee-bad ee-twice ee-cut tls12-ee; do
    check_rc "$s: exit 0" 0 cap $s
done
reason_is "extension vector longer than the message" ee-bad "bad EncryptedExtensions from the client"
reason_is "two client EncryptedExtensions" ee-twice \
    "unexpected handshake message EncryptedExtensions from the client (a second one)"
reason_is "a message longer than its record" ee-cut \
    "bad record mac after an incomplete handshake message EncryptedExtensions (58 of 300 bytes)"
reason_is "forged into a TLS 1.2 session" tls12-ee \
    "unexpected handshake message EncryptedExtensions from the client in TLS 1.2"

# Every segment of the ALPS session lost in turn, and cuts: counted, never a crash.
n=$(tshark -r "$T/alps.pcap" -Y 'tcp.len > 0' 2>/dev/null | wc -l)
bad=0
for i in $(seq 0 $((n - 1))); do
    $PT "$T/alps.pcap" "$T/d.pcap" drop "$i"
    timeout 60 "$YB" capture -q -r "$T/d.pcap" --keylog "$T/alps.keylog" -o "$T/d.ybc" || bad=$((bad + 1))
done
for cut in 60 120 300; do
    $PT "$T/alps.pcap" "$T/d.pcap" snaplen $cut
    timeout 60 "$YB" capture -q -r "$T/d.pcap" --keylog "$T/alps.keylog" -o "$T/d.ybc" || bad=$((bad + 1))
done
is "alps: each of $n segments lost, 3 snaplen cuts: exit 0 every time" "$bad" 0
done_testing
