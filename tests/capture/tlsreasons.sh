#!/bin/bash
# tests/capture/tlsreasons.sh -- why each TLS flow was skipped, in the text
# report and the JSON (tls.skipped_flows, tls.skip_reasons), and the
# --keylog hint when TLS was seen without any key.  The captures are made
# here by tests/capture/tlscap.py (Python's ssl over memory BIOs).
. "$YB_SRCDIR/tests/lib.sh"
TC="/usr/bin/python3 $YB_SRCDIR/tests/capture/tlscap.py"
PT="/usr/bin/python3 $YB_SRCDIR/tests/capture/pcaptool.py"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=sw \
    -keyout "$T/k.pem" -out "$T/c.pem" -days 2 >/dev/null 2>&1
for s in h1 h2-split tls12 tls12-cbc tls12-ccm mismatch dup-sh; do
    $TC "$T/c.pem" "$T/k.pem" "$T/$s.pcap" "$T/$s.keylog" $s || not_ok "tlscap.py $s"
done

# cap NAME PCAP [OPTIONS]: runs capture, text report in NAME.err, JSON in NAME.json.
cap() {
    local n=$1 p=$2
    shift 2
    "$YB" capture -r "$p" -o "$T/$n.ybc" --json "$T/$n.json" "$@" 2>"$T/$n.err"
}
# skip_is DESC NAME REASON: the one TLS flow of NAME was skipped for REASON,
# in the text and the JSON.
skip_is() {
    is "$1: text" "$(grep '^  skipped' "$T/$2.err")" \
        "  skipped 127.0.0.1:40000 -> 127.0.0.1:443: $3"
    is "$1: JSON" "$(jget "$T/$2.json" '[r["tls"]["skipped"], r["tls"]["skipped_flows"][0]["reason"], r["tls"]["skip_reasons"]]')" \
        "$(/usr/bin/python3 -c 'import json,sys; print(json.dumps([1, sys.argv[1], {sys.argv[1]: 1}], separators=(",", ":"), sort_keys=True))' "$3")"
}

# Decrypted with their key logs: nothing skipped, no hint.
for s in h1 h2-split tls12 tls12-cbc; do
    cap "$s" "$T/$s.pcap" --keylog "$T/$s.keylog"
    is "$s with its key log: decrypted, 1 record" \
        "$(jget "$T/$s.json" '[r["tls"]["decrypted"], r["tls"]["skipped"], r["requests"]["total"], r["tls"]["skipped_flows"], "hint" in r["tls"]]')" \
        "[1,0,1,[],false]"
done
# The client's first plaintext is 1 byte ("P"): the HTTP/2 preface is
# still recognised without ALPN.
is "h2-split: an HTTP/2 request" "$(jget "$T/h2-split.json" 'r["requests"]["http2"]')" 1

# No key log at all: the reason, and the hint.
cap nokeylog "$T/h1.pcap"
skip_is "no key log" nokeylog "no key log given"
like "no key log: hint in the text" "$(cat "$T/nokeylog.err")" \
    '^hint: TLS flows were seen and no key log was given: pass the client.s key log \(SSLKEYLOGFILE\) with --keylog FILE'
like "no key log: hint in the JSON" "$(jget "$T/nokeylog.json" 'r["tls"]["hint"]')" 'with --keylog FILE'
is "no key log: keylog_given false" "$(jget "$T/nokeylog.json" 'r["tls"]["keylog_given"]')" false
# Another session's key log: no keys for this client random, named by it.
cap otherkeys "$T/h1.pcap" --keylog "$T/h2-split.keylog"
skip_is "another session's key log" otherkeys "no keys for this client random"
is "another session's key log: the client random in the JSON" \
    "$(jget "$T/otherkeys.json" 'r["tls"]["skipped_flows"][0]["client_random"]')" \
    "$(awk '$1 == "CLIENT_HANDSHAKE_TRAFFIC_SECRET" {print $2}' "$T/h1.keylog")"
is "a key log given: no hint" "$(jget "$T/otherkeys.json" '"hint" in r["tls"]')" false
cap tls12-13keys "$T/tls12.pcap" --keylog "$T/h1.keylog"
skip_is "TLS 1.2 flow, TLS 1.3 session's key log" tls12-13keys "no keys for this client random"
# Partial key logs: the h1 session's without the lines matching a pattern.
while IFS='|' read -r name pattern reason; do
    grep -v "$pattern" "$T/h1.keylog" >"$T/$name.keylog"
    cap "$name" "$T/h1.pcap" --keylog "$T/$name.keylog"
    skip_is "key log without /$pattern/" "$name" "$reason"
done <<'CASES'
client-only|^SERVER_|key log for the client direction only (SERVER_HANDSHAKE_TRAFFIC_SECRET missing)
server-only|^CLIENT_|key log for the server direction only (CLIENT_HANDSHAKE_TRAFFIC_SECRET missing)
no-sts0|^SERVER_TRAFFIC_SECRET_0|key log for the client direction only (SERVER_TRAFFIC_SECRET_0 missing)
hs-only|_TRAFFIC_SECRET_0|no CLIENT_TRAFFIC_SECRET_0 or SERVER_TRAFFIC_SECRET_0 for this client random
CASES
# The suite, the alert, the handshake message, named.
cap ccm "$T/tls12-ccm.pcap" --keylog "$T/tls12-ccm.keylog"
skip_is "CCM suite" ccm "unsupported cipher suite 0xc0ac (TLS_ECDHE_ECDSA_WITH_AES_128_CCM)"
cap mismatch "$T/mismatch.pcap" --keylog "$T/mismatch.keylog"
skip_is "refused handshake" mismatch "handshake failed: alert 40 (handshake failure)"
cap dup-sh "$T/dup-sh.pcap" --keylog "$T/dup-sh.keylog"
skip_is "a second ServerHello" dup-sh "unexpected handshake message ServerHello (a second one)"
# Lost data: the capture began after the ClientHello, or a segment is lost.
$PT "$T/h1.pcap" "$T/noch.pcap" drop 0
cap noch "$T/noch.pcap" --keylog "$T/h1.keylog"
skip_is "ClientHello lost" noch "no handshake captured"
$PT "$T/h1.pcap" "$T/gap.pcap" drop 2
cap gap "$T/gap.pcap" --keylog "$T/h1.keylog"
skip_is "a segment lost" gap "a TCP segment was lost (gap): decryption cannot resume after it"
/usr/bin/python3 - "$T/h1.pcap" "$T/cut.pcap" <<'PY'
# The capture ends after the ClientHello (SYN, SYN-ACK, ACK, ClientHello).
import struct, sys
b = open(sys.argv[1], "rb").read()
out, off = bytearray(b[:24]), 24
for _ in range(4):
    cl = struct.unpack("<I", b[off + 8:off + 12])[0]
    out += b[off:off + 16 + cl]
    off += 16 + cl
open(sys.argv[2], "wb").write(out)
PY
cap cut "$T/cut.pcap" --keylog "$T/h1.keylog"
skip_is "ended after the ClientHello" cut "the connection ended before the ServerHello"

# Many skipped flows: the text lists 16, then counts by reason.
files=()
for i in $(seq 1 17); do
    $TC "$T/c.pem" "$T/k.pem" "$T/m$i.pcap" "$T/m$i.keylog" h1 $((1000 + i))
    files+=(-r "$T/m$i.pcap")
done
"$YB" capture "${files[@]}" -o "$T/many.ybc" --json "$T/many.json" 2>"$T/many.err"
is "17 flows: 16 listed in the text" "$(grep -c '^  skipped 127' "$T/many.err")" 16
like "17 flows: then by reason" "$(cat "$T/many.err")" \
    '  \.\.\. 1 more; skipped flows by reason:.*'
like "17 flows: count of the reason" "$(grep -A1 'by reason' "$T/many.err" | tail -1)" \
    '^ +17  no key log given$'
is "17 flows: all in the JSON" "$(jget "$T/many.json" '[len(r["tls"]["skipped_flows"]), r["tls"]["skip_reasons"]]')" \
    '[17,{"no key log given":17}]'
done_testing
