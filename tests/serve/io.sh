#!/bin/bash
# yangblast serve --io: plain connections on io_uring (--io auto, where
# the kernel allows it) and on libuv's epoll (the default) answer the
# same: 14.5 KB writes and larger answers read back whole, pipelined
# HTTP/1.1, a client that does not read for a while (back-pressure), gNMI
# streams, and the server's counts equal to the clients'.  The other
# tests/serve scripts run on the default; this one covers the ring.
. "${YB_SRCDIR:-.}/tests/serve/common.sh"

"$YB" synth acl --proto restconf -n 40 -o "$T/put.ybc" >/dev/null || { echo "Bail out! synth"; exit 1; }
"$YB" synth acl --proto restconf -n 2 -r 300 --name-prefix BIG -o "$T/big.ybc" >/dev/null
"$YB" synth acl --proto gnmi -n 40 --name-prefix GN -o "$T/gn.ybc" >/dev/null
# the ring is there when the kernel lets serve have one
ring_ok=1
if ! start_serve --io uring --gnmi off; then ring_ok=0; fi
stop_serve >/dev/null 2>&1

# pipe N PATH: N GETs of PATH written at once on one connection, read only
# after a second; prints the number of complete answers with status 200.
pipe() {
    $PY - "$RP" "$1" "$2" <<'PYEOF'
import socket, sys, time
port, n, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
req = ("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode()
s.sendall(req * n)
time.sleep(1)  # answers pile up behind an unread socket
buf = b""
ok = 0
while ok < n:
    d = s.recv(65536)
    if not d:
        break
    buf += d
    while True:
        h = buf.find(b"\r\n\r\n")
        if h < 0:
            break
        head = buf[:h].decode("latin-1")
        cl = 0
        for line in head.split("\r\n")[1:]:
            k, _, v = line.partition(":")
            if k.strip().lower() == "content-length":
                cl = int(v)
        if len(buf) < h + 4 + cl:
            break
        if head.split(" ")[1] == "200":
            ok += 1
        buf = buf[h + 4 + cl:]
print(ok)
PYEOF
}

for io in auto epoll; do
    # epoll is the default: started without --io
    opt="--io $io"; [ $io = epoll ] && opt=
    check "serve ${opt:-(default)}" start_serve $opt --stats "$T/$io.json"
    rings=$(ls -l /proc/"$SPID"/fd 2>/dev/null | grep -c 'io_uring')
    if [ $io = epoll ]; then
        is "default (epoll): no ring" "$rings" 0
    elif [ $ring_ok = 1 ]; then
        is "--io auto: one ring" "$rings" 1
    fi
    out=$("$YB" run "$T/put.ybc" --target "http://127.0.0.1:$RP" -c 4 -n 200 -q --json "$T/$io.put.json" 2>&1)
    is "$io: 200 PUTs of 14.5 KB ok" "$(jget "$T/$io.put.json" "r['summary']['requests_ok']")" 200
    "$YB" run "$T/big.ybc" --target "http://127.0.0.1:$RP" -c 1 -q --json "$T/$io.big.json" >/dev/null 2>&1
    is "$io: two sets of 300 rules written" "$(jget "$T/$io.big.json" "r['summary']['requests_ok']")" 2
    got=$(curl -s "http://127.0.0.1:$RP/restconf/data/openconfig-acl:acl/acl-sets/acl-set=BIG_000001,ACL_IPV4" |
        $PY -c 'import json,sys; d=json.load(sys.stdin); print(len(d["openconfig-acl:acl-set"][0]["acl-entries"]["acl-entry"]))' 2>&1)
    is "$io: a large answer read back whole (300 entries)" "$got" 300
    is "$io: 30 pipelined GETs behind an unread socket all answered" \
        "$(pipe 30 /restconf/data/openconfig-acl:acl/acl-sets/acl-set=BIG_000002,ACL_IPV4)" 30
    "$YB" run "$T/gn.ybc" --target "grpc://127.0.0.1:$GP" -c 2 -m 8 -n 300 -q --json "$T/$io.gn.json" >/dev/null 2>&1
    is "$io: 300 gNMI Sets on 2 connections x 8 streams ok" \
        "$(jget "$T/$io.gn.json" "r['summary']['requests_ok']")" 300
    check_rc "$io: stop" 0 stop_serve
    is "$io: the server counted 200 + 2 + 1 + 30 RESTCONF and 300 gNMI requests" \
        "$(jget "$T/$io.json" "'%d %d' % (r['requests']['restconf']['total'], r['requests']['gnmi']['total'])")" "233 300"
done

# refused: a mode that does not exist, and --io with TLS (ignored there)
out=$("$YB" serve --io poll 2>&1); rc=$?
is "--io poll: exit 2" "$rc" 2
like "--io poll: says what is expected" "$out" "--io 'poll': expected auto, uring or epoll"
out=$("$YB" serve --self-signed --io uring 2>&1); rc=$?
is "--io with TLS: exit 2" "$rc" 2
like "--io with TLS: says why" "$out" "--io applies to plain listeners"
done_testing
