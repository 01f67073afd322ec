#!/bin/bash
# --target forms: IPv6 literals, host names, bad URLs.  Against serve on ::1.
. "$YB_SRCDIR/tests/lib.sh"
SOUT=$T/serve.out
if ! /usr/bin/python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1",0))' 2>/dev/null; then
    echo "ok 1 - IPv6 loopback # SKIP no ::1 on this machine"; echo "1..1"; exit 0
fi
yb_serve "$SOUT" --restconf '[::1]:0' --gnmi '[::1]:0' || { echo "Bail out! serve did not start"; exit 1; }
like "serve listens on ::1" "$RURL $GURL" '^http://\[::1\]:[0-9]+ grpc://\[::1\]:[0-9]+$'
"$YB" synth acl --proto restconf -n 20 -r 1 --name-prefix V6R -o "$T/r.ybc" >/dev/null
"$YB" synth acl --proto gnmi -n 20 -r 1 --name-prefix V6G -o "$T/g.ybc" >/dev/null
ok_of() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['summary']['requests_ok'])" "$1"; }
timeout 60 "$YB" run "$T/r.ybc" --target "$RURL" -c 2 -q --json "$T/r.json" >/dev/null
is "RESTCONF over IPv6: 20 ok" "$(ok_of "$T/r.json")" 20
timeout 60 "$YB" run "$T/g.ybc" --target "$GURL" -c 2 -m 2 -q --json "$T/g.json" >/dev/null
is "gNMI over IPv6: 20 ok" "$(ok_of "$T/g.json")" 20
port=${RURL##*:}
if getent ahostsv6 localhost | grep -q '::1'; then
    timeout 60 "$YB" run "$T/r.ybc" --target "http://localhost:$port" -q --json "$T/l.json" >/dev/null
    check "a host name resolves (localhost)" test -s "$T/l.json"
else
    ok "a host name resolves # SKIP localhost has no ::1 here"
fi
check_rc "a bad scheme exits 2" 2 "$YB" run "$T/r.ybc" --target "ftp://[::1]:$port"
check_rc "an unterminated IPv6 literal exits 2" 2 "$YB" run "$T/r.ybc" --target "http://[::1:$port"
check_rc "a bad port exits 2" 2 "$YB" run "$T/r.ybc" --target "http://[::1]:99999"
check_rc "an unknown host exits 2" 2 "$YB" run "$T/r.ybc" --target "http://no-such-host.invalid:80"
done_testing
