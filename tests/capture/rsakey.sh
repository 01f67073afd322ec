#!/bin/bash
# tests/capture/rsakey.sh -- TLS 1.2 with RSA key exchange decrypted with
# the server's key (--server-key): CBC with and without encrypt-then-MAC,
# GCM, resumption by ticket and by session ID across the capture's flows;
# the key file is a secret (refused when group/others may read it, never
# printed); wrong, missing and hostile keys give named reasons.  On the
# committed captures/restconf-tls12-rsa.pcap, and on a fresh recording of
# openssl s_client/s_server (tests/capture/tls12sessions.sh; SKIP that
# part without root for tcpdump).
. "$YB_SRCDIR/tests/lib.sh"
C=$YB_SRCDIR/captures
PT="/usr/bin/python3 $YB_SRCDIR/tests/capture/pcaptool.py"
install -m 600 "$C/restconf-tls12-rsa.server-key.pem" "$T/key.pem"
cp "$C/restconf-tls12-rsa.pcap" "$T/rsa.pcap"
paths() { "$YB" corpus cat "$1" | grep -o '"path":"[^"]*"' | tr '\n' ' '; }
want='"path":"/restconf/data/1" "path":"/restconf/data/2" "path":"/restconf/data/3" "path":"/restconf/data/4" "path":"/restconf/data/5" "path":"/restconf/data/6" '

# check_sessions PCAP KEY DESC: the 6 sessions of tls12sessions.sh decrypt.
check_sessions() {
    "$YB" capture -r "$1" --server-key "$2" -o "$T/s.ybc" --json "$T/s.json" 2>"$T/s.err"
    is "$3: exit 0" "$?" 0
    is "$3: the 6 GETs" "$(paths "$T/s.ybc")" "$want"
    is "$3: 6 TLS flows decrypted, 2 of them resumed, no hint" \
        "$(jget "$T/s.json" '[r["tls"]["flows"], r["tls"]["decrypted"], r["tls"]["resumed"], r["tls"]["server_keys"], "hint" in r["tls"]]')" \
        "[6,6,2,1,false]"
    like "$3: said in the text" "$(cat "$T/s.err")" \
        'tls: 6 flow\(s\), 6 decrypted, 0 seen and skipped; 2 of the decrypted resumed a TLS 1.2 session'
    is "$3: every response's status" "$("$YB" corpus cat "$T/s.ybc" | grep -c '"expected_status":200')" 6
}
check_sessions "$T/rsa.pcap" "$T/key.pem" "committed capture"

# The client's key log of the first connection only: it decrypts, and the
# second, which resumes its session by ticket, too.
"$YB" capture -r "$T/rsa.pcap" --keylog "$C/restconf-tls12-rsa.keylog" -o "$T/k.ybc" --json "$T/k.json" 2>"$T/k.err"
is "first connection's key log: GETs 1 and 2" "$(paths "$T/k.ybc")" \
    '"path":"/restconf/data/1" "path":"/restconf/data/2" '
is "first connection's key log: 2 decrypted, 1 resumed, 4 skipped" \
    "$(jget "$T/k.json" '[r["tls"]["decrypted"], r["tls"]["resumed"], r["tls"]["skipped"]]')" "[2,1,4]"

# Without the key: each RSA flow says what would decrypt it.
"$YB" capture -r "$T/rsa.pcap" -o "$T/n.ybc" --json "$T/n.json" 2>"$T/n.err"
is "no key: all skipped, no key log given" "$(jget "$T/n.json" 'r["tls"]["skip_reasons"]')" '{"no key log given":6}'
# Only the client's key log of the 6th connection: that one decrypts.
"$YB" capture -r "$T/rsa.pcap" --keylog /dev/null -o "$T/n.ybc" --json "$T/n.json" 2>"$T/n.err"
is "empty key log: the RSA hint and the resumed sessions named" \
    "$(jget "$T/n.json" 'r["tls"]["skip_reasons"]')" \
    '{"no keys for this client random (RSA key exchange: --server-key with the server'"'"'s private key would decrypt it)":4,"no keys for this client random (a resumed session whose first connection is not in the capture)":2}'
# Another RSA key: the certificate does not match it.
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$T/other.pem" 2>/dev/null
chmod 600 "$T/other.pem"
"$YB" capture -r "$T/rsa.pcap" --server-key "$T/other.pem" -o "$T/n.ybc" --json "$T/n.json" 2>"$T/n.err"
is "another server's key: named" "$(jget "$T/n.json" 'r["tls"]["skip_reasons"]')" \
    '{"RSA key exchange: no --server-key matches the server'"'"'s certificate":4,"no keys for this client random (a resumed session whose first connection is not in the capture)":2}'
# Both keys: the matching one is picked.
"$YB" capture -q -r "$T/rsa.pcap" --server-key "$T/other.pem" --server-key "$T/key.pem" -o "$T/n.ybc"
is "two keys: the certificate's is used" "$(paths "$T/n.ybc")" "$want"
# The resumed sessions need their first connection in the same capture.
/usr/bin/python3 - "$T/rsa.pcap" "$T/second.pcap" <<'PY'
# keeps the packets of the 2nd TCP connection only (the resumed one)
import struct, sys
b = open(sys.argv[1], "rb").read()
out, off, conns, server = bytearray(b[:24]), 24, [], None
while off + 16 <= len(b):
    cl = struct.unpack("<I", b[off + 8:off + 12])[0]
    pkt = b[off + 16:off + 16 + cl]
    sport, dport = struct.unpack(">HH", pkt[34:38])
    server = server or dport  # the first packet is the first SYN
    client = sport if dport == server else dport
    if client not in conns:
        conns.append(client)
    if conns.index(client) == 1:
        out += b[off:off + 16 + cl]
    off += 16 + cl
open(sys.argv[2], "wb").write(out)
PY
"$YB" capture -r "$T/second.pcap" --server-key "$T/key.pem" -o "$T/n.ybc" --json "$T/n.json" 2>"$T/n.err"
is "a resumed connection alone: named" "$(jget "$T/n.json" 'r["tls"]["skipped_flows"][0]["reason"]')" \
    "no keys for this client random (a resumed session whose first connection is not in the capture)"

# The key file is a secret.
cp "$T/key.pem" "$T/open.pem"
chmod 644 "$T/open.pem"
"$YB" capture -r "$T/rsa.pcap" --server-key "$T/open.pem" -o "$T/open.ybc" 2>"$T/open.err"
is "group/world-readable key: exit 2" "$?" 2
like "group/world-readable key: why, and what to do" "$(cat "$T/open.err")" \
    "server key $T/open.pem is accessible to group/others \\(mode 0644\\); a private key must stay private: chmod 600 $T/open.pem"
is "group/world-readable key: no key material printed" "$(grep -c 'BEGIN\|MII' "$T/open.err")" 0
is "refused before any output" "$(ls "$T" | grep -c '^open.ybc')" 0
check_rc "missing key file: exit 2" 2 "$YB" capture -r "$T/rsa.pcap" --server-key "$T/none.pem" -o "$T/x.ybc"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$T/ec.pem" 2>/dev/null
chmod 600 "$T/ec.pem"
"$YB" capture -r "$T/rsa.pcap" --server-key "$T/ec.pem" -o "$T/x.ybc" 2>"$T/ec.err"
is "EC key: exit 2" "$?" 2
like "EC key: named" "$(cat "$T/ec.err")" "$T/ec.pem: not an RSA key"
head -c 3000 /dev/urandom >"$T/junk.pem"
chmod 600 "$T/junk.pem"
check_rc "not a PEM key: exit 2" 2 "$YB" capture -r "$T/rsa.pcap" --server-key "$T/junk.pem" -o "$T/x.ybc"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -aes128 -pass pass:x -out "$T/enc.pem" 2>/dev/null
chmod 600 "$T/enc.pem"
"$YB" capture -r "$T/rsa.pcap" --server-key "$T/enc.pem" -o "$T/x.ybc" 2>"$T/enc.err" </dev/null
is "passphrase-protected key: exit 2, no prompt" "$?" 2
like "passphrase-protected key: named" "$(cat "$T/enc.err")" 'not a PEM private key \(or one protected by a passphrase\)'

# Hostile: every data segment lost in turn, cuts: exit 0, counted.
n=$(/usr/bin/python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read(); off = 24; n = 0
while off + 16 <= len(b):
    cl = struct.unpack("<I", b[off + 8:off + 12])[0]; p = b[off + 16:off + 16 + cl]
    ihl = (p[14] & 15) * 4; tot = struct.unpack(">H", p[16:18])[0]; doff = (p[14 + ihl + 12] >> 4) * 4
    n += tot - ihl - doff > 0; off += 16 + cl
print(n)' "$T/rsa.pcap")
bad=0
for i in $(seq 0 $((n - 1))); do
    $PT "$T/rsa.pcap" "$T/d.pcap" drop "$i"
    timeout 60 "$YB" capture -q -r "$T/d.pcap" --server-key "$T/key.pem" -o "$T/d.ybc" || bad=$((bad + 1))
done
for cut in 80 200 600; do
    $PT "$T/rsa.pcap" "$T/d.pcap" snaplen $cut
    timeout 60 "$YB" capture -q -r "$T/d.pcap" --server-key "$T/key.pem" -o "$T/d.ybc" || bad=$((bad + 1))
done
is "each of $n data segments lost, 3 snaplen cuts: exit 0 every time" "$bad" 0

# A fresh recording with openssl s_client / s_server.
if command -v tcpdump >/dev/null && [ "$(id -u)" = 0 ]; then
    ok=0
    for try in 1 2 3; do
        rm -rf "$T/live"
        "$YB_SRCDIR/tests/capture/tls12sessions.sh" "$T/live" || continue
        "$YB" capture -q -r "$T/live/tls12.pcap" --server-key "$T/live/key.pem" -o "$T/l.ybc"
        [ "$(paths "$T/l.ybc")" = "$want" ] && { ok=1; break; }
        diag "live recording, try $try: $(paths "$T/l.ybc"); tcpdump: $(grep -h dropped "$T/live/tcpdump.err" | tr '\n' ' ')"
    done
    is "live openssl s_client/s_server recording: recorded" "$ok" 1
    [ "$ok" = 1 ] && check_sessions "$T/live/tls12.pcap" "$T/live/key.pem" "live recording"
else
    ok "# SKIP live recording: tcpdump on lo needs root"
fi
done_testing
