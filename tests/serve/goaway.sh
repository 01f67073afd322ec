#!/bin/bash
# yangblast serve --fault goaway-after:N against yangblast run, over h2c and
# TLS: streams above the GOAWAY's last-stream-id are never run (the client
# retries them), so the server applies exactly one Set per distinct request
# the client counts ok; and the server ends a GOAWAY'd connection without
# provoking a TCP reset, so no answered request surfaces as `reset`.
. "${YB_SRCDIR:-.}/tests/serve/common.sh"
N=200
check "synth $N distinct gNMI Sets" "$YB" synth acl --proto gnmi -n $N -r 2 -o "$T/set.ybc"

# round NAME SERVE-ARGS -- RUN-ARGS: one serve, one run of the corpus,
# report in $T/NAME.json, server statistics in $T/NAME.stats.
round() {
    local name=$1 sargs=() rargs=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
    shift
    rargs=("$@")
    start_serve --stats "$T/$name.stats" "${sargs[@]}" || { not_ok "$name: serve starts"; return 1; }
    local scheme=grpc cafile=()
    case " ${sargs[*]} " in *" --self-signed "*) scheme=grpcs; cafile=(--cacert "$T/ca.pem") ;; esac
    timeout 60 "$YB" run "$T/set.ybc" --target "$scheme://127.0.0.1:$GP" "${cafile[@]}" \
        --json "$T/$name.json" "${rargs[@]}" >"$T/$name.out" 2>&1
    is "$name: run exits 0" "$?" 0
    # the store holds one set per distinct request
    local sets
    sets=$(curl -s "${cafile[@]}" "$( [ $scheme = grpcs ] && echo https || echo http)://127.0.0.1:$RP/restconf/data/openconfig-acl:acl/acl-sets" |
        "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["openconfig-acl:acl-sets"]["acl-set"]))' 2>/dev/null)
    check_rc "$name: stop" 0 stop_serve
    is "$name: client ok $N, no error of any class, every answer ok" \
       "$(jget "$T/$name.json" '[r["summary"]["requests_ok"], sum(v for k, v in r["errors"].items() if k != "reasons"), r["grpc_status"]]')" \
       "[$N,0,{\"0\":$N}]"
    is "$name: server ran and answered OK exactly $N Sets (none twice)" \
       "$(jget "$T/$name.stats" '[r["requests"]["gnmi"]["Set"], r["grpc_status"]]')" "[$N,{\"OK\":$N}]"
    is "$name: the store holds $N sets" "$sets" $N
    local refused retried
    refused=$(jget "$T/$name.stats" 'r["streams_refused"]')
    retried=$(jget "$T/$name.json" 'r["summary"]["requests_retried"]')
    check "$name: GOAWAYs sent ($(jget "$T/$name.stats" 'r["faults"]["goaway"]')), client retried ($retried) >= server refused ($refused)" \
        test "$(jget "$T/$name.stats" 'r["faults"]["goaway"]')" -gt 1 -a "$retried" -ge "$refused"
}

round h2c-c1m16 --fault goaway-after:3 -- -c 1 -m 16
check "h2c-c1m16: streams above last-stream-id arrived and were refused" \
    test "$(jget "$T/h2c-c1m16.stats" 'r["streams_refused"]')" -gt 0
round h2c-reuse --fault goaway-after:1 -- --sessions reuse -c 4 -m 32
round h2c-c2m4 --fault goaway-after:10 --service-time fixed:1ms -- -c 2 -m 4
round tls-c1m16 --self-signed --write-cert "$T/ca.pem" --fault goaway-after:3 -- -c 1 -m 16
round tls-reuse --self-signed --write-cert "$T/ca.pem" --fault goaway-after:1 -- --sessions reuse -c 4 -m 32
round tls-c2m4 --self-signed --write-cert "$T/ca.pem" --fault goaway-after:10 --service-time fixed:1ms -- -c 2 -m 4

# A client that keeps its side open after the GOAWAY'd session is done is
# closed by the server after the linger time (not left open forever).
check "serve --fault goaway-after:1" start_serve --fault goaway-after:1
out=$("$PY" - "$GP" <<'EOF'
import socket, sys, time
import h2.connection, h2.config
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
c.initiate_connection()
c.send_headers(1, [(":method", "POST"), (":scheme", "http"), (":authority", "x"),
                   (":path", "/gnmi.gNMI/Capabilities"), ("content-type", "application/grpc"),
                   ("te", "trailers")])
c.send_data(1, b"\0\0\0\0\0", end_stream=True)
s.sendall(c.data_to_send())
s.settimeout(10)
# the frames that come back, parsed by hand (no state machine to object to
# a response after the GOAWAY that precedes it)
t0, buf, ended, goaway = time.time(), b"", False, False
while True:
    b = s.recv(65536)
    if not b:
        break
    buf += b
    while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
        n, typ, fl = int.from_bytes(buf[:3], "big"), buf[3], buf[4]
        sid = int.from_bytes(buf[5:9], "big") & 0x7fffffff
        ended |= typ == 1 and sid == 1 and bool(fl & 1)
        goaway |= typ == 7
        buf = buf[9 + n:]
print("answered" if ended else "unanswered", "goaway" if goaway else "no-goaway",
      "closed-after-%.0f" % (time.time() - t0))
EOF
)
like "the server answers, sends GOAWAY and closes the idle client after ~2 s" "$out" \
    '^answered goaway closed-after-[23]$'
check_rc "stop" 0 stop_serve
done_testing
