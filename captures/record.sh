#!/bin/bash
# captures/record.sh -- records the small loopback captures that
# tests/capture/captures.sh converts and compares with the committed
# NAME.expected.jsonl files, and (re)writes those expectations.
#
#   captures/record.sh BUILDDIR [NAME...]     (as root: tcpdump -i lo)
#   captures/record.sh BUILDDIR --expected    only rewrite the expectations
#
# Each capture is tcpdump on lo, filtered on a free port, while a real
# client talks to a real server:
#   h1-keepalive      curl -> nginx: 3 requests on one keep-alive connection
#                     (PATCH with a JSON body and HTTP Basic credentials,
#                     GET, a 404 outside /restconf)
#   h1-pipelined      python3 socket -> nginx: 3 pipelined requests in one
#                     write, one with a chunked body
#   restconf-tls      curl (SSLKEYLOGFILE) -> nginx over TLS; key log kept
#                     as restconf-tls.keylog
#   gnmi-h2c          python grpcio client -> gnmi_server.py (h2c):
#                     Capabilities, Set, Get, Subscribe ONCE with
#                     username/password metadata
#   gnmi-interleaved  yangblast run -m 8 -> gnmi_server.py: 16 Sets on one
#                     connection, 8 streams at a time
#   gnmi-tls          yangblast run --keylog -> gnmi_server.py over TLS;
#                     gnmi-tls.keylog, and gnmi-tls-dsb.pcapng with the key
#                     log inside (editcap --inject-secrets) when editcap exists
#   restconf-tls13-chromium  headless Chromium (SSLKEYLOGFILE) -> nginx over
#                     TLS 1.3: a RESTCONF GET as a browser sends it (GREASE,
#                     ALPS and ECH offers in its ClientHello, a preconnected
#                     second connection that stays empty); key log kept
#   restconf-tls13-alps  tests/capture/tlscap.py alps: Python's ssl (OpenSSL)
#                     client and server over memory BIOs, TLS 1.3, one
#                     RESTCONF GET, with the client EncryptedExtensions
#                     carrying ALPS that BoringSSL/Chromium clients send
#                     (OpenSSL cannot: tlscap.py forges it into the client's
#                     Finished record with the logged secret); key log kept
#   restconf-tls12-rsa  tests/capture/tls12sessions.sh: openssl s_client ->
#                     s_server -www over TLS 1.2 with RSA key exchange: CBC
#                     with and without encrypt-then-MAC, GCM, resumption by
#                     ticket and by session ID; the server's (test) key kept
#                     as restconf-tls12-rsa.server-key.pem, the client's key
#                     log of the first connection as restconf-tls12-rsa.keylog
#   restconf-tls12-java  captures/RestconfClient.java (OpenJDK 17's JSSE,
#                     HttpsURLConnection) -> nginx with an RSA key over TLS 1.2,
#                     TLS_RSA_WITH_AES_128_CBC_SHA256 pinned: a POST with a JSON
#                     body, then a GET on a second connection that resumes the
#                     session; nginx's (test) key kept as
#                     restconf-tls12-java.server-key.pem
#   h1-frag           made from h1-keepalive.pcap by pcaptool.py frag 64:
#                     every IPv4 packet over 64 bytes of payload in fragments
#   h1-frag-ipv6      the same over IPv6 (pcaptool.py ipv6), fragments of
#                     each datagram in reverse order (fragrev 64)
#   h1-rst-late       made from h1-keepalive.pcap by tests/capture/pcaptool.py
#                     rstlate: the server resets after the last response,
#                     then both sides' last segments come again, an ACK and
#                     a RST (late packets: still 1 flow, as tshark counts)
# The expected output of NAME is
#   SOURCE_DATE_EPOCH=1767225600 yangblast capture -r NAME.pcap[ng]
#       [--keylog NAME.keylog] [--server-key NAME.server-key.pem (a 0600 copy)]
#       -o x.ybc && yangblast corpus cat --with-header x.ybc
# Re-recording changes the pcaps (timestamps, ports): commit them together.
set -u
B=${1:?usage: record.sh BUILDDIR [NAME...]}
shift
YB=$(cd "$B" && pwd)/yangblast
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(dirname "$HERE")
PEERS=$SRC/tests/peers
. "$PEERS/nginx.sh"
. "$PEERS/peer.sh"
W=$(mktemp -d /tmp/yb-record.XXXXXX)
TCPDUMP_PID=
cleanup() {
    [ -n "$TCPDUMP_PID" ] && kill -INT "$TCPDUMP_PID" 2>/dev/null
    nginx_stop "$W/nginx" 2>/dev/null
    peer_stop "$W/gnmi" 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT
export SOURCE_DATE_EPOCH=1767225600

free_port() {
    /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# cap_start FILE PORT: tcpdump on lo for PORT; returns once it listens.
cap_start() {
    # --immediate-mode: packets are written as they come, not when the ring
    # buffer times out (else a quick stop loses them); timeout bounds it.
    timeout 120 tcpdump -i lo --immediate-mode -U -s 0 -w "$1" "tcp port $2" 2>"$W/tcpdump.err" &
    TCPDUMP_PID=$!
    for _ in $(seq 100); do
        grep -q "listening on" "$W/tcpdump.err" 2>/dev/null && return 0
        sleep 0.05
    done
    echo "tcpdump did not start" >&2
    cat "$W/tcpdump.err" >&2
    return 1
}
cap_stop() {
    sleep 0.5
    kill -INT "$TCPDUMP_PID"
    wait "$TCPDUMP_PID" 2>/dev/null
    TCPDUMP_PID=
}

# expect FILE: (re)writes NAME.expected.jsonl for captures/NAME.pcap[ng],
# with NAME.keylog when there is one.
expect() {
    local file=$1 name
    name=$(basename "$file"); name=${name%.pcap}; name=${name%.pcapng}
    local kl=()
    [ -f "$HERE/$name.keylog" ] && kl=(--keylog "$HERE/$name.keylog")
    if [ -f "$HERE/$name.server-key.pem" ]; then
        # git keeps no file modes: the key goes in as a private copy
        install -m 600 "$HERE/$name.server-key.pem" "$W/$name.key"
        kl+=(--server-key "$W/$name.key")
    fi
    "$YB" capture -q -r "$file" "${kl[@]}" -o "$W/$name.ybc" &&
        "$YB" corpus cat --with-header "$W/$name.ybc" >"$HERE/$name.expected.jsonl"
    echo "$name: $(($(wc -l <"$HERE/$name.expected.jsonl") - 1)) records"
}

rec_h1_keepalive() {
    local p; p=$(free_port)
    nginx_start "$W/nginx" "$p" || return 1
    printf '{"openconfig-acl:acl-sets":{"acl-set":[{"name":"A1","type":"ACL_IPV4"}]}}' >"$W/body.json"
    cap_start "$HERE/h1-keepalive.pcap" "$p" || return 1
    curl -s -o /dev/null -u admin:s3cret -X PATCH -H 'Content-Type: application/yang-data+json' \
        --data-binary @"$W/body.json" "http://127.0.0.1:$p/restconf/data/openconfig-acl:acl/acl-sets" \
        --next -s -o /dev/null -u admin:s3cret -H 'Accept: application/yang-data+json' \
        "http://127.0.0.1:$p/restconf/data/openconfig-acl:acl?depth=2" \
        --next -s -o /dev/null -H 'Cookie: session=abc123' "http://127.0.0.1:$p/nothing/here"
    cap_stop
    nginx_stop "$W/nginx"
}

rec_h1_pipelined() {
    local p; p=$(free_port)
    nginx_start "$W/nginx" "$p" || return 1
    cap_start "$HERE/h1-pipelined.pcap" "$p" || return 1
    /usr/bin/python3 - "$p" <<'PY'
import socket, sys
port = int(sys.argv[1])
reqs = (b"GET /restconf/data/openconfig-acl:acl HTTP/1.1\r\nHost: sw1\r\n\r\n"
        b"PUT /restconf/data/openconfig-acl:acl/acl-sets/acl-set=A2,ACL_IPV4 HTTP/1.1\r\n"
        b"Host: sw1\r\nContent-Type: application/yang-data+json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
        b"10\r\n{\"acl-set\":[{\"na\r\n"
        b"14\r\nme\":\"A2\",\"type\":\"ACL\r\n"
        b"8\r\n_IPV4\"}]\r\n1\r\n}\r\n0\r\n\r\n"
        b"DELETE /restconf/data/openconfig-acl:acl/acl-sets/acl-set=A2,ACL_IPV4 HTTP/1.1\r\n"
        b"Host: sw1\r\nConnection: close\r\n\r\n")
s = socket.create_connection(("127.0.0.1", port))
s.sendall(reqs)
while s.recv(65536):
    pass
s.close()
PY
    cap_stop
    nginx_stop "$W/nginx"
}

rec_restconf_tls() {
    local p; p=$(free_port)
    nginx_start "$W/nginx" "$p" tls || return 1
    rm -f "$HERE/restconf-tls.keylog"
    cap_start "$HERE/restconf-tls.pcap" "$p" || return 1
    SSLKEYLOGFILE="$HERE/restconf-tls.keylog" curl -s -o /dev/null --http1.1 \
        --cacert "$(nginx_cert "$W/nginx")" -u admin:s3cret -X POST \
        -H 'Content-Type: application/yang-data+json' --data-binary '{"a":1}' \
        "https://127.0.0.1:$p/restconf/data/openconfig-acl:acl" \
        --next -s -o /dev/null --http1.1 --cacert "$(nginx_cert "$W/nginx")" \
        "https://127.0.0.1:$p/restconf/data/openconfig-acl:acl"
    cap_stop
    nginx_stop "$W/nginx"
}

rec_gnmi_h2c() {
    GNMI_TEST_PASSWORD=pw-secret peer_start "$W/gnmi" gnmi_server.py --max-seconds 60 \
        --require-user alice || return 1
    local p; p=$(peer_port "$W/gnmi")
    printf '{"config":{"name":"A3","type":"ACL_IPV4"}}' >"$W/set.json"
    cap_start "$HERE/gnmi-h2c.pcap" "$p" || return 1
    local c="/usr/bin/python3 $PEERS/gnmi_client.py --target 127.0.0.1:$p --user alice --password pw-secret"
    $c capabilities >/dev/null
    $c set "$W/set.json" "/acl/acl-sets/acl-set[name=A3][type=ACL_IPV4]" --op replace >/dev/null
    $c get "/acl/acl-sets" >/dev/null
    $c subscribe-once "/acl/acl-sets" >/dev/null
    cap_stop
    peer_stop "$W/gnmi"
}

rec_gnmi_interleaved() {
    peer_start "$W/gnmi" gnmi_server.py --max-seconds 60 || return 1
    local p; p=$(peer_port "$W/gnmi")
    "$YB" synth acl --proto gnmi -n 16 --rules 3 -o "$W/set.ybc" || return 1
    cap_start "$HERE/gnmi-interleaved.pcap" "$p" || return 1
    "$YB" run "$W/set.ybc" --target "grpc://127.0.0.1:$p" -c 1 -m 8 -n 16 -q >/dev/null
    cap_stop
    peer_stop "$W/gnmi"
}

rec_gnmi_tls() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj /CN=localhost -addext 'subjectAltName=DNS:localhost,IP:127.0.0.1' \
        -keyout "$W/key.pem" -out "$W/cert.pem" >/dev/null 2>&1
    peer_start "$W/gnmi" gnmi_server.py --max-seconds 60 --tls "$W/cert.pem" "$W/key.pem" || return 1
    local p; p=$(peer_port "$W/gnmi")
    "$YB" synth acl --proto gnmi -n 4 --rules 2 -o "$W/set.ybc" || return 1
    rm -f "$HERE/gnmi-tls.keylog"
    cap_start "$HERE/gnmi-tls.pcap" "$p" || return 1
    "$YB" run "$W/set.ybc" --target "grpcs://127.0.0.1:$p" --cacert "$W/cert.pem" \
        --keylog "$HERE/gnmi-tls.keylog" -c 1 -m 2 -n 4 -q >/dev/null
    cap_stop
    peer_stop "$W/gnmi"
    if command -v editcap >/dev/null; then
        editcap --inject-secrets "tls,$HERE/gnmi-tls.keylog" "$HERE/gnmi-tls.pcap" \
            "$HERE/gnmi-tls-dsb.pcapng"
    fi
}

rec_restconf_tls13_chromium() {
    command -v chromium >/dev/null || { echo "record.sh: chromium not installed" >&2; return 1; }
    local p; p=$(free_port)
    nginx_start "$W/nginx" "$p" tls || return 1
    rm -f "$HERE/restconf-tls13-chromium.keylog"
    cap_start "$HERE/restconf-tls13-chromium.pcap" "$p" || return 1
    SSLKEYLOGFILE="$HERE/restconf-tls13-chromium.keylog" timeout 60 chromium --headless \
        --no-sandbox --disable-gpu --ignore-certificate-errors --user-data-dir="$W/chromium" \
        --no-first-run --disable-background-networking --disable-component-update \
        --disable-sync --dump-dom "https://127.0.0.1:$p/restconf/data/openconfig-acl:acl" \
        >/dev/null 2>"$W/chromium.err"
    cap_stop
    nginx_stop "$W/nginx"
}

rec_restconf_tls13_alps() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj /CN=sw -keyout "$W/key.pem" -out "$W/cert.pem" >/dev/null 2>&1
    /usr/bin/python3 "$SRC/tests/capture/tlscap.py" "$W/cert.pem" "$W/key.pem" \
        "$HERE/restconf-tls13-alps.pcap" "$HERE/restconf-tls13-alps.keylog" alps
}

rec_restconf_tls12_rsa() {
    "$SRC/tests/capture/tls12sessions.sh" "$W/t12" || return 1
    cp "$W/t12/tls12.pcap" "$HERE/restconf-tls12-rsa.pcap"
    cp "$W/t12/key.pem" "$HERE/restconf-tls12-rsa.server-key.pem"
    cp "$W/t12/client.keylog" "$HERE/restconf-tls12-rsa.keylog"
}

rec_restconf_tls12_java() {
    command -v java >/dev/null || { echo "record.sh: java not installed" >&2; return 1; }
    local p; p=$(free_port)
    nginx_start "$W/nginx" "$p" tls-rsa || return 1
    # A java.security override that re-enables the RSA key exchange suites
    # for JDKs that list them in jdk.tls.disabledAlgorithms (OpenJDK 17 does
    # not; later ones do): its value replaces the one in java.security.
    printf 'jdk.tls.disabledAlgorithms=SSLv3, TLSv1, TLSv1.1, RC4, DES, MD5withRSA, anon, NULL\n' \
        >"$W/java.security"
    cap_start "$HERE/restconf-tls12-java.pcap" "$p" || return 1
    timeout 60 java -Djava.security.properties="$W/java.security" \
        -Djdk.tls.client.protocols=TLSv1.2 \
        -Djdk.tls.client.cipherSuites=TLS_RSA_WITH_AES_128_CBC_SHA256 \
        "$HERE/RestconfClient.java" "$(nginx_cert "$W/nginx")" "https://127.0.0.1:$p" \
        >"$W/java.out" || { cat "$W/java.out" >&2; cap_stop; return 1; }
    cap_stop
    install -m 600 "$W/nginx/key.pem" "$HERE/restconf-tls12-java.server-key.pem"
    nginx_stop "$W/nginx"
}

rec_h1_frag() {
    /usr/bin/python3 "$SRC/tests/capture/pcaptool.py" "$HERE/h1-keepalive.pcap" \
        "$HERE/h1-frag.pcap" frag 64
}

rec_h1_frag_ipv6() {
    /usr/bin/python3 "$SRC/tests/capture/pcaptool.py" "$HERE/h1-keepalive.pcap" "$W/v6.pcap" ipv6 &&
        /usr/bin/python3 "$SRC/tests/capture/pcaptool.py" "$W/v6.pcap" \
            "$HERE/h1-frag-ipv6.pcap" fragrev 64
}

rec_h1_rst_late() {
    /usr/bin/python3 "$SRC/tests/capture/pcaptool.py" "$HERE/h1-keepalive.pcap" \
        "$HERE/h1-rst-late.pcap" rstlate
}

if [ "${1:-}" = --expected ]; then
    # Only rewrite the expectations of the committed captures (after a
    # deliberate change of capture's output).
    for f in "$HERE"/*.pcap "$HERE"/*.pcapng; do
        [ -f "$f" ] && expect "$f"
    done
    exit 0
fi
names=${*:-h1-keepalive h1-pipelined restconf-tls gnmi-h2c gnmi-interleaved gnmi-tls h1-rst-late restconf-tls13-alps restconf-tls12-rsa restconf-tls12-java h1-frag h1-frag-ipv6 restconf-tls13-chromium}
for n in $names; do
    "rec_${n//-/_}" || { echo "record.sh: $n failed" >&2; exit 1; }
done
for f in "$HERE"/*.pcap "$HERE"/*.pcapng; do
    [ -f "$f" ] && expect "$f"
done
